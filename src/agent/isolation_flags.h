/*
 * The agent's isolation flags (Mesos's names): their rows in the agent's
 * flag table (flags_agent.h appends them) and their checks. Kept apart
 * from flags_agent.c so that the isolation work touches that file in two
 * places only.
 */
#ifndef OFFERD_AGENT_ISOLATION_FLAGS_H
#define OFFERD_AGENT_ISOLATION_FLAGS_H

#include "common/flags.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows agent_iso_flag_defs fills. */
#define AGENT_ISO_FLAGS_ROWS 7

/* --isolation, parsed. */
enum agent_isolation {
    AGENT_ISOLATION_AUTO,    /* not given: cgroups when the agent can make
                                cgroups, else posix */
    AGENT_ISOLATION_POSIX,   /* nothing enforced but the disk quota */
    AGENT_ISOLATION_CGROUPS, /* a cgroup per task; failing that, no start */
};

struct agent_iso_flags {
    const char *isolation;             /* --isolation text; NULL: auto */
    enum agent_isolation mode;         /* parsed */
    const char *cgroups_root;          /* --cgroups_root: relative path */
    bool cgroups_enable_cfs;           /* CFS quota = cpus (hard cap) */
    bool cgroups_limit_swap;           /* swap allowed up to the memory limit;
                                          false: no swap at all */
    int64_t cgroups_limit_pids;        /* pids.max per task; 0: none */
    bool enforce_container_disk_quota; /* kill tasks over their disk */
    int64_t container_disk_watch_interval_ns; /* du period */
};

/* Fill out[0..AGENT_ISO_FLAGS_ROWS) with rows over f's fields. */
void agent_iso_flag_defs(struct agent_iso_flags *f, struct flag_def *out);

/* Parse an --isolation value: "posix", "cgroups", or Mesos's list of
 * isolators ("cgroups/cpu,cgroups/mem,disk/du"): any cgroups/ entry means
 * cgroups, posix/, disk/ and filesystem/ entries alone mean posix. Returns
 * 0, or -1 with a one-line reason in err. */
int agent_iso_parse_isolation(const char *text, enum agent_isolation *out,
                              char *err, size_t errlen);

/* Check f after parsing (fills f->mode): a known --isolation, a relative
 * --cgroups_root without "..", --cgroups_limit_pids >= 0, a watch interval
 * above 0. Returns 0, or -1 with a one-line reason in err. */
int agent_iso_flags_check(struct agent_iso_flags *f, char *err, size_t errlen);

#endif
