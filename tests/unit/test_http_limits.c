/*
 * Tests for the HTTP server's limits under abuse (common/http.h, "Holding
 * under abuse"; common/http_conn.c): idle and slow-body timeouts, the budget
 * of buffered request bytes, shedding idle connections past the cap, and a
 * quiet accept loop when descriptors run out. A server on 127.0.0.1 (port
 * 0) and raw client sockets on one event_base, in-process.
 */
#include "common/http.h"

#include "check_main.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static struct event_base *base;
static struct http_server *srv;
static uint16_t port;
static struct http_stream *stream;

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    *(int *)arg = 1;
}

static void run_for(int ms)
{
    int done = 0;
    struct event *t = evtimer_new(base, on_deadline, &done);
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(t, &tv);
    while (!done)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(t);
}

static void h_hello(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, "text/plain", "hello", 5);
}

static void h_stream(struct http_request *req, void *arg)
{
    (void)arg;
    stream = http_stream_start(req, HTTP_CONTENT_JSON, 0, NULL, NULL);
}

static void start(const struct http_server_options *o)
{
    base = event_base_new();
    srv = http_server_new(base, o);
    char err[256];
    ck_assert_int_eq(
        http_server_bind(srv, "127.0.0.1", 0, &port, err, sizeof(err)), 0);
    ck_assert_int_eq(
        http_server_route(srv, "/hello", HTTP_GET | HTTP_POST, h_hello, NULL),
        0);
    ck_assert_int_eq(
        http_server_route(srv, "/stream", HTTP_GET, h_stream, NULL), 0);
    stream = NULL;
}

static void teardown(void)
{
    http_server_free(srv);
    if (stream != NULL)
        http_stream_close(stream);
    event_base_free(base);
}

static int raw_connect(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static void raw_send(int fd, const void *p, size_t len)
{
    ck_assert_int_eq(send(fd, p, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Run the loop until the server closed fd (recv 0 or reset) or ms pass;
 * what arrived meanwhile goes to out (NUL-terminated, may be NULL).
 * Returns whether it closed. */
static bool wait_closed(int fd, int ms, char *out, size_t outlen)
{
    size_t used = 0;
    for (int t = 0; t < ms; t += 20) {
        run_for(20);
        for (;;) {
            char buf[4096];
            ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
            if (r > 0) {
                if (out != NULL && used + 1 < outlen) {
                    size_t k = (size_t)r < outlen - used - 1
                                   ? (size_t)r
                                   : outlen - used - 1;
                    memcpy(out + used, buf, k);
                    used += k;
                    out[used] = '\0';
                }
                continue;
            }
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return true;
            break;
        }
    }
    return false;
}

static struct http_server_stats stats(void)
{
    struct http_server_stats st;
    http_server_stats(srv, &st);
    return st;
}

START_TEST(test_idle_connection_closed)
{
    struct http_server_options o = {.idle_timeout_ns = 200000000};
    start(&o);
    int fd = raw_connect();
    raw_send(fd, "GET /hel", 8); /* never finishes its header */
    ck_assert(wait_closed(fd, 3000, NULL, 0));
    ck_assert_uint_eq(stats().timed_out, 1);
    ck_assert_uint_eq(stats().conns, 0);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_keepalive_then_idle_closed)
{
    struct http_server_options o = {.idle_timeout_ns = 300000000};
    start(&o);
    int fd = raw_connect();
    raw_send(fd, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", 32);
    char got[1024] = "";
    ck_assert(wait_closed(fd, 3000, got, sizeof(got)));
    ck_assert_ptr_nonnull(strstr(got, "200 OK"));
    ck_assert_ptr_nonnull(strstr(got, "hello"));
    ck_assert_uint_eq(stats().timed_out, 1);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_slow_body_closed)
{
    struct http_server_options o = {.idle_timeout_ns = 200000000,
                                    .min_body_rate = 1000};
    start(&o);
    int fd = raw_connect();
    const char *h = "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: "
                    "1000\r\n\r\nx";
    raw_send(fd, h, strlen(h));
    ck_assert(wait_closed(fd, 3000, NULL, 0));
    ck_assert_uint_eq(stats().slow_bodies, 1);
    ck_assert_uint_eq(stats().buffered, 0);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_stream_not_timed_out)
{
    struct http_server_options o = {.idle_timeout_ns = 100000000,
                                    .min_body_rate = 1000};
    start(&o);
    int fd = raw_connect();
    raw_send(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", 33);
    ck_assert(!wait_closed(fd, 2500, NULL, 0));
    ck_assert_ptr_nonnull(stream);
    ck_assert_int_eq(http_stream_send_record(stream, "{}", 2), 0);
    char got[1024] = "";
    wait_closed(fd, 200, got, sizeof(got));
    ck_assert_ptr_nonnull(strstr(got, "2\n{}"));
    ck_assert_uint_eq(stats().timed_out, 0);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_budget_refuses_503_and_returns)
{
    struct http_server_options o = {.max_body = 1 << 20,
                                    .max_buffered = 64 << 10};
    start(&o);
    int a = raw_connect();
    const char *h = "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: "
                    "1000000\r\n\r\n";
    raw_send(a, h, strlen(h));
    static char body[100 << 10];
    memset(body, 'x', sizeof(body));
    raw_send(a, body, 40 << 10);
    run_for(100);
    ck_assert_uint_ge(stats().buffered, 40 << 10);
    int b = raw_connect();
    raw_send(b, h, strlen(h));
    raw_send(b, body, 40 << 10); /* 80 KiB in all: over the budget */
    char got[1024] = "";
    ck_assert(wait_closed(b, 3000, got, sizeof(got)));
    ck_assert_msg(strstr(got, "HTTP/1.1 503") != NULL, "got: %s", got);
    ck_assert_ptr_nonnull(strstr(got, "server busy"));
    ck_assert_uint_eq(stats().over_budget, 1);
    close(a);
    close(b);
    run_for(400);
    ck_assert_uint_eq(stats().buffered, 0);
    ck_assert_uint_eq(stats().conns, 0);
    teardown();
}
END_TEST

START_TEST(test_large_body_within_budget)
{
    struct http_server_options o = {.max_body = 4 << 20,
                                    .max_buffered = 8 << 20};
    start(&o);
    int fd = raw_connect();
    size_t n = 3 << 20;
    char *body = malloc(n);
    memset(body, 'y', n);
    char h[128];
    snprintf(h, sizeof(h),
             "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n",
             n);
    raw_send(fd, h, strlen(h));
    size_t sent = 0;
    while (sent < n) {
        ssize_t w =
            send(fd, body + sent, n - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0)
            sent += (size_t)w;
        run_for(5);
    }
    char got[1024] = "";
    ck_assert(wait_closed(fd, 5000, got, sizeof(got)));
    ck_assert_msg(strstr(got, "200 OK") != NULL, "got: %s", got);
    ck_assert_uint_eq(stats().buffered, 0);
    ck_assert_uint_eq(stats().over_budget, 0);
    free(body);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_cap_sheds_oldest_idle)
{
    struct http_server_options o = {.max_conns = 4};
    start(&o);
    int idle[4];
    for (int i = 0; i < 4; i++) {
        idle[i] = raw_connect();
        run_for(20);
    }
    ck_assert_uint_eq(stats().conns, 4);
    int fd = raw_connect();
    raw_send(fd, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
             51);
    char got[1024] = "";
    ck_assert(wait_closed(fd, 3000, got, sizeof(got)));
    ck_assert_msg(strstr(got, "200 OK") != NULL, "got: %s", got);
    /* The oldest idle one made room; the newest idle ones stay. */
    ck_assert(wait_closed(idle[0], 500, NULL, 0));
    ck_assert(!wait_closed(idle[3], 100, NULL, 0));
    ck_assert_uint_ge(stats().shed, 1);
    for (int i = 0; i < 4; i++)
        close(idle[i]);
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_cap_keeps_streams)
{
    struct http_server_options o = {.max_conns = 2};
    start(&o);
    int s = raw_connect();
    raw_send(s, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n", 33);
    run_for(100);
    ck_assert_ptr_nonnull(stream);
    int idle = raw_connect();
    run_for(50);
    int fd = raw_connect();
    raw_send(fd, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
             51);
    char got[1024] = "";
    ck_assert(wait_closed(fd, 3000, got, sizeof(got)));
    ck_assert_ptr_nonnull(strstr(got, "200 OK"));
    ck_assert(wait_closed(idle, 500, NULL, 0));
    ck_assert(!http_stream_is_closed(stream));
    close(idle);
    close(fd);
    close(s);
    teardown();
}
END_TEST

START_TEST(test_emfile_pauses_quietly)
{
    struct http_server_options o = {0};
    start(&o);
    /* Leave the process a handful of descriptors: the server's accepts
     * fail with EMFILE while the clients' sockets hold them. */
    int probe = dup(0);
    ck_assert_int_ge(probe, 0);
    close(probe);
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = (rlim_t)probe + 6;
    ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    int fds[16];
    int n = 0;
    while (n < 16) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            break;
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons(port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        fds[n++] = fd;
    }
    ck_assert_int_gt(n, 0);
    run_for(500);
    struct http_server_stats st = stats();
    ck_assert_uint_ge(st.accept_pauses, 1);
    /* Backing off: a few pauses in half a second, not one per loop turn. */
    ck_assert_uint_le(st.accept_pauses, 10);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    int fd = raw_connect();
    raw_send(fd, "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
             51);
    char got[1024] = "";
    ck_assert(wait_closed(fd, 3000, got, sizeof(got)));
    ck_assert_ptr_nonnull(strstr(got, "200 OK"));
    close(fd);
    teardown();
}
END_TEST

START_TEST(test_fd_limit_cap)
{
    uint64_t lim = 0;
    size_t cap = http_max_conns_for_fd_limit(&lim);
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    ck_assert(rl.rlim_cur == rl.rlim_max || rl.rlim_max == RLIM_INFINITY);
    ck_assert_uint_gt(lim, 0);
    ck_assert_uint_lt(cap, lim);
    ck_assert_uint_ge(lim - cap, 64);
}
END_TEST

static Suite *http_limits_suite(void)
{
    Suite *s = suite_create("http_limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_idle_connection_closed);
    tcase_add_test(tc, test_keepalive_then_idle_closed);
    tcase_add_test(tc, test_slow_body_closed);
    tcase_add_test(tc, test_stream_not_timed_out);
    tcase_add_test(tc, test_budget_refuses_503_and_returns);
    tcase_add_test(tc, test_large_body_within_budget);
    tcase_add_test(tc, test_cap_sheds_oldest_idle);
    tcase_add_test(tc, test_cap_keeps_streams);
    tcase_add_test(tc, test_emfile_pauses_quietly);
    tcase_add_test(tc, test_fd_limit_cap);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(http_limits_suite)
