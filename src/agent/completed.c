/*
 * Completed tasks, executors and frameworks of the agent; see completed.h.
 */
#include "agent/completed.h"

#include "agent/executors.h"
#include "agent/state_json.h"
#include "agent/tasks.h"
#include "agent/viewer.h"
#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A completed task: its /state object and the user view_tasks is asked
 * about (NULL: its framework's). */
struct ctask {
    json_t *json;
    char *user;
};

/* An executor with completed tasks, or a completed executor. */
struct cexec {
    char *id;
    json_t *head;        /* its /state object without the task arrays */
    char *user;          /* view_executors's user; NULL: its framework's */
    struct ctask *tasks; /* oldest first, at most
                            AGENT_COMPLETED_TASKS_PER_EXECUTOR */
    size_t ntasks;
    size_t cap; /* slots in tasks: grown as needed (a command executor
                   has one task) */
};

/* A framework with something completed. */
struct cfw {
    char *id;
    Mesos__V1__FrameworkInfo *info; /* latest known, owned; may be NULL */
    struct hmap *live;   /* executor id -> struct cexec, not completed */
    struct cexec **done; /* completed executors, oldest first */
    size_t ndone, capdone;
    bool completed; /* in c->completed */
};

struct agent_completed {
    size_t max_executors;   /* completed executors per framework */
    size_t max_frameworks;  /* completed frameworks */
    struct hmap *fws;       /* id -> struct cfw, active and completed */
    struct cfw **completed; /* completed frameworks, oldest first */
    size_t ncompleted, capcompleted;
};

/* Room for one more in an array of *cap slots holding n, up to max: grows
 * by doubling, so that short lists cost little whatever the bound. */
static void *room(void *v, size_t n, size_t *cap, size_t max, size_t size)
{
    if (n < *cap)
        return v;
    *cap = *cap == 0 ? 1 : *cap * 2;
    if (*cap > max)
        *cap = max;
    return xreallocarray(v, *cap, size);
}

static void cexec_free(void *p)
{
    struct cexec *e = p;
    if (e == NULL)
        return;
    for (size_t i = 0; i < e->ntasks; i++) {
        json_decref(e->tasks[i].json);
        free(e->tasks[i].user);
    }
    free(e->tasks);
    json_decref(e->head);
    free(e->user);
    free(e->id);
    free(e);
}

static void cfw_free(void *p)
{
    struct cfw *f = p;
    if (f == NULL)
        return;
    hmap_free(f->live, cexec_free);
    for (size_t i = 0; i < f->ndone; i++)
        cexec_free(f->done[i]);
    free(f->done);
    if (f->info != NULL)
        jpb_free(&f->info->base);
    free(f->id);
    free(f);
}

struct agent_completed *agent_completed_new(size_t max_executors,
                                            size_t max_frameworks)
{
    struct agent_completed *c = xcalloc(1, sizeof(*c));
    c->max_executors = max_executors;
    c->max_frameworks = max_frameworks;
    c->fws = hmap_new();
    return c;
}

void agent_completed_free(struct agent_completed *c)
{
    if (c == NULL)
        return;
    hmap_free(c->fws, cfw_free);
    free(c->completed);
    free(c);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? xstrdup(s) : NULL;
}

/* fw's record, made when new; its FrameworkInfo replaced by fi if given. */
static struct cfw *cfw_of(struct agent_completed *c, const char *fw,
                          const Mesos__V1__FrameworkInfo *fi)
{
    struct cfw *f = hmap_get(c->fws, fw);
    if (f == NULL) {
        f = xcalloc(1, sizeof(*f));
        f->id = xstrdup(fw);
        f->live = hmap_new();
        hmap_put(c->fws, fw, f);
    }
    if (fi != NULL) {
        if (f->info != NULL)
            jpb_free(&f->info->base);
        f->info = jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    }
    return f;
}

/* Executor ex of f not completed yet, made with head and user (both taken)
 * when new; otherwise head and user are dropped, or replace the record's
 * when replace is set. */
static struct cexec *live_of(struct cfw *f, const char *ex, json_t *head,
                             char *user, bool replace)
{
    struct cexec *e = hmap_get(f->live, ex);
    if (e == NULL) {
        e = xcalloc(1, sizeof(*e));
        e->id = xstrdup(ex);
        hmap_put(f->live, ex, e);
        replace = true;
    }
    if (replace) {
        json_decref(e->head);
        free(e->user);
        e->head = head;
        e->user = user;
    } else {
        json_decref(head);
        free(user);
    }
    return e;
}

void agent_completed_task(struct agent_completed *c, const struct agent_task *t,
                          const Mesos__V1__FrameworkInfo *fi,
                          const struct agent_execs *x, const char *agent_id)
{
    struct cfw *f = cfw_of(c, t->framework_id, fi);
    const Mesos__V1__ExecutorInfo *ei = t->info->executor;
    const char *ex = ei != NULL ? ei->executor_id->value : t->task_id;
    struct cexec *e = hmap_get(f->live, ex);
    if (e == NULL) {
        json_t *head;
        if (ei != NULL) {
            const char *sandbox = NULL;
            const Mesos__V1__ExecutorInfo *known =
                x != NULL ? agent_execs_info(x, t->framework_id, ex, &sandbox)
                          : NULL;
            head = agent_custom_executor_head_json(known != NULL ? known : ei,
                                                   t->framework_id, sandbox);
        } else {
            head = agent_command_executor_head_json(t);
        }
        e = live_of(f, ex, head, dup_or_null(agent_view_executor_user(t->info)),
                    false);
    }
    if (e->ntasks == AGENT_COMPLETED_TASKS_PER_EXECUTOR) {
        json_decref(e->tasks[0].json);
        free(e->tasks[0].user);
        memmove(e->tasks, e->tasks + 1, (e->ntasks - 1) * sizeof(*e->tasks));
        e->ntasks--;
    }
    e->tasks = room(e->tasks, e->ntasks, &e->cap,
                    AGENT_COMPLETED_TASKS_PER_EXECUTOR, sizeof(*e->tasks));
    e->tasks[e->ntasks].json = agent_task_json(t, agent_id);
    e->tasks[e->ntasks].user = dup_or_null(agent_view_task_user(t->info));
    e->ntasks++;
}

void agent_completed_executor_exited(struct agent_completed *c, const char *fw,
                                     const Mesos__V1__FrameworkInfo *fi,
                                     const Mesos__V1__ExecutorInfo *info,
                                     const char *sandbox)
{
    struct cfw *f = cfw_of(c, fw, fi);
    const char *user = info->command != NULL ? info->command->user : NULL;
    live_of(f, info->executor_id->value,
            agent_custom_executor_head_json(info, fw, sandbox),
            dup_or_null(user), true);
}

/* Drop f from the completed frameworks (it is active again, or freed). */
static void uncomplete(struct agent_completed *c, struct cfw *f)
{
    for (size_t i = 0; i < c->ncompleted; i++) {
        if (c->completed[i] != f)
            continue;
        memmove(c->completed + i, c->completed + i + 1,
                (c->ncompleted - i - 1) * sizeof(*c->completed));
        c->ncompleted--;
        break;
    }
    f->completed = false;
}

static bool holds_task_of(const struct agent_tasks *tasks, const char *fw,
                          const char *ex)
{
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(tasks, &pos)) != NULL) {
        if (strcmp(t->framework_id, fw) != 0)
            continue;
        const Mesos__V1__ExecutorInfo *ei = t->info->executor;
        if (ex == NULL ||
            strcmp(ei != NULL ? ei->executor_id->value : t->task_id, ex) == 0)
            return true;
    }
    return false;
}

static bool runs_executor_of(const struct agent_execs *x, const char *fw)
{
    size_t pos = 0;
    const char *xfw, *sandbox;
    const Mesos__V1__ExecutorInfo *info;
    while (x != NULL && agent_execs_next(x, &pos, &xfw, &info, &sandbox))
        if (strcmp(xfw, fw) == 0)
            return true;
    return false;
}

/* Move e (no longer in f->live) to f's completed executors. */
static void complete_executor(struct agent_completed *c, struct cfw *f,
                              struct cexec *e)
{
    if (c->max_executors == 0) {
        cexec_free(e);
        return;
    }
    if (f->ndone == c->max_executors) {
        cexec_free(f->done[0]);
        memmove(f->done, f->done + 1, (f->ndone - 1) * sizeof(*f->done));
        f->ndone--;
    }
    f->done = room(f->done, f->ndone, &f->capdone, c->max_executors,
                   sizeof(*f->done));
    f->done[f->ndone++] = e;
}

void agent_completed_settle(struct agent_completed *c, const char *fw,
                            const struct agent_tasks *tasks,
                            const struct agent_execs *x)
{
    struct cfw *f = hmap_get(c->fws, fw);
    if (f == NULL || f->completed)
        return;
    /* Collect the idle ones first: the map may not change while walked. */
    size_t n = hmap_count(f->live), k = 0, pos = 0;
    struct cexec **idle = xcalloc(n > 0 ? n : 1, sizeof(*idle));
    void *val;
    while (hmap_next(f->live, &pos, NULL, &val)) {
        struct cexec *e = val;
        const char *sandbox;
        if (!holds_task_of(tasks, fw, e->id) &&
            (x == NULL || agent_execs_info(x, fw, e->id, &sandbox) == NULL))
            idle[k++] = e;
    }
    for (size_t i = 0; i < k; i++) {
        hmap_del(f->live, idle[i]->id);
        complete_executor(c, f, idle[i]);
    }
    free(idle);
    if (holds_task_of(tasks, fw, NULL) || runs_executor_of(x, fw) ||
        hmap_count(f->live) > 0)
        return;
    if (c->max_frameworks == 0) {
        hmap_del(c->fws, fw);
        cfw_free(f);
        return;
    }
    if (c->ncompleted == c->max_frameworks) {
        struct cfw *old = c->completed[0];
        uncomplete(c, old);
        hmap_del(c->fws, old->id);
        cfw_free(old);
    }
    c->completed = room(c->completed, c->ncompleted, &c->capcompleted,
                        c->max_frameworks, sizeof(*c->completed));
    c->completed[c->ncompleted++] = f;
    f->completed = true;
}

void agent_completed_framework_back(struct agent_completed *c, const char *fw)
{
    struct cfw *f = hmap_get(c->fws, fw);
    if (f != NULL && f->completed)
        uncomplete(c, f);
}

const Mesos__V1__FrameworkInfo *
agent_completed_framework_info(const struct agent_completed *c, const char *fw)
{
    const struct cfw *f = c != NULL ? hmap_get(c->fws, fw) : NULL;
    return f != NULL ? f->info : NULL;
}

size_t agent_completed_tasks_of(const struct agent_completed *c, const char *fw,
                                const char *ex)
{
    const struct cfw *f = hmap_get(c->fws, fw);
    const struct cexec *e = f != NULL ? hmap_get(f->live, ex) : NULL;
    return e != NULL ? e->ntasks : 0;
}

size_t agent_completed_executors_of(const struct agent_completed *c,
                                    const char *fw)
{
    const struct cfw *f = hmap_get(c->fws, fw);
    return f != NULL ? f->ndone : 0;
}

size_t agent_completed_frameworks(const struct agent_completed *c)
{
    return c->ncompleted;
}

/* ---- /state ---- */

static const char *user_of(const struct cfw *f)
{
    return f->info != NULL ? f->info->user : NULL;
}

/* Put e's completed tasks that v's reader may see at the front of arr, in
 * their order (Mesos lists them before the terminal tasks it still
 * holds). */
static void insert_tasks(const struct agent_state_view *v, const struct cfw *f,
                         const struct cexec *e, json_t *arr)
{
    size_t k = 0;
    for (size_t i = 0; i < e->ntasks; i++)
        if (agent_view_task_of(v, user_of(f), e->tasks[i].user))
            json_array_insert(arr, k++, e->tasks[i].json);
}

void agent_completed_tasks_json(const struct agent_state_view *v,
                                const char *fw, const char *ex, json_t *tasks)
{
    const struct cfw *f =
        v->completed != NULL ? hmap_get(v->completed->fws, fw) : NULL;
    const struct cexec *e = f != NULL ? hmap_get(f->live, ex) : NULL;
    if (e != NULL)
        insert_tasks(v, f, e, tasks);
}

static json_t *executors_json(const struct agent_state_view *v,
                              const struct cfw *f)
{
    json_t *arr = json_array();
    for (size_t i = 0; f != NULL && i < f->ndone; i++) {
        const struct cexec *e = f->done[i];
        if (!agent_view_executor_of(v, user_of(f), e->user))
            continue;
        json_t *o = json_deep_copy(e->head);
        json_t *done = json_array();
        insert_tasks(v, f, e, done);
        json_object_set_new(o, "tasks", json_array());
        json_object_set_new(o, "queued_tasks", json_array());
        json_object_set_new(o, "completed_tasks", done);
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *agent_completed_executors_json(const struct agent_state_view *v,
                                       const char *fw)
{
    const struct cfw *f =
        v->completed != NULL ? hmap_get(v->completed->fws, fw) : NULL;
    return executors_json(v, f);
}

json_t *agent_completed_frameworks_json(const struct agent_state_view *v)
{
    json_t *arr = json_array();
    const struct agent_completed *c = v->completed;
    for (size_t i = 0; c != NULL && i < c->ncompleted; i++) {
        const struct cfw *f = c->completed[i];
        if (!agent_view_framework_user(v, user_of(f)))
            continue;
        json_t *o = agent_framework_json(f->id, f->info);
        json_object_set_new(o, "completed_executors", executors_json(v, f));
        json_array_append_new(arr, o);
    }
    return arr;
}
