/*
 * /state's entities as JSON text, written from the structs (see
 * state_write.h). The common shapes have a direct path: resource summaries
 * of scalars, plain scalar resources in the protobuf mapping, text and
 * scalar attributes, tasks. Anything rarer (ranges and sets, reservations,
 * persistent volumes, labels, containers, drain info ...) is built by the
 * jansson model of state_endpoints.c for that one field and its text
 * copied in, so the two can never disagree on a shape only one of them
 * knows.
 */
#include "master/state_write.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/json_out.h"
#include "common/json_pb.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "common/task_state.h"
#include "master/agents.h"
#include "master/executors.h"
#include "master/domains.h"
#include "master/live_counters.h"
#include "master/maintenance.h"
#include "master/state_models.h"

/* ---- Resources ----------------------------------------------------------
 */

/* Scalars summed by name in milli-units, cpus, gpus, mem and disk first,
 * the others in the order they first appear: what Mesos's model(Resources)
 * shows of a list of plain scalars. slow: the list has something else (a
 * range, a set, a shared or provider's resource, too many names), and the
 * jansson model must do it. */
#define RSUM_NAMES 20
struct rsum {
    const char *name[RSUM_NAMES];
    int64_t v[RSUM_NAMES];
    uint32_t n;
    bool slow;
};

static void rsum_init(struct rsum *s)
{
    static const char *const always[] = {"cpus", "gpus", "mem", "disk"};
    memset(s, 0, sizeof(*s));
    for (uint32_t i = 0; i < 4; i++)
        s->name[i] = always[i];
    s->n = 4;
}

/* Add l's entries whose revocability is revocable. As res_list_flatten
 * merges them: an empty entry adds no name. */
static void rsum_add(struct rsum *s, const res_list *l, bool revocable)
{
    for (uint32_t i = 0; i < l->n && !s->slow; i++) {
        const struct resource *r = &l->v[i];
        if (r->revocable != revocable)
            continue;
        if (r->type != RES_SCALAR || r->shared || r->provider_id != NULL) {
            s->slow = true;
            return;
        }
        if (r->scalar == 0)
            continue;
        uint32_t k = 0;
        while (k < s->n && strcmp(s->name[k], r->name) != 0)
            k++;
        if (k == s->n) {
            if (s->n == RSUM_NAMES ||
                !jout_utf8_valid(r->name, strlen(r->name))) {
                s->slow = true;
                return;
            }
            s->name[s->n++] = r->name;
        }
        s->v[k] += r->scalar;
    }
}

static void rsum_write(struct jout *w, const struct rsum *s)
{
    jout_obj_begin(w);
    for (uint32_t i = 0; i < s->n; i++) {
        jout_key(w, s->name[i]);
        jout_real(w, res_scalar_to_double(s->v[i]));
    }
    jout_obj_end(w);
}

/* "key": the summary of l's regular (or revocable) resources. */
static void write_summary(struct jout *w, const char *key, const res_list *l,
                          bool revocable)
{
    struct rsum s;
    rsum_init(&s);
    rsum_add(&s, l, revocable);
    if (s.slow) {
        jout_kjson_new(w, key,
                       revocable ? master_state_revocable_json(l)
                                 : master_state_resources_json(l));
        return;
    }
    jout_key(w, key);
    rsum_write(w, &s);
}

/* A plain scalar (master_live_plain_scalar) as mesos.v1.Resource in the
 * protobuf-JSON mapping: name, milli-units, allocation role (NULL: none). */
static void write_plain(struct jout *w, const char *name, int64_t milli,
                        const char *role)
{
    jout_obj_begin(w);
    jout_kstr(w, "name", name);
    jout_kstr(w, "type", "SCALAR");
    jout_key(w, "scalar");
    jout_obj_begin(w);
    jout_kreal(w, "value", res_scalar_to_double(milli));
    jout_obj_end(w);
    if (role != NULL) {
        jout_key(w, "allocation_info");
        jout_obj_begin(w);
        jout_kstr(w, "role", role);
        jout_obj_end(w);
    }
    jout_obj_end(w);
}

/* "key": l as an array of mesos.v1.Resource in the protobuf-JSON mapping
 * (res_list_to_json). */
static void write_full(struct jout *w, const char *key, const res_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (!master_live_plain_scalar(&l->v[i])) {
            jout_kjson_new(w, key, res_list_to_json(l));
            return;
        }
    jout_key(w, key);
    jout_arr_begin(w);
    for (uint32_t i = 0; i < l->n; i++)
        write_plain(w, l->v[i].name, l->v[i].scalar, l->v[i].alloc_role);
    jout_arr_end(w);
}

static bool has_reservations(const res_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].nresv > 0)
            return true;
    return false;
}

/* ---- Agents ---------------------------------------------------------------
 */

/* Fill *u with ag's tasks' use: what live_counters.c keeps, or else a walk
 * of its tasks; false when it is not all plain scalars or the agent has
 * executors (then master_agent_usage's lists do it). */
static bool agent_use(const struct agent *ag, struct master_use *u)
{
    u->n = 0;
    if (hmap_count(ag->executors) > 0)
        return false;
    return master_live_agent_use(ag, u) || master_live_agent_use_recount(ag, u);
}

/* "attributes": text and scalar ones directly when their names are
 * distinct; otherwise the model (a repeated name keeps its first place
 * and its last value there). */
static void write_attributes(struct jout *w, const Mesos__V1__AgentInfo *ai)
{
    bool direct = true;
    for (size_t i = 0; i < ai->n_attributes && direct; i++) {
        const Mesos__V1__Attribute *a = ai->attributes[i];
        direct =
            a->name != NULL && jout_utf8_valid(a->name, strlen(a->name)) &&
            ((a->type == MESOS__V1__VALUE__TYPE__SCALAR && a->scalar != NULL) ||
             (a->type == MESOS__V1__VALUE__TYPE__TEXT && a->text != NULL &&
              a->text->value != NULL &&
              jout_utf8_valid(a->text->value, strlen(a->text->value))));
        for (size_t k = 0; k < i && direct; k++)
            direct = strcmp(ai->attributes[k]->name, a->name) != 0;
    }
    if (!direct) {
        jout_kjson_new(w, "attributes", master_state_attributes_json(ai));
        return;
    }
    jout_key(w, "attributes");
    jout_obj_begin(w);
    for (size_t i = 0; i < ai->n_attributes; i++) {
        const Mesos__V1__Attribute *a = ai->attributes[i];
        if (a->type == MESOS__V1__VALUE__TYPE__SCALAR)
            jout_kreal(w, a->name, a->scalar->value);
        else
            jout_kstr(w, a->name, a->text->value);
    }
    jout_obj_end(w);
}

/* The members of /state's agent, or with summary only those Mesos's
 * /state-summary writes (its SlaveWriter: no *_full lists, no revocable
 * summaries), in the same order. */
static void write_agent(struct jout *w, const struct agent *ag, bool summary)
{
    jout_kstr(w, "id", ag->id);
    char pid[300];
    snprintf(pid, sizeof(pid), "slave(1)@%s:%u", ag->ip, (unsigned)ag->port);
    jout_kstr(w, "pid", pid);
    jout_kstr(w, "hostname", ag->info->hostname);
    jout_kint(w, "port", ag->port);
    jout_kreal(w, "registered_time", ag->registered_time);
    if (ag->reregistered_time > 0)
        jout_kreal(w, "reregistered_time", ag->reregistered_time);
    jout_kbool(w, "active", ag->connected && !ag->deactivated);
    /* maintenance.c's fields (deactivated, drain_info), as it makes them. */
    json_t *maint = json_object();
    master_agent_state_json(ag, maint);
    const char *k;
    json_t *v;
    json_object_foreach(maint, k, v)
    {
        jout_kjson(w, k, v);
    }
    json_decref(maint);
    jout_kstr(w, "version", ag->version ? ag->version : "");
    write_attributes(w, ag->info);
    if (ag->info->domain != NULL) { /* rare: through the model */
        json_t *d = json_object();
        master_domain_json(d, ag->info->domain);
        jout_kjson(w, "domain", json_object_get(d, "domain"));
        json_decref(d);
    }
    const res_list *total =
        ag->alloc != NULL ? alloc_agent_total(ag->alloc) : &ag->total;
    write_summary(w, "resources", total, false);
    if (!summary)
        write_full(w, "resources_full", total);
    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    struct master_use use;
    /* The summary needs no allocation roles: the sums live_counters.c
     * keeps for the agent do, while its tasks hold only cpus, mem, disk
     * and gpus (and it runs no executor), without touching a task. */
    bool counted =
        summary && ag->live_other == 0 && hmap_count(ag->executors) == 0;
    bool light = !counted && agent_use(ag, &use);
    if (counted) {
        size_t pos = 0;
        void *val;
        while (hmap_next(ag->offers, &pos, NULL, &val))
            res_list_add_all(&offered, &((const struct offer *)val)->resources);
        struct rsum s;
        rsum_init(&s);
        for (int n = 0; n < MASTER_LIVE_NAMES; n++)
            for (uint32_t i = 0; i < 4; i++)
                if (strcmp(s.name[i], master_live_names[n]) == 0)
                    s.v[i] = ag->live_used[n];
        jout_key(w, "used_resources");
        rsum_write(w, &s);
    } else if (light) {
        size_t pos = 0;
        void *val;
        while (hmap_next(ag->offers, &pos, NULL, &val))
            res_list_add_all(&offered, &((const struct offer *)val)->resources);
        struct rsum s;
        rsum_init(&s);
        for (uint32_t i = 0; i < use.n; i++) {
            uint32_t j = 0;
            while (j < s.n && strcmp(s.name[j], use.name[i]) != 0)
                j++;
            if (j == s.n)
                s.name[s.n++] = use.name[i]; /* n <= 4 + MASTER_USE_ENTRIES */
            s.v[j] += use.v[i];
        }
        jout_key(w, "used_resources");
        rsum_write(w, &s);
    } else {
        master_agent_usage(ag, &used, &offered);
        write_summary(w, "used_resources", &used, false);
    }
    write_summary(w, "offered_resources", &offered, false);
    if (!summary) {
        write_summary(w, "revocable_resources", total, true);
        write_summary(w, "revocable_used_resources", &used, true);
    }
    if (has_reservations(total)) {
        jout_kjson_new(w, "reserved_resources",
                       master_state_reserved_json(total));
        res_list unres = RES_LIST_INIT;
        for (uint32_t i = 0; i < total->n; i++)
            if (total->v[i].nresv == 0)
                res_list_add(&unres, &total->v[i]);
        write_summary(w, "unreserved_resources", &unres, false);
        if (!summary) {
            jout_kjson_new(w, "reserved_resources_full",
                           master_state_reserved_full_json(total));
            write_full(w, "unreserved_resources_full", &unres);
        }
        res_list_clear(&unres);
    } else {
        /* Nothing reserved: the unreserved part is the whole. */
        jout_key(w, "reserved_resources");
        jout_obj_begin(w);
        jout_obj_end(w);
        write_summary(w, "unreserved_resources", total, false);
        if (!summary) {
            jout_key(w, "reserved_resources_full");
            jout_obj_begin(w);
            jout_obj_end(w);
            write_full(w, "unreserved_resources_full", total);
        }
    }
    if (summary) {
        /* No *_full lists. */
    } else if (light) {
        jout_key(w, "used_resources_full");
        jout_arr_begin(w);
        for (uint32_t i = 0; i < use.n; i++)
            write_plain(w, use.name[i], use.v[i], use.role[i]);
        jout_arr_end(w);
    } else {
        write_full(w, "used_resources_full", &used);
    }
    if (!summary)
        write_full(w, "offered_resources_full", &offered);
    res_list_clear(&used);
    res_list_clear(&offered);
    jout_key(w, "capabilities");
    jout_arr_begin(w);
    jout_str(w, "MULTI_ROLE");
    jout_str(w, "HIERARCHICAL_ROLE");
    jout_str(w, "RESERVATION_REFINEMENT");
    jout_arr_end(w);
}

void master_write_agent_fields(struct jout *w, const struct master *m,
                               const struct agent *ag)
{
    (void)m;
    write_agent(w, ag, false);
}

void master_write_agent_summary_fields(struct jout *w, const struct master *m,
                                       const struct agent *ag)
{
    (void)m;
    write_agent(w, ag, true);
}

/* Whether key is in the NULL-terminated list. */
static bool listed(const char *const *list, const char *key)
{
    for (; *list != NULL; list++)
        if (strcmp(key, *list) == 0)
            return true;
    return false;
}

bool master_summary_omits_agent_key(const char *key)
{
    static const char *const omitted[] = {"resources_full",
                                          "revocable_resources",
                                          "revocable_used_resources",
                                          "reserved_resources_full",
                                          "unreserved_resources_full",
                                          "used_resources_full",
                                          "offered_resources_full",
                                          NULL};
    return listed(omitted, key);
}

bool master_summary_omits_framework_key(const char *key)
{
    static const char *const omitted[] = {"user",
                                          "principal",
                                          "failover_timeout",
                                          "checkpoint",
                                          "registered_time",
                                          "reregistered_time",
                                          "unregistered_time",
                                          "role",
                                          "roles",
                                          "resources",
                                          "labels",
                                          NULL};
    return listed(omitted, key);
}

/* ---- Frameworks ---------------------------------------------------------
 */

static void write_capabilities(struct jout *w,
                               const Mesos__V1__FrameworkInfo *fi)
{
    jout_key(w, "capabilities");
    jout_arr_begin(w);
    for (size_t i = 0; i < fi->n_capabilities; i++) {
        if (!fi->capabilities[i]->has_type)
            continue;
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &mesos__v1__framework_info__capability__type__descriptor,
            fi->capabilities[i]->type);
        if (v != NULL)
            jout_str(w, v->name);
    }
    jout_arr_end(w);
}

/* "used_resources", "resources" and "offered_resources": what fw's live
 * tasks and executors use, and its offers hold. The tasks' part is the
 * sums live_counters.c keeps for the framework when its tasks hold only
 * cpus, mem, disk and gpus, else summed from the tasks by name; anything
 * but plain scalars goes through the lists and the model. */
static void write_framework_usage(struct jout *w, const struct framework *fw,
                                  bool summary)
{
    struct rsum used, offered;
    rsum_init(&used);
    rsum_init(&offered);
    size_t pos = 0;
    void *val;
    if (fw->live_other == 0) {
        /* The tasks' sums, kept current (live_counters.c): no walk. */
        for (int k = 0; k < MASTER_LIVE_NAMES; k++)
            for (uint32_t i = 0; i < 4; i++)
                if (strcmp(used.name[i], master_live_names[k]) == 0)
                    used.v[i] = fw->live_used[k];
    } else {
        while (!used.slow && hmap_next(fw->tasks, &pos, NULL, &val)) {
            const struct task *t = val;
            if (!task_state_is_terminal(t->state))
                rsum_add(&used, &t->resources, false);
        }
    }
    res_list execs = RES_LIST_INIT;
    master_executors_usage(fw->executors, &execs);
    rsum_add(&used, &execs, false);
    res_list_clear(&execs);
    pos = 0;
    while (!offered.slow && hmap_next(fw->offers, &pos, NULL, &val))
        rsum_add(&offered, &((const struct offer *)val)->resources, false);
    if (used.slow || offered.slow) {
        res_list u = RES_LIST_INIT, o = RES_LIST_INIT;
        pos = 0;
        while (hmap_next(fw->tasks, &pos, NULL, &val)) {
            const struct task *t = val;
            if (!task_state_is_terminal(t->state))
                res_list_add_all(&u, &t->resources);
        }
        master_executors_usage(fw->executors, &u);
        pos = 0;
        while (hmap_next(fw->offers, &pos, NULL, &val))
            res_list_add_all(&o, &((const struct offer *)val)->resources);
        jout_kjson_new(w, "used_resources", master_state_resources_json(&u));
        if (!summary)
            jout_kjson_new(w, "resources", master_state_resources_json(&u));
        jout_kjson_new(w, "offered_resources", master_state_resources_json(&o));
        res_list_clear(&u);
        res_list_clear(&o);
        return;
    }
    jout_key(w, "used_resources");
    rsum_write(w, &used);
    if (!summary) {
        jout_key(w, "resources");
        rsum_write(w, &used);
    }
    jout_key(w, "offered_resources");
    rsum_write(w, &offered);
}

/* Known from the registry, not subscribed since the master started. */
static bool framework_recovered(const struct framework *fw)
{
    return fw->registered_time > 0 && fw->stream == NULL && !fw->active &&
           fw->unregistered_time == 0 && fw->reregistered_time == 0;
}

void master_write_framework_fields(struct jout *w, const struct framework *fw)
{
    const Mesos__V1__FrameworkInfo *fi = fw->info;
    jout_kstr(w, "id", fw->id);
    jout_kstr(w, "name", fi->name);
    jout_kstr(w, "user", fi->user);
    jout_kstr(w, "hostname", fi->hostname ? fi->hostname : "");
    jout_kstr(w, "webui_url", fi->webui_url ? fi->webui_url : "");
    if (fi->principal != NULL)
        jout_kstr(w, "principal", fi->principal);
    jout_kreal(w, "failover_timeout",
               fi->has_failover_timeout ? fi->failover_timeout : 0.0);
    jout_kbool(w, "checkpoint", fi->checkpoint);
    jout_kbool(w, "active", fw->active);
    jout_kbool(w, "connected", fw->stream != NULL);
    jout_kbool(w, "recovered", framework_recovered(fw));
    jout_kreal(w, "registered_time", fw->registered_time);
    if (fw->reregistered_time > 0)
        jout_kreal(w, "reregistered_time", fw->reregistered_time);
    jout_kreal(w, "unregistered_time", fw->unregistered_time);
    jout_kstr(w, "role", fw->nroles > 0 ? fw->roles[0] : "*");
    jout_key(w, "roles");
    jout_arr_begin(w);
    for (uint32_t i = 0; i < fw->nroles; i++)
        jout_str(w, fw->roles[i]);
    jout_arr_end(w);
    write_capabilities(w, fi);
    write_framework_usage(w, fw, false);
}

void master_write_framework_summary_fields(struct jout *w,
                                           const struct framework *fw)
{
    const Mesos__V1__FrameworkInfo *fi = fw->info;
    jout_kstr(w, "id", fw->id);
    jout_kstr(w, "name", fi->name);
    jout_kstr(w, "hostname", fi->hostname ? fi->hostname : "");
    jout_kstr(w, "webui_url", fi->webui_url ? fi->webui_url : "");
    jout_kbool(w, "active", fw->active);
    jout_kbool(w, "connected", fw->stream != NULL);
    jout_kbool(w, "recovered", framework_recovered(fw));
    write_capabilities(w, fi);
    write_framework_usage(w, fw, true);
}

/* "labels": a Labels message's list, as Mesos shows it. */
static void write_labels(struct jout *w, const Mesos__V1__Labels *labels)
{
    json_t *l = jpb_to_json(&labels->base);
    json_t *ls = json_object_get(l, "labels");
    if (ls != NULL)
        jout_kjson(w, "labels", ls);
    else {
        jout_key(w, "labels");
        jout_arr_begin(w);
        jout_arr_end(w);
    }
    json_decref(l);
}

void master_write_framework_labels(struct jout *w, const struct framework *fw)
{
    if (fw->info->labels != NULL)
        write_labels(w, fw->info->labels);
}

/* ---- Tasks and offers -----------------------------------------------------
 */

/* The members a live task and a completed one share (task_model_base in
 * state_endpoints.c); executor_id is given, as the live task's model
 * overwrites it in place. */
static void write_task_base(struct jout *w, const char *id, const char *name,
                            const char *framework_id, const char *executor_id,
                            const char *agent_id, Mesos__V1__TaskState state,
                            const res_list *resources, const char *role,
                            const struct task_state_at *hist, uint32_t nhist,
                            const Mesos__V1__TaskStatus *latest)
{
    jout_kstr(w, "id", id);
    jout_kstr(w, "name", name);
    jout_kstr(w, "framework_id", framework_id);
    jout_kstr(w, "executor_id", executor_id);
    jout_kstr(w, "slave_id", agent_id);
    jout_kstr(w, "state", task_state_name(state));
    write_summary(w, "resources", resources, false);
    jout_kstr(w, "role", role);
    jout_key(w, "statuses");
    jout_arr_begin(w);
    for (uint32_t i = 0; i < nhist; i++) {
        jout_obj_begin(w);
        jout_kstr(w, "state", task_state_name(hist[i].state));
        jout_kreal(w, "timestamp", hist[i].timestamp);
        if (i + 1 == nhist && latest != NULL &&
            latest->state == hist[i].state) {
            if (latest->has_healthy)
                jout_kbool(w, "healthy", latest->healthy);
            if (latest->check_status != NULL)
                jout_kjson_new(w, "check_status",
                               jpb_to_json(&latest->check_status->base));
        }
        jout_obj_end(w);
    }
    jout_arr_end(w);
}

/* The members Mesos's model(Task) shows when the TaskInfo had them. */
static void write_task_extras(struct jout *w, const char *user,
                              const Mesos__V1__Labels *labels,
                              const Mesos__V1__DiscoveryInfo *discovery,
                              const Mesos__V1__ContainerInfo *container,
                              const Mesos__V1__HealthCheck *health_check)
{
    if (user != NULL)
        jout_kstr(w, "user", user);
    if (labels != NULL)
        write_labels(w, labels);
    if (discovery != NULL)
        jout_kjson_new(w, "discovery", jpb_to_json(&discovery->base));
    if (container != NULL)
        jout_kjson_new(w, "container", jpb_to_json(&container->base));
    if (health_check != NULL)
        jout_kjson_new(w, "health_check", jpb_to_json(&health_check->base));
}

void master_write_task(struct jout *w, const struct task *t)
{
    const Mesos__V1__TaskInfo *ti = t->info;
    const char *agent_id = t->agent != NULL ? t->agent_id : "";
    /* Each of these was allocated on its own when the task came, and a
     * read of /state finds few of them cached: ask for all of them now, so
     * that their misses overlap instead of coming one after another as
     * the members are written (docs/performance.md). */
    __builtin_prefetch(ti->name);
    __builtin_prefetch(agent_id);
    __builtin_prefetch(t->resources.v);
    __builtin_prefetch(t->role);
    __builtin_prefetch(t->hist);
    __builtin_prefetch(t->status);
    jout_obj_begin(w);
    write_task_base(
        w, t->id, ti->name, t->fw->id,
        ti->executor != NULL ? ti->executor->executor_id->value : "", agent_id,
        t->state, &t->resources, t->role, t->hist, t->nhist, t->status);
    write_task_extras(w, ti->command != NULL ? ti->command->user : NULL,
                      ti->labels, ti->discovery, ti->container,
                      ti->health_check);
    jout_obj_end(w);
}

void master_write_record(struct jout *w, const struct framework *fw,
                         const struct task_record *r)
{
    jout_obj_begin(w);
    write_task_base(w, r->id, r->name, fw->id, "", r->agent_id, r->state,
                    &r->resources, r->role, r->hist, r->nhist, r->status);
    write_task_extras(w, r->user, r->labels, r->discovery, r->container,
                      r->health_check);
    jout_obj_end(w);
}

void master_write_offer(struct jout *w, const struct offer *of)
{
    jout_obj_begin(w);
    jout_kstr(w, "id", of->id);
    jout_kstr(w, "framework_id", of->fw->id);
    jout_kstr(w, "slave_id", of->agent->id);
    write_summary(w, "resources", &of->resources, false);
    jout_key(w, "allocation_info");
    jout_obj_begin(w);
    jout_kstr(w, "role", of->role);
    jout_obj_end(w);
    jout_obj_end(w);
}
