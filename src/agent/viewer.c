/*
 * The view_* approvers of the agent's readers; see viewer.h.
 */
#include "agent/viewer.h"

#include "agent/completed.h"
#include "common/hmap.h"

void agent_viewer_init(struct agent_viewer *w, const struct acls *acls,
                       const char *principal)
{
    w->frameworks = acl_approver_new(acls, principal, ACL_VIEW_FRAMEWORKS);
    w->tasks = acl_approver_new(acls, principal, ACL_VIEW_TASKS);
    w->executors = acl_approver_new(acls, principal, ACL_VIEW_EXECUTORS);
    w->roles = acl_approver_new(acls, principal, ACL_VIEW_ROLES);
    w->flags = acl_approver_new(acls, principal, ACL_VIEW_FLAGS);
}

void agent_viewer_fini(struct agent_viewer *w)
{
    acl_approver_free(w->frameworks);
    acl_approver_free(w->tasks);
    acl_approver_free(w->executors);
    acl_approver_free(w->roles);
    acl_approver_free(w->flags);
    w->frameworks = w->tasks = w->executors = w->roles = w->flags = NULL;
}

/* The user of framework fw_id as the agent knows it (the framework of a
 * task it holds, else one it keeps as completed), or NULL (ANY: only a
 * rule allowing ANY user lets it through). */
static const char *fw_user(const struct agent_state_view *v, const char *id)
{
    const Mesos__V1__FrameworkInfo *fi = v->frameworks != NULL && id != NULL
                                             ? hmap_get(v->frameworks, id)
                                             : NULL;
    if (fi == NULL && id != NULL)
        fi = agent_completed_framework_info(v->completed, id);
    return fi != NULL ? fi->user : NULL;
}

static const char *command_user(const Mesos__V1__CommandInfo *c)
{
    return c != NULL ? c->user : NULL;
}

const char *agent_view_task_user(const Mesos__V1__TaskInfo *info)
{
    const char *user = command_user(info->command);
    if (user == NULL && info->executor != NULL)
        user = command_user(info->executor->command);
    return user;
}

const char *agent_view_executor_user(const Mesos__V1__TaskInfo *info)
{
    if (info->executor != NULL)
        return command_user(info->executor->command);
    return command_user(info->command);
}

bool agent_view_framework_user(const struct agent_state_view *v,
                               const char *fw_user)
{
    return v->viewer == NULL ||
           acl_approver_allows(v->viewer->frameworks, fw_user);
}

bool agent_view_task_of(const struct agent_state_view *v, const char *fw_user,
                        const char *user)
{
    if (v->viewer == NULL)
        return true;
    return acl_approver_allows(v->viewer->frameworks, fw_user) &&
           acl_approver_allows(v->viewer->tasks, user != NULL ? user : fw_user);
}

bool agent_view_executor_of(const struct agent_state_view *v,
                            const char *fw_user, const char *user)
{
    if (v->viewer == NULL)
        return true;
    return acl_approver_allows(v->viewer->frameworks, fw_user) &&
           acl_approver_allows(v->viewer->executors,
                               user != NULL ? user : fw_user);
}

bool agent_view_framework(const struct agent_state_view *v, const char *fw_id)
{
    if (v->viewer == NULL)
        return true;
    return agent_view_framework_user(v, fw_user(v, fw_id));
}

bool agent_view_task(const struct agent_state_view *v,
                     const struct agent_task *t)
{
    if (v->viewer == NULL)
        return true;
    return agent_view_task_of(v, fw_user(v, t->framework_id),
                              agent_view_task_user(t->info));
}

bool agent_view_executor(const struct agent_state_view *v, const char *fw_id,
                         const Mesos__V1__ExecutorInfo *ei)
{
    if (v->viewer == NULL)
        return true;
    return agent_view_executor_of(
        v, fw_user(v, fw_id), ei != NULL ? command_user(ei->command) : NULL);
}

bool agent_view_task_executor(const struct agent_state_view *v,
                              const struct agent_task *t)
{
    if (v->viewer == NULL)
        return true;
    return agent_view_executor_of(v, fw_user(v, t->framework_id),
                                  agent_view_executor_user(t->info));
}

bool agent_view_role(const struct agent_state_view *v, const char *role)
{
    return v->viewer == NULL || acl_approver_allows(v->viewer->roles, role);
}

bool agent_view_flags(const struct agent_state_view *v)
{
    return v->viewer == NULL || acl_approver_allows(v->viewer->flags, NULL);
}
