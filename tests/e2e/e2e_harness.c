/*
 * Self-test of the e2e harness's HTTP client and stream reader, against a
 * small server (common/http) run in a forked child: chunked bodies read
 * whole and chunk by chunk, Content-Length bodies, headers, and a stream
 * ended by the server.
 */
#include "harness.h"

#include "common/http.h"
#include "common/netport.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t server_pid;
static uint16_t server_port;

static void h_plain(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply_header(req, "X-Test", "plain");
    http_reply(req, 200, "text/plain", "hello world", 11);
}

static void h_stream(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply_header(req, "Mesos-Stream-Id", "abc");
    struct http_stream *s =
        http_stream_start(req, HTTP_CONTENT_JSON, 0, NULL, NULL);
    http_stream_send_record(s, "{\"a\":1}", 7);
    http_stream_send_record(s, "{\"b\":2}", 7);
    http_stream_send(s, "raw", 3);
    http_stream_close(s);
}

/* The child: serve until killed (it dies with the test process). */
static void run_server(int wfd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct event_base *base = event_base_new();
    struct http_server *srv = http_server_new(base, NULL);
    char err[256];
    uint16_t port = 0;
    if (http_server_bind(srv, "127.0.0.1", 0, &port, err, sizeof(err)) != 0)
        _exit(1);
    http_server_route(srv, "/plain", HTTP_GET, h_plain, NULL);
    http_server_route(srv, "/stream", HTTP_GET | HTTP_POST, h_stream, NULL);
    if (write(wfd, &port, sizeof(port)) != sizeof(port))
        _exit(1);
    close(wfd);
    event_base_dispatch(base);
    _exit(0);
}

static void setup(void)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    server_pid = fork();
    ck_assert_int_ge(server_pid, 0);
    if (server_pid == 0) {
        close(fds[0]);
        run_server(fds[1]);
    }
    close(fds[1]);
    ck_assert_int_eq(read(fds[0], &server_port, sizeof(server_port)),
                     sizeof(server_port));
    close(fds[0]);
}

static void teardown(void)
{
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
}

START_TEST(test_http_content_length)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(server_port, "GET", "/plain", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "hello world");
    ck_assert_str_eq(e2e_response_header(&r, "x-test"), "plain");
    ck_assert_ptr_null(e2e_response_header(&r, "X-Missing"));
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_http_chunked_whole)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(server_port, "GET", "/stream", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "7\n{\"a\":1}7\n{\"b\":2}raw");
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_stream_chunk_by_chunk)
{
    struct e2e_stream s;
    const char *h[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(
        e2e_stream_open(server_port, "POST", "/stream", h, "{}", 2, 5000, &s),
        0);
    ck_assert_int_eq(s.head.status, 200);
    ck_assert_str_eq(e2e_response_header(&s.head, "Mesos-Stream-Id"), "abc");
    static const char *want[] = {"7\n{\"a\":1}", "7\n{\"b\":2}", "raw"};
    for (int i = 0; i < 3; i++) {
        char *data;
        size_t len;
        ck_assert_int_eq(e2e_stream_next(&s, 5000, &data, &len), 1);
        ck_assert_uint_eq(len, strlen(want[i]));
        ck_assert_str_eq(data, want[i]);
        free(data);
    }
    char *data;
    size_t len;
    ck_assert_int_eq(e2e_stream_next(&s, 5000, &data, &len), 0);
    e2e_stream_close(&s);
}
END_TEST

START_TEST(test_refused_connection)
{
    struct e2e_response r;
    uint16_t port = netport_free_loopback();
    ck_assert_uint_ne(port, 0);
    ck_assert_int_eq(e2e_http(port, "GET", "/", NULL, NULL, 0, 2000, &r), -1);
}
END_TEST

START_TEST(test_run_captures_output)
{
    char out[256];
    const char *args[] = {"-c", "echo out; echo err >&2; exit 3", NULL};
    ck_assert_int_eq(e2e_run("/bin/sh", args, out, sizeof(out), 5000), 3);
    ck_assert_ptr_nonnull(strstr(out, "out"));
    ck_assert_ptr_nonnull(strstr(out, "err"));
}
END_TEST

START_TEST(test_run_timeout_kills)
{
    char out[64];
    const char *args[] = {"30", NULL};
    ck_assert_int_eq(e2e_run("/bin/sleep", args, out, sizeof(out), 300), -1);
}
END_TEST

START_TEST(test_stop_escalates_to_sigkill)
{
    struct e2e_proc p;
    const char *args[] = {"-c", "trap '' TERM; sleep 30", NULL};
    ck_assert_int_eq(e2e_spawn(&p, "/bin/sh", args), 0);
    ck_assert(e2e_proc_running(&p));
    ck_assert_int_eq(e2e_proc_stop(&p, SIGTERM, 300), -1);
    ck_assert(!e2e_proc_running(&p));
    char dir[256];
    snprintf(dir, sizeof(dir), "%s", p.dir);
    e2e_proc_cleanup(&p);
    ck_assert_int_ne(access(dir, F_OK), 0);
}
END_TEST

static Suite *e2e_harness_suite(void)
{
    Suite *s = suite_create("e2e_harness");
    TCase *tc = tcase_create("http");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_http_content_length);
    tcase_add_test(tc, test_http_chunked_whole);
    tcase_add_test(tc, test_stream_chunk_by_chunk);
    suite_add_tcase(s, tc);
    tc = tcase_create("processes");
    tcase_add_test(tc, test_refused_connection);
    tcase_add_test(tc, test_run_captures_output);
    tcase_add_test(tc, test_run_timeout_kills);
    tcase_add_test(tc, test_stop_escalates_to_sigkill);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(e2e_harness_suite)
