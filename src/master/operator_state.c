/*
 * The master's state as mesos.v1.master messages, for the operator API's
 * read calls and its event stream; see operator_state.h.
 *
 * The lists follow the JSON endpoints (state_endpoints.c) so that both views
 * of one moment agree: a framework's terminal tasks are its completed tasks
 * (as /state lists them), every task of a live framework is in one of tasks
 * and completed_tasks, and the metrics are the very values of
 * /metrics/snapshot (master_metrics_collect).
 */
#include "master/agents.h"
#include "master/operator_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/flags.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "common/task_state.h"
#include "master/offers.h"
#include "master/operations.h"
#include "master/send.h"
#include "master/state_endpoints.h"
#include "master/system_endpoints.h"
#include "master/tasks.h"
#include "offerd/registry.pb-c.h"

/* ---- Small messages ------------------------------------------------------ */

static Mesos__V1__TimeInfo *time_new(double secs)
{
    Mesos__V1__TimeInfo *t = xmalloc(sizeof(*t));
    mesos__v1__time_info__init(t);
    t->nanoseconds = (int64_t)(secs * 1e9);
    return t;
}

static Mesos__V1__FrameworkID *framework_id_new(const char *value)
{
    Mesos__V1__FrameworkID *id = xmalloc(sizeof(*id));
    mesos__v1__framework_id__init(id);
    id->value = xstrdup(value);
    return id;
}

static Mesos__V1__AgentID *agent_id_new(const char *value)
{
    Mesos__V1__AgentID *id = xmalloc(sizeof(*id));
    mesos__v1__agent_id__init(id);
    id->value = xstrdup(value);
    return id;
}

/* ---- Tasks ----------------------------------------------------------------
 */

/* The status of one state the task went through: the whole status the
 * master holds for the latest, the state and its time for the others. */
static Mesos__V1__TaskStatus *status_new(const struct task *t, uint32_t i)
{
    if (i + 1 == t->nhist && t->status != NULL &&
        t->status->state == t->hist[i].state)
        return jpb_copy(&mesos__v1__task_status__descriptor, &t->status->base);
    Mesos__V1__TaskStatus *st = xmalloc(sizeof(*st));
    mesos__v1__task_status__init(st);
    st->task_id =
        jpb_copy(&mesos__v1__task_id__descriptor, &t->info->task_id->base);
    st->state = t->hist[i].state;
    st->has_timestamp = true;
    st->timestamp = t->hist[i].timestamp;
    if (t->agent != NULL)
        st->agent_id = agent_id_new(t->agent->id);
    return st;
}

/* Copy into p the fields Mesos's Task keeps of a TaskInfo: user (the
 * command's), labels, discovery, container, health_check, kill_policy.
 * Any may be NULL. */
static void task_extras(Mesos__V1__Task *p, const char *user,
                        const Mesos__V1__Labels *labels,
                        const Mesos__V1__DiscoveryInfo *discovery,
                        const Mesos__V1__ContainerInfo *container,
                        const Mesos__V1__HealthCheck *health_check,
                        const Mesos__V1__KillPolicy *kill_policy)
{
    if (user != NULL)
        p->user = xstrdup(user);
    if (labels != NULL)
        p->labels = jpb_copy(&mesos__v1__labels__descriptor, &labels->base);
    if (discovery != NULL)
        p->discovery =
            jpb_copy(&mesos__v1__discovery_info__descriptor, &discovery->base);
    if (container != NULL)
        p->container =
            jpb_copy(&mesos__v1__container_info__descriptor, &container->base);
    if (health_check != NULL)
        p->health_check =
            jpb_copy(&mesos__v1__health_check__descriptor, &health_check->base);
    if (kill_policy != NULL)
        p->kill_policy =
            jpb_copy(&mesos__v1__kill_policy__descriptor, &kill_policy->base);
}

/* p's status_update_uuid: st's uuid, when st is the update of state. */
static void set_update_uuid(Mesos__V1__Task *p, const Mesos__V1__TaskStatus *st,
                            Mesos__V1__TaskState state)
{
    if (st == NULL || !st->has_uuid || st->uuid.len == 0 || st->state != state)
        return;
    p->has_status_update_uuid = true;
    p->status_update_uuid.len = st->uuid.len;
    p->status_update_uuid.data = xmalloc(st->uuid.len);
    memcpy(p->status_update_uuid.data, st->uuid.data, st->uuid.len);
}

Mesos__V1__Task *master_opst_task(const struct task *t)
{
    const Mesos__V1__TaskInfo *ti = t->info;
    Mesos__V1__Task *p = xmalloc(sizeof(*p));
    mesos__v1__task__init(p);
    p->name = xstrdup(ti->name);
    p->task_id = jpb_copy(&mesos__v1__task_id__descriptor, &ti->task_id->base);
    p->framework_id = framework_id_new(t->fw->id);
    p->agent_id = agent_id_new(t->agent != NULL ? t->agent->id : "");
    p->state = t->state;
    p->resources = res_list_to_pb(&t->resources, true, &p->n_resources);
    p->statuses = xcalloc(t->nhist ? t->nhist : 1, sizeof(*p->statuses));
    for (uint32_t i = 0; i < t->nhist; i++)
        p->statuses[p->n_statuses++] = status_new(t, i);
    if (t->has_status_update_state) {
        p->has_status_update_state = true;
        p->status_update_state = t->status_update_state;
        /* The uuid of that update, when the status the master holds is it
         * (a later one may still be on its way to the framework). */
        set_update_uuid(p, t->status, t->status_update_state);
    }
    task_extras(p, ti->command != NULL ? ti->command->user : NULL, ti->labels,
                ti->discovery, ti->container, ti->health_check,
                ti->kill_policy);
    return p;
}

/* A growable array of message pointers. */
struct msgs {
    void **v;
    size_t n, cap;
};

static void msgs_push(struct msgs *a, void *msg)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    a->v[a->n++] = msg;
}

/* The array to hand to protobuf-c (never NULL) and its length. */
static void *msgs_take(struct msgs *a, size_t *n)
{
    *n = a->n;
    return a->v != NULL ? (void *)a->v : xcalloc(1, sizeof(void *));
}

/* A completed task as a mesos.v1.Task: what the master remembers of it,
 * its statuses the states it went through (the latest with the whole
 * status the master kept). */
Mesos__V1__Task *master_opst_completed_task(const struct framework *fw,
                                            const struct task_record *r)
{
    Mesos__V1__Task *p = xmalloc(sizeof(*p));
    mesos__v1__task__init(p);
    p->name = xstrdup(r->name);
    p->task_id = xmalloc(sizeof(*p->task_id));
    mesos__v1__task_id__init(p->task_id);
    p->task_id->value = xstrdup(r->id);
    p->framework_id = framework_id_new(fw->id);
    p->agent_id = agent_id_new(r->agent_id);
    p->state = r->state;
    p->has_status_update_state = true;
    p->status_update_state = r->state;
    p->resources = res_list_to_pb(&r->resources, true, &p->n_resources);
    p->statuses = xcalloc(r->nhist ? r->nhist : 1, sizeof(*p->statuses));
    for (uint32_t i = 0; i < r->nhist; i++) {
        if (i + 1 == r->nhist && r->status != NULL &&
            r->status->state == r->hist[i].state) {
            p->statuses[p->n_statuses++] =
                jpb_copy(&mesos__v1__task_status__descriptor, &r->status->base);
            break;
        }
        Mesos__V1__TaskStatus *st = xmalloc(sizeof(*st));
        mesos__v1__task_status__init(st);
        st->task_id =
            jpb_copy(&mesos__v1__task_id__descriptor, &p->task_id->base);
        st->state = r->hist[i].state;
        st->has_timestamp = true;
        st->timestamp = r->hist[i].timestamp;
        if (r->agent_id[0] != '\0')
            st->agent_id = agent_id_new(r->agent_id);
        p->statuses[p->n_statuses++] = st;
    }
    set_update_uuid(p, r->status, r->state);
    task_extras(p, r->user, r->labels, r->discovery, r->container,
                r->health_check, NULL);
    return p;
}

/* fw's tasks: live ones in live, terminal ones (not yet acknowledged, then
 * remembered as completed, oldest first) in completed. */
static void framework_tasks(const struct framework *fw, struct msgs *live,
                            struct msgs *completed)
{
    size_t tp = 0;
    void *tv;
    while (hmap_next(fw->tasks, &tp, NULL, &tv)) {
        const struct task *t = tv;
        msgs_push(task_state_is_terminal(t->state) ? completed : live,
                  master_opst_task(t));
    }
    for (uint32_t i = 0; i < fw->ncompleted_tasks; i++)
        msgs_push(completed, master_opst_completed_task(
                                 fw, master_task_completed_at(fw, i)));
}

static Mesos__V1__Master__Response__GetTasks *get_tasks(struct master *m)
{
    Mesos__V1__Master__Response__GetTasks *gt = xmalloc(sizeof(*gt));
    mesos__v1__master__response__get_tasks__init(gt);
    struct msgs live = {0}, completed = {0};
    size_t pos = 0;
    void *val;
    /* As /tasks: the tasks of running and of completed frameworks. */
    while (hmap_next(m->frameworks, &pos, NULL, &val))
        framework_tasks(val, &live, &completed);
    for (uint32_t i = 0; i < m->ncompleted; i++) {
        const struct framework *fw =
            hmap_get(m->completed, m->completed_order[i]);
        if (fw != NULL)
            framework_tasks(fw, &live, &completed);
    }
    gt->tasks = msgs_take(&live, &gt->n_tasks);
    gt->completed_tasks = msgs_take(&completed, &gt->n_completed_tasks);
    gt->pending_tasks = xcalloc(1, sizeof(void *));
    gt->unreachable_tasks = xcalloc(1, sizeof(void *));
    gt->orphan_tasks = xcalloc(1, sizeof(void *));
    return gt;
}

/* ---- Frameworks -------------------------------------------------------------
 */

Mesos__V1__Master__Response__GetFrameworks__Framework *
master_opst_framework(const struct framework *fw)
{
    Mesos__V1__Master__Response__GetFrameworks__Framework *f =
        xmalloc(sizeof(*f));
    mesos__v1__master__response__get_frameworks__framework__init(f);
    f->framework_info =
        jpb_copy(&mesos__v1__framework_info__descriptor, &fw->info->base);
    f->active = fw->active;
    f->connected = fw->stream != NULL;
    /* As /frameworks: known from an agent or the registry, never
     * subscribed since this master started. */
    f->recovered = fw->registered_time > 0 && fw->stream == NULL &&
                   !fw->active && fw->unregistered_time == 0 &&
                   fw->reregistered_time == 0;
    f->registered_time = time_new(fw->registered_time);
    if (fw->reregistered_time > 0)
        f->reregistered_time = time_new(fw->reregistered_time);
    if (fw->unregistered_time > 0)
        f->unregistered_time = time_new(fw->unregistered_time);

    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    struct msgs offers = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(fw->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (!task_state_is_terminal(t->state))
            res_list_add_all(&used, &t->resources);
    }
    pos = 0;
    while (hmap_next(fw->offers, &pos, NULL, &val)) {
        const struct offer *o = val;
        res_list_add_all(&offered, &o->resources);
        msgs_push(&offers, master_offer_pb(o));
    }
    f->offers = msgs_take(&offers, &f->n_offers);
    f->inverse_offers = xcalloc(1, sizeof(void *));
    f->allocated_resources =
        res_list_to_pb(&used, true, &f->n_allocated_resources);
    f->offered_resources =
        res_list_to_pb(&offered, true, &f->n_offered_resources);
    res_list_clear(&used);
    res_list_clear(&offered);
    return f;
}

static Mesos__V1__Master__Response__GetFrameworks *
get_frameworks(struct master *m)
{
    Mesos__V1__Master__Response__GetFrameworks *gf = xmalloc(sizeof(*gf));
    mesos__v1__master__response__get_frameworks__init(gf);
    struct msgs live = {0}, completed = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val))
        msgs_push(&live, master_opst_framework(val));
    for (uint32_t i = 0; i < m->ncompleted; i++) {
        const struct framework *fw =
            hmap_get(m->completed, m->completed_order[i]);
        if (fw != NULL)
            msgs_push(&completed, master_opst_framework(fw));
    }
    gf->frameworks = msgs_take(&live, &gf->n_frameworks);
    gf->completed_frameworks =
        msgs_take(&completed, &gf->n_completed_frameworks);
    gf->recovered_frameworks = xcalloc(1, sizeof(void *));
    return gf;
}

Mesos__V1__Master__Response__GetExecutors__Executor *
master_opst_executor(const struct executor *e)
{
    Mesos__V1__Master__Response__GetExecutors__Executor *x =
        xmalloc(sizeof(*x));
    mesos__v1__master__response__get_executors__executor__init(x);
    x->executor_info =
        jpb_copy(&mesos__v1__executor_info__descriptor, &e->info->base);
    x->agent_id = xmalloc(sizeof(*x->agent_id));
    mesos__v1__agent_id__init(x->agent_id);
    x->agent_id->value = xstrdup(e->agent->id);
    return x;
}

/* Every framework's executors (executors.c) with their agent; command
 * tasks have none. orphan_executors (deprecated in Mesos) stays empty:
 * the master adopts an executor only with its framework. */
static Mesos__V1__Master__Response__GetExecutors *
get_executors(struct master *m)
{
    Mesos__V1__Master__Response__GetExecutors *ge = xmalloc(sizeof(*ge));
    mesos__v1__master__response__get_executors__init(ge);
    struct msgs execs = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        size_t epos = 0;
        void *eval;
        while (hmap_next(fw->executors, &epos, NULL, &eval))
            msgs_push(&execs, master_opst_executor(eval));
    }
    ge->executors = msgs_take(&execs, &ge->n_executors);
    ge->orphan_executors = xcalloc(1, sizeof(void *));
    return ge;
}

/* ---- Agents -----------------------------------------------------------------
 */

Mesos__V1__Master__Response__GetAgents__Agent *
master_opst_agent(const struct agent *ag)
{
    Mesos__V1__Master__Response__GetAgents__Agent *a = xmalloc(sizeof(*a));
    mesos__v1__master__response__get_agents__agent__init(a);
    a->agent_info =
        jpb_copy(&mesos__v1__agent_info__descriptor, &ag->info->base);
    a->active = ag->connected && !ag->deactivated;
    a->has_deactivated = true;
    a->deactivated = ag->deactivated;
    a->version = xstrdup(ag->version != NULL ? ag->version : "");
    a->pid = xasprintf("slave(1)@%s:%u", ag->ip, (unsigned)ag->port);
    a->registered_time = time_new(ag->registered_time);
    if (ag->reregistered_time > 0)
        a->reregistered_time = time_new(ag->reregistered_time);
    const res_list *total =
        ag->alloc != NULL ? alloc_agent_total(ag->alloc) : &ag->total;
    a->total_resources = res_list_to_pb(total, true, &a->n_total_resources);
    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    master_agent_usage(ag, &used, &offered);
    a->allocated_resources =
        res_list_to_pb(&used, true, &a->n_allocated_resources);
    a->offered_resources =
        res_list_to_pb(&offered, true, &a->n_offered_resources);
    res_list_clear(&used);
    res_list_clear(&offered);
    if (ag->drain != NULL)
        a->drain_info =
            jpb_copy(&mesos__v1__drain_info__descriptor, &ag->drain->base);
    /* The capabilities /slaves lists: what every offerd agent handles. */
    static const Mesos__V1__AgentInfo__Capability__Type caps[] = {
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__MULTI_ROLE,
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__HIERARCHICAL_ROLE,
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__RESERVATION_REFINEMENT,
    };
    size_t ncaps = sizeof(caps) / sizeof(caps[0]);
    a->capabilities = xcalloc(ncaps, sizeof(*a->capabilities));
    for (size_t i = 0; i < ncaps; i++) {
        Mesos__V1__AgentInfo__Capability *c = xmalloc(sizeof(*c));
        mesos__v1__agent_info__capability__init(c);
        c->has_type = true;
        c->type = caps[i];
        a->capabilities[a->n_capabilities++] = c;
    }
    return a;
}

static Mesos__V1__Master__Response__GetAgents *get_agents(struct master *m)
{
    Mesos__V1__Master__Response__GetAgents *ga = xmalloc(sizeof(*ga));
    mesos__v1__master__response__get_agents__init(ga);
    struct msgs agents = {0}, recovered = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        if (ag->info != NULL) /* NULL: its admission is being recorded */
            msgs_push(&agents, master_opst_agent(ag));
    }
    pos = 0;
    while (hmap_next(m->recovered_agents, &pos, NULL, &val)) {
        const Offerd__Registry__Agent *r = val;
        msgs_push(&recovered,
                  jpb_copy(&mesos__v1__agent_info__descriptor, &r->info->base));
    }
    ga->agents = msgs_take(&agents, &ga->n_agents);
    ga->recovered_agents = msgs_take(&recovered, &ga->n_recovered_agents);
    return ga;
}

Mesos__V1__Master__Response__GetState *master_opst_get_state(struct master *m)
{
    Mesos__V1__Master__Response__GetState *gs = xmalloc(sizeof(*gs));
    mesos__v1__master__response__get_state__init(gs);
    gs->get_tasks = get_tasks(m);
    gs->get_executors = get_executors(m);
    gs->get_frameworks = get_frameworks(m);
    gs->get_agents = get_agents(m);
    return gs;
}

/* ---- Roles ------------------------------------------------------------------
 */

struct roles_ctx {
    struct master *m;
    struct msgs roles;
};

static Mesos__V1__Resource *scalar_new(const char *name, int64_t milli)
{
    Mesos__V1__Resource *r = xmalloc(sizeof(*r));
    mesos__v1__resource__init(r);
    r->name = xstrdup(name);
    r->type = MESOS__V1__VALUE__TYPE__SCALAR;
    r->scalar = xmalloc(sizeof(*r->scalar));
    mesos__v1__value__scalar__init(r->scalar);
    r->scalar->value = res_scalar_to_double(milli);
    return r;
}

/* As /roles: the frameworks subscribed to the role, and what is allocated
 * to it (its subtree), as scalars. */
static void role_cb(void *arg, const struct alloc_role_info *info)
{
    struct roles_ctx *ctx = arg;
    Mesos__V1__Role *r = xmalloc(sizeof(*r));
    mesos__v1__role__init(r);
    r->name = xstrdup(info->role);
    r->weight = info->weight;
    struct msgs fids = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(ctx->m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        for (uint32_t i = 0; i < fw->nroles; i++)
            if (strcmp(fw->roles[i], info->role) == 0)
                msgs_push(&fids, framework_id_new(fw->id));
    }
    r->frameworks = msgs_take(&fids, &r->n_frameworks);
    r->resources = xcalloc(info->allocated.n ? info->allocated.n : 1,
                           sizeof(*r->resources));
    for (uint32_t i = 0; i < info->allocated.n; i++)
        r->resources[r->n_resources++] =
            scalar_new(info->allocated.v[i].name, info->allocated.v[i].milli);
    msgs_push(&ctx->roles, r);
}

static Mesos__V1__Master__Response__GetRoles *get_roles(struct master *m)
{
    struct roles_ctx ctx = {m, {0}};
    alloc_foreach_role(m->alloc, role_cb, &ctx);
    Mesos__V1__Master__Response__GetRoles *gr = xmalloc(sizeof(*gr));
    mesos__v1__master__response__get_roles__init(gr);
    gr->roles = msgs_take(&ctx.roles, &gr->n_roles);
    return gr;
}

/* ---- Flags, metrics, logging, the master ------------------------------------
 */

static Mesos__V1__Master__Response__GetFlags *get_flags(struct master *m)
{
    /* The values /flags shows: one source of truth (common/flags). */
    json_t *j = flags_to_json(master_flags_object(m->flags));
    json_t *all = json_object_get(j, "flags");
    struct msgs flags = {0};
    const char *name;
    json_t *v;
    json_object_foreach(all, name, v)
    {
        Mesos__V1__Flag *f = xmalloc(sizeof(*f));
        mesos__v1__flag__init(f);
        f->name = xstrdup(name);
        if (json_is_string(v))
            f->value = xstrdup(json_string_value(v));
        msgs_push(&flags, f);
    }
    json_decref(j);
    Mesos__V1__Master__Response__GetFlags *gf = xmalloc(sizeof(*gf));
    mesos__v1__master__response__get_flags__init(gf);
    gf->flags = msgs_take(&flags, &gf->n_flags);
    return gf;
}

static void metric_cb(void *arg, const char *name, double value)
{
    Mesos__V1__Metric *mt = xmalloc(sizeof(*mt));
    mesos__v1__metric__init(mt);
    mt->name = xstrdup(name);
    mt->has_value = true;
    mt->value = value;
    msgs_push(arg, mt);
}

static Mesos__V1__Master__Response__GetMetrics *get_metrics(struct master *m)
{
    struct msgs metrics = {0};
    master_metrics_collect(m, metric_cb, &metrics);
    Mesos__V1__Master__Response__GetMetrics *gm = xmalloc(sizeof(*gm));
    mesos__v1__master__response__get_metrics__init(gm);
    gm->metrics = msgs_take(&metrics, &gm->n_metrics);
    return gm;
}

static Mesos__V1__Master__Response__GetMaster *get_master(struct master *m)
{
    Mesos__V1__MasterInfo info;
    Mesos__V1__Address addr;
    master_fill_info(m, &info, &addr);
    Mesos__V1__Master__Response__GetMaster *gm = xmalloc(sizeof(*gm));
    mesos__v1__master__response__get_master__init(gm);
    gm->master_info = jpb_copy(&mesos__v1__master_info__descriptor, &info.base);
    gm->master_info->pid = xasprintf("master@%s:%u", m->ip, (unsigned)m->port);
    gm->has_start_time = true;
    gm->start_time = m->start_time;
    /* As /state: this master leads since it started. */
    gm->has_elected_time = true;
    gm->elected_time = m->start_time;
    return gm;
}

/* The operations with feedback the master keeps (operations.c). */
static Mesos__V1__Master__Response__GetOperations *
get_operations(const struct master *m)
{
    Mesos__V1__Master__Response__GetOperations *go = xmalloc(sizeof(*go));
    mesos__v1__master__response__get_operations__init(go);
    go->operations = master_op_list(m, &go->n_operations);
    return go;
}

Mesos__V1__VersionInfo *master_opst_version(void)
{
    json_t *j = master_version_json();
    Mesos__V1__VersionInfo *vi = xmalloc(sizeof(*vi));
    mesos__v1__version_info__init(vi);
    vi->version = xstrdup(json_string_value(json_object_get(j, "version")));
    const struct {
        const char *key;
        char **field;
    } text[] = {
        {"build_date", &vi->build_date}, {"build_user", &vi->build_user},
        {"git_sha", &vi->git_sha},       {"git_branch", &vi->git_branch},
        {"git_tag", &vi->git_tag},
    };
    for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
        const char *v = json_string_value(json_object_get(j, text[i].key));
        if (v != NULL)
            *text[i].field = xstrdup(v);
    }
    json_t *t = json_object_get(j, "build_time");
    if (json_is_number(t)) {
        vi->has_build_time = true;
        vi->build_time = json_number_value(t);
    }
    json_decref(j);
    return vi;
}

/* ---- Responses --------------------------------------------------------------
 */

Mesos__V1__Master__Response *
master_opst_response(struct master *m, Mesos__V1__Master__Call__Type type)
{
    Mesos__V1__Master__Response *r = xmalloc(sizeof(*r));
    mesos__v1__master__response__init(r);
    r->has_type = true;
    switch (type) {
    case MESOS__V1__MASTER__CALL__TYPE__GET_STATE:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_STATE;
        r->get_state = master_opst_get_state(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_AGENTS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_AGENTS;
        r->get_agents = get_agents(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_FRAMEWORKS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_FRAMEWORKS;
        r->get_frameworks = get_frameworks(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_TASKS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_TASKS;
        r->get_tasks = get_tasks(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_EXECUTORS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_EXECUTORS;
        r->get_executors = get_executors(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_OPERATIONS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_OPERATIONS;
        r->get_operations = get_operations(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_ROLES:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_ROLES;
        r->get_roles = get_roles(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_FLAGS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_FLAGS;
        r->get_flags = get_flags(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_METRICS:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_METRICS;
        r->get_metrics = get_metrics(m);
        break;
    case MESOS__V1__MASTER__CALL__TYPE__GET_MASTER:
        r->type = MESOS__V1__MASTER__RESPONSE__TYPE__GET_MASTER;
        r->get_master = get_master(m);
        break;
    default:
        free(r);
        return NULL;
    }
    return r;
}
