/*
 * Tests for the fake request and stream of common/http (http_fake.h): small
 * handlers driven with no socket, their replies, deferred replies, content
 * negotiation, reply headers, stream records, a peer that goes away or stops
 * reading, and the release of everything when the test frees the exchange
 * first.
 */
#include "common/http.h"
#include "common/http_fake.h"

#include "check_main.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct event_base *base;

static void setup(void)
{
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
}

static void teardown(void)
{
    event_base_free(base);
}

/* The reply body as a string. */
static const char *body_of(const struct http_fake *x)
{
    size_t len;
    return (const char *)http_fake_body(x, &len);
}

/* ---- Handlers ---- */

/* Answers 200 with "<method> <path> a=<a> b=<b> ct=<ct> peer=<peer>
 * body=<body>" and an X-Echo header. */
static void h_echo(struct http_request *req, void *arg)
{
    (void)arg;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    const char *a = http_request_query(req, "a");
    const char *b = http_request_query(req, "b");
    const char *ct = http_request_header(req, "content-type");
    char text[512];
    int n = snprintf(
        text, sizeof(text), "%s %s a=%s b=%s ct=%s peer=%s body=%.*s",
        http_method_name(http_request_method(req)), http_request_path(req),
        a ? a : "-", b ? b : "-", ct ? ct : "-", http_request_peer(req),
        (int)len, (const char *)body);
    ck_assert(n > 0 && (size_t)n < sizeof(text));
    ck_assert(!http_request_is_closed(req));
    http_reply_header(req, "X-Echo", "yes");
    http_reply(req, 200, "text/plain", text, (size_t)n);
}

/* Keeps the request for a later reply. */
static struct http_request *held;

static void h_defer(struct http_request *req, void *arg)
{
    (void)arg;
    held = req;
}

/* Negotiates, then answers 202 with the reply encoding's name. */
static void h_negotiate(struct http_request *req, void *arg)
{
    (void)arg;
    enum http_encoding body, reply;
    if (http_negotiate(req, &body, &reply) != 0)
        return;
    http_reply_header(req, "Mesos-Stream-Id", "abc-123");
    const char *what = reply == HTTP_ENC_JSON ? "json" : "protobuf";
    http_reply(req, 202, NULL, what, strlen(what));
}

/* A stream and what its close callback saw. */
static struct http_stream *stream;
static int closes;
static enum http_close_reason close_why;
static bool release_in_cb;

static void on_close(struct http_stream *s, enum http_close_reason why,
                     void *arg)
{
    ck_assert_ptr_eq(s, stream);
    ck_assert_ptr_eq(arg, &closes);
    ck_assert(http_stream_is_closed(s));
    ck_assert_int_eq(http_stream_send_record(s, "x", 1), -1);
    closes++;
    close_why = why;
    if (release_in_cb) {
        http_stream_close(s);
        stream = NULL;
    }
}

/* Starts a stream (cap: arg bytes when given) and sends three records. */
static void h_stream(struct http_request *req, void *arg)
{
    size_t cap = arg ? *(size_t *)arg : 0;
    http_reply_header(req, "Mesos-Stream-Id", "s-1");
    stream = http_stream_start(req, HTTP_CONTENT_JSON, cap, on_close, &closes);
    ck_assert_ptr_nonnull(stream);
    ck_assert_int_eq(http_stream_send_record(stream, "{\"a\":1}", 7), 0);
    ck_assert_int_eq(http_stream_send_record(stream, "", 0), 0);
    ck_assert_int_eq(http_stream_send_record(stream, "hello", 5), 0);
}

static void reset(void)
{
    held = NULL;
    stream = NULL;
    closes = 0;
    close_why = 0;
    release_in_cb = false;
}

/* ---- Requests ---- */

START_TEST(test_immediate_reply)
{
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/echo?a=1&b=x%20y");
    http_fake_add_header(x, "Content-Type", "application/json");
    http_fake_set_body(x, "{}", 2);
    http_fake_set_peer(x, "10.0.0.7:5555");
    ck_assert(!http_fake_replied(x));
    ck_assert_int_eq(http_fake_status(x), 0);
    http_fake_dispatch(x, h_echo, NULL);
    ck_assert(http_fake_replied(x));
    ck_assert(!http_fake_is_stream(x));
    ck_assert_int_eq(http_fake_status(x), 200);
    ck_assert_str_eq(http_fake_content_type(x), "text/plain");
    ck_assert_str_eq(body_of(x), "POST /echo a=1 b=x y ct=application/json "
                                 "peer=10.0.0.7:5555 body={}");
    ck_assert_str_eq(http_fake_reply_header(x, "x-echo"), "yes");
    ck_assert_ptr_null(http_fake_reply_header(x, "Location"));
    /* Dispatching again does nothing: one exchange, one request. */
    http_fake_dispatch(x, h_echo, NULL);
    ck_assert_ptr_null(http_fake_request(x));
    http_fake_free(x);
}
END_TEST

START_TEST(test_defaults_and_direct_call)
{
    struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/state");
    struct http_request *req = http_fake_request(x);
    ck_assert_ptr_nonnull(req);
    size_t len = 1;
    const uint8_t *b = http_request_body(req, &len);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(b[0], '\0');
    ck_assert_str_eq(http_request_peer(req), HTTP_FAKE_DEFAULT_PEER);
    ck_assert_ptr_null(http_request_query(req, "a"));
    ck_assert_ptr_null(http_request_header(req, "Accept"));
    ck_assert_int_eq(http_request_method(req), HTTP_GET);
    /* Called directly: a reply frees the request at once. */
    h_echo(req, NULL);
    ck_assert(http_fake_replied(x));
    ck_assert_str_eq(body_of(x),
                     "GET /state a=- b=- ct=- peer=" HTTP_FAKE_DEFAULT_PEER
                     " body=");
    http_fake_free(x);
    http_fake_free(NULL);
}
END_TEST

START_TEST(test_malformed_query_400)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_GET, "/reserve?novalue");
    /* libevent 2.1 refuses keys without '=', as for a real request. */
    http_fake_dispatch(x, h_defer, NULL);
    ck_assert_ptr_null(held);
    ck_assert_int_eq(http_fake_status(x), 400);
    ck_assert_str_eq(body_of(x), "malformed query string\n");
    ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_TEXT);
    http_fake_free(x);

    x = http_fake_new(base, HTTP_GET, "/reserve?novalue");
    ck_assert_ptr_null(http_fake_request(x));
    ck_assert(!http_fake_replied(x));
    http_fake_free(x);
}
END_TEST

START_TEST(test_deferred_reply)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/later");
    http_fake_dispatch(x, h_defer, NULL);
    ck_assert_ptr_nonnull(held);
    ck_assert(!http_fake_replied(x));
    ck_assert(!http_request_is_closed(held));
    ck_assert_str_eq(http_request_path(held), "/later");
    http_reply_header(held, "Location", "http://leader:5050/later");
    http_reply_error(held, 307, "not the leader\r\nreally");
    ck_assert(http_fake_replied(x));
    ck_assert_int_eq(http_fake_status(x), 307);
    ck_assert_str_eq(body_of(x), "not the leader  really\n");
    ck_assert_str_eq(http_fake_reply_header(x, "Location"),
                     "http://leader:5050/later");
    http_fake_free(x);
}
END_TEST

START_TEST(test_deferred_client_gone)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/later");
    http_fake_dispatch(x, h_defer, NULL);
    ck_assert_ptr_nonnull(held);
    http_fake_disconnect(x);
    http_fake_disconnect(x);
    ck_assert(http_request_is_closed(held));
    /* The owner still replies (a no-op on a real server), which frees it. */
    json_t *j = json_pack("{s:i}", "n", 1);
    http_reply_json(held, 200, j);
    json_decref(j);
    ck_assert(http_fake_replied(x));
    ck_assert_str_eq(body_of(x), "{\"n\":1}");
    ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_JSON);
    http_fake_free(x);
}
END_TEST

START_TEST(test_free_before_deferred_reply)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/later");
    http_fake_dispatch(x, h_defer, NULL);
    http_fake_free(x);
    /* The request outlives the exchange, closed; the reply frees it. */
    ck_assert(http_request_is_closed(held));
    ck_assert_str_eq(http_request_path(held), "/later");
    http_reply(held, 200, NULL, NULL, 0);
}
END_TEST

/* ---- Negotiation and headers ---- */

static const struct {
    const char *content_type; /* NULL: none */
    const char *accept;       /* NULL: none */
    int status;
    const char *body; /* the reply, or a part of the reason */
} negotiation[] = {
    {NULL, NULL, 415,
     "Expecting 'Content-Type' of application/json or "
     "application/x-protobuf\n"},
    {"text/html", NULL, 415, ", got 'text/html'"},
    {"application/json", "text/html", 406, "Expecting 'Accept' to allow"},
    {"application/json", NULL, 202, "json"},
    {"application/x-protobuf", NULL, 202, "protobuf"},
    {"application/json", "application/x-protobuf", 202, "protobuf"},
    {"application/x-protobuf", "*/*", 202, "protobuf"},
};

START_TEST(test_negotiate_table)
{
    for (size_t i = 0; i < sizeof(negotiation) / sizeof(negotiation[0]); i++) {
        struct http_fake *x =
            http_fake_new(base, HTTP_POST, "/api/v1/scheduler");
        if (negotiation[i].content_type)
            http_fake_add_header(x, "Content-Type",
                                 negotiation[i].content_type);
        if (negotiation[i].accept)
            http_fake_add_header(x, "Accept", negotiation[i].accept);
        http_fake_dispatch(x, h_negotiate, NULL);
        ck_assert_msg(http_fake_status(x) == negotiation[i].status,
                      "case %zu: %d", i, http_fake_status(x));
        ck_assert_msg(strstr(body_of(x), negotiation[i].body) != NULL,
                      "case %zu: %s", i, body_of(x));
        if (negotiation[i].status == 202) {
            ck_assert_str_eq(http_fake_reply_header(x, "Mesos-Stream-Id"),
                             "abc-123");
            ck_assert_ptr_null(http_fake_content_type(x));
        } else {
            ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_TEXT);
            ck_assert_ptr_null(http_fake_reply_header(x, "Mesos-Stream-Id"));
        }
        http_fake_free(x);
    }
}
END_TEST

/* ---- Through a server's routes ---- */

START_TEST(test_dispatch_through_server_routes)
{
    struct http_server_options o = {.max_body = 8};
    struct http_server *s = http_server_new(base, &o);
    ck_assert_int_eq(
        http_server_route(s, "/echo", HTTP_GET | HTTP_POST, h_echo, NULL), 0);
    ck_assert_int_eq(
        http_server_route(s, "/master/echo", HTTP_GET, h_echo, NULL), 0);

    struct http_fake *x = http_fake_new(base, HTTP_GET, "/master/echo?a=2");
    http_fake_dispatch_server(x, s);
    ck_assert_int_eq(http_fake_status(x), 200);
    ck_assert_ptr_nonnull(strstr(body_of(x), "GET /master/echo a=2"));
    http_fake_free(x);

    x = http_fake_new(base, HTTP_GET, "/nope");
    http_fake_dispatch_server(x, s);
    ck_assert_int_eq(http_fake_status(x), 404);
    ck_assert_str_eq(body_of(x), "no such endpoint: /nope\n");
    http_fake_free(x);

    x = http_fake_new(base, HTTP_DELETE, "/master/echo");
    http_fake_dispatch_server(x, s);
    ck_assert_int_eq(http_fake_status(x), 405);
    ck_assert_str_eq(http_fake_reply_header(x, "Allow"), "GET, HEAD");
    http_fake_free(x);

    x = http_fake_new(base, HTTP_POST, "/echo");
    http_fake_set_body(x, "123456789", 9);
    http_fake_dispatch_server(x, s);
    ck_assert_int_eq(http_fake_status(x), 413);
    http_fake_free(x);

    /* Freeing the server leaves fake requests alone. */
    reset();
    ck_assert_int_eq(http_server_route(s, "/later", HTTP_POST, h_defer, NULL),
                     0);
    x = http_fake_new(base, HTTP_POST, "/later");
    http_fake_dispatch_server(x, s);
    ck_assert_ptr_nonnull(held);
    http_server_free(s);
    ck_assert(!http_request_is_closed(held));
    http_reply(held, 204, NULL, NULL, 0);
    ck_assert_int_eq(http_fake_status(x), 204);
    http_fake_free(x);
}
END_TEST

/* Prefix routes: an exact route wins, then the longest prefix; the method
 * mask applies as for exact routes. */
START_TEST(test_prefix_routes)
{
    struct http_server *s = http_server_new(base, NULL);
    ck_assert_int_eq(
        http_server_route_prefix(s, "/q/", HTTP_DELETE, h_echo, NULL), 0);
    ck_assert_int_eq(http_server_route_prefix(s, "/q/", HTTP_GET, h_echo, NULL),
                     -1);
    ck_assert_int_eq(
        http_server_route_prefix(s, "/q/deep/", HTTP_GET, h_echo, NULL), 0);
    ck_assert_int_eq(http_server_route(s, "/q/", HTTP_POST, h_echo, NULL), 0);
    static const struct {
        enum http_method method;
        const char *target;
        int status;
    } cases[] = {
        {HTTP_DELETE, "/q/role/with/slashes", 200},
        {HTTP_GET, "/q/role", 405},      /* the "/q/" prefix: DELETE only */
        {HTTP_GET, "/q/deep/x", 200},    /* the longer prefix */
        {HTTP_DELETE, "/q/deep/x", 405}, /* ... which takes GET only */
        {HTTP_POST, "/q/", 200},         /* the exact route */
        {HTTP_DELETE, "/q/", 405},       /* ... wins over the prefix */
        {HTTP_DELETE, "/q", 404},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_fake *x =
            http_fake_new(base, cases[i].method, cases[i].target);
        http_fake_dispatch_server(x, s);
        ck_assert_msg(http_fake_status(x) == cases[i].status, "case %zu: %d", i,
                      http_fake_status(x));
        http_fake_free(x);
    }
    http_server_free(s);
}
END_TEST

/* ---- Streams ---- */

START_TEST(test_stream_records)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/api/v1/scheduler");
    http_fake_dispatch(x, h_stream, NULL);
    ck_assert_ptr_nonnull(stream);
    ck_assert(http_fake_replied(x));
    ck_assert(http_fake_is_stream(x));
    ck_assert_int_eq(http_fake_status(x), 200);
    ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_JSON);
    ck_assert_str_eq(http_fake_reply_header(x, "Mesos-Stream-Id"), "s-1");
    ck_assert(!http_stream_is_closed(stream));
    ck_assert_str_eq(http_stream_peer(stream), HTTP_FAKE_DEFAULT_PEER);
    ck_assert_uint_eq(http_stream_pending(stream), 0);

    /* One chunk per record, and the records decoded. */
    ck_assert_int_eq(http_stream_send(stream, NULL, 0), 0);
    ck_assert_uint_eq(http_fake_chunk_count(x), 3);
    size_t len;
    const uint8_t *c = http_fake_chunk(x, 0, &len);
    ck_assert_uint_eq(len, 9);
    ck_assert_int_eq(memcmp(c, "7\n{\"a\":1}", 9), 0);
    ck_assert_ptr_null(http_fake_chunk(x, 3, &len));
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    ck_assert_str_eq((const char *)http_fake_record(x, 0, &len), "{\"a\":1}");
    ck_assert_uint_eq(len, 7);
    ck_assert_ptr_nonnull(http_fake_record(x, 1, &len));
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq((const char *)http_fake_record(x, 2, &len), "hello");
    ck_assert_ptr_null(http_fake_record(x, 3, &len));
    ck_assert(!http_fake_records_malformed(x));

    /* A record split over raw sends is still one record. */
    ck_assert_int_eq(http_stream_send(stream, "3\nab", 4), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    ck_assert_int_eq(http_stream_send(stream, "c", 1), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 4);
    ck_assert_str_eq((const char *)http_fake_record(x, 3, &len), "abc");

    ck_assert(!http_fake_stream_ended(x));
    http_stream_close(stream);
    ck_assert(http_fake_stream_ended(x));
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(closes, 0);
    ck_assert_int_eq(http_fake_close_count(x), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 4);
    http_fake_free(x);
}
END_TEST

/* http_fake_forget drops what came; later records keep their indices. */
START_TEST(test_stream_forget)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/api/v1/scheduler");
    http_fake_dispatch(x, h_stream, NULL);
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    http_fake_forget(x);
    size_t len;
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    ck_assert_uint_eq(http_fake_chunk_count(x), 3);
    ck_assert_ptr_null(http_fake_record(x, 0, &len));
    ck_assert_ptr_null(http_fake_chunk(x, 2, &len));
    ck_assert_int_eq(http_stream_send(stream, "3\nabc", 5), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 4);
    ck_assert_uint_eq(http_fake_chunk_count(x), 4);
    ck_assert_str_eq((const char *)http_fake_record(x, 3, &len), "abc");
    ck_assert_ptr_nonnull(http_fake_chunk(x, 3, &len));
    ck_assert_uint_eq(len, 5);
    ck_assert_ptr_null(http_fake_record(x, 4, &len));
    http_fake_forget(x);
    http_fake_forget(x); /* nothing new: a no-op */
    ck_assert_uint_eq(http_fake_record_count(x), 4);
    http_stream_close(stream);
    http_fake_free(x);
}
END_TEST

START_TEST(test_stream_malformed_bytes)
{
    reset();
    struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/raw");
    http_fake_dispatch(x, h_stream, NULL);
    ck_assert_int_eq(http_stream_send(stream, "not recordio", 12), 0);
    ck_assert(http_fake_records_malformed(x));
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    ck_assert_uint_eq(http_fake_chunk_count(x), 4);
    http_stream_close(stream);
    http_fake_free(x);
}
END_TEST

/* The peer goes: the callback runs once, at run_pending, never inside the
 * call that noticed; the owner may release the stream inside it. */
START_TEST(test_stream_peer_close_run_pending)
{
    reset();
    release_in_cb = true;
    struct http_fake *x = http_fake_new(NULL, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, NULL);
    http_fake_disconnect(x);
    ck_assert_int_eq(closes, 0);
    ck_assert(http_stream_is_closed(stream));
    ck_assert_int_eq(http_stream_send_record(stream, "x", 1), -1);
    ck_assert_uint_eq(http_stream_pending(stream), 0);
    ck_assert_int_eq(http_fake_run_pending(x), 1);
    ck_assert_int_eq(closes, 1);
    ck_assert_int_eq(close_why, HTTP_CLOSE_PEER);
    ck_assert_ptr_null(stream);
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    http_fake_disconnect(x);
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    ck_assert_int_eq(http_fake_close_count(x), 1);
    ck_assert_int_eq(http_fake_close_reason(x), HTTP_CLOSE_PEER);
    ck_assert(!http_fake_stream_ended(x));
    ck_assert_uint_eq(http_fake_record_count(x), 3);
    http_fake_free(x);
}
END_TEST

/* With an event_base, the loop runs the callback; the owner releases the
 * stream after it. */
START_TEST(test_stream_peer_close_on_loop)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, NULL);
    http_fake_disconnect(x);
    ck_assert_int_eq(closes, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(closes, 1);
    ck_assert_int_eq(close_why, HTTP_CLOSE_PEER);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    ck_assert_int_eq(closes, 1);
    http_stream_close(stream);
    ck_assert(!http_fake_stream_ended(x));
    http_fake_free(x);
}
END_TEST

/* Released before the callback ran: it never runs. */
START_TEST(test_stream_released_before_callback)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, NULL);
    http_fake_disconnect(x);
    http_stream_close(stream);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    ck_assert_int_eq(closes, 0);
    http_fake_free(x);
}
END_TEST

START_TEST(test_stream_slow_consumer_cut_off)
{
    reset();
    size_t cap = 40;
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_stall(x, true);
    http_fake_dispatch(x, h_stream, &cap);
    /* 9 + 2 + 7 bytes so far. */
    ck_assert_uint_eq(http_stream_pending(stream), 18);
    http_fake_drain(x);
    ck_assert_uint_eq(http_stream_pending(stream), 0);
    ck_assert_int_eq(http_stream_send_record(stream, "0123456789", 10), 0);
    ck_assert_int_eq(http_stream_send_record(stream, "0123456789", 10), 0);
    ck_assert_int_eq(http_stream_send_record(stream, "0123456789", 10), 0);
    ck_assert_uint_eq(http_stream_pending(stream), 39);
    ck_assert_int_eq(http_stream_send_record(stream, "x", 1), -1);
    ck_assert(http_stream_is_closed(stream));
    ck_assert_uint_eq(http_stream_pending(stream), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 6);
    ck_assert_int_eq(closes, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(closes, 1);
    ck_assert_int_eq(close_why, HTTP_CLOSE_SLOW);
    ck_assert_int_eq(http_fake_close_reason(x), HTTP_CLOSE_SLOW);
    http_fake_disconnect(x);
    ck_assert_int_eq(http_fake_run_pending(x), 0);
    ck_assert_int_eq(closes, 1);
    http_stream_close(stream);
    http_fake_free(x);
}
END_TEST

/* Not stalled, the peer reads at once: no cap is ever reached. */
START_TEST(test_stream_reading_peer_never_cut)
{
    reset();
    size_t cap = 16;
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, &cap);
    char big[64] = {0};
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(http_stream_send_record(stream, big, sizeof(big)), 0);
    ck_assert_uint_eq(http_fake_record_count(x), 103);
    http_stream_close(stream);
    http_fake_free(x);
}
END_TEST

/* A deferred request whose client left starts a closed stream; the
 * callback follows at the safe point. */
START_TEST(test_stream_start_after_disconnect)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_defer, NULL);
    http_fake_disconnect(x);
    stream = http_stream_start(held, HTTP_CONTENT_JSON, 0, on_close, &closes);
    ck_assert(http_stream_is_closed(stream));
    ck_assert_int_eq(http_stream_send_record(stream, "x", 1), -1);
    ck_assert(http_fake_is_stream(x));
    ck_assert_int_eq(closes, 0);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(closes, 1);
    ck_assert_int_eq(close_why, HTTP_CLOSE_PEER);
    http_stream_close(stream);
    http_fake_free(x);
}
END_TEST

/* The exchange freed first: the stream reads closed, no callback, the
 * owner releases it; a pending event does not fire. */
START_TEST(test_free_with_stream_open)
{
    reset();
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, NULL);
    http_fake_disconnect(x); /* callback pending on the loop */
    http_fake_free(x);
    event_base_loop(base, EVLOOP_NONBLOCK);
    ck_assert_int_eq(closes, 0);
    ck_assert(http_stream_is_closed(stream));
    ck_assert_int_eq(http_stream_send_record(stream, "x", 1), -1);
    ck_assert_uint_eq(http_stream_pending(stream), 0);
    http_stream_close(stream);

    reset();
    x = http_fake_new(base, HTTP_POST, "/s");
    http_fake_dispatch(x, h_stream, NULL);
    http_fake_free(x);
    ck_assert(http_stream_is_closed(stream));
    http_stream_close(stream);
}
END_TEST

/* A stream started and released inside the handler. */
static void h_stream_once(struct http_request *req, void *arg)
{
    (void)arg;
    struct http_stream *s =
        http_stream_start(req, HTTP_CONTENT_PROTOBUF, 0, NULL, NULL);
    ck_assert_int_eq(http_stream_send_record(s, "only", 4), 0);
    http_stream_close(s);
}

START_TEST(test_stream_closed_in_handler)
{
    struct http_fake *x = http_fake_new(base, HTTP_GET, "/once");
    http_fake_dispatch(x, h_stream_once, NULL);
    ck_assert(http_fake_stream_ended(x));
    ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_PROTOBUF);
    ck_assert_uint_eq(http_fake_record_count(x), 1);
    size_t len;
    ck_assert_str_eq((const char *)http_fake_record(x, 0, &len), "only");
    http_fake_free(x);
}
END_TEST

static Suite *http_fake_suite(void)
{
    Suite *s = suite_create("http_fake");
    TCase *tc = tcase_create("requests");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_immediate_reply);
    tcase_add_test(tc, test_defaults_and_direct_call);
    tcase_add_test(tc, test_malformed_query_400);
    tcase_add_test(tc, test_deferred_reply);
    tcase_add_test(tc, test_deferred_client_gone);
    tcase_add_test(tc, test_free_before_deferred_reply);
    tcase_add_test(tc, test_negotiate_table);
    tcase_add_test(tc, test_dispatch_through_server_routes);
    tcase_add_test(tc, test_prefix_routes);
    suite_add_tcase(s, tc);

    TCase *st = tcase_create("streams");
    tcase_add_checked_fixture(st, setup, teardown);
    tcase_add_test(st, test_stream_records);
    tcase_add_test(st, test_stream_malformed_bytes);
    tcase_add_test(st, test_stream_peer_close_run_pending);
    tcase_add_test(st, test_stream_peer_close_on_loop);
    tcase_add_test(st, test_stream_released_before_callback);
    tcase_add_test(st, test_stream_slow_consumer_cut_off);
    tcase_add_test(st, test_stream_reading_peer_never_cut);
    tcase_add_test(st, test_stream_start_after_disconnect);
    tcase_add_test(st, test_free_with_stream_open);
    tcase_add_test(st, test_stream_closed_in_handler);
    tcase_add_test(st, test_stream_forget);
    suite_add_tcase(s, st);
    return s;
}

OFFERD_CHECK_MAIN(http_fake_suite)
