/*
 * Everything a command task's (or a custom executor's) launch needs beside its
 * sandbox, worked out on the agent's loop before the supervisor forks: the
 * containerizer check (containerizer.h), the user to run as (run_as.h), the
 * program, argv and environment (command.h, task_env.h) and the fetch plan
 * (fetcher.h).
 */
#ifndef OFFERD_AGENT_TASK_LAUNCH_H
#define OFFERD_AGENT_TASK_LAUNCH_H

#include "agent/command.h"
#include "agent/run_as.h"
#include "agent/supervisor.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_launch_flags;
struct agent_fetch_plan;

/* What the agent knows. Everything is borrowed for the call. */
struct agent_launch_ctx {
    const struct agent_launch_flags *lf;
    const char *cache_dir;      /* effective --fetcher_cache_dir */
    const char *agent_id;       /* NULL until registered */
    const char *agent_endpoint; /* "ip:port" */
    char *const *agent_environ; /* the agent's environment */
};

/* A prepared launch; owns what it holds. */
struct agent_launch_prep {
    struct agent_command cmd;
    bool has_run_as;
    struct agent_run_as run_as;
    struct agent_fetch_plan *fetch; /* NULL: no URIs */
};

/* Refuse what this agent cannot run before anything is made for it: a
 * ContainerInfo no enabled containerizer supports. Returns 0, or -1 with
 * the TASK_FAILED message in err. */
int agent_launch_check(const struct agent_launch_ctx *ctx,
                       const Mesos__V1__TaskInfo *ti, char *err, size_t errlen);

/* Prepare ti's launch (ti->command set) in sandbox for framework fi into
 * *out (OUT). Returns 0, or -1 with the TASK_FAILED message in err (an
 * unknown user, a bad URI or environment) and *out empty. */
int agent_launch_prepare(const struct agent_launch_ctx *ctx,
                         const Mesos__V1__FrameworkInfo *fi,
                         const Mesos__V1__TaskInfo *ti, const char *sandbox,
                         struct agent_launch_prep *out, char *err,
                         size_t errlen);

/* The same for a custom executor ei (ei->command set) of framework fi:
 * its ContainerInfo checked first (the TASK_FAILED message in err), its
 * user, URIs and environment (an executor's, task_env.h) as a command
 * task's. */
int agent_launch_prepare_executor(const struct agent_launch_ctx *ctx,
                                  const Mesos__V1__FrameworkInfo *fi,
                                  const Mesos__V1__ExecutorInfo *ei,
                                  const char *sandbox,
                                  int64_t shutdown_grace_ns,
                                  struct agent_launch_prep *out, char *err,
                                  size_t errlen);

/* The supervisor's launch description over p (borrowed from p). */
void agent_launch_prep_fill(const struct agent_launch_prep *p,
                            const char *sandbox, struct agent_launch *l);

/* Free what p holds; an empty one is fine. */
void agent_launch_prep_clear(struct agent_launch_prep *p);

#endif
