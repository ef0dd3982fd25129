/*
 * Offer operation feedback: the operations with an id that frameworks'
 * ACCEPTs applied, from OPERATION_PENDING to an acknowledged terminal
 * status; see operations.h.
 *
 * Where Mesos has the agent send OPERATION_FINISHED for operations on its
 * default resources once it checkpointed them (and retry it until the
 * framework acknowledges), offerd's master makes the change durable itself
 * (the registry write of the agent's checkpointed resources) and so sends
 * the terminal update, and retries it, from here.
 *
 * The table is keyed by "<framework id>\n<operation id>": framework ids
 * never hold a newline, so keys of different frameworks cannot collide.
 */
#include "master/operations.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/frameworks.h"
#include "master/send.h"

/* The operation types Mesos counts (not LAUNCH, LAUNCH_GROUP), and the
 * states, in the order of the metrics' names. */
static const struct {
    Mesos__V1__Offer__Operation__Type type;
    const char *name;
} count_types[] = {
    {MESOS__V1__OFFER__OPERATION__TYPE__RESERVE, "reserve"},
    {MESOS__V1__OFFER__OPERATION__TYPE__UNRESERVE, "unreserve"},
    {MESOS__V1__OFFER__OPERATION__TYPE__CREATE, "create"},
    {MESOS__V1__OFFER__OPERATION__TYPE__DESTROY, "destroy"},
    {MESOS__V1__OFFER__OPERATION__TYPE__GROW_VOLUME, "grow_volume"},
    {MESOS__V1__OFFER__OPERATION__TYPE__SHRINK_VOLUME, "shrink_volume"},
    {MESOS__V1__OFFER__OPERATION__TYPE__CREATE_DISK, "create_disk"},
    {MESOS__V1__OFFER__OPERATION__TYPE__DESTROY_DISK, "destroy_disk"},
};
#define NTYPES (sizeof(count_types) / sizeof(count_types[0]))
static const struct {
    Mesos__V1__OperationState state;
    const char *name;
} count_states[] = {
    {MESOS__V1__OPERATION_STATE__OPERATION_PENDING, "pending"},
    {MESOS__V1__OPERATION_STATE__OPERATION_RECOVERING, "recovering"},
    {MESOS__V1__OPERATION_STATE__OPERATION_UNREACHABLE, "unreachable"},
    {MESOS__V1__OPERATION_STATE__OPERATION_FINISHED, "finished"},
    {MESOS__V1__OPERATION_STATE__OPERATION_FAILED, "failed"},
    {MESOS__V1__OPERATION_STATE__OPERATION_ERROR, "error"},
    {MESOS__V1__OPERATION_STATE__OPERATION_DROPPED, "dropped"},
    {MESOS__V1__OPERATION_STATE__OPERATION_GONE_BY_OPERATOR,
     "gone_by_operator"},
};
#define NSTATES (sizeof(count_states) / sizeof(count_states[0]))

/* One set of counters: total, then one per state of count_states. */
struct op_counts {
    int64_t total;
    int64_t by_state[NSTATES];
};

struct master_ops {
    struct hmap *ops;                 /* key -> struct op */
    long retry_min_ms;                /* the first interval between re-sends */
    struct op_counts all;             /* master/operations/ */
    struct op_counts by_type[NTYPES]; /* master/operations/<type>/ */
};

struct op {
    struct master *m;
    char *key;      /* the table's key */
    char *fw_id;    /* the framework that asked */
    char *agent_id; /* the agent whose resources it converts */
    Mesos__V1__Offer__Operation *info; /* owned copy; info->id set */
    uint8_t uuid[16];                  /* mesos.v1.Operation.uuid */
    /* The latest status: OPERATION_PENDING (no uuid) until the change is
     * durable, then the terminal one sent (with its uuid). Owned. */
    Mesos__V1__OperationStatus *latest;
    bool terminal;
    struct event *retry; /* re-sends the terminal update until acked */
    long retry_ms;       /* the next interval */
};

static char *key_of(const char *fw_id, const char *op_id)
{
    size_t a = strlen(fw_id), b = strlen(op_id);
    char *k = xmalloc(a + b + 2);
    memcpy(k, fw_id, a);
    k[a] = '\n';
    memcpy(k + a + 1, op_id, b + 1);
    return k;
}

static void op_free(void *val)
{
    struct op *o = val;
    if (o->retry != NULL)
        event_free(o->retry);
    jpb_free(&o->info->base);
    jpb_free(&o->latest->base);
    free(o->key);
    free(o->fw_id);
    free(o->agent_id);
    free(o);
}

void master_ops_init(struct master *m)
{
    m->ops = xcalloc(1, sizeof(*m->ops));
    m->ops->ops = hmap_new();
    m->ops->retry_min_ms = MASTER_OP_RETRY_MIN_SECS * 1000L;
}

void master_ops_set_retry_ms(struct master *m, long ms)
{
    m->ops->retry_min_ms = ms;
}

void master_ops_free(struct master *m)
{
    if (m->ops == NULL)
        return;
    hmap_free(m->ops->ops, op_free);
    free(m->ops);
    m->ops = NULL;
}

void master_ops_forget_framework(struct master *m, const char *fw_id)
{
    size_t n = hmap_count(m->ops->ops), k = 0, pos = 0;
    struct op **mine = xcalloc(n ? n : 1, sizeof(*mine));
    void *val;
    while (hmap_next(m->ops->ops, &pos, NULL, &val) && k < n) {
        struct op *o = val;
        if (strcmp(o->fw_id, fw_id) == 0)
            mine[k++] = o;
    }
    for (size_t i = 0; i < k; i++) {
        hmap_del(m->ops->ops, mine[i]->key);
        op_free(mine[i]);
    }
    free(mine);
}

/* from: -1 for a new operation (counted in total), -2 for one already
 * counted whose previous state stays counted (a terminal one). */
static void counts_update(struct op_counts *c, int from,
                          Mesos__V1__OperationState to)
{
    if (from == -1)
        c->total++;
    for (size_t i = 0; i < NSTATES; i++) {
        if (from >= 0 && (int)count_states[i].state == from)
            c->by_state[i]--;
        if (count_states[i].state == to)
            c->by_state[i]++;
    }
}

void master_ops_count(struct master *m, Mesos__V1__Offer__Operation__Type type,
                      int from, Mesos__V1__OperationState to)
{
    counts_update(&m->ops->all, from, to);
    for (size_t i = 0; i < NTYPES; i++)
        if (count_types[i].type == type)
            counts_update(&m->ops->by_type[i], from, to);
}

static void counts_report(const struct op_counts *c, const char *prefix,
                          void (*fn)(void *, const char *, double), void *arg)
{
    char name[128];
    snprintf(name, sizeof(name), "%stotal", prefix);
    fn(arg, name, (double)c->total);
    for (size_t i = 0; i < NSTATES; i++) {
        snprintf(name, sizeof(name), "%s%s", prefix, count_states[i].name);
        fn(arg, name, (double)c->by_state[i]);
    }
}

void master_ops_metrics(const struct master *m,
                        void (*fn)(void *arg, const char *name, double value),
                        void *arg)
{
    counts_report(&m->ops->all, "master/operations/", fn, arg);
    for (size_t i = 0; i < NTYPES; i++) {
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "master/operations/%s/",
                 count_types[i].name);
        counts_report(&m->ops->by_type[i], prefix, fn, arg);
    }
}

/* Send status to fw as an UPDATE_OPERATION_STATUS event (when it is
 * connected). */
static void send_status(struct framework *fw,
                        const Mesos__V1__OperationStatus *status)
{
    Mesos__V1__Scheduler__Event__UpdateOperationStatus u =
        MESOS__V1__SCHEDULER__EVENT__UPDATE_OPERATION_STATUS__INIT;
    u.status = (Mesos__V1__OperationStatus *)status;
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = true;
    ev.type = MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE_OPERATION_STATUS;
    ev.update_operation_status = &u;
    master_send_to_framework(fw, &ev);
}

void master_op_error(struct framework *fw,
                     const Mesos__V1__Offer__Operation *op, const char *message)
{
    master_ops_count(fw->m, op->type, -1,
                     MESOS__V1__OPERATION_STATE__OPERATION_ERROR);
    if (op->id == NULL)
        return;
    /* As Mesos: no agent id, no uuid (not retried, not acknowledged). */
    Mesos__V1__OperationStatus st = MESOS__V1__OPERATION_STATUS__INIT;
    st.operation_id = op->id;
    st.state = MESOS__V1__OPERATION_STATE__OPERATION_ERROR;
    st.message = (char *)message;
    send_status(fw, &st);
}

int master_op_check(const struct master *m, const struct framework *fw,
                    const Mesos__V1__Offer__Operation *op, char *err,
                    size_t errlen)
{
    size_t len = strlen(op->id->value);
    if (len == 0 || len > MASTER_MAX_OPERATION_ID) {
        snprintf(err, errlen, "the operation id must be 1 to %d bytes",
                 MASTER_MAX_OPERATION_ID);
        return -1;
    }
    char *k = key_of(fw->id, op->id->value);
    bool known = hmap_get(m->ops->ops, k) != NULL;
    free(k);
    if (known) {
        snprintf(err, errlen,
                 "an operation with id '%s' is pending or awaits "
                 "acknowledgement",
                 op->id->value);
        return -1;
    }
    if (hmap_count(m->ops->ops) >= MASTER_MAX_OPERATIONS) {
        snprintf(err, errlen,
                 "the master keeps %d operations awaiting acknowledgement "
                 "already",
                 MASTER_MAX_OPERATIONS);
        return -1;
    }
    return 0;
}

/* A new status of o: state, message, agent id, a uuid when reliable. */
static Mesos__V1__OperationStatus *status_new(const struct op *o,
                                              Mesos__V1__OperationState state,
                                              const char *message,
                                              bool with_uuid)
{
    Mesos__V1__OperationID oid = MESOS__V1__OPERATION_ID__INIT;
    oid.value = o->info->id->value;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = o->agent_id;
    uint8_t uuid[16];
    Mesos__V1__UUID u = MESOS__V1__UUID__INIT;
    Mesos__V1__OperationStatus st = MESOS__V1__OPERATION_STATUS__INIT;
    st.operation_id = &oid;
    st.state = state;
    st.message = (char *)message;
    st.agent_id = &aid;
    if (with_uuid) {
        id_uuid_v4_bytes(uuid);
        u.value.data = uuid;
        u.value.len = sizeof(uuid);
        st.uuid = &u;
    }
    return jpb_copy(&mesos__v1__operation_status__descriptor, &st.base);
}

char *master_op_add(struct master *m, const struct framework *fw,
                    const struct agent *ag,
                    const Mesos__V1__Offer__Operation *op)
{
    struct op *o = xcalloc(1, sizeof(*o));
    o->m = m;
    o->key = key_of(fw->id, op->id->value);
    o->fw_id = xstrdup(fw->id);
    o->agent_id = xstrdup(ag->id);
    o->info = jpb_copy(&mesos__v1__offer__operation__descriptor, &op->base);
    id_uuid_v4_bytes(o->uuid);
    o->latest = status_new(o, MESOS__V1__OPERATION_STATE__OPERATION_PENDING,
                           NULL, false);
    hmap_put(m->ops->ops, o->key, o);
    return xstrdup(o->key);
}

/* Arm o's retry timer for its next interval, and double that (up to
 * MASTER_OP_RETRY_MAX_SECS). */
static void arm_retry(struct op *o)
{
    struct timeval tv = {o->retry_ms / 1000, (o->retry_ms % 1000) * 1000};
    evtimer_add(o->retry, &tv);
    o->retry_ms *= 2;
    if (o->retry_ms > MASTER_OP_RETRY_MAX_SECS * 1000L)
        o->retry_ms = MASTER_OP_RETRY_MAX_SECS * 1000L;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct op *o = arg;
    struct framework *fw = master_framework_find(o->m, o->fw_id);
    if (fw != NULL) {
        log_info("framework %s: re-sending the status of operation '%s'",
                 o->fw_id, o->info->id->value);
        send_status(fw, o->latest);
    }
    arm_retry(o);
}

void master_op_done(struct master *m, const char *key,
                    Mesos__V1__OperationState state, const char *message)
{
    struct op *o = hmap_get(m->ops->ops, key);
    if (o == NULL || o->terminal)
        return;
    jpb_free(&o->latest->base);
    o->latest = status_new(o, state, message, true);
    o->terminal = true;
    struct framework *fw = master_framework_find(m, o->fw_id);
    if (fw != NULL)
        send_status(fw, o->latest);
    o->retry = evtimer_new(m->base, on_retry, o);
    o->retry_ms = m->ops->retry_min_ms;
    arm_retry(o);
}

int master_op_acknowledge(struct master *m, struct framework *fw,
                          const char *agent_id, const char *operation_id,
                          const uint8_t *uuid, size_t uuid_len)
{
    m->metrics.messages_operation_status_update_acknowledgement++;
    char *k = key_of(fw->id, operation_id);
    struct op *o = hmap_get(m->ops->ops, k);
    free(k);
    const char *why = NULL;
    if (o == NULL)
        why = "the operation is unknown";
    else if (strcmp(o->agent_id, agent_id) != 0)
        why = "the operation is not on that agent";
    else if (o->latest->uuid == NULL ||
             o->latest->uuid->value.len != uuid_len ||
             memcmp(o->latest->uuid->value.data, uuid, uuid_len) != 0)
        why = "the operation status is unknown";
    if (why != NULL) {
        log_info("framework %s: ignoring the acknowledgement of operation "
                 "'%s': %s",
                 fw->id, operation_id, why);
        m->metrics.invalid_operation_status_update_acknowledgements++;
        return -1;
    }
    m->metrics.valid_operation_status_update_acknowledgements++;
    /* Only terminal statuses carry a uuid here: acknowledged, the
     * operation is done. */
    hmap_del(m->ops->ops, o->key);
    op_free(o);
    return 0;
}

/* The operations kept on agent_id: a new array of *n (caller frees). */
static struct op **ops_on_agent(const struct master *m, const char *agent_id,
                                size_t *n)
{
    size_t count = hmap_count(m->ops->ops), k = 0, pos = 0;
    struct op **v = xcalloc(count ? count : 1, sizeof(*v));
    void *val;
    while (hmap_next(m->ops->ops, &pos, NULL, &val) && k < count) {
        struct op *o = val;
        if (strcmp(o->agent_id, agent_id) == 0)
            v[k++] = o;
    }
    *n = k;
    return v;
}

void master_ops_agent_feedback(struct master *m, const char *agent_id,
                               Mesos__V1__OperationState state,
                               const char *message)
{
    size_t n;
    struct op **v = ops_on_agent(m, agent_id, &n);
    for (size_t i = 0; i < n; i++) {
        /* A framework not connected learns by reconciling (as Mesos). */
        struct framework *fw = master_framework_find(m, v[i]->fw_id);
        if (fw == NULL || fw->stream == NULL)
            continue;
        Mesos__V1__OperationStatus *st =
            status_new(v[i], state, message, false);
        send_status(fw, st);
        jpb_free(&st->base);
    }
    free(v);
}

void master_ops_forget_agent(struct master *m, const char *agent_id,
                             Mesos__V1__OperationState state)
{
    size_t n;
    struct op **v = ops_on_agent(m, agent_id, &n);
    for (size_t i = 0; i < n; i++) {
        struct op *o = v[i];
        master_ops_count(m, o->info->type,
                         o->terminal ? -2 : (int)o->latest->state, state);
        log_info("framework %s: forgetting operation '%s' of removed agent %s",
                 o->fw_id, o->info->id->value, agent_id);
        hmap_del(m->ops->ops, o->key);
        op_free(o);
    }
    free(v);
}

/* Mesos's answer for an operation the master does not know. */
static void unknown_status(
    const struct master *m,
    const Mesos__V1__Scheduler__Call__ReconcileOperations__Operation *q,
    Mesos__V1__OperationStatus *st)
{
    const char *aid = q->agent_id != NULL ? q->agent_id->value : NULL;
    st->operation_id = q->operation_id;
    st->agent_id = q->agent_id;
    st->resource_provider_id = q->resource_provider_id;
    if (aid == NULL) {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_UNKNOWN;
        st->message = "Reconciliation: Operation is unknown and no "
                      "'agent_id' was provided";
    } else if (hmap_get(m->recovered_agents, aid) != NULL) {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_RECOVERING;
        st->message = "Reconciliation: Agent is recovered but has not "
                      "re-registered";
    } else if (hmap_get(m->gone_agents, aid) != NULL) {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_GONE_BY_OPERATOR;
        st->message = "Reconciliation: Agent marked gone by operator";
    } else if (hmap_get(m->unreachable_agents, aid) != NULL) {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_UNREACHABLE;
        st->message = "Reconciliation: Agent is unreachable";
    } else if (hmap_get(m->agents, aid) != NULL) {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_UNKNOWN;
        st->message = "Reconciliation: Operation is unknown";
    } else {
        st->state = MESOS__V1__OPERATION_STATE__OPERATION_UNKNOWN;
        st->message = "Reconciliation: Both operation and agent are unknown";
    }
}

/* Send o's latest status to fw without its uuid (not sent reliably). */
static void send_latest_unreliably(struct framework *fw, const struct op *o)
{
    Mesos__V1__OperationStatus st = *o->latest;
    st.uuid = NULL;
    send_status(fw, &st);
}

void master_op_reconcile(
    struct master *m, struct framework *fw,
    Mesos__V1__Scheduler__Call__ReconcileOperations__Operation *const *ops,
    size_t n)
{
    m->metrics.messages_reconcile_operations++;
    if (n == 0) {
        size_t pos = 0;
        void *val;
        while (hmap_next(m->ops->ops, &pos, NULL, &val)) {
            const struct op *o = val;
            if (strcmp(o->fw_id, fw->id) == 0)
                send_latest_unreliably(fw, o);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const Mesos__V1__Scheduler__Call__ReconcileOperations__Operation *q =
            ops[i];
        char *k = key_of(fw->id, q->operation_id->value);
        const struct op *o = hmap_get(m->ops->ops, k);
        free(k);
        if (o != NULL) {
            send_latest_unreliably(fw, o);
            continue;
        }
        Mesos__V1__OperationStatus st = MESOS__V1__OPERATION_STATUS__INIT;
        unknown_status(m, q, &st);
        send_status(fw, &st);
    }
}

Mesos__V1__Operation **master_op_list(const struct master *m, size_t *n)
{
    size_t count = hmap_count(m->ops->ops), i = 0;
    Mesos__V1__Operation **list = xcalloc(count ? count : 1, sizeof(*list));
    size_t pos = 0;
    void *val;
    while (hmap_next(m->ops->ops, &pos, NULL, &val) && i < count) {
        const struct op *o = val;
        Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
        fid.value = o->fw_id;
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        aid.value = o->agent_id;
        Mesos__V1__UUID u = MESOS__V1__UUID__INIT;
        u.value.data = (uint8_t *)o->uuid;
        u.value.len = sizeof(o->uuid);
        Mesos__V1__OperationStatus *statuses[1] = {o->latest};
        Mesos__V1__Operation op = MESOS__V1__OPERATION__INIT;
        op.framework_id = &fid;
        op.agent_id = &aid;
        op.info = o->info;
        op.latest_status = o->latest;
        /* The statuses sent reliably: the terminal one, once there. */
        op.statuses = statuses;
        op.n_statuses = o->terminal ? 1 : 0;
        op.uuid = &u;
        list[i++] = jpb_copy(&mesos__v1__operation__descriptor, &op.base);
    }
    *n = i;
    return list;
}
