/*
 * Maintenance, as Mesos's maintenance primitives (docs/maintenance.md):
 * the operator posts a schedule of windows (machines and an
 * unavailability); scheduled machines are DRAINING: their agents' offers
 * carry the unavailability and every framework using them gets inverse
 * offers, whose answers the operator reads in /maintenance/status; the
 * operator brings machines DOWN (their agents are shut down and removed,
 * none may register from them) and UP again. Also the newer agent
 * draining calls: DRAIN_AGENT, DEACTIVATE_AGENT, REACTIVATE_AGENT.
 *
 * Every operator change is validated against the current state, written to
 * the registry, and applied and answered only once durable. Changes run one
 * at a time in arrival order (a queue), so each is validated against the
 * state its predecessors left.
 *
 * Machines are matched to agents by hostname (case-insensitive) and IP, both
 * as the agent announced them; an empty field matches only an empty one, as
 * in Mesos.
 */
#include "master/maintenance.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/changes.h"
#include "master/master.h"
#include "master/offers.h"
#include "master/persist.h"
#include "master/scheduler_api.h"
#include "master/send.h"
#include "master/tasks.h"
#include "master/registry.h"
#include "master/registry_gc.h"
#include "mesos/v1/allocator.pb-c.h"
#include "offerd/registry.pb-c.h"

/* Longest hostname and IP a machine id may have. */
#define MAX_HOSTNAME 255
#define MAX_IP       64
/* Most machines one schedule or one machine list may name. */
#define MAX_MACHINES 100000

/* ---- Machines ---------------------------------------------------------------
 */

/* "<hostname in lower case>/<ip>" into a new string. */
static char *machine_key(const char *hostname, const char *ip)
{
    char *key = xasprintf("%s/%s", hostname != NULL ? hostname : "",
                          ip != NULL ? ip : "");
    for (char *p = key; *p != '\0' && *p != '/'; p++)
        *p = (char)tolower((unsigned char)*p);
    return key;
}

struct machine *master_machine_of(struct master *m, const char *hostname,
                                  const char *ip)
{
    if (hmap_count(m->machines) == 0)
        return NULL;
    char *key = machine_key(hostname, ip);
    struct machine *mc = hmap_get(m->machines, key);
    free(key);
    return mc;
}

static struct machine *agent_machine(struct master *m, const struct agent *ag)
{
    return master_machine_of(m, ag->info->hostname, ag->ip);
}

static void machine_free(void *p)
{
    struct machine *mc = p;
    if (mc == NULL)
        return;
    free(mc->key);
    free(mc->hostname);
    free(mc->ip);
    free(mc);
}

static struct machine *machine_new(const Mesos__V1__MachineID *id,
                                   Mesos__V1__MachineInfo__Mode mode,
                                   const struct alloc_unavailability *unav)
{
    struct machine *mc = xcalloc(1, sizeof(*mc));
    mc->key = machine_key(id->hostname, id->ip);
    mc->hostname = xstrdup(id->hostname != NULL ? id->hostname : "");
    for (char *p = mc->hostname; *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    mc->ip = xstrdup(id->ip != NULL ? id->ip : "");
    mc->mode = mode;
    mc->unav = *unav;
    return mc;
}

static void unav_from_pb(const Mesos__V1__Unavailability *u,
                         struct alloc_unavailability *out)
{
    out->start_ns = u->start->nanoseconds;
    out->duration_ns = u->duration != NULL ? u->duration->nanoseconds : -1;
}

static bool unav_equal(const struct alloc_unavailability *a,
                       const struct alloc_unavailability *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return a->start_ns == b->start_ns && a->duration_ns == b->duration_ns;
}

/* Storage for a MachineInfo built from a struct machine. */
struct machine_msg {
    Mesos__V1__MachineInfo info;
    Mesos__V1__MachineID id;
    Mesos__V1__Unavailability unav;
    Mesos__V1__TimeInfo start;
    Mesos__V1__DurationInfo duration;
};

static void machine_to_pb(const struct machine *mc, struct machine_msg *mm)
{
    mesos__v1__machine_info__init(&mm->info);
    mesos__v1__machine_id__init(&mm->id);
    mesos__v1__unavailability__init(&mm->unav);
    mesos__v1__time_info__init(&mm->start);
    mesos__v1__duration_info__init(&mm->duration);
    mm->id.hostname = mc->hostname[0] != '\0' ? mc->hostname : NULL;
    mm->id.ip = mc->ip[0] != '\0' ? mc->ip : NULL;
    mm->info.id = &mm->id;
    mm->info.has_mode = true;
    mm->info.mode = mc->mode;
    mm->start.nanoseconds = mc->unav.start_ns;
    mm->unav.start = &mm->start;
    if (mc->unav.duration_ns >= 0) {
        mm->duration.nanoseconds = mc->unav.duration_ns;
        mm->unav.duration = &mm->duration;
    }
    mm->info.unavailability = &mm->unav;
}

/* Check a machine id as Mesos does; lower-case its hostname (id is the
 * caller's copy). Returns 0, or -1 with a reason. */
static int machine_id_check(Mesos__V1__MachineID *id, char *err, size_t errlen)
{
    const char *h = id->hostname != NULL ? id->hostname : "";
    const char *ip = id->ip != NULL ? id->ip : "";
    if (h[0] == '\0' && ip[0] == '\0') {
        snprintf(err, errlen,
                 "Both 'hostname' and 'ip' for a machine are empty");
        return -1;
    }
    if (strlen(h) > MAX_HOSTNAME || strlen(ip) > MAX_IP) {
        snprintf(err, errlen, "Machine hostname or ip is too long");
        return -1;
    }
    struct in_addr a;
    if (ip[0] != '\0' && inet_pton(AF_INET, ip, &a) != 1) {
        snprintf(err, errlen, "Machine ip '%s' is not an IPv4 address", ip);
        return -1;
    }
    for (char *p = id->hostname; p != NULL && *p != '\0'; p++)
        *p = (char)tolower((unsigned char)*p);
    return 0;
}

static void describe(const Mesos__V1__MachineID *id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", id->hostname != NULL ? id->hostname : "",
             id->ip != NULL ? id->ip : "");
}

/* ---- The operation queue
 * ------------------------------------------------------
 */

enum op_kind {
    OP_SCHEDULE,
    OP_DOWN,
    OP_UP,
    OP_DRAIN,
    OP_DEACTIVATE,
    OP_REACTIVATE,
};

/* An operator change of the maintenance state (changes.c runs them one at
 * a time). */
struct maint_op {
    struct master_change base; /* first: the queue's view of it */
    struct master *m;
    enum op_kind kind;
    Mesos__V1__Maintenance__Schedule *schedule; /* OP_SCHEDULE, OP_UP: the
                                                   new schedule */
    Mesos__V1__MachineID **ids;                 /* OP_DOWN, OP_UP */
    size_t nids;
    char *agent_id; /* OP_DRAIN, OP_(RE|DE)ACTIVATE */
    bool has_max_grace;
    int64_t max_grace_ns;
    bool mark_gone;
    struct hmap *machines; /* OP_SCHEDULE: the machines it makes */
};

static void op_free(struct maint_op *op)
{
    if (op->schedule != NULL)
        protobuf_c_message_free_unpacked(&op->schedule->base, NULL);
    for (size_t i = 0; i < op->nids; i++)
        protobuf_c_message_free_unpacked(&op->ids[i]->base, NULL);
    free(op->ids);
    free(op->agent_id);
    if (op->machines != NULL)
        hmap_free(op->machines, machine_free);
    free(op);
}

static void run(struct master *m, struct master_change *c);

static void change_free(struct master_change *c)
{
    op_free((struct maint_op *)c);
}

/* An operation ends: answer it, run the next. */
static void op_end(struct maint_op *op, int status, const char *reason)
{
    master_change_end(op->m, &op->base, status, reason);
}

static void submit(struct master *m, struct maint_op *op,
                   struct http_request *req)
{
    op->m = m;
    op->base.req = req;
    op->base.run = run;
    op->base.free = change_free;
    master_change_submit(m, &op->base);
}

/* Put msg of kind into b; on failure end op with 400. */
static bool put(struct maint_op *op, struct registry_batch *b,
                enum registry_kind kind, const ProtobufCMessage *msg)
{
    char err[256];
    if (registry_batch_put(b, kind, msg, err, sizeof(err)) != 0) {
        registry_batch_free(b);
        op_end(op, 400, err);
        return false;
    }
    return true;
}

/* ---- Schedule
 * ----------------------------------------------------------------
 */

/* The agents whose unavailability changes from what `old` gives to what
 * `new` gives get it: offers and inverse offers go (offers come back with
 * the unavailability), the allocator learns it. */
static void agents_follow_machines(struct master *m, struct hmap *old,
                                   struct hmap *new)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        if (ag->alloc == NULL)
            continue;
        char *key = machine_key(ag->info->hostname, ag->ip);
        const struct machine *o = hmap_get(old, key);
        const struct machine *n = hmap_get(new, key);
        free(key);
        const struct alloc_unavailability *ou = o != NULL ? &o->unav : NULL;
        const struct alloc_unavailability *nu = n != NULL ? &n->unav : NULL;
        if (unav_equal(ou, nu))
            continue;
        master_offers_on_agent(m, ag, true);
        master_inverse_offers_on_agent(m, ag, true);
        alloc_agent_set_unavailability(m->alloc, ag->alloc, nu);
        for (uint32_t i = 0; i < ag->nio_answers; i++)
            free(ag->io_answers[i].framework_id);
        ag->nio_answers = 0;
        log_info("agent %s (%s): unavailability %s", ag->id, ag->info->hostname,
                 nu != NULL ? "set" : "cleared");
    }
    master_allocate_soon(m);
}

static void schedule_applied(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    agents_follow_machines(m, m->machines, op->machines);
    hmap_free(m->machines, machine_free);
    m->machines = op->machines;
    op->machines = NULL;
    if (m->schedule != NULL)
        protobuf_c_message_free_unpacked(&m->schedule->base, NULL);
    m->schedule = op->schedule;
    op->schedule = NULL;
    log_info("maintenance schedule updated: %zu machines",
             hmap_count(m->machines));
    op_end(op, 200, NULL);
}

static void run_schedule(struct master *m, struct maint_op *op)
{
    char err[512], what[400];
    Mesos__V1__Maintenance__Schedule *s = op->schedule;
    op->machines = hmap_new();
    size_t total = 0;
    for (size_t w = 0; w < s->n_windows; w++) {
        const Mesos__V1__Maintenance__Window *win = s->windows[w];
        if (win->n_machine_ids == 0) {
            op_end(op, 400,
                   "List of machines in the maintenance window is empty");
            return;
        }
        if (win->unavailability->duration != NULL &&
            win->unavailability->duration->nanoseconds < 0) {
            op_end(op, 400, "Unavailability 'duration' is negative");
            return;
        }
        total += win->n_machine_ids;
        if (total > MAX_MACHINES) {
            snprintf(err, sizeof(err),
                     "The schedule names more than %d machines", MAX_MACHINES);
            op_end(op, 400, err);
            return;
        }
        struct alloc_unavailability unav;
        unav_from_pb(win->unavailability, &unav);
        for (size_t i = 0; i < win->n_machine_ids; i++) {
            Mesos__V1__MachineID *id = win->machine_ids[i];
            if (machine_id_check(id, err, sizeof(err)) != 0) {
                op_end(op, 400, err);
                return;
            }
            char *key = machine_key(id->hostname, id->ip);
            if (hmap_get(op->machines, key) != NULL) {
                describe(id, what, sizeof(what));
                snprintf(err, sizeof(err),
                         "Machine '%s' appears more than once in the schedule",
                         what);
                free(key);
                op_end(op, 400, err);
                return;
            }
            const struct machine *old = hmap_get(m->machines, key);
            free(key);
            struct machine *mc = machine_new(
                id,
                old != NULL ? old->mode
                            : MESOS__V1__MACHINE_INFO__MODE__DRAINING,
                &unav);
            hmap_put(op->machines, mc->key, mc);
        }
    }
    /* A DOWN machine must stay: bringing it UP is /machine/up's job. */
    size_t pos = 0;
    void *val;
    while (hmap_next(m->machines, &pos, NULL, &val)) {
        const struct machine *mc = val;
        if (mc->mode == MESOS__V1__MACHINE_INFO__MODE__DOWN &&
            hmap_get(op->machines, mc->key) == NULL) {
            snprintf(err, sizeof(err),
                     "Machine '%s/%s' is deactivated and cannot be removed "
                     "from the schedule",
                     mc->hostname, mc->ip);
            op_end(op, 400, err);
            return;
        }
    }

    struct registry_batch *b = registry_batch_new();
    if (!put(op, b, REGISTRY_KIND_SCHEDULE, &s->base))
        return;
    pos = 0;
    while (hmap_next(op->machines, &pos, NULL, &val)) {
        struct machine_msg mm;
        machine_to_pb(val, &mm);
        if (!put(op, b, REGISTRY_KIND_MACHINE, &mm.info.base))
            return;
    }
    pos = 0;
    while (hmap_next(m->machines, &pos, NULL, &val)) {
        const struct machine *mc = val;
        if (hmap_get(op->machines, mc->key) == NULL)
            registry_batch_delete(b, REGISTRY_KIND_MACHINE, mc->key, err,
                                  sizeof(err));
    }
    master_change_write(m, &op->base, b, schedule_applied,
                        "maintenance schedule");
}

/* ---- Machines down and up
 * ------------------------------------------------------
 */

/* Check op->ids: not empty, each valid, unique, scheduled, in mode `want`.
 * Ends op with 400 and returns false otherwise. */
static bool check_machine_list(struct master *m, struct maint_op *op,
                               Mesos__V1__MachineInfo__Mode want)
{
    char err[512], what[400];
    if (op->nids == 0) {
        op_end(op, 400, "List of machines is empty");
        return false;
    }
    struct hmap *seen = hmap_new();
    bool ok = true;
    for (size_t i = 0; i < op->nids && ok; i++) {
        Mesos__V1__MachineID *id = op->ids[i];
        ok = false;
        if (machine_id_check(id, err, sizeof(err)) != 0)
            break;
        describe(id, what, sizeof(what));
        char *key = machine_key(id->hostname, id->ip);
        const struct machine *mc = hmap_get(m->machines, key);
        if (hmap_get(seen, key) != NULL) {
            snprintf(err, sizeof(err),
                     "Machine '%s' appears more than once in the list", what);
        } else if (mc == NULL) {
            snprintf(err, sizeof(err),
                     "Machine '%s' is not part of a maintenance schedule",
                     what);
        } else if (mc->mode != want) {
            snprintf(err, sizeof(err),
                     want == MESOS__V1__MACHINE_INFO__MODE__DRAINING
                         ? "Machine '%s' is not in DRAINING mode and cannot "
                           "be brought down"
                         : "Machine '%s' is not in DOWN mode and cannot be "
                           "brought up",
                     what);
        } else {
            hmap_put(seen, key, (void *)1);
            ok = true;
        }
        free(key);
    }
    hmap_free(seen, NULL);
    if (!ok)
        op_end(op, 400, err);
    return ok;
}

static void down_applied(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    for (size_t i = 0; i < op->nids; i++) {
        char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
        struct machine *mc = hmap_get(m->machines, key);
        free(key);
        if (mc != NULL)
            mc->mode = MESOS__V1__MACHINE_INFO__MODE__DOWN;
    }
    /* Their agents are told to shut down and removed. */
    size_t n = hmap_count(m->agents), pos = 0, k = 0;
    struct agent **v = xcalloc(n ? n : 1, sizeof(*v));
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct machine *mc = agent_machine(m, val);
        if (mc != NULL && mc->mode == MESOS__V1__MACHINE_INFO__MODE__DOWN)
            v[k++] = val;
    }
    for (size_t i = 0; i < k; i++) {
        char why[512];
        snprintf(why, sizeof(why), "machine %s/%s is down for maintenance",
                 v[i]->info->hostname, v[i]->ip);
        master_agent_shutdown(m, v[i], "Operator initiated 'Machine DOWN'");
        master_agent_remove(m, v[i], AGENT_REMOVED_BY_OPERATOR, why);
    }
    free(v);
    log_info("%zu machines down, %zu agents removed", op->nids, k);
    op_end(op, 200, NULL);
}

static void run_down(struct master *m, struct maint_op *op)
{
    if (!check_machine_list(m, op, MESOS__V1__MACHINE_INFO__MODE__DRAINING))
        return;
    struct registry_batch *b = registry_batch_new();
    for (size_t i = 0; i < op->nids; i++) {
        char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
        struct machine c = *(struct machine *)hmap_get(m->machines, key);
        free(key);
        c.mode = MESOS__V1__MACHINE_INFO__MODE__DOWN;
        struct machine_msg mm;
        machine_to_pb(&c, &mm);
        if (!put(op, b, REGISTRY_KIND_MACHINE, &mm.info.base))
            return;
    }
    /* Their agents leave the registry's admitted list. */
    size_t pos = 0;
    void *val;
    char err[256];
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        struct machine *mc = agent_machine(m, ag);
        if (mc == NULL)
            continue;
        for (size_t i = 0; i < op->nids; i++) {
            char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
            if (strcmp(key, mc->key) == 0)
                registry_batch_delete(b, REGISTRY_KIND_AGENT, ag->id, err,
                                      sizeof(err));
            free(key);
        }
    }
    master_change_write(m, &op->base, b, down_applied, "machines down");
}

static void up_applied(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    for (size_t i = 0; i < op->nids; i++) {
        char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
        machine_free(hmap_del(m->machines, key));
        free(key);
    }
    if (m->schedule != NULL)
        protobuf_c_message_free_unpacked(&m->schedule->base, NULL);
    m->schedule = op->schedule;
    op->schedule = NULL;
    log_info("%zu machines up", op->nids);
    op_end(op, 200, NULL);
}

static void run_up(struct master *m, struct maint_op *op)
{
    if (!check_machine_list(m, op, MESOS__V1__MACHINE_INFO__MODE__DOWN))
        return;
    /* The schedule without those machines (and without emptied windows). */
    struct hmap *gone = hmap_new();
    for (size_t i = 0; i < op->nids; i++) {
        char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
        hmap_put(gone, key, (void *)1);
        free(key);
    }
    Mesos__V1__Maintenance__Schedule *s =
        jpb_copy(&mesos__v1__maintenance__schedule__descriptor,
                 &master_maint_schedule(m)->base);
    size_t kept_w = 0;
    for (size_t w = 0; w < s->n_windows; w++) {
        Mesos__V1__Maintenance__Window *win = s->windows[w];
        size_t kept = 0;
        for (size_t i = 0; i < win->n_machine_ids; i++) {
            Mesos__V1__MachineID *id = win->machine_ids[i];
            char *key = machine_key(id->hostname, id->ip);
            if (hmap_get(gone, key) != NULL)
                protobuf_c_message_free_unpacked(&id->base, NULL);
            else
                win->machine_ids[kept++] = id;
            free(key);
        }
        win->n_machine_ids = kept;
        if (kept == 0)
            protobuf_c_message_free_unpacked(&win->base, NULL);
        else
            s->windows[kept_w++] = win;
    }
    s->n_windows = kept_w;
    hmap_free(gone, NULL);
    op->schedule = s;

    struct registry_batch *b = registry_batch_new();
    char err[256];
    for (size_t i = 0; i < op->nids; i++) {
        char *key = machine_key(op->ids[i]->hostname, op->ids[i]->ip);
        registry_batch_delete(b, REGISTRY_KIND_MACHINE, key, err, sizeof(err));
        free(key);
    }
    if (!put(op, b, REGISTRY_KIND_SCHEDULE, &s->base))
        return;
    master_change_write(m, &op->base, b, up_applied, "machines up");
}

/* ---- Agent draining and deactivation
 * --------------------------------------------
 */

/* Storage for a DrainInfo. */
struct drain_msg {
    Mesos__V1__DrainInfo info;
    Mesos__V1__DrainConfig config;
    Mesos__V1__DurationInfo grace;
};

static void drain_msg_init(struct drain_msg *d, Mesos__V1__DrainState state,
                           const struct maint_op *op)
{
    mesos__v1__drain_info__init(&d->info);
    mesos__v1__drain_config__init(&d->config);
    mesos__v1__duration_info__init(&d->grace);
    d->info.state = state;
    d->info.config = &d->config;
    if (op->has_max_grace) {
        d->grace.nanoseconds = op->max_grace_ns;
        d->config.max_grace_period = &d->grace;
    }
    d->config.has_mark_gone = true;
    d->config.mark_gone = op->mark_gone;
}

static void set_active(struct master *m, struct agent *ag)
{
    if (ag->alloc != NULL)
        alloc_agent_set_active(m->alloc, ag->alloc,
                               ag->connected && !ag->deactivated);
    if (ag->deactivated) {
        master_offers_on_agent(m, ag, true);
        master_inverse_offers_on_agent(m, ag, true);
    } else {
        master_allocate_soon(m);
    }
}

/* Kill every live task of a draining agent, grace periods capped. */
static void drain_kill_tasks(struct master *m, struct agent *ag)
{
    const Mesos__V1__DrainConfig *cfg = ag->drain->config;
    size_t k;
    struct task **v = master_agent_tasks(ag, &k);
    for (size_t i = 0; i < k; i++) {
        struct task *t = v[i];
        if (task_state_is_terminal(t->state))
            continue;
        Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
        Mesos__V1__KillPolicy kp = MESOS__V1__KILL_POLICY__INIT;
        const Mesos__V1__KillPolicy *policy = NULL;
        if (cfg->max_grace_period != NULL) {
            int64_t cap = cfg->max_grace_period->nanoseconds;
            const Mesos__V1__KillPolicy *own = t->info->kill_policy;
            int64_t g = own != NULL && own->grace_period != NULL
                            ? own->grace_period->nanoseconds
                            : cap;
            grace.nanoseconds = g < cap ? g : cap;
            kp.grace_period = &grace;
            policy = &kp;
        }
        master_task_kill(m, t->fw, t->info->task_id->value, ag->id, policy);
    }
    free(v);
}

static void drain_applied(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    struct agent *ag = master_agent_find(m, op->agent_id);
    if (ag == NULL) {
        op_end(op, 409, "the agent was removed meanwhile");
        return;
    }
    struct drain_msg d;
    drain_msg_init(&d, MESOS__V1__DRAIN_STATE__DRAINING, op);
    if (ag->drain != NULL)
        protobuf_c_message_free_unpacked(&ag->drain->base, NULL);
    ag->drain = jpb_copy(&mesos__v1__drain_info__descriptor, &d.info.base);
    ag->deactivated = true;
    set_active(m, ag);
    drain_kill_tasks(m, ag);
    log_info("agent %s draining%s", ag->id,
             op->mark_gone ? " (to be marked gone)" : "");
    master_agent_drain_check_soon(m, ag);
    op_end(op, 200, NULL);
}

static void active_applied(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    struct agent *ag = master_agent_find(m, op->agent_id);
    if (ag == NULL) {
        op_end(op, 409, "the agent was removed meanwhile");
        return;
    }
    if (op->kind == OP_REACTIVATE) {
        ag->deactivated = false;
        if (ag->drain != NULL)
            protobuf_c_message_free_unpacked(&ag->drain->base, NULL);
        ag->drain = NULL;
    } else {
        ag->deactivated = true;
    }
    set_active(m, ag);
    log_info("agent %s %s", ag->id,
             ag->deactivated ? "deactivated" : "reactivated");
    op_end(op, 200, NULL);
}

static void run_agent_op(struct master *m, struct maint_op *op)
{
    struct agent *ag = master_agent_find(m, op->agent_id);
    char err[512];
    if (ag == NULL || ag->info == NULL) {
        snprintf(err, sizeof(err), "Unknown agent %s", op->agent_id);
        op_end(op, 400, err);
        return;
    }
    struct registry_batch *b = NULL;
    switch (op->kind) {
    case OP_DRAIN: {
        struct drain_msg d;
        drain_msg_init(&d, MESOS__V1__DRAIN_STATE__DRAINING, op);
        b = master_agent_record_batch(ag, true, &d.info, err, sizeof(err));
        break;
    }
    case OP_DEACTIVATE:
        b = master_agent_record_batch(ag, true, ag->drain, err, sizeof(err));
        break;
    default:
        b = master_agent_record_batch(ag, false, NULL, err, sizeof(err));
        break;
    }
    if (b == NULL) {
        op_end(op, 400, err);
        return;
    }
    if (op->kind == OP_DRAIN)
        master_change_write(m, &op->base, b, drain_applied, "agent drain");
    else
        master_change_write(m, &op->base, b, active_applied,
                            "agent activation");
}

/* ---- Drained agents
 * --------------------------------------------------------------
 */

struct drained {
    struct master *m;
    char *agent_id;
    bool mark_gone;
};

static void drained_done(struct master *m, bool ok, const char *err, void *arg)
{
    struct drained *d = arg;
    struct agent *ag = master_agent_find(m, d->agent_id);
    if (ag != NULL)
        ag->drain_writing = false;
    if (!ok) {
        log_warn("agent %s drained, but not recorded: %s", d->agent_id, err);
        if (ag != NULL)
            master_agent_drain_check_soon(m, ag); /* try again */
    } else if (ag != NULL && ag->drain != NULL) {
        ag->drain->state = MESOS__V1__DRAIN_STATE__DRAINED;
        log_info("agent %s drained", ag->id);
        if (d->mark_gone) {
            master_agent_mark_put(m->gone_agents, ag->id, clock_wall_secs());
            master_agent_remove_gone(m, ag);
        }
    }
    free(d->agent_id);
    free(d);
}

/* Record DRAINED for every draining agent with no task left (the master
 * forgets a task when it is terminal and acknowledged). */
static void on_drain_check(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master *m = arg;
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        if (ag->drain == NULL || ag->drain_writing ||
            ag->drain->state != MESOS__V1__DRAIN_STATE__DRAINING ||
            hmap_count(ag->tasks) > 0)
            continue;
        Mesos__V1__DrainInfo di = *ag->drain;
        di.state = MESOS__V1__DRAIN_STATE__DRAINED;
        char err[256];
        struct registry_batch *b =
            master_agent_record_batch(ag, true, &di, err, sizeof(err));
        if (b == NULL) {
            log_error("agent %s: %s", ag->id, err);
            continue;
        }
        bool gone =
            ag->drain->config->has_mark_gone && ag->drain->config->mark_gone;
        if (gone) {
            Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
            aid.value = ag->id;
            Mesos__V1__TimeInfo t = MESOS__V1__TIME_INFO__INIT;
            t.nanoseconds = (int64_t)(clock_wall_secs() * 1e9);
            Offerd__Registry__GoneAgent g = OFFERD__REGISTRY__GONE_AGENT__INIT;
            g.id = &aid;
            g.timestamp = &t;
            registry_batch_delete(b, REGISTRY_KIND_AGENT, ag->id, err,
                                  sizeof(err));
            registry_batch_put(b, REGISTRY_KIND_GONE, &g.base, err,
                               sizeof(err));
        }
        struct drained *d = xcalloc(1, sizeof(*d));
        d->m = m;
        d->agent_id = xstrdup(ag->id);
        d->mark_gone = gone;
        ag->drain_writing = true;
        master_persist_batch(m, b, drained_done, d);
    }
}

void master_agent_drain_check_soon(struct master *m, struct agent *ag)
{
    if (ag->drain == NULL ||
        ag->drain->state != MESOS__V1__DRAIN_STATE__DRAINING)
        return;
    if (m->drain_check == NULL)
        m->drain_check = evtimer_new(m->base, on_drain_check, m);
    if (!evtimer_pending(m->drain_check, NULL)) {
        struct timeval zero = {0, 0};
        evtimer_add(m->drain_check, &zero);
    }
}

void master_agent_state_json(const struct agent *ag, json_t *obj)
{
    json_object_set_new(obj, "deactivated", json_boolean(ag->deactivated));
    if (ag->drain != NULL)
        json_object_set_new(obj, "drain_info", jpb_to_json(&ag->drain->base));
}

/* ---- The queue's engine
 * ------------------------------------------------------------
 */

/* Start a change (changes.c calls it when its turn comes). */
static void run(struct master *m, struct master_change *c)
{
    struct maint_op *op = (struct maint_op *)c;
    switch (op->kind) {
    case OP_SCHEDULE:
        run_schedule(m, op);
        break;
    case OP_DOWN:
        run_down(m, op);
        break;
    case OP_UP:
        run_up(m, op);
        break;
    case OP_DRAIN:
    case OP_DEACTIVATE:
    case OP_REACTIVATE:
        run_agent_op(m, op);
        break;
    }
}

/* ---- The operator calls
 * --------------------------------------------------------------
 */

void master_maint_update_schedule(struct master *m, struct http_request *req,
                                  const Mesos__V1__Maintenance__Schedule *s)
{
    struct maint_op *op = xcalloc(1, sizeof(*op));
    op->kind = OP_SCHEDULE;
    op->schedule =
        jpb_copy(&mesos__v1__maintenance__schedule__descriptor, &s->base);
    submit(m, op, req);
}

void master_maint_machines(struct master *m, struct http_request *req,
                           bool down, Mesos__V1__MachineID *const *ids,
                           size_t n)
{
    if (n > MAX_MACHINES) {
        http_reply_error(req, 400, "More than %d machines", MAX_MACHINES);
        return;
    }
    struct maint_op *op = xcalloc(1, sizeof(*op));
    op->kind = down ? OP_DOWN : OP_UP;
    op->ids = xcalloc(n ? n : 1, sizeof(*op->ids));
    for (size_t i = 0; i < n; i++)
        op->ids[i] =
            jpb_copy(&mesos__v1__machine_id__descriptor, &ids[i]->base);
    op->nids = n;
    submit(m, op, req);
}

void master_maint_drain_agent(struct master *m, struct http_request *req,
                              const char *agent_id,
                              const Mesos__V1__DurationInfo *max_grace,
                              bool mark_gone)
{
    if (max_grace != NULL && max_grace->nanoseconds < 0) {
        http_reply_error(req, 400, "max_grace_period: must not be negative");
        return;
    }
    struct maint_op *op = xcalloc(1, sizeof(*op));
    op->kind = OP_DRAIN;
    op->agent_id = xstrdup(agent_id);
    op->has_max_grace = max_grace != NULL;
    op->max_grace_ns = max_grace != NULL ? max_grace->nanoseconds : 0;
    op->mark_gone = mark_gone;
    submit(m, op, req);
}

void master_maint_set_agent_active(struct master *m, struct http_request *req,
                                   const char *agent_id, bool active)
{
    struct maint_op *op = xcalloc(1, sizeof(*op));
    op->kind = active ? OP_REACTIVATE : OP_DEACTIVATE;
    op->agent_id = xstrdup(agent_id);
    submit(m, op, req);
}

const Mesos__V1__Maintenance__Schedule *
master_maint_schedule(const struct master *m)
{
    static const Mesos__V1__Maintenance__Schedule empty =
        MESOS__V1__MAINTENANCE__SCHEDULE__INIT;
    return m->schedule != NULL ? m->schedule : &empty;
}

Mesos__V1__Maintenance__ClusterStatus *
master_maint_status(const struct master *m)
{
    Mesos__V1__Maintenance__ClusterStatus *cs = xmalloc(sizeof(*cs));
    mesos__v1__maintenance__cluster_status__init(cs);
    size_t n = hmap_count(m->machines);
    cs->draining_machines = xcalloc(n ? n : 1, sizeof(*cs->draining_machines));
    cs->down_machines = xcalloc(n ? n : 1, sizeof(*cs->down_machines));
    /* Draining machine key -> its entry. */
    struct hmap *byk = hmap_new();
    size_t pos = 0;
    void *val;
    while (hmap_next(m->machines, &pos, NULL, &val)) {
        const struct machine *mc = val;
        Mesos__V1__MachineID *id = xmalloc(sizeof(*id));
        mesos__v1__machine_id__init(id);
        id->hostname = mc->hostname[0] ? xstrdup(mc->hostname) : NULL;
        id->ip = mc->ip[0] ? xstrdup(mc->ip) : NULL;
        if (mc->mode == MESOS__V1__MACHINE_INFO__MODE__DOWN) {
            cs->down_machines[cs->n_down_machines++] = id;
            continue;
        }
        Mesos__V1__Maintenance__ClusterStatus__DrainingMachine *dm =
            xmalloc(sizeof(*dm));
        mesos__v1__maintenance__cluster_status__draining_machine__init(dm);
        dm->id = id;
        cs->draining_machines[cs->n_draining_machines++] = dm;
        hmap_put(byk, mc->key, dm);
    }
    pos = 0;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        if (ag->nio_answers == 0)
            continue;
        char *key = machine_key(ag->info->hostname, ag->ip);
        Mesos__V1__Maintenance__ClusterStatus__DrainingMachine *dm =
            hmap_get(byk, key);
        free(key);
        if (dm == NULL)
            continue;
        dm->statuses =
            xreallocarray(dm->statuses, dm->n_statuses + ag->nio_answers,
                          sizeof(*dm->statuses));
        for (uint32_t i = 0; i < ag->nio_answers; i++) {
            const struct io_answer *a = &ag->io_answers[i];
            Mesos__V1__Allocator__InverseOfferStatus *st = xmalloc(sizeof(*st));
            mesos__v1__allocator__inverse_offer_status__init(st);
            st->status =
                (Mesos__V1__Allocator__InverseOfferStatus__Status)a->status;
            st->framework_id = xmalloc(sizeof(*st->framework_id));
            mesos__v1__framework_id__init(st->framework_id);
            st->framework_id->value = xstrdup(a->framework_id);
            st->timestamp = xmalloc(sizeof(*st->timestamp));
            mesos__v1__time_info__init(st->timestamp);
            st->timestamp->nanoseconds = (int64_t)(a->timestamp * 1e9);
            dm->statuses[dm->n_statuses++] = st;
        }
    }
    hmap_free(byk, NULL);
    return cs;
}

/* ---- Inverse offers
 * --------------------------------------------------------------
 */

static void io_free(struct inverse_offer *io)
{
    if (io->timer != NULL)
        event_free(io->timer);
    free(io->id);
    free(io);
}

/* Record fw's answer (or the offer itself, UNKNOWN) on ag. */
static void io_record(struct agent *ag, const char *fw_id,
                      enum alloc_io_status status)
{
    struct io_answer *a = NULL;
    for (uint32_t i = 0; i < ag->nio_answers; i++)
        if (strcmp(ag->io_answers[i].framework_id, fw_id) == 0)
            a = &ag->io_answers[i];
    if (a == NULL) {
        if (ag->nio_answers == ag->capio_answers) {
            ag->capio_answers = ag->capio_answers ? 2 * ag->capio_answers : 4;
            ag->io_answers = xreallocarray(ag->io_answers, ag->capio_answers,
                                           sizeof(*ag->io_answers));
        }
        a = &ag->io_answers[ag->nio_answers++];
        a->framework_id = xstrdup(fw_id);
        a->status = ALLOC_IO_UNKNOWN;
        a->timestamp = clock_wall_secs();
    } else if (status == ALLOC_IO_UNKNOWN) {
        return; /* a new inverse offer keeps the last answer */
    }
    a->status = status;
    a->timestamp = clock_wall_secs();
}

/* Forget io; with rescind tell its framework; with reoffer let the
 * allocator send another (no answer, no filter). */
static void io_remove(struct master *m, struct inverse_offer *io, bool rescind,
                      bool reoffer)
{
    if (rescind)
        master_send_rescind(io->fw, io->id, true);
    if (reoffer && io->agent->alloc != NULL && io->fw->alloc != NULL)
        alloc_inverse_offer_respond(m->alloc, io->agent->alloc, io->fw->alloc,
                                    ALLOC_IO_UNKNOWN, 0, clock_monotonic_ns());
    hmap_del(m->inverse_offers, io->id);
    io_free(io);
}

static void on_io_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct inverse_offer *io = arg;
    struct master *m = io->fw->m;
    log_info("inverse offer %s to framework %s timed out", io->id, io->fw->id);
    io_remove(m, io, true, true);
}

void master_inverse_offer_from_alloc(void *arg, void *framework_udata,
                                     void *agent_udata,
                                     const struct alloc_unavailability *unav)
{
    struct master *m = arg;
    struct framework *fw = framework_udata;
    struct agent *ag = agent_udata;
    char id[ID_DERIVED_SIZE];
    id_derive(ID_OFFER, m->id, m->next_offer++, id, sizeof(id));
    struct inverse_offer *io = xcalloc(1, sizeof(*io));
    io->id = xstrdup(id);
    io->fw = fw;
    io->agent = ag;
    io->unav = *unav;
    hmap_put(m->inverse_offers, io->id, io);
    if (m->flags->offer_timeout > 0) {
        io->timer = evtimer_new(m->base, on_io_timeout, io);
        int64_t ns = m->flags->offer_timeout;
        struct timeval tv = {(time_t)(ns / CLOCK_NS_PER_SEC),
                             (suseconds_t)((ns % CLOCK_NS_PER_SEC) / 1000)};
        evtimer_add(io->timer, &tv);
    }
    io_record(ag, fw->id, ALLOC_IO_UNKNOWN);

    Mesos__V1__OfferID oid = MESOS__V1__OFFER_ID__INIT;
    oid.value = io->id;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = fw->id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = ag->id;
    Mesos__V1__TimeInfo start = MESOS__V1__TIME_INFO__INIT;
    start.nanoseconds = unav->start_ns;
    Mesos__V1__DurationInfo dur = MESOS__V1__DURATION_INFO__INIT;
    dur.nanoseconds = unav->duration_ns;
    Mesos__V1__Unavailability u = MESOS__V1__UNAVAILABILITY__INIT;
    u.start = &start;
    if (unav->duration_ns >= 0)
        u.duration = &dur;
    Mesos__V1__InverseOffer inv = MESOS__V1__INVERSE_OFFER__INIT;
    inv.id = &oid;
    inv.framework_id = &fid;
    inv.agent_id = &aid;
    inv.unavailability = &u;
    Mesos__V1__InverseOffer *invs[1] = {&inv};
    Mesos__V1__Scheduler__Event__InverseOffers e =
        MESOS__V1__SCHEDULER__EVENT__INVERSE_OFFERS__INIT;
    e.n_inverse_offers = 1;
    e.inverse_offers = invs;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__INVERSE_OFFERS;
    ev.inverse_offers = &e;
    master_send_to_framework(fw, &ev);
}

void master_inverse_offers_answer(struct master *m, struct framework *fw,
                                  Mesos__V1__OfferID *const *ids, size_t n,
                                  enum alloc_io_status status,
                                  const Mesos__V1__Filters *filters)
{
    int64_t refuse = master_refuse_ns(filters);
    for (size_t i = 0; i < n; i++) {
        struct inverse_offer *io = hmap_get(m->inverse_offers, ids[i]->value);
        if (io == NULL || io->fw != fw) {
            log_info("framework %s answered unknown inverse offer %s", fw->id,
                     ids[i]->value);
            continue;
        }
        if (io->agent->alloc != NULL && fw->alloc != NULL)
            alloc_inverse_offer_respond(m->alloc, io->agent->alloc, fw->alloc,
                                        status, refuse, clock_monotonic_ns());
        io_record(io->agent, fw->id, status);
        log_info("framework %s %s inverse offer %s for agent %s", fw->id,
                 status == ALLOC_IO_ACCEPT ? "accepted" : "declined", io->id,
                 io->agent->id);
        io_remove(m, io, false, false);
    }
}

/* Remove the inverse offers keep() selects. */
static void remove_where(struct master *m,
                         bool (*pick)(const struct inverse_offer *,
                                      const void *),
                         const void *arg, bool rescind, bool reoffer)
{
    size_t n = hmap_count(m->inverse_offers), pos = 0, k = 0;
    if (n == 0)
        return;
    struct inverse_offer **v = xcalloc(n, sizeof(*v));
    void *val;
    while (hmap_next(m->inverse_offers, &pos, NULL, &val))
        if (pick(val, arg))
            v[k++] = val;
    for (size_t i = 0; i < k; i++)
        io_remove(m, v[i], rescind, reoffer);
    free(v);
}

static bool of_framework(const struct inverse_offer *io, const void *fw)
{
    return io->fw == fw;
}

static bool on_agent(const struct inverse_offer *io, const void *ag)
{
    return io->agent == ag;
}

void master_inverse_offers_of_framework(struct master *m, struct framework *fw,
                                        bool rescind)
{
    /* The allocator sends new ones when the framework is back. */
    remove_where(m, of_framework, fw, rescind, true);
}

void master_inverse_offers_on_agent(struct master *m, struct agent *ag,
                                    bool rescind)
{
    remove_where(m, on_agent, ag, rescind, false);
}

/* True when fw holds something on ag: a live task or an offer. */
static bool holds(const struct framework *fw, const struct agent *ag)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->offers, &pos, NULL, &val))
        if (((const struct offer *)val)->fw == fw)
            return true;
    pos = 0;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (t->fw == fw && !task_state_is_terminal(t->state))
            return true;
    }
    return false;
}

static bool holds_nothing(const struct inverse_offer *io, const void *arg)
{
    (void)arg;
    return !holds(io->fw, io->agent);
}

void master_inverse_offers_sweep(struct master *m)
{
    remove_where(m, holds_nothing, NULL, true, true);
}

/* ---- Recovery and teardown
 * ----------------------------------------------------------
 */

void master_maintenance_recover(struct master *m,
                                const Mesos__V1__Maintenance__Schedule *sched,
                                Mesos__V1__MachineInfo *const *machines,
                                size_t n)
{
    if (sched != NULL)
        m->schedule = jpb_copy(&mesos__v1__maintenance__schedule__descriptor,
                               &sched->base);
    for (size_t i = 0; i < n; i++) {
        const Mesos__V1__MachineInfo *mi = machines[i];
        if (mi->unavailability == NULL || !mi->has_mode ||
            mi->mode == MESOS__V1__MACHINE_INFO__MODE__UP)
            continue;
        struct alloc_unavailability unav;
        unav_from_pb(mi->unavailability, &unav);
        struct machine *mc = machine_new(mi->id, mi->mode, &unav);
        machine_free(hmap_put(m->machines, mc->key, mc));
    }
    if (n > 0)
        log_info("registry: recovered a maintenance schedule of %zu machines",
                 hmap_count(m->machines));
}

void master_maintenance_free(struct master *m)
{
    if (m->drain_check != NULL)
        event_free(m->drain_check);
    m->drain_check = NULL;
    if (m->inverse_offers != NULL) {
        size_t pos = 0;
        void *val;
        while (hmap_next(m->inverse_offers, &pos, NULL, &val))
            io_free(val);
        hmap_free(m->inverse_offers, NULL);
        m->inverse_offers = NULL;
    }
    if (m->machines != NULL)
        hmap_free(m->machines, machine_free);
    m->machines = NULL;
    if (m->schedule != NULL)
        protobuf_c_message_free_unpacked(&m->schedule->base, NULL);
    m->schedule = NULL;
}

/* ---- Endpoints
 * -------------------------------------------------------------------
 */

static void reply_pb_json(struct http_request *req, const ProtobufCMessage *msg)
{
    json_t *j = jpb_to_json(msg);
    http_reply_json_jsonp(req, 200, j); /* Mesos takes ?jsonp= here */
    json_decref(j);
}

static void handle_schedule(struct http_request *req, void *arg)
{
    struct master *m = arg;
    if (http_request_method(req) == HTTP_GET) {
        reply_pb_json(req, &master_maint_schedule(m)->base);
        return;
    }
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[512];
    Mesos__V1__Maintenance__Schedule *s =
        (Mesos__V1__Maintenance__Schedule *)jpb_from_json_text(
            &mesos__v1__maintenance__schedule__descriptor, (const char *)body,
            len, err, sizeof(err));
    if (s == NULL) {
        http_reply_error(req, 400, "Failed to parse the schedule: %s", err);
        return;
    }
    master_maint_update_schedule(m, req, s);
    jpb_free(&s->base);
}

static void handle_status(struct http_request *req, void *arg)
{
    struct master *m = arg;
    Mesos__V1__Maintenance__ClusterStatus *cs = master_maint_status(m);
    reply_pb_json(req, &cs->base);
    protobuf_c_message_free_unpacked(&cs->base, NULL);
}

static void handle_machines(struct http_request *req, struct master *m,
                            bool down)
{
    size_t len, n;
    const char *body = (const char *)http_request_body(req, &len);
    ProtobufCMessage **ids;
    char err[512];
    if (jpb_array_from_json_text(&mesos__v1__machine_id__descriptor, body, len,
                                 MAX_MACHINES, &ids, &n, err,
                                 sizeof(err)) != 0) {
        http_reply_error(req, 400, "Failed to parse the machines: %s", err);
        return;
    }
    master_maint_machines(m, req, down, (Mesos__V1__MachineID **)ids, n);
    jpb_array_free(ids, n);
}

static void handle_down(struct http_request *req, void *arg)
{
    handle_machines(req, arg, true);
}

static void handle_up(struct http_request *req, void *arg)
{
    handle_machines(req, arg, false);
}

int master_maintenance_endpoints_register(struct master *m)
{
    static const struct {
        const char *path;
        unsigned methods;
        http_handler_fn fn;
    } routes[] = {
        {"/maintenance/schedule", HTTP_GET | HTTP_POST, handle_schedule},
        {"/maintenance/status", HTTP_GET, handle_status},
        {"/machine/down", HTTP_POST, handle_down},
        {"/machine/up", HTTP_POST, handle_up},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        char alias[128];
        snprintf(alias, sizeof(alias), "/master%s", routes[i].path);
        if (http_server_route(m->http, routes[i].path, routes[i].methods,
                              routes[i].fn, m) != 0 ||
            http_server_route(m->http, alias, routes[i].methods, routes[i].fn,
                              m) != 0)
            return -1;
    }
    return 0;
}
