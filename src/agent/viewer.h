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
    struct acl_approver *roles;      /* view_roles, owned */
    struct acl_approver *flags;      /* view_flags, owned */
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
/* Whether v's reader may see the reservations of role (view_roles), and
 * the agent's flags (view_flags). */
bool agent_view_role(const struct agent_state_view *v, const char *role);
bool agent_view_flags(const struct agent_state_view *v);

/* The users the view_tasks and view_executors rules are asked about for a
 * task of info (its command's user, else its custom executor's) and for
 * the executor it runs under (a custom executor's command user, else, for
 * a command task, the task's command user); NULL: the framework's user.
 * Borrowed from info. */
const char *agent_view_task_user(const Mesos__V1__TaskInfo *info);
const char *agent_view_executor_user(const Mesos__V1__TaskInfo *info);

/* For what the agent keeps after it forgot a framework's tasks
 * (completed.h): whether v's reader may see a framework of fw_user, and a
 * task or an executor of such a framework whose user (as the two above
 * give it) is user (NULL: fw_user). A NULL fw_user is matched as Mesos
 * matches an unknown user: only a rule for ANY lets it through. */
bool agent_view_framework_user(const struct agent_state_view *v,
                               const char *fw_user);
bool agent_view_task_of(const struct agent_state_view *v, const char *fw_user,
                        const char *user);
bool agent_view_executor_of(const struct agent_state_view *v,
                            const char *fw_user, const char *user);

/* Whether v's reader may see the executor t runs under (its custom
 * executor, or its command executor), and so t's container. */
bool agent_view_task_executor(const struct agent_state_view *v,
                              const struct agent_task *t);

#endif
