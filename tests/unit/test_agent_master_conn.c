/*
 * The agent's master connection (agent/master_conn.c) batching its status
 * updates: the UPDATEs given in one loop turn reach a loopback fake master
 * as one UPDATES call in their order, a lone one as an UPDATE, and a
 * master that refuses UPDATES (older than it) gets them one per call.
 */
#include <check.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/master_conn.h"
#include "check_main.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/mem.h"

static struct event_base *base;
static struct http_server *srv;
static uint16_t port;
static struct http_stream *stream;
static bool refuse_updates; /* answer UPDATES 400, as an older master */
/* Calls received after SUBSCRIBE, in arrival order. */
static Offerd__Agent__Call *calls[64];
static size_t ncalls;
static struct event *tick;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Run the loop until cond holds (fail after ms milliseconds). */
#define WAIT_FOR(cond, ms)                                                     \
    do {                                                                       \
        int64_t dl_ = now_ms() + (ms);                                         \
        struct timeval tv_ = {0, 10000};                                       \
        event_add(tick, &tv_);                                                 \
        while (!(cond) && now_ms() < dl_) {                                    \
            event_add(tick, &tv_);                                             \
            event_base_loop(base, EVLOOP_ONCE);                                \
        }                                                                      \
        event_del(tick);                                                       \
        ck_assert_msg((cond), "timed out waiting for %s", #cond);              \
    } while (0)

static void stream_closed(struct http_stream *s, enum http_close_reason why,
                          void *arg)
{
    (void)why;
    (void)arg;
    if (s == stream)
        stream = NULL;
    http_stream_close(s);
}

static void registered(void)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "S0";
    Mesos__V1__MasterInfo mi = MESOS__V1__MASTER_INFO__INIT;
    mi.id = "fake";
    mi.ip = 0x0100007f;
    mi.port = port;
    Offerd__Agent__Event__Registered reg =
        OFFERD__AGENT__EVENT__REGISTERED__INIT;
    reg.agent_id = &aid;
    reg.master_info = &mi;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__REGISTERED;
    ev.registered = &reg;
    size_t len;
    uint8_t *buf = jpb_to_pb(&ev.base, &len);
    ck_assert_int_eq(http_stream_send_record(stream, buf, len), 0);
    free(buf);
}

static void handle(struct http_request *req, void *arg)
{
    (void)arg;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[256];
    Offerd__Agent__Call *call = (Offerd__Agent__Call *)jpb_decode(
        &offerd__agent__call__descriptor, JPB_PROTOBUF, body, len, err,
        sizeof(err));
    if (call == NULL) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    if (call->type == OFFERD__AGENT__CALL__TYPE__SUBSCRIBE) {
        jpb_free(&call->base);
        http_reply_header(req, "Mesos-Stream-Id", "stream-1");
        stream = http_stream_start(req, HTTP_CONTENT_PROTOBUF, 0, stream_closed,
                                   NULL);
        registered();
        return;
    }
    ck_assert_uint_lt(ncalls, sizeof(calls) / sizeof(calls[0]));
    calls[ncalls++] = call;
    if (refuse_updates && call->type == OFFERD__AGENT__CALL__TYPE__UPDATES)
        http_reply_error(req, 400, "unknown call type");
    else
        http_reply(req, 202, NULL, NULL, 0);
}

static void on_event(const Offerd__Agent__Event *ev, void *arg)
{
    (void)ev;
    (void)arg;
}

static Offerd__Agent__Call *build_subscribe(void *arg)
{
    (void)arg;
    Offerd__Agent__Call *call = xcalloc(1, sizeof(*call));
    offerd__agent__call__init(call);
    call->type = OFFERD__AGENT__CALL__TYPE__SUBSCRIBE;
    call->subscribe = xcalloc(1, sizeof(*call->subscribe));
    offerd__agent__call__subscribe__init(call->subscribe);
    call->subscribe->agent_info = xcalloc(1, sizeof(Mesos__V1__AgentInfo));
    mesos__v1__agent_info__init(call->subscribe->agent_info);
    call->subscribe->agent_info->hostname = xstrdup("h");
    return call;
}

static struct agent_conn *conn;

static void setup(void)
{
    base = event_base_new();
    tick = evtimer_new(base, on_tick, NULL);
    srv = http_server_new(base, NULL);
    ck_assert_int_eq(
        http_server_route(srv, "/api/v1/agent", HTTP_POST, handle, NULL), 0);
    char err[256];
    ck_assert_int_eq(
        http_server_bind(srv, "127.0.0.1", 0, &port, err, sizeof(err)), 0);
    struct agent_conn_config cfg = {.master_ip = "127.0.0.1",
                                    .master_port = port,
                                    .backoff_factor_ns = 10000000,
                                    .backoff_max_ns = 100000000};
    struct agent_conn_cbs cbs = {.build_subscribe = build_subscribe,
                                 .on_event = on_event};
    conn = agent_conn_new(base, &cfg, &cbs);
    ck_assert_ptr_nonnull(conn);
    agent_conn_start(conn);
    WAIT_FOR(agent_conn_is_registered(conn), 5000);
}

static void teardown(void)
{
    agent_conn_free(conn);
    if (stream != NULL)
        http_stream_close(stream);
    stream = NULL;
    http_server_free(srv);
    for (size_t i = 0; i < ncalls; i++)
        jpb_free(&calls[i]->base);
    ncalls = 0;
    refuse_updates = false;
    event_free(tick);
    event_base_free(base);
}

/* Give the connection an UPDATE of task_id. */
static void send_update(const char *task_id)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "S0";
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "F0";
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.task_id = &tid;
    st.state = MESOS__V1__TASK_STATE__TASK_STARTING;
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &fid;
    up.status = &st;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__UPDATE;
    call.agent_id = &aid;
    call.update = &up;
    ck_assert_int_eq(agent_conn_send(conn, &call), 0);
}

static size_t updates_received(void)
{
    size_t n = 0;
    for (size_t i = 0; i < ncalls; i++)
        n += calls[i]->type == OFFERD__AGENT__CALL__TYPE__UPDATES
                 ? calls[i]->updates->n_updates
                 : calls[i]->type == OFFERD__AGENT__CALL__TYPE__UPDATE;
    return n;
}

/* Three updates in one loop turn: one UPDATES call, in their order; then
 * one alone: an UPDATE call. */
START_TEST(test_updates_of_a_turn_batched)
{
    send_update("t1");
    send_update("t2");
    send_update("t3");
    ck_assert_uint_eq(agent_conn_inflight(conn), 1);
    WAIT_FOR(ncalls == 1, 5000);
    ck_assert_int_eq(calls[0]->type, OFFERD__AGENT__CALL__TYPE__UPDATES);
    ck_assert_str_eq(calls[0]->agent_id->value, "S0");
    ck_assert_uint_eq(calls[0]->updates->n_updates, 3);
    static const char *const want[] = {"t1", "t2", "t3"};
    for (size_t i = 0; i < 3; i++) {
        const Offerd__Agent__Call__Update *u = calls[0]->updates->updates[i];
        ck_assert_str_eq(u->framework_id->value, "F0");
        ck_assert_str_eq(u->status->task_id->value, want[i]);
    }
    send_update("t4");
    WAIT_FOR(ncalls == 2, 5000);
    ck_assert_int_eq(calls[1]->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
    ck_assert_str_eq(calls[1]->update->status->task_id->value, "t4");
    WAIT_FOR(agent_conn_inflight(conn) == 0, 5000);
}
END_TEST

/* A master that answers UPDATES 400 gets the batch's updates again one
 * per call, and later batches as single UPDATEs. */
START_TEST(test_refused_batch_sent_one_by_one)
{
    refuse_updates = true;
    send_update("t1");
    send_update("t2");
    /* The refused UPDATES, then t1 and t2 as UPDATEs. */
    WAIT_FOR(ncalls == 3, 5000);
    ck_assert_int_eq(calls[0]->type, OFFERD__AGENT__CALL__TYPE__UPDATES);
    bool seen[2] = {false, false};
    for (size_t i = 1; i < 3; i++) {
        ck_assert_int_eq(calls[i]->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
        const char *t = calls[i]->update->status->task_id->value;
        seen[strcmp(t, "t1") == 0 ? 0 : 1] = true;
    }
    ck_assert(seen[0] && seen[1]);
    send_update("t3");
    send_update("t4");
    WAIT_FOR(ncalls == 5, 5000);
    ck_assert_int_eq(calls[3]->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
    ck_assert_int_eq(calls[4]->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
    ck_assert_uint_eq(updates_received(), 4 + 2);
}
END_TEST

/* The body builder: n == 1 an UPDATE call, n > 1 an UPDATES call, the
 * encoded updates kept byte for byte and in order. */
START_TEST(test_updates_body)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "F0";
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.task_id = &tid;
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &fid;
    up.status = &st;
    /* 200 updates with ids long enough for two-byte lengths. */
    enum { N = 200 };
    uint8_t *pb[N];
    size_t lens[N];
    char id[200];
    for (size_t i = 0; i < N; i++) {
        snprintf(id, sizeof(id), "task-%zu-%0150zu", i, i);
        tid.value = id;
        pb[i] = jpb_to_pb(&up.base, &lens[i]);
    }
    ck_assert_uint_gt(lens[0], 128);
    size_t len;
    uint8_t *body = agent_conn_updates_body("S0", pb, lens, N, &len);
    Offerd__Agent__Call *c = offerd__agent__call__unpack(NULL, len, body);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->type, OFFERD__AGENT__CALL__TYPE__UPDATES);
    ck_assert_str_eq(c->agent_id->value, "S0");
    ck_assert_uint_eq(c->updates->n_updates, N);
    for (size_t i = 0; i < N; i++) {
        snprintf(id, sizeof(id), "task-%zu-%0150zu", i, i);
        ck_assert_str_eq(c->updates->updates[i]->status->task_id->value, id);
    }
    offerd__agent__call__free_unpacked(c, NULL);
    free(body);

    body = agent_conn_updates_body("S0", pb + 7, lens + 7, 1, &len);
    c = offerd__agent__call__unpack(NULL, len, body);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
    ck_assert_ptr_null(c->updates);
    snprintf(id, sizeof(id), "task-%zu-%0150zu", (size_t)7, (size_t)7);
    ck_assert_str_eq(c->update->status->task_id->value, id);
    offerd__agent__call__free_unpacked(c, NULL);
    free(body);
    for (size_t i = 0; i < N; i++)
        free(pb[i]);
}
END_TEST

static Suite *agent_master_conn_suite(void)
{
    Suite *s = suite_create("agent_master_conn");
    TCase *tc = tcase_create("batch");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_updates_of_a_turn_batched);
    tcase_add_test(tc, test_refused_batch_sent_one_by_one);
    suite_add_tcase(s, tc);
    tc = tcase_create("body");
    tcase_add_test(tc, test_updates_body);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_master_conn_suite)
