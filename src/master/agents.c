/*
 * Agents: the agent API (POST /api/v1/agent, docs/agent-protocol.md):
 * registration and re-registration (durable before REGISTERED), the calls
 * an agent makes on its subscription (status updates, pongs), liveness by
 * pings, disconnection, and removal of agents that stop answering.
 */
#include "master/agents.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "master/calls.h"
#include "master/changes.h"
#include "master/domains.h"
#include "master/executors.h"
#include "master/frameworks.h"
#include "master/live_counters.h"
#include "master/maintenance.h"
#include "master/master.h"
#include "master/metrics_counters.h"
#include "master/offers.h"
#include "master/operations.h"
#include "master/operator_events.h"
#include "master/persist.h"
#include "master/registry.h"
#include "master/registry_gc.h"
#include "master/reservations.h"
#include "master/send.h"
#include "master/slack.h"
#include "master/tasks.h"
#include "offerd/registry.pb-c.h"

struct agent *master_agent_find(struct master *m, const char *id)
{
    return hmap_get(m->agents, id);
}

void master_agent_free(struct agent *ag)
{
    if (ag == NULL)
        return;
    if (ag->stream != NULL)
        http_stream_close(ag->stream);
    hmap_free(ag->tasks, NULL);     /* tasks belong to their frameworks */
    hmap_free(ag->executors, NULL); /* so do executors */
    hmap_free(ag->offers, NULL);
    master_live_agent_clear(ag);
    if (ag->info != NULL)
        protobuf_c_message_free_unpacked(&ag->info->base, NULL);
    free(ag->principal);
    res_list_clear(&ag->total);
    res_list_clear(&ag->static_res);
    res_list_clear(&ag->ckpt);
    res_list_clear(&ag->estimate);
    res_list_clear(&ag->slack);
    if (ag->drain != NULL)
        protobuf_c_message_free_unpacked(&ag->drain->base, NULL);
    for (uint32_t i = 0; i < ag->nio_answers; i++)
        free(ag->io_answers[i].framework_id);
    free(ag->io_answers);
    free(ag->ip);
    free(ag->version);
    free(ag->id);
    free(ag);
}

/* ---- The stream ------------------------------------------------------------
 */

static const struct master_api agent_api;

static const Offerd__Agent__Call *agent_call(const struct master_call_ctx *c)
{
    return (const Offerd__Agent__Call *)c->call;
}

static void agent_disconnected(struct master *m, struct agent *ag)
{
    master_mc_agent_set_connected(m, ag, false);
    if (ag->alloc != NULL)
        alloc_agent_set_active(m->alloc, ag->alloc, false);
    master_offers_on_agent(m, ag, true);
}

static void on_stream_close(struct http_stream *s, enum http_close_reason why,
                            void *arg)
{
    struct agent *ag = arg;
    log_info("agent %s disconnected (%s)", ag->id, master_close_reason(why));
    http_stream_close(s);
    ag->stream = NULL;
    agent_disconnected(ag->m, ag);
}

/* ---- Removal ---------------------------------------------------------------
 */

static void removal_recorded(struct master *m, bool ok, const char *err,
                             void *arg)
{
    (void)m;
    char *id = arg;
    if (!ok)
        log_warn("removal of agent %s not recorded: %s", id, err);
    free(id);
}

struct task **master_agent_tasks(const struct agent *ag, size_t *n)
{
    size_t cap = hmap_count(ag->tasks), pos = 0, k = 0;
    struct task **v = xcalloc(cap ? cap : 1, sizeof(*v));
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val))
        v[k++] = val;
    *n = k;
    return v;
}

void master_agent_usage(const struct agent *ag, res_list *used,
                        res_list *offered)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (!task_state_is_terminal(t->state))
            res_list_add_all(used, &t->resources);
    }
    master_executors_usage(ag->executors, used);
    pos = 0;
    while (hmap_next(ag->offers, &pos, NULL, &val))
        res_list_add_all(offered, &((const struct offer *)val)->resources);
}

/* SHUTDOWN to ag, with message (may be NULL) for its log. */
static void send_shutdown(struct agent *ag, const char *message)
{
    Offerd__Agent__Event__Shutdown sd = OFFERD__AGENT__EVENT__SHUTDOWN__INIT;
    sd.message = (char *)message;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN;
    if (message != NULL)
        ev.shutdown = &sd;
    master_send_to_agent(ag, &ev);
}

void master_agent_shutdown(struct master *m, struct agent *ag,
                           const char *message)
{
    (void)m;
    send_shutdown(ag, message);
}

/* The state tasks of a removed agent are reported in to their framework. */
static Mesos__V1__TaskState removed_state(const struct framework *fw,
                                          enum agent_removal how)
{
    switch (how) {
    case AGENT_REMOVED_UNREACHABLE:
        return master_lost_state(fw);
    case AGENT_REMOVED_BY_OPERATOR:
        return fw->partition_aware
                   ? MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR
                   : MESOS__V1__TASK_STATE__TASK_LOST;
    case AGENT_REMOVED_SHUTDOWN:
        break;
    }
    return MESOS__V1__TASK_STATE__TASK_LOST;
}

/* The reason that goes with it: as Mesos's __removeSlave, only tasks
 * reported TASK_GONE_BY_OPERATOR carry REASON_AGENT_REMOVED_BY_OPERATOR
 * (a framework that is not partition-aware hears TASK_LOST with
 * REASON_AGENT_REMOVED). */
static Mesos__V1__TaskStatus__Reason removed_reason(Mesos__V1__TaskState st)
{
    return st == MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR
               ? MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED_BY_OPERATOR
               : MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED;
}

void master_agent_remove(struct master *m, struct agent *ag,
                         enum agent_removal how, const char *why)
{
    bool unreachable = how == AGENT_REMOVED_UNREACHABLE;
    log_warn("removing agent %s (%s): %s", ag->id, ag->info->hostname, why);
    master_offers_on_agent(m, ag, true);
    master_inverse_offers_on_agent(m, ag, true);

    /* Its tasks are lost to their frameworks: UNREACHABLE for those that
     * handle partitions, LOST for the others. */
    size_t k;
    struct task **tasks = master_agent_tasks(ag, &k);
    for (size_t i = 0; i < k; i++) {
        struct task *t = tasks[i];
        if (!task_state_is_terminal(t->state)) {
            Mesos__V1__TaskState st = removed_state(t->fw, how);
            if (st == MESOS__V1__TASK_STATE__TASK_UNREACHABLE &&
                hmap_count(t->fw->unreachable_tasks) < MASTER_MAX_UNREACHABLE)
                free(hmap_put(t->fw->unreachable_tasks, t->info->task_id->value,
                              xstrdup(ag->id)));
            t->recovered = true; /* the allocator forgets the agent */
            master_task_transition(
                m, t, st, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER,
                removed_reason(st), why);
        }
        t->recovered = true;
        master_task_remove(m, t);
    }
    free(tasks);
    master_executors_forget_agent(m, ag);
    master_send_agent_failure(m, ag->id);
    /* Its operations go too: nobody could acknowledge their updates. */
    master_ops_forget_agent(
        m, ag->id,
        unreachable ? MESOS__V1__OPERATION_STATE__OPERATION_UNREACHABLE
                    : MESOS__V1__OPERATION_STATE__OPERATION_GONE_BY_OPERATOR);

    if (ag->stream != NULL) {
        http_stream_close(ag->stream);
        ag->stream = NULL;
    }
    if (ag->alloc != NULL)
        alloc_agent_remove(m->alloc, ag->alloc);
    ag->alloc = NULL;
    hmap_del(m->agents, ag->id);
    master_mc_agent_unindexed(m, ag);
    m->metrics.slave_removals++;
    m->metrics.slave_removals_by_how[how]++;
    if (unreachable) {
        master_agent_mark_put(m->unreachable_agents, ag->id, clock_wall_secs());
        master_persist_agent_unreachable(m, ag->id, removal_recorded,
                                         xstrdup(ag->id));
    }
    master_opev_agent_removed(m, ag->id);
    master_agent_free(ag);
    master_allocate_soon(m);
}

/* ---- Agents that do not come back after a restart ---------------------------
 */

void master_agents_reregister_timeout(struct master *m)
{
    size_t n = hmap_count(m->recovered_agents), pos = 0, k = 0;
    if (n == 0)
        return;
    const char **ids = xcalloc(n, sizeof(*ids));
    const char *key;
    while (hmap_next(m->recovered_agents, &pos, &key, NULL))
        ids[k++] = key;
    for (size_t i = 0; i < k; i++) {
        char *id = xstrdup(ids[i]);
        log_warn("agent %s did not re-register within "
                 "--agent_reregister_timeout: marking it unreachable",
                 id);
        master_persist_free_recovered(hmap_del(m->recovered_agents, id));
        master_agent_mark_put(m->unreachable_agents, id, clock_wall_secs());
        m->metrics.recovery_slave_removals++;
        master_persist_agent_unreachable(m, id, removal_recorded, id);
    }
    free(ids);
}

/* ---- Pings -----------------------------------------------------------------
 */

void master_agent_ping(struct master *m, struct agent *ag)
{
    if (ag->subscribing)
        return;
    if (ag->pong_pending)
        ag->missed_pings++;
    else
        ag->missed_pings = 0;
    if (ag->missed_pings >= (uint32_t)m->flags->max_agent_ping_timeouts) {
        char why[128];
        snprintf(why, sizeof(why), "agent did not answer %u pings in a row",
                 ag->missed_pings);
        master_ops_agent_feedback(
            m, ag->id, MESOS__V1__OPERATION_STATE__OPERATION_UNREACHABLE,
            "Agent was marked unreachable");
        master_agent_remove(m, ag, AGENT_REMOVED_UNREACHABLE, why);
        return;
    }
    ag->ping_seq++;
    ag->pong_pending = true;
    Offerd__Agent__Event__Ping p = OFFERD__AGENT__EVENT__PING__INIT;
    p.sequence = ag->ping_seq;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__PING;
    ev.ping = &p;
    master_send_to_agent(ag, &ev);
}

void master_agents_ping(struct master *m)
{
    size_t n = hmap_count(m->agents), pos = 0, k = 0;
    if (n == 0)
        return;
    struct agent **v = xcalloc(n, sizeof(*v));
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val))
        v[k++] = val;
    for (size_t i = 0; i < k; i++)
        master_agent_ping(m, v[i]);
    free(v);
}

/* ---- SUBSCRIBE
 * ---------------------------------------------------------------- */

struct agent_subscribe {
    struct master *m;
    struct http_request *req;
    enum http_encoding enc;
    char *id;
    bool is_new; /* no record in memory: a new or recovered agent */
    Offerd__Agent__Call__Subscribe *sub; /* owned copy */
    char *ip;
    char *principal; /* the authenticated principal, or NULL */
    res_list total;  /* its static resources */
    res_list ckpt;   /* the checkpointed resources it will have */
    uint64_t ckpt_version;
    bool resend_ckpt; /* the master's list is newer: send it */
    /* The agent's list version in memory when the registration was
     * submitted (an agent already known), to tell whether an operation
     * changed the list while the registration was being recorded. */
    uint64_t ckpt_seen;
};

static void agent_subscribe_free(struct agent_subscribe *s)
{
    if (s->sub != NULL)
        protobuf_c_message_free_unpacked(&s->sub->base, NULL);
    res_list_clear(&s->total);
    res_list_clear(&s->ckpt);
    free(s->ip);
    free(s->principal);
    free(s->id);
    free(s);
}

/* REGISTERED, with the tasks the agent must tell the master about (case 1
 * of docs/reconciliation.md: tasks the master holds that it did not
 * report). */
static void send_registered(struct master *m, struct agent *ag,
                            Offerd__Agent__Event__Reconcile__Task **rec,
                            size_t nrec)
{
    Mesos__V1__MasterInfo mi;
    Mesos__V1__Address addr;
    master_fill_info(m, &mi, &addr);
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = ag->id;
    Offerd__Agent__Event__Registered r = OFFERD__AGENT__EVENT__REGISTERED__INIT;
    r.agent_id = &aid;
    r.master_info = &mi;
    double ping = (double)m->flags->agent_ping_timeout / CLOCK_NS_PER_SEC;
    r.has_ping_interval_seconds = true;
    r.ping_interval_seconds = ping;
    r.has_ping_timeout_seconds = true;
    r.ping_timeout_seconds = ping * m->flags->max_agent_ping_timeouts;
    r.n_reconcile_tasks = nrec;
    r.reconcile_tasks = rec;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__REGISTERED;
    ev.registered = &r;
    master_send_to_agent(ag, &ev);
}

/* True when the re-registering agent's report holds fw's task. */
static bool reported(const Offerd__Agent__Call__Subscribe *sub,
                     const char *fw_id, const char *task_id)
{
    for (size_t i = 0; i < sub->n_tasks; i++)
        if (strcmp(sub->tasks[i]->task_id->value, task_id) == 0 &&
            strcmp(sub->tasks[i]->framework_id->value, fw_id) == 0)
            return true;
    return false;
}

/* Case 1: the master's live tasks on ag that the agent did not report are
 * not assumed lost: the agent is asked about them. Returns the list (n in
 * *n; free with free_reconcile). */
static Offerd__Agent__Event__Reconcile__Task **
unreported_tasks(struct master *m, struct agent *ag,
                 const Offerd__Agent__Call__Subscribe *sub, size_t *n)
{
    size_t cap = hmap_count(ag->tasks), k = 0, pos = 0;
    Offerd__Agent__Event__Reconcile__Task **v =
        xcalloc(cap ? cap : 1, sizeof(*v));
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        struct task *t = val;
        if (task_state_is_terminal(t->state) ||
            reported(sub, t->fw->id, t->info->task_id->value))
            continue;
        Offerd__Agent__Event__Reconcile__Task *rt = xmalloc(sizeof(*rt));
        offerd__agent__event__reconcile__task__init(rt);
        rt->framework_id = xmalloc(sizeof(*rt->framework_id));
        mesos__v1__framework_id__init(rt->framework_id);
        rt->framework_id->value = xstrdup(t->fw->id);
        rt->task_id =
            jpb_copy(&mesos__v1__task_id__descriptor, &t->info->task_id->base);
        v[k++] = rt;
        m->metrics.agent_reconciliations++;
        log_info("agent %s did not report task %s of framework %s: asking it",
                 ag->id, t->info->task_id->value, t->fw->id);
    }
    *n = k;
    return v;
}

static void free_reconcile(Offerd__Agent__Event__Reconcile__Task **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        protobuf_c_message_free_unpacked(&v[i]->base, NULL);
    free(v);
}

/* The role string of a list of resources' allocation role, or NULL when
 * they carry none or several. */
static const char *single_role(const res_list *l)
{
    const char *role = NULL;
    for (uint32_t i = 0; i < l->n; i++) {
        const char *r = l->v[i].alloc_role;
        if (r == NULL)
            return NULL;
        if (role == NULL)
            role = r;
        else if (strcmp(role, r) != 0)
            return NULL;
    }
    return role;
}

/* The agent reports tasks of framework fid, which was removed: tell it to
 * shut the framework down there. */
static void shutdown_removed_framework(struct agent *ag, const char *fid)
{
    Mesos__V1__FrameworkID f = MESOS__V1__FRAMEWORK_ID__INIT;
    f.value = (char *)fid;
    Offerd__Agent__Event__ShutdownFramework sf =
        OFFERD__AGENT__EVENT__SHUTDOWN_FRAMEWORK__INIT;
    sf.framework_id = &f;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_FRAMEWORK;
    ev.shutdown_framework = &sf;
    master_send_to_agent(ag, &ev);
    log_info("agent %s reports tasks of removed framework %s: shutting it "
             "down there",
             ag->id, fid);
}

/* The agent of task t reports it as rt: the agent's word on its state
 * wins. */
static void update_known_task(struct master *m, struct task *t,
                              const Mesos__V1__Task *rt)
{
    bool terminal = task_state_is_terminal(rt->state);
    if (t->state != rt->state) {
        log_info("task %s of framework %s: %s on agent %s, the master had "
                 "it %s",
                 rt->task_id->value, t->fw->id, task_state_name(rt->state),
                 t->agent->id, task_state_name(t->state));
        if (terminal && !task_state_is_terminal(t->state))
            master_task_count(m, rt->state);
        master_live_task_state(m, t, rt->state);
        if (terminal)
            master_task_recover(m, t);
    }
    if (rt->has_status_update_state) {
        t->status_update_state = rt->status_update_state;
        t->has_status_update_state = true;
    }
}

/* The framework fid of something a (re-)registering agent reports: the
 * master's, else a placeholder from the frameworks of the report; NULL
 * when unknown, or removed (then the agent is told, once: shut records
 * the frameworks told). */
static struct framework *
reported_framework(struct master *m, struct agent *ag,
                   const Offerd__Agent__Call__Subscribe *sub, const char *fid,
                   struct hmap *shut)
{
    struct framework *fw = master_framework_find(m, fid);
    if (fw == NULL && hmap_get(m->completed, fid) != NULL) {
        if (hmap_get(shut, fid) == NULL) {
            hmap_put(shut, fid, (void *)1);
            shutdown_removed_framework(ag, fid);
        }
        return NULL;
    }
    /* Unknown, or subscribing for the first time here (a failover: the
     * framework may reach the new master first, its registry write still
     * in flight): the report's info makes it a placeholder. */
    for (size_t j = 0;
         (fw == NULL || fw->alloc == NULL) && j < sub->n_frameworks; j++) {
        const Mesos__V1__FrameworkInfo *fi = sub->frameworks[j];
        if (fi->id == NULL || strcmp(fi->id->value, fid) != 0)
            continue;
        if (fw == NULL)
            fw = master_framework_placeholder(m, fi);
        else
            master_framework_adopt_pending(m, fw, fi);
    }
    if (fw != NULL && fw->alloc == NULL)
        return NULL; /* no info in the report: nothing to account with */
    return fw;
}

/* Take in the tasks a (re-)registering agent reports, the agent's state
 * being the truth (docs/reconciliation.md):
 *  - case 2, a task the master holds in another state: it takes the
 *    agent's latest state (the agent's unacknowledged updates follow and
 *    reach the framework in order);
 *  - case 3, a task the master does not hold (after a master restart, or
 *    from an agent back from unreachable): adopted, terminal ones too, so
 *    that their updates reach the framework and its acknowledgements reach
 *    the agent; the frameworks of unknown tasks come from the report;
 *  - a task of a framework that was removed: the agent is told to shut the
 *    framework down.
 * Returns in *used_out the resources live adopted tasks use, per
 * framework, for the allocator (when the agent is new to it). With
 * back_from_unreachable, the adopted live tasks of partition-aware
 * frameworks are reported to them again (REASON_AGENT_REREGISTERED), those
 * of the others killed, as Mesos does. */
static void adopt_tasks(struct master *m, struct agent *ag,
                        const Offerd__Agent__Call__Subscribe *sub,
                        bool back_from_unreachable,
                        struct alloc_used **used_out, uint32_t *nused_out,
                        res_list **lists_out)
{
    *used_out = NULL;
    *nused_out = 0;
    *lists_out = NULL;
    size_t cap = sub->n_tasks + sub->n_executors;
    if (cap == 0)
        return;
    struct alloc_used *used = xcalloc(cap, sizeof(*used));
    res_list *lists = xcalloc(cap, sizeof(*lists));
    uint32_t nused = 0;
    struct hmap *shut = hmap_new(); /* frameworks told to shut down */
    for (size_t i = 0; i < sub->n_tasks; i++) {
        const Mesos__V1__Task *rt = sub->tasks[i];
        struct framework *fw =
            reported_framework(m, ag, sub, rt->framework_id->value, shut);
        if (fw == NULL)
            continue;
        bool terminal = task_state_is_terminal(rt->state);
        struct task *known = hmap_get(fw->tasks, rt->task_id->value);
        if (known != NULL) {
            if (known->agent == ag)
                update_known_task(m, known, rt);
            continue;
        }
        res_list res = RES_LIST_INIT;
        char err[256];
        if (res_list_from_pb(rt->resources, rt->n_resources, &res, err,
                             sizeof(err)) != 0) {
            log_warn("agent %s reports task %s with bad resources: %s", ag->id,
                     rt->task_id->value, err);
            continue;
        }
        const char *role = single_role(&res);
        if (role == NULL) {
            role = fw->nroles > 0 ? fw->roles[0] : "*";
            res_list_allocate(&res, role);
        }
        struct task *t = master_task_adopt(m, fw, ag, rt, &res, role);
        res_list_clear(&res);
        log_info("adopted task %s (%s) of framework %s from agent %s",
                 rt->task_id->value, task_state_name(rt->state), fw->id,
                 ag->id);
        if (terminal)
            continue;
        /* One used entry per framework. */
        uint32_t u = 0;
        while (u < nused && used[u].fw != fw->alloc)
            u++;
        if (u == nused) {
            used[u].fw = fw->alloc;
            used[u].resources = &lists[u];
            nused++;
        }
        res_list_add_all(&lists[u], &t->resources);
        if (back_from_unreachable)
            t->kill_requested = !fw->partition_aware; /* see below */
    }
    /* Its executors (after a master failover: the master rebuilds them). */
    for (size_t i = 0; i < sub->n_executors; i++) {
        const Mesos__V1__ExecutorInfo *ei = sub->executors[i];
        if (ei->framework_id == NULL)
            continue;
        struct framework *fw =
            reported_framework(m, ag, sub, ei->framework_id->value, shut);
        struct executor *e =
            fw != NULL ? master_executor_adopt(m, fw, ag, ei) : NULL;
        if (e == NULL)
            continue;
        uint32_t u = 0;
        while (u < nused && used[u].fw != fw->alloc)
            u++;
        if (u == nused) {
            used[u].fw = fw->alloc;
            used[u].resources = &lists[u];
            nused++;
        }
        res_list_add_all(&lists[u], &e->resources);
    }
    hmap_free(shut, NULL);
    *used_out = used;
    *nused_out = nused;
    *lists_out = lists;
}

/* After an agent came back from unreachable: partition-aware frameworks
 * hear their tasks' real state again; the other frameworks were told
 * TASK_LOST, so their tasks are killed. */
static void after_unreachable(struct master *m, struct agent *ag)
{
    size_t k;
    struct task **v = master_agent_tasks(ag, &k);
    for (size_t i = 0; i < k; i++) {
        struct task *t = v[i];
        if (task_state_is_terminal(t->state))
            continue;
        if (t->kill_requested) {
            t->kill_requested = false;
            log_info("agent %s is back: killing task %s of framework %s, "
                     "which was reported lost",
                     ag->id, t->info->task_id->value, t->fw->id);
            master_task_kill(m, t->fw, t->info->task_id->value, ag->id, NULL);
        } else {
            master_send_master_update(
                m, t->fw, t->info->task_id->value, ag->id, t->state,
                MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REREGISTERED,
                "The agent is reachable again");
        }
    }
    free(v);
}

/* Tasks of partition-aware frameworks last seen on agent_id before it was
 * marked unreachable: no longer unreachable. The agent came back without
 * them (gone false: explicit reconciliation answers TASK_GONE, the agent
 * is registered and does not run them), or it was marked gone (gone true:
 * each is reported TASK_GONE_BY_OPERATOR, as Mesos's markGone). */
void master_agent_forget_unreachable_tasks(struct master *m,
                                           const char *agent_id, bool gone)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val)) {
        struct framework *fw = val;
        size_t n = hmap_count(fw->unreachable_tasks), p2 = 0, k = 0;
        if (n == 0)
            continue;
        char **ids = xcalloc(n, sizeof(*ids));
        const char *key;
        void *v;
        while (hmap_next(fw->unreachable_tasks, &p2, &key, &v))
            if (strcmp((const char *)v, agent_id) == 0)
                ids[k++] = xstrdup(key);
        for (size_t i = 0; i < k; i++) {
            log_info("task %s of framework %s is gone with agent %s", ids[i],
                     fw->id, agent_id);
            free(hmap_del(fw->unreachable_tasks, ids[i]));
            if (gone)
                master_send_master_update(
                    m, fw, ids[i], agent_id,
                    MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR,
                    MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED_BY_OPERATOR,
                    "Agent has been marked gone");
            free(ids[i]);
        }
        free(ids);
    }
}

/* A new agent with id, indexed in m->agents; its operator state comes
 * from its registry record when the master recovered one (a master
 * restart). agents.c owns struct agent: master_agent_free frees it. */
static struct agent *agent_new(struct master *m, const char *id)
{
    struct agent *ag = xcalloc(1, sizeof(*ag));
    ag->m = m;
    ag->id = xstrdup(id);
    ag->tasks = hmap_new_borrowing(); /* keyed by each task's t->key */
    ag->offers = hmap_new();
    ag->executors = hmap_new();
    ag->registered_time = clock_wall_secs();
    hmap_put(m->agents, ag->id, ag);
    Offerd__Registry__Agent *rec = hmap_get(m->recovered_agents, id);
    if (rec != NULL) {
        ag->deactivated = rec->deactivated;
        if (rec->drain_info != NULL)
            ag->drain = jpb_copy(&mesos__v1__drain_info__descriptor,
                                 &rec->drain_info->base);
        master_persist_free_recovered(hmap_del(m->recovered_agents, id));
        m->metrics.slave_reregistrations++;
        m->metrics.messages_reregister_slave++;
    } else {
        m->metrics.slave_registrations++;
        m->metrics.messages_register_slave++;
    }
    return ag;
}

/* Take what the agent registered with (its info, address, version, static
 * and checkpointed resources) from s. */
static void agent_set_registration(struct agent *ag, struct agent_subscribe *s)
{
    const Mesos__V1__AgentInfo *ai = s->sub->agent_info;
    if (ag->info != NULL)
        protobuf_c_message_free_unpacked(&ag->info->base, NULL);
    ag->info = jpb_copy(&mesos__v1__agent_info__descriptor, &ai->base);
    if (ag->info->id == NULL) {
        ag->info->id = xmalloc(sizeof(*ag->info->id));
        mesos__v1__agent_id__init(ag->info->id);
        ag->info->id->value = xstrdup(ag->id);
    }
    free(ag->ip);
    ag->ip = xstrdup(s->ip);
    free(ag->principal);
    ag->principal = s->principal != NULL ? xstrdup(s->principal) : NULL;
    ag->port = ai->has_port ? (uint16_t)ai->port : 5051;
    if (s->sub->address != NULL && s->sub->address->port > 0)
        ag->port = (uint16_t)s->sub->address->port;
    free(ag->version);
    ag->version = xstrdup(s->sub->version != NULL ? s->sub->version : "");
    res_list_clear(&ag->static_res);
    res_list_copy(&ag->static_res, &s->total);
    if (!s->is_new && ag->ckpt_version != s->ckpt_seen) {
        /* An operation changed the list while this registration was being
         * recorded (its write follows ours in the registry): the master's
         * list is the newer one; the agent gets it on its new stream. */
        s->resend_ckpt = true;
        return;
    }
    res_list_clear(&ag->ckpt);
    res_list_copy(&ag->ckpt, &s->ckpt);
    ag->ckpt_version = s->ckpt_version;
}

static void free_used(struct alloc_used *used, uint32_t nused, res_list *lists)
{
    for (uint32_t i = 0; i < nused; i++)
        res_list_clear(&lists[i]);
    free(lists);
    free(used);
}

/* Tell the allocator what offer constraints test on ag: hostname, fault
 * domain and attributes (TEXT ones with their value). */
static void allocator_agent_info(struct master *m, struct agent *ag)
{
    const Mesos__V1__AgentInfo *ai = ag->info;
    size_t n = ai->n_attributes;
    struct alloc_attribute *attrs = xcalloc(n ? n : 1, sizeof(*attrs));
    for (size_t i = 0; i < n; i++) {
        const Mesos__V1__Attribute *at = ai->attributes[i];
        attrs[i].name = at->name;
        attrs[i].text =
            at->type == MESOS__V1__VALUE__TYPE__TEXT && at->text != NULL
                ? at->text->value
                : NULL;
    }
    const Mesos__V1__DomainInfo__FaultDomain *fd =
        ai->domain != NULL ? ai->domain->fault_domain : NULL;
    alloc_agent_set_info(m->alloc, ag->alloc, ai->hostname,
                         fd != NULL && fd->region != NULL ? fd->region->name
                                                          : NULL,
                         fd != NULL && fd->zone != NULL ? fd->zone->name : NULL,
                         attrs, (uint32_t)n);
    free(attrs);
}

/* An agent the allocator does not know (new, recovered, or back from
 * unreachable): compute its total, adopt the tasks it reports and add it
 * with what they use. */
static void agent_join_allocator(struct master *m, struct agent *ag,
                                 const struct agent_subscribe *s,
                                 bool back_from_unreachable)
{
    char terr[256];
    res_list_clear(&ag->total);
    if (res_agent_total(&ag->static_res, &ag->ckpt, &ag->total, terr,
                        sizeof(terr)) != 0)
        /* Checked before the registry write; cannot happen. The total is
         * then the static resources. */
        log_error("agent %s: %s", ag->id, terr);
    struct alloc_used *used;
    uint32_t nused;
    res_list *lists;
    adopt_tasks(m, ag, s->sub, back_from_unreachable, &used, &nused, &lists);
    const struct machine *mach =
        master_machine_of(m, ag->info->hostname, ag->ip);
    /* handle_subscribe admitted its names: no -2 (refused) here. */
    if (alloc_agent_add(m->alloc, ag, &ag->total, ALLOC_AGENT_ALL_CAPS,
                        mach != NULL ? &mach->unav : NULL, used, nused,
                        &ag->alloc) != 0)
        log_warn("agent %s: some reported tasks do not fit its resources",
                 ag->id);
    free_used(used, nused, lists);
    allocator_agent_info(m, ag);
    if (ag->deactivated)
        alloc_agent_set_active(m->alloc, ag->alloc, false);
}

/* An agent that reconnected to this master, which knows its tasks: tasks
 * it does not know are taken in, but the allocator learns only live ones
 * from new agents. */
static void agent_rejoin_allocator(struct master *m, struct agent *ag,
                                   const struct agent_subscribe *s)
{
    struct alloc_used *used;
    uint32_t nused;
    res_list *lists;
    master_executors_reconcile(m, ag, s->sub->executors, s->sub->n_executors);
    adopt_tasks(m, ag, s->sub, false, &used, &nused, &lists);
    if (nused > 0)
        log_warn("agent %s reported live tasks this master never launched; "
                 "their resources are not accounted for",
                 ag->id);
    /* Its estimate comes again after REGISTERED if it still has an
     * estimator; until then it has none. */
    if (ag->estimate.n > 0) {
        res_list none = RES_LIST_INIT;
        master_agent_set_estimate(m, ag, &none);
    }
    free_used(used, nused, lists);
    alloc_agent_set_active(m->alloc, ag->alloc, !ag->deactivated);
}

/* Answer the SUBSCRIBE with the agent's new stream (replacing an old
 * connection) and send REGISTERED. */
static void agent_open_stream(struct master *m, struct agent *ag,
                              struct agent_subscribe *s)
{
    if (ag->stream != NULL) {
        http_stream_close(ag->stream);
        ag->stream = NULL;
    }
    ag->enc = s->enc;
    ag->stream =
        master_stream_open(s->req, s->enc, ag->stream_id, on_stream_close, ag);
    s->req = NULL;
    master_mc_agent_set_connected(m, ag, true);
    ag->pong_pending = false;
    ag->missed_pings = 0;
    size_t nrec;
    Offerd__Agent__Event__Reconcile__Task **rec =
        unreported_tasks(m, ag, s->sub, &nrec);
    send_registered(m, ag, rec, nrec);
    free_reconcile(rec, nrec);
}

/* Send the kills asked for while the agent was away. */
static void agent_resend_kills(struct master *m, struct agent *ag)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        struct task *t = val;
        if (t->kill_requested && !task_state_is_terminal(t->state)) {
            t->kill_requested = false;
            master_task_kill(m, t->fw, t->info->task_id->value, ag->id, NULL);
        }
    }
}

/* The registry recorded the registration (or failed to): admit the agent. */
static void agent_subscribe_done(struct master *m, bool ok, const char *err,
                                 void *arg)
{
    struct agent_subscribe *s = arg;
    struct agent *ag = master_agent_find(m, s->id);
    if (!ok) {
        log_warn("agent %s: registration not recorded: %s", s->id, err);
        http_reply_error(s->req, 503, "registry write failed: %s", err);
        if (ag != NULL)
            ag->subscribing = false;
        agent_subscribe_free(s);
        return;
    }
    if (hmap_get(m->gone_agents, s->id) != NULL) {
        /* Marked gone while its registration was being recorded (the gone
         * record was written after it, so the registry holds it gone). */
        http_reply_error(s->req, 403, "agent %s was marked gone", s->id);
        if (ag != NULL)
            ag->subscribing = false;
        agent_subscribe_free(s);
        return;
    }
    bool back_from_unreachable =
        master_agent_mark_del(m->unreachable_agents, s->id);
    if (ag == NULL) {
        ag = agent_new(m, s->id);
        s->is_new = true; /* even if it was removed while recording */
    } else {
        ag->reregistered_time = clock_wall_secs();
        m->metrics.slave_reregistrations++;
        m->metrics.messages_reregister_slave++;
    }
    ag->subscribing = false;
    agent_set_registration(ag, s);
    if (ag->alloc == NULL)
        agent_join_allocator(m, ag, s, back_from_unreachable);
    else
        agent_rejoin_allocator(m, ag, s);
    agent_open_stream(m, ag, s);
    if (s->resend_ckpt)
        master_agent_send_ckpt(m, ag);
    log_info("agent %s (%s at %s:%u) %s%s", ag->id, ag->info->hostname, ag->ip,
             (unsigned)ag->port, s->is_new ? "registered" : "re-registered",
             back_from_unreachable ? " (back from unreachable)" : "");
    if (back_from_unreachable) {
        after_unreachable(m, ag);
        master_agent_forget_unreachable_tasks(m, ag->id, false);
    }
    agent_resend_kills(m, ag);
    if (s->is_new)
        master_opev_agent_added(m, ag);
    agent_subscribe_free(s);
    master_agent_drain_check_soon(m, ag);
    master_allocate_soon(m);
}

/* The peer's IP from "ip:port" ("[v6]:port" keeps the brackets off). */
static char *peer_ip(const char *peer)
{
    const char *colon = strrchr(peer, ':');
    size_t len = colon != NULL ? (size_t)(colon - peer) : strlen(peer);
    if (len >= 2 && peer[0] == '[' && peer[len - 1] == ']')
        return xstrndup(peer + 1, len - 2);
    return xstrndup(peer, len);
}

/* Settle the agent's checkpointed resources (the newer of the master's and
 * the agent's lists), then record the admission; agent_subscribe_done
 * follows. */
static void persist_subscription(struct master *m, struct agent_subscribe *s,
                                 const Mesos__V1__AgentInfo *rec,
                                 struct agent *ag,
                                 const Offerd__Registry__Agent *recovered,
                                 bool deactivated,
                                 const Mesos__V1__DrainInfo *drain)
{
    const Offerd__Agent__Call__Subscribe *sub = s->sub;
    char err[512];
    res_list reported = RES_LIST_INIT;
    if (res_list_from_pb(sub->checkpointed_resources,
                         sub->n_checkpointed_resources, &reported, err,
                         sizeof(err)) != 0) {
        http_reply_error(s->req, 400, "subscribe.checkpointed_resources: %s",
                         err);
        goto refuse;
    }
    uint64_t v_agent = sub->checkpointed_resources_version;
    uint64_t v_master = 0;
    res_list mine = RES_LIST_INIT;
    if (ag != NULL) {
        v_master = ag->ckpt_version;
        s->ckpt_seen = ag->ckpt_version;
        res_list_copy(&mine, &ag->ckpt);
    } else if (recovered != NULL) {
        v_master = recovered->checkpointed_resources_version;
        if (res_list_from_pb(recovered->checkpointed_resources,
                             recovered->n_checkpointed_resources, &mine, err,
                             sizeof(err)) != 0)
            log_error("agent %s: the registry's checkpointed resources are "
                      "unreadable: %s",
                      s->id, err);
    }
    if (v_master > v_agent) {
        /* The agent missed the latest CHECKPOINT_RESOURCES. */
        s->ckpt = mine;
        s->ckpt_version = v_master;
        s->resend_ckpt = true;
        res_list_clear(&reported);
    } else {
        s->ckpt = reported;
        s->ckpt_version = v_agent;
        res_list_clear(&mine);
    }
    res_list_allocate(&s->ckpt, NULL);
    res_list probe = RES_LIST_INIT;
    int fits = res_agent_total(&s->total, &s->ckpt, &probe, err, sizeof(err));
    res_list_clear(&probe);
    if (fits != 0) {
        http_reply_error(s->req, 400,
                         "subscribe: %s (the agent's resources changed?)", err);
        goto refuse;
    }
    master_persist_agent_info(m, rec, deactivated, drain, &s->ckpt,
                              s->ckpt_version, agent_subscribe_done, s);
    return;
refuse:
    if (ag != NULL)
        ag->subscribing = false;
    agent_subscribe_free(s);
}

/* The AgentInfo of a SUBSCRIBE as an agent may send it: a hostname, a port
 * in range, resources that parse and are neither revocable, dynamically
 * reserved nor volumes. Returns 0 with its resources in *total (OUT), or
 * -1 after replying 400. */
static int check_agent_info(struct http_request *req,
                            const Mesos__V1__AgentInfo *ai, res_list *total)
{
    if (ai->hostname[0] == '\0') {
        http_reply_error(req, 400, "subscribe.agent_info.hostname: empty");
        return -1;
    }
    if (ai->has_port && (ai->port <= 0 || ai->port > 65535)) {
        http_reply_error(req, 400, "subscribe.agent_info.port: out of range");
        return -1;
    }
    char err[256];
    if (res_list_from_pb(ai->resources, ai->n_resources, total, err,
                         sizeof(err)) != 0) {
        http_reply_error(req, 400, "subscribe.agent_info.resources: %s", err);
        return -1;
    }
    for (uint32_t i = 0; i < total->n; i++) {
        if (total->v[i].revocable ||
            res_is_dynamically_reserved(&total->v[i]) ||
            res_is_persistent_volume(&total->v[i])) {
            res_list_clear(total);
            http_reply_error(req, 400,
                             "subscribe.agent_info.resources: only "
                             "unreserved or statically reserved resources "
                             "may be registered");
            return -1;
        }
    }
    return 0;
}

static void handle_subscribe(struct master_call_ctx *c)
{
    struct master *m = c->m;
    struct http_request *req = c->req;
    enum http_encoding enc = c->reply_enc;
    if (http_request_header(req, "Mesos-Stream-Id") != NULL) {
        http_reply_error(req, 400,
                         "SUBSCRIBE must not carry a Mesos-Stream-Id header");
        return;
    }
    const Offerd__Agent__Call__Subscribe *sub = agent_call(c)->subscribe;
    const Mesos__V1__AgentInfo *ai = sub->agent_info;
    res_list total = RES_LIST_INIT;
    if (check_agent_info(req, ai, &total) != 0 ||
        master_agent_domain_check(m, req, ai) != 0) {
        res_list_clear(&total);
        return;
    }
    const char *id = ai->id != NULL ? ai->id->value : NULL;
    if (id != NULL && (id[0] == '\0' || strlen(id) > 255)) {
        res_list_clear(&total);
        http_reply_error(req, 400, "agent_info.id: must be 1 to 255 bytes");
        return;
    }
    if (id != NULL && hmap_get(m->gone_agents, id) != NULL) {
        res_list_clear(&total);
        http_reply_error(req, 403, "agent %s was marked gone", id);
        return;
    }
    if (id != NULL && m->marking_gone != NULL &&
        strcmp(id, m->marking_gone) == 0) {
        res_list_clear(&total);
        http_reply_error(req, 503, "agent %s is being marked gone", id);
        return;
    }
    char *ip = sub->address != NULL && sub->address->ip != NULL &&
                       sub->address->ip[0] != '\0'
                   ? xstrdup(sub->address->ip)
                   : peer_ip(http_request_peer(req));
    const struct machine *mach = master_machine_of(m, ai->hostname, ip);
    if (mach != NULL && mach->mode == MESOS__V1__MACHINE_INFO__MODE__DOWN) {
        res_list_clear(&total);
        http_reply_error(req, 403,
                         "machine %s/%s is down for maintenance: agents may "
                         "not register from it until /machine/up",
                         mach->hostname, mach->ip);
        free(ip);
        return;
    }
    struct agent *ag = id != NULL ? master_agent_find(m, id) : NULL;
    if (ag != NULL && ag->subscribing) {
        res_list_clear(&total);
        http_reply_error(req, 409, "a registration of agent %s is in progress",
                         id);
        free(ip);
        return;
    }
    if (ag == NULL && hmap_count(m->agents) >= MASTER_MAX_AGENTS) {
        res_list_clear(&total);
        http_reply_error(req, 503, "too many agents (%d)", MASTER_MAX_AGENTS);
        free(ip);
        return;
    }
    if (alloc_admit_names(m->alloc, &total) != 0) {
        res_list_clear(&total);
        http_reply_error(req, 400,
                         "subscribe.agent_info.resources: the cluster would "
                         "have more than %d distinct scalar resource names",
                         ALLOC_MAX_NAMES);
        free(ip);
        return;
    }
    char newid[ID_DERIVED_SIZE];
    if (id == NULL) {
        id_derive(ID_AGENT, m->id, m->next_agent++, newid, sizeof(newid));
        id = newid;
    }
    struct agent_subscribe *s = xcalloc(1, sizeof(*s));
    s->m = m;
    s->req = req;
    s->enc = enc;
    s->id = xstrdup(id);
    s->is_new = ag == NULL;
    s->sub = jpb_copy(&offerd__agent__call__subscribe__descriptor, &sub->base);
    s->ip = ip;
    s->principal = c->principal != NULL ? xstrdup(c->principal) : NULL;
    s->total = total;
    if (ag != NULL)
        ag->subscribing = true;
    /* The admitted agent as the registry records it. */
    Mesos__V1__AgentInfo *rec =
        jpb_copy(&mesos__v1__agent_info__descriptor, &ai->base);
    if (rec->id == NULL) {
        rec->id = xmalloc(sizeof(*rec->id));
        mesos__v1__agent_id__init(rec->id);
        rec->id->value = NULL;
    }
    free(rec->id->value);
    rec->id->value = xstrdup(id);
    /* The operator state it had, here or before a master restart. */
    bool deactivated = false;
    const Mesos__V1__DrainInfo *drain = NULL;
    const Offerd__Registry__Agent *r = NULL;
    if (ag != NULL) {
        deactivated = ag->deactivated;
        drain = ag->drain;
    } else {
        r = hmap_get(m->recovered_agents, id);
        if (r != NULL) {
            deactivated = r->deactivated;
            drain = r->drain_info;
        }
    }
    persist_subscription(m, s, rec, ag, r, deactivated, drain);
    protobuf_c_message_free_unpacked(&rec->base, NULL);
}

/* ---- MARK_AGENT_GONE
 * ---------------------------------------------------------- */

/* Mesos's message for a gone agent, in its SHUTDOWN and its tasks' updates. */
#define GONE_MESSAGE "Agent has been marked gone"

void master_agent_remove_gone(struct master *m, struct agent *ag)
{
    send_shutdown(ag, GONE_MESSAGE);
    master_ops_agent_feedback(
        m, ag->id, MESOS__V1__OPERATION_STATE__OPERATION_GONE_BY_OPERATOR,
        GONE_MESSAGE);
    master_agent_remove(m, ag, AGENT_REMOVED_BY_OPERATOR, GONE_MESSAGE);
}

/* One MARK_AGENT_GONE, run in its turn among the operator changes
 * (changes.c), so two calls for one agent never overlap. */
struct gone_change {
    struct master_change base; /* first */
    struct master *m;
    char *id;
};

static void gone_free(struct master_change *c)
{
    struct gone_change *g = (struct gone_change *)c;
    if (g->m->marking_gone == g->id)
        g->m->marking_gone = NULL;
    free(g->id);
    free(g);
}

/* The gone record is durable: forget the agent wherever it is (registered,
 * known from before a restart, unreachable) and answer 200. */
static void gone_applied(struct master *m, struct master_change *c)
{
    struct gone_change *g = (struct gone_change *)c;
    m->marking_gone = NULL;
    master_agent_mark_put(m->gone_agents, g->id, clock_wall_secs());
    struct agent *ag = master_agent_find(m, g->id);
    if (ag != NULL)
        master_agent_remove_gone(m, ag);
    /* A recovered agent's tasks are unknown until it re-registers, which
     * it no longer may (Mesos sends no updates for them either). */
    master_persist_free_recovered(hmap_del(m->recovered_agents, g->id));
    master_agent_mark_del(m->unreachable_agents, g->id);
    master_agent_forget_unreachable_tasks(m, g->id, true);
    log_info("agent %s marked gone", g->id);
    master_change_end(m, c, 200, NULL);
}

static void gone_run(struct master *m, struct master_change *c)
{
    struct gone_change *g = (struct gone_change *)c;
    if (hmap_get(m->gone_agents, g->id) != NULL) {
        log_warn("not marking agent %s gone: it already is", g->id);
        master_change_end(m, c, 200, NULL);
        return;
    }
    const struct agent *ag = master_agent_find(m, g->id);
    if ((ag == NULL || ag->info == NULL) &&
        hmap_get(m->recovered_agents, g->id) == NULL &&
        hmap_get(m->unreachable_agents, g->id) == NULL) {
        char why[320];
        snprintf(why, sizeof(why), "Agent '%s' not found", g->id);
        master_change_end(m, c, 404, why);
        return;
    }
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = g->id;
    Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
    t.nanoseconds = (int64_t)(clock_wall_secs() * 1e9);
    Offerd__Registry__GoneAgent ga = OFFERD__REGISTRY__GONE_AGENT__INIT;
    ga.id = &aid;
    ga.timestamp = &t;
    struct registry_batch *b = registry_batch_new();
    char err[256];
    if (registry_batch_delete(b, REGISTRY_KIND_AGENT, g->id, err,
                              sizeof(err)) != 0 ||
        registry_batch_delete(b, REGISTRY_KIND_UNREACHABLE, g->id, err,
                              sizeof(err)) != 0 ||
        registry_batch_put(b, REGISTRY_KIND_GONE, &ga.base, err, sizeof(err)) !=
            0) {
        registry_batch_free(b);
        master_change_end(m, c, 500, err);
        return;
    }
    /* Until the record is durable, the agent may not (re-)register: a
     * registration recorded after it would bring the agent back. */
    m->marking_gone = g->id;
    log_info("marking agent %s gone", g->id);
    master_change_write(m, c, b, gone_applied, "agent marked gone");
}

void master_agent_mark_gone(struct master *m, struct http_request *req,
                            const char *id)
{
    struct gone_change *g = xcalloc(1, sizeof(*g));
    g->base.req = req;
    g->base.run = gone_run;
    g->base.free = gone_free;
    g->m = m;
    g->id = xstrdup(id);
    master_change_submit(m, &g->base);
}

/* ---- Other calls
 * ---------------------------------------------------------------- */

static void handle_update(struct master_call_ctx *c)
{
    const Offerd__Agent__Call__Update *u = agent_call(c)->update;
    if (u->status->has_uuid && u->status->uuid.len != 16) {
        http_reply_error(c->req, 400, "update.status.uuid: must be 16 bytes");
        return;
    }
    master_task_status_update(c->m, c->ag, u);
    http_reply(c->req, 202, NULL, NULL, 0);
}

/* Several updates in one call (the agent's batch of a loop turn): every
 * one is checked before any is applied, so a malformed batch changes
 * nothing; then each is applied in order, as its own UPDATE would be. */
static void handle_updates(struct master_call_ctx *c)
{
    const Offerd__Agent__Call__Updates *b = agent_call(c)->updates;
    if (b->n_updates == 0) {
        http_reply_error(c->req, 400, "updates.updates: empty");
        return;
    }
    if (b->n_updates > MASTER_AGENT_MAX_UPDATES) {
        http_reply_error(c->req, 400, "updates.updates: more than %d",
                         MASTER_AGENT_MAX_UPDATES);
        return;
    }
    for (size_t i = 0; i < b->n_updates; i++) {
        const Mesos__V1__TaskStatus *st = b->updates[i]->status;
        if (st->has_uuid && st->uuid.len != 16) {
            http_reply_error(c->req, 400,
                             "updates.updates[%zu].status.uuid: must be 16 "
                             "bytes",
                             i);
            return;
        }
    }
    for (size_t i = 0; i < b->n_updates; i++)
        master_task_status_update(c->m, c->ag, b->updates[i]);
    http_reply(c->req, 202, NULL, NULL, 0);
}

static void handle_oversubscribed(struct master_call_ctx *c)
{
    struct http_request *req = c->req;
    const Offerd__Agent__Call__UpdateOversubscribed *u =
        agent_call(c)->update_oversubscribed;
    res_list rev = RES_LIST_INIT;
    char err[256];
    if (res_list_from_pb(u->oversubscribed_resources,
                         u->n_oversubscribed_resources, &rev, err,
                         sizeof(err)) != 0) {
        http_reply_error(req, 400,
                         "update_oversubscribed.oversubscribed_resources: %s",
                         err);
        return;
    }
    int rc = master_agent_set_estimate(c->m, c->ag, &rev);
    if (rc != 0) {
        res_list_clear(&rev);
        if (rc == -2)
            http_reply_error(req, 400,
                             "update_oversubscribed.oversubscribed_resources: "
                             "the cluster would have more than %d distinct "
                             "scalar resource names",
                             ALLOC_MAX_NAMES);
        else
            http_reply_error(req, 400,
                             "update_oversubscribed.oversubscribed_resources: "
                             "every resource must be revocable");
        return;
    }
    res_list_clear(&rev);
    http_reply(req, 202, NULL, NULL, 0);
}

/* Data from an executor for its framework: a MESSAGE event. */
static void handle_executor_message(struct master_call_ctx *c)
{
    const Offerd__Agent__Call__ExecutorMessage *em =
        agent_call(c)->executor_message;
    struct framework *fw = master_framework_find(c->m, em->framework_id->value);
    http_reply(c->req, 202, NULL, NULL, 0);
    c->m->metrics.messages_executor_to_framework++;
    if (fw == NULL || fw->stream == NULL) {
        c->m->metrics.invalid_executor_to_framework_messages++;
        log_info("agent %s: message from executor '%s' dropped: framework "
                 "%s is %s",
                 c->ag->id, em->executor_id->value, em->framework_id->value,
                 fw == NULL ? "unknown" : "disconnected");
        return;
    }
    c->m->metrics.valid_executor_to_framework_messages++;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = c->ag->id;
    Mesos__V1__Scheduler__Event__Message msg =
        MESOS__V1__SCHEDULER__EVENT__MESSAGE__INIT;
    msg.agent_id = &aid;
    msg.executor_id = em->executor_id;
    msg.data = em->data;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__MESSAGE;
    ev.message = &msg;
    master_send_to_framework(fw, &ev);
}

static void handle_executor_exited(struct master_call_ctx *c)
{
    http_reply(c->req, 202, NULL, NULL, 0);
    master_executor_exited(c->m, c->ag, agent_call(c)->executor_exited);
}

static void handle_pong(struct master_call_ctx *c)
{
    struct agent *ag = c->ag;
    if (agent_call(c)->pong->sequence == ag->ping_seq) {
        ag->pong_pending = false;
        ag->missed_pings = 0;
    }
    http_reply(c->req, 202, NULL, NULL, 0);
}

static void handle_unregister(struct master_call_ctx *c)
{
    c->m->metrics.messages_unregister_slave++;
    http_reply(c->req, 202, NULL, NULL, 0);
    master_agent_remove(c->m, c->ag, AGENT_REMOVED_SHUTDOWN,
                        "the agent unregistered");
}

static void handle_checkpointed_resources(struct master_call_ctx *c)
{
    const Offerd__Agent__Call__CheckpointedResources *cr =
        agent_call(c)->checkpointed_resources;
    if (cr->error != NULL)
        log_error("agent %s could not apply its checkpointed resources "
                  "(version %llu): %s",
                  c->ag->id, (unsigned long long)cr->version, cr->error);
    else
        log_info("agent %s applied its checkpointed resources (version %llu)",
                 c->ag->id, (unsigned long long)cr->version);
    http_reply(c->req, 202, NULL, NULL, 0);
}

/* Calls the master has no row for: logged. */
static void handle_report(struct master_call_ctx *c)
{
    log_info("agent %s: %s", c->ag->id,
             master_call_type_name(&agent_api, c->type));
    http_reply(c->req, 202, NULL, NULL, 0);
}

/* Every call but SUBSCRIBE names a subscribed agent and carries the
 * Mesos-Stream-Id of its current subscription. */
static int bind_agent(struct master_call_ctx *c)
{
    const Offerd__Agent__Call *call = agent_call(c);
    if (call->agent_id == NULL) {
        http_reply_error(c->req, 400, "agent_id: required");
        return -1;
    }
    const char *stream_id = http_request_header(c->req, "Mesos-Stream-Id");
    if (stream_id == NULL) {
        http_reply_error(c->req, 400, "the Mesos-Stream-Id header is required");
        return -1;
    }
    struct agent *ag = master_agent_find(c->m, call->agent_id->value);
    if (ag == NULL || ag->stream == NULL) {
        http_reply_error(c->req, 403, "agent %s is not subscribed",
                         call->agent_id->value);
        return -1;
    }
    if (strcmp(stream_id, ag->stream_id) != 0) {
        http_reply_error(c->req, 400,
                         "Mesos-Stream-Id %s is not the stream of agent %s",
                         stream_id, ag->id);
        return -1;
    }
    c->ag = ag;
    return 0;
}

/* A type without a row: bound to its agent like any call, then logged. */
static void other_call(struct master_call_ctx *c)
{
    if (bind_agent(c) == 0)
        handle_report(c);
}

#define ROW(type, payload, fn, flags)                                          \
    {                                                                          \
        OFFERD__AGENT__CALL__TYPE__##type, payload, fn, MASTER_CALL_NO_COUNT,  \
            flags, ACL_NONE                                                    \
    }

static const struct master_call agent_rows[] = {
    {OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, "subscribe", handle_subscribe,
     MASTER_CALL_NO_COUNT, MASTER_CALL_OPEN, ACL_REGISTER_AGENTS},
    ROW(UPDATE, "update", handle_update, 0),
    ROW(UPDATES, "updates", handle_updates, 0),
    ROW(PONG, "pong", handle_pong, 0),
    ROW(UPDATE_OVERSUBSCRIBED, "update_oversubscribed", handle_oversubscribed,
        0),
    ROW(UNREGISTER, NULL, handle_unregister, 0),
    ROW(EXECUTOR_MESSAGE, "executor_message", handle_executor_message, 0),
    ROW(EXECUTOR_EXITED, "executor_exited", handle_executor_exited, 0),
    ROW(CHECKPOINTED_RESOURCES, "checkpointed_resources",
        handle_checkpointed_resources, 0),
};

static const struct master_api agent_api = {
    .name = "agent",
    .realm = MASTER_REALM_AGENTS,
    .call_desc = &offerd__agent__call__descriptor,
    .rows = agent_rows,
    .nrows = sizeof(agent_rows) / sizeof(agent_rows[0]),
    .bind = bind_agent,
    .fallback = other_call,
};

void master_agent_api(struct http_request *req, void *arg)
{
    master_call_dispatch(&agent_api, arg, req);
}
