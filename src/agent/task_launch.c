/*
 * Preparing a command task's launch (see task_launch.h).
 */
#include "agent/task_launch.h"

#include "agent/containerizer.h"
#include "agent/fetcher.h"
#include "agent/flags_launch.h"
#include "common/clock.h"

#include <string.h>

/* Mesos's default --executor_shutdown_grace_period, which it also puts in
 * a command task's environment. */
#define SHUTDOWN_GRACE_NS (5 * CLOCK_NS_PER_SEC)

int agent_launch_check(const struct agent_launch_ctx *ctx,
                       const Mesos__V1__TaskInfo *ti, char *err, size_t errlen)
{
    return agent_container_check(ti->container, ctx->lf->containerizers, err,
                                 errlen);
}

/* The role the task's resources are allocated to (they all share one). */
static const char *allocation_role(const Mesos__V1__TaskInfo *ti)
{
    for (size_t i = 0; i < ti->n_resources; i++) {
        const Mesos__V1__Resource *r = ti->resources[i];
        if (r->allocation_info != NULL && r->allocation_info->role != NULL)
            return r->allocation_info->role;
    }
    return NULL;
}

/* The common part: user, fetch plan, program and environment of cmd. */
static int prepare_command(const struct agent_launch_ctx *ctx,
                           const Mesos__V1__FrameworkInfo *fi,
                           const Mesos__V1__CommandInfo *cmd,
                           const struct agent_task_env_ids *ids,
                           struct agent_launch_prep *out, char *err,
                           size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (agent_run_as_pick(ctx->lf->switch_user, cmd->user, fi->user,
                          &out->run_as, &out->has_run_as, err, errlen) != 0)
        return -1;
    if (agent_fetch_plan_build(cmd, ctx->lf, ctx->cache_dir,
                               out->has_run_as ? out->run_as.name : NULL,
                               &out->fetch, err, errlen) != 0)
        return -1;
    if (agent_command_build(cmd, ctx->agent_environ, ctx->lf->executor_env, ids,
                            &out->cmd, err, errlen) != 0) {
        agent_launch_prep_clear(out);
        return -1;
    }
    return 0;
}

int agent_launch_prepare(const struct agent_launch_ctx *ctx,
                         const Mesos__V1__FrameworkInfo *fi,
                         const Mesos__V1__TaskInfo *ti, const char *sandbox,
                         struct agent_launch_prep *out, char *err,
                         size_t errlen)
{
    struct agent_task_env_ids ids = {
        .sandbox = sandbox,
        .framework_id = fi->id->value,
        .executor_id = ti->task_id->value,
        .task_id = ti->task_id->value,
        .agent_id = ctx->agent_id,
        .agent_endpoint = ctx->agent_endpoint,
        .allocation_role = allocation_role(ti),
        .checkpoint = fi->has_checkpoint && fi->checkpoint,
        .shutdown_grace_ns = SHUTDOWN_GRACE_NS,
    };
    return prepare_command(ctx, fi, ti->command, &ids, out, err, errlen);
}

int agent_launch_prepare_executor(const struct agent_launch_ctx *ctx,
                                  const Mesos__V1__FrameworkInfo *fi,
                                  const Mesos__V1__ExecutorInfo *ei,
                                  const char *sandbox,
                                  int64_t shutdown_grace_ns,
                                  struct agent_launch_prep *out, char *err,
                                  size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (agent_container_check(ei->container, ctx->lf->containerizers, err,
                              errlen) != 0)
        return -1;
    struct agent_task_env_ids ids = {
        .sandbox = sandbox,
        .framework_id = fi->id->value,
        .executor_id = ei->executor_id->value,
        .agent_id = ctx->agent_id,
        .agent_endpoint = ctx->agent_endpoint,
        .checkpoint = fi->has_checkpoint && fi->checkpoint,
        .shutdown_grace_ns = shutdown_grace_ns,
    };
    return prepare_command(ctx, fi, ei->command, &ids, out, err, errlen);
}

void agent_launch_prep_fill(const struct agent_launch_prep *p,
                            const char *sandbox, struct agent_launch *l)
{
    memset(l, 0, sizeof(*l));
    l->sandbox = sandbox;
    l->file = p->cmd.file;
    l->argv = p->cmd.argv;
    l->envp = p->cmd.envp;
    l->run_as = p->has_run_as ? &p->run_as : NULL;
    l->fetch = p->fetch;
}

void agent_launch_prep_clear(struct agent_launch_prep *p)
{
    agent_command_clear(&p->cmd);
    agent_fetch_plan_free(p->fetch);
    memset(p, 0, sizeof(*p));
}
