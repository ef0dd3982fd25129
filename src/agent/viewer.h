/*
 * What a reader of the agent's state may see under --acls, as Mesos's
 * agent decides with its view approvers: a framework by view_frameworks
 * (its user), a task by view_tasks (its command's user, else its
 * executor's, else its framework's), an executor by view_executors (its
 * command's user, else its framework's; a command task's executor runs as
 * the task), and a task or an executor only when its framework is visible
 * too. /state, the operator API (GET_STATE, GET_FRAMEWORKS, GET_EXECUTORS,
 * GET_TASKS, GET_CONTAINERS) and /monitor/statistics consult these while
 * they build their answer; a container (each task's) is seen as its
 * executor is.
 *
 * A viewer holds one approver per action for one principal (common/acl.h),
 * picked once per request. A view whose viewer is NULL shows everything.
 */
#ifndef OFFERD_AGENT_VIEWER_H
#define OFFERD_AGENT_VIEWER_H

#include <stdbool.h>

#include "agent/state_json.h"
#include "common/acl.h"

struct agent_viewer {
    struct acl_approver *frameworks; /* view_frameworks, owned */
    struct acl_approver *tasks;      /* view_tasks, owned */
    struct acl_approver *executors;  /* view_executors, owned */
};

/* The approvers of principal (NULL: anonymous) under acls (borrowed; must
 * outlive w). Free with agent_viewer_fini. */
void agent_viewer_init(struct agent_viewer *w, const struct acls *acls,
                       const char *principal);
void agent_viewer_fini(struct agent_viewer *w);

/* Whether v's reader may see the framework fw_id. */
bool agent_view_framework(const struct agent_state_view *v, const char *fw_id);
/* Whether v's reader may see task t (and its framework). */
bool agent_view_task(const struct agent_state_view *v,
                     const struct agent_task *t);
/* Whether v's reader may see executor ei of framework fw_id. */
bool agent_view_executor(const struct agent_state_view *v, const char *fw_id,
                         const Mesos__V1__ExecutorInfo *ei);
/* Whether v's reader may see the executor t runs under (its custom
 * executor, or its command executor), and so t's container. */
bool agent_view_task_executor(const struct agent_state_view *v,
                              const struct agent_task *t);

#endif
