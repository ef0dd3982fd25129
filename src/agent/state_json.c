/*
 * The /state document.
 */
#include "agent/state_json.h"

#include "agent/completed.h"
#include "agent/executors.h"
#include "agent/viewer.h"

#include "common/log.h"
#include "common/flags.h"
#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "common/task_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OFFERD_VERSION
#define OFFERD_VERSION "0.0.0"
#endif

json_t *agent_resources_json(const res_list *l)
{
    /* Reservations and disk details set aside, merged per name. */
    res_list merged = RES_LIST_INIT;
    res_list_flatten(l, NULL, &merged);
    json_t *o = json_object();
    for (uint32_t i = 0; i < merged.n; i++) {
        const struct resource *r = &merged.v[i];
        json_t *v = NULL;
        if (r->type == RES_SCALAR) {
            json_t *old = json_object_get(o, r->name);
            double d = res_scalar_to_double(r->scalar);
            if (json_is_number(old))
                d += json_number_value(old);
            v = json_real(d);
        } else if (r->type == RES_RANGES) {
            size_t cap = 3 + (size_t)r->nranges * 44, len = 0;
            char *s = xmalloc(cap);
            s[len++] = '[';
            for (uint32_t k = 0; k < r->nranges; k++) {
                int n =
                    snprintf(s + len, cap - len, "%s%llu-%llu", k ? ", " : "",
                             (unsigned long long)r->ranges[k].begin,
                             (unsigned long long)r->ranges[k].end);
                if (n > 0)
                    len += (size_t)n;
            }
            s[len++] = ']';
            s[len] = '\0';
            v = json_string(s);
            free(s);
        } else {
            size_t cap = 3, len = 0;
            for (uint32_t k = 0; k < r->nitems; k++)
                cap += strlen(r->items[k]) + 1;
            char *s = xmalloc(cap);
            s[len++] = '{';
            for (uint32_t k = 0; k < r->nitems; k++) {
                if (k)
                    s[len++] = ',';
                size_t n = strlen(r->items[k]);
                memcpy(s + len, r->items[k], n);
                len += n;
            }
            s[len++] = '}';
            s[len] = '\0';
            v = json_string(s);
            free(s);
        }
        if (v != NULL)
            json_object_set_new(o, r->name, v);
    }
    res_list_clear(&merged);
    return o;
}

static json_t *task_resources_json(const Mesos__V1__TaskInfo *info)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    json_t *j;
    if (res_list_from_pb(info->resources, info->n_resources, &l, err,
                         sizeof(err)) == 0)
        j = agent_resources_json(&l);
    else
        j = json_object();
    res_list_clear(&l);
    return j;
}

json_t *agent_task_json(const struct agent_task *t, const char *agent_id)
{
    json_t *j = json_object();
    json_object_set_new(j, "id", json_string(t->task_id));
    json_object_set_new(j, "name", json_string(t->info->name));
    json_object_set_new(j, "framework_id", json_string(t->framework_id));
    json_object_set_new(j, "executor_id",
                        json_string(t->info->executor != NULL
                                        ? t->info->executor->executor_id->value
                                        : t->task_id));
    if (agent_id != NULL)
        json_object_set_new(j, "slave_id", json_string(agent_id));
    json_object_set_new(j, "state", json_string(task_state_name(t->state)));
    json_object_set_new(j, "resources", task_resources_json(t->info));
    json_t *st = json_array();
    for (size_t i = 0; i < t->nstates; i++) {
        json_t *s = json_object();
        json_object_set_new(s, "state",
                            json_string(task_state_name(t->states[i].state)));
        json_object_set_new(s, "timestamp", json_real(t->states[i].timestamp));
        const Mesos__V1__TaskStatus *last = t->last_status;
        if (i + 1 == t->nstates && last != NULL &&
            last->state == t->states[i].state) {
            /* The latest health and check result, as Mesos shows them. */
            if (last->has_healthy)
                json_object_set_new(s, "healthy", json_boolean(last->healthy));
            if (last->check_status != NULL)
                json_object_set_new(s, "check_status",
                                    jpb_to_json(&last->check_status->base));
        }
        json_array_append_new(st, s);
    }
    json_object_set_new(j, "statuses", st);
    return j;
}

json_t *agent_command_executor_head_json(const struct agent_task *t)
{
    json_t *e = json_object();
    json_object_set_new(e, "id", json_string(t->task_id));
    char *name = xasprintf("Command Executor (Task: %s)", t->task_id);
    json_object_set_new(e, "name", json_string(name));
    free(name);
    json_object_set_new(e, "source", json_string(t->task_id));
    json_object_set_new(e, "framework_id", json_string(t->framework_id));
    json_object_set_new(e, "directory",
                        json_string(t->sandbox != NULL ? t->sandbox : ""));
    json_object_set_new(e, "resources", task_resources_json(t->info));
    return e;
}

static json_t *executor_json(const struct agent_task *t, const char *agent_id)
{
    json_t *e = agent_command_executor_head_json(t);
    json_t *live = json_array(), *done = json_array();
    json_array_append_new(task_state_is_terminal(t->state) ? done : live,
                          agent_task_json(t, agent_id));
    json_object_set_new(e, "tasks", live);
    json_object_set_new(e, "queued_tasks", json_array());
    json_object_set_new(e, "completed_tasks", done);
    return e;
}

json_t *agent_custom_executor_head_json(const Mesos__V1__ExecutorInfo *ei,
                                        const char *fw, const char *sandbox)
{
    json_t *e = json_object();
    json_object_set_new(e, "id", json_string(ei->executor_id->value));
    json_object_set_new(e, "name",
                        json_string(ei->name != NULL ? ei->name : ""));
    json_object_set_new(e, "source",
                        json_string(ei->source != NULL ? ei->source : ""));
    json_object_set_new(e, "framework_id", json_string(fw));
    json_object_set_new(e, "directory",
                        json_string(sandbox != NULL ? sandbox : ""));
    res_list l = RES_LIST_INIT;
    char err[256];
    if (res_list_from_pb(ei->resources, ei->n_resources, &l, err,
                         sizeof(err)) == 0)
        json_object_set_new(e, "resources", agent_resources_json(&l));
    else
        json_object_set_new(e, "resources", json_object());
    res_list_clear(&l);
    return e;
}

/* A custom executor (executors.h), its tasks added by the caller. */
static json_t *custom_executor_json(const Mesos__V1__ExecutorInfo *ei,
                                    const char *fw, const char *sandbox)
{
    json_t *e = agent_custom_executor_head_json(ei, fw, sandbox);
    json_object_set_new(e, "tasks", json_array());
    json_object_set_new(e, "queued_tasks", json_array());
    json_object_set_new(e, "completed_tasks", json_array());
    return e;
}

/* The custom executor object ex of framework object f, made (from the
 * executors' records, or the task's ExecutorInfo) when first asked. */
static json_t *custom_executor_of(json_t *f, const char *fw,
                                  const Mesos__V1__ExecutorInfo *ei,
                                  const struct agent_execs *x)
{
    json_t *byid = json_object_get(f, "_custom");
    if (byid == NULL) {
        byid = json_object();
        json_object_set_new(f, "_custom", byid);
    }
    const char *ex = ei->executor_id->value;
    json_t *e = json_object_get(byid, ex);
    if (e != NULL)
        return e;
    const char *sandbox = NULL;
    const Mesos__V1__ExecutorInfo *known =
        x != NULL ? agent_execs_info(x, fw, ex, &sandbox) : NULL;
    e = custom_executor_json(known != NULL ? known : ei, fw, sandbox);
    json_object_set_new(byid, ex, e);
    json_array_append(json_object_get(f, "executors"), e);
    return e;
}

json_t *agent_framework_json(const char *id, const Mesos__V1__FrameworkInfo *fi)
{
    json_t *f = json_object();
    json_object_set_new(f, "id", json_string(id));
    json_object_set_new(f, "name", json_string(fi != NULL ? fi->name : ""));
    json_object_set_new(f, "user", json_string(fi != NULL ? fi->user : ""));
    if (fi != NULL && fi->hostname != NULL)
        json_object_set_new(f, "hostname", json_string(fi->hostname));
    if (fi != NULL && fi->role != NULL)
        json_object_set_new(f, "role", json_string(fi->role));
    json_t *roles = json_array();
    for (size_t i = 0; fi != NULL && i < fi->n_roles; i++)
        json_array_append_new(roles, json_string(fi->roles[i]));
    json_object_set_new(f, "roles", roles);
    json_object_set_new(f, "executors", json_array());
    json_object_set_new(f, "completed_executors", json_array());
    return f;
}

/* Framework fw's object: the FrameworkInfo of a task the agent holds,
 * else the one kept with what of it completed. */
static json_t *framework_of(const struct agent_state_view *v, const char *fw)
{
    const Mesos__V1__FrameworkInfo *fi =
        v->frameworks != NULL ? hmap_get(v->frameworks, fw) : NULL;
    if (fi == NULL)
        fi = agent_completed_framework_info(v->completed, fw);
    return agent_framework_json(fw, fi);
}

/* What of framework object f (id fw) has completed: the completed tasks of
 * its custom executors (a command task's executor has none: it completes
 * with its task) and its completed executors. */
static void add_completed(const struct agent_state_view *v, const char *fw,
                          json_t *f)
{
    if (v->completed == NULL)
        return;
    const char *ex;
    json_t *e;
    json_object_foreach(json_object_get(f, "_custom"), ex, e)
    {
        agent_completed_tasks_json(v, fw, ex,
                                   json_object_get(e, "completed_tasks"));
    }
    json_object_set_new(f, "completed_executors",
                        agent_completed_executors_json(v, fw));
}

/* "resources", "reserved_resources", "unreserved_resources" and
 * "reserved_resources_full" of the agent's total into j. */
static void set_resources(json_t *j, const struct agent_state_view *v)
{
    res_list total = RES_LIST_INIT;
    static const res_list none = RES_LIST_INIT;
    char err[256];
    if (res_agent_total(v->resources,
                        v->checkpointed != NULL ? v->checkpointed : &none,
                        &total, err, sizeof(err)) != 0)
        log_warn("/state: %s: showing the static resources", err);
    json_object_set_new(j, "resources", agent_resources_json(&total));
    json_t *by_role = json_object(), *full = json_object();
    res_list unreserved = RES_LIST_INIT;
    for (uint32_t i = 0; i < total.n; i++) {
        const struct resource *r = &total.v[i];
        if (r->nresv == 0) {
            res_list_add(&unreserved, r);
            continue;
        }
        const char *role = res_reservation_role(r);
        if (json_object_get(by_role, role) != NULL || !agent_view_role(v, role))
            continue;
        res_list of_role = RES_LIST_INIT;
        for (uint32_t k = i; k < total.n; k++)
            if (total.v[k].nresv > 0 &&
                strcmp(res_reservation_role(&total.v[k]), role) == 0)
                res_list_add(&of_role, &total.v[k]);
        json_object_set_new(by_role, role, agent_resources_json(&of_role));
        json_object_set_new(full, role, res_list_to_json(&of_role));
        res_list_clear(&of_role);
    }
    json_object_set_new(j, "reserved_resources", by_role);
    json_object_set_new(j, "unreserved_resources",
                        agent_resources_json(&unreserved));
    json_object_set_new(j, "reserved_resources_full", full);
    res_list_clear(&unreserved);
    res_list_clear(&total);
}

json_t *agent_state_json(const struct agent_state_view *v)
{
    json_t *j = json_object();
    json_object_set_new(j, "version", json_string(OFFERD_VERSION));
    if (v->agent_id != NULL)
        json_object_set_new(j, "id", json_string(v->agent_id));
    char pid[128];
    snprintf(pid, sizeof(pid), "slave(1)@%s:%u", v->ip, (unsigned)v->port);
    json_object_set_new(j, "pid", json_string(pid));
    json_object_set_new(j, "hostname", json_string(v->hostname));
    json_object_set_new(j, "port", json_integer(v->port));
    json_object_set_new(j, "start_time", json_real(v->start_time));
    json_object_set_new(j, "master", json_string(v->master));
    set_resources(j, v);
    json_object_set_new(j, "checkpointed_resources",
                        v->checkpointed != NULL
                            ? res_list_to_json(v->checkpointed)
                            : json_array());
    json_object_set_new(j, "checkpointed_resources_version",
                        json_integer((json_int_t)v->checkpointed_version));
    json_object_set_new(j, "attributes", agent_attrs_to_json(v->attributes));
    if (v->domain != NULL)
        json_object_set_new(j, "domain", jpb_to_json(&v->domain->base));
    if (agent_view_flags(v)) {
        json_t *flags = flags_to_json(v->flags);
        json_object_set(j, "flags", json_object_get(flags, "flags"));
        json_decref(flags);
    }

    /* Frameworks by id, in id order for a stable document. */
    json_t *byid = json_object();
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (!agent_view_framework(v, t->framework_id))
            continue;
        json_t *f = json_object_get(byid, t->framework_id);
        if (f == NULL) {
            f = framework_of(v, t->framework_id);
            json_object_set_new(byid, t->framework_id, f);
        }
        if (!agent_view_task_executor(v, t))
            continue;
        if (t->info->executor != NULL) {
            json_t *e = custom_executor_of(f, t->framework_id,
                                           t->info->executor, v->execs);
            if (!agent_view_task(v, t))
                continue;
            json_array_append_new(
                json_object_get(e, task_state_is_terminal(t->state)
                                       ? "completed_tasks"
                                       : "tasks"),
                agent_task_json(t, v->agent_id));
            continue;
        }
        json_t *ex = executor_json(t, v->agent_id);
        if (!agent_view_task(v, t)) {
            json_array_clear(json_object_get(ex, "tasks"));
            json_array_clear(json_object_get(ex, "completed_tasks"));
        }
        json_array_append_new(json_object_get(f, "executors"), ex);
    }
    /* Executors without a task (yet, or any more). */
    pos = 0;
    const char *xfw, *xsandbox;
    const Mesos__V1__ExecutorInfo *xinfo;
    while (v->execs != NULL &&
           agent_execs_next(v->execs, &pos, &xfw, &xinfo, &xsandbox)) {
        if (!agent_view_executor(v, xfw, xinfo))
            continue;
        json_t *f = json_object_get(byid, xfw);
        if (f == NULL) {
            f = framework_of(v, xfw);
            json_object_set_new(byid, xfw, f);
        }
        custom_executor_of(f, xfw, xinfo, v->execs);
    }
    json_t *fws = json_array();
    const char *key;
    json_t *f;
    void *tmp;
    json_object_foreach_safe(byid, tmp, key, f)
    {
        add_completed(v, key, f);
        json_object_del(f, "_custom");
        json_array_append(fws, f);
    }
    json_decref(byid);
    json_object_set_new(j, "frameworks", fws);
    json_object_set_new(j, "completed_frameworks",
                        agent_completed_frameworks_json(v));
    return j;
}
