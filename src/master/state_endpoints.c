/*
 * The master's read endpoints, in the JSON shapes Mesos's master gives for
 * the fields they share (src/common/http.cpp "model" functions and
 * docs/endpoints/master/ in apache/mesos): /state, /state-summary,
 * /frameworks, /slaves, /tasks, /roles and /metrics/snapshot, each also under
 * /master/. Resources are summarized as Mesos does: scalars summed by name,
 * ranges and sets as their text ("[31000-32000]", "{a,b}").
 */
#include "master/authz.h"
#include "master/agents.h"
#include "master/domains.h"
#include "master/state_endpoints.h"
#include "master/state_models.h"
#include "master/state_stream.h"
#include "master/state_write.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/json_out.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/executors.h"
#include "master/maintenance.h"
#include "master/operations.h"
#include "master/quota.h"
#include "master/registry.h"
#include "master/role_view.h"
#include "master/send.h"
#include "master/system_endpoints.h"
#include "master/live_counters.h"
#include "master/metrics_counters.h"
#include "master/tasks.h"

/* ---- Resources ----------------------------------------------------------- */

/* Mesos's model(Resources): {"cpus": 4.0, "mem": 1024.0, "ports":
 * "[31000-32000]"}, with cpus, mem, disk and gpus always present. */
static bool is_revocable_pred(const struct resource *r, const void *arg)
{
    (void)arg;
    return r->revocable;
}

static bool is_regular_pred(const struct resource *r, const void *arg)
{
    (void)arg;
    return !r->revocable;
}

static json_t *resources_model_all(const res_list *l);

/* Mesos's summary of resources, without the revocable ones (which
 * revocable_model sums apart). */
static json_t *resources_model(const res_list *l)
{
    res_list regular = RES_LIST_INIT;
    res_list_filter(l, is_regular_pred, NULL, &regular);
    json_t *o = resources_model_all(&regular);
    res_list_clear(&regular);
    return o;
}

static json_t *revocable_model(const res_list *l)
{
    res_list rev = RES_LIST_INIT;
    res_list_filter(l, is_revocable_pred, NULL, &rev);
    json_t *o = resources_model_all(&rev);
    res_list_clear(&rev);
    return o;
}

static json_t *resources_model_all(const res_list *l)
{
    json_t *o = json_object();
    const char *always[] = {"cpus", "gpus", "mem", "disk"};
    for (size_t i = 0; i < 4; i++)
        json_object_set_new(o, always[i], json_real(0.0));
    res_list flat = RES_LIST_INIT;
    res_list_flatten(l, NULL, &flat);
    for (uint32_t i = 0; i < flat.n; i++) {
        const struct resource *r = &flat.v[i];
        if (r->type == RES_SCALAR) {
            json_t *cur = json_object_get(o, r->name);
            double v = cur != NULL ? json_real_value(cur) : 0.0;
            json_object_set_new(o, r->name,
                                json_real(v + res_scalar_to_double(r->scalar)));
        } else if (json_object_get(o, r->name) == NULL) {
            /* "ports:[31000-32000]" -> "[31000-32000]" */
            char *text = res_render(r);
            const char *colon = strrchr(text, ':');
            json_object_set_new(o, r->name,
                                json_string(colon ? colon + 1 : text));
            free(text);
        }
    }
    res_list_clear(&flat);
    return o;
}

static bool is_reserved_pred(const struct resource *r, const void *arg)
{
    (void)arg;
    return r->nresv > 0;
}

static bool is_unreserved_pred(const struct resource *r, const void *arg)
{
    (void)arg;
    return r->nresv == 0;
}

/* {"role": model(resources reserved to role)} of the reserved part of l,
 * keyed by the role each resource is reserved to (its most refined
 * reservation); only the roles that roles (NULL: all) lets the reader see,
 * and with each, only the resources it lets the reader see. */
static json_t *reserved_by_role_as(const res_list *l,
                                   json_t *(*model)(const res_list *),
                                   const struct acl_approver *roles, bool each)
{
    json_t *o = json_object();
    res_list reserved = RES_LIST_INIT;
    res_list_filter(l, is_reserved_pred, NULL, &reserved);
    for (uint32_t i = 0; i < reserved.n; i++) {
        const char *role = res_reservation_role(&reserved.v[i]);
        if (json_object_get(o, role) != NULL ||
            !master_role_view_role(roles, role))
            continue;
        res_list of_role = RES_LIST_INIT;
        for (uint32_t j = i; j < reserved.n; j++)
            if (strcmp(res_reservation_role(&reserved.v[j]), role) == 0 &&
                (!each || master_role_view_resource(roles, &reserved.v[j])))
                res_list_add(&of_role, &reserved.v[j]);
        json_object_set_new(o, role, model(&of_role));
        res_list_clear(&of_role);
    }
    res_list_clear(&reserved);
    return o;
}

/* {"role": {resources model}} of the reserved part of l: Mesos's
 * reserved_resources, the whole reservation of each role roles shows. */
static json_t *reserved_by_role(const res_list *l,
                                const struct acl_approver *roles)
{
    return reserved_by_role_as(l, resources_model, roles, false);
}

/* {"role": [mesos.v1.Resource, ...]}, as Mesos's /slaves
 * reserved_resources_full: the same keys as reserved_by_role, each with
 * the resources roles shows. */
static json_t *reserved_full_by_role(const res_list *l,
                                     const struct acl_approver *roles)
{
    return reserved_by_role_as(l, res_list_to_json, roles, true);
}

/* l as a JSON array of mesos.v1.Resource, only those roles shows. */
static json_t *resources_full(const res_list *l,
                              const struct acl_approver *roles)
{
    if (roles == NULL)
        return res_list_to_json(l);
    res_list seen = RES_LIST_INIT;
    master_role_view_filter(roles, l, &seen);
    json_t *j = res_list_to_json(&seen);
    res_list_clear(&seen);
    return j;
}

static json_t *attributes_model(const Mesos__V1__AgentInfo *ai)
{
    json_t *o = json_object();
    for (size_t i = 0; i < ai->n_attributes; i++) {
        const Mesos__V1__Attribute *a = ai->attributes[i];
        switch (a->type) {
        case MESOS__V1__VALUE__TYPE__SCALAR:
            if (a->scalar != NULL)
                json_object_set_new(o, a->name, json_real(a->scalar->value));
            break;
        case MESOS__V1__VALUE__TYPE__TEXT:
            if (a->text != NULL)
                json_object_set_new(o, a->name, json_string(a->text->value));
            break;
        default: {
            json_t *j = jpb_to_json(&a->base);
            json_t *val = json_object_get(
                j,
                a->type == MESOS__V1__VALUE__TYPE__RANGES ? "ranges" : "set");
            if (val != NULL)
                json_object_set(o, a->name, val);
            json_decref(j);
            break;
        }
        }
    }
    return o;
}

/* ---- Tasks, offers, frameworks, agents -------------------------------------
 */

/* TaskStatus.healthy and check_status into a status's JSON (o). */
static void status_checks_model(json_t *o, const Mesos__V1__TaskStatus *st)
{
    if (st->has_healthy)
        json_object_set_new(o, "healthy", json_boolean(st->healthy));
    if (st->check_status != NULL)
        json_object_set_new(o, "check_status",
                            jpb_to_json(&st->check_status->base));
}

/* The fields a live task and a completed one share (Mesos's model(Task)). */
static json_t *task_model_base(const char *id, const char *name,
                               const char *framework_id, const char *agent_id,
                               Mesos__V1__TaskState state,
                               const res_list *resources, const char *role,
                               const struct task_state_at *hist, uint32_t nhist,
                               const Mesos__V1__TaskStatus *latest)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "framework_id", json_string(framework_id));
    json_object_set_new(o, "executor_id", json_string(""));
    json_object_set_new(o, "slave_id", json_string(agent_id));
    json_object_set_new(o, "state", json_string(task_state_name(state)));
    json_object_set_new(o, "resources", resources_model(resources));
    json_object_set_new(o, "role", json_string(role));
    json_t *st = json_array();
    for (uint32_t i = 0; i < nhist; i++) {
        json_t *s = json_object();
        json_object_set_new(s, "state",
                            json_string(task_state_name(hist[i].state)));
        json_object_set_new(s, "timestamp", json_real(hist[i].timestamp));
        /* The latest status's health and check result, as Mesos's
         * model(TaskStatus) shows them. */
        if (i + 1 == nhist && latest != NULL && latest->state == hist[i].state)
            status_checks_model(s, latest);
        json_array_append_new(st, s);
    }
    json_object_set_new(o, "statuses", st);
    return o;
}

/* The fields Mesos's model(Task) shows when the TaskInfo had them: user
 * (the command's), labels, discovery, container, health_check. Any may be
 * NULL. */
static void task_model_extras(json_t *o, const char *user,
                              const Mesos__V1__Labels *labels,
                              const Mesos__V1__DiscoveryInfo *discovery,
                              const Mesos__V1__ContainerInfo *container,
                              const Mesos__V1__HealthCheck *health_check)
{
    if (user != NULL)
        json_object_set_new(o, "user", json_string(user));
    if (labels != NULL) {
        json_t *l = jpb_to_json(&labels->base);
        json_t *ls = json_object_get(l, "labels");
        json_object_set(o, "labels", ls != NULL ? ls : json_array());
        json_decref(l);
    }
    if (discovery != NULL)
        json_object_set_new(o, "discovery", jpb_to_json(&discovery->base));
    if (container != NULL)
        json_object_set_new(o, "container", jpb_to_json(&container->base));
    if (health_check != NULL)
        json_object_set_new(o, "health_check",
                            jpb_to_json(&health_check->base));
}

static json_t *record_model(const struct framework *fw,
                            const struct task_record *r)
{
    json_t *o =
        task_model_base(r->id, r->name, fw->id, r->agent_id, r->state,
                        &r->resources, r->role, r->hist, r->nhist, r->status);
    task_model_extras(o, r->user, r->labels, r->discovery, r->container,
                      r->health_check);
    return o;
}

static json_t *task_model(const struct task *t)
{
    const Mesos__V1__TaskInfo *ti = t->info;
    json_t *o =
        task_model_base(ti->task_id->value, ti->name, t->fw->id,
                        t->agent != NULL ? t->agent->id : "", t->state,
                        &t->resources, t->role, t->hist, t->nhist, t->status);
    task_model_extras(o, ti->command != NULL ? ti->command->user : NULL,
                      ti->labels, ti->discovery, ti->container,
                      ti->health_check);
    if (ti->executor != NULL)
        json_object_set_new(o, "executor_id",
                            json_string(ti->executor->executor_id->value));
    return o;
}

/* Mesos's json(ExecutorInfo) with the agent's id, as /state lists a
 * framework's executors. */
static json_t *executor_model(const struct executor *e)
{
    const Mesos__V1__ExecutorInfo *ei = e->info;
    json_t *o = json_object();
    json_object_set_new(o, "executor_id", json_string(ei->executor_id->value));
    json_object_set_new(o, "name", json_string(ei->name ? ei->name : ""));
    json_object_set_new(o, "framework_id", json_string(e->fw->id));
    json_object_set_new(o, "command",
                        ei->command != NULL ? jpb_to_json(&ei->command->base)
                                            : json_object());
    json_object_set_new(o, "resources", resources_model(&e->resources));
    if (e->resources.n > 0 && e->resources.v[0].alloc_role != NULL)
        json_object_set_new(o, "role",
                            json_string(e->resources.v[0].alloc_role));
    if (ei->labels != NULL) {
        json_t *l = jpb_to_json(&ei->labels->base);
        json_t *ls = json_object_get(l, "labels");
        json_object_set(o, "labels", ls != NULL ? ls : json_array());
        json_decref(l);
    }
    if (ei->has_type) {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__executor_info__type__descriptor, ei->type);
        if (v != NULL)
            json_object_set_new(o, "type", json_string(v->name));
    }
    json_object_set_new(o, "slave_id", json_string(e->agent->id));
    return o;
}

static json_t *offer_model(const struct offer *of)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(of->id));
    json_object_set_new(o, "framework_id", json_string(of->fw->id));
    json_object_set_new(o, "slave_id", json_string(of->agent->id));
    json_object_set_new(o, "resources", resources_model(&of->resources));
    json_t *ai = json_object();
    json_object_set_new(ai, "role", json_string(of->role));
    json_object_set_new(o, "allocation_info", ai);
    return o;
}

/* Resources used by tasks that are not terminal, and offered. */
static void framework_usage(const struct framework *fw, res_list *used,
                            res_list *offered)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (!task_state_is_terminal(t->state))
            res_list_add_all(used, &t->resources);
    }
    master_executors_usage(fw->executors, used);
    pos = 0;
    while (hmap_next(fw->offers, &pos, NULL, &val))
        res_list_add_all(offered, &((const struct offer *)val)->resources);
}

static json_t *capabilities_model(const Mesos__V1__FrameworkInfo *fi)
{
    json_t *caps = json_array();
    for (size_t i = 0; i < fi->n_capabilities; i++) {
        if (!fi->capabilities[i]->has_type)
            continue;
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__framework_info__capability__type__descriptor,
            fi->capabilities[i]->type);
        if (v != NULL)
            json_array_append_new(caps, json_string(v->name));
    }
    return caps;
}

static json_t *framework_model(const struct framework *fw, bool with_tasks)
{
    const Mesos__V1__FrameworkInfo *fi = fw->info;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(fw->id));
    json_object_set_new(o, "name", json_string(fi->name));
    json_object_set_new(o, "user", json_string(fi->user));
    json_object_set_new(o, "hostname",
                        json_string(fi->hostname ? fi->hostname : ""));
    json_object_set_new(o, "webui_url",
                        json_string(fi->webui_url ? fi->webui_url : ""));
    if (fi->principal != NULL)
        json_object_set_new(o, "principal", json_string(fi->principal));
    json_object_set_new(
        o, "failover_timeout",
        json_real(fi->has_failover_timeout ? fi->failover_timeout : 0.0));
    json_object_set_new(o, "checkpoint", json_boolean(fi->checkpoint));
    json_object_set_new(o, "active", json_boolean(fw->active));
    json_object_set_new(o, "connected", json_boolean(fw->stream != NULL));
    json_object_set_new(o, "recovered",
                        json_boolean(fw->registered_time > 0 &&
                                     fw->stream == NULL && !fw->active &&
                                     fw->unregistered_time == 0 &&
                                     fw->reregistered_time == 0));
    json_object_set_new(o, "registered_time", json_real(fw->registered_time));
    if (fw->reregistered_time > 0)
        json_object_set_new(o, "reregistered_time",
                            json_real(fw->reregistered_time));
    json_object_set_new(o, "unregistered_time",
                        json_real(fw->unregistered_time));
    json_object_set_new(o, "role",
                        json_string(fw->nroles > 0 ? fw->roles[0] : "*"));
    json_t *roles = json_array();
    for (uint32_t i = 0; i < fw->nroles; i++)
        json_array_append_new(roles, json_string(fw->roles[i]));
    json_object_set_new(o, "roles", roles);
    json_object_set_new(o, "capabilities", capabilities_model(fi));
    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    framework_usage(fw, &used, &offered);
    json_object_set_new(o, "used_resources", resources_model(&used));
    json_object_set_new(o, "resources", resources_model(&used));
    json_object_set_new(o, "offered_resources", resources_model(&offered));
    res_list_clear(&used);
    res_list_clear(&offered);
    if (with_tasks) {
        /* As Mesos: a task is in "tasks" until its terminal update is
         * acknowledged (or it ends with its agent or framework), then among
         * the "completed_tasks", oldest first. */
        json_t *tasks = json_array(), *completed = json_array();
        size_t pos = 0;
        void *val;
        while (hmap_next(fw->tasks, &pos, NULL, &val))
            json_array_append_new(tasks, task_model(val));
        for (uint32_t i = 0; i < fw->ncompleted_tasks; i++)
            json_array_append_new(
                completed, record_model(fw, master_task_completed_at(fw, i)));
        json_object_set_new(o, "tasks", tasks);
        json_object_set_new(o, "completed_tasks", completed);
        json_object_set_new(o, "unreachable_tasks", json_array());
        json_t *offers = json_array();
        pos = 0;
        while (hmap_next(fw->offers, &pos, NULL, &val))
            json_array_append_new(offers, offer_model(val));
        json_object_set_new(o, "offers", offers);
        json_t *execs = json_array();
        pos = 0;
        while (hmap_next(fw->executors, &pos, NULL, &val))
            json_array_append_new(execs, executor_model(val));
        json_object_set_new(o, "executors", execs);
        json_object_set_new(o, "completed_executors", json_array());
    }
    if (fi->labels != NULL) {
        json_t *l = jpb_to_json(&fi->labels->base);
        json_t *ls = json_object_get(l, "labels");
        json_object_set(o, "labels", ls != NULL ? ls : json_array());
        json_decref(l);
    }
    return o;
}

/* ag as /state, /state-summary and /slaves show it to a reader whose
 * view_roles approver is roles (NULL: sees every role): the summaries
 * whole, the *_full lists and the reserved roles as role_view.h says. */
static json_t *agent_model(const struct master *m, const struct agent *ag,
                           const struct acl_approver *roles)
{
    (void)m;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(ag->id));
    char pid[300];
    snprintf(pid, sizeof(pid), "slave(1)@%s:%u", ag->ip, (unsigned)ag->port);
    json_object_set_new(o, "pid", json_string(pid));
    json_object_set_new(o, "hostname", json_string(ag->info->hostname));
    json_object_set_new(o, "port", json_integer(ag->port));
    json_object_set_new(o, "registered_time", json_real(ag->registered_time));
    if (ag->reregistered_time > 0)
        json_object_set_new(o, "reregistered_time",
                            json_real(ag->reregistered_time));
    json_object_set_new(o, "active",
                        json_boolean(ag->connected && !ag->deactivated));
    master_agent_state_json(ag, o);
    json_object_set_new(o, "version",
                        json_string(ag->version ? ag->version : ""));
    json_object_set_new(o, "attributes", attributes_model(ag->info));
    master_domain_json(o, ag->info->domain);
    const res_list *total =
        ag->alloc != NULL ? alloc_agent_total(ag->alloc) : &ag->total;
    json_object_set_new(o, "resources", resources_model(total));
    json_object_set_new(o, "resources_full", resources_full(total, roles));
    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    master_agent_usage(ag, &used, &offered);
    json_object_set_new(o, "used_resources", resources_model(&used));
    json_object_set_new(o, "offered_resources", resources_model(&offered));
    json_object_set_new(o, "revocable_resources", revocable_model(total));
    json_object_set_new(o, "revocable_used_resources", revocable_model(&used));
    json_object_set_new(o, "reserved_resources",
                        reserved_by_role(total, roles));
    res_list unres = RES_LIST_INIT;
    res_list_filter(total, is_unreserved_pred, NULL, &unres);
    json_object_set_new(o, "unreserved_resources", resources_model(&unres));
    json_object_set_new(o, "reserved_resources_full",
                        reserved_full_by_role(total, roles));
    json_object_set_new(o, "unreserved_resources_full",
                        resources_full(&unres, roles));
    json_object_set_new(o, "used_resources_full", resources_full(&used, roles));
    json_object_set_new(o, "offered_resources_full",
                        resources_full(&offered, roles));
    res_list_clear(&unres);
    res_list_clear(&used);
    res_list_clear(&offered);
    json_t *caps = json_array();
    json_array_append_new(caps, json_string("MULTI_ROLE"));
    json_array_append_new(caps, json_string("HIERARCHICAL_ROLE"));
    json_array_append_new(caps, json_string("RESERVATION_REFINEMENT"));
    json_object_set_new(o, "capabilities", caps);
    return o;
}

/* ---- Endpoints ------------------------------------------------------------
 */

/* The completed frameworks, oldest first; only the one with id only when
 * it is not NULL. */
static json_t *completed_array(struct master *m, const char *only)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < m->ncompleted; i++) {
        const struct framework *fw =
            hmap_get(m->completed, m->completed_order[i]);
        if (fw != NULL && (only == NULL || strcmp(only, fw->id) == 0))
            json_array_append_new(arr, framework_model(fw, true));
    }
    return arr;
}

static void add_master_fields(struct master *m, json_t *o)
{
    /* version, build_date, build_time, build_user and the git_* facts the
     * build knew: the very values of /version. */
    json_t *ver = master_version_json();
    json_object_update(o, ver);
    json_decref(ver);
    json_object_set_new(o, "id", json_string(m->id));
    char pid[300];
    snprintf(pid, sizeof(pid), "master@%s:%u", m->ip, (unsigned)m->port);
    json_object_set_new(o, "pid", json_string(pid));
    json_object_set_new(o, "leader", json_string(pid));
    json_object_set_new(o, "hostname", json_string(m->flags->hostname));
    json_object_set_new(o, "start_time", json_real(m->start_time));
    json_object_set_new(o, "elected_time", json_real(m->start_time));
    Mesos__V1__MasterInfo mi;
    Mesos__V1__Address addr;
    master_fill_info(m, &mi, &addr);
    json_t *info = jpb_to_json(&mi.base);
    json_object_set_new(info, "pid", json_string(pid));
    /* As Mesos: the master's capabilities as MasterInfo lists them. */
    json_t *caps = json_object_get(info, "capabilities");
    json_object_set(o, "capabilities", caps != NULL ? caps : json_array());
    json_object_set_new(o, "leader_info", info);
    if (m->flags->cluster != NULL)
        json_object_set_new(o, "cluster", json_string(m->flags->cluster));
    master_domain_json(o, m->domain);
}

/* Reply 200 with body (taken), or its ?jsonp= form. */
static void reply(struct master *m, struct http_request *req, json_t *body)
{
    master_authz_filter_json(m, req, body);
    http_reply_json_jsonp(req, 200, body);
    json_decref(body);
}

json_t *master_state_head_json(struct master *m)
{
    json_t *o = json_object();
    add_master_fields(m, o);
    uint32_t active = 0, inactive = 0;
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        if (((struct agent *)val)->connected)
            active++;
        else
            inactive++;
    }
    json_object_set_new(o, "activated_slaves", json_integer(active));
    json_object_set_new(o, "deactivated_slaves", json_integer(inactive));
    json_object_set_new(
        o, "unreachable_slaves",
        json_integer((json_int_t)hmap_count(m->unreachable_agents)));
    json_object_set_new(o, "flags",
                        flags_to_json(master_flags_object(m->flags)));
    json_t *flags_wrap = json_object_get(o, "flags");
    json_t *inner = json_object_get(flags_wrap, "flags");
    if (inner != NULL) {
        json_incref(inner);
        json_object_set_new(o, "flags", inner);
    }
    if (m->flags->log_dir != NULL)
        json_object_set_new(o, "log_dir", json_string(m->flags->log_dir));
    return o;
}

json_t *master_state_resources_json(const res_list *l)
{
    return resources_model(l);
}

json_t *master_state_revocable_json(const res_list *l)
{
    return revocable_model(l);
}

json_t *master_state_reserved_json(const res_list *l)
{
    return reserved_by_role(l, NULL);
}

json_t *master_state_reserved_full_json(const res_list *l)
{
    return reserved_full_by_role(l, NULL);
}

json_t *master_state_attributes_json(const Mesos__V1__AgentInfo *ai)
{
    return attributes_model(ai);
}

void master_write_agent_fields_as(struct jout *w, const struct master *m,
                                  const struct agent *ag,
                                  const struct acl_approver *roles,
                                  bool summary)
{
    json_t *o = agent_model(m, ag, roles);
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (!summary || !master_summary_omits_agent_key(k))
            jout_kjson(w, k, v);
    }
    json_decref(o);
}

json_t *master_state_agent_json(const struct master *m, const struct agent *ag,
                                const char *who)
{
    struct acl_approver *roles = master_role_viewer(m, who, ACL_VIEW_ROLES);
    json_t *o = agent_model(m, ag, roles);
    acl_approver_free(roles);
    return o;
}

json_t *master_state_framework_json(const struct framework *fw, bool with_tasks)
{
    return framework_model(fw, with_tasks);
}

json_t *master_state_task_json(const struct task *t)
{
    return task_model(t);
}

json_t *master_state_record_json(const struct framework *fw,
                                 const struct task_record *r)
{
    return record_model(fw, r);
}

json_t *master_state_offer_json(const struct offer *of)
{
    return offer_model(of);
}

json_t *master_state_executor_json(const struct executor *e)
{
    return executor_model(e);
}

/* Tasks per state (indexed by Mesos__V1__TaskState). */
struct task_counts {
    json_int_t n[16];
};

static void count_state(struct task_counts *c, Mesos__V1__TaskState st)
{
    if ((unsigned)st < sizeof(c->n) / sizeof(c->n[0]))
        c->n[st]++;
}

/* The states /state-summary counts tasks in, in its order. */
static const Mesos__V1__TaskState summary_states[] = {
    MESOS__V1__TASK_STATE__TASK_STAGING,
    MESOS__V1__TASK_STATE__TASK_STARTING,
    MESOS__V1__TASK_STATE__TASK_RUNNING,
    MESOS__V1__TASK_STATE__TASK_KILLING,
    MESOS__V1__TASK_STATE__TASK_FINISHED,
    MESOS__V1__TASK_STATE__TASK_KILLED,
    MESOS__V1__TASK_STATE__TASK_FAILED,
    MESOS__V1__TASK_STATE__TASK_LOST,
    MESOS__V1__TASK_STATE__TASK_ERROR,
    MESOS__V1__TASK_STATE__TASK_UNREACHABLE,
};

/* Counts of tasks per state, as /state-summary lists them (members). */
static void write_task_counts(struct jout *w, const struct task_counts *c)
{
    for (size_t i = 0; i < sizeof(summary_states) / sizeof(summary_states[0]);
         i++)
        jout_kint(w, task_state_name(summary_states[i]),
                  c->n[summary_states[i]]);
}

/* A set of pointers (open addressing), emptied in O(1): an entry counts
 * only while its generation is the set's. /state-summary collects with it
 * the distinct agents of a framework's tasks and frameworks of an agent's,
 * once per entity, without a string hash per task. */
struct pset {
    const void **keys;
    uint32_t *gen; /* per slot: the generation it was filled in */
    size_t cap;    /* slots, a power of two */
    size_t n;      /* entries of the current generation */
    uint32_t cur;  /* the current generation (slots of others are free) */
};

static void pset_init(struct pset *s)
{
    s->cap = 64;
    s->keys = xcalloc(s->cap, sizeof(*s->keys));
    s->gen = xcalloc(s->cap, sizeof(*s->gen));
    s->n = 0;
    s->cur = 1;
}

static void pset_fini(struct pset *s)
{
    free(s->keys);
    free(s->gen);
}

/* Empty s (its memory kept). */
static void pset_clear(struct pset *s)
{
    s->n = 0;
    if (++s->cur == 0) { /* wrapped: every slot must read as free */
        memset(s->gen, 0, s->cap * sizeof(*s->gen));
        s->cur = 1;
    }
}

static size_t pset_slot(const struct pset *s, const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    size_t mask = s->cap - 1;
    size_t i = (size_t)(h >> 32) & mask;
    while (s->gen[i] == s->cur && s->keys[i] != p)
        i = (i + 1) & mask;
    return i;
}

/* Add p; whether it was not there yet. */
static bool pset_add(struct pset *s, const void *p)
{
    size_t i = pset_slot(s, p);
    if (s->gen[i] == s->cur)
        return false;
    if (2 * (s->n + 1) > s->cap) {
        struct pset bigger = {.cap = 2 * s->cap, .cur = 1};
        bigger.keys = xcalloc(bigger.cap, sizeof(*bigger.keys));
        bigger.gen = xcalloc(bigger.cap, sizeof(*bigger.gen));
        for (size_t k = 0; k < s->cap; k++)
            if (s->gen[k] == s->cur) {
                size_t j = pset_slot(&bigger, s->keys[k]);
                bigger.keys[j] = s->keys[k];
                bigger.gen[j] = 1;
                bigger.n++;
            }
        pset_fini(s);
        *s = bigger;
        i = pset_slot(s, p);
    }
    s->keys[i] = p;
    s->gen[i] = s->cur;
    s->n++;
    return true;
}

/* Count the completed tasks of every framework by agent id into by_agent
 * (agent id -> struct task_counts, made as needed): the one part of an
 * agent's counts its own map of tasks does not hold. */
static void count_completed_by_agent(struct master *m, struct hmap *by_agent)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        for (uint32_t i = 0; i < fw->ncompleted_tasks; i++) {
            const struct task_record *r = master_task_completed_at(fw, i);
            struct task_counts *ac = hmap_get(by_agent, r->agent_id);
            if (ac == NULL) {
                ac = xcalloc(1, sizeof(*ac));
                hmap_put(by_agent, r->agent_id, ac);
            }
            count_state(ac, r->state);
        }
    }
}

/* The agents one framework has live tasks on, in the order found. */
struct agent_list {
    const struct agent **v;
    size_t n, cap;
};

static void agent_list_free(void *p)
{
    struct agent_list *l = p;
    free(l->v);
    free(l);
}

/* counts plus the live tasks' counts kept per state (live_tasks of struct
 * agent or struct framework). */
static void add_live_counts(struct task_counts *c, const uint32_t *live)
{
    for (size_t i = 0; i < sizeof(c->n) / sizeof(c->n[0]); i++)
        c->n[i] += live[i];
}

/* GET /state-summary: every agent and framework with the members Mesos's
 * /state-summary gives them (state_write.h), their tasks (live and
 * completed, as Mesos's TaskStateSummaries) counted by state, and the ids
 * of the frameworks (agents) they share live tasks with; written as text.
 *
 * The live tasks' counts are those live_counters.c keeps per agent and per
 * framework; only the completed tasks, a bounded ring per framework, are
 * counted here (by agent id, through a map). Which frameworks an agent
 * shares tasks with comes from one walk of its own map of tasks (tasks.c
 * indexes every live task in its framework's map and its agent's, and a
 * framework's removal removes its tasks), which also gives each
 * framework's agents: one touch per task in all. */
static void handle_state_summary(struct http_request *req, void *arg)
{
    struct master *m = arg;
    const char *cb = http_request_query(req, "jsonp");
    if (cb != NULL && !http_jsonp_callback_ok(cb)) {
        http_reply_error(req, 400,
                         "jsonp: the callback must be a JavaScript name");
        return;
    }
    char buf[AUTH_MAX_PRINCIPAL + 1];
    const char *who =
        master_authz_has_acls(m) ? master_authz_principal(m, req, buf) : NULL;
    struct hmap *done_by_agent = hmap_new();
    count_completed_by_agent(m, done_by_agent);
    /* framework id -> struct agent_list, filled by the agents' pass. */
    struct hmap *agents_of = hmap_new();
    struct pset seen;
    pset_init(&seen);

    struct acl_approver *roles = master_role_viewer_of(m, req, ACL_VIEW_ROLES);
    struct jout w;
    jout_init(&w);
    jout_obj_begin(&w);
    jout_kstr(&w, "hostname", m->flags->hostname);
    jout_key(&w, "slaves");
    jout_arr_begin(&w);
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        jout_obj_begin(&w);
        if (roles == NULL)
            master_write_agent_summary_fields(&w, m, ag);
        else
            master_write_agent_fields_as(&w, m, ag, roles, true);
        struct task_counts ac = {{0}};
        const struct task_counts *done = hmap_get(done_by_agent, ag->id);
        if (done != NULL)
            ac = *done;
        add_live_counts(&ac, ag->live_tasks);
        write_task_counts(&w, &ac);
        jout_key(&w, "framework_ids");
        jout_arr_begin(&w);
        pset_clear(&seen);
        size_t tp = 0;
        void *tv;
        while (hmap_next(ag->tasks, &tp, NULL, &tv)) {
            const struct framework *fw = ((const struct task *)tv)->fw;
            if (!pset_add(&seen, fw))
                continue;
            jout_str(&w, fw->id);
            struct agent_list *l = hmap_get(agents_of, fw->id);
            if (l == NULL) {
                l = xcalloc(1, sizeof(*l));
                hmap_put(agents_of, fw->id, l);
            }
            if (l->n == l->cap) {
                l->cap = l->cap ? 2 * l->cap : 16;
                l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
            }
            l->v[l->n++] = ag;
        }
        jout_arr_end(&w);
        jout_obj_end(&w);
    }
    acl_approver_free(roles);
    jout_arr_end(&w);
    jout_key(&w, "frameworks");
    jout_arr_begin(&w);
    pos = 0;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        if (!master_state_framework_visible(m, who, fw))
            continue;
        jout_obj_begin(&w);
        master_write_framework_summary_fields(&w, fw);
        struct task_counts fc = {{0}};
        add_live_counts(&fc, fw->live_tasks);
        for (uint32_t i = 0; i < fw->ncompleted_tasks; i++)
            count_state(&fc, master_task_completed_at(fw, i)->state);
        write_task_counts(&w, &fc);
        jout_key(&w, "slave_ids");
        jout_arr_begin(&w);
        const struct agent_list *l = hmap_get(agents_of, fw->id);
        for (size_t i = 0; l != NULL && i < l->n; i++)
            jout_str(&w, l->v[i]->id);
        jout_arr_end(&w);
        jout_obj_end(&w);
    }
    jout_arr_end(&w);
    jout_obj_end(&w);
    pset_fini(&seen);
    hmap_free(agents_of, agent_list_free);
    hmap_free(done_by_agent, free);
    http_reply_json_text_jsonp(req, 200, w.buf, w.len);
    jout_free(&w);
}

static void handle_frameworks(struct http_request *req, void *arg)
{
    struct master *m = arg;
    const char *only = http_request_query(req, "framework_id");
    json_t *o = json_object();
    json_t *arr = json_array();
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        if (only == NULL || strcmp(only, fw->id) == 0)
            json_array_append_new(arr, framework_model(fw, true));
    }
    json_object_set_new(o, "frameworks", arr);
    json_object_set_new(o, "completed_frameworks", completed_array(m, only));
    json_object_set_new(o, "unregistered_frameworks", json_array());
    reply(m, req, o);
}

static void handle_slaves(struct http_request *req, void *arg)
{
    struct master *m = arg;
    const char *only = http_request_query(req, "slave_id");
    json_t *o = json_object();
    json_t *arr = json_array();
    struct acl_approver *roles = master_role_viewer_of(m, req, ACL_VIEW_ROLES);
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        if (only == NULL || strcmp(only, ag->id) == 0)
            json_array_append_new(arr, agent_model(m, ag, roles));
    }
    acl_approver_free(roles);
    json_object_set_new(o, "slaves", arr);
    json_object_set_new(o, "recovered_slaves", json_array());
    reply(m, req, o);
}

/* A non-negative integer query parameter; dflt when it is absent or not
 * one (Mesos's /tasks takes a bad limit or offset as not given). */
static size_t query_count(struct http_request *req, const char *name,
                          size_t dflt)
{
    const char *v = http_request_query(req, name);
    if (v == NULL || *v < '0' || *v > '9')
        return dflt;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end != '\0' || errno != 0 || n > SIZE_MAX)
        return dflt;
    return (size_t)n;
}

/* A task /tasks lists: live (t) or completed (r, of fw). */
struct task_entry {
    const struct framework *fw;
    const struct task *t;
    const struct task_record *r;
    double ts; /* its first status's timestamp: the sort key */
};

static int entry_ts_cmp(const void *x, const void *y)
{
    const struct task_entry *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Append fw's tasks (live, then completed) that match task_id (NULL: all)
 * to *v (grown as needed). */
static void collect_tasks(const struct framework *fw, const char *task_id,
                          struct task_entry **v, size_t *n, size_t *cap)
{
    size_t need = *n + hmap_count(fw->tasks) + fw->ncompleted_tasks;
    if (need > *cap) {
        *cap = need * 2;
        *v = xreallocarray(*v, *cap, sizeof(**v));
    }
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (task_id != NULL && strcmp(task_id, t->info->task_id->value) != 0)
            continue;
        (*v)[(*n)++] = (struct task_entry){fw, t, NULL,
                                           t->nhist ? t->hist[0].timestamp : 0};
    }
    for (uint32_t i = 0; i < fw->ncompleted_tasks; i++) {
        const struct task_record *r = master_task_completed_at(fw, i);
        if (task_id != NULL && strcmp(task_id, r->id) != 0)
            continue;
        (*v)[(*n)++] = (struct task_entry){fw, NULL, r,
                                           r->nhist ? r->hist[0].timestamp : 0};
    }
}

/* The completed tasks of every framework, sorted by first status's time
 * (*n OUT). Bounded: --max_completed_tasks_per_framework per framework. */
static struct task_entry *completed_sorted(struct master *m, size_t *n)
{
    struct task_entry *v = NULL;
    size_t cap = 0;
    *n = 0;
    size_t pos = 0;
    void *val;
    const struct hmap *maps[] = {m->frameworks, m->completed};
    for (size_t i = 0; i < 2; i++) {
        pos = 0;
        while (hmap_next(maps[i], &pos, NULL, &val)) {
            const struct framework *fw = val;
            if (*n + fw->ncompleted_tasks > cap) {
                cap = (*n + fw->ncompleted_tasks) * 2;
                v = xreallocarray(v, cap, sizeof(*v));
            }
            for (uint32_t k = 0; k < fw->ncompleted_tasks; k++) {
                const struct task_record *r = master_task_completed_at(fw, k);
                v[(*n)++] = (struct task_entry){
                    fw, NULL, r, r->nhist ? r->hist[0].timestamp : 0};
            }
        }
    }
    if (*n > 0)
        qsort(v, *n, sizeof(*v), entry_ts_cmp);
    return v;
}

static double live_ts(const struct task *t)
{
    return t->nhist ? t->hist[0].timestamp : t->launched;
}

/* One page of /tasks without framework_id or task_id: the live tasks in
 * the order the master learned of them (m->live's list, walked from the
 * end the order starts at) merged with the completed tasks sorted by
 * their first status's time; offset entries skipped, then limit taken.
 * O(offset + limit + completed tasks), never a pass over every live task. */
static json_t *tasks_page(struct master *m, bool asc, size_t offset,
                          size_t limit)
{
    size_t nc;
    struct task_entry *done = completed_sorted(m, &nc);
    size_t ci = 0; /* completed entries consumed, from the order's start */
    const struct task *t = asc ? m->live.head : m->live.tail;
    json_t *arr = json_array();
    for (size_t i = 0; i < offset + limit; i++) {
        const struct task_entry *c =
            ci < nc ? &done[asc ? ci : nc - 1 - ci] : NULL;
        bool take_live;
        if (t == NULL && c == NULL)
            break;
        else if (t == NULL)
            take_live = false;
        else if (c == NULL)
            take_live = true;
        else
            take_live = asc ? live_ts(t) <= c->ts : live_ts(t) >= c->ts;
        if (take_live) {
            if (i >= offset)
                json_array_append_new(arr, task_model(t));
            t = asc ? t->live_next : t->live_prev;
        } else {
            if (i >= offset)
                json_array_append_new(arr, record_model(c->fw, c->r));
            ci++;
        }
    }
    free(done);
    return arr;
}

/* GET /tasks: the tasks of registered and completed frameworks, live and
 * completed, sorted by their first status's time (order=asc, or descending
 * by default), limit (default 100) from offset; framework_id and task_id
 * select, as Mesos's /tasks does. */
static void handle_tasks(struct http_request *req, void *arg)
{
    struct master *m = arg;
    size_t limit = query_count(req, "limit", 100);
    size_t offset = query_count(req, "offset", 0);
    const char *order = http_request_query(req, "order");
    const char *fid = http_request_query(req, "framework_id");
    const char *tid = http_request_query(req, "task_id");
    bool asc = order != NULL && strcmp(order, "asc") == 0;

    if (fid == NULL && tid == NULL) {
        json_t *o = json_object();
        json_object_set_new(o, "tasks", tasks_page(m, asc, offset, limit));
        reply(m, req, o);
        return;
    }
    struct task_entry *all = NULL;
    size_t k = 0, cap = 0;
    if (fid != NULL) {
        const struct framework *fw = hmap_get(m->frameworks, fid);
        if (fw == NULL)
            fw = hmap_get(m->completed, fid);
        if (fw != NULL)
            collect_tasks(fw, tid, &all, &k, &cap);
    } else {
        size_t pos = 0;
        void *val;
        while (hmap_next(m->frameworks, &pos, NULL, &val))
            collect_tasks(val, tid, &all, &k, &cap);
        for (uint32_t i = 0; i < m->ncompleted; i++) {
            const struct framework *fw =
                hmap_get(m->completed, m->completed_order[i]);
            if (fw != NULL)
                collect_tasks(fw, tid, &all, &k, &cap);
        }
    }
    if (k > 0)
        qsort(all, k, sizeof(*all), entry_ts_cmp);
    json_t *arr = json_array();
    for (size_t i = offset; i < k && i - offset < limit; i++) {
        const struct task_entry *e = &all[asc ? i : k - 1 - i];
        json_array_append_new(arr, e->t != NULL ? task_model(e->t)
                                                : record_model(e->fw, e->r));
    }
    free(all);
    json_t *o = json_object();
    json_object_set_new(o, "tasks", arr);
    reply(m, req, o);
}

/* ---- /roles
 * ------------------------------------------------------------------- */

static json_t *qlist_model(const struct alloc_qlist *q)
{
    json_t *o = json_object();
    const char *always[] = {"cpus", "gpus", "mem", "disk"};
    for (size_t i = 0; i < 4; i++)
        json_object_set_new(o, always[i], json_real(0.0));
    for (uint32_t i = 0; i < q->n; i++)
        json_object_set_new(o, q->v[i].name,
                            json_real(res_scalar_to_double(q->v[i].milli)));
    return o;
}

/* Quota quantities as Mesos writes them: only the names set (an absent
 * limit is no limit, not 0). */
static json_t *quota_model(const struct alloc_qlist *q)
{
    json_t *o = json_object();
    for (uint32_t i = 0; i < q->n; i++)
        json_object_set_new(o, q->v[i].name,
                            json_real(res_scalar_to_double(q->v[i].milli)));
    return o;
}

struct roles_ctx {
    struct master *m;
    json_t *arr;
};

static void role_cb(void *arg, const struct alloc_role_info *info)
{
    struct roles_ctx *ctx = arg;
    json_t *r = json_object();
    json_object_set_new(r, "name", json_string(info->role));
    json_object_set_new(r, "weight", json_real(info->weight));
    json_t *fids = json_array();
    res_list offered = RES_LIST_INIT;
    size_t pos = 0;
    void *val;
    while (hmap_next(ctx->m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        for (uint32_t i = 0; i < fw->nroles; i++)
            if (strcmp(fw->roles[i], info->role) == 0)
                json_array_append_new(fids, json_string(fw->id));
        size_t op = 0;
        void *ov;
        while (hmap_next(fw->offers, &op, NULL, &ov)) {
            const struct offer *o = ov;
            if (res_role_is_subrole(o->role, info->role))
                res_list_add_all(&offered, &o->resources);
        }
    }
    json_object_set_new(r, "frameworks", fids);
    json_object_set_new(r, "resources", qlist_model(&info->allocated));
    json_object_set_new(r, "allocated", qlist_model(&info->allocated));
    json_object_set_new(r, "offered", resources_model(&offered));
    json_object_set_new(r, "reserved", qlist_model(&info->reserved));
    json_t *quota = json_object();
    json_object_set_new(quota, "role", json_string(info->role));
    json_object_set_new(quota, "guarantee", quota_model(&info->guarantee));
    json_object_set_new(quota, "limit", quota_model(&info->limit));
    /* Mesos's consumption is reservations plus what tasks use; the
     * allocator's counts offers too, which are taken back out. */
    json_t *consumed = json_object();
    for (uint32_t i = 0; i < info->consumed.n; i++) {
        int64_t milli = info->consumed.v[i].milli;
        for (uint32_t k = 0; k < offered.n; k++) {
            const struct resource *o = &offered.v[k];
            if (o->type == RES_SCALAR && !o->revocable &&
                res_is_unreserved(o) &&
                strcmp(o->name, info->consumed.v[i].name) == 0)
                milli -= o->scalar;
        }
        if (milli > 0)
            json_object_set_new(consumed, info->consumed.v[i].name,
                                json_real(res_scalar_to_double(milli)));
    }
    res_list_clear(&offered);
    json_object_set_new(quota, "consumed", consumed);
    json_object_set_new(r, "quota", quota);
    json_array_append_new(ctx->arr, r);
}

static void handle_roles(struct http_request *req, void *arg)
{
    struct master *m = arg;
    struct roles_ctx ctx = {m, json_array()};
    alloc_foreach_role(m->alloc, role_cb, &ctx);
    json_t *o = json_object();
    json_object_set_new(o, "roles", ctx.arr);
    reply(m, req, o);
}

/* ---- /metrics/snapshot
 * ------------------------------------------------------- */

/* Where master_metrics_collect's values go. */
struct metric_sink {
    master_metric_fn fn;
    void *arg;
};

static void gauge(const struct metric_sink *o, const char *name, double v)
{
    o->fn(o->arg, name, v);
}

static int double_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The registrar metrics: the registry's backlog, size and timings.
 * state_store_ms is the latest transaction's time; its /count, /min, /max and
 * percentiles (nearest rank) cover the latest REGISTRY_STORE_SAMPLES, as
 * Mesos's timer does its window. */
static void registrar_metrics(struct master *m, const struct metric_sink *o)
{
    if (m->registry == NULL) {
        /* --registry=in_memory: nothing is queued, stored or timed. */
        gauge(o, "registrar/queued_operations", 0);
        gauge(o, "registrar/registry_size_bytes", 0);
        gauge(o, "registrar/state_fetch_ms", 0);
        gauge(o, "registrar/state_store_ms", 0);
        return;
    }
    struct registry_stats st;
    registry_get_stats(m->registry, &st);
    gauge(o, "registrar/queued_operations", (double)st.queued);
    gauge(o, "registrar/registry_size_bytes", (double)st.size_bytes);
    gauge(o, "registrar/state_fetch_ms", st.fetch_ms);
    gauge(o, "registrar/state_store_ms", st.store_ms);
    double *v = xcalloc(REGISTRY_STORE_SAMPLES, sizeof(*v));
    size_t n = registry_store_times(m->registry, v, REGISTRY_STORE_SAMPLES);
    if (n > 0) {
        qsort(v, n, sizeof(*v), double_cmp);
        gauge(o, "registrar/state_store_ms/count", (double)n);
        gauge(o, "registrar/state_store_ms/min", v[0]);
        gauge(o, "registrar/state_store_ms/max", v[n - 1]);
        const struct {
            const char *name;
            double q;
        } pct[] = {
            {"registrar/state_store_ms/p50", 0.50},
            {"registrar/state_store_ms/p90", 0.90},
            {"registrar/state_store_ms/p95", 0.95},
            {"registrar/state_store_ms/p99", 0.99},
            {"registrar/state_store_ms/p999", 0.999},
            {"registrar/state_store_ms/p9999", 0.9999},
        };
        for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
            size_t rank = (size_t)ceil(pct[i].q * (double)n);
            gauge(o, pct[i].name, v[rank > 0 ? rank - 1 : 0]);
        }
    }
    free(v);
}

void master_metrics_collect(struct master *m, master_metric_fn fn, void *arg)
{
    const struct master_metrics *mt = &m->metrics;
    const struct metric_sink sink = {fn, arg}, *o = &sink;
    gauge(o, "master/uptime_secs",
          (double)(clock_monotonic_ns() - m->start_mono) / CLOCK_NS_PER_SEC);
    gauge(o, "master/elected", 1);

    /* Nothing is visited: per-state task counts and the resources tasks
     * use are kept current in m->live (live_counters.c), agents',
     * frameworks' and offers' counts and sums in m->mc
     * (metrics_counters.c), the agents' totals by the allocator. */
    struct master_mc_view v;
    master_mc_view(m, &v);
    gauge(o, "master/slaves_active", v.agents_connected);
    gauge(o, "master/slaves_inactive", v.agents - v.agents_connected);
    gauge(o, "master/slaves_connected", v.agents_connected);
    gauge(o, "master/slaves_disconnected", v.agents - v.agents_connected);

    const uint64_t *live = m->live.tasks;
    gauge(o, "master/frameworks_active", v.frameworks_active);
    gauge(o, "master/frameworks_inactive", v.frameworks - v.frameworks_active);
    gauge(o, "master/frameworks_connected", v.frameworks_connected);
    gauge(o, "master/frameworks_disconnected",
          v.frameworks - v.frameworks_connected);
    gauge(o, "master/tasks_staging",
          (double)live[MESOS__V1__TASK_STATE__TASK_STAGING]);
    gauge(o, "master/tasks_starting",
          (double)live[MESOS__V1__TASK_STATE__TASK_STARTING]);
    gauge(o, "master/tasks_running",
          (double)live[MESOS__V1__TASK_STATE__TASK_RUNNING]);
    gauge(o, "master/tasks_killing",
          (double)live[MESOS__V1__TASK_STATE__TASK_KILLING]);
    gauge(o, "master/tasks_unreachable",
          (double)live[MESOS__V1__TASK_STATE__TASK_UNREACHABLE]);
    const struct {
        const char *name;
        Mesos__V1__TaskState state;
    } counters[] = {
        {"master/tasks_finished", MESOS__V1__TASK_STATE__TASK_FINISHED},
        {"master/tasks_failed", MESOS__V1__TASK_STATE__TASK_FAILED},
        {"master/tasks_killed", MESOS__V1__TASK_STATE__TASK_KILLED},
        {"master/tasks_lost", MESOS__V1__TASK_STATE__TASK_LOST},
        {"master/tasks_error", MESOS__V1__TASK_STATE__TASK_ERROR},
        {"master/tasks_dropped", MESOS__V1__TASK_STATE__TASK_DROPPED},
        {"master/tasks_gone", MESOS__V1__TASK_STATE__TASK_GONE},
        {"master/tasks_gone_by_operator",
         MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR},
    };
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        gauge(o, counters[i].name,
              (double)mt->tasks_by_state[counters[i].state]);
    gauge(o, "master/outstanding_offers", v.offers);

    /* As Mesos: master/<name>_total and _used count regular resources,
     * master/<name>_revocable_* the revocable ones (agents' estimates and
     * allocation slack); the allocator's totals count both, and its
     * offered_or_allocated what offers and tasks hold. */
    for (size_t i = 0; i < MASTER_LIVE_NAMES; i++) {
        const char *name = master_live_names[i];
        char key[80];
        for (size_t k = 0; k < 2; k++) {
            const char *infix = k == 0 ? "" : "_revocable";
            double t = res_scalar_to_double(v.total[k][i]);
            double u = res_scalar_to_double(m->live.used[k][i]);
            snprintf(key, sizeof(key), "master/%s%s_total", name, infix);
            gauge(o, key, t);
            snprintf(key, sizeof(key), "master/%s%s_used", name, infix);
            gauge(o, key, u);
            snprintf(key, sizeof(key), "master/%s%s_percent", name, infix);
            gauge(o, key, t > 0 ? u / t : 0);
        }
        if (i == 3)
            break; /* Mesos's allocator lists cpus, mem and disk */
        snprintf(key, sizeof(key), "allocator/mesos/resources/%s/total", name);
        gauge(o, key, res_scalar_to_double(v.total[0][i] + v.total[1][i]));
        snprintf(key, sizeof(key),
                 "allocator/mesos/resources/%s/offered_or_allocated", name);
        gauge(o, key,
              res_scalar_to_double(m->live.used[0][i] + m->live.used[1][i] +
                                   v.offered[i]));
    }
    /* offerd's allocator is a library the loop calls: nothing ever waits
     * in a queue of its own. */
    gauge(o, "allocator/mesos/event_queue_dispatches", 0);
    gauge(o, "allocator/event_queue_dispatches", 0);

    const struct {
        const char *name;
        uint64_t v;
    } c[] = {
        {"master/messages_register_framework", mt->messages_register_framework},
        {"master/messages_reregister_framework",
         mt->messages_reregister_framework},
        {"master/messages_unregister_framework",
         mt->messages_unregister_framework},
        {"master/messages_launch_tasks", mt->messages_launch_tasks},
        {"master/messages_decline_offers", mt->messages_decline_offers},
        {"master/messages_revive_offers", mt->messages_revive_offers},
        {"master/messages_resource_request", mt->messages_resource_request},
        {"master/messages_suppress_offers", mt->messages_suppress_offers},
        {"master/messages_kill_task", mt->messages_kill_task},
        {"master/messages_status_update", mt->messages_status_update},
        {"master/messages_status_update_acknowledgement",
         mt->messages_status_update_acknowledgement},
        {"master/valid_status_update_acknowledgements",
         mt->valid_status_update_acknowledgements},
        {"master/invalid_status_update_acknowledgements",
         mt->invalid_status_update_acknowledgements},
        {"master/messages_reconcile_tasks", mt->messages_reconcile_tasks},
        {"master/messages_reconcile_operations",
         mt->messages_reconcile_operations},
        {"master/messages_operation_status_update_acknowledgement",
         mt->messages_operation_status_update_acknowledgement},
        {"master/valid_operation_status_update_acknowledgements",
         mt->valid_operation_status_update_acknowledgements},
        {"master/invalid_operation_status_update_acknowledgements",
         mt->invalid_operation_status_update_acknowledgements},
        {"master/messages_framework_to_executor",
         mt->messages_framework_to_executor},
        {"master/messages_register_slave", mt->messages_register_slave},
        {"master/messages_reregister_slave", mt->messages_reregister_slave},
        {"master/messages_unregister_slave", mt->messages_unregister_slave},
        {"master/valid_status_updates", mt->valid_status_updates},
        {"master/invalid_status_updates", mt->invalid_status_updates},
        {"master/valid_framework_to_executor_messages",
         mt->valid_framework_to_executor_messages},
        {"master/invalid_framework_to_executor_messages",
         mt->invalid_framework_to_executor_messages},
        {"master/messages_executor_to_framework",
         mt->messages_executor_to_framework},
        {"master/valid_executor_to_framework_messages",
         mt->valid_executor_to_framework_messages},
        {"master/invalid_executor_to_framework_messages",
         mt->invalid_executor_to_framework_messages},
        {"master/messages_exited_executor", mt->messages_exited_executor},
        {"master/slave_registrations", mt->slave_registrations},
        {"master/slave_reregistrations", mt->slave_reregistrations},
        {"master/slave_removals", mt->slave_removals},
        {"master/recovery_slave_removals", mt->recovery_slave_removals},
        {"master/tasks_adopted", mt->tasks_adopted},
        {"master/slack_evictions", mt->slack_evictions},
        {"master/tasks_preempted", mt->tasks_preempted},
        {"master/agent_task_reconciliations", mt->agent_reconciliations},
        {"master/invalid_calls", mt->invalid_calls},
        {"master/offers_declined", mt->offers_declined},
        {"master/offers_accepted", mt->offers_accepted},
        {"master/offers_rescinded", mt->offers_rescinded},
        {"allocator/mesos/allocation_runs", mt->allocation_runs},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        gauge(o, c[i].name, (double)c[i].v);
    gauge(o, "allocator/mesos/allocation_run_ms", mt->allocation_run_ms);
    gauge(o, "master/slaves_unreachable",
          (double)hmap_count(m->unreachable_agents));
    gauge(o, "master/slaves_recovering",
          (double)hmap_count(m->recovered_agents));
    struct alloc_stats st;
    alloc_get_stats(m->alloc, &st);
    gauge(o, "allocator/mesos/offer_filters/active", st.filters_active);
    gauge(o, "allocator/mesos/roles", st.roles);
    master_quota_metrics(m, fn, arg);
    master_ops_metrics(m, fn, arg);
    struct http_server_stats hs;
    http_server_stats(m->http, &hs);
    gauge(o, "master/http/connections", (double)hs.conns);
    gauge(o, "master/http/buffered_request_bytes", (double)hs.buffered);
    gauge(o, "master/http/connections_shed", (double)hs.shed);
    gauge(o, "master/http/connections_timed_out", (double)hs.timed_out);
    gauge(o, "master/http/slow_bodies_closed", (double)hs.slow_bodies);
    gauge(o, "master/http/requests_over_budget", (double)hs.over_budget);
    gauge(o, "master/http/accept_pauses", (double)hs.accept_pauses);
    gauge(o, "master/http/tls_handshakes", (double)hs.tls_handshakes);
    gauge(o, "master/http/tls_handshake_failures",
          (double)hs.tls_handshake_failures);
    gauge(o, "master/http/tls_plain_connections", (double)hs.tls_plain);
    gauge(o, "master/operator_event_stream_subscribers", (double)m->nopev_subs);
    gauge(o, "master/operator_event_stream_subscribers_dropped",
          (double)mt->opev_dropped);

    double qm, qd, qh;
    master_event_queue_counts(m, &qm, &qd, &qh);
    gauge(o, "master/event_queue_messages", qm);
    gauge(o, "master/event_queue_dispatches", qd);
    gauge(o, "master/event_queue_http_requests", qh);
    gauge(o, "master/dropped_messages", (double)mt->dropped_messages);
    /* Mesos's reasons: a new agent at the same address (offerd admits it
     * under its own id, removing none), health checks (missed pings), the
     * agent's own goodbye. Removals by an operator count in none. */
    gauge(o, "master/slave_removals/reason_registered", 0);
    gauge(o, "master/slave_removals/reason_unhealthy",
          (double)mt->slave_removals_by_how[AGENT_REMOVED_UNREACHABLE]);
    gauge(o, "master/slave_removals/reason_unregistered",
          (double)mt->slave_removals_by_how[AGENT_REMOVED_SHUTDOWN]);
    /* offerd marks an agent unreachable as soon as it decides to (no rate
     * limit), so every scheduled transition completes and none is
     * canceled. */
    double unreachable =
        (double)(mt->slave_removals_by_how[AGENT_REMOVED_UNREACHABLE] +
                 mt->recovery_slave_removals);
    gauge(o, "master/slave_unreachable_scheduled", unreachable);
    gauge(o, "master/slave_unreachable_completed", unreachable);
    gauge(o, "master/slave_unreachable_canceled", 0);
    registrar_metrics(m, o);
    master_system_metrics(fn, arg);
}

static void metric_json(void *arg, const char *name, double v)
{
    json_object_set_new(arg, name, json_real(v));
}

static void handle_metrics(struct http_request *req, void *arg)
{
    json_t *o = json_object();
    master_metrics_collect(arg, metric_json, o);
    reply(arg, req, o);
}

/* ---- Registration ---------------------------------------------------------
 */

int master_state_endpoints_register(struct master *m)
{
    const struct {
        const char *path;
        http_handler_fn fn;
    } routes[] = {
        {"/state", master_state_stream_handle},
        {"/state.json", master_state_stream_handle},
        {"/state-summary", handle_state_summary},
        {"/frameworks", handle_frameworks},
        {"/slaves", handle_slaves},
        {"/tasks", handle_tasks},
        {"/roles", handle_roles},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        char alias[64];
        snprintf(alias, sizeof(alias), "/master%s", routes[i].path);
        if (http_server_route(m->http, routes[i].path, HTTP_GET, routes[i].fn,
                              m) != 0 ||
            http_server_route(m->http, alias, HTTP_GET, routes[i].fn, m) != 0)
            return -1;
    }
    if (http_server_route(m->http, "/metrics/snapshot", HTTP_GET,
                          handle_metrics, m) != 0)
        return -1;
    return 0;
}
