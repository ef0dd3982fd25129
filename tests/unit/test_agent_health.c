/*
 * Tests of health checks and checks (agent/health.h) on a private event
 * loop: an HTTP server and a TCP listener in this process (raw sockets on
 * the same loop), command probes in a temporary sandbox, and a task record
 * that stands in for the agent's (its latest status is replaced by each
 * update, as the agent does).
 */
#include "agent/health.h"
#include "check_main.h"
#include "common/clock.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- A tiny HTTP server and TCP listener ---- */

enum srv_mode {
    SRV_ANSWER, /* answer every request with srv_status */
    SRV_SILENT, /* accept, never answer */
};

static struct event_base *base;
static int lfd = -1;
static struct event *lev;
static uint16_t srv_port;
static enum srv_mode srv_mode;
static int srv_status = 200;
static int srv_requests;
/* Paths answered otherwise than srv_status (with Location when set), and
 * the path of the latest request. */
#define MAX_ROUTES 4
static struct {
    const char *path;
    int status;
    char location[128];
} srv_routes[MAX_ROUTES];
static char srv_last_path[256];
/* Connections open (a silent server keeps them until srv_close). */
#define MAX_CONNS 64
static struct event *conns[MAX_CONNS];

static void conn_close(struct event *ev)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i] == ev)
            conns[i] = NULL;
    close(event_get_fd(ev));
    event_free(ev);
}

static void on_conn(evutil_socket_t fd, short what, void *arg)
{
    struct event *ev = arg;
    (void)what;
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0 && srv_mode == SRV_ANSWER) {
        srv_requests++;
        /* "GET <path> HTTP/1.1" */
        buf[n < (ssize_t)sizeof(buf) ? n : (ssize_t)sizeof(buf) - 1] = '\0';
        const char *p = strchr(buf, ' ');
        size_t pl = p != NULL ? strcspn(p + 1, " ") : 0;
        snprintf(srv_last_path, sizeof(srv_last_path), "%.*s", (int)pl,
                 p != NULL ? p + 1 : "");
        int status = srv_status;
        char location[160] = "";
        for (int i = 0; i < MAX_ROUTES; i++) {
            if (srv_routes[i].path == NULL ||
                strcmp(srv_routes[i].path, srv_last_path) != 0)
                continue;
            status = srv_routes[i].status;
            if (srv_routes[i].location[0] != '\0')
                snprintf(location, sizeof(location), "Location: %s\r\n",
                         srv_routes[i].location);
        }
        char resp[384];
        int len = snprintf(resp, sizeof(resp),
                           "HTTP/1.1 %d X\r\nContent-Length: 0\r\n%s"
                           "Connection: close\r\n\r\n",
                           status, location);
        ssize_t w = write(fd, resp, (size_t)len);
        (void)w;
    }
    if (n > 0 && srv_mode == SRV_SILENT)
        return; /* keep it open, say nothing */
    conn_close(ev);
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    (void)arg;
    int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0)
        return;
    int slot = 0;
    while (slot < MAX_CONNS && conns[slot] != NULL)
        slot++;
    if (slot == MAX_CONNS) {
        close(c);
        return;
    }
    struct event *ev =
        event_new(base, c, EV_READ | EV_PERSIST, on_conn, event_self_cbarg());
    conns[slot] = ev;
    event_add(ev, NULL);
}

/* Listen on 127.0.0.1:srv_port (a new port the first time). */
static void srv_open(void)
{
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(lfd, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(srv_port);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(lfd, 16), 0);
    socklen_t sl = sizeof(sa);
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    srv_port = ntohs(sa.sin_port);
    lev = event_new(base, lfd, EV_READ | EV_PERSIST, on_accept, NULL);
    event_add(lev, NULL);
}

/* Stop listening: connections are refused from now on. */
static void srv_close(void)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (conns[i] != NULL)
            conn_close(conns[i]);
    if (lev != NULL)
        event_free(lev);
    lev = NULL;
    if (lfd >= 0)
        close(lfd);
    lfd = -1;
}

/* ---- The task and the agent's side ---- */

#define MAX_UPDATES 64

struct rec {
    Mesos__V1__TaskState state;
    int reason;                        /* -1: unset */
    int healthy;                       /* -1: unset */
    Mesos__V1__CheckStatusInfo *check; /* owned copy, or NULL */
};

static struct agent_health *h;
static struct agent_task task;
static char sandbox[PATH_MAX];
static struct rec recs[MAX_UPDATES];
static int nrecs;
static int kills;

static void on_update(struct agent_task *t, Mesos__V1__TaskStatus *st,
                      void *arg)
{
    (void)arg;
    ck_assert_int_lt(nrecs, MAX_UPDATES);
    ck_assert(st->has_uuid && st->uuid.len == 16);
    struct rec *r = &recs[nrecs++];
    r->state = st->state;
    r->reason = st->has_reason ? (int)st->reason : -1;
    r->healthy = st->has_healthy ? (int)st->healthy : -1;
    r->check = st->check_status != NULL
                   ? jpb_copy(&mesos__v1__check_status_info__descriptor,
                              &st->check_status->base)
                   : NULL;
    jpb_free(&t->last_status->base);
    t->last_status = st;
}

static void on_kill(struct agent_task *t, void *arg)
{
    (void)arg;
    t->kill_requested = true;
    kills++;
}

static void setup(void)
{
    base = event_base_new();
    srv_port = 0;
    srv_mode = SRV_ANSWER;
    srv_status = 200;
    srv_requests = 0;
    memset(srv_routes, 0, sizeof(srv_routes));
    srv_last_path[0] = '\0';
    nrecs = 0;
    kills = 0;
    snprintf(sandbox, sizeof(sandbox), "/tmp/offerd-health-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sandbox));
    struct agent_health_cbs cbs = {on_update, on_kill, NULL};
    h = agent_health_new(base, &cbs);
    memset(&task, 0, sizeof(task));
    task.framework_id = xstrdup("fw-1");
    task.task_id = xstrdup("t1");
    task.sandbox = xstrdup(sandbox);
    task.state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    task.phase = AGENT_TASK_RUNNING;
    task.info = xmalloc(sizeof(*task.info));
    mesos__v1__task_info__init(task.info);
    Mesos__V1__TaskStatus *st = xmalloc(sizeof(*st));
    mesos__v1__task_status__init(st);
    st->task_id = xmalloc(sizeof(*st->task_id));
    mesos__v1__task_id__init(st->task_id);
    st->task_id->value = xstrdup("t1");
    st->state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    task.last_status = st;
}

static void teardown(void)
{
    agent_health_free(h);
    srv_close();
    for (int i = 0; i < nrecs; i++)
        if (recs[i].check != NULL)
            jpb_free(&recs[i].check->base);
    jpb_free(&task.info->base);
    jpb_free(&task.last_status->base);
    free(task.framework_id);
    free(task.task_id);
    free(task.sandbox);
    event_base_free(base);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sandbox);
    ck_assert_int_eq(system(cmd), 0);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
}

/* Run the loop until cond holds or ms pass. */
static bool run_until(bool (*cond)(void), int ms)
{
    int64_t end = clock_monotonic_ns() + (int64_t)ms * 1000000;
    struct event *tick = evtimer_new(base, on_tick, NULL);
    bool ok = false;
    for (;;) {
        if (cond != NULL && cond()) {
            ok = true;
            break;
        }
        if (clock_monotonic_ns() >= end)
            break;
        struct timeval tv = {0, 10 * 1000};
        evtimer_add(tick, &tv);
        event_base_loop(base, EVLOOP_ONCE);
    }
    event_free(tick);
    return ok;
}

static int want_recs;
static bool have_recs(void)
{
    return nrecs >= want_recs;
}

static bool wait_recs(int n, int ms)
{
    want_recs = n;
    return run_until(have_recs, ms);
}

static bool have_kill(void)
{
    return kills > 0;
}

/* ---- Building checks ---- */

static Mesos__V1__HealthCheck *health_new(Mesos__V1__HealthCheck__Type type)
{
    Mesos__V1__HealthCheck *hc = xmalloc(sizeof(*hc));
    mesos__v1__health_check__init(hc);
    hc->has_type = 1;
    hc->type = type;
    hc->has_delay_seconds = 1;
    hc->delay_seconds = 0;
    hc->has_interval_seconds = 1;
    hc->interval_seconds = 0.05;
    hc->has_timeout_seconds = 1;
    hc->timeout_seconds = 1;
    hc->has_grace_period_seconds = 1;
    hc->grace_period_seconds = 0;
    hc->has_consecutive_failures = 1;
    hc->consecutive_failures = 2;
    return hc;
}

static Mesos__V1__CommandInfo *shell(const char *cmd)
{
    Mesos__V1__CommandInfo *ci = xmalloc(sizeof(*ci));
    mesos__v1__command_info__init(ci);
    ci->has_shell = 1;
    ci->shell = 1;
    ci->value = xstrdup(cmd);
    return ci;
}

static void http_health(void)
{
    Mesos__V1__HealthCheck *hc =
        health_new(MESOS__V1__HEALTH_CHECK__TYPE__HTTP);
    hc->http = xmalloc(sizeof(*hc->http));
    mesos__v1__health_check__httpcheck_info__init(hc->http);
    hc->http->port = srv_port;
    hc->http->path = xstrdup("/health");
    task.info->health_check = hc;
}

static Mesos__V1__CheckInfo *check_new(Mesos__V1__CheckInfo__Type type)
{
    Mesos__V1__CheckInfo *ci = xmalloc(sizeof(*ci));
    mesos__v1__check_info__init(ci);
    ci->has_type = 1;
    ci->type = type;
    ci->has_delay_seconds = 1;
    ci->delay_seconds = 0;
    ci->has_interval_seconds = 1;
    ci->interval_seconds = 0.05;
    ci->has_timeout_seconds = 1;
    ci->timeout_seconds = 1;
    task.info->check = ci;
    return ci;
}

static const int HEALTH_REASON =
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_HEALTH_CHECK_STATUS_UPDATED;
static const int CHECK_REASON =
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_CHECK_STATUS_UPDATED;

/* ---- Health checks ---- */

START_TEST(test_http_healthy_unhealthy_killed)
{
    srv_open();
    http_health();
    agent_health_start(h, &task, "agent-1");
    ck_assert_uint_eq(agent_health_count(h), 1);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_int_eq(recs[0].reason, HEALTH_REASON);
    ck_assert_int_eq(recs[0].healthy, 1);
    /* Further successes send nothing. */
    int seen = srv_requests;
    srv_requests = 0;
    (void)seen;
    want_recs = 0;
    ck_assert(!wait_recs(2, 300));
    ck_assert_int_ge(srv_requests, 2);

    /* 503: one unhealthy update per failure, a kill after the second. */
    srv_status = 503;
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(nrecs, 3);
    ck_assert_int_eq(recs[1].healthy, 0);
    ck_assert_int_eq(recs[2].healthy, 0);
    ck_assert_int_eq(recs[2].reason, HEALTH_REASON);
    ck_assert_int_eq(kills, 1);
    /* Killed: no more probes, no more updates. */
    ck_assert(!wait_recs(4, 300));
    ck_assert_int_eq(kills, 1);

    /* The terminal update carries healthy=false. */
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.state = MESOS__V1__TASK_STATE__TASK_KILLED;
    agent_health_decorate(h, &task, &st);
    ck_assert(st.has_healthy && !st.healthy);
    agent_health_stop(h, &task);
    ck_assert_uint_eq(agent_health_count(h), 0);
}
END_TEST

static void h_ok(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, NULL, NULL, 0);
}

/* An https check reaches a task's TLS server, whatever CA signed its
 * certificate (nothing is verified, as Mesos's curl -k). */
START_TEST(test_https_health_check)
{
    char dir[] = "/tmp/offerd-health-tls-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[512], crt[300], key[300];
    snprintf(cmd, sizeof(cmd), "bash %s/tests/tls/gen-certs.sh %s",
             OFFERD_SOURCE_DIR, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(crt, sizeof(crt), "%s/other.crt", dir);
    snprintf(key, sizeof(key), "%s/other.key", dir);
    setenv("LIBPROCESS_SSL_ENABLED", "true", 1);
    setenv("LIBPROCESS_SSL_CERT_FILE", crt, 1);
    setenv("LIBPROCESS_SSL_KEY_FILE", key, 1);
    struct http_server *s = http_server_new(base, NULL);
    char err[512];
    ck_assert_msg(
        http_server_bind(s, "127.0.0.1", 0, &srv_port, err, sizeof(err)) == 0,
        "%s", err);
    ck_assert_int_eq(http_server_route(s, "/health", HTTP_GET, h_ok, NULL), 0);
    http_health();
    task.info->health_check->http->scheme = xstrdup("https");
    agent_health_start(h, &task, "agent-1");
    ck_assert(wait_recs(1, 10000));
    ck_assert_int_eq(recs[0].healthy, 1);
    agent_health_stop(h, &task);
    http_server_free(s);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_http_refused_and_redirect_codes)
{
    srv_open();
    srv_status = 302; /* 200-399 is healthy, as Mesos */
    http_health();
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].healthy, 1);
    srv_close(); /* refused */
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(recs[1].healthy, 0);
}
END_TEST

/* Redirects are followed as Mesos's curl -L does (an absolute URL, then a
 * relative one; the query kept, the fragment not sent): the last answer
 * decides. A redirect loop fails after 50 hops. */
START_TEST(test_http_follows_redirects)
{
    srv_open();
    srv_routes[0].path = "/health";
    srv_routes[0].status = 302;
    snprintf(srv_routes[0].location, sizeof(srv_routes[0].location),
             "http://127.0.0.1:%u/dir/a", (unsigned)srv_port);
    srv_routes[1].path = "/dir/a";
    srv_routes[1].status = 301;
    snprintf(srv_routes[1].location, sizeof(srv_routes[1].location),
             "b?q=1#frag");
    srv_routes[2].path = "/dir/b?q=1";
    srv_routes[2].status = 500;
    http_health();
    task.info->health_check->consecutive_failures = 1000;
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].healthy, 0); /* the 500, not the 302 */
    ck_assert_str_eq(srv_last_path, "/dir/b?q=1");

    srv_routes[2].status = 200;
    ck_assert(wait_recs(2, 5000));
    ck_assert_int_eq(recs[1].healthy, 1);

    snprintf(srv_routes[0].location, sizeof(srv_routes[0].location), "/health");
    ck_assert(wait_recs(3, 10000));
    ck_assert_int_eq(recs[2].healthy, 0);
    ck_assert_int_eq(kills, 0);
}
END_TEST

START_TEST(test_grace_period_ignores_failures_until_success)
{
    srv_open();
    srv_status = 500;
    http_health();
    task.info->health_check->grace_period_seconds = 30;
    agent_health_start(h, &task, NULL);
    /* Failing inside the grace period: nothing sent, no kill. */
    ck_assert(!wait_recs(1, 400));
    ck_assert_int_ge(srv_requests, 3);
    ck_assert_int_eq(kills, 0);
    srv_status = 200;
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].healthy, 1);
    /* After a success the grace period no longer applies. */
    srv_status = 500;
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(recs[1].healthy, 0);
}
END_TEST

START_TEST(test_http_timeout_is_a_failure)
{
    srv_open();
    srv_mode = SRV_SILENT;
    http_health();
    task.info->health_check->timeout_seconds = 0.1;
    agent_health_start(h, &task, NULL);
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(nrecs, 2);
    ck_assert_int_eq(recs[0].healthy, 0);
}
END_TEST

START_TEST(test_tcp_health)
{
    srv_open();
    Mesos__V1__HealthCheck *hc = health_new(MESOS__V1__HEALTH_CHECK__TYPE__TCP);
    hc->tcp = xmalloc(sizeof(*hc->tcp));
    mesos__v1__health_check__tcpcheck_info__init(hc->tcp);
    hc->tcp->port = srv_port;
    task.info->health_check = hc;
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].healthy, 1);
    srv_close();
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(nrecs, 3);
    ck_assert_int_eq(recs[2].healthy, 0);
}
END_TEST

START_TEST(test_command_health_in_sandbox_with_env)
{
    /* Healthy while the file the check looks for exists in the sandbox,
     * and the task's environment is there. */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/ok", sandbox);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    Mesos__V1__HealthCheck *hc =
        health_new(MESOS__V1__HEALTH_CHECK__TYPE__COMMAND);
    hc->command = shell("test -f ok && test \"$MESOS_TASK_ID\" = t1 && "
                        "test \"$MESOS_SANDBOX\" = \"$PWD\"");
    task.info->health_check = hc;
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].healthy, 1);
    unlink(path);
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_eq(recs[1].healthy, 0);
}
END_TEST

START_TEST(test_command_timeout_kills_the_probe)
{
    Mesos__V1__HealthCheck *hc =
        health_new(MESOS__V1__HEALTH_CHECK__TYPE__COMMAND);
    hc->command = shell("echo $$ > probe.pid; exec sleep 30");
    hc->timeout_seconds = 0.2;
    hc->consecutive_failures = 1;
    task.info->health_check = hc;
    int64_t t0 = clock_monotonic_ns();
    agent_health_start(h, &task, NULL);
    ck_assert(run_until(have_kill, 5000));
    ck_assert_int_lt(clock_monotonic_ns() - t0, 3 * CLOCK_NS_PER_SEC);
    ck_assert_int_eq(recs[0].healthy, 0);
    /* The probe's process is gone. */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/probe.pid", sandbox);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    long pid = 0;
    ck_assert_int_eq(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    int64_t end = clock_monotonic_ns() + 2 * CLOCK_NS_PER_SEC;
    while (kill((pid_t)pid, 0) == 0 && clock_monotonic_ns() < end)
        usleep(10000);
    ck_assert_msg(kill((pid_t)pid, 0) != 0, "probe %ld still runs", pid);
}
END_TEST

START_TEST(test_recovered_task_resumes_quietly)
{
    /* Healthy before the restart: a success sends nothing again. */
    srv_open();
    http_health();
    task.last_status->has_healthy = 1;
    task.last_status->healthy = 1;
    agent_health_start(h, &task, NULL);
    ck_assert(!wait_recs(1, 300));
    ck_assert_int_ge(srv_requests, 2);
}
END_TEST

START_TEST(test_no_check_no_monitor)
{
    agent_health_start(h, &task, NULL);
    ck_assert_uint_eq(agent_health_count(h), 0);
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.state = MESOS__V1__TASK_STATE__TASK_FINISHED;
    agent_health_decorate(h, &task, &st);
    ck_assert(!st.has_healthy);
    ck_assert_ptr_null(st.check_status);
}
END_TEST

/* ---- Checks ---- */

START_TEST(test_http_check_status_codes)
{
    srv_open();
    Mesos__V1__CheckInfo *ci = check_new(MESOS__V1__CHECK_INFO__TYPE__HTTP);
    ci->http = xmalloc(sizeof(*ci->http));
    mesos__v1__check_info__http__init(ci->http);
    ci->http->port = srv_port;
    /* A status built from scratch carries an empty check_status. */
    Mesos__V1__TaskStatus *st = task.last_status;
    agent_health_decorate(h, &task, st);
    ck_assert_ptr_nonnull(st->check_status);
    ck_assert_int_eq(st->check_status->type, MESOS__V1__CHECK_INFO__TYPE__HTTP);
    ck_assert_ptr_nonnull(st->check_status->http);
    ck_assert(!st->check_status->http->has_status_code);

    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert_int_eq(recs[0].reason, CHECK_REASON);
    ck_assert_int_eq(recs[0].healthy, -1);
    ck_assert_ptr_nonnull(recs[0].check);
    ck_assert_uint_eq(recs[0].check->http->status_code, 200);
    /* The same result again: nothing. */
    ck_assert(!wait_recs(2, 300));
    srv_status = 503;
    ck_assert(wait_recs(2, 5000));
    ck_assert_uint_eq(recs[1].check->http->status_code, 503);
    /* No answer at all: the field is unset. */
    srv_close();
    ck_assert(wait_recs(3, 5000));
    ck_assert_int_eq(recs[2].check->type, MESOS__V1__CHECK_INFO__TYPE__HTTP);
    ck_assert(!recs[2].check->http->has_status_code);
    /* A check never kills. */
    ck_assert_int_eq(kills, 0);
}
END_TEST

START_TEST(test_command_check_exit_code)
{
    Mesos__V1__CheckInfo *ci = check_new(MESOS__V1__CHECK_INFO__TYPE__COMMAND);
    ci->command = xmalloc(sizeof(*ci->command));
    mesos__v1__check_info__command__init(ci->command);
    ci->command->command = shell("if test -f three; then exit 3; fi; exit 0");
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(1, 5000));
    ck_assert(recs[0].check->command->has_exit_code);
    ck_assert_int_eq(recs[0].check->command->exit_code, 0);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/three", sandbox);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert(wait_recs(2, 5000));
    ck_assert_int_eq(recs[1].check->command->exit_code, 3);
    ck_assert_int_eq(recs[1].reason, CHECK_REASON);
}
END_TEST

START_TEST(test_tcp_check_and_health_together)
{
    srv_open();
    Mesos__V1__CheckInfo *ci = check_new(MESOS__V1__CHECK_INFO__TYPE__TCP);
    ci->tcp = xmalloc(sizeof(*ci->tcp));
    mesos__v1__check_info__tcp__init(ci->tcp);
    ci->tcp->port = srv_port;
    http_health();
    task.info->health_check->consecutive_failures = 1000;
    agent_health_start(h, &task, NULL);
    ck_assert(wait_recs(2, 5000));
    /* Each update keeps what the other one said last. */
    const struct rec *last = &recs[1];
    ck_assert_int_eq(last->healthy, 1);
    ck_assert_ptr_nonnull(last->check);
    ck_assert(last->check->tcp->has_succeeded);
    ck_assert(last->check->tcp->succeeded);
    srv_close();
    int n = nrecs;
    ck_assert(wait_recs(n + 2, 5000));
    bool saw_false = false;
    for (int i = n; i < nrecs; i++)
        if (recs[i].reason == CHECK_REASON)
            saw_false = recs[i].check->tcp->has_succeeded &&
                        !recs[i].check->tcp->succeeded;
    ck_assert(saw_false);
}
END_TEST

START_TEST(test_no_updates_after_kill_or_end)
{
    srv_open();
    http_health();
    task.kill_requested = true;
    agent_health_start(h, &task, NULL);
    ck_assert(!wait_recs(1, 300));
    ck_assert_int_eq(srv_requests, 0);
}
END_TEST

static Suite *health_suite(void)
{
    Suite *s = suite_create("agent_health");
    TCase *tc = tcase_create("health");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_http_healthy_unhealthy_killed);
    tcase_add_test(tc, test_https_health_check);
    tcase_add_test(tc, test_http_refused_and_redirect_codes);
    tcase_add_test(tc, test_http_follows_redirects);
    tcase_add_test(tc, test_grace_period_ignores_failures_until_success);
    tcase_add_test(tc, test_http_timeout_is_a_failure);
    tcase_add_test(tc, test_tcp_health);
    tcase_add_test(tc, test_command_health_in_sandbox_with_env);
    tcase_add_test(tc, test_command_timeout_kills_the_probe);
    tcase_add_test(tc, test_recovered_task_resumes_quietly);
    tcase_add_test(tc, test_no_check_no_monitor);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("check");
    tcase_add_checked_fixture(tk, setup, teardown);
    tcase_set_timeout(tk, 30);
    tcase_add_test(tk, test_http_check_status_codes);
    tcase_add_test(tk, test_command_check_exit_code);
    tcase_add_test(tk, test_tcp_check_and_health_together);
    tcase_add_test(tk, test_no_updates_after_kill_or_end);
    suite_add_tcase(s, tk);
    return s;
}

OFFERD_CHECK_MAIN(health_suite)
