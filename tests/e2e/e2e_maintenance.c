/*
 * End-to-end tests of maintenance: the real master and agents, frameworks on
 * libofferd, the operator over HTTP (the legacy endpoints and /api/v1). The
 * scenario of Mesos's maintenance design: a task runs; a schedule in the
 * future makes its machine DRAINING; the framework gets inverse offers,
 * declines, gets them again after its filter, accepts; /maintenance/status
 * shows each answer; offers carry the unavailability; machine down removes
 * the agent and ends the task; the agent may not return until machine up.
 * Also: invalid schedules, master restarts between steps, agent draining.
 */
#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "harness_fw.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/scheduler.h"

#define HOST "maint1"

static int64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- The cluster ------------------------------------------------------------
 */

static struct e2e_proc master, agent;
static struct event_base *base;
static const char *const MASTER_FLAGS[] = {"--allocation_interval=50ms", NULL};
static const char *const AGENT_FLAGS[] = {"--resources=cpus:2;mem:512",
                                          "--hostname=" HOST, NULL};

static void start_agent(void)
{
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
}

/* What the agent logs when the master refuses it because its machine is
 * down, and because it was marked gone. */
#define REFUSED_DOWN "is down for maintenance"
#define REFUSED_GONE "was marked gone"

static void cluster_start(void)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    start_agent();
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    base = event_base_new();
}

static void cluster_stop(void)
{
    if (base != NULL)
        event_base_free(base);
    base = NULL;
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* ---- HTTP helpers
 * -------------------------------------------------------------
 */

/* A request to the master; returns the status, the body in *body (malloc'd,
 * may be NULL). */
static int request(const char *method, const char *path, const char *ct,
                   const char *data, char **body)
{
    char h[128];
    snprintf(h, sizeof(h), "Content-Type: %s", ct != NULL ? ct : "");
    const char *headers[] = {ct != NULL ? h : NULL, NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(master.port, method, path, headers, data,
                              data != NULL ? strlen(data) : 0, 10000, &r),
                     0);
    int status = r.status;
    if (body != NULL)
        *body = strdup(r.body);
    e2e_response_free(&r);
    return status;
}

static json_t *get_json(const char *path)
{
    char *body = NULL;
    int st = request("GET", path, NULL, NULL, &body);
    ck_assert_int_eq(st, 200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_msg(j != NULL, "%s: not JSON: %s", path, body);
    free(body);
    return j;
}

static int post(const char *path, const char *data)
{
    char *body = NULL;
    int st = request("POST", path, "application/json", data, &body);
    if (st != 200)
        fprintf(stderr, "POST %s: %d %s", path, st, body);
    free(body);
    return st;
}

/* A schedule of one window holding machine (hostname, ip) from start for
 * an hour. */
static char *schedule_json(const char *hostname, const char *ip,
                           int64_t start_ns)
{
    char *s = NULL;
    int n = asprintf(&s,
                     "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"%s\","
                     "\"ip\":\"%s\"}],\"unavailability\":{\"start\":{"
                     "\"nanoseconds\":%lld},\"duration\":{\"nanoseconds\":"
                     "3600000000000}}}]}",
                     hostname, ip, (long long)start_ns);
    ck_assert_int_gt(n, 0);
    return s;
}

static const char *MACHINE =
    "[{\"hostname\":\"" HOST "\",\"ip\":\"127.0.0.1\"}]";

/* The status of framework fw_id's answer for HOST in /maintenance/status,
 * or NULL. */
static char *answer_of(const char *fw_id)
{
    json_t *j = get_json("/maintenance/status");
    char *out = NULL;
    size_t i, k;
    json_t *dm, *st;
    json_array_foreach(json_object_get(j, "draining_machines"), i, dm)
    {
        json_array_foreach(json_object_get(dm, "statuses"), k, st)
        {
            const char *id = json_string_value(
                json_object_get(json_object_get(st, "framework_id"), "value"));
            if (id != NULL && strcmp(id, fw_id) == 0)
                out = strdup(json_string_value(json_object_get(st, "status")));
        }
    }
    json_decref(j);
    return out;
}

/* ---- A framework
 * ------------------------------------------------------------------
 */

struct fw {
    struct offerd_sched *s;
    char id[128];
    bool subscribed;
    int subscriptions;
    bool partition_aware;
    const char *task_id; /* launch this task on the next offer, once */
    bool launched;
    int task_state;
    int task_reason;
    int inverse_offers;
    char io_id[128];
    int64_t io_start_ns;
    int offers;
    int offers_with_unav;
    int64_t offer_unav_start_ns;
};

static void on_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    (void)s;
    (void)hb;
    (void)ev;
    struct fw *f = user;
    snprintf(f->id, sizeof(f->id), "%s", framework_id);
    f->subscribed = true;
    f->subscriptions++;
}

static void launch(struct fw *f, const Mesos__V1__Offer *o)
{
    static struct hfw_launches l;
    const char *cmd = "sleep 60";
    ck_assert_int_eq(
        hfw_pack_launches(&l, o, "cpus:0.1;mem:16", &f->task_id, &cmd, 1, 0),
        1);
    const char *oid = o->id->value;
    ck_assert_int_eq(offerd_sched_accept(f->s, &oid, 1, l.ops, 1, NULL), 0);
    hfw_launches_clear(&l);
    f->launched = true;
}

static void on_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    struct fw *f = user;
    for (size_t i = 0; i < ev->offers->n_offers; i++) {
        const Mesos__V1__Offer *o = ev->offers->offers[i];
        f->offers++;
        if (o->unavailability != NULL) {
            f->offers_with_unav++;
            f->offer_unav_start_ns = o->unavailability->start->nanoseconds;
        }
        if (f->task_id != NULL && !f->launched) {
            launch(f, o);
            continue;
        }
        Mesos__V1__Filters flt = MESOS__V1__FILTERS__INIT;
        flt.has_refuse_seconds = 1;
        flt.refuse_seconds = 0.2;
        const char *oid = o->id->value;
        ck_assert_int_eq(offerd_sched_decline(s, &oid, 1, &flt), 0);
    }
}

static void on_inverse_offers(struct offerd_sched *s,
                              const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct fw *f = user;
    for (size_t i = 0; i < ev->inverse_offers->n_inverse_offers; i++) {
        const Mesos__V1__InverseOffer *io =
            ev->inverse_offers->inverse_offers[i];
        f->inverse_offers++;
        snprintf(f->io_id, sizeof(f->io_id), "%s", io->id->value);
        f->io_start_ns = io->unavailability->start->nanoseconds;
    }
}

static void on_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    struct fw *f = user;
    f->task_state = (int)ev->update->status->state;
    f->task_reason =
        ev->update->status->has_reason ? (int)ev->update->status->reason : -1;
}

static void fw_start(struct fw *f, bool partition_aware)
{
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "e2e";
    fi.name = "maintenance";
    Mesos__V1__FrameworkInfo__Capability cap =
        MESOS__V1__FRAMEWORK_INFO__CAPABILITY__INIT;
    Mesos__V1__FrameworkInfo__Capability *caps[1] = {&cap};
    if (partition_aware) {
        cap.has_type = 1;
        cap.type = MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__PARTITION_AWARE;
        fi.n_capabilities = 1;
        fi.capabilities = caps;
    }
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master_host = "127.0.0.1";
    o.master_port = master.port;
    o.encoding = OFFERD_ENCODING_JSON;
    o.framework_info = &fi;
    o.user = f;
    o.auto_acknowledge = true;
    o.backoff_min_ms = 100;
    o.backoff_max_ms = 500;
    o.callbacks.subscribed = on_subscribed;
    o.callbacks.offers = on_offers;
    o.callbacks.inverse_offers = on_inverse_offers;
    o.callbacks.update = on_update;
    char err[256];
    f->s = offerd_sched_new(base, &o, err, sizeof(err));
    ck_assert_msg(f->s != NULL, "%s", err);
    f->task_state = -1;
    ck_assert_int_eq(offerd_sched_start(f->s), 0);
}

static bool cond_running(void *arg)
{
    return ((struct fw *)arg)->task_state ==
           MESOS__V1__TASK_STATE__TASK_RUNNING;
}

static int want_ios;
static bool cond_ios(void *arg)
{
    return ((struct fw *)arg)->inverse_offers >= want_ios;
}

static bool cond_unav_offer(void *arg)
{
    return ((struct fw *)arg)->offers_with_unav > 0;
}

static bool cond_task_ended(void *arg)
{
    int st = ((struct fw *)arg)->task_state;
    return st != MESOS__V1__TASK_STATE__TASK_RUNNING &&
           st != MESOS__V1__TASK_STATE__TASK_STARTING && st != -1;
}

static void answer(struct fw *f, bool accept, double refuse_secs)
{
    Mesos__V1__Filters flt = MESOS__V1__FILTERS__INIT;
    flt.has_refuse_seconds = 1;
    flt.refuse_seconds = refuse_secs;
    const char *id = f->io_id;
    if (accept)
        ck_assert_int_eq(offerd_sched_accept_inverse_offers(f->s, &id, 1, &flt),
                         0);
    else
        ck_assert_int_eq(
            offerd_sched_decline_inverse_offers(f->s, &id, 1, &flt), 0);
}

struct answer_wait {
    struct fw *f;
    const char *want;
    char got[64]; /* the answer last read; "(none)" when absent */
};

static bool cond_answer(void *arg)
{
    struct answer_wait *a = arg;
    char *got = answer_of(a->f->id);
    snprintf(a->got, sizeof(a->got), "%s", got != NULL ? got : "(none)");
    free(got);
    return strcmp(a->got, a->want) == 0;
}

/* Wait (running the loop) until fw's answer in /maintenance/status is
 * want. */
static void wait_answer(struct fw *f, const char *want)
{
    struct answer_wait a = {f, want, ""};
    ck_assert_msg(e2e_loop_until(base, cond_answer, &a, 10000),
                  "status of %s: %s, want %s", f->id, a.got, want);
}

/* Both frameworks (arg: an array of two) have subscribed twice. */
static bool cond_both_resubscribed(void *arg)
{
    struct fw *const *f = arg;
    return f[0]->subscriptions >= 2 && f[1]->subscriptions >= 2;
}

/* ---- Tests
 * --------------------------------------------------------------------
 */

/* The whole operator walk, with master restarts between steps. */
START_TEST(test_maintenance_walk)
{
    cluster_start();
    static struct fw aware = {.task_id = "pa-task", .partition_aware = true};
    static struct fw plain = {.task_id = "np-task"};
    fw_start(&aware, true);
    ck_assert(e2e_loop_until(base, cond_running, &aware, 20000));
    fw_start(&plain, false);
    ck_assert(e2e_loop_until(base, cond_running, &plain, 20000));

    /* A window starting in an hour. */
    int64_t start = wall_ns() + (int64_t)3600 * 1000000000;
    char *sched = schedule_json(HOST, "127.0.0.1", start);
    ck_assert_int_eq(post("/maintenance/schedule", sched), 200);

    /* Both frameworks are asked for the machine back. */
    want_ios = 1;
    ck_assert(e2e_loop_until(base, cond_ios, &aware, 10000));
    ck_assert(e2e_loop_until(base, cond_ios, &plain, 10000));
    ck_assert_int_eq(aware.io_start_ns, start);
    wait_answer(&aware, "UNKNOWN");

    /* Decline with a 1 s filter: recorded, then asked again. */
    answer(&aware, false, 1);
    wait_answer(&aware, "DECLINE");
    int64_t t0 = e2e_now_ms();
    want_ios = 2;
    ck_assert(e2e_loop_until(base, cond_ios, &aware, 10000));
    ck_assert_int_ge(e2e_now_ms() - t0, 500);
    /* Accept: recorded. */
    answer(&aware, true, 3600);
    wait_answer(&aware, "ACCEPT");

    /* Offers from the machine carry the unavailability. */
    ck_assert(e2e_loop_until(base, cond_unav_offer, &plain, 10000));
    ck_assert_int_eq(plain.offer_unav_start_ns, start);

    /* A restarted master keeps the schedule and the machine DRAINING. */
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    json_t *j = get_json("/maintenance/status");
    ck_assert_int_eq(json_array_size(json_object_get(j, "draining_machines")),
                     1);
    json_decref(j);
    j = get_json("/maintenance/schedule");
    json_t *posted = json_loads(sched, 0, NULL);
    ck_assert_msg(json_equal(j, posted), "schedule changed by the restart");
    json_decref(posted);
    json_decref(j);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    /* The frameworks come back (their first SUBSCRIBED since). */
    struct fw *both[2] = {&aware, &plain};
    ck_assert(e2e_loop_until(base, cond_both_resubscribed, both, 10000));
    ck_assert_int_eq(aware.subscriptions, 2);
    ck_assert_int_eq(plain.subscriptions, 2);

    /* Machine down: the agent is removed, the tasks end. */
    ck_assert_int_eq(post("/machine/down", MACHINE), 200);
    ck_assert(e2e_loop_until(base, cond_task_ended, &aware, 10000));
    ck_assert(e2e_loop_until(base, cond_task_ended, &plain, 10000));
    ck_assert_int_eq(aware.task_state,
                     MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR);
    ck_assert_int_eq(
        aware.task_reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED_BY_OPERATOR);
    ck_assert_int_eq(plain.task_state, MESOS__V1__TASK_STATE__TASK_LOST);
    ck_assert_int_eq(e2e_wait_agents(&master, 0, 10000), 0);

    /* The agent (told to shut down) comes back and is refused. */
    e2e_proc_stop(&agent, SIGKILL, 5000);
    e2e_proc_cleanup(&agent);
    start_agent();
    ck_assert_msg(e2e_wait_log(&agent, REFUSED_DOWN, 1, 10000),
                  "the agent of a DOWN machine was not refused");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);
    j = get_json("/maintenance/status");
    ck_assert_int_eq(json_array_size(json_object_get(j, "down_machines")), 1);
    json_decref(j);

    /* DOWN survives a restart too: the agent, still trying, is refused
     * by the new master as well. */
    int refusals = e2e_log_count(&agent, REFUSED_DOWN);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    j = get_json("/maintenance/status");
    ck_assert_int_eq(json_array_size(json_object_get(j, "down_machines")), 1);
    json_decref(j);
    ck_assert_msg(e2e_wait_log(&agent, REFUSED_DOWN, refusals + 1, 10000),
                  "the restarted master did not refuse the agent");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);

    /* Machine up: it leaves the schedule and the agent returns. */
    ck_assert_int_eq(post("/machine/up", MACHINE), 200);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    j = get_json("/maintenance/schedule");
    ck_assert_int_eq(json_array_size(json_object_get(j, "windows")), 0);
    json_decref(j);
    free(sched);
    offerd_sched_free(aware.s);
    offerd_sched_free(plain.s);
    cluster_stop();
}
END_TEST

/* Every invalid schedule is refused with 400 and changes nothing. */
START_TEST(test_invalid_schedules)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    char *good = schedule_json("a", "10.0.0.1", 1);
    ck_assert_int_eq(post("/maintenance/schedule", good), 200);
    const char *bad[] = {
        "{not json",
        "[]",
        "{\"windows\":\"x\"}",
        /* no machines in a window */
        "{\"windows\":[{\"machine_ids\":[],\"unavailability\":{\"start\":{"
        "\"nanoseconds\":1}}}]}",
        /* no unavailability */
        "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"a\"}]}]}",
        /* negative duration */
        "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"a\"}],"
        "\"unavailability\":{\"start\":{\"nanoseconds\":1},\"duration\":{"
        "\"nanoseconds\":-1}}}]}",
        /* a machine with neither hostname nor ip */
        "{\"windows\":[{\"machine_ids\":[{}],\"unavailability\":{\"start\":{"
        "\"nanoseconds\":1}}}]}",
        /* a bad ip */
        "{\"windows\":[{\"machine_ids\":[{\"ip\":\"300.1.1.1\"}],"
        "\"unavailability\":{\"start\":{\"nanoseconds\":1}}}]}",
        /* one machine twice (hostnames are case-insensitive) */
        "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"b\"}],"
        "\"unavailability\":{\"start\":{\"nanoseconds\":1}}},{\"machine_ids\":"
        "[{\"hostname\":\"B\"}],\"unavailability\":{\"start\":{"
        "\"nanoseconds\":2}}}]}",
    };
    json_t *before = get_json("/maintenance/schedule");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *body = NULL;
        int st = request("POST", "/maintenance/schedule", "application/json",
                         bad[i], &body);
        ck_assert_msg(st == 400, "case %zu: %d %s", i, st, body);
        ck_assert_msg(body != NULL && strlen(body) > 1, "case %zu: no reason",
                      i);
        free(body);
        json_t *now = get_json("/maintenance/schedule");
        ck_assert_msg(json_equal(before, now), "case %zu changed the schedule",
                      i);
        json_decref(now);
    }
    /* A DOWN machine may not be dropped from the schedule. */
    ck_assert_int_eq(
        post("/machine/down", "[{\"hostname\":\"a\",\"ip\":\"10.0.0.1\"}]"),
        200);
    ck_assert_int_eq(post("/maintenance/schedule", "{\"windows\":[]}"), 400);
    /* Machine lists: empty, unknown, not draining, twice. */
    ck_assert_int_eq(post("/machine/down", "[]"), 400);
    ck_assert_int_eq(post("/machine/down", "[{\"hostname\":\"zz\"}]"), 400);
    ck_assert_int_eq(
        post("/machine/down", "[{\"hostname\":\"a\",\"ip\":\"10.0.0.1\"}]"),
        400);
    ck_assert_int_eq(post("/machine/up", "[{\"hostname\":\"a\",\"ip\":"
                                         "\"10.0.0.1\"},{\"hostname\":\"A\","
                                         "\"ip\":\"10.0.0.1\"}]"),
                     400);
    ck_assert_int_eq(post("/machine/up", "{\"hostname\":\"a\"}"), 400);
    ck_assert_int_eq(
        post("/machine/up", "[{\"hostname\":\"a\",\"ip\":\"10.0.0.1\"}]"), 200);
    /* Still serving. */
    json_t *j = get_json("/maintenance/status");
    json_decref(j);
    json_decref(before);
    free(good);
    e2e_proc_cleanup(&master);
}
END_TEST

/* The same calls through /api/v1, and a schedule of 1,000 machines. */
START_TEST(test_operator_api)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    /* 1,000 machines in 10 windows. */
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf + len, cap - len,
                            "{\"type\":\"UPDATE_MAINTENANCE_SCHEDULE\","
                            "\"update_maintenance_schedule\":{\"schedule\":{"
                            "\"windows\":[");
    for (int w = 0; w < 10; w++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s{\"machine_ids\":[",
                                w ? "," : "");
        for (int i = 0; i < 100; i++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "%s{\"hostname\":\"host-%d-%d\",\"ip\":"
                                    "\"10.%d.0.%d\"}",
                                    i ? "," : "", w, i, w, i + 1);
        len += (size_t)snprintf(buf + len, cap - len,
                                "],\"unavailability\":{\"start\":{"
                                "\"nanoseconds\":%d000000000}}}",
                                w + 1);
    }
    len += (size_t)snprintf(buf + len, cap - len, "]}}}");
    int64_t t0 = e2e_now_ms();
    ck_assert_int_eq(post("/api/v1", buf), 200);
    fprintf(stderr,
            "e2e_maintenance: a schedule of 1000 machines applied in %lld "
            "ms (durable)\n",
            (long long)(e2e_now_ms() - t0));
    free(buf);

    char *body = NULL;
    ck_assert_int_eq(request("POST", "/api/v1", "application/json",
                             "{\"type\":\"GET_MAINTENANCE_STATUS\"}", &body),
                     200);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    json_t *st =
        json_object_get(json_object_get(j, "get_maintenance_status"), "status");
    ck_assert_int_eq(json_array_size(json_object_get(st, "draining_machines")),
                     1000);
    json_decref(j);

    ck_assert_int_eq(
        post("/api/v1", "{\"type\":\"START_MAINTENANCE\",\"start_maintenance\":"
                        "{\"machines\":[{\"hostname\":\"host-0-0\",\"ip\":"
                        "\"10.0.0.1\"}]}}"),
        200);
    ck_assert_int_eq(post("/api/v1",
                          "{\"type\":\"STOP_MAINTENANCE\",\"stop_maintenance\":"
                          "{\"machines\":[{\"hostname\":\"host-0-1\",\"ip\":"
                          "\"10.0.0.2\"}]}}"),
                     400);
    ck_assert_int_eq(post("/api/v1",
                          "{\"type\":\"STOP_MAINTENANCE\",\"stop_maintenance\":"
                          "{\"machines\":[{\"hostname\":\"host-0-0\",\"ip\":"
                          "\"10.0.0.1\"}]}}"),
                     200);
    ck_assert_int_eq(request("POST", "/api/v1", "application/json",
                             "{\"type\":\"GET_MAINTENANCE_SCHEDULE\"}", &body),
                     200);
    j = json_loads(body, 0, NULL);
    free(body);
    json_t *w = json_object_get(
        json_object_get(json_object_get(j, "get_maintenance_schedule"),
                        "schedule"),
        "windows");
    ck_assert_int_eq(
        json_array_size(json_object_get(json_array_get(w, 0), "machine_ids")),
        99);
    json_decref(j);
    /* Bad calls. */
    ck_assert_int_eq(post("/api/v1", "{\"type\":\"START_MAINTENANCE\"}"), 400);
    ck_assert_int_eq(post("/api/v1", "{\"type\":\"NOPE\"}"), 400);
    ck_assert_int_eq(post("/api/v1", "{\"type\":\"READ_FILE\"}"), 400);
    ck_assert_int_eq(post("/api/v1",
                          "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":"
                          "{\"agent_id\":{\"value\":\"nope\"}}}"),
                     400);
    e2e_proc_cleanup(&master);
}
END_TEST

static bool cond_killed(void *arg)
{
    return ((struct fw *)arg)->task_state == MESOS__V1__TASK_STATE__TASK_KILLED;
}

static json_t *agents_v1(void)
{
    char *body = NULL;
    ck_assert_int_eq(request("POST", "/api/v1", "application/json",
                             "{\"type\":\"GET_AGENTS\"}", &body),
                     200);
    json_t *j = json_loads(body, 0, NULL);
    free(body);
    ck_assert_ptr_nonnull(j);
    return j;
}

static const char *drain_state(json_t *agents)
{
    json_t *a = json_array_get(
        json_object_get(json_object_get(agents, "get_agents"), "agents"), 0);
    return json_string_value(
        json_object_get(json_object_get(a, "drain_info"), "state"));
}

static bool cond_drained(void *arg)
{
    (void)arg;
    json_t *j = agents_v1();
    const char *state = drain_state(j);
    bool drained = state != NULL && strcmp(state, "DRAINED") == 0;
    json_decref(j);
    return drained;
}

static bool cond_offered(void *arg)
{
    return ((struct fw *)arg)->offers > 0;
}

static bool cond_agent_exited(void *arg)
{
    (void)arg;
    return !e2e_proc_running(&agent);
}

/* DRAIN_AGENT kills the agent's tasks (grace capped), the agent is
 * DRAINED once they are acknowledged and gets no offers until
 * REACTIVATE_AGENT; with mark_gone it is removed for good. */
START_TEST(test_drain_agent)
{
    cluster_start();
    static struct fw f = {.task_id = "drained"};
    fw_start(&f, true);
    ck_assert(e2e_loop_until(base, cond_running, &f, 20000));
    json_t *j = agents_v1();
    const char *id = json_string_value(json_object_get(
        json_object_get(
            json_object_get(
                json_array_get(
                    json_object_get(json_object_get(j, "get_agents"), "agents"),
                    0),
                "agent_info"),
            "id"),
        "value"));
    char agent_id[128];
    snprintf(agent_id, sizeof(agent_id), "%s", id);
    json_decref(j);

    char call[512];
    /* google.protobuf.Duration is an object here (seconds, nanos). */
    snprintf(call, sizeof(call),
             "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{"
             "\"value\":\"%s\"},\"max_grace_period\":{\"seconds\":1}}}",
             agent_id);
    ck_assert_int_eq(post("/api/v1", call), 200);
    ck_assert(e2e_loop_until(base, cond_killed, &f, 10000));
    /* DRAINED once the kill is acknowledged (auto_acknowledge). */
    ck_assert(e2e_loop_until(base, cond_drained, NULL, 10000));
    j = agents_v1();
    ck_assert_str_eq(drain_state(j), "DRAINED");
    json_decref(j);
    j = get_json("/slaves");
    ck_assert(json_is_true(json_object_get(
        json_array_get(json_object_get(j, "slaves"), 0), "deactivated")));
    json_decref(j);
    /* No offers while drained: a window (20 allocation intervals) that
     * proves an absence, so there is nothing to wait for instead. */
    f.offers = 0;
    offerd_sched_revive(f.s, NULL, 0);
    e2e_loop_for(base, 1000);
    ck_assert_int_eq(f.offers, 0);
    /* Reactivated: offers again. */
    snprintf(call, sizeof(call),
             "{\"type\":\"REACTIVATE_AGENT\",\"reactivate_agent\":{"
             "\"agent_id\":{\"value\":\"%s\"}}}",
             agent_id);
    ck_assert_int_eq(post("/api/v1", call), 200);
    ck_assert(e2e_loop_until(base, cond_offered, &f, 5000));
    ck_assert_int_gt(f.offers, 0);

    /* Drain with mark_gone: removed (and told to shut down), for good. */
    snprintf(call, sizeof(call),
             "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{"
             "\"value\":\"%s\"},\"mark_gone\":true}}",
             agent_id);
    ck_assert_int_eq(post("/api/v1", call), 200);
    ck_assert_int_eq(e2e_wait_agents(&master, 0, 10000), 0);
    ck_assert_msg(e2e_poll_until(cond_agent_exited, NULL, 15000),
                  "the agent did not shut down when marked gone");
    /* Survives a master restart: the agent, started again with its id, is
     * refused by the new master. */
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_log(&agent, REFUSED_GONE, 1, 10000),
                  "the restarted master did not refuse the gone agent");
    ck_assert_double_eq(e2e_metric(master.port, "master/slaves_active"), 0);
    offerd_sched_free(f.s);
    cluster_stop();
}
END_TEST

static Suite *maintenance_suite(void)
{
    Suite *s = suite_create("e2e_maintenance");
    TCase *tc = tcase_create("maintenance");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_maintenance_walk);
    tcase_add_test(tc, test_invalid_schedules);
    tcase_add_test(tc, test_operator_api);
    tcase_add_test(tc, test_drain_agent);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(maintenance_suite)
