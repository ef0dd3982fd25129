/*
 * A master that holds under abuse (docs/security.md): the real master,
 * attacked the way issue 19 found it falling, with authentication off.
 *  - 2,000 idle connections against a master at ulimit -n 1024: /health and
 *    a scheduler still get in within a second; the log stays quiet;
 *  - 100 connections each sending 4 MiB less one byte of a body: RSS grows
 *    at most 128 MiB, the requests over the budget get 503, and RSS comes
 *    back within 32 MiB once they go;
 *  - abandoned anonymous subscriptions with a huge failover_timeout: the
 *    table does not fill (503 past the per-peer cap), another peer's
 *    framework still subscribes, and the abandoned ones expire;
 *  - an agent SUBSCRIBE with 4,095 cpus entries of 1e12: 400.
 */
#include "harness.h"

#include "common/netport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* Start the master under `prlimit --nofile=<nofile>` (NULL: as is) with
 * extra flags. */
static void start_master(struct e2e_proc *m, const char *nofile,
                         const char *const *extra)
{
    if (nofile == NULL) {
        ck_assert_int_eq(e2e_start_master(m, extra), 0);
        return;
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        uint16_t port = netport_free_loopback();
        char a_nofile[64], a_port[32];
        snprintf(a_nofile, sizeof(a_nofile), "--nofile=%s", nofile);
        snprintf(a_port, sizeof(a_port), "--port=%u", (unsigned)port);
        const char *args[32] = {a_nofile,          OFFERD_BIN,
                                "--ip=127.0.0.1",  a_port,
                                "--work_dir=work", "--registry=in_memory"};
        int n = 6;
        for (; extra != NULL && *extra != NULL && n < 31; extra++)
            args[n++] = *extra;
        args[n] = NULL;
        ck_assert_int_eq(e2e_spawn(m, "/usr/bin/prlimit", args), 0);
        m->port = port;
        if (e2e_wait_healthy(m, 20000) == 0)
            return;
        e2e_proc_dump_log(m, 4096);
        e2e_proc_cleanup(m);
    }
    ck_abort_msg("the master did not start under prlimit");
}

/* A non-blocking TCP connection from src (NULL: any) to 127.0.0.1:port;
 * the connect may still be in progress. Returns the fd or -1. */
static int connect_from(const char *src, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (src != NULL) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        inet_pton(AF_INET, src, &sa.sin_addr);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Write all of p on non-blocking fd within ms. Returns 0, or -1. */
static int send_all(int fd, const void *p, size_t len, int ms)
{
    int64_t end = e2e_now_ms() + ms;
    size_t done = 0;
    while (done < len) {
        ssize_t w = send(fd, (const char *)p + done, len - done, MSG_NOSIGNAL);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        int left = (int)(end - e2e_now_ms());
        if (left <= 0)
            return -1;
        struct pollfd pf = {fd, POLLOUT, 0};
        poll(&pf, 1, left);
    }
    return 0;
}

/* Read from non-blocking fd into buf until "\r\n\r\n" arrived, the peer
 * closed, or ms passed. Returns the bytes read. */
static size_t read_head(int fd, char *buf, size_t cap, int ms)
{
    int64_t end = e2e_now_ms() + ms;
    size_t used = 0;
    buf[0] = '\0';
    while (used + 1 < cap && strstr(buf, "\r\n\r\n") == NULL) {
        ssize_t r = recv(fd, buf + used, cap - used - 1, 0);
        if (r > 0) {
            used += (size_t)r;
            buf[used] = '\0';
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            break;
        int left = (int)(end - e2e_now_ms());
        if (left <= 0)
            break;
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, left);
    }
    return used;
}

/* GET /health answers 200 within 1 s. */
static void assert_health_fast(uint16_t port)
{
    int64_t t0 = e2e_now_ms();
    struct e2e_response r;
    int rc = e2e_http(port, "GET", "/health", NULL, NULL, 0, 1000, &r);
    int64_t took = e2e_now_ms() - t0;
    ck_assert_msg(rc == 0, "/health: no answer within 1 s");
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(took < 1000, "/health took %lld ms", (long long)took);
    e2e_response_free(&r);
}

static const char *subscribe_body =
    "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{\"user\":"
    "\"u\",\"name\":\"abandoned\",\"failover_timeout\":3000000}}}";

/* POST a SUBSCRIBE from src (NULL: any) and read the reply's head; the
 * connection is then dropped (an abandoned subscription). Returns the
 * status (0: none). */
static int subscribe_and_drop(const char *src, uint16_t port, char *head,
                              size_t headcap)
{
    int fd = connect_from(src, port);
    ck_assert_int_ge(fd, 0);
    char req[1024];
    int n = snprintf(req, sizeof(req),
                     "POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\n"
                     "Content-Type: application/json\r\n"
                     "Accept: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     strlen(subscribe_body), subscribe_body);
    int status = 0;
    if (send_all(fd, req, (size_t)n, 5000) == 0 &&
        read_head(fd, head, headcap, 5000) > 0)
        sscanf(head, "HTTP/1.1 %d", &status);
    close(fd);
    return status;
}

/* ---- 2,000 idle connections at ulimit -n 1024 ---- */

START_TEST(test_idle_connections_at_fd_limit)
{
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
    /* The master at ulimit -n 1024 against 2,000 connections; a test
     * process allowed fewer descriptors scales both down alike. */
    int n = 2000, mlim = 1024;
    if (rl.rlim_cur < (rlim_t)n + 200) {
        n = (int)rl.rlim_cur - 200;
        mlim = n / 2;
    }
    ck_assert_int_ge(mlim, 256);
    int reserve = mlim / 8 > 64 ? mlim / 8 : 64;
    char nofile[32], want[128];
    snprintf(nofile, sizeof(nofile), "%d:%d", mlim, mlim);
    snprintf(want, sizeof(want),
             "file descriptor limit %d: accepting up to %d HTTP connections",
             mlim, mlim - reserve);

    struct e2e_proc m;
    start_master(&m, nofile, NULL);
    ck_assert_int_eq(e2e_log_count(&m, want), 1);
    int *fds = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        fds[i] = connect_from(NULL, m.port);
        ck_assert_int_ge(fds[i], 0);
        if (i % 250 == 249)
            assert_health_fast(m.port);
    }
    /* All held (or shed) now: /health and a scheduler still get in. */
    for (int i = 0; i < 5; i++) {
        assert_health_fast(m.port);
        e2e_sleep_ms(100);
    }
    char head[4096];
    int64_t t0 = e2e_now_ms();
    ck_assert_int_eq(subscribe_and_drop(NULL, m.port, head, sizeof(head)), 200);
    ck_assert_int_lt(e2e_now_ms() - t0, 1000);
    ck_assert_int_eq(e2e_log_count(&m, "Error from accept"), 0);
    ck_assert_int_le(e2e_log_count(&m, "accept() failed"), 5);
    ck_assert(e2e_proc_running(&m));
    for (int i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    assert_health_fast(m.port);
    ck_assert_int_eq(e2e_proc_stop(&m, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&m);
}
END_TEST

/* ---- 100 unfinished 4 MiB bodies ---- */

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

struct rss_wait {
    pid_t pid;
    long below;
};

static bool rss_below(void *arg)
{
    const struct rss_wait *w = arg;
    long r = rss_kib(w->pid);
    return r >= 0 && r < w->below;
}

/* Under ASan (its quarantine holds freed memory back, 256 MiB by default)
 * or TSan (shadow memory) the master's RSS says nothing about its own use:
 * the test then checks the flow and prints the figures only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

enum { N_BODIES = 100 };

struct bodies {
    uint16_t port;
    const int *fds;
    int n;
    bool refused_at[N_BODIES];
    int refused;
    double each; /* bytes the master holds for a body held */
};

static bool bodies_settled(void *arg)
{
    struct bodies *b = arg;
    for (int i = 0; i < b->n; i++) {
        if (b->refused_at[i])
            continue;
        char reply[1024];
        ssize_t r = recv(b->fds[i], reply, sizeof(reply) - 1, 0);
        if (r > 0) {
            reply[r] = '\0';
            b->refused_at[i] = strstr(reply, "HTTP/1.1 503") != NULL;
            b->refused += b->refused_at[i];
        }
    }
    double want = (double)(b->n - b->refused) * b->each;
    return e2e_metric(b->port, "master/http/buffered_request_bytes") == want;
}

static bool nothing_buffered(void *arg)
{
    const uint16_t *port = arg;
    return e2e_metric(*port, "master/http/buffered_request_bytes") == 0;
}

START_TEST(test_unfinished_bodies)
{
    struct e2e_proc m;
    start_master(&m, NULL, NULL);
    /* Warm up the paths a request takes, then measure. */
    assert_health_fast(m.port);
    long base = rss_kib(m.pid);
    ck_assert_int_gt(base, 0);

    enum { N = N_BODIES, BODY = 4 << 20 };
    static char chunk[256 << 10];
    memset(chunk, 'x', sizeof(chunk));
    int fds[N];
    size_t sent[N];
    bool done[N];
    char head[256];
    int hl = snprintf(head, sizeof(head),
                      "POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\n"
                      "Content-Length: %d\r\n\r\n",
                      BODY);
    for (int i = 0; i < N; i++) {
        fds[i] = connect_from(NULL, m.port);
        ck_assert_int_ge(fds[i], 0);
        ck_assert_int_eq(send_all(fds[i], head, (size_t)hl, 5000), 0);
        sent[i] = 0;
        done[i] = false;
    }
    /* Send every body but its last byte, round robin, until all are sent
     * or refused (the peer closed). */
    int64_t end = e2e_now_ms() + 30000;
    int left = N;
    while (left > 0 && e2e_now_ms() < end) {
        bool progress = false;
        for (int i = 0; i < N; i++) {
            if (done[i])
                continue;
            size_t want = (size_t)BODY - 1 - sent[i];
            if (want > sizeof(chunk))
                want = sizeof(chunk);
            ssize_t w = send(fds[i], chunk, want, MSG_NOSIGNAL);
            if (w > 0) {
                sent[i] += (size_t)w;
                progress = true;
            }
            if ((w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) ||
                sent[i] == (size_t)BODY - 1) {
                done[i] = true;
                left--;
            }
        }
        if (!progress)
            e2e_sleep_ms(5); /* kernel buffers full: let the master read */
    }
    /* Wait until each body is refused (503 read) or wholly buffered at the
     * master (its budget's count says so). */
    struct bodies bs = {m.port, fds, N, {0}, 0, (double)hl + (double)BODY - 1};
    ck_assert(e2e_poll_until(bodies_settled, &bs, 20000));
    long peak = rss_kib(m.pid);
    int refused = bs.refused;
    fprintf(stderr,
            "e2e_abuse: RSS %ld KiB before, %ld KiB with %d bodies "
            "held (%d refused with 503)\n",
            base, peak, N - refused, refused);
    if (RSS_CHECKED)
        ck_assert_msg(peak - base <= 128 * 1024, "RSS grew %ld KiB",
                      peak - base);
    ck_assert_int_gt(refused, 0);
    assert_health_fast(m.port);
    for (int i = 0; i < N; i++)
        close(fds[i]);
    struct rss_wait w = {m.pid, base + 32 * 1024};
    if (RSS_CHECKED)
        ck_assert_msg(e2e_poll_until(rss_below, &w, 15000),
                      "RSS %ld KiB after the bodies went (before: %ld KiB)",
                      rss_kib(m.pid), base);
    ck_assert(e2e_poll_until(nothing_buffered, &m.port, 10000));
    fprintf(stderr, "e2e_abuse: RSS %ld KiB after they went\n", rss_kib(m.pid));
    assert_health_fast(m.port);
    ck_assert_int_eq(e2e_proc_stop(&m, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&m);
}
END_TEST

/* ---- Abandoned subscriptions ---- */

struct fw_count {
    uint16_t port;
    size_t want;
};

static bool frameworks_are(void *arg)
{
    const struct fw_count *c = arg;
    json_t *st = e2e_get_json(c->port, "/state");
    bool ok = st != NULL &&
              json_array_size(json_object_get(st, "frameworks")) == c->want;
    json_decref(st);
    return ok;
}

START_TEST(test_abandoned_subscriptions)
{
    /* Scaled from issue 19's 10,000 (each a registry write and a stream):
     * the per-peer cap is what holds, whatever the count. */
    enum { CAP = 100, ATTEMPTS = 300 };
    struct e2e_proc m;
    const char *flags[] = {"--max_frameworks_per_principal=100",
                           "--max_failover_timeout=3secs",
                           "--registry=in_memory", NULL};
    start_master(&m, NULL, flags);
    int admitted = 0, refused = 0;
    char head[4096];
    for (int i = 0; i < ATTEMPTS; i++) {
        int st = subscribe_and_drop("127.0.0.1", m.port, head, sizeof(head));
        if (st == 200)
            admitted++;
        else if (st == 503)
            refused++;
        else
            ck_abort_msg("SUBSCRIBE %d answered %d: %s", i, st, head);
    }
    ck_assert_int_eq(admitted, CAP);
    ck_assert_int_eq(refused, ATTEMPTS - CAP);
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(m.port, "GET", "/health", NULL, NULL, 0, 1000, &r), 0);
    e2e_response_free(&r);
    /* The table is not full: a framework from elsewhere subscribes. */
    ck_assert_int_eq(
        subscribe_and_drop("127.0.0.2", m.port, head, sizeof(head)), 200);
    /* The abandoned ones never launched: they expire after 3 s, not 35
     * days, and the peer may subscribe again. */
    struct fw_count c = {m.port, 0};
    ck_assert(e2e_poll_until(frameworks_are, &c, 20000));
    ck_assert_int_eq(
        subscribe_and_drop("127.0.0.1", m.port, head, sizeof(head)), 200);
    ck_assert_int_eq(e2e_proc_stop(&m, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&m);
}
END_TEST

/* ---- An agent SUBSCRIBE whose cpus sum past 1e12 ---- */

START_TEST(test_agent_huge_resources_refused)
{
    struct e2e_proc m;
    start_master(&m, NULL, NULL);
    const char *one = "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                      "\"value\":1e12}}";
    size_t n = 4095, each = strlen(one) + 1;
    char *list = malloc(n * each + 1);
    size_t used = 0;
    for (size_t i = 0; i < n; i++)
        used += (size_t)sprintf(list + used, "%s%s", i ? "," : "", one);
    char *body = NULL;
    ck_assert_int_gt(
        asprintf(&body,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
                 "\"hostname\":\"h\",\"port\":5051,\"resources\":[%s]},"
                 "\"version\":\"test\",\"address\":{\"ip\":\"127.0.0.2\","
                 "\"port\":5051}}}",
                 list),
        0);
    const char *hdrs[] = {"Content-Type: application/json",
                          "Accept: application/json", NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(m.port, "POST", "/api/v1/agent", hdrs, body,
                              strlen(body), 10000, &r),
                     0);
    ck_assert_int_eq(r.status, 400);
    /* A one-line reason. */
    ck_assert(r.body_len > 0 &&
              memchr(r.body, '\n', r.body_len) == r.body + r.body_len - 1);
    fprintf(stderr, "e2e_abuse: agent SUBSCRIBE: %d %s", r.status, r.body);
    e2e_response_free(&r);
    ck_assert_int_eq(e2e_metric(m.port, "master/slaves_active"), 0);
    ck_assert(e2e_proc_running(&m));
    free(body);
    free(list);
    ck_assert_int_eq(e2e_proc_stop(&m, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&m);
}
END_TEST

static Suite *abuse_suite(void)
{
    Suite *s = suite_create("e2e_abuse");
    TCase *tc = tcase_create("abuse");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_idle_connections_at_fd_limit);
    tcase_add_test(tc, test_unfinished_bodies);
    tcase_add_test(tc, test_abandoned_subscriptions);
    tcase_add_test(tc, test_agent_huge_resources_refused);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(abuse_suite)
