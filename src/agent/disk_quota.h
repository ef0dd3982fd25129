/*
 * Disk accounting of a sandbox, as Mesos's disk/du isolator does it: the
 * space its files take on disk (blocks, as `du` counts them: hard links
 * once, symbolic links not followed, other file systems not entered), and
 * the check of that usage against the task's disk resource.
 */
#ifndef OFFERD_AGENT_DISK_QUOTA_H
#define OFFERD_AGENT_DISK_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest directory nesting walked; deeper entries are not counted. */
#define AGENT_DU_MAX_DEPTH 64

/* Sum the allocated size of everything under dir into *bytes (OUT).
 * Entries that vanish or cannot be read meanwhile are skipped. Returns 0,
 * or -1 when dir itself cannot be opened. */
int agent_disk_usage(const char *dir, uint64_t *bytes);

/* True when used exceeds quota (quota 0: no quota); then Mesos's message
 * "Disk usage (X) exceeds quota (Y)" in msg. */
bool agent_disk_over_quota(uint64_t used, uint64_t quota, char *msg,
                           size_t msglen);

#endif
