/*
 * Tests for libofferd (include/offerd/scheduler.h) against a fake master:
 * a common/http server on the same event_base, on a free loopback port,
 * that answers SUBSCRIBE with a RecordIO event stream it scripts
 * (SUBSCRIBED, OFFERS, UPDATE, HEARTBEAT, raw bytes) and records every call
 * it receives, decoded, with its headers, answering 202 or a scripted
 * error. Nothing sleeps: the loop runs until a condition holds or a
 * deadline passes.
 */
#include "offerd/scheduler.h"

#include "offerd/offer_pool.h"

#include "common/clock.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/recordio.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"

#include "check_main.h"

#include <arpa/inet.h>
#include <check.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ET(x) MESOS__V1__SCHEDULER__EVENT__TYPE__##x
#define CT(x) MESOS__V1__SCHEDULER__CALL__TYPE__##x

static struct event_base *base;

/* ---- Loop helpers ---- */

static int64_t now_ms(void)
{
    return clock_monotonic_ns() / CLOCK_NS_PER_MS;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

static struct event *tick;

/* A 5 ms tick so that each EVLOOP_ONCE returns soon enough to re-check. */
static void tick_start(void)
{
    tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
    struct timeval tv = {0, 5000};
    event_add(tick, &tv);
}

static void tick_stop(void)
{
    event_free(tick);
    tick = NULL;
}

/* Run the loop until cond holds (fail after ms milliseconds). */
#define WAIT_FOR(cond, ms)                                                     \
    do {                                                                       \
        int64_t dl_ = now_ms() + (ms);                                         \
        tick_start();                                                          \
        while (!(cond) && now_ms() < dl_)                                      \
            event_base_loop(base, EVLOOP_ONCE);                                \
        tick_stop();                                                           \
        ck_assert_msg((cond), "timed out waiting for %s", #cond);              \
    } while (0)

/* Run the loop for ms milliseconds (to check that nothing more happens). */
static void run_for(int ms)
{
    int64_t dl = now_ms() + ms;
    tick_start();
    while (now_ms() < dl)
        event_base_loop(base, EVLOOP_ONCE);
    tick_stop();
}

/* ---- The fake master ---- */

#define MAX_CALLS 256

struct fake_call {
    Mesos__V1__Scheduler__Call *call; /* decoded; owned */
    char stream_id[64];               /* Mesos-Stream-Id, "" when absent */
    char content_type[64];
    char accept[64];
    int64_t at_ms;
};

struct fake {
    struct http_server *srv;
    uint16_t port;
    /* script */
    int subscribe_status; /* 0: open a stream; else answer this */
    char subscribe_reason[128];
    char location[128];    /* Location header of that answer */
    bool send_subscribed;  /* SUBSCRIBED right after the stream opens */
    double heartbeat;      /* heartbeat_interval_seconds; 0: unset */
    char framework_id[64]; /* id in SUBSCRIBED */
    int call_status;       /* answer to other calls; 0: 202 */
    char call_reason[128];
    char call_location[128]; /* Location header of that answer */
    bool close_on_teardown;  /* end the stream on TEARDOWN */
    /* state */
    struct http_stream *stream;
    enum http_encoding stream_enc;
    int nstreams;
    /* record */
    struct fake_call calls[MAX_CALLS];
    size_t ncalls;
    int nsubscribes;
};

static struct fake fm;  /* the master of most tests */
static struct fake fm2; /* a second master (redirects) */

static void fake_stream_closed(struct http_stream *st,
                               enum http_close_reason why, void *arg)
{
    struct fake *f = arg;
    (void)why;
    if (f->stream == st)
        f->stream = NULL;
    http_stream_close(st);
}

static void fake_end_stream(struct fake *f)
{
    if (f->stream != NULL)
        http_stream_close(f->stream);
    f->stream = NULL;
}

static void fake_send_event(struct fake *f,
                            const Mesos__V1__Scheduler__Event *ev)
{
    ck_assert_ptr_nonnull(f->stream);
    size_t len;
    uint8_t *b = jpb_encode(&ev->base, (enum jpb_format)f->stream_enc, &len);
    ck_assert_int_eq(http_stream_send_record(f->stream, b, len), 0);
    free(b);
}

static void fake_send_subscribed(struct fake *f)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Subscribed sub =
        MESOS__V1__SCHEDULER__EVENT__SUBSCRIBED__INIT;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    ev.has_type = 1;
    ev.type = ET(SUBSCRIBED);
    fid.value = f->framework_id;
    sub.framework_id = &fid;
    if (f->heartbeat > 0) {
        sub.has_heartbeat_interval_seconds = 1;
        sub.heartbeat_interval_seconds = f->heartbeat;
    }
    ev.subscribed = &sub;
    fake_send_event(f, &ev);
}

static void fake_handler(struct http_request *req, void *arg)
{
    struct fake *f = arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *b = http_request_body(req, &len);
    char err[256];
    ProtobufCMessage *m =
        jpb_decode(&mesos__v1__scheduler__call__descriptor,
                   (enum jpb_format)body_enc, b, len, err, sizeof(err));
    if (m == NULL) {
        http_reply_error(req, 400, "%s", err);
        return;
    }
    Mesos__V1__Scheduler__Call *c = (Mesos__V1__Scheduler__Call *)m;
    if (f->ncalls < MAX_CALLS) {
        struct fake_call *fc = &f->calls[f->ncalls++];
        fc->call = c;
        const char *h = http_request_header(req, "Mesos-Stream-Id");
        snprintf(fc->stream_id, sizeof(fc->stream_id), "%s", h ? h : "");
        h = http_request_header(req, "Content-Type");
        snprintf(fc->content_type, sizeof(fc->content_type), "%s", h ? h : "");
        h = http_request_header(req, "Accept");
        snprintf(fc->accept, sizeof(fc->accept), "%s", h ? h : "");
        fc->at_ms = now_ms();
    } else {
        jpb_free(m);
        c = NULL;
    }
    if (c != NULL && c->type == CT(SUBSCRIBE)) {
        f->nsubscribes++;
        if (f->subscribe_status != 0) {
            if (f->location[0])
                http_reply_header(req, "Location", f->location);
            http_reply_error(req, f->subscribe_status, "%s",
                             f->subscribe_reason);
            return;
        }
        fake_end_stream(f);
        char sid[32];
        snprintf(sid, sizeof(sid), "stream-%d", ++f->nstreams);
        http_reply_header(req, "Mesos-Stream-Id", sid);
        f->stream_enc = reply_enc;
        f->stream = http_stream_start(req,
                                      reply_enc == HTTP_ENC_PROTOBUF
                                          ? HTTP_CONTENT_PROTOBUF
                                          : HTTP_CONTENT_JSON,
                                      0, fake_stream_closed, f);
        if (f->send_subscribed)
            fake_send_subscribed(f);
        return;
    }
    if (f->call_status != 0) {
        if (f->call_location[0])
            http_reply_header(req, "Location", f->call_location);
        http_reply_error(req, f->call_status, "%s", f->call_reason);
        return;
    }
    http_reply(req, 202, NULL, NULL, 0);
    if (c != NULL && c->type == CT(TEARDOWN) && f->close_on_teardown)
        fake_end_stream(f);
}

static void fake_init(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->send_subscribed = true;
    f->heartbeat = 15;
    snprintf(f->framework_id, sizeof(f->framework_id), "fw-1");
    f->srv = http_server_new(base, NULL);
    ck_assert_int_eq(http_server_route(f->srv, "/api/v1/scheduler", HTTP_POST,
                                       fake_handler, f),
                     0);
    char err[256];
    ck_assert_int_eq(
        http_server_bind(f->srv, "127.0.0.1", 0, &f->port, err, sizeof(err)),
        0);
}

static void fake_fini(struct fake *f)
{
    fake_end_stream(f);
    http_server_free(f->srv);
    for (size_t i = 0; i < f->ncalls; i++)
        jpb_free(&f->calls[i].call->base);
    memset(f, 0, sizeof(*f));
}

/* The nth (0-based) recorded call of type, or NULL. */
static const struct fake_call *fake_find(const struct fake *f, int type,
                                         int nth)
{
    for (size_t i = 0; i < f->ncalls; i++)
        if ((int)f->calls[i].call->type == type && nth-- == 0)
            return &f->calls[i];
    return NULL;
}

static int fake_count(const struct fake *f, int type)
{
    int n = 0;
    for (size_t i = 0; i < f->ncalls; i++)
        if ((int)f->calls[i].call->type == type)
            n++;
    return n;
}

/* ---- Event builders (fake side) ---- */

static void send_offer(struct fake *f, const char *offer_id)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Offers offers =
        MESOS__V1__SCHEDULER__EVENT__OFFERS__INIT;
    Mesos__V1__Offer offer = MESOS__V1__OFFER__INIT;
    Mesos__V1__OfferID oid = MESOS__V1__OFFER_ID__INIT;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__Offer *list[1] = {&offer};
    oid.value = (char *)offer_id;
    fid.value = f->framework_id;
    aid.value = "a1";
    offer.id = &oid;
    offer.framework_id = &fid;
    offer.agent_id = &aid;
    offer.hostname = "host1";
    offers.n_offers = 1;
    offers.offers = list;
    ev.has_type = 1;
    ev.type = ET(OFFERS);
    ev.offers = &offers;
    fake_send_event(f, &ev);
}

static void send_update(struct fake *f, const char *task_id, const char *uuid,
                        Mesos__V1__TaskState state)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Update up =
        MESOS__V1__SCHEDULER__EVENT__UPDATE__INIT;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    tid.value = (char *)task_id;
    aid.value = "a1";
    st.task_id = &tid;
    st.agent_id = &aid;
    st.state = state;
    if (uuid != NULL) {
        st.has_uuid = 1;
        st.uuid.data = (uint8_t *)uuid;
        st.uuid.len = strlen(uuid);
    }
    up.status = &st;
    ev.has_type = 1;
    ev.type = ET(UPDATE);
    ev.update = &up;
    fake_send_event(f, &ev);
}

static void send_heartbeat(struct fake *f)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = 1;
    ev.type = ET(HEARTBEAT);
    fake_send_event(f, &ev);
}

/* The RecordIO frame of a HEARTBEAT in the stream's encoding. */
static uint8_t *heartbeat_frame(struct fake *f, size_t *len)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    ev.has_type = 1;
    ev.type = ET(HEARTBEAT);
    size_t n;
    uint8_t *b = jpb_encode(&ev.base, (enum jpb_format)f->stream_enc, &n);
    uint8_t *frame = rio_frame(b, n, len);
    free(b);
    return frame;
}

/* ---- The client under test ---- */

enum where {
    IN_NONE,
    IN_CONNECTED,
    IN_SUBSCRIBED,
    IN_OFFERS,
    IN_UPDATE,
    IN_DISCONNECTED,
    IN_CALL_FAILED,
};

struct log {
    int connected, disconnected, subscribed, offers, inverse_offers, rescind,
        rescind_inverse_offer, update, update_operation_status, message,
        failure, error, heartbeat, call_failed;
    char framework_id[64];
    double heartbeat_interval;
    char disc_reason[512];
    bool disc_retry;
    int64_t disc_at_ms;
    int failed_type, failed_status;
    char failed_reason[512];
    char order[256]; /* one letter per event: O offers, U update, H beat */
    char last_offer[64];
    int pending_at_update; /* pending calls when the update callback ran */
    enum where free_in;    /* free the client inside this callback */
    enum where stop_in;    /* stop it inside this callback */
};

static struct offerd_sched *sched;
static struct log lg;

static void note(char c)
{
    size_t n = strlen(lg.order);
    if (n + 1 < sizeof(lg.order)) {
        lg.order[n] = c;
        lg.order[n + 1] = '\0';
    }
}

/* Free or stop the client if this callback is the one the test chose. */
static void maybe_end(struct offerd_sched *s, enum where w)
{
    if (lg.free_in == w) {
        offerd_sched_free(s);
        sched = NULL;
    } else if (lg.stop_in == w) {
        offerd_sched_stop(s);
    }
}

static void cb_connected(struct offerd_sched *s, void *user)
{
    ck_assert_ptr_eq(user, &lg);
    lg.connected++;
    maybe_end(s, IN_CONNECTED);
}

static void cb_disconnected(struct offerd_sched *s, const char *reason,
                            bool will_retry, void *user)
{
    (void)user;
    lg.disconnected++;
    snprintf(lg.disc_reason, sizeof(lg.disc_reason), "%s", reason);
    lg.disc_retry = will_retry;
    lg.disc_at_ms = now_ms();
    maybe_end(s, IN_DISCONNECTED);
}

static void cb_subscribed(struct offerd_sched *s, const char *framework_id,
                          double hb, const Mesos__V1__Scheduler__Event *ev,
                          void *user)
{
    (void)user;
    ck_assert_int_eq(ev->type, ET(SUBSCRIBED));
    lg.subscribed++;
    snprintf(lg.framework_id, sizeof(lg.framework_id), "%s", framework_id);
    lg.heartbeat_interval = hb;
    maybe_end(s, IN_SUBSCRIBED);
}

static void cb_offers(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)user;
    ck_assert_int_eq(ev->type, ET(OFFERS));
    ck_assert_ptr_nonnull(ev->offers);
    lg.offers++;
    if (ev->offers->n_offers > 0)
        snprintf(lg.last_offer, sizeof(lg.last_offer), "%s",
                 ev->offers->offers[0]->id->value);
    note('O');
    maybe_end(s, IN_OFFERS);
}

static void cb_update(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)user;
    ck_assert_ptr_nonnull(ev->update);
    lg.update++;
    lg.pending_at_update = (int)offerd_sched_pending_calls(s);
    note('U');
    maybe_end(s, IN_UPDATE);
}

static void cb_heartbeat(struct offerd_sched *s,
                         const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)s;
    (void)user;
    ck_assert_int_eq(ev->type, ET(HEARTBEAT));
    lg.heartbeat++;
    note('H');
}

#define COUNTER_CB(name)                                                       \
    static void cb_##name(struct offerd_sched *s,                              \
                          const Mesos__V1__Scheduler__Event *ev, void *user)   \
    {                                                                          \
        (void)s;                                                               \
        (void)ev;                                                              \
        (void)user;                                                            \
        lg.name++;                                                             \
    }
COUNTER_CB(inverse_offers)
COUNTER_CB(rescind)
COUNTER_CB(rescind_inverse_offer)
COUNTER_CB(update_operation_status)
COUNTER_CB(message)
COUNTER_CB(failure)
COUNTER_CB(error)

static void cb_call_failed(struct offerd_sched *s, int type, int status,
                           const char *reason, void *user)
{
    (void)user;
    lg.call_failed++;
    lg.failed_type = type;
    lg.failed_status = status;
    snprintf(lg.failed_reason, sizeof(lg.failed_reason), "%s", reason);
    maybe_end(s, IN_CALL_FAILED);
}

static Mesos__V1__FrameworkInfo test_info;

static struct offerd_sched_options default_options(enum offerd_encoding enc)
{
    mesos__v1__framework_info__init(&test_info);
    test_info.user = "tester";
    test_info.name = "test-framework";
    struct offerd_sched_options o;
    memset(&o, 0, sizeof(o));
    o.master_host = "127.0.0.1";
    o.master_port = fm.port;
    o.encoding = enc;
    o.framework_info = &test_info;
    o.user = &lg;
    o.backoff_min_ms = 20;
    o.backoff_max_ms = 80;
    o.subscribe_timeout_ms = 5000;
    o.call_timeout_ms = 5000;
    o.callbacks.connected = cb_connected;
    o.callbacks.disconnected = cb_disconnected;
    o.callbacks.subscribed = cb_subscribed;
    o.callbacks.offers = cb_offers;
    o.callbacks.inverse_offers = cb_inverse_offers;
    o.callbacks.rescind = cb_rescind;
    o.callbacks.rescind_inverse_offer = cb_rescind_inverse_offer;
    o.callbacks.update = cb_update;
    o.callbacks.update_operation_status = cb_update_operation_status;
    o.callbacks.message = cb_message;
    o.callbacks.failure = cb_failure;
    o.callbacks.error = cb_error;
    o.callbacks.heartbeat = cb_heartbeat;
    o.callbacks.call_failed = cb_call_failed;
    return o;
}

static void client_new(const struct offerd_sched_options *o)
{
    char err[256];
    sched = offerd_sched_new(base, o, err, sizeof(err));
    ck_assert_msg(sched != NULL, "offerd_sched_new: %s", err);
}

/* Start a client with o and wait for SUBSCRIBED. */
static void client_subscribe(const struct offerd_sched_options *o)
{
    client_new(o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.subscribed == 1, 5000);
    ck_assert(offerd_sched_is_subscribed(sched));
}

static void setup(void)
{
    base = event_base_new();
    memset(&lg, 0, sizeof(lg));
    fake_init(&fm);
    sched = NULL;
}

static void teardown(void)
{
    offerd_sched_free(sched);
    sched = NULL;
    fake_fini(&fm);
    if (fm2.srv != NULL)
        fake_fini(&fm2);
    event_base_free(base);
}

/* ---- Subscription ---- */

static void check_subscribe(enum offerd_encoding enc, const char *ct)
{
    struct offerd_sched_options o = default_options(enc);
    client_subscribe(&o);
    ck_assert_int_eq(lg.connected, 1);
    ck_assert_str_eq(lg.framework_id, "fw-1");
    ck_assert_str_eq(offerd_sched_framework_id(sched), "fw-1");
    ck_assert_str_eq(offerd_sched_stream_id(sched), "stream-1");
    ck_assert(lg.heartbeat_interval == 15.0);
    ck_assert_int_eq(fm.nsubscribes, 1);
    const struct fake_call *fc = fake_find(&fm, CT(SUBSCRIBE), 0);
    ck_assert_ptr_nonnull(fc);
    ck_assert_str_eq(fc->content_type, ct);
    ck_assert_str_eq(fc->accept, ct);
    ck_assert_str_eq(fc->stream_id, ""); /* never on SUBSCRIBE */
    ck_assert_ptr_null(fc->call->framework_id);
    const Mesos__V1__FrameworkInfo *fi = fc->call->subscribe->framework_info;
    ck_assert_str_eq(fi->user, "tester");
    ck_assert_str_eq(fi->name, "test-framework");
    ck_assert_ptr_null(fi->id);
    /* The FrameworkInfo now carries the id for re-subscription. */
    ck_assert_str_eq(offerd_sched_framework_info(sched)->id->value, "fw-1");
}

START_TEST(test_subscribe_json)
{
    check_subscribe(OFFERD_ENCODING_JSON, "application/json");
}
END_TEST

START_TEST(test_subscribe_protobuf)
{
    check_subscribe(OFFERD_ENCODING_PROTOBUF, "application/x-protobuf");
}
END_TEST

START_TEST(test_framework_info_is_copied)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    test_info.name = "changed-after-new";
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.subscribed == 1, 5000);
    const struct fake_call *fc = fake_find(&fm, CT(SUBSCRIBE), 0);
    ck_assert_str_eq(fc->call->subscribe->framework_info->name,
                     "test-framework");
}
END_TEST

START_TEST(test_resume_with_given_framework_id)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    Mesos__V1__FrameworkID id = MESOS__V1__FRAMEWORK_ID__INIT;
    id.value = "fw-1";
    test_info.id = &id;
    client_subscribe(&o);
    const struct fake_call *fc = fake_find(&fm, CT(SUBSCRIBE), 0);
    ck_assert_str_eq(fc->call->framework_id->value, "fw-1");
    ck_assert_str_eq(fc->call->subscribe->framework_info->id->value, "fw-1");
}
END_TEST

static const struct {
    const char *what;
    const char *host;
    uint16_t port;
    bool no_info;
    const char *user;
    int bmin, bmax;
    const char *reason; /* substring */
} bad_options[] = {
    {"no host", NULL, 5050, false, "u", 0, 0, "master_host"},
    {"no port", "127.0.0.1", 0, false, "u", 0, 0, "master_port"},
    {"no framework info", "127.0.0.1", 5050, true, "u", 0, 0, "framework_info"},
    {"no user", "127.0.0.1", 5050, false, NULL, 0, 0, "user"},
    {"min above max", "127.0.0.1", 5050, false, "u", 500, 100, "backoff"},
};

START_TEST(test_new_rejects_bad_options)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.master_host = bad_options[_i].host;
    o.master_port = bad_options[_i].port;
    if (bad_options[_i].no_info)
        o.framework_info = NULL;
    test_info.user = (char *)bad_options[_i].user;
    o.backoff_min_ms = bad_options[_i].bmin;
    o.backoff_max_ms = bad_options[_i].bmax;
    char err[256] = "";
    ck_assert_ptr_null(offerd_sched_new(base, &o, err, sizeof(err)));
    ck_assert_msg(strstr(err, bad_options[_i].reason) != NULL,
                  "%s: reason '%s'", bad_options[_i].what, err);
}
END_TEST

START_TEST(test_start_twice_fails)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    ck_assert_int_eq(offerd_sched_start(sched), -1);
}
END_TEST

START_TEST(test_calls_fail_fast_when_not_subscribed)
{
    fm.send_subscribed = false;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    const char *ids[] = {"o1"};
    ck_assert_int_eq(offerd_sched_decline(sched, ids, 1, NULL), -1);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.connected == 1, 5000); /* stream open, no SUBSCRIBED */
    ck_assert(!offerd_sched_is_subscribed(sched));
    ck_assert_int_eq(offerd_sched_decline(sched, ids, 1, NULL), -1);
    ck_assert_int_eq(offerd_sched_teardown(sched), -1);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), -1);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
    ck_assert_int_eq(fm.ncalls, 1); /* the SUBSCRIBE only */
}
END_TEST

START_TEST(test_events_before_subscribed_are_ignored)
{
    fm.send_subscribed = false;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.connected == 1 && fm.stream != NULL, 5000);
    send_heartbeat(&fm);
    fake_send_subscribed(&fm);
    send_heartbeat(&fm);
    WAIT_FOR(lg.heartbeat == 1, 5000);
    ck_assert_int_eq(lg.subscribed, 1);
    ck_assert_str_eq(lg.order, "H");
}
END_TEST

START_TEST(test_stream_id_sent_on_every_call)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    ck_assert_int_eq(offerd_sched_suppress(sched, NULL, 0), 0);
    WAIT_FOR(fm.ncalls == 3, 5000);
    for (size_t i = 1; i < 3; i++) {
        ck_assert_str_eq(fm.calls[i].stream_id, "stream-1");
        ck_assert_str_eq(fm.calls[i].call->framework_id->value, "fw-1");
    }
}
END_TEST

/* ---- Each call's encoding ---- */

static const uint8_t ack_uuid[16] = {0x00, 0x01, 0x02, 0xff, 0x10, 0x20,
                                     0x30, 0x40, 0x50, 0x60, 0x70, 0x80,
                                     0x90, 0xa0, 0xb0, 0xc0};
static const uint8_t msg_data[] = {0x00, 'h', 'i', 0xfe};

static int do_teardown(struct offerd_sched *s)
{
    return offerd_sched_teardown(s);
}

static void chk_teardown(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(TEARDOWN));
}

static int do_accept(struct offerd_sched *s)
{
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    Mesos__V1__TaskInfo task = MESOS__V1__TASK_INFO__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__Offer__Operation op = MESOS__V1__OFFER__OPERATION__INIT;
    Mesos__V1__Offer__Operation__Launch launch =
        MESOS__V1__OFFER__OPERATION__LAUNCH__INIT;
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    Mesos__V1__TaskInfo *tasks[1] = {&task};
    Mesos__V1__Offer__Operation *ops[1] = {&op};
    cmd.has_shell = 1;
    cmd.shell = 1;
    cmd.value = "echo hello";
    tid.value = "t1";
    aid.value = "a1";
    task.name = "t";
    task.task_id = &tid;
    task.agent_id = &aid;
    task.command = &cmd;
    launch.n_task_infos = 1;
    launch.task_infos = tasks;
    op.has_type = 1;
    op.type = MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH;
    op.launch = &launch;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 10;
    const char *ids[] = {"o1", "o2"};
    return offerd_sched_accept(s, ids, 2, ops, 1, &filters);
}

static void chk_accept(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(ACCEPT));
    const Mesos__V1__Scheduler__Call__Accept *a = c->accept;
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->n_offer_ids, 2);
    ck_assert_str_eq(a->offer_ids[0]->value, "o1");
    ck_assert_str_eq(a->offer_ids[1]->value, "o2");
    ck_assert_int_eq(a->n_operations, 1);
    ck_assert_int_eq(a->operations[0]->type,
                     MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH);
    const Mesos__V1__TaskInfo *t = a->operations[0]->launch->task_infos[0];
    ck_assert_str_eq(t->task_id->value, "t1");
    ck_assert_str_eq(t->command->value, "echo hello");
    ck_assert(t->command->shell);
    ck_assert(a->filters->has_refuse_seconds);
    ck_assert(a->filters->refuse_seconds == 10.0);
}

static int do_decline(struct offerd_sched *s)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 5.5;
    const char *ids[] = {"o3"};
    return offerd_sched_decline(s, ids, 1, &filters);
}

static void chk_decline(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(DECLINE));
    ck_assert_int_eq(c->decline->n_offer_ids, 1);
    ck_assert_str_eq(c->decline->offer_ids[0]->value, "o3");
    ck_assert(c->decline->filters->refuse_seconds == 5.5);
}

static int do_accept_inverse(struct offerd_sched *s)
{
    const char *ids[] = {"i1"};
    return offerd_sched_accept_inverse_offers(s, ids, 1, NULL);
}

static void chk_accept_inverse(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(ACCEPT_INVERSE_OFFERS));
    ck_assert_int_eq(c->accept_inverse_offers->n_inverse_offer_ids, 1);
    ck_assert_str_eq(c->accept_inverse_offers->inverse_offer_ids[0]->value,
                     "i1");
    ck_assert_ptr_null(c->accept_inverse_offers->filters);
}

static int do_decline_inverse(struct offerd_sched *s)
{
    Mesos__V1__Filters filters = MESOS__V1__FILTERS__INIT;
    filters.has_refuse_seconds = 1;
    filters.refuse_seconds = 1;
    const char *ids[] = {"i2", "i3"};
    return offerd_sched_decline_inverse_offers(s, ids, 2, &filters);
}

static void chk_decline_inverse(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(DECLINE_INVERSE_OFFERS));
    ck_assert_int_eq(c->decline_inverse_offers->n_inverse_offer_ids, 2);
    ck_assert_str_eq(c->decline_inverse_offers->inverse_offer_ids[1]->value,
                     "i3");
    ck_assert(c->decline_inverse_offers->filters->refuse_seconds == 1.0);
}

static int do_revive(struct offerd_sched *s)
{
    const char *roles[] = {"eng", "eng/web"};
    return offerd_sched_revive(s, roles, 2);
}

static void chk_revive(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(REVIVE));
    ck_assert_int_eq(c->revive->n_roles, 2);
    ck_assert_str_eq(c->revive->roles[1], "eng/web");
}

static int do_revive_all(struct offerd_sched *s)
{
    return offerd_sched_revive(s, NULL, 0);
}

static void chk_revive_all(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(REVIVE));
    ck_assert_ptr_nonnull(c->revive);
    ck_assert_int_eq(c->revive->n_roles, 0);
}

static int do_suppress(struct offerd_sched *s)
{
    const char *roles[] = {"batch"};
    return offerd_sched_suppress(s, roles, 1);
}

static void chk_suppress(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(SUPPRESS));
    ck_assert_int_eq(c->suppress->n_roles, 1);
    ck_assert_str_eq(c->suppress->roles[0], "batch");
}

static int do_kill(struct offerd_sched *s)
{
    Mesos__V1__KillPolicy kp = MESOS__V1__KILL_POLICY__INIT;
    Mesos__V1__DurationInfo grace = MESOS__V1__DURATION_INFO__INIT;
    grace.nanoseconds = 3000000000LL;
    kp.grace_period = &grace;
    return offerd_sched_kill(s, "t1", "a1", &kp);
}

static void chk_kill(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(KILL));
    ck_assert_str_eq(c->kill->task_id->value, "t1");
    ck_assert_str_eq(c->kill->agent_id->value, "a1");
    ck_assert_int_eq(c->kill->kill_policy->grace_period->nanoseconds,
                     3000000000LL);
}

static int do_kill_no_agent(struct offerd_sched *s)
{
    return offerd_sched_kill(s, "t2", NULL, NULL);
}

static void chk_kill_no_agent(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(KILL));
    ck_assert_str_eq(c->kill->task_id->value, "t2");
    ck_assert_ptr_null(c->kill->agent_id);
    ck_assert_ptr_null(c->kill->kill_policy);
}

static int do_shutdown(struct offerd_sched *s)
{
    return offerd_sched_shutdown(s, "e1", "a1");
}

static void chk_shutdown(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(SHUTDOWN));
    ck_assert_str_eq(c->shutdown->executor_id->value, "e1");
    ck_assert_str_eq(c->shutdown->agent_id->value, "a1");
}

static int do_acknowledge(struct offerd_sched *s)
{
    return offerd_sched_acknowledge(s, "a1", "t1", ack_uuid, sizeof(ack_uuid));
}

static void chk_acknowledge(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(ACKNOWLEDGE));
    ck_assert_str_eq(c->acknowledge->agent_id->value, "a1");
    ck_assert_str_eq(c->acknowledge->task_id->value, "t1");
    ck_assert_int_eq(c->acknowledge->uuid.len, sizeof(ack_uuid));
    ck_assert_mem_eq(c->acknowledge->uuid.data, ack_uuid, sizeof(ack_uuid));
}

static int do_reconcile(struct offerd_sched *s)
{
    const struct offerd_reconcile_task tasks[] = {{"t1", "a1"}, {"t2", NULL}};
    return offerd_sched_reconcile(s, tasks, 2);
}

static void chk_reconcile(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(RECONCILE));
    ck_assert_int_eq(c->reconcile->n_tasks, 2);
    ck_assert_str_eq(c->reconcile->tasks[0]->task_id->value, "t1");
    ck_assert_str_eq(c->reconcile->tasks[0]->agent_id->value, "a1");
    ck_assert_str_eq(c->reconcile->tasks[1]->task_id->value, "t2");
    ck_assert_ptr_null(c->reconcile->tasks[1]->agent_id);
}

static int do_reconcile_implicit(struct offerd_sched *s)
{
    return offerd_sched_reconcile(s, NULL, 0);
}

static void chk_reconcile_implicit(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(RECONCILE));
    ck_assert_ptr_nonnull(c->reconcile);
    ck_assert_int_eq(c->reconcile->n_tasks, 0);
}

static int do_message(struct offerd_sched *s)
{
    return offerd_sched_message(s, "a1", "e1", msg_data, sizeof(msg_data));
}

static void chk_message(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(MESSAGE));
    ck_assert_str_eq(c->message->agent_id->value, "a1");
    ck_assert_str_eq(c->message->executor_id->value, "e1");
    ck_assert_int_eq(c->message->data.len, sizeof(msg_data));
    ck_assert_mem_eq(c->message->data.data, msg_data, sizeof(msg_data));
}

static int do_request(struct offerd_sched *s)
{
    Mesos__V1__Request req = MESOS__V1__REQUEST__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__Request *reqs[1] = {&req};
    aid.value = "a9";
    req.agent_id = &aid;
    return offerd_sched_request(s, reqs, 1);
}

static void chk_request(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(REQUEST));
    ck_assert_int_eq(c->request->n_requests, 1);
    ck_assert_str_eq(c->request->requests[0]->agent_id->value, "a9");
}

static int do_update_framework(struct offerd_sched *s)
{
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "tester";
    fi.name = "renamed";
    const char *sup[] = {"r1"};
    return offerd_sched_update_framework(s, &fi, sup, 1);
}

static void chk_update_framework(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(UPDATE_FRAMEWORK));
    ck_assert_str_eq(c->update_framework->framework_info->name, "renamed");
    ck_assert_str_eq(c->update_framework->framework_info->id->value, "fw-1");
    ck_assert_int_eq(c->update_framework->n_suppressed_roles, 1);
    ck_assert_str_eq(c->update_framework->suppressed_roles[0], "r1");
}

static int do_raw_call(struct offerd_sched *s)
{
    Mesos__V1__Scheduler__Call call = MESOS__V1__SCHEDULER__CALL__INIT;
    Mesos__V1__Scheduler__Call__AcknowledgeOperationStatus a =
        MESOS__V1__SCHEDULER__CALL__ACKNOWLEDGE_OPERATION_STATUS__INIT;
    Mesos__V1__OperationID oid = MESOS__V1__OPERATION_ID__INIT;
    oid.value = "op1";
    a.operation_id = &oid;
    a.uuid.data = (uint8_t *)ack_uuid;
    a.uuid.len = sizeof(ack_uuid);
    call.has_type = 1;
    call.type = CT(ACKNOWLEDGE_OPERATION_STATUS);
    call.acknowledge_operation_status = &a;
    int rc = offerd_sched_call(s, &call);
    ck_assert_ptr_null(call.framework_id); /* the caller's Call unchanged */
    return rc;
}

static void chk_raw_call(const Mesos__V1__Scheduler__Call *c)
{
    ck_assert_int_eq(c->type, CT(ACKNOWLEDGE_OPERATION_STATUS));
    ck_assert_str_eq(c->acknowledge_operation_status->operation_id->value,
                     "op1");
}

static const struct {
    const char *name;
    int (*invoke)(struct offerd_sched *s);
    void (*check)(const Mesos__V1__Scheduler__Call *c);
} call_cases[] = {
    {"teardown", do_teardown, chk_teardown},
    {"accept", do_accept, chk_accept},
    {"decline", do_decline, chk_decline},
    {"accept_inverse_offers", do_accept_inverse, chk_accept_inverse},
    {"decline_inverse_offers", do_decline_inverse, chk_decline_inverse},
    {"revive", do_revive, chk_revive},
    {"revive all roles", do_revive_all, chk_revive_all},
    {"suppress", do_suppress, chk_suppress},
    {"kill", do_kill, chk_kill},
    {"kill without agent", do_kill_no_agent, chk_kill_no_agent},
    {"shutdown", do_shutdown, chk_shutdown},
    {"acknowledge", do_acknowledge, chk_acknowledge},
    {"reconcile", do_reconcile, chk_reconcile},
    {"reconcile implicit", do_reconcile_implicit, chk_reconcile_implicit},
    {"message", do_message, chk_message},
    {"request", do_request, chk_request},
    {"update_framework", do_update_framework, chk_update_framework},
    {"raw call", do_raw_call, chk_raw_call},
};
#define NCALL_CASES ((int)(sizeof(call_cases) / sizeof(call_cases[0])))

/* _i: case index * 2 + encoding. */
START_TEST(test_call_encoding)
{
    int k = _i / 2;
    enum offerd_encoding enc = (enum offerd_encoding)(_i % 2);
    struct offerd_sched_options o = default_options(enc);
    client_subscribe(&o);
    ck_assert_msg(call_cases[k].invoke(sched) == 0, "%s: not sent",
                  call_cases[k].name);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 1);
    WAIT_FOR(fm.ncalls == 2 && offerd_sched_pending_calls(sched) == 0, 5000);
    const struct fake_call *fc = &fm.calls[1];
    ck_assert_str_eq(fc->content_type, enc == OFFERD_ENCODING_JSON
                                           ? "application/json"
                                           : "application/x-protobuf");
    ck_assert_str_eq(fc->stream_id, "stream-1");
    ck_assert_str_eq(fc->call->framework_id->value, "fw-1");
    call_cases[k].check(fc->call);
    ck_assert_int_eq(lg.call_failed, 0);
}
END_TEST

START_TEST(test_calls_refuse_missing_arguments)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    const char *null_id[] = {NULL};
    ck_assert_int_eq(offerd_sched_accept(sched, NULL, 0, NULL, 0, NULL), -1);
    ck_assert_int_eq(offerd_sched_accept(sched, null_id, 1, NULL, 0, NULL), -1);
    ck_assert_int_eq(offerd_sched_decline(sched, NULL, 1, NULL), -1);
    ck_assert_int_eq(offerd_sched_revive(sched, null_id, 1), -1);
    ck_assert_int_eq(offerd_sched_kill(sched, NULL, "a1", NULL), -1);
    ck_assert_int_eq(offerd_sched_shutdown(sched, "e1", NULL), -1);
    ck_assert_int_eq(offerd_sched_acknowledge(sched, NULL, "t", NULL, 0), -1);
    ck_assert_int_eq(offerd_sched_reconcile(sched, NULL, 2), -1);
    ck_assert_int_eq(offerd_sched_message(sched, "a", "e", NULL, 3), -1);
    ck_assert_int_eq(offerd_sched_update_framework(sched, NULL, NULL, 0), -1);
    Mesos__V1__Scheduler__Call sub = MESOS__V1__SCHEDULER__CALL__INIT;
    sub.has_type = 1;
    sub.type = CT(SUBSCRIBE);
    ck_assert_int_eq(offerd_sched_call(sched, &sub), -1);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
}
END_TEST

START_TEST(test_call_failure_reaches_callback)
{
    fm.call_status = 400;
    snprintf(fm.call_reason, sizeof(fm.call_reason),
             "Offer o1 is no longer valid");
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    const char *ids[] = {"o1"};
    ck_assert_int_eq(offerd_sched_decline(sched, ids, 1, NULL), 0);
    WAIT_FOR(lg.call_failed == 1, 5000);
    ck_assert_int_eq(lg.failed_type, CT(DECLINE));
    ck_assert_int_eq(lg.failed_status, 400);
    ck_assert_str_eq(lg.failed_reason, "Offer o1 is no longer valid");
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
    ck_assert(offerd_sched_is_subscribed(sched)); /* a call failing is not a
                                                     disconnection */
}
END_TEST

/* ---- Acknowledgements ---- */

static void send_three_updates(void)
{
    send_update(&fm, "t1", "uuid-A", MESOS__V1__TASK_STATE__TASK_RUNNING);
    send_update(&fm, "t2", NULL, MESOS__V1__TASK_STATE__TASK_RUNNING);
    send_update(&fm, "t3", "uuid-B", MESOS__V1__TASK_STATE__TASK_FINISHED);
    send_heartbeat(&fm); /* a marker: the updates were handled before it */
}

START_TEST(test_auto_ack_once_per_update_with_uuid)
{
    struct offerd_sched_options o = default_options(
        _i == 0 ? OFFERD_ENCODING_JSON : OFFERD_ENCODING_PROTOBUF);
    o.auto_acknowledge = true;
    client_subscribe(&o);
    send_three_updates();
    WAIT_FOR(lg.heartbeat == 1 && offerd_sched_pending_calls(sched) == 0, 5000);
    ck_assert_int_eq(lg.update, 3);
    ck_assert_int_eq(fake_count(&fm, CT(ACKNOWLEDGE)), 2);
    /* The first update's callback ran before anything was acknowledged. */
    const struct fake_call *a = fake_find(&fm, CT(ACKNOWLEDGE), 0);
    const struct fake_call *b = fake_find(&fm, CT(ACKNOWLEDGE), 1);
    /* Two connections: the master may see them in either order. */
    if (strcmp(a->call->acknowledge->task_id->value, "t3") == 0) {
        const struct fake_call *t = a;
        a = b;
        b = t;
    }
    ck_assert_str_eq(a->call->acknowledge->task_id->value, "t1");
    ck_assert_str_eq(a->call->acknowledge->agent_id->value, "a1");
    ck_assert_int_eq(a->call->acknowledge->uuid.len, 6);
    ck_assert_mem_eq(a->call->acknowledge->uuid.data, "uuid-A", 6);
    ck_assert_str_eq(b->call->acknowledge->task_id->value, "t3");
    ck_assert_mem_eq(b->call->acknowledge->uuid.data, "uuid-B", 6);
    ck_assert_str_eq(a->stream_id, "stream-1");
}
END_TEST

START_TEST(test_no_auto_ack_when_disabled)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.auto_acknowledge = false;
    client_subscribe(&o);
    send_three_updates();
    WAIT_FOR(lg.heartbeat == 1, 5000);
    ck_assert_int_eq(lg.update, 3);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
    ck_assert_int_eq(fake_count(&fm, CT(ACKNOWLEDGE)), 0);
}
END_TEST

START_TEST(test_auto_ack_after_callback_returns)
{
    /* The callback sees no acknowledgement in flight for its own update. */
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.auto_acknowledge = true;
    client_subscribe(&o);
    send_update(&fm, "t1", "uuid-A", MESOS__V1__TASK_STATE__TASK_RUNNING);
    WAIT_FOR(lg.update == 1, 5000);
    ck_assert_int_eq(lg.pending_at_update, 0);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 1);
    WAIT_FOR(fake_count(&fm, CT(ACKNOWLEDGE)) == 1, 5000);
}
END_TEST

/* ---- Stream decoding ---- */

START_TEST(test_record_split_across_chunks)
{
    struct offerd_sched_options o = default_options(
        _i == 0 ? OFFERD_ENCODING_JSON : OFFERD_ENCODING_PROTOBUF);
    client_subscribe(&o);
    size_t len;
    uint8_t *frame = heartbeat_frame(&fm, &len);
    ck_assert_uint_gt(len, 2);
    /* Every split point of one record into two chunks. */
    for (size_t k = 1; k < len; k++) {
        ck_assert_int_eq(http_stream_send(fm.stream, frame, k), 0);
        ck_assert_int_eq(http_stream_send(fm.stream, frame + k, len - k), 0);
    }
    /* And one record a byte per chunk. */
    for (size_t k = 0; k < len; k++)
        ck_assert_int_eq(http_stream_send(fm.stream, frame + k, 1), 0);
    free(frame);
    WAIT_FOR(lg.heartbeat == (int)len, 5000);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

START_TEST(test_several_records_in_one_chunk)
{
    struct offerd_sched_options o = default_options(
        _i == 0 ? OFFERD_ENCODING_JSON : OFFERD_ENCODING_PROTOBUF);
    client_subscribe(&o);
    /* Build OFFERS, UPDATE, HEARTBEAT frames and send them as one chunk. */
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Offers offers =
        MESOS__V1__SCHEDULER__EVENT__OFFERS__INIT;
    Mesos__V1__Scheduler__Event__Update up =
        MESOS__V1__SCHEDULER__EVENT__UPDATE__INIT;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "t1";
    st.task_id = &tid;
    st.state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    up.status = &st;
    uint8_t buf[4096];
    size_t used = 0;
    for (int k = 0; k < 3; k++) {
        mesos__v1__scheduler__event__init(&ev);
        ev.has_type = 1;
        if (k == 0) {
            ev.type = ET(OFFERS);
            ev.offers = &offers;
        } else if (k == 1) {
            ev.type = ET(UPDATE);
            ev.update = &up;
        } else {
            ev.type = ET(HEARTBEAT);
        }
        size_t n;
        uint8_t *b = jpb_encode(&ev.base, (enum jpb_format)fm.stream_enc, &n);
        size_t w = rio_encode(b, n, buf + used, sizeof(buf) - used);
        free(b);
        ck_assert_uint_gt(w, 0);
        used += w;
    }
    ck_assert_int_eq(http_stream_send(fm.stream, buf, used), 0);
    WAIT_FOR(lg.heartbeat == 1, 5000);
    ck_assert_str_eq(lg.order, "OUH");
}
END_TEST

/* One event of each type, each reaching only its own callback. */
static const struct {
    int type;
    const char *json; /* the event's JSON */
    size_t counter;   /* offsetof the counter in struct log */
} event_cases[] = {
    {ET(OFFERS), "{\"type\":\"OFFERS\",\"offers\":{}}",
     offsetof(struct log, offers)},
    {ET(INVERSE_OFFERS), "{\"type\":\"INVERSE_OFFERS\",\"inverse_offers\":{}}",
     offsetof(struct log, inverse_offers)},
    {ET(RESCIND),
     "{\"type\":\"RESCIND\",\"rescind\":{\"offer_id\":{\"value\":\"o1\"}}}",
     offsetof(struct log, rescind)},
    {ET(RESCIND_INVERSE_OFFER),
     "{\"type\":\"RESCIND_INVERSE_OFFER\",\"rescind_inverse_offer\":"
     "{\"inverse_offer_id\":{\"value\":\"i1\"}}}",
     offsetof(struct log, rescind_inverse_offer)},
    {ET(UPDATE),
     "{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\"}}}",
     offsetof(struct log, update)},
    {ET(UPDATE_OPERATION_STATUS),
     "{\"type\":\"UPDATE_OPERATION_STATUS\",\"update_operation_status\":"
     "{\"status\":{\"state\":\"OPERATION_FINISHED\"}}}",
     offsetof(struct log, update_operation_status)},
    {ET(MESSAGE),
     "{\"type\":\"MESSAGE\",\"message\":{\"agent_id\":{\"value\":\"a1\"},"
     "\"executor_id\":{\"value\":\"e1\"},\"data\":\"aGk=\"}}",
     offsetof(struct log, message)},
    {ET(FAILURE), "{\"type\":\"FAILURE\",\"failure\":{\"status\":1}}",
     offsetof(struct log, failure)},
    {ET(ERROR), "{\"type\":\"ERROR\",\"error\":{\"message\":\"go away\"}}",
     offsetof(struct log, error)},
    {ET(HEARTBEAT), "{\"type\":\"HEARTBEAT\"}",
     offsetof(struct log, heartbeat)},
};
#define NEVENT_CASES ((int)(sizeof(event_cases) / sizeof(event_cases[0])))

static int counter_sum(void)
{
    int sum = 0;
    for (int k = 0; k < NEVENT_CASES; k++)
        sum += *(int *)((char *)&lg + event_cases[k].counter);
    return sum;
}

START_TEST(test_event_reaches_its_callback)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    const char *json = event_cases[_i].json;
    ck_assert_int_eq(http_stream_send_record(fm.stream, json, strlen(json)), 0);
    int *counter = (int *)((char *)&lg + event_cases[_i].counter);
    WAIT_FOR(*counter == 1, 5000);
    ck_assert_int_eq(counter_sum(), 1);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

START_TEST(test_event_without_payload_is_dropped)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    const char *bad = "{\"type\":\"OFFERS\"}";
    ck_assert_int_eq(http_stream_send_record(fm.stream, bad, strlen(bad)), 0);
    send_heartbeat(&fm);
    WAIT_FOR(lg.heartbeat == 1, 5000);
    ck_assert_int_eq(lg.offers, 0);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

static const struct {
    const char *bytes;
    const char *reason; /* substring of the disconnection reason */
} bad_streams[] = {
    {"5\nhello", "undecodable event"},
    {"x\n{}", "malformed event stream"},
    {"99999999999\n", "malformed event stream"}, /* above the record limit */
};

START_TEST(test_bad_stream_reconnects)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.max_event_size = 1 << 20;
    client_subscribe(&o);
    const char *b = bad_streams[_i].bytes;
    ck_assert_int_eq(http_stream_send(fm.stream, b, strlen(b)), 0);
    WAIT_FOR(lg.disconnected == 1, 5000);
    ck_assert_msg(strstr(lg.disc_reason, bad_streams[_i].reason) != NULL,
                  "reason: %s", lg.disc_reason);
    ck_assert(lg.disc_retry);
    WAIT_FOR(lg.subscribed == 2, 5000);
    ck_assert_int_eq(fm.nsubscribes, 2);
}
END_TEST

/* ---- Reconnection ---- */

/* A loopback port nothing listens on (bound, read, closed). */
static uint16_t closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    close(fd);
    return ntohs(sa.sin_port);
}

START_TEST(test_dropped_stream_resubscribes_with_backoff)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.backoff_min_ms = 100;
    o.backoff_max_ms = 400;
    client_subscribe(&o);
    fake_end_stream(&fm);
    WAIT_FOR(lg.disconnected == 1, 5000);
    ck_assert(lg.disc_retry);
    ck_assert(!offerd_sched_is_subscribed(sched));
    ck_assert_ptr_null(offerd_sched_stream_id(sched));
    int64_t lost_at = lg.disc_at_ms;
    WAIT_FOR(lg.subscribed == 2, 5000);
    const struct fake_call *fc = fake_find(&fm, CT(SUBSCRIBE), 1);
    ck_assert_ptr_nonnull(fc);
    /* Backoff: at least half of backoff_min_ms after the loss. */
    ck_assert_int_ge(fc->at_ms - lost_at, 50 - 5);
    /* Re-subscribed as the same framework. */
    ck_assert_str_eq(fc->call->framework_id->value, "fw-1");
    ck_assert_str_eq(fc->call->subscribe->framework_info->id->value, "fw-1");
    ck_assert_str_eq(fc->stream_id, "");
    /* Later calls carry the new stream id. */
    ck_assert_str_eq(offerd_sched_stream_id(sched), "stream-2");
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm, CT(REVIVE)) == 1, 5000);
    ck_assert_str_eq(fake_find(&fm, CT(REVIVE), 0)->stream_id, "stream-2");
}
END_TEST

START_TEST(test_backoff_grows_while_master_is_down)
{
    /* Connection refused, again and again: delays double up to the max. */
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.backoff_min_ms = 40;
    o.backoff_max_ms = 160;
    o.master_port = closed_port();
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    int64_t t0 = now_ms();
    WAIT_FOR(lg.call_failed == 5, 5000);
    int64_t elapsed = now_ms() - t0;
    /* Delays after failures 1..4: at least 20 + 40 + 80 + 80 ms. */
    ck_assert_int_ge(elapsed, 220 - 10);
    ck_assert_int_eq(lg.failed_type, CT(SUBSCRIBE));
    ck_assert_int_eq(lg.failed_status, 0);
    ck_assert_int_eq(lg.connected, 0);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

START_TEST(test_missed_heartbeats_reconnect)
{
    fm.heartbeat = 0.05;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.heartbeat_tolerance = 2;
    client_subscribe(&o);
    ck_assert(lg.heartbeat_interval == 0.05);
    /* The fake stays silent: after 0.1 s the client gives the stream up. */
    WAIT_FOR(lg.disconnected == 1, 5000);
    ck_assert_msg(strstr(lg.disc_reason, "no event") != NULL, "reason: %s",
                  lg.disc_reason);
    ck_assert(lg.disc_retry);
    WAIT_FOR(lg.subscribed == 2, 5000);
    ck_assert_str_eq(
        fake_find(&fm, CT(SUBSCRIBE), 1)->call->framework_id->value, "fw-1");
}
END_TEST

static void on_beat(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct fake *f = arg;
    if (f->stream != NULL)
        send_heartbeat(f);
}

START_TEST(test_heartbeats_keep_the_stream)
{
    fm.heartbeat = 0.05;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.heartbeat_tolerance = 6; /* 0.3 s of silence allowed */
    client_subscribe(&o);
    struct event *beat = event_new(base, -1, EV_PERSIST, on_beat, &fm);
    struct timeval tv = {0, 40000};
    event_add(beat, &tv);
    run_for(900); /* three times the allowed silence */
    event_free(beat);
    ck_assert_int_ge(lg.heartbeat, 10);
    ck_assert_int_eq(lg.disconnected, 0);
    ck_assert_int_eq(fm.nsubscribes, 1);
}
END_TEST

START_TEST(test_subscribed_timeout_reconnects)
{
    fm.send_subscribed = false;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.subscribe_timeout_ms = 100;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.disconnected == 1, 5000);
    ck_assert_msg(strstr(lg.disc_reason, "no SUBSCRIBED") != NULL, "reason: %s",
                  lg.disc_reason);
    WAIT_FOR(fm.nsubscribes == 2, 5000);
}
END_TEST

START_TEST(test_subscribe_refusals_give_up)
{
    fm.subscribe_status = 403;
    snprintf(fm.subscribe_reason, sizeof(fm.subscribe_reason),
             "Framework is not authorized");
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.max_subscribe_refusals = 2;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.disconnected == 1, 5000);
    ck_assert(!lg.disc_retry);
    ck_assert_msg(strstr(lg.disc_reason, "Framework is not authorized") != NULL,
                  "reason: %s", lg.disc_reason);
    ck_assert_int_eq(lg.call_failed, 2);
    ck_assert_int_eq(lg.failed_type, CT(SUBSCRIBE));
    ck_assert_int_eq(lg.failed_status, 403);
    ck_assert_str_eq(lg.failed_reason, "Framework is not authorized");
    run_for(200); /* well past the backoff: no third attempt */
    ck_assert_int_eq(fm.nsubscribes, 2);
    ck_assert_int_eq(lg.connected, 0);
    /* A stopped client may be started again. */
    fm.subscribe_status = 0;
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.subscribed == 1, 5000);
}
END_TEST

START_TEST(test_server_error_is_retried)
{
    fm.subscribe_status = 500;
    snprintf(fm.subscribe_reason, sizeof(fm.subscribe_reason), "oops");
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.max_subscribe_refusals = 1;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.call_failed == 3, 5000); /* 5xx do not count as refusals */
    ck_assert_int_eq(lg.failed_status, 500);
    ck_assert_str_eq(lg.failed_reason, "oops");
    fm.subscribe_status = 0;
    WAIT_FOR(lg.subscribed == 1, 5000);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

static const struct {
    int status;
    const char *before, *after; /* Location: before<port>after */
} redirects[] = {
    {307, "//127.0.0.1:", "/api/v1/scheduler"},
    {503, "http://127.0.0.1:", "/api/v1/scheduler"},
    {307, "127.0.0.1:", ""},
};

START_TEST(test_redirect_to_leader)
{
    fake_init(&fm2); /* the leader */
    fm.subscribe_status = redirects[_i].status;
    snprintf(fm.subscribe_reason, sizeof(fm.subscribe_reason),
             "Not the leading master");
    snprintf(fm.location, sizeof(fm.location), "%s%u%s", redirects[_i].before,
             (unsigned)fm2.port, redirects[_i].after);
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    ck_assert_int_eq(fm.nsubscribes, 1);
    ck_assert_int_eq(fm2.nsubscribes, 1);
    ck_assert_int_eq(lg.call_failed, 0); /* a redirect is not a failure */
    /* Calls go to the leader. */
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm2, CT(REVIVE)) == 1, 5000);
    ck_assert_int_eq(fake_count(&fm, CT(REVIVE)), 0);
}
END_TEST

/* ---- Leader: names, redirected calls ---- */

START_TEST(test_master_given_by_name)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.master_host = "localhost"; /* looked up without blocking the loop */
    client_subscribe(&o);
    ck_assert_int_eq(fm.nsubscribes, 1);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm, CT(REVIVE)) == 1, 5000);
    ck_assert_int_eq(lg.call_failed, 0);
}
END_TEST

START_TEST(test_unknown_name_is_a_failed_attempt)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.master_host = "no-such-master.invalid";
    o.subscribe_timeout_ms = 500;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.call_failed >= 1, 5000);
    ck_assert_int_eq(lg.failed_type, CT(SUBSCRIBE));
    ck_assert_int_eq(lg.failed_status, 0);
    ck_assert_int_eq(fm.nsubscribes, 0);
}
END_TEST

START_TEST(test_redirect_to_a_name)
{
    fake_init(&fm2);
    fm.subscribe_status = 307;
    snprintf(fm.location, sizeof(fm.location),
             "//localhost:%u/api/v1/scheduler", (unsigned)fm2.port);
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    ck_assert_int_eq(fm2.nsubscribes, 1);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm2, CT(REVIVE)) == 1, 5000);
}
END_TEST

static const char *const call_redirect_hosts[] = {"127.0.0.1", "localhost"};

START_TEST(test_call_follows_redirect)
{
    fake_init(&fm2); /* the master that leads now */
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    fm.call_status = 307;
    snprintf(fm.call_location, sizeof(fm.call_location),
             "//%s:%u/api/v1/scheduler", call_redirect_hosts[_i],
             (unsigned)fm2.port);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm2, CT(REVIVE)) == 1, 5000);
    ck_assert_int_eq(fake_count(&fm, CT(REVIVE)), 1);
    const struct fake_call *fc = fake_find(&fm2, CT(REVIVE), 0);
    ck_assert_str_eq(fc->stream_id, "stream-1"); /* the same call */
    ck_assert_str_eq(fc->call->framework_id->value, "fw-1");
    WAIT_FOR(offerd_sched_pending_calls(sched) == 0, 5000);
    ck_assert_int_eq(lg.call_failed, 0); /* a redirect is not a failure */
}
END_TEST

START_TEST(test_call_redirects_are_bounded)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    fm.call_status = 307; /* to itself, for ever */
    snprintf(fm.call_reason, sizeof(fm.call_reason), "loop");
    snprintf(fm.call_location, sizeof(fm.call_location),
             "//127.0.0.1:%u/api/v1/scheduler", (unsigned)fm.port);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(lg.call_failed == 1, 5000);
    ck_assert_int_eq(lg.failed_type, CT(REVIVE));
    ck_assert_int_eq(lg.failed_status, 307);
    ck_assert_int_eq(fake_count(&fm, CT(REVIVE)), 4); /* 1 + 3 hops */
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
}
END_TEST

START_TEST(test_no_leader_yet_is_retried)
{
    /* A standby that knows no leader answers 503 without a Location. */
    fm.subscribe_status = 503;
    snprintf(fm.subscribe_reason, sizeof(fm.subscribe_reason),
             "No leading master");
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.call_failed == 4, 5000); /* never counted as refusals */
    ck_assert_int_eq(lg.failed_status, 503);
    ck_assert_str_eq(lg.failed_reason, "No leading master");
    fm.subscribe_status = 0;
    WAIT_FOR(lg.subscribed == 1, 5000);
    ck_assert_int_eq(lg.disconnected, 0);
}
END_TEST

/* options.master in its forms other than zk:// (e2e_ha_clients has it). */
START_TEST(test_master_option_forms)
{
    char path[] = "/tmp/offerd-test-master-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    char text[64];
    int n = snprintf(text, sizeof(text), "  localhost:%u\n", (unsigned)fm.port);
    ck_assert_int_eq(write(fd, text, (size_t)n), n);
    close(fd);
    char spec[128];
    if (_i == 0)
        snprintf(spec, sizeof(spec), "localhost:%u", (unsigned)fm.port);
    else
        snprintf(spec, sizeof(spec), "file://%s", path);
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.master = spec;
    o.master_host = NULL; /* ignored with master */
    o.master_port = 0;
    client_subscribe(&o);
    ck_assert_int_eq(fm.nsubscribes, 1);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    WAIT_FOR(fake_count(&fm, CT(REVIVE)) == 1, 5000);
    unlink(path);
}
END_TEST

START_TEST(test_master_option_unusable)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.master = "file:///nonexistent/offerd-master";
    char err[256] = "";
    ck_assert_ptr_null(offerd_sched_new(base, &o, err, sizeof(err)));
    ck_assert_msg(strstr(err, "/nonexistent/offerd-master") != NULL, "%s", err);
    o.master = "not a master";
    ck_assert_ptr_null(offerd_sched_new(base, &o, err, sizeof(err)));
    ck_assert_str_ne(err, "");
}
END_TEST

START_TEST(test_unparsable_location_is_a_failure)
{
    fm.subscribe_status = 307;
    snprintf(fm.location, sizeof(fm.location), "//:99999/x");
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.call_failed == 1, 5000);
    ck_assert_int_eq(lg.failed_status, 307);
}
END_TEST

START_TEST(test_teardown_does_not_reconnect)
{
    fm.close_on_teardown = true;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    ck_assert_int_eq(offerd_sched_teardown(sched), 0);
    WAIT_FOR(lg.disconnected == 1 && offerd_sched_pending_calls(sched) == 0,
             5000);
    ck_assert(!lg.disc_retry);
    ck_assert(!offerd_sched_is_subscribed(sched));
    run_for(100); /* several backoffs: no new SUBSCRIBE */
    ck_assert_int_eq(fm.nsubscribes, 1);
    ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), -1);
    /* Starting again subscribes as a new framework. */
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.subscribed == 2, 5000);
    ck_assert_ptr_null(fake_find(&fm, CT(SUBSCRIBE), 1)->call->framework_id);
}
END_TEST

START_TEST(test_update_framework_used_on_resubscribe)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_PROTOBUF);
    client_subscribe(&o);
    ck_assert_int_eq(do_update_framework(sched), 0);
    WAIT_FOR(fake_count(&fm, CT(UPDATE_FRAMEWORK)) == 1, 5000);
    fake_end_stream(&fm);
    WAIT_FOR(lg.subscribed == 2, 5000);
    const struct fake_call *fc = fake_find(&fm, CT(SUBSCRIBE), 1);
    ck_assert_str_eq(fc->call->subscribe->framework_info->name, "renamed");
    ck_assert_str_eq(fc->call->subscribe->framework_info->id->value, "fw-1");
}
END_TEST

/* ---- Stop and free from callbacks ---- */

static const struct {
    enum where where;
    const char *name;
} end_cases[] = {
    {IN_CONNECTED, "connected"},
    {IN_SUBSCRIBED, "subscribed"},
    {IN_OFFERS, "offers"},
    {IN_UPDATE, "update"},
    {IN_DISCONNECTED, "disconnected"},
    {IN_CALL_FAILED, "call_failed"},
};

/* Drive the client to the callback chosen by end_cases[k]. Returns a
 * pointer to the counter that shows the callback ran. */
static int *drive_to(enum where w)
{
    switch (w) {
    case IN_CONNECTED:
        return &lg.connected;
    case IN_SUBSCRIBED:
        return &lg.subscribed;
    case IN_OFFERS:
        WAIT_FOR(lg.subscribed == 1, 5000);
        /* The events right behind it must not be delivered. */
        send_offer(&fm, "o1");
        send_heartbeat(&fm);
        return &lg.offers;
    case IN_UPDATE:
        WAIT_FOR(lg.subscribed == 1, 5000);
        send_update(&fm, "t1", "uuid-A", MESOS__V1__TASK_STATE__TASK_RUNNING);
        send_heartbeat(&fm);
        return &lg.update;
    case IN_DISCONNECTED:
        WAIT_FOR(lg.subscribed == 1, 5000);
        fake_end_stream(&fm);
        return &lg.disconnected;
    case IN_CALL_FAILED:
        WAIT_FOR(lg.subscribed == 1, 5000);
        fm.call_status = 400;
        snprintf(fm.call_reason, sizeof(fm.call_reason), "no");
        ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
        ck_assert_int_eq(offerd_sched_suppress(sched, NULL, 0), 0);
        return &lg.call_failed;
    case IN_NONE:
        break;
    }
    return NULL;
}

START_TEST(test_free_inside_callback)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.auto_acknowledge = true;
    lg.free_in = end_cases[_i].where;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    int *counter = drive_to(lg.free_in);
    WAIT_FOR(*counter == 1, 5000);
    ck_assert_ptr_null(sched);
    struct log before = lg;
    run_for(150); /* nothing more may happen (ASan checks the memory) */
    ck_assert_int_eq(lg.heartbeat, 0);
    ck_assert_int_eq(lg.call_failed, before.call_failed);
    ck_assert_int_eq(lg.disconnected, before.disconnected);
    ck_assert_int_eq(lg.subscribed, before.subscribed);
    ck_assert_int_eq(fake_count(&fm, CT(ACKNOWLEDGE)), 0);
    ck_assert_int_le(fm.nsubscribes, 1);
}
END_TEST

START_TEST(test_stop_inside_callback_then_restart)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.auto_acknowledge = true;
    lg.stop_in = end_cases[_i].where;
    client_new(&o);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    int *counter = drive_to(lg.stop_in);
    WAIT_FOR(*counter == 1, 5000);
    ck_assert(!offerd_sched_is_subscribed(sched));
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 0);
    run_for(100);
    ck_assert_int_eq(lg.heartbeat, 0);
    ck_assert_int_eq(fake_count(&fm, CT(ACKNOWLEDGE)), 0);
    int subs = fm.nsubscribes;
    lg.stop_in = IN_NONE;
    fm.call_status = 0;
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(fm.nsubscribes == subs + 1 && offerd_sched_is_subscribed(sched),
             5000);
    /* A stopped client keeps its framework id once it had one. */
    if (lg.subscribed > 1)
        ck_assert_str_eq(
            fake_find(&fm, CT(SUBSCRIBE), subs)->call->framework_id->value,
            "fw-1");
}
END_TEST

START_TEST(test_free_with_calls_in_flight)
{
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    client_subscribe(&o);
    for (int k = 0; k < 5; k++)
        ck_assert_int_eq(offerd_sched_revive(sched, NULL, 0), 0);
    ck_assert_int_eq(offerd_sched_pending_calls(sched), 5);
    offerd_sched_free(sched);
    sched = NULL;
    run_for(100);
    ck_assert_int_eq(lg.call_failed, 0);
}
END_TEST

/* ---- Offer pool ---- */

static struct offerd_pool *tpool;
static size_t pool_size_in_offers;  /* pool size when cb_pool_offers ran */
static size_t pool_size_in_rescind; /* ... and cb_pool_rescind */

static void cb_pool_offers(struct offerd_sched *s,
                           const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)ev;
    (void)user;
    struct offerd_pool_metrics m;
    offerd_pool_get_metrics(offerd_sched_pool(s), &m);
    pool_size_in_offers = m.size;
    lg.offers++;
}

static void cb_pool_rescind(struct offerd_sched *s,
                            const Mesos__V1__Scheduler__Event *ev, void *user)
{
    (void)ev;
    (void)user;
    struct offerd_pool_metrics m;
    offerd_pool_get_metrics(offerd_sched_pool(s), &m);
    pool_size_in_rescind = m.size;
    lg.rescind++;
}

/* Send OFFERS with one offer per id (agent agent, cpus each). */
static void send_offers(struct fake *f, const char *const *ids, size_t n,
                        const char *agent, double cpus)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Offers offers =
        MESOS__V1__SCHEDULER__EVENT__OFFERS__INIT;
    Mesos__V1__Offer offer[8];
    Mesos__V1__Offer *list[8];
    Mesos__V1__OfferID oid[8];
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__Resource r = MESOS__V1__RESOURCE__INIT;
    Mesos__V1__Value__Scalar sc = MESOS__V1__VALUE__SCALAR__INIT;
    Mesos__V1__Resource *res[1] = {&r};
    ck_assert_uint_le(n, 8);
    r.name = "cpus";
    r.type = MESOS__V1__VALUE__TYPE__SCALAR;
    sc.value = cpus;
    r.scalar = &sc;
    fid.value = f->framework_id;
    aid.value = (char *)agent;
    for (size_t i = 0; i < n; i++) {
        mesos__v1__offer__init(&offer[i]);
        mesos__v1__offer_id__init(&oid[i]);
        oid[i].value = (char *)ids[i];
        offer[i].id = &oid[i];
        offer[i].framework_id = &fid;
        offer[i].agent_id = &aid;
        offer[i].hostname = "host1";
        offer[i].n_resources = 1;
        offer[i].resources = res;
        list[i] = &offer[i];
    }
    offers.n_offers = n;
    offers.offers = list;
    ev.has_type = 1;
    ev.type = ET(OFFERS);
    ev.offers = &offers;
    fake_send_event(f, &ev);
}

static void send_rescind(struct fake *f, const char *offer_id)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Rescind r =
        MESOS__V1__SCHEDULER__EVENT__RESCIND__INIT;
    Mesos__V1__OfferID oid = MESOS__V1__OFFER_ID__INIT;
    oid.value = (char *)offer_id;
    r.offer_id = &oid;
    ev.has_type = 1;
    ev.type = ET(RESCIND);
    ev.rescind = &r;
    fake_send_event(f, &ev);
}

/* An UPDATE from source (-1: unset) with reason (-1: unset) for a task on
 * agent. */
static void send_status(struct fake *f, const char *agent,
                        Mesos__V1__TaskState state, int source, int reason)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Update up =
        MESOS__V1__SCHEDULER__EVENT__UPDATE__INIT;
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    tid.value = "t1";
    aid.value = (char *)agent;
    st.task_id = &tid;
    st.agent_id = &aid;
    st.state = state;
    if (source >= 0) {
        st.has_source = 1;
        st.source = (Mesos__V1__TaskStatus__Source)source;
    }
    if (reason >= 0) {
        st.has_reason = 1;
        st.reason = (Mesos__V1__TaskStatus__Reason)reason;
    }
    up.status = &st;
    ev.has_type = 1;
    ev.type = ET(UPDATE);
    ev.update = &up;
    fake_send_event(f, &ev);
}

static void send_failure(struct fake *f, const char *agent,
                         const char *executor)
{
    Mesos__V1__Scheduler__Event ev = MESOS__V1__SCHEDULER__EVENT__INIT;
    Mesos__V1__Scheduler__Event__Failure fl =
        MESOS__V1__SCHEDULER__EVENT__FAILURE__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    aid.value = (char *)agent;
    fl.agent_id = &aid;
    if (executor != NULL) {
        eid.value = (char *)executor;
        fl.executor_id = &eid;
    }
    ev.has_type = 1;
    ev.type = ET(FAILURE);
    ev.failure = &fl;
    fake_send_event(f, &ev);
}

static struct offerd_pool_metrics pool_metrics(void)
{
    struct offerd_pool_metrics m;
    offerd_pool_get_metrics(tpool, &m);
    return m;
}

/* Subscribe a client with a pool attached. */
static void pool_client(void)
{
    char err[128];
    tpool = offerd_pool_new(NULL, err, sizeof(err));
    ck_assert_ptr_nonnull(tpool);
    pool_size_in_offers = pool_size_in_rescind = 99;
    struct offerd_sched_options o = default_options(OFFERD_ENCODING_JSON);
    o.callbacks.offers = cb_pool_offers;
    o.callbacks.rescind = cb_pool_rescind;
    client_new(&o);
    ck_assert_ptr_null(offerd_sched_pool(sched));
    ck_assert_int_eq(offerd_sched_set_pool(sched, tpool), 0);
    ck_assert_ptr_eq(offerd_sched_pool(sched), tpool);
    ck_assert_int_eq(offerd_sched_start(sched), 0);
    WAIT_FOR(lg.subscribed == 1, 5000);
}

static void pool_teardown(void)
{
    offerd_sched_free(sched);
    sched = NULL;
    offerd_pool_free(tpool);
    tpool = NULL;
    teardown();
}

START_TEST(test_pool_fed_before_callbacks)
{
    pool_client();
    const char *ids[] = {"o1", "o2"};
    send_offers(&fm, ids, 2, "a1", 1);
    WAIT_FOR(lg.offers == 1, 5000);
    ck_assert_uint_eq(pool_size_in_offers, 2);
    send_rescind(&fm, "o1");
    WAIT_FOR(lg.rescind == 1, 5000);
    ck_assert_uint_eq(pool_size_in_rescind, 1);
    struct offerd_pool_metrics m = pool_metrics();
    ck_assert_uint_eq(m.added, 2);
    ck_assert_uint_eq(m.rescinded, 1);
    struct offerd_pool_offer *h = offerd_pool_first(tpool);
    ck_assert_str_eq(offerd_pool_offer_id(h), "o2");
    offerd_pool_release(tpool, h);
}
END_TEST

START_TEST(test_pool_declines_are_sent)
{
    pool_client();
    const char *small[] = {"tiny"};
    send_offers(&fm, small, 1, "a1", 0.01); /* below the minimum */
    WAIT_FOR(fake_count(&fm, CT(DECLINE)) == 1, 5000);
    const Mesos__V1__Scheduler__Call *c = fake_find(&fm, CT(DECLINE), 0)->call;
    ck_assert_uint_eq(c->decline->n_offer_ids, 1);
    ck_assert_str_eq(c->decline->offer_ids[0]->value, "tiny");
    ck_assert(c->decline->filters->refuse_seconds ==
              OFFERD_POOL_DEFAULT_REFUSE_SECS);

    /* Declines made outside a callback (another thread would do the
     * same) go out with the next tick, one call per filter. */
    const char *ids[] = {"o1", "o2", "o3"};
    send_offers(&fm, ids, 3, "a1", 1);
    WAIT_FOR(lg.offers == 2, 5000);
    struct offerd_pool_offer *h = offerd_pool_first(tpool);
    ck_assert_int_eq(offerd_pool_decline(tpool, h, 60), 0);
    h = offerd_pool_next(tpool, h);
    ck_assert_int_eq(offerd_pool_decline(tpool, h, -1), 0);
    h = offerd_pool_next(tpool, h);
    ck_assert_int_eq(offerd_pool_decline(tpool, h, 60), 0);
    offerd_pool_release(tpool, h);
    int64_t t0 = now_ms();
    WAIT_FOR(fake_count(&fm, CT(DECLINE)) == 3, 3000);
    ck_assert_int_le(now_ms() - t0, OFFERD_SCHED_POOL_TICK_MS + 500);
    c = fake_find(&fm, CT(DECLINE), 1)->call;
    const Mesos__V1__Scheduler__Call *c2 = fake_find(&fm, CT(DECLINE), 2)->call;
    if (c->decline->n_offer_ids == 1) {
        const Mesos__V1__Scheduler__Call *t = c;
        c = c2;
        c2 = t;
    }
    ck_assert_uint_eq(c->decline->n_offer_ids, 2); /* o1, o3 with 60 s */
    ck_assert(c->decline->filters->refuse_seconds == 60);
    ck_assert_str_eq(c2->decline->offer_ids[0]->value, "o2");
    ck_assert(c2->decline->filters->refuse_seconds == 5);
    ck_assert_uint_eq(pool_metrics().pending_declines, 0);
}
END_TEST

START_TEST(test_pool_agent_loss)
{
    pool_client();
    const char *a1[] = {"o1", "o2"};
    const char *a2[] = {"o3"};
    send_offers(&fm, a1, 2, "a1", 1);
    send_offers(&fm, a2, 1, "a2", 1);
    WAIT_FOR(lg.offers == 2, 5000);
    /* Updates that do not mean the agent is gone change nothing. */
    send_status(&fm, "a1", MESOS__V1__TASK_STATE__TASK_LOST,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER,
                MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION);
    send_status(&fm, "a1", MESOS__V1__TASK_STATE__TASK_LOST,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER,
                MESOS__V1__TASK_STATUS__REASON__REASON_INVALID_OFFERS);
    send_status(&fm, "a1", MESOS__V1__TASK_STATE__TASK_LOST,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, -1);
    send_failure(&fm, "a1", "executor-1");
    WAIT_FOR(lg.update == 3 && lg.failure == 1, 5000);
    ck_assert_uint_eq(pool_metrics().size, 3);

    send_status(&fm, "a1", MESOS__V1__TASK_STATE__TASK_LOST,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER,
                MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED);
    WAIT_FOR(lg.update == 4, 5000);
    struct offerd_pool_metrics m = pool_metrics();
    ck_assert_uint_eq(m.size, 1);
    ck_assert_uint_eq(m.rescinded, 2);
    /* New offers of the lost agent are held. */
    const char *again[] = {"o4"};
    send_offers(&fm, again, 1, "a1", 1);
    WAIT_FOR(lg.offers == 3, 5000);
    ck_assert_uint_eq(pool_metrics().held, 1);

    send_status(&fm, "a2", MESOS__V1__TASK_STATE__TASK_UNREACHABLE,
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER, -1);
    WAIT_FOR(lg.update == 5, 5000);
    ck_assert_uint_eq(pool_metrics().rescinded, 3);

    send_failure(&fm, "a1", NULL);
    WAIT_FOR(lg.failure == 2, 5000);
    m = pool_metrics();
    ck_assert_uint_eq(m.size, 0);
    ck_assert_uint_eq(m.rescinded, 4);
}
END_TEST

START_TEST(test_pool_cleared_when_the_subscription_ends)
{
    pool_client();
    const char *ids[] = {"o1", "o2"};
    send_offers(&fm, ids, 2, "a1", 1);
    WAIT_FOR(lg.offers == 1, 5000);
    fake_end_stream(&fm);
    WAIT_FOR(lg.disconnected == 1, 5000);
    struct offerd_pool_metrics m = pool_metrics();
    ck_assert_uint_eq(m.size, 0);
    ck_assert_uint_eq(m.rescinded, 2);
    WAIT_FOR(lg.subscribed == 2, 5000);
    /* Detached: offers no longer reach it. */
    ck_assert_int_eq(offerd_sched_set_pool(sched, NULL), 0);
    send_offers(&fm, ids, 2, "a1", 1);
    WAIT_FOR(lg.offers == 2, 5000);
    ck_assert_uint_eq(pool_metrics().added, 2);
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("subscribe");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_subscribe_json);
    tcase_add_test(tc, test_subscribe_protobuf);
    tcase_add_test(tc, test_framework_info_is_copied);
    tcase_add_test(tc, test_resume_with_given_framework_id);
    tcase_add_loop_test(tc, test_new_rejects_bad_options, 0,
                        (int)(sizeof(bad_options) / sizeof(bad_options[0])));
    tcase_add_test(tc, test_start_twice_fails);
    tcase_add_test(tc, test_calls_fail_fast_when_not_subscribed);
    tcase_add_test(tc, test_events_before_subscribed_are_ignored);
    suite_add_tcase(s, tc);

    tc = tcase_create("calls");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_stream_id_sent_on_every_call);
    tcase_add_loop_test(tc, test_call_encoding, 0, NCALL_CASES * 2);
    tcase_add_test(tc, test_calls_refuse_missing_arguments);
    tcase_add_test(tc, test_call_failure_reaches_callback);
    tcase_add_loop_test(tc, test_auto_ack_once_per_update_with_uuid, 0, 2);
    tcase_add_test(tc, test_no_auto_ack_when_disabled);
    tcase_add_test(tc, test_auto_ack_after_callback_returns);
    suite_add_tcase(s, tc);

    tc = tcase_create("stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_record_split_across_chunks, 0, 2);
    tcase_add_loop_test(tc, test_several_records_in_one_chunk, 0, 2);
    tcase_add_loop_test(tc, test_event_reaches_its_callback, 0, NEVENT_CASES);
    tcase_add_test(tc, test_event_without_payload_is_dropped);
    tcase_add_loop_test(tc, test_bad_stream_reconnects, 0,
                        (int)(sizeof(bad_streams) / sizeof(bad_streams[0])));
    suite_add_tcase(s, tc);

    tc = tcase_create("reconnect");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_dropped_stream_resubscribes_with_backoff);
    tcase_add_test(tc, test_backoff_grows_while_master_is_down);
    tcase_add_test(tc, test_missed_heartbeats_reconnect);
    tcase_add_test(tc, test_heartbeats_keep_the_stream);
    tcase_add_test(tc, test_subscribed_timeout_reconnects);
    tcase_add_test(tc, test_subscribe_refusals_give_up);
    tcase_add_test(tc, test_server_error_is_retried);
    tcase_add_loop_test(tc, test_redirect_to_leader, 0,
                        (int)(sizeof(redirects) / sizeof(redirects[0])));
    tcase_add_test(tc, test_unparsable_location_is_a_failure);
    tcase_add_test(tc, test_teardown_does_not_reconnect);
    tcase_add_test(tc, test_update_framework_used_on_resubscribe);
    suite_add_tcase(s, tc);

    tc = tcase_create("leader");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_master_given_by_name);
    tcase_add_test(tc, test_unknown_name_is_a_failed_attempt);
    tcase_add_test(tc, test_redirect_to_a_name);
    tcase_add_loop_test(
        tc, test_call_follows_redirect, 0,
        (int)(sizeof(call_redirect_hosts) / sizeof(call_redirect_hosts[0])));
    tcase_add_test(tc, test_call_redirects_are_bounded);
    tcase_add_test(tc, test_no_leader_yet_is_retried);
    tcase_add_loop_test(tc, test_master_option_forms, 0, 2);
    tcase_add_test(tc, test_master_option_unusable);
    suite_add_tcase(s, tc);

    tc = tcase_create("lifetime");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_free_inside_callback, 0,
                        (int)(sizeof(end_cases) / sizeof(end_cases[0])));
    tcase_add_loop_test(tc, test_stop_inside_callback_then_restart, 0,
                        (int)(sizeof(end_cases) / sizeof(end_cases[0])));
    tcase_add_test(tc, test_free_with_calls_in_flight);
    suite_add_tcase(s, tc);

    tc = tcase_create("pool");
    tcase_add_checked_fixture(tc, setup, pool_teardown);
    tcase_add_test(tc, test_pool_fed_before_callbacks);
    tcase_add_test(tc, test_pool_declines_are_sent);
    tcase_add_test(tc, test_pool_agent_loss);
    tcase_add_test(tc, test_pool_cleared_when_the_subscription_ends);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(sched_suite)
