/*
 * Tests for common/http and common/http_client: a server and the client on
 * one event_base on 127.0.0.1 (port 0), in-process; raw sockets where a
 * misbehaving peer is needed (a client that disconnects early, one that
 * never reads).
 */
#include "common/http.h"
#include "common/http_client.h"
#include "common/prom.h"
#include "common/recordio.h"

#include "check_main.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct event_base *base;
static struct http_server *srv;
static uint16_t port;
static struct http_client_pool *req_pool; /* request() uses it when set */

/* ---- Loop helpers ---- */

static int loop_timed_out;

static void on_loop_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    loop_timed_out = 1;
}

/* Run the loop until *flag is set or ms pass; returns *flag. */
static int run_until(const int *flag, int ms)
{
    struct event *t = evtimer_new(base, on_loop_deadline, NULL);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    loop_timed_out = 0;
    evtimer_add(t, &tv);
    while (!*flag && !loop_timed_out)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(t);
    return *flag;
}

/* Run the loop for ms milliseconds. */
static void run_for(int ms)
{
    int never = 0;
    run_until(&never, ms);
}

/* ---- Client helpers ---- */

struct result {
    int done;
    int status;
    char error[256];
    char body[8192];
    size_t body_len;
    char content_type[128];
    char allow[128];
    char extra[128]; /* X-Extra header */
};

static void copy_hdr(const struct http_client_response *r, const char *name,
                     char *out, size_t outlen)
{
    const char *v = http_client_header(r, name);
    snprintf(out, outlen, "%s", v ? v : "");
}

static void on_done(const struct http_client_response *r, void *arg)
{
    struct result *res = arg;
    res->status = http_client_status(r);
    const char *e = http_client_error(r);
    snprintf(res->error, sizeof(res->error), "%s", e ? e : "");
    size_t len;
    const uint8_t *b = http_client_body(r, &len);
    res->body_len = len < sizeof(res->body) - 1 ? len : sizeof(res->body) - 1;
    memcpy(res->body, b, res->body_len);
    res->body[res->body_len] = '\0';
    copy_hdr(r, "Content-Type", res->content_type, sizeof(res->content_type));
    copy_hdr(r, "Allow", res->allow, sizeof(res->allow));
    copy_hdr(r, "X-Extra", res->extra, sizeof(res->extra));
    res->done = 1;
}

static void request(enum http_method m, const char *path,
                    const struct http_header *h, size_t nh, const void *body,
                    size_t len, struct result *res)
{
    memset(res, 0, sizeof(*res));
    struct http_client_options o = {
        .host = "127.0.0.1",
        .port = port,
        .method = m,
        .path = path,
        .headers = h,
        .nheaders = nh,
        .body = body,
        .body_len = len,
        .timeout_ms = 5000,
        .pool = req_pool,
    };
    http_client_request(base, &o, on_done, res);
    ck_assert_msg(run_until(&res->done, 10000), "no answer for %s", path);
}

/* ---- Raw socket helpers ---- */

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void raw_send(int fd, const char *s)
{
    size_t len = strlen(s);
    ck_assert_int_eq(send(fd, s, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* ---- Handlers ---- */

static void h_hello(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply_header(req, "X-Extra", "yes");
    http_reply(req, 200, "text/plain", "hello", 5);
}

static void h_echo(struct http_request *req, void *arg)
{
    (void)arg;
    const char *name = http_request_query(req, "name");
    const char *hdr = http_request_header(req, "x-test");
    size_t blen;
    const uint8_t *body = http_request_body(req, &blen);
    char out[4096];
    int n = snprintf(out, sizeof(out), "%s|%s|%s|%s|%zu|%s|%s",
                     http_method_name(http_request_method(req)),
                     http_request_path(req), name ? name : "(none)",
                     hdr ? hdr : "(none)", blen, (const char *)body,
                     http_request_peer(req));
    ck_assert(n > 0 && (size_t)n < sizeof(out));
    http_reply(req, 200, "text/plain", out, (size_t)n);
}

static void h_negotiate(struct http_request *req, void *arg)
{
    (void)arg;
    enum http_encoding b, r;
    if (http_negotiate(req, &b, &r) != 0)
        return;
    static const char *names[] = {"json", "protobuf"};
    char out[64];
    int n = snprintf(out, sizeof(out), "%s->%s", names[b], names[r]);
    http_reply(req, 200, "text/plain", out, (size_t)n);
}

static void h_error(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply_error(req, 400, "bad thing:\r\nsecond line %d", 42);
}

static void h_json(struct http_request *req, void *arg)
{
    (void)arg;
    json_t *j = json_pack("{s:s, s:i}", "version", "1.0", "n", 7);
    http_reply_json(req, 200, j);
    json_decref(j);
}

/* Deferred requests land here until a test replies. */
static struct http_request *pending;
static int pending_count;

static void h_defer(struct http_request *req, void *arg)
{
    (void)arg;
    pending = req;
    pending_count++;
}

static void on_reply_later(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    http_reply_header(pending, "Location", "/elsewhere");
    http_reply(pending, 202, NULL, NULL, 0);
    pending = NULL;
}

static void h_defer_then_reply(struct http_request *req, void *arg)
{
    (void)arg;
    pending = req;
    struct timeval tv = {0, 50 * 1000};
    /* From now: the loop's cached time was taken before this turn's
     * callbacks, earlier than the request's arrival stamp (under load, by
     * more than a millisecond). */
    event_base_update_cache_time(base);
    event_base_once(base, -1, EV_TIMEOUT, on_reply_later, NULL, &tv);
}

/* Streams. */
static struct http_stream *stream;
static int stream_closed;
static enum http_close_reason stream_reason;
static size_t stream_cap;
static int stream_records = 5;

static void on_stream_close(struct http_stream *s, enum http_close_reason why,
                            void *arg)
{
    (void)arg;
    ck_assert_ptr_eq(s, stream);
    ck_assert(http_stream_is_closed(s));
    ck_assert_int_eq(http_stream_send(s, "x", 1), -1);
    stream_closed++;
    stream_reason = why;
    http_stream_close(s);
    stream = NULL;
}

static void h_stream(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply_header(req, "Mesos-Stream-Id", "stream-1");
    stream = http_stream_start(req, HTTP_CONTENT_JSON, stream_cap,
                               on_stream_close, NULL);
}

/* Sends the records then ends the stream gracefully. */
static void h_stream_n(struct http_request *req, void *arg)
{
    h_stream(req, arg);
    for (int i = 0; i < stream_records; i++) {
        char rec[64];
        int n = snprintf(rec, sizeof(rec), "{\"n\":%d}", i);
        ck_assert_int_eq(http_stream_send_record(stream, rec, (size_t)n), 0);
    }
    http_stream_close(stream);
    stream = NULL;
}

/* ---- Fixture ---- */

static void setup(void)
{
    base = event_base_new();
    struct http_server_options o = {.max_body = 1024};
    srv = http_server_new(base, &o);
    char err[256];
    ck_assert_int_eq(
        http_server_bind(srv, "127.0.0.1", 0, &port, err, sizeof(err)), 0);
    ck_assert_uint_ne(port, 0);
    ck_assert_int_eq(http_server_route(srv, "/hello", HTTP_GET, h_hello, NULL),
                     0);
    ck_assert_int_eq(
        http_server_route(srv, "/master/hello", HTTP_GET, h_hello, NULL), 0);
    ck_assert_int_eq(
        http_server_route(srv, "/echo", HTTP_GET | HTTP_POST, h_echo, NULL), 0);
    ck_assert_int_eq(
        http_server_route(srv, "/api", HTTP_POST, h_negotiate, NULL), 0);
    ck_assert_int_eq(http_server_route(srv, "/error", HTTP_GET, h_error, NULL),
                     0);
    ck_assert_int_eq(http_server_route(srv, "/json", HTTP_GET, h_json, NULL),
                     0);
    ck_assert_int_eq(
        http_server_route(srv, "/defer", HTTP_GET | HTTP_POST, h_defer, NULL),
        0);
    ck_assert_int_eq(
        http_server_route(srv, "/later", HTTP_GET, h_defer_then_reply, NULL),
        0);
    ck_assert_int_eq(
        http_server_route(srv, "/stream", HTTP_GET | HTTP_POST, h_stream, NULL),
        0);
    ck_assert_int_eq(
        http_server_route(srv, "/stream_n", HTTP_GET, h_stream_n, NULL), 0);
    pending = NULL;
    pending_count = 0;
    req_pool = NULL;
    stream = NULL;
    stream_closed = 0;
    stream_cap = 0;
}

static void teardown(void)
{
    http_client_pool_free(req_pool);
    req_pool = NULL;
    http_server_free(srv);
    /* Release what the server left to its owners. */
    if (pending != NULL)
        http_reply(pending, 503, NULL, NULL, 0);
    pending = NULL;
    if (stream != NULL)
        http_stream_close(stream);
    stream = NULL;
    event_base_free(base);
}

/* ---- Routing ---- */

START_TEST(test_route_and_alias)
{
    struct result r;
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "hello");
    ck_assert_str_eq(r.extra, "yes");
    request(HTTP_GET, "/master/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "hello");
}
END_TEST

START_TEST(test_route_duplicate_rejected)
{
    ck_assert_int_eq(http_server_route(srv, "/hello", HTTP_POST, h_hello, NULL),
                     -1);
    ck_assert_int_eq(http_server_route(srv, "nohash", HTTP_GET, h_hello, NULL),
                     -1);
}
END_TEST

START_TEST(test_unknown_path_404)
{
    struct result r;
    request(HTTP_GET, "/nope", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.content_type, HTTP_CONTENT_TEXT);
    ck_assert_ptr_nonnull(strstr(r.body, "/nope"));
    ck_assert_ptr_eq(strchr(r.body, '\n'), r.body + r.body_len - 1);
    /* Exact paths only. */
    request(HTTP_GET, "/hello/", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 404);
}
END_TEST

START_TEST(test_wrong_method_405)
{
    struct result r;
    request(HTTP_GET, "/api", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(r.allow, "POST");
    ck_assert_str_eq(r.content_type, HTTP_CONTENT_TEXT);
    ck_assert_ptr_nonnull(strstr(r.body, "'GET'"));
    request(HTTP_DELETE, "/echo", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 405);
    ck_assert_str_eq(r.allow, "GET, POST, HEAD");
}
END_TEST

START_TEST(test_head_on_get_route)
{
    struct result r;
    request(HTTP_HEAD, "/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, 0);
}
END_TEST

/* ---- Request accessors ---- */

START_TEST(test_query_header_body_peer)
{
    struct result r;
    struct http_header h[] = {{"X-Test", "value 1"}};
    request(HTTP_POST, "/echo?name=a%20b%2Bc&x=1", h, 1, "payload", 7, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strncmp(r.body,
                          "POST|/echo|a b+c|value 1|7|payload|"
                          "127.0.0.1:",
                          strlen("POST|/echo|a b+c|value 1|7|payload|"
                                 "127.0.0.1:")) == 0,
                  "%s", r.body);
    request(HTTP_GET, "/echo", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert(strncmp(r.body, "GET|/echo|(none)|(none)|0||", 26) == 0);
}
END_TEST

START_TEST(test_malformed_query_400)
{
    struct result r;
    request(HTTP_GET, "/echo?novalue", NULL, 0, NULL, 0, &r);
    /* libevent 2.1 refuses keys without '='; offerd answers 400. */
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(r.content_type, HTTP_CONTENT_TEXT);
}
END_TEST

START_TEST(test_error_reply_one_line)
{
    struct result r;
    request(HTTP_GET, "/error", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_str_eq(r.content_type, HTTP_CONTENT_TEXT);
    ck_assert_str_eq(r.body, "bad thing:  second line 42\n");
}
END_TEST

START_TEST(test_json_reply)
{
    struct result r;
    request(HTTP_GET, "/json", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.content_type, HTTP_CONTENT_JSON);
    json_t *j = json_loads(r.body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "version")), "1.0");
    json_decref(j);
}
END_TEST

/* ---- Negotiation ---- */

START_TEST(test_negotiation_table)
{
    static const struct {
        const char *ctype;  /* NULL: no header */
        const char *accept; /* NULL: no header */
        int status;
        const char *body; /* for 200 */
    } cases[] = {
        {"application/json", NULL, 200, "json->json"},
        {"application/x-protobuf", NULL, 200, "protobuf->protobuf"},
        {"application/json; charset=utf-8", NULL, 200, "json->json"},
        {"Application/JSON", NULL, 200, "json->json"},
        {"application/json", "application/x-protobuf", 200, "json->protobuf"},
        {"application/x-protobuf", "application/json", 200, "protobuf->json"},
        {"application/x-protobuf", "*/*", 200, "protobuf->protobuf"},
        {"application/json", "*/*", 200, "json->json"},
        {"application/x-protobuf", "", 200, "protobuf->protobuf"},
        {"application/x-protobuf", "application/*", 200, "protobuf->protobuf"},
        {"application/json", "application/json;q=0.5, application/x-protobuf",
         200, "json->protobuf"},
        {"application/x-protobuf", "text/html, application/json;q=0.1", 200,
         "protobuf->json"},
        {"application/json", "application/json, application/x-protobuf", 200,
         "json->json"},
        {"application/json", "text/html", 406, NULL},
        {"application/json", "application/json;q=0", 406, NULL},
        {"text/plain", NULL, 415, NULL},
        {"application/jsonx", NULL, 415, NULL},
        {NULL, NULL, 415, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_header h[2];
        size_t nh = 0;
        if (cases[i].ctype)
            h[nh++] = (struct http_header){"Content-Type", cases[i].ctype};
        if (cases[i].accept)
            h[nh++] = (struct http_header){"Accept", cases[i].accept};
        struct result r;
        request(HTTP_POST, "/api", h, nh, "{}", 2, &r);
        ck_assert_msg(r.status == cases[i].status, "case %zu: status %d", i,
                      r.status);
        if (cases[i].body)
            ck_assert_str_eq(r.body, cases[i].body);
        else
            ck_assert_str_eq(r.content_type, HTTP_CONTENT_TEXT);
    }
}
END_TEST

START_TEST(test_media_type_encoding)
{
    enum http_encoding e;
    ck_assert_int_eq(
        http_media_type_encoding(" application/x-protobuf ;x=y", &e), 0);
    ck_assert_int_eq(e, HTTP_ENC_PROTOBUF);
    ck_assert_int_eq(http_media_type_encoding(NULL, &e), -1);
    ck_assert_int_eq(http_media_type_encoding("", &e), -1);
    ck_assert_int_eq(http_media_type_encoding("application/", &e), -1);
}
END_TEST

/* ---- Limits ---- */

START_TEST(test_body_limit_413)
{
    static char big[2048];
    memset(big, 'a', sizeof(big));
    struct result r;
    request(HTTP_POST, "/echo", NULL, 0, big, 1024, &r);
    ck_assert_int_eq(r.status, 200);
    request(HTTP_POST, "/echo", NULL, 0, big, 1025, &r);
    ck_assert_int_eq(r.status, 413);
    /* The server carries on. */
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
}
END_TEST

/* ---- Deferred replies ---- */

START_TEST(test_deferred_reply)
{
    struct result r;
    request(HTTP_GET, "/later", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 202);
    ck_assert_ptr_null(pending);
}
END_TEST

/* Requests are timed per route from arrival to reply (a deferred one to
 * its late reply); unmatched ones count as "other"; a route never asked is
 * left out. */
START_TEST(test_latency_per_endpoint)
{
    struct result r;
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    request(HTTP_GET, "/later", NULL, 0, NULL, 0, &r);
    request(HTTP_GET, "/nope", NULL, 0, NULL, 0, &r);
    request(HTTP_DELETE, "/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 405);
    struct prom_writer *w = prom_writer_new();
    http_server_write_latency(srv, w, "lat_seconds", "help");
    const char *t = prom_writer_text(w, NULL);
    ck_assert_ptr_nonnull(strstr(t, "# TYPE lat_seconds histogram\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "\nlat_seconds_count{endpoint=\"/hello\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "\nlat_seconds_count{endpoint=\"/later\"} 1\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "\nlat_seconds_count{endpoint=\"other\"} 2\n"));
    ck_assert_ptr_null(strstr(t, "endpoint=\"/echo\""));
    /* /later answers after 50 ms: not in the buckets up to 25 ms. */
    ck_assert_ptr_nonnull(strstr(
        t, "\nlat_seconds_bucket{endpoint=\"/later\",le=\"0.025\"} 0\n"));
    const char *sum = strstr(t, "\nlat_seconds_sum{endpoint=\"/later\"} ");
    ck_assert_ptr_nonnull(sum);
    ck_assert_double_ge(strtod(strchr(sum, '}') + 2, NULL), 0.049);
    prom_writer_free(w);
}
END_TEST

START_TEST(test_deferred_reply_after_disconnect)
{
    int fd = raw_connect();
    raw_send(fd, "GET /defer?name=x HTTP/1.1\r\nHost: x\r\n\r\n");
    ck_assert(run_until(&pending_count, 5000));
    ck_assert(!http_request_is_closed(pending));
    close(fd);
    /* The request stays readable while the owner works. (evhttp 2.1 does
     * not watch the socket of a deferred request, so whether it is marked
     * closed yet is not asserted; see http.h.) */
    run_for(200);
    ck_assert_str_eq(http_request_query(pending, "name"), "x");
    ck_assert_str_eq(http_request_path(pending), "/defer");
    http_reply(pending, 200, "text/plain", "late", 4);
    pending = NULL;
    run_for(50);
    /* The server still serves others. */
    struct result r;
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
}
END_TEST

START_TEST(test_deferred_pending_at_server_free)
{
    int fd = raw_connect();
    raw_send(fd, "POST /defer HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n"
                 "abc");
    ck_assert(run_until(&pending_count, 5000));
    http_server_free(srv);
    srv = NULL;
    ck_assert(http_request_is_closed(pending));
    size_t len;
    const uint8_t *b = http_request_body(pending, &len);
    ck_assert_uint_eq(len, 3);
    ck_assert(memcmp(b, "abc", 3) == 0);
    http_reply_error(pending, 503, "shutting down");
    pending = NULL;
    close(fd);
}
END_TEST

/* ---- Streams ---- */

struct stream_result {
    int headers;
    int status;
    char stream_id[64];
    int chunks;
    int records;
    int bad_chunk; /* a chunk that was not exactly one record */
    int closed;
    int close_status;
    char close_error[256];
    char close_body[256];
    int cancel_after; /* cancel from on_chunk after this many chunks */
    struct http_client_req *req;
    struct rio_decoder *dec;
};

static void sc_headers(const struct http_client_response *r, void *arg)
{
    struct stream_result *s = arg;
    s->headers++;
    s->status = http_client_status(r);
    const char *id = http_client_header(r, "Mesos-Stream-Id");
    snprintf(s->stream_id, sizeof(s->stream_id), "%s", id ? id : "");
}

static void sc_chunk(const uint8_t *data, size_t len, void *arg)
{
    struct stream_result *s = arg;
    s->chunks++;
    /* Each chunk must hold exactly one whole record. */
    size_t used;
    const uint8_t *rec;
    size_t rlen;
    if (rio_decoder_feed(s->dec, data, len, &used, &rec, &rlen) != RIO_RECORD ||
        used != len)
        s->bad_chunk++;
    else
        s->records++;
    if (s->cancel_after > 0 && s->chunks == s->cancel_after) {
        http_client_cancel(s->req);
        s->req = NULL;
    }
}

static void sc_close(const struct http_client_response *r, void *arg)
{
    struct stream_result *s = arg;
    s->closed++;
    s->close_status = http_client_status(r);
    const char *e = http_client_error(r);
    snprintf(s->close_error, sizeof(s->close_error), "%s", e ? e : "");
    size_t len;
    const uint8_t *b = http_client_body(r, &len);
    snprintf(s->close_body, sizeof(s->close_body), "%.*s", (int)len, b);
    s->req = NULL;
}

static void start_stream(const char *path, struct stream_result *s)
{
    struct http_client_options o = {
        .host = "127.0.0.1",
        .port = port,
        .method = HTTP_GET,
        .path = path,
        .timeout_ms = 5000,
    };
    struct http_client_stream_cbs cbs = {sc_headers, sc_chunk, sc_close, s};
    s->dec = rio_decoder_new(1 << 20);
    s->req = http_client_stream(base, &o, &cbs);
}

START_TEST(test_stream_n_chunks)
{
    struct stream_result s = {0};
    stream_records = 7;
    start_stream("/stream_n", &s);
    ck_assert(run_until(&s.closed, 5000));
    ck_assert_int_eq(s.headers, 1);
    ck_assert_int_eq(s.status, 200);
    ck_assert_str_eq(s.stream_id, "stream-1");
    ck_assert_int_eq(s.chunks, 7);
    ck_assert_int_eq(s.records, 7);
    ck_assert_int_eq(s.bad_chunk, 0);
    /* Ended gracefully by the server. */
    ck_assert_int_eq(s.close_status, 200);
    ck_assert_str_eq(s.close_error, "");
    rio_decoder_free(s.dec);
}
END_TEST

static void on_send_tick(evutil_socket_t fd, short what, void *arg)
{
    int *sent = arg;
    (void)fd;
    (void)what;
    if (stream != NULL && http_stream_send_record(stream, "{}", 2) == 0)
        (*sent)++;
}

START_TEST(test_stream_records_as_they_come)
{
    struct stream_result s = {0};
    int sent = 0;
    start_stream("/stream", &s);
    struct event *tick = event_new(base, -1, EV_PERSIST, on_send_tick, &sent);
    struct timeval tv = {0, 10 * 1000};
    event_add(tick, &tv);
    for (int i = 0; i < 100 && s.records < 5; i++) {
        run_for(50);
        ck_assert_int_eq(s.closed, 0);
    }
    event_free(tick);
    ck_assert_int_ge(s.records, 5);
    ck_assert_int_eq(s.bad_chunk, 0);
    ck_assert_int_eq(s.chunks, s.records);
    /* Graceful close from the server's side. */
    http_stream_close(stream);
    stream = NULL;
    ck_assert(run_until(&s.closed, 5000));
    ck_assert_int_eq(s.close_status, 200);
    ck_assert_int_eq(s.records, sent);
    ck_assert_int_eq(stream_closed, 0); /* no callback after close */
    rio_decoder_free(s.dec);
}
END_TEST

START_TEST(test_stream_close_cb_on_client_disconnect)
{
    struct stream_result s = {0};
    s.cancel_after = 1;
    start_stream("/stream", &s);
    int started = 0;
    while (stream == NULL && !started)
        run_until(&started, 50);
    ck_assert_ptr_nonnull(stream);
    ck_assert_int_eq(http_stream_send_record(stream, "{}", 2), 0);
    ck_assert(run_until(&stream_closed, 5000));
    ck_assert_int_eq(stream_reason, HTTP_CLOSE_PEER);
    ck_assert_int_eq(s.chunks, 1);
    ck_assert_int_eq(s.closed, 0); /* cancelled: no close callback */
    ck_assert_ptr_null(stream);
    rio_decoder_free(s.dec);
}
END_TEST

START_TEST(test_stream_raw_client_disconnect)
{
    int fd = raw_connect();
    raw_send(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    int started = 0;
    for (int i = 0; i < 100 && stream == NULL; i++)
        run_until(&started, 20);
    ck_assert_ptr_nonnull(stream);
    close(fd);
    ck_assert(run_until(&stream_closed, 5000));
    ck_assert_int_eq(stream_reason, HTTP_CLOSE_PEER);
}
END_TEST

START_TEST(test_stream_slow_consumer_cut_off)
{
    stream_cap = 256 * 1024;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    raw_send(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    int started = 0;
    for (int i = 0; i < 100 && stream == NULL; i++)
        run_until(&started, 20);
    ck_assert_ptr_nonnull(stream);
    static char rec[16 * 1024];
    memset(rec, 'r', sizeof(rec));
    /* Never read; keep sending until the stream is cut (bounded). */
    int refused = 0;
    for (int i = 0; i < 20000 && !refused; i++) {
        if (http_stream_send_record(stream, rec, sizeof(rec)) != 0)
            refused = 1;
        else if (i % 16 == 0)
            event_base_loop(base, EVLOOP_NONBLOCK);
    }
    ck_assert(refused);
    ck_assert(stream != NULL && http_stream_is_closed(stream));
    ck_assert(run_until(&stream_closed, 5000));
    ck_assert_int_eq(stream_reason, HTTP_CLOSE_SLOW);
    /* The connection is gone: the client sees EOF after the data. */
    char buf[65536];
    ssize_t n;
    int eof = 0;
    for (int i = 0; i < 100000 && !eof; i++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 2000) <= 0)
            break;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            eof = 1;
    }
    ck_assert(eof);
    close(fd);
}
END_TEST

START_TEST(test_stream_open_at_server_free)
{
    struct stream_result s = {0};
    start_stream("/stream", &s);
    int started = 0;
    for (int i = 0; i < 100 && stream == NULL; i++)
        run_until(&started, 20);
    ck_assert_ptr_nonnull(stream);
    http_server_free(srv);
    srv = NULL;
    ck_assert(http_stream_is_closed(stream));
    ck_assert_int_eq(http_stream_send(stream, "x", 1), -1);
    http_stream_close(stream);
    stream = NULL;
    ck_assert(run_until(&s.closed, 5000));
    ck_assert_int_eq(s.close_status, 0);
    ck_assert_int_eq(stream_closed, 0);
    rio_decoder_free(s.dec);
}
END_TEST

/* A stream started on a deferred request whose client already left. */
static void on_start_late(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    stream =
        http_stream_start(pending, HTTP_CONTENT_JSON, 0, on_stream_close, NULL);
    pending = NULL;
}

START_TEST(test_stream_start_after_disconnect)
{
    int fd = raw_connect();
    raw_send(fd, "GET /defer HTTP/1.1\r\nHost: x\r\n\r\n");
    ck_assert(run_until(&pending_count, 5000));
    close(fd);
    run_for(100);
    struct timeval tv = {0, 0};
    event_base_once(base, -1, EV_TIMEOUT, on_start_late, NULL, &tv);
    ck_assert(run_until(&stream_closed, 5000));
    ck_assert_int_eq(stream_reason, HTTP_CLOSE_PEER);
}
END_TEST

/* ---- Client ---- */

START_TEST(test_client_connection_refused)
{
    /* Find a port with nothing listening: bind, read it, close. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    close(fd);
    uint16_t saved = port;
    port = ntohs(sa.sin_port);
    struct result r;
    request(HTTP_GET, "/hello", NULL, 0, NULL, 0, &r);
    port = saved;
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_ne(r.error, "");
}
END_TEST

START_TEST(test_client_timeout)
{
    struct result r;
    memset(&r, 0, sizeof(r));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = "/defer",
                                    .timeout_ms = 200};
    http_client_request(base, &o, on_done, &r);
    ck_assert(run_until(&r.done, 5000));
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.error, "timed out"));
    /* The server sees the client go. */
    run_for(100);
    ck_assert_ptr_nonnull(pending);
}
END_TEST

START_TEST(test_client_cancel)
{
    struct result r;
    memset(&r, 0, sizeof(r));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = "/defer"};
    struct http_client_req *c = http_client_request(base, &o, on_done, &r);
    ck_assert(run_until(&pending_count, 5000));
    http_client_cancel(c);
    run_for(200);
    ck_assert_int_eq(r.done, 0);
}
END_TEST

START_TEST(test_client_stream_refused)
{
    struct stream_result s = {0};
    start_stream("/error", &s);
    ck_assert(run_until(&s.closed, 5000));
    ck_assert_int_eq(s.headers, 1);
    ck_assert_int_eq(s.close_status, 400);
    ck_assert_int_eq(s.chunks, 0);
    ck_assert_ptr_nonnull(strstr(s.close_body, "bad thing"));
    rio_decoder_free(s.dec);
}
END_TEST

START_TEST(test_keepalive_many_requests)
{
    /* Several requests over one raw connection, served in order. */
    int fd = raw_connect();
    raw_send(fd, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                 "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    char buf[4096];
    size_t have = 0;
    for (int i = 0; i < 200; i++) {
        run_for(10);
        ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have, MSG_DONTWAIT);
        if (n > 0)
            have += (size_t)n;
        buf[have] = '\0';
        if (strstr(buf, "404") != NULL)
            break;
    }
    ck_assert_ptr_nonnull(strstr(buf, "HTTP/1.1 200"));
    ck_assert_ptr_nonnull(strstr(buf, "HTTP/1.1 404"));
    close(fd);
}
END_TEST

/* ---- Kept-alive client connections ---- */

/* The client's address:port as /echo saw it (the body's last field). */
static const char *echo_peer(const struct result *r)
{
    const char *bar = strrchr(r->body, '|');
    return bar != NULL ? bar + 1 : "";
}

static size_t server_conns(void)
{
    struct http_server_stats st;
    http_server_stats(srv, &st);
    return st.conns;
}

START_TEST(test_client_pool_reuses_connection)
{
    req_pool = http_client_pool_new(base, 0, 0);
    struct result r;
    request(HTTP_POST, "/echo", NULL, 0, "a", 1, &r);
    ck_assert_int_eq(r.status, 200);
    char first[64];
    snprintf(first, sizeof(first), "%s", echo_peer(&r));
    for (int i = 0; i < 3; i++) {
        request(HTTP_POST, "/echo", NULL, 0, "b", 1, &r);
        ck_assert_int_eq(r.status, 200);
        ck_assert_str_eq(echo_peer(&r), first); /* the same connection */
    }
    ck_assert_uint_eq(server_conns(), 1);
    uint64_t opened, reused;
    http_client_pool_counts(req_pool, &opened, &reused);
    ck_assert_uint_eq(opened, 1);
    ck_assert_uint_eq(reused, 3);
    /* A request naming no pool has a connection of its own. */
    struct http_client_pool *p = req_pool;
    req_pool = NULL;
    request(HTTP_POST, "/echo", NULL, 0, "c", 1, &r);
    ck_assert_str_ne(echo_peer(&r), first);
    req_pool = p;
    /* Freeing the pool closes its idle connection. */
    http_client_pool_free(req_pool);
    req_pool = NULL;
    for (int i = 0; i < 500 && server_conns() > 0; i++)
        run_for(10);
    ck_assert_uint_eq(server_conns(), 0);
}
END_TEST

START_TEST(test_client_pool_idle_connection_closed)
{
    req_pool = http_client_pool_new(base, 0, 50);
    struct result r;
    request(HTTP_GET, "/echo", NULL, 0, NULL, 0, &r);
    char first[64];
    snprintf(first, sizeof(first), "%s", echo_peer(&r));
    /* Idle past 50 ms: the client closes it, the server sees it go. */
    for (int i = 0; i < 500 && server_conns() > 0; i++)
        run_for(10);
    ck_assert_uint_eq(server_conns(), 0);
    request(HTTP_GET, "/echo", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_ne(echo_peer(&r), first);
    uint64_t opened, reused;
    http_client_pool_counts(req_pool, &opened, &reused);
    ck_assert_uint_eq(opened, 2);
    ck_assert_uint_eq(reused, 0);
}
END_TEST

/* At most max_conns requests of a pool hold a connection at once; the next
 * one waits and takes a connection given back. */
START_TEST(test_client_pool_bounds_connections)
{
    req_pool = http_client_pool_new(base, 2, 0);
    struct result r[3];
    for (int i = 0; i < 3; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        struct http_client_options o = {.host = "127.0.0.1",
                                        .port = port,
                                        .method = HTTP_GET,
                                        .path = "/echo",
                                        .timeout_ms = 5000,
                                        .pool = req_pool};
        http_client_request(base, &o, on_done, &r[i]);
    }
    for (int i = 0; i < 3; i++) {
        ck_assert(run_until(&r[i].done, 10000));
        ck_assert_int_eq(r[i].status, 200);
    }
    ck_assert_str_ne(echo_peer(&r[0]), echo_peer(&r[1]));
    ck_assert(strcmp(echo_peer(&r[2]), echo_peer(&r[0])) == 0 ||
              strcmp(echo_peer(&r[2]), echo_peer(&r[1])) == 0);
    uint64_t opened, reused;
    http_client_pool_counts(req_pool, &opened, &reused);
    ck_assert_uint_eq(opened, 2);
    ck_assert_uint_eq(reused, 1);
    ck_assert_uint_eq(server_conns(), 2);
}
END_TEST

/* A request waiting for a connection times out like any other, and one
 * cancelled while waiting is never sent. */
START_TEST(test_client_pool_waiting_request_times_out)
{
    req_pool = http_client_pool_new(base, 1, 0);
    struct result held, waited, cancelled;
    memset(&held, 0, sizeof(held));
    memset(&waited, 0, sizeof(waited));
    memset(&cancelled, 0, sizeof(cancelled));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = "/defer",
                                    .timeout_ms = 5000,
                                    .pool = req_pool};
    http_client_request(base, &o, on_done, &held);
    for (int i = 0; i < 500 && pending == NULL; i++)
        run_for(10);
    ck_assert_ptr_nonnull(pending);
    o.timeout_ms = 100;
    http_client_request(base, &o, on_done, &waited);
    struct http_client_req *c =
        http_client_request(base, &o, on_done, &cancelled);
    http_client_cancel(c);
    ck_assert(run_until(&waited.done, 10000));
    ck_assert_int_eq(waited.status, 0);
    ck_assert_ptr_nonnull(strstr(waited.error, "timed out"));
    ck_assert_int_eq(pending_count, 1); /* neither reached the server */
    http_reply(pending, 200, "text/plain", "ok", 2);
    pending = NULL;
    ck_assert(run_until(&held.done, 10000));
    ck_assert_int_eq(held.status, 200);
    ck_assert_int_eq(cancelled.done, 0);
}
END_TEST

/* The pool's owner may free it while a request on it runs: the request
 * ends normally and its connection is closed, not pooled. */
START_TEST(test_client_pool_freed_under_a_request)
{
    req_pool = http_client_pool_new(base, 0, 0);
    struct result r;
    memset(&r, 0, sizeof(r));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = "/defer",
                                    .timeout_ms = 5000,
                                    .pool = req_pool};
    http_client_request(base, &o, on_done, &r);
    for (int i = 0; i < 500 && pending == NULL; i++)
        run_for(10);
    ck_assert_ptr_nonnull(pending);
    http_client_pool_free(req_pool);
    req_pool = NULL;
    http_reply(pending, 200, "text/plain", "late", 4);
    pending = NULL;
    ck_assert(run_until(&r.done, 10000));
    ck_assert_int_eq(r.status, 200);
    for (int i = 0; i < 500 && server_conns() > 0; i++)
        run_for(10);
    ck_assert_uint_eq(server_conns(), 0);
}
END_TEST

/* A failed request's connection is not pooled: a timeout closes it. */
START_TEST(test_client_pool_timeout_not_pooled)
{
    req_pool = http_client_pool_new(base, 0, 0);
    struct result r;
    memset(&r, 0, sizeof(r));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = "/defer",
                                    .timeout_ms = 100,
                                    .pool = req_pool};
    http_client_request(base, &o, on_done, &r);
    ck_assert(run_until(&r.done, 10000));
    ck_assert_int_eq(r.status, 0);
    if (pending != NULL)
        http_reply(pending, 200, NULL, NULL, 0);
    pending = NULL;
    request(HTTP_GET, "/echo", NULL, 0, NULL, 0, &r);
    ck_assert_int_eq(r.status, 200);
    uint64_t opened, reused;
    http_client_pool_counts(req_pool, &opened, &reused);
    ck_assert_uint_eq(opened, 2);
    ck_assert_uint_eq(reused, 0);
}
END_TEST

static Suite *http_suite(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("server");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_route_and_alias);
    tcase_add_test(tc, test_route_duplicate_rejected);
    tcase_add_test(tc, test_unknown_path_404);
    tcase_add_test(tc, test_wrong_method_405);
    tcase_add_test(tc, test_head_on_get_route);
    tcase_add_test(tc, test_query_header_body_peer);
    tcase_add_test(tc, test_malformed_query_400);
    tcase_add_test(tc, test_error_reply_one_line);
    tcase_add_test(tc, test_json_reply);
    tcase_add_test(tc, test_negotiation_table);
    tcase_add_test(tc, test_media_type_encoding);
    tcase_add_test(tc, test_body_limit_413);
    tcase_add_test(tc, test_deferred_reply);
    tcase_add_test(tc, test_latency_per_endpoint);
    tcase_add_test(tc, test_deferred_reply_after_disconnect);
    tcase_add_test(tc, test_deferred_pending_at_server_free);
    tcase_add_test(tc, test_keepalive_many_requests);
    tcase_add_test(tc, test_client_pool_reuses_connection);
    tcase_add_test(tc, test_client_pool_idle_connection_closed);
    tcase_add_test(tc, test_client_pool_bounds_connections);
    tcase_add_test(tc, test_client_pool_waiting_request_times_out);
    tcase_add_test(tc, test_client_pool_freed_under_a_request);
    tcase_add_test(tc, test_client_pool_timeout_not_pooled);
    suite_add_tcase(s, tc);
    tc = tcase_create("stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_stream_n_chunks);
    tcase_add_test(tc, test_stream_records_as_they_come);
    tcase_add_test(tc, test_stream_close_cb_on_client_disconnect);
    tcase_add_test(tc, test_stream_raw_client_disconnect);
    tcase_add_test(tc, test_stream_slow_consumer_cut_off);
    tcase_add_test(tc, test_stream_open_at_server_free);
    tcase_add_test(tc, test_stream_start_after_disconnect);
    suite_add_tcase(s, tc);
    tc = tcase_create("client");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_client_connection_refused);
    tcase_add_test(tc, test_client_timeout);
    tcase_add_test(tc, test_client_cancel);
    tcase_add_test(tc, test_client_stream_refused);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(http_suite)
