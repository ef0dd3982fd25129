/*
 * Checkpointing: what the agent writes to its work_dir so that it can
 * re-register with the same id after a restart, and (a later change) recover
 * its tasks. Every file is replaced atomically and durably (write a
 * temporary file, fsync, rename, fsync the directory) on every change.
 *
 * Layout under <work_dir>/meta/:
 *
 *   agent_id                          the id the master gave, text
 *   frameworks/<framework_id>/
 *     framework_info                  mesos.v1.FrameworkInfo, protobuf
 *     tasks/<task_id>/
 *       task_info                     mesos.v1.TaskInfo as launched
 *       sandbox                       the run's sandbox directory, text
 *       task                          mesos.v1.Task: latest state, latest
 *                                     status, status_update_state/uuid
 *       updates                       the task's unacknowledged updates,
 *                                     oldest first: RecordIO records, each
 *                                     an offerd.agent.Call.Update (protobuf)
 *
 * A task's directory goes when the task is terminal and its terminal update
 * acknowledged; a framework's when its last task goes. Ids are used as path
 * components, so callers pass only ids that agent_ckpt_id_is_safe accepts.
 */
#ifndef OFFERD_AGENT_CHECKPOINT_H
#define OFFERD_AGENT_CHECKPOINT_H

#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <stdbool.h>
#include <stddef.h>

/* Largest checkpoint file read back. */
#define AGENT_CKPT_MAX_FILE ((size_t)64 << 20)

struct agent_ckpt;

/* True when id can name a directory: 1 to 255 printable ASCII characters,
 * no '/' or '\\', not "." or "..". */
bool agent_ckpt_id_is_safe(const char *id);

/* A checkpointer under <work_dir>/meta (created). Returns NULL with a
 * reason in err if the directory cannot be made. */
struct agent_ckpt *agent_ckpt_new(const char *work_dir, char *err,
                                  size_t errlen);
void agent_ckpt_free(struct agent_ckpt *ck);

/* The meta directory (borrowed). */
const char *agent_ckpt_dir(const struct agent_ckpt *ck);

/* Write / read the agent id. load returns 1 and fills out (outlen bytes),
 * 0 when none was saved, -1 on error (reason in err). */
int agent_ckpt_save_agent_id(struct agent_ckpt *ck, const char *id, char *err,
                             size_t errlen);
int agent_ckpt_load_agent_id(struct agent_ckpt *ck, char *out, size_t outlen,
                             char *err, size_t errlen);

/* Write a framework's FrameworkInfo. */
int agent_ckpt_save_framework(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__FrameworkInfo *info, char *err,
                              size_t errlen);

/* Write a task's TaskInfo and sandbox path (once, at launch). */
int agent_ckpt_save_task_info(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__TaskInfo *info,
                              const char *sandbox, char *err, size_t errlen);

/* Write a task's latest state (a mesos.v1.Task). */
int agent_ckpt_save_task(struct agent_ckpt *ck, const char *framework_id,
                         const Mesos__V1__Task *task, char *err, size_t errlen);

/* Replace a task's pending updates with the n given, oldest first (n == 0
 * writes an empty file). */
int agent_ckpt_save_updates(struct agent_ckpt *ck, const char *framework_id,
                            const char *task_id,
                            const Offerd__Agent__Call__Update *const *v,
                            size_t n, char *err, size_t errlen);

/* Remove a task's directory; then the framework's too when it has no task
 * left. */
int agent_ckpt_remove_task(struct agent_ckpt *ck, const char *framework_id,
                           const char *task_id);

/* Remove a framework's directory and everything under it. */
int agent_ckpt_remove_framework(struct agent_ckpt *ck,
                                const char *framework_id);

#endif
