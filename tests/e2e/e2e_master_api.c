/*
 * End-to-end tests of the master's APIs over loopback: a real offerd, a
 * framework and an agent scripted by the test (JSON calls through the
 * harness's blocking HTTP client, events read from their RecordIO streams).
 * They pin the wire behaviour frameworks and agents rely on: subscription,
 * offers, launch, status updates and acknowledgements, the errors Mesos
 * gives for bad calls, filters, failover, agent loss and the read endpoints.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"
#include "mesos/v1/master.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"

/* ---- Fixture
 * ---------------------------------------------------------------------- */

static struct e2e_proc master;

static void start(const char *const *extra)
{
    const char *base[] = {"--registry=in_memory",
                          "--allocation_interval=100ms",
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL,
                          NULL};
    size_t n = 2;
    for (size_t i = 0; extra != NULL && extra[i] != NULL && n < 7; i++)
        base[n++] = extra[i];
    ck_assert_int_eq(e2e_start_master(&master, base), 0);
}

static void stop(void)
{
    /* The daemon must still be serving after whatever the test did. */
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/health", NULL, NULL, 0, T, &r), 0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&master);
}

#define FW_INFO "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":60}"
#define FW_AWARE                                                               \
    "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":60,"                 \
    "\"capabilities\":[{\"type\":\"PARTITION_AWARE\"}]}"

/* ---- Tests
 * ------------------------------------------------------------------------ */

START_TEST(test_subscribe_protobuf)
{
    start(NULL);
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "pb";
    Mesos__V1__Scheduler__Call__Subscribe sub =
        MESOS__V1__SCHEDULER__CALL__SUBSCRIBE__INIT;
    sub.framework_info = &fi;
    Mesos__V1__Scheduler__Call call = MESOS__V1__SCHEDULER__CALL__INIT;
    call.has_type = true;
    call.type = MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE;
    call.subscribe = &sub;
    uint8_t buf[512];
    size_t len = mesos__v1__scheduler__call__pack(&call, buf);
    const char *headers[] = {"Content-Type: application/x-protobuf", NULL};
    struct e2e_stream s;
    ck_assert_int_eq(e2e_stream_open(master.port, "POST", "/api/v1/scheduler",
                                     headers, buf, len, T, &s),
                     0);
    ck_assert_int_eq(s.head.status, 200);
    ck_assert_str_eq(e2e_response_header(&s.head, "Content-Type"),
                     "application/x-protobuf");
    char *data;
    size_t dlen;
    ck_assert_int_eq(e2e_stream_next(&s, T, &data, &dlen), 1);
    char *nl = memchr(data, '\n', dlen);
    ck_assert_ptr_nonnull(nl);
    size_t rlen = strtoul(data, NULL, 10);
    ck_assert_uint_eq(rlen, dlen - (size_t)(nl + 1 - data));
    Mesos__V1__Scheduler__Event *ev =
        mesos__v1__scheduler__event__unpack(NULL, rlen, (uint8_t *)nl + 1);
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_eq(ev->type, MESOS__V1__SCHEDULER__EVENT__TYPE__SUBSCRIBED);
    ck_assert_ptr_nonnull(ev->subscribed->framework_id);
    mesos__v1__scheduler__event__free_unpacked(ev, NULL);
    free(data);
    e2e_stream_close(&s);
    stop();
}
END_TEST

/* A scheduler call and the status it should get (call_answers). */
struct call_status {
    uint16_t port;
    const char *stream_id, *body;
    int want;
    int last; /* the status of the last attempt */
};

static bool call_answers(void *arg)
{
    struct call_status *c = arg;
    c->last =
        api_post(c->port, "/api/v1/scheduler", c->stream_id, c->body, NULL, 0);
    return c->last == c->want;
}

START_TEST(test_bad_calls)
{
    start(NULL);
    char reason[512];
    uint16_t p = master.port;
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", NULL, "garbage", reason,
                              sizeof(reason)),
                     400);
    ck_assert_ptr_nonnull(strstr(reason, "invalid JSON"));
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", NULL,
                              "{\"type\":\"NOPE\"}", reason, sizeof(reason)),
                     400);
    ck_assert_ptr_nonnull(strstr(reason, "type"));
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", NULL, "{\"type\":99}",
                              reason, sizeof(reason)),
                     400);
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", NULL,
                              "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                              "\"framework_info\":{\"name\":\"x\"}}}",
                              reason, sizeof(reason)),
                     400);
    ck_assert_ptr_nonnull(strstr(reason, "framework_info.user"));
    /* Roles: MULTI_ROLE rules and role names. */
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", NULL,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                 "\"framework_info\":{\"user\":\"u\",\"name\":\"x\","
                 "\"roles\":[\"a\"]}}}",
                 reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "MULTI_ROLE"));
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", NULL,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                 "\"framework_info\":{\"user\":\"u\",\"name\":\"x\","
                 "\"role\":\"../x\"}}}",
                 reason, sizeof(reason)),
        400);
    /* Wrong media types. */
    const char *h415[] = {"Content-Type: text/plain", NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(p, "POST", "/api/v1/scheduler", h415, "{}", 2, T, &r), 0);
    ck_assert_int_eq(r.status, 415);
    e2e_response_free(&r);
    const char *h406[] = {"Content-Type: application/json", "Accept: text/html",
                          NULL};
    ck_assert_int_eq(
        e2e_http(p, "POST", "/api/v1/scheduler", h406, "{}", 2, T, &r), 0);
    ck_assert_int_eq(r.status, 406);
    e2e_response_free(&r);

    struct conn fw;
    api_subscribe_framework(&fw, p, FW_INFO);
    /* Calls without framework id, of an unknown framework, without or
     * with a wrong stream id. */
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", fw.stream_id,
                              "{\"type\":\"REVIVE\"}", NULL, 0),
                     400);
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", fw.stream_id,
                 "{\"type\":\"REVIVE\",\"framework_id\":{\"value\":"
                 "\"nope\"}}",
                 reason, sizeof(reason)),
        400);
    char body[512];
    snprintf(body, sizeof(body),
             "{\"type\":\"REVIVE\",\"framework_id\":{\"value\":\"%s\"}}",
             fw.id);
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", NULL, body, reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "Mesos-Stream-Id"));
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", "wrong", body, NULL, 0),
                     400);
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", fw.stream_id, body, NULL, 0), 202);
    /* REVIVE of a role the framework does not have. */
    ck_assert_int_eq(
        api_fw_call(&fw, p, "REVIVE", "revive", "{\"roles\":[\"x\"]}"), 400);
    /* ACKNOWLEDGE with a bad uuid. */
    ck_assert_int_eq(api_fw_call(&fw, p, "ACKNOWLEDGE", "acknowledge",
                                 "{\"agent_id\":{\"value\":\"a\"},\"task_id\":{"
                                 "\"value\":\"t\"},\"uuid\":\"AAAA\"}"),
                     400);
    /* A SUBSCRIBE that carries a stream id. */
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", fw.stream_id,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                 "\"framework_info\":{\"user\":\"u\",\"name\":\"x\"}"
                 "}}",
                 NULL, 0),
        400);
    /* After the connection closes, calls are 403 until it subscribes. */
    api_conn_close(&fw);
    struct call_status cs = {p, fw.stream_id, body, 403, 0};
    ck_assert_msg(e2e_poll_until(call_answers, &cs, T),
                  "REVIVE after the close: %d, not 403", cs.last);
    char info[512];
    snprintf(info, sizeof(info),
             "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":60,"
             "\"id\":{\"value\":\"%s\"}}",
             fw.id);
    struct conn again;
    api_subscribe_framework(&again, p, info);
    ck_assert_str_eq(again.id, fw.id);
    api_conn_close(&again);
    stop();
}
END_TEST

/* /state's first framework has no live task left and one completed task
 * (arg: the master's port). */
static bool no_tasks(void *arg)
{
    json_t *st = api_get_json(*(const uint16_t *)arg, "/state");
    json_t *f = json_array_get(json_object_get(st, "frameworks"), 0);
    bool none = json_array_size(json_object_get(f, "tasks")) == 0 &&
                json_array_size(json_object_get(f, "completed_tasks")) == 1;
    json_decref(st);
    return none;
}

/* The first framework's offered cpus in /frameworks are want. */
struct offered_cpus {
    uint16_t port;
    double want;
    double last; /* as last read */
};

static bool cpus_offered(void *arg)
{
    struct offered_cpus *o = arg;
    json_t *fws = api_get_json(o->port, "/frameworks");
    json_t *f = json_array_get(json_object_get(fws, "frameworks"), 0);
    o->last = json_real_value(
        json_object_get(json_object_get(f, "offered_resources"), "cpus"));
    json_decref(fws);
    return o->last == o->want;
}

/* GET_STATE in JSON and in protobuf (written in slices by the master):
 * both parse, with one agent, one framework, running live tasks and
 * completed completed ones. */
static void check_get_state(uint16_t p, size_t running, size_t completed)
{
    static const char call[] = "{\"type\":\"GET_STATE\"}";
    static const char *const accept[2] = {"Accept: application/json",
                                          "Accept: application/x-protobuf"};
    for (int e = 0; e < 2; e++) {
        const char *h[] = {"Content-Type: application/json", accept[e], NULL};
        struct e2e_response r;
        ck_assert_int_eq(
            e2e_http(p, "POST", "/api/v1", h, call, sizeof(call) - 1, T, &r),
            0);
        ck_assert_int_eq(r.status, 200);
        size_t n[4];
        if (e == 0) {
            json_t *j = json_loads(r.body, 0, NULL);
            ck_assert_ptr_nonnull(j);
            json_t *gs = json_object_get(j, "get_state");
            json_t *gt = json_object_get(gs, "get_tasks");
            n[0] = json_array_size(json_object_get(gt, "tasks"));
            n[1] = json_array_size(json_object_get(gt, "completed_tasks"));
            n[2] = json_array_size(
                json_object_get(json_object_get(gs, "get_agents"), "agents"));
            n[3] = json_array_size(json_object_get(
                json_object_get(gs, "get_frameworks"), "frameworks"));
            json_decref(j);
        } else {
            Mesos__V1__Master__Response *m =
                mesos__v1__master__response__unpack(NULL, r.body_len,
                                                    (const uint8_t *)r.body);
            ck_assert_ptr_nonnull(m);
            ck_assert_ptr_nonnull(m->get_state);
            const Mesos__V1__Master__Response__GetState *gs = m->get_state;
            n[0] = gs->get_tasks->n_tasks;
            n[1] = gs->get_tasks->n_completed_tasks;
            n[2] = gs->get_agents->n_agents;
            n[3] = gs->get_frameworks->n_frameworks;
            mesos__v1__master__response__free_unpacked(m, NULL);
        }
        ck_assert_uint_eq(n[0], running);
        ck_assert_uint_eq(n[1], completed);
        ck_assert_uint_eq(n[2], 1);
        ck_assert_uint_eq(n[3], 1);
        e2e_response_free(&r);
    }
}

START_TEST(test_offer_launch_update_ack)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(agent, ag.id);
    ck_assert_double_eq(api_offered_scalar(ev, "cpus"), 2.0);
    ck_assert_double_eq(api_offered_scalar(ev, "mem"), 1024.0);
    json_t *o0 = json_array_get(
        json_object_get(json_object_get(ev, "offers"), "offers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(o0, "hostname")),
                     "host1");
    ck_assert_uint_eq(json_array_size(json_object_get(o0, "attributes")), 1);
    json_decref(ev);

    ck_assert_int_eq(api_launch(&fw, p, offer, agent, "t1", SMALL), 202);
    json_t *run = api_wait_event(&ag, "RUN_TASK", T);
    ck_assert_ptr_nonnull(run);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(
                json_object_get(json_object_get(run, "run_task"), "task"),
                "task_id"),
            "value")),
        "t1");
    json_decref(run);

    /* RUNNING with a uuid reaches the framework with that uuid. */
    const char *u1 = "AAECAwQFBgcICQoLDA0ODw==";
    ck_assert_int_eq(api_agent_update(&ag, p, fw.id, "t1", "TASK_RUNNING", u1),
                     202);
    json_t *up = api_wait_event(&fw, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    json_t *st = json_object_get(json_object_get(up, "update"), "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     "TASK_RUNNING");
    ck_assert_str_eq(json_string_value(json_object_get(st, "uuid")), u1);
    json_decref(up);
    char ack[512];
    snprintf(ack, sizeof(ack),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t1\"},"
             "\"uuid\":\"%s\"}",
             ag.id, u1);
    ck_assert_int_eq(api_fw_call(&fw, p, "ACKNOWLEDGE", "acknowledge", ack),
                     202);
    json_t *a = api_wait_event(&ag, "ACKNOWLEDGE", T);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(a, "acknowledge"), "uuid")),
                     u1);
    json_decref(a);

    json_t *state = api_get_json(p, "/state");
    json_t *f0 = json_array_get(json_object_get(state, "frameworks"), 0);
    json_t *t0 = json_array_get(json_object_get(f0, "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t0, "state")),
                     "TASK_RUNNING");
    ck_assert_double_eq(json_real_value(json_object_get(
                            json_object_get(t0, "resources"), "cpus")),
                        0.5);
    json_decref(state);
    check_get_state(p, 1, 0);
    json_t *metrics = api_get_json(p, "/metrics/snapshot");
    ck_assert_double_eq(
        json_real_value(json_object_get(metrics, "master/tasks_running")), 1);
    ck_assert_double_eq(
        json_real_value(json_object_get(metrics, "master/slaves_active")), 1);
    json_decref(metrics);

    /* FINISHED, acknowledged: the task is gone and its resources are
     * offered again. */
    const char *u2 = "EBESExQVFhcYGRobHB0eHw==";
    ck_assert_int_eq(api_agent_update(&ag, p, fw.id, "t1", "TASK_FINISHED", u2),
                     202);
    up = api_wait_event(&fw, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    json_decref(up);
    snprintf(ack, sizeof(ack),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t1\"},"
             "\"uuid\":\"%s\"}",
             ag.id, u2);
    ck_assert_int_eq(api_fw_call(&fw, p, "ACKNOWLEDGE", "acknowledge", ack),
                     202);
    a = api_wait_event(&ag, "ACKNOWLEDGE", T);
    ck_assert_ptr_nonnull(a);
    json_decref(a);
    ck_assert_msg(e2e_poll_until(no_tasks, &p, T),
                  "the acknowledged task is not among the completed tasks");
    check_get_state(p, 0, 1);
    metrics = api_get_json(p, "/metrics/snapshot");
    ck_assert_double_eq(
        json_real_value(json_object_get(metrics, "master/tasks_finished")), 1);
    json_decref(metrics);
    /* The unused 1.5 cpus were offered again after the launch; the task's
     * 0.5 come back as another offer: all 2 cpus end up offered. */
    struct offered_cpus oc = {p, 2.0, 0};
    ck_assert_msg(e2e_poll_until(cpus_offered, &oc, T),
                  "%g cpus offered, not 2", oc.last);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

START_TEST(test_launch_errors)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw, other;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    api_subscribe_framework(&other, p, FW_AWARE);
    char offer[256], agent[256];
    /* Whichever framework gets the agent, the other one tries to use the
     * offer; then the holder launches two tasks with the same id. */
    struct conn *holder = &fw, *thief = &other;
    json_t *ev = api_wait_offer(&fw, offer, agent, 1500);
    if (ev == NULL) {
        holder = &other;
        thief = &fw;
        ev = api_wait_offer(&other, offer, agent, T);
    }
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(thief, p, offer, agent, "stolen", SMALL), 202);
    json_t *up = api_wait_event(thief, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    json_t *st = json_object_get(json_object_get(up, "update"), "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     thief == &other ? "TASK_DROPPED" : "TASK_LOST");
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                     "REASON_INVALID_OFFERS");
    json_decref(up);

    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":["
             "{\"name\":\"t\",\"task_id\":{\"value\":\"dup\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}},"
             "{\"name\":\"t\",\"task_id\":{\"value\":\"dup\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}},"
             "{\"name\":\"t\",\"task_id\":{\"value\":\"big\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":[{\"name\":\"cpus\",\"type\":"
             "\"SCALAR\",\"scalar\":{\"value\":64}}],\"command\":{\"value\":"
             "\"true\"}}]}}]}",
             offer, agent, SMALL, agent, SMALL, agent);
    ck_assert_int_eq(api_fw_call(holder, p, "ACCEPT", "accept", payload), 202);
    int errors = 0;
    for (int i = 0; i < 2; i++) {
        up = api_wait_event(holder, "UPDATE", T);
        ck_assert_ptr_nonnull(up);
        st = json_object_get(json_object_get(up, "update"), "status");
        ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                         "TASK_ERROR");
        ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                         "REASON_TASK_INVALID");
        const char *msg = json_string_value(json_object_get(st, "message"));
        errors += strstr(msg, "duplicate") != NULL ||
                  strstr(msg, "more resources") != NULL;
        json_decref(up);
    }
    ck_assert_int_eq(errors, 2);
    json_t *run = api_wait_event(&ag, "RUN_TASK", T); /* the first "dup" ran */
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    api_conn_close(&fw);
    api_conn_close(&other);
    api_conn_close(&ag);
    stop();
}
END_TEST

START_TEST(test_decline_filter_and_revive)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_decline(&fw, p, offer, 3600), 202);
    /* Ten allocation intervals pass without an offer (a window that proves
     * an absence: there is nothing to wait for instead). */
    ev = api_wait_offer(&fw, offer, agent, 1000);
    ck_assert_ptr_null(ev);
    ck_assert_int_eq(api_fw_call(&fw, p, "REVIVE", NULL, NULL), 202);
    ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    /* SUPPRESS: nothing more after a short default decline (again a window
     * proving an absence, eight allocation intervals). */
    ck_assert_int_eq(api_fw_call(&fw, p, "SUPPRESS", NULL, NULL), 202);
    ck_assert_int_eq(api_decline(&fw, p, offer, 0), 202);
    ck_assert_ptr_null(api_wait_offer(&fw, offer, agent, 800));
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* An agent that stops answering pings is removed: its tasks go
 * TASK_UNREACHABLE for a partition-aware framework. */
START_TEST(test_agent_lost)
{
    const char *extra[] = {"--agent_ping_timeout=200ms",
                           "--max_agent_ping_timeouts=2", NULL};
    start(extra);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_AWARE);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(&fw, p, offer, agent, "t1", SMALL), 202);
    json_t *run = api_wait_event(&ag, "RUN_TASK", T);
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    /* Answer one ping, then go silent. */
    json_t *ping = api_wait_event(&ag, "PING", T);
    ck_assert_ptr_nonnull(ping);
    ck_assert_int_eq(api_agent_pong(&ag, p, ping), 202);
    json_decref(ping);
    json_t *up = api_wait_event(&fw, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    json_t *st = json_object_get(json_object_get(up, "update"), "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     "TASK_UNREACHABLE");
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                     "REASON_AGENT_REMOVED");
    json_decref(up);
    /* Then the framework hears the agent is gone (Mesos's FAILURE). */
    json_t *fail = api_wait_event(&fw, "FAILURE", T);
    ck_assert_ptr_nonnull(fail);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(fail, "failure"), "agent_id"),
            "value")),
        agent);
    json_decref(fail);
    json_t *slaves = api_get_json(p, "/slaves");
    ck_assert_uint_eq(json_array_size(json_object_get(slaves, "slaves")), 0);
    json_decref(slaves);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* /frameworks shows the first framework, not connected (arg: the master's
 * port). */
static bool framework_disconnected(void *arg)
{
    json_t *state = api_get_json(*(const uint16_t *)arg, "/frameworks");
    json_t *f0 = json_array_get(json_object_get(state, "frameworks"), 0);
    bool gone = f0 != NULL && !json_is_true(json_object_get(f0, "connected"));
    json_decref(state);
    return gone;
}

/* A framework that disconnects keeps its tasks until its failover timeout,
 * then is removed and its agents told to shut it down. */
START_TEST(test_framework_failover)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p,
                            "{\"user\":\"u\",\"name\":\"fw\","
                            "\"failover_timeout\":1.5}");
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(&fw, p, offer, agent, "t1", SMALL), 202);
    json_decref(api_wait_event(&ag, "RUN_TASK", T));
    api_conn_close(&fw);
    /* The master sees the connection go; the framework stays, with its
     * task, for its failover timeout. */
    ck_assert_msg(e2e_poll_until(framework_disconnected, &p, T),
                  "the master still shows the framework connected");
    json_t *state = api_get_json(p, "/frameworks");
    json_t *f0 = json_array_get(json_object_get(state, "frameworks"), 0);
    ck_assert_ptr_nonnull(f0);
    ck_assert_uint_eq(json_array_size(json_object_get(f0, "tasks")), 1);
    json_decref(state);
    /* No re-subscription: after 1.5 s the framework is removed. */
    json_t *sd = api_wait_event(&ag, "SHUTDOWN_FRAMEWORK", T);
    ck_assert_ptr_nonnull(sd);
    json_decref(sd);
    state = api_get_json(p, "/frameworks");
    ck_assert_uint_eq(json_array_size(json_object_get(state, "frameworks")), 0);
    json_t *done = json_object_get(state, "completed_frameworks");
    ck_assert_uint_eq(json_array_size(done), 1);
    /* It keeps its task, killed with it, among its completed tasks. */
    json_t *ct = json_object_get(json_array_get(done, 0), "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(ct, 0), "state")),
        "TASK_KILLED");
    json_decref(state);
    /* A removed framework may not subscribe again. */
    char body[512];
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"user\":\"u\",\"name\":\"fw\",\"id\":{\"value\":\"%s\"}}}}",
             fw.id);
    ck_assert_int_eq(api_post(p, "/api/v1/scheduler", NULL, body, NULL, 0),
                     403);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* An operator tears a framework down with POST /teardown: its agent is
 * told to shut it down, and /state keeps it among the completed frameworks
 * with its task, killed, as a completed task. */
START_TEST(test_operator_teardown_history)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(&fw, p, offer, agent, "t1", SMALL), 202);
    json_decref(api_wait_event(&ag, "RUN_TASK", T));
    const char *hdr[] = {"Content-Type: application/x-www-form-urlencoded",
                         NULL};
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(p, "POST", "/teardown", hdr, "frameworkId=none", 16, T, &r),
        0);
    ck_assert_int_eq(r.status, 400);
    e2e_response_free(&r);
    char body[300];
    int n = snprintf(body, sizeof(body), "frameworkId=%s", fw.id);
    ck_assert_int_eq(
        e2e_http(p, "POST", "/teardown", hdr, body, (size_t)n, T, &r), 0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
    json_t *sd = api_wait_event(&ag, "SHUTDOWN_FRAMEWORK", T);
    ck_assert_ptr_nonnull(sd);
    json_decref(sd);
    json_t *state = api_get_json(p, "/state");
    ck_assert_uint_eq(json_array_size(json_object_get(state, "frameworks")), 0);
    json_t *done =
        json_array_get(json_object_get(state, "completed_frameworks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(done, "id")), fw.id);
    json_t *t = json_array_get(json_object_get(done, "completed_tasks"), 0);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(json_string_value(json_object_get(t, "id")), "t1");
    ck_assert_str_eq(json_string_value(json_object_get(t, "state")),
                     "TASK_KILLED");
    json_decref(state);
    /* /tasks lists it; with ?jsonp= wrapped for a script tag. */
    ck_assert_int_eq(
        e2e_http(p, "GET", "/tasks?jsonp=cb", NULL, NULL, 0, T, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(e2e_response_header(&r, "Content-Type"),
                     "text/javascript");
    ck_assert(strncmp(r.body, "cb({\"tasks\":[{", 14) == 0);
    e2e_response_free(&r);
    json_t *tasks = api_get_json(p, "/tasks?order=asc");
    ck_assert_uint_eq(json_array_size(json_object_get(tasks, "tasks")), 1);
    json_decref(tasks);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

START_TEST(test_kill_and_reconcile)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(&fw, p, offer, agent, "t1", SMALL), 202);
    json_decref(api_wait_event(&ag, "RUN_TASK", T));
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"}}",
             ag.id);
    ck_assert_int_eq(api_fw_call(&fw, p, "KILL", "kill", payload), 202);
    json_t *k = api_wait_event(&ag, "KILL_TASK", T);
    ck_assert_ptr_nonnull(k);
    json_decref(k);
    /* A kill of an unknown task is answered by reconciliation. */
    ck_assert_int_eq(api_fw_call(&fw, p, "KILL", "kill",
                                 "{\"task_id\":{\"value\":\"ghost\"}}"),
                     202);
    json_t *up = api_wait_event(&fw, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    json_t *st = json_object_get(json_object_get(up, "update"), "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     "TASK_LOST");
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                     "REASON_RECONCILIATION");
    json_decref(up);
    /* Implicit reconciliation: the one task, in its latest state. */
    ck_assert_int_eq(api_fw_call(&fw, p, "RECONCILE", "reconcile", "{}"), 202);
    up = api_wait_event(&fw, "UPDATE", T);
    ck_assert_ptr_nonnull(up);
    st = json_object_get(json_object_get(up, "update"), "status");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(st, "task_id"), "value")),
                     "t1");
    ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                     "TASK_STAGING");
    ck_assert_ptr_null(json_object_get(st, "uuid"));
    json_decref(up);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

START_TEST(test_read_endpoints)
{
    start(NULL);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(&fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);

    json_t *s = api_get_json(p, "/master/state");
    ck_assert_ptr_nonnull(json_object_get(s, "leader_info"));
    json_t *a0 = json_array_get(json_object_get(s, "slaves"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(a0, "hostname")),
                     "host1");
    json_t *res = json_object_get(a0, "resources");
    ck_assert_double_eq(json_real_value(json_object_get(res, "cpus")), 2.0);
    ck_assert_str_eq(json_string_value(json_object_get(res, "ports")),
                     "[31000-32000]");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(a0, "attributes"), "rack")),
                     "r1");
    json_t *f0 = json_array_get(json_object_get(s, "frameworks"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(f0, "offers")), 1);
    ck_assert_double_eq(json_real_value(json_object_get(
                            json_object_get(f0, "offered_resources"), "mem")),
                        1024.0);
    json_decref(s);
    s = api_get_json(p, "/state-summary");
    ck_assert_uint_eq(json_array_size(json_object_get(s, "slaves")), 1);
    json_decref(s);
    s = api_get_json(p, "/roles");
    json_t *r0 = json_array_get(json_object_get(s, "roles"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r0, "name")), "*");
    ck_assert_double_eq(json_real_value(json_object_get(
                            json_object_get(r0, "offered"), "cpus")),
                        2.0);
    json_decref(s);
    s = api_get_json(p, "/metrics/snapshot");
    const char *keys[] = {"master/uptime_secs",
                          "master/elected",
                          "master/slaves_active",
                          "master/frameworks_active",
                          "master/tasks_running",
                          "master/tasks_finished",
                          "master/tasks_failed",
                          "master/tasks_killed",
                          "master/tasks_lost",
                          "master/outstanding_offers",
                          "master/messages_decline_offers",
                          "allocator/mesos/allocation_runs"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_msg(json_object_get(s, keys[i]) != NULL, "missing %s",
                      keys[i]);
    ck_assert_double_eq(
        json_real_value(json_object_get(s, "master/outstanding_offers")), 1);
    json_decref(s);
    struct e2e_response r;
    /* As Mesos: a limit that is not a number is taken as not given. */
    ck_assert_int_eq(e2e_http(p, "GET", "/tasks?limit=x", NULL, NULL, 0, T, &r),
                     0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* With the SQLite registry, a restarted master knows its frameworks (until
 * they re-subscribe with their id) and its admitted agents (which keep their
 * id when they re-register). */
START_TEST(test_registry_survives_restart)
{
    const char *args[] = {"--allocation_interval=100ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
    uint16_t p = master.port;
    struct conn ag, fw;
    api_subscribe_agent(&ag, p, "host1", AGENT_RES);
    api_subscribe_framework(&fw, p, FW_INFO);
    api_conn_close(&fw);
    api_conn_close(&ag);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, args), 0);

    json_t *s = api_get_json(p, "/frameworks");
    json_t *f0 = json_array_get(json_object_get(s, "frameworks"), 0);
    ck_assert_ptr_nonnull(f0);
    ck_assert_str_eq(json_string_value(json_object_get(f0, "id")), fw.id);
    ck_assert(!json_is_true(json_object_get(f0, "connected")));
    json_decref(s);
    char info[512];
    snprintf(info, sizeof(info),
             "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":60,"
             "\"id\":{\"value\":\"%s\"}}",
             fw.id);
    struct conn fw2;
    api_subscribe_framework(&fw2, p, info);
    ck_assert_str_eq(fw2.id, fw.id);

    /* The agent comes back with its id. */
    char res[2048];
    snprintf(res, sizeof(res), "%s", AGENT_RES);
    struct conn ag2;
    memset(&ag2, 0, sizeof(ag2));
    char body[4096];
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"hostname\":\"host1\",\"port\":5051,\"id\":{\"value\":"
             "\"%s\"},\"resources\":%s}}}",
             ag.id, res);
    const char *headers[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(e2e_stream_open(p, "POST", "/api/v1/agent", headers, body,
                                     strlen(body), T, &ag2.s),
                     0);
    ck_assert_int_eq(ag2.s.head.status, 200);
    json_t *ev = api_wait_event(&ag2, "REGISTERED", T);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(ev, "registered"), "agent_id"),
            "value")),
        ag.id);
    json_decref(ev);
    char offer[256], agent[256];
    ev = api_wait_offer(&fw2, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(agent, ag.id);
    json_decref(ev);
    api_conn_close(&fw2);
    api_conn_close(&ag2);
    stop();
}
END_TEST

/* A registry write that fails answers 503 and changes nothing; the next
 * attempt succeeds. */
START_TEST(test_registry_failure_changes_nothing)
{
    setenv("OFFERD_TEST_REGISTRY_FAILURES", "2", 1);
    const char *args[] = {"--allocation_interval=100ms", NULL};
    int rc = e2e_start_master(&master, args);
    unsetenv("OFFERD_TEST_REGISTRY_FAILURES");
    ck_assert_int_eq(rc, 0);
    uint16_t p = master.port;
    char reason[512];
    const char *sub = "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
                      "\"framework_info\":" FW_INFO "}}";
    ck_assert_int_eq(
        api_post(p, "/api/v1/scheduler", NULL, sub, reason, sizeof(reason)),
        503);
    ck_assert_ptr_nonnull(strstr(reason, "registry write failed"));
    json_t *s = api_get_json(p, "/frameworks");
    ck_assert_uint_eq(json_array_size(json_object_get(s, "frameworks")), 0);
    json_decref(s);
    const char *agent =
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{"
        "\"agent_info\":{\"hostname\":\"h\",\"resources\":" AGENT_RES "}}}";
    ck_assert_int_eq(
        api_post(p, "/api/v1/agent", NULL, agent, reason, sizeof(reason)), 503);
    s = api_get_json(p, "/slaves");
    ck_assert_uint_eq(json_array_size(json_object_get(s, "slaves")), 0);
    json_decref(s);
    struct conn fw;
    api_subscribe_framework(&fw, p, FW_INFO);
    api_conn_close(&fw);
    stop();
}
END_TEST

static Suite *master_api_suite(void)
{
    Suite *s = suite_create("master_api");
    TCase *tc = tcase_create("master_api");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_subscribe_protobuf);
    tcase_add_test(tc, test_bad_calls);
    tcase_add_test(tc, test_offer_launch_update_ack);
    tcase_add_test(tc, test_launch_errors);
    tcase_add_test(tc, test_decline_filter_and_revive);
    tcase_add_test(tc, test_agent_lost);
    tcase_add_test(tc, test_operator_teardown_history);
    tcase_add_test(tc, test_framework_failover);
    tcase_add_test(tc, test_kill_and_reconcile);
    tcase_add_test(tc, test_read_endpoints);
    tcase_add_test(tc, test_registry_survives_restart);
    tcase_add_test(tc, test_registry_failure_changes_nothing);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(master_api_suite)
