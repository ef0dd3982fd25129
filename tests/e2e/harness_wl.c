/*
 * The workload framework of the end-to-end failure tests (see harness_wl.h).
 */
#include "harness_wl.h"

#include "common/hmap.h"
#include "harness.h"
#include "harness_fw.h"
#include "mesos/v1/scheduler.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TASK_RES "cpus:0.1;mem:16"
#define TICK_MS          100
#define REC_MIN_MS       500
#define REC_MAX_MS       4000
#define REC_BATCH        256 /* tasks per RECONCILE call */

uint64_t wl_seed(const char *test_name)
{
    const char *env = getenv("OFFERD_E2E_SEED");
    uint64_t seed;
    if (env != NULL && env[0] != '\0')
        seed = strtoull(env, NULL, 0);
    else
        seed = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^
               (uint64_t)e2e_now_ms();
    fprintf(stderr, "%s: seed %llu (replay: OFFERD_E2E_SEED=%llu)\n", test_name,
            (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

uint64_t wl_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

int wl_rand_between(uint64_t *state, int lo, int hi)
{
    return lo + (int)(wl_rand(state) % (uint64_t)(hi - lo + 1));
}

static const char *state_name(int st)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__task_state__descriptor, st);
    return v != NULL ? v->name : "?";
}

struct wl_task *wl_find(struct wl *w, const char *id)
{
    void *v = hmap_get(w->by_id, id);
    return v != NULL ? &w->tasks[(intptr_t)v - 1] : NULL;
}

int wl_queued(const struct wl *w)
{
    return w->nqueue;
}

int wl_terminal_count(const struct wl *w)
{
    int n = 0;
    for (int i = 0; i < w->ntasks; i++)
        n += w->tasks[i].launched && w->tasks[i].first_terminal >= 0;
    return n;
}

/* ---- Reconciliation ---- */

/* Reconcile t soon, with the backoff starting again. */
static void reconcile_soon(struct wl_task *t, int64_t now)
{
    t->rec_backoff_ms = REC_MIN_MS;
    if (t->rec_due_ms == 0 || t->rec_due_ms > now)
        t->rec_due_ms = now;
}

/* Send the explicit reconciliations that are due (non-terminal launched
 * tasks), in calls of at most REC_BATCH tasks. */
static void reconcile_due(struct wl *w, int64_t now)
{
    if (!w->subscribed)
        return;
    struct offerd_reconcile_task batch[REC_BATCH];
    size_t n = 0;
    for (int i = 0; i < w->ntasks; i++) {
        struct wl_task *t = &w->tasks[i];
        if (!t->launched || t->first_terminal >= 0 || t->rec_due_ms == 0 ||
            t->rec_due_ms > now)
            continue;
        batch[n].task_id = t->id;
        batch[n].agent_id = t->agent_id[0] != '\0' ? t->agent_id : NULL;
        n++;
        t->rec_due_ms = now + t->rec_backoff_ms;
        t->rec_backoff_ms = t->rec_backoff_ms * 2 > REC_MAX_MS
                                ? REC_MAX_MS
                                : t->rec_backoff_ms * 2;
        if (n == REC_BATCH) {
            if (offerd_sched_reconcile(w->s, batch, n) == 0)
                w->reconcile_calls++;
            n = 0;
        }
    }
    if (n > 0 && offerd_sched_reconcile(w->s, batch, n) == 0)
        w->reconcile_calls++;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct wl *w = arg;
    int64_t now = e2e_now_ms();
    reconcile_due(w, now);
    /* Offers may have been filtered while the queue was empty: ask again
     * now and then while tasks wait. */
    if (w->subscribed && w->nqueue > 0 && now - w->last_revive_ms > 1000 &&
        offerd_sched_revive(w->s, NULL, 0) == 0)
        w->last_revive_ms = now;
}

/* ---- Callbacks ---- */

static void on_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    (void)s;
    (void)hb;
    (void)ev;
    struct wl *w = user;
    snprintf(w->id, sizeof(w->id), "%s", framework_id);
    w->subscribed = true;
    w->subscriptions++;
    /* As Mesos advises: reconcile every non-terminal task after each
     * (re-)subscription. */
    int64_t now = e2e_now_ms();
    for (int i = 0; i < w->ntasks; i++)
        if (w->tasks[i].launched && w->tasks[i].first_terminal < 0)
            reconcile_soon(&w->tasks[i], now);
    reconcile_due(w, now);
    if (w->nqueue > 0 && offerd_sched_revive(w->s, NULL, 0) == 0)
        w->last_revive_ms = now;
}

static void on_disconnected(struct offerd_sched *s, const char *reason,
                            bool will_retry, void *user)
{
    (void)s;
    (void)reason;
    (void)will_retry;
    ((struct wl *)user)->subscribed = false;
}

static void on_call_failed(struct offerd_sched *s, int call_type, int status,
                           const char *reason, void *user)
{
    (void)s;
    (void)call_type;
    (void)status;
    (void)reason;
    ((struct wl *)user)->call_failures++;
}

static void decline(struct wl *w, const char *offer_id, double secs)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = secs;
    const char *ids[1] = {offer_id};
    offerd_sched_decline(w->s, ids, 1, &filters);
}

/* Launch as many queued tasks as fit in the offer, in one ACCEPT. */
static void launch_on(struct wl *w, const Mesos__V1__Offer *offer)
{
    const char *ids[HFW_MAX_PER_ACCEPT], *cmds[HFW_MAX_PER_ACCEPT];
    int want = 0;
    for (; want < w->nqueue && want < HFW_MAX_PER_ACCEPT; want++) {
        const struct wl_task *t = &w->tasks[w->queue[want]];
        ids[want] = t->id;
        cmds[want] = t->command;
    }
    static struct hfw_launches l;
    int n = hfw_pack_launches(&l, offer,
                              w->task_res ? w->task_res : DEFAULT_TASK_RES, ids,
                              cmds, want, 0);
    const char *oid = offer->id->value;
    if (n == 0) {
        decline(w, oid, 1);
        return;
    }
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 0.05;
    /* Sent is launched, for the framework: whether the master got the
     * ACCEPT or not, reconciliation tells. */
    int rc = offerd_sched_accept(w->s, &oid, 1, l.ops, (size_t)n, &filters);
    hfw_launches_clear(&l);
    if (rc != 0)
        return; /* not sent (not subscribed): the tasks stay queued */
    int64_t now = e2e_now_ms();
    for (int i = 0; i < n; i++) {
        struct wl_task *t = &w->tasks[w->queue[i]];
        t->launched = true;
        snprintf(t->agent_id, sizeof(t->agent_id), "%s",
                 offer->agent_id->value);
        /* A first explicit reconciliation later on, in case neither the
         * ACCEPT nor anything after it reaches anyone. */
        t->rec_backoff_ms = REC_MAX_MS;
        t->rec_due_ms = now + REC_MAX_MS;
    }
    memmove(w->queue, w->queue + n, (size_t)(w->nqueue - n) * sizeof(int));
    w->nqueue -= n;
    if (w->on_accept != NULL)
        w->on_accept(w, w->hook_arg);
}

static void on_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct wl *w = user;
    for (size_t i = 0; i < ev->offers->n_offers; i++) {
        const Mesos__V1__Offer *o = ev->offers->offers[i];
        if (w->nqueue > 0)
            launch_on(w, o);
        else
            decline(w, o->id->value, 2);
    }
}

static bool seen_uuid(struct wl_task *t, const uint8_t *uuid)
{
    int kept = t->nuuids < WL_MAX_UUIDS ? t->nuuids : WL_MAX_UUIDS;
    for (int i = 0; i < kept; i++)
        if (memcmp(t->uuids[i], uuid, 16) == 0)
            return true;
    if (t->nuuids < WL_MAX_UUIDS)
        memcpy(t->uuids[t->nuuids], uuid, 16);
    t->nuuids++;
    return false;
}

static void capture_answer(struct wl *w, const Mesos__V1__TaskStatus *st)
{
    if (strcmp(st->task_id->value, w->sentinel) == 0) {
        w->sentinel_seen = true;
        w->capturing = false;
        return;
    }
    /* Periodic explicit reconciliations may answer for a task too: keep
     * one answer per task, the latest. */
    struct wl_answer *a = NULL;
    for (int i = 0; i < w->nanswers && a == NULL; i++)
        if (strcmp(w->answers[i].task_id, st->task_id->value) == 0)
            a = &w->answers[i];
    if (a == NULL) {
        ck_assert_int_lt(w->nanswers, WL_MAX_TASKS);
        a = &w->answers[w->nanswers++];
    }
    snprintf(a->task_id, sizeof(a->task_id), "%s", st->task_id->value);
    snprintf(a->agent_id, sizeof(a->agent_id), "%s",
             st->agent_id != NULL ? st->agent_id->value : "");
    a->state = (int)st->state;
}

static void on_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct wl *w = user;
    const Mesos__V1__TaskStatus *st = ev->update->status;
    bool has_uuid = st->has_uuid && st->uuid.len == 16;
    bool answer =
        !has_uuid && st->has_reason &&
        st->reason == MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION;
    if (w->capturing && answer) {
        capture_answer(w, st);
        if (!w->capturing)
            return; /* the sentinel */
    }
    struct wl_task *t = wl_find(w, st->task_id->value);
    if (t == NULL) {
        if (strncmp(st->task_id->value, "wl-sentinel-", 12) == 0)
            return;
        if (w->unknown_updates++ == 0)
            snprintf(w->unknown_id, sizeof(w->unknown_id), "%s",
                     st->task_id->value);
        return;
    }
    t->nupdates++;
    if (has_uuid && seen_uuid(t, st->uuid.data))
        return; /* a retried update: allowed, changes nothing */
    int state = (int)st->state;
    if (st->has_reason &&
        st->reason == MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REREGISTERED)
        t->reregistered++;
    if (task_state_is_terminal(state)) {
        if (t->first_terminal < 0) {
            t->first_terminal = state;
            t->state = state;
            if (w->on_terminal != NULL)
                w->on_terminal(w, t, w->hook_arg);
        } else if (state != t->first_terminal) {
            if (answer) {
                t->stale_answers++;
            } else if (t->conflicts++ == 0) {
                t->conflict_state = state;
                fprintf(stderr, "wl: task %s: %s after %s (%s)\n", t->id,
                        state_name(state), state_name(t->first_terminal),
                        st->message != NULL ? st->message : "");
            }
        }
        if (has_uuid && state == t->first_terminal && !t->terminal_from_agent) {
            t->terminal_from_agent = true;
            snprintf(t->terminal_msg, sizeof(t->terminal_msg), "%s",
                     st->message != NULL ? st->message : "");
            t->terminal_reason = st->has_reason ? (int)st->reason : -1;
        }
        return;
    }
    if (t->first_terminal >= 0) {
        /* A non-terminal state after the terminal one: a late answer, or
         * an update out of order. */
        if (answer) {
            t->stale_answers++;
        } else {
            t->regressions++;
            fprintf(stderr, "wl: task %s: %s (%s) after %s\n", t->id,
                    state_name(state), has_uuid ? "new uuid" : "no uuid",
                    state_name(t->first_terminal));
        }
        return;
    }
    t->state = state;
    if (state == MESOS__V1__TASK_STATE__TASK_UNREACHABLE) {
        t->unreachable++;
        if (!answer)
            reconcile_soon(t, e2e_now_ms());
    }
}

static void on_error(struct offerd_sched *s,
                     const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    (void)ev;
    ((struct wl *)user)->errors++;
}

/* ---- Life ---- */

static bool cond_subscribed(void *arg)
{
    return ((struct wl *)arg)->subscribed;
}

/* A client of w against 127.0.0.1:master_port, subscribing with w->id
 * when w has one (a failover to that master). */
static void new_client(struct wl *w, uint16_t master_port)
{
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    if (w->id[0] != '\0') {
        fid.value = w->id;
        fi.id = &fid;
    }
    fi.user = "e2e";
    fi.name = (char *)(w->name != NULL ? w->name : "e2e-workload");
    fi.has_failover_timeout = 1;
    fi.failover_timeout = 600;
    Mesos__V1__FrameworkInfo__Capability cap =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__INIT;
    cap.has_type = 1;
    cap.type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__PARTITION_AWARE;
    Mesos__V1__FrameworkInfo__Capability *caps[1] = {&cap};
    if (w->partition_aware) {
        fi.n_capabilities = 1;
        fi.capabilities = caps;
    }
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master_host = "127.0.0.1";
    o.master_port = master_port;
    o.encoding = OFFERD_ENCODING_PROTOBUF;
    o.framework_info = &fi;
    o.user = w;
    o.auto_acknowledge = true;
    o.backoff_min_ms = 100;
    o.backoff_max_ms = 500;
    o.max_subscribe_refusals = -1;
    o.call_timeout_ms = 10000;
    o.callbacks.subscribed = on_subscribed;
    o.callbacks.disconnected = on_disconnected;
    o.callbacks.offers = on_offers;
    o.callbacks.update = on_update;
    o.callbacks.error = on_error;
    o.callbacks.call_failed = on_call_failed;
    char err[256];
    w->s = offerd_sched_new(w->base, &o, err, sizeof(err));
    ck_assert_msg(w->s != NULL, "offerd_sched_new: %s", err);
    ck_assert_int_eq(offerd_sched_start(w->s), 0);
    ck_assert_msg(e2e_loop_until(w->base, cond_subscribed, w, 20000),
                  "framework %s did not subscribe", fi.name);
}

void wl_start(struct wl *w, struct event_base *base, uint16_t master_port)
{
    w->base = base;
    w->by_id = hmap_new();
    w->tick = event_new(base, -1, EV_PERSIST, on_tick, w);
    struct timeval tv = {0, TICK_MS * 1000};
    event_add(w->tick, &tv);
    new_client(w, master_port);
}

void wl_move(struct wl *w, uint16_t master_port)
{
    offerd_sched_free(w->s);
    w->s = NULL;
    w->subscribed = false;
    new_client(w, master_port);
}

void wl_free(struct wl *w)
{
    if (w->tick != NULL)
        event_free(w->tick);
    w->tick = NULL;
    offerd_sched_free(w->s);
    w->s = NULL;
    w->subscribed = false;
    hmap_free(w->by_id, NULL);
    w->by_id = NULL;
}

int wl_add(struct wl *w, const char *id, const char *command, int exit_code)
{
    ck_assert_int_lt(w->ntasks, WL_MAX_TASKS);
    ck_assert_ptr_null(wl_find(w, id));
    int idx = w->ntasks++;
    struct wl_task *t = &w->tasks[idx];
    memset(t, 0, sizeof(*t));
    ck_assert_uint_lt(strlen(id), sizeof(t->id));
    ck_assert_uint_lt(strlen(command), sizeof(t->command));
    snprintf(t->id, sizeof(t->id), "%s", id);
    snprintf(t->command, sizeof(t->command), "%s", command);
    t->exit_code = exit_code;
    t->state = -1;
    t->first_terminal = -1;
    t->terminal_reason = -1;
    hmap_put(w->by_id, t->id, (void *)(intptr_t)(idx + 1));
    w->queue[w->nqueue++] = idx;
    if (w->nqueue == 1 && w->subscribed &&
        offerd_sched_revive(w->s, NULL, 0) == 0)
        w->last_revive_ms = e2e_now_ms();
    return idx;
}

void wl_kill(struct wl *w, struct wl_task *t)
{
    if (t->kill_sent)
        return;
    ck_assert_int_eq(offerd_sched_kill(w->s, t->id,
                                       t->agent_id[0] ? t->agent_id : NULL,
                                       NULL),
                     0);
    t->kill_sent = true;
}

/* ---- Implicit reconciliation ---- */

static bool cond_no_calls(void *arg)
{
    return offerd_sched_pending_calls(((struct wl *)arg)->s) == 0;
}

static bool cond_sentinel(void *arg)
{
    return ((struct wl *)arg)->sentinel_seen;
}

void wl_implicit_reconcile(struct wl *w, const char *agent_id, int timeout_ms)
{
    ck_assert_msg(w->subscribed, "implicit reconciliation: not subscribed");
    /* Nothing of ours in flight, so the answers to come are the ones asked
     * for here. */
    ck_assert(e2e_loop_until(w->base, cond_no_calls, w, timeout_ms));
    w->nanswers = 0;
    w->sentinel_seen = false;
    snprintf(w->sentinel, sizeof(w->sentinel), "wl-sentinel-%d",
             w->nsentinels++);
    w->capturing = true;
    ck_assert_int_eq(offerd_sched_reconcile(w->s, NULL, 0), 0);
    /* The master queues every answer on the stream before its 202; the
     * sentinel's answer is queued after them. */
    ck_assert(e2e_loop_until(w->base, cond_no_calls, w, timeout_ms));
    struct offerd_reconcile_task st = {w->sentinel, agent_id};
    ck_assert_int_eq(offerd_sched_reconcile(w->s, &st, 1), 0);
    bool ok = e2e_loop_until(w->base, cond_sentinel, w, timeout_ms);
    w->capturing = false;
    ck_assert_msg(ok, "no answer to the reconciliation of %s", w->sentinel);
}

/* ---- Agents' reports ---- */

void wl_agent_id(uint16_t agent_port, char *out, size_t outlen)
{
    json_t *j = e2e_get_json(agent_port, "/state");
    const char *id = json_string_value(json_object_get(j, "id"));
    snprintf(out, outlen, "%s", id != NULL ? id : "");
    json_decref(j);
}

static int add_agent_tasks(json_t *list, bool completed, const char *agent_id,
                           struct wl_agent_task *out, int n, int max)
{
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t)
    {
        if (n < max) {
            struct wl_agent_task *a = &out[n];
            const char *id = json_string_value(json_object_get(t, "id"));
            const char *fw =
                json_string_value(json_object_get(t, "framework_id"));
            const char *st = json_string_value(json_object_get(t, "state"));
            snprintf(a->task_id, sizeof(a->task_id), "%s", id ? id : "");
            snprintf(a->framework_id, sizeof(a->framework_id), "%s",
                     fw ? fw : "");
            snprintf(a->agent_id, sizeof(a->agent_id), "%s", agent_id);
            snprintf(a->state, sizeof(a->state), "%s", st ? st : "");
            a->completed = completed;
        }
        n++;
    }
    return n;
}

int wl_agent_tasks(uint16_t agent_port, struct wl_agent_task *out, int max)
{
    json_t *j = e2e_get_json(agent_port, "/state");
    if (j == NULL)
        return -1;
    const char *aid = json_string_value(json_object_get(j, "id"));
    int n = 0;
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(j, "frameworks"), i, f)
    {
        json_array_foreach(json_object_get(f, "executors"), k, e)
        {
            n = add_agent_tasks(json_object_get(e, "tasks"), false,
                                aid ? aid : "", out, n, max);
            n = add_agent_tasks(json_object_get(e, "queued_tasks"), false,
                                aid ? aid : "", out, n, max);
            n = add_agent_tasks(json_object_get(e, "completed_tasks"), true,
                                aid ? aid : "", out, n, max);
        }
    }
    json_decref(j);
    return n;
}

static struct wl_agent_task agent_seen[WL_MAX_TASKS];

void wl_check_agreement(struct wl *w, const uint16_t *agent_ports, int nagents,
                        const char *agent_id, int want_live)
{
    int n = 0;
    for (int a = 0; a < nagents; a++) {
        int got =
            wl_agent_tasks(agent_ports[a], agent_seen + n, WL_MAX_TASKS - n);
        ck_assert_msg(got >= 0, "agent on port %u: no /state",
                      (unsigned)agent_ports[a]);
        ck_assert_int_le(got, WL_MAX_TASKS - n);
        n += got;
    }
    wl_implicit_reconcile(w, agent_id, 20000);

    /* Every task the master answers for is known to the framework and held
     * by the agent it names, in the same state, which is also the
     * framework's. */
    int live = 0;
    for (int i = 0; i < w->nanswers; i++) {
        const struct wl_answer *ans = &w->answers[i];
        const struct wl_task *t = wl_find(w, ans->task_id);
        ck_assert_msg(t != NULL,
                      "the master reports task %s, unknown to the framework",
                      ans->task_id);
        const struct wl_agent_task *held = NULL;
        for (int k = 0; k < n; k++)
            if (strcmp(agent_seen[k].task_id, ans->task_id) == 0 &&
                strcmp(agent_seen[k].framework_id, w->id) == 0)
                held = &agent_seen[k];
        ck_assert_msg(held != NULL,
                      "the master reports task %s %s on %s; no agent holds it",
                      ans->task_id, state_name(ans->state), ans->agent_id);
        ck_assert_msg(strcmp(held->agent_id, ans->agent_id) == 0,
                      "task %s: the master says agent %s, agent %s holds it",
                      ans->task_id, ans->agent_id, held->agent_id);
        ck_assert_msg(strcmp(held->state, state_name(ans->state)) == 0,
                      "task %s: the master says %s, its agent %s", ans->task_id,
                      state_name(ans->state), held->state);
        ck_assert_msg(t->state == ans->state,
                      "task %s: the master says %s, the framework believes %s",
                      ans->task_id, state_name(ans->state),
                      state_name(t->state));
        live += !task_state_is_terminal(ans->state);
    }
    /* Every task of the framework an agent holds is answered for. */
    for (int k = 0; k < n; k++) {
        if (strcmp(agent_seen[k].framework_id, w->id) != 0)
            continue;
        bool answered = false;
        for (int i = 0; i < w->nanswers && !answered; i++)
            answered =
                strcmp(w->answers[i].task_id, agent_seen[k].task_id) == 0;
        ck_assert_msg(answered,
                      "agent %s holds task %s (%s); the master does not "
                      "report it",
                      agent_seen[k].agent_id, agent_seen[k].task_id,
                      agent_seen[k].state);
    }
    ck_assert_msg(live == want_live,
                  "%d live tasks in the cluster, %d expected", live, want_live);
}

struct quiet {
    struct wl *w;
    const uint16_t *ports;
    int nagents, want_live;
    int64_t next_poll;
};

static bool cond_quiet(void *arg)
{
    struct quiet *q = arg;
    int64_t now = e2e_now_ms();
    if (now < q->next_poll)
        return false;
    q->next_poll = now + 250;
    if (offerd_sched_pending_calls(q->w->s) != 0 || !q->w->subscribed)
        return false;
    int live = 0;
    for (int a = 0; a < q->nagents; a++) {
        int n = wl_agent_tasks(q->ports[a], agent_seen, WL_MAX_TASKS);
        if (n < 0 || n > WL_MAX_TASKS)
            return false;
        for (int k = 0; k < n; k++) {
            if (strcmp(agent_seen[k].framework_id, q->w->id) != 0)
                continue;
            if (agent_seen[k].completed)
                return false;
            live++;
        }
    }
    return live == q->want_live;
}

bool wl_wait_quiet(struct wl *w, const uint16_t *agent_ports, int nagents,
                   int want_live, int timeout_ms)
{
    struct quiet q = {w, agent_ports, nagents, want_live, 0};
    return e2e_loop_until(w->base, cond_quiet, &q, timeout_ms);
}

/* ---- Outcomes ---- */

int wl_dump_unfinished(const struct wl *w, int *unreachable)
{
    int n = 0, u = 0;
    for (int i = 0; i < w->ntasks; i++) {
        const struct wl_task *t = &w->tasks[i];
        if (!t->launched || t->first_terminal >= 0 ||
            t->exit_code == WL_EXIT_KILLED)
            continue;
        n++;
        u += t->state == MESOS__V1__TASK_STATE__TASK_UNREACHABLE;
        fprintf(stderr, "  %s: %s on agent %s, %d updates (%d UNREACHABLE)\n",
                t->id, t->state >= 0 ? state_name(t->state) : "no update",
                t->agent_id, t->nupdates, t->unreachable);
    }
    if (unreachable != NULL)
        *unreachable = u;
    return n;
}

static bool marker_exists(const char *dir, const char *id)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, id);
    struct stat sb;
    return stat(path, &sb) == 0;
}

void wl_check_outcomes(const struct wl *w, const char *marker_dir)
{
    int by_state[32] = {0}, launched = 0, started = 0, unreachable = 0,
        reregistered = 0, stale = 0, dup = 0;
    for (int i = 0; i < w->ntasks; i++) {
        const struct wl_task *t = &w->tasks[i];
        if (!t->launched)
            continue;
        launched++;
        ck_assert_msg(t->first_terminal >= 0,
                      "task %s never reached a terminal state (last %s)", t->id,
                      t->state >= 0 ? state_name(t->state) : "none");
        ck_assert_msg(t->conflicts == 0, "task %s: %s, then %s", t->id,
                      state_name(t->first_terminal),
                      state_name(t->conflict_state));
        ck_assert_msg(t->regressions == 0,
                      "task %s: %d update(s) out of order after %s", t->id,
                      t->regressions, state_name(t->first_terminal));
        bool ran = marker_exists(marker_dir, t->id);
        int st = t->first_terminal;
        if (ran) {
            started++;
            int want = t->exit_code == WL_EXIT_KILLED
                           ? MESOS__V1__TASK_STATE__TASK_KILLED
                       : t->exit_code == 0
                           ? MESOS__V1__TASK_STATE__TASK_FINISHED
                           : MESOS__V1__TASK_STATE__TASK_FAILED;
            ck_assert_msg(st == want, "task %s (%s) ran and ended %s, not %s",
                          t->id, t->command, state_name(st), state_name(want));
            ck_assert_msg(t->terminal_from_agent,
                          "task %s: its terminal update never came from its "
                          "agent",
                          t->id);
            if (want == MESOS__V1__TASK_STATE__TASK_FAILED) {
                char msg[64];
                snprintf(msg, sizeof(msg), "Command exited with status %d",
                         t->exit_code);
                ck_assert_msg(strcmp(t->terminal_msg, msg) == 0,
                              "task %s: '%s', not '%s'", t->id, t->terminal_msg,
                              msg);
            }
        } else {
            ck_assert_msg(st == MESOS__V1__TASK_STATE__TASK_LOST ||
                              st == MESOS__V1__TASK_STATE__TASK_DROPPED ||
                              st == MESOS__V1__TASK_STATE__TASK_GONE,
                          "task %s never started but ended %s", t->id,
                          state_name(st));
        }
        if ((unsigned)st < 32)
            by_state[st]++;
        unreachable += t->unreachable > 0;
        reregistered += t->reregistered > 0;
        stale += t->stale_answers;
        dup += t->nupdates;
    }
    ck_assert_msg(w->unknown_updates == 0,
                  "%d update(s) for tasks the framework never launched "
                  "(first: %s)",
                  w->unknown_updates, w->unknown_id);
    fprintf(stderr,
            "wl: %d tasks launched, %d started; FINISHED %d, FAILED %d, "
            "KILLED %d, LOST %d, DROPPED %d, GONE %d; %d went UNREACHABLE, "
            "%d heard back after their agent re-registered; %d updates, %d "
            "late reconciliation answers; %d subscriptions, %d failed calls\n",
            launched, started, by_state[MESOS__V1__TASK_STATE__TASK_FINISHED],
            by_state[MESOS__V1__TASK_STATE__TASK_FAILED],
            by_state[MESOS__V1__TASK_STATE__TASK_KILLED],
            by_state[MESOS__V1__TASK_STATE__TASK_LOST],
            by_state[MESOS__V1__TASK_STATE__TASK_DROPPED],
            by_state[MESOS__V1__TASK_STATE__TASK_GONE], unreachable,
            reregistered, dup, stale, w->subscriptions, w->call_failures);
}

/* ---- The scenario of the failure tests ---- */

void wl_start_agent(struct e2e_proc *agent, int i, uint16_t master_port)
{
    char host[32];
    snprintf(host, sizeof(host), "--hostname=agent%d", i);
    const char *args[] = {"--resources=cpus:2;mem:512;disk:1024", host,
                          "--status_update_retry_interval_min=500ms",
                          "--status_update_retry_interval_max=2secs", NULL};
    ck_assert_int_eq(e2e_start_agent(agent, master_port, args), 0);
}

void wl_make_marker_dir(const struct e2e_proc *master, char *out, size_t outlen)
{
    int n = snprintf(out, outlen, "%s/markers", master->dir);
    ck_assert(n > 0 && (size_t)n < outlen);
    ck_assert_int_eq(mkdir(out, 0700), 0);
}

void wl_add_long(struct wl *w, int n, const char *marker_dir)
{
    for (int i = 0; i < n; i++) {
        char id[48], cmd[320];
        snprintf(id, sizeof(id), "long-%d", i);
        int k = snprintf(cmd, sizeof(cmd), "echo started > %s/%s; sleep 600",
                         marker_dir, id);
        ck_assert(k > 0 && (size_t)k < sizeof(cmd));
        wl_add(w, id, cmd, WL_EXIT_KILLED);
    }
}

void wl_add_short(struct wl *w, uint64_t *rng, const char *prefix, int i,
                  int max_tenths, const char *marker_dir)
{
    static const int codes[] = {1, 2, 3, 7, 42};
    int tenths = wl_rand_between(rng, 1, max_tenths);
    int code = wl_rand_between(rng, 0, 9) < 7 ? 0 : codes[wl_rand(rng) % 5];
    char id[48], cmd[320];
    snprintf(id, sizeof(id), "%s-%03d", prefix, i);
    int n =
        snprintf(cmd, sizeof(cmd), "echo started > %s/%s; sleep %d.%d; exit %d",
                 marker_dir, id, tenths / 10, tenths % 10, code);
    ck_assert(n > 0 && (size_t)n < sizeof(cmd));
    wl_add(w, id, cmd, code);
}

struct first_running {
    const struct wl *w;
    int n;
};

static bool cond_first_running(void *arg)
{
    const struct first_running *f = arg;
    if (f->w->ntasks < f->n)
        return false;
    for (int i = 0; i < f->n; i++)
        if (f->w->tasks[i].state != MESOS__V1__TASK_STATE__TASK_RUNNING)
            return false;
    return true;
}

bool wl_wait_first_running(struct wl *w, int n, int timeout_ms)
{
    struct first_running f = {w, n};
    return e2e_loop_until(w->base, cond_first_running, &f, timeout_ms);
}

struct terminal {
    const struct wl *w;
    int want;
};

static bool cond_terminal(void *arg)
{
    const struct terminal *t = arg;
    return wl_queued(t->w) == 0 && wl_terminal_count(t->w) == t->want;
}

bool wl_wait_terminal(struct wl *w, int want, int timeout_ms)
{
    struct terminal t = {w, want};
    return e2e_loop_until(w->base, cond_terminal, &t, timeout_ms);
}

struct recovered {
    const struct wl *w;
    uint16_t port;
    int n;
    int64_t next_read; /* the metrics are read at most every 200 ms */
};

static bool cond_recovered(void *arg)
{
    struct recovered *r = arg;
    int64_t now = e2e_now_ms();
    if (!r->w->subscribed || now < r->next_read)
        return false;
    r->next_read = now + 200;
    return e2e_metric(r->port, "master/slaves_active") == r->n;
}

bool wl_wait_recovered(struct wl *w, uint16_t master_port, int n,
                       int timeout_ms)
{
    struct recovered r = {w, master_port, n, 0};
    return e2e_loop_until(w->base, cond_recovered, &r, timeout_ms);
}

void wl_finish(struct wl *w, const uint16_t *agent_ports, int nagents,
               int nlong, const char *marker_dir)
{
    /* Master, agents and framework agree: the long tasks run, nothing
     * else is held. */
    char aid[128];
    wl_agent_id(agent_ports[0], aid, sizeof(aid));
    ck_assert_msg(wl_wait_quiet(w, agent_ports, nagents, nlong, 30000),
                  "the agents still hold ended tasks");
    wl_check_agreement(w, agent_ports, nagents, aid, nlong);

    /* The long tasks are killed; then nothing is left anywhere. */
    for (int i = 0; i < nlong; i++)
        wl_kill(w, &w->tasks[i]);
    ck_assert_msg(wl_wait_terminal(w, w->ntasks, 30000),
                  "the long tasks were not killed");
    ck_assert_msg(wl_wait_quiet(w, agent_ports, nagents, 0, 30000),
                  "the agents still hold tasks");
    wl_check_agreement(w, agent_ports, nagents, aid, 0);
    wl_check_outcomes(w, marker_dir);
    ck_assert_int_eq(w->errors, 0);
}
