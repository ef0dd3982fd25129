/*
 * The view_* approvers of the agent's readers; see viewer.h.
 */
#include "agent/viewer.h"

#include "common/hmap.h"

void agent_viewer_init(struct agent_viewer *w, const struct acls *acls,
                       const char *principal)
{
    w->frameworks = acl_approver_new(acls, principal, ACL_VIEW_FRAMEWORKS);
    w->tasks = acl_approver_new(acls, principal, ACL_VIEW_TASKS);
    w->executors = acl_approver_new(acls, principal, ACL_VIEW_EXECUTORS);
}

void agent_viewer_fini(struct agent_viewer *w)
{
    acl_approver_free(w->frameworks);
    acl_approver_free(w->tasks);
    acl_approver_free(w->executors);
    w->frameworks = w->tasks = w->executors = NULL;
}

/* The user of framework fw_id as the agent knows it, or NULL (ANY: only a
 * rule allowing ANY user lets it through). */
static const char *fw_user(const struct agent_state_view *v, const char *id)
{
    const Mesos__V1__FrameworkInfo *fi = v->frameworks != NULL && id != NULL
                                             ? hmap_get(v->frameworks, id)
                                             : NULL;
    return fi != NULL ? fi->user : NULL;
}

static const char *command_user(const Mesos__V1__CommandInfo *c)
{
    return c != NULL ? c->user : NULL;
}

bool agent_view_framework(const struct agent_state_view *v, const char *fw_id)
{
    if (v->viewer == NULL)
        return true;
    return acl_approver_allows(v->viewer->frameworks, fw_user(v, fw_id));
}

bool agent_view_task(const struct agent_state_view *v,
                     const struct agent_task *t)
{
    if (v->viewer == NULL)
        return true;
    const char *fu = fw_user(v, t->framework_id);
    if (!acl_approver_allows(v->viewer->frameworks, fu))
        return false;
    const char *user = command_user(t->info->command);
    if (user == NULL && t->info->executor != NULL)
        user = command_user(t->info->executor->command);
    return acl_approver_allows(v->viewer->tasks, user != NULL ? user : fu);
}

bool agent_view_executor(const struct agent_state_view *v, const char *fw_id,
                         const Mesos__V1__ExecutorInfo *ei)
{
    if (v->viewer == NULL)
        return true;
    const char *fu = fw_user(v, fw_id);
    if (!acl_approver_allows(v->viewer->frameworks, fu))
        return false;
    const char *user = ei != NULL ? command_user(ei->command) : NULL;
    return acl_approver_allows(v->viewer->executors, user != NULL ? user : fu);
}

bool agent_view_task_executor(const struct agent_state_view *v,
                              const struct agent_task *t)
{
    if (v->viewer == NULL)
        return true;
    if (t->info->executor != NULL)
        return agent_view_executor(v, t->framework_id, t->info->executor);
    const char *fu = fw_user(v, t->framework_id);
    if (!acl_approver_allows(v->viewer->frameworks, fu))
        return false;
    const char *user = command_user(t->info->command);
    return acl_approver_allows(v->viewer->executors, user != NULL ? user : fu);
}
