/*
 * The agent's flags about how tasks are launched: containerizers, users,
 * the task environment and the fetcher (Mesos's names and defaults). Their
 * rows join the agent's flag table (flags_agent.c) through
 * agent_launch_flag_defs, and agent_launch_flags_check validates them.
 */
#ifndef OFFERD_AGENT_FLAGS_LAUNCH_H
#define OFFERD_AGENT_FLAGS_LAUNCH_H

#include "common/flags.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows agent_launch_flag_defs writes. */
#define AGENT_LAUNCH_FLAG_ROWS 7

/* Mesos's defaults. */
#define AGENT_FETCHER_CACHE_SIZE_DEFAULT    "2GB"
#define AGENT_FETCHER_STALL_TIMEOUT_DEFAULT "1mins"

struct agent_launch_flags {
    const char *containerizers;       /* --containerizers text ("mesos") */
    bool switch_user;                 /* --switch_user: run tasks as their
                                         CommandInfo/FrameworkInfo user */
    const char *executor_env_text;    /* --executor_environment_variables */
    json_t *executor_env;             /* parsed (owned), NULL when unset */
    uint64_t fetcher_cache_size;      /* bytes the cache may hold */
    const char *fetcher_cache_dir;    /* NULL: <work_dir>/fetch */
    int64_t fetcher_stall_timeout_ns; /* abort a download slower than one
                                         byte per second for this long */
    const char *frameworks_home;      /* prefix of relative URIs; NULL */
};

/* Write the rows over lf's fields into defs[0 .. AGENT_LAUNCH_FLAG_ROWS-1]
 * (lf must not move afterwards). */
void agent_launch_flag_defs(struct agent_launch_flags *lf,
                            struct flag_def *defs);

/* Check the parsed values: --containerizers lists only "mesos" ("docker"
 * is refused: offerd has no docker containerizer); the environment flag is
 * a JSON object of strings (parsed into lf->executor_env); the stall
 * timeout is above 0. Returns 0, or -1 with a one-line reason in err. */
int agent_launch_flags_check(struct agent_launch_flags *lf, char *err,
                             size_t errlen);

/* Free what the check parsed. */
void agent_launch_flags_fini(struct agent_launch_flags *lf);

#endif
