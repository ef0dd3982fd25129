/*
 * Health checks and checks of command tasks: one monitor per task, one
 * checker per HealthCheck or CheckInfo, each a probe on a timer (see
 * health.h for the rules).
 *
 * A command probe is double-forked so that the agent's SIGCHLD handler,
 * which reaps every child of the agent (tasks.c), cannot take its exit
 * status: the agent's child forks the runner and exits at once (reaped
 * here, right away); the runner leads a session of its own, forks the
 * command, waits for it and writes its wait status to a pipe the monitor
 * reads. A timeout SIGKILLs the runner's process group.
 */
#include "agent/health.h"

#include "agent/command.h"
#include "common/clock.h"
#include "common/hmap.h"
#include "common/http_client.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/task_state.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Mesos's defaults (mesos.proto), used when a field is unset. */
#define DEFAULT_DELAY_SECS    15.0
#define DEFAULT_INTERVAL_SECS 10.0
#define DEFAULT_TIMEOUT_SECS  20.0
#define DEFAULT_GRACE_SECS    10.0
#define DEFAULT_FAILURES      3
/* Durations above this are taken as this (a year): keeps ns in range. */
#define MAX_SECS (365.0 * 24 * 3600)
/* The shortest interval between probes, so that interval 0 (which Mesos
 * allows) cannot spin the loop. */
#define MIN_INTERVAL_NS (10 * 1000 * 1000LL)
/* Largest HTTP response body read (the body itself is ignored). */
#define HTTP_MAX_BODY ((size_t)1 << 20)

/* Probe kinds: the values of CheckInfo.Type and HealthCheck.Type. */
enum probe_kind { PROBE_COMMAND = 1, PROBE_HTTP = 2, PROBE_TCP = 3 };

/* What one probe found. */
struct probe_result {
    bool done;       /* it completed: the value below is meaningful */
    int exit_code;   /* COMMAND */
    int status_code; /* HTTP */
    bool tcp_ok;     /* TCP */
    char why[200];   /* !done: what went wrong */
};

struct monitor;

struct checker {
    struct monitor *mon;
    bool health; /* a HealthCheck (else a CheckInfo) */
    enum probe_kind kind;
    const char *name; /* "HTTP health check", "TCP check" ... */
    int64_t delay_ns; /* before the first probe */
    int64_t interval_ns;
    int64_t timeout_ns; /* 0: none */
    bool ipv6;
    bool https; /* an https health check (certificate not verified) */
    uint16_t port;
    char *path; /* HTTP: "/..." */
    /* HTTP: where this probe's next request goes after a redirect (as
     * curl -L): hops taken, and the target (host NULL: the task's). */
    int hops;
    char *hop_host, *hop_path;
    uint16_t hop_port;
    bool hop_https;
    struct agent_command cmd; /* COMMAND */
    struct event *timer;      /* next probe, or the running one's timeout */
    bool running;             /* a probe is under way */
    int fd;                   /* COMMAND: report pipe; TCP: socket; -1 */
    struct event *io;         /* on fd */
    pid_t runner;             /* COMMAND: session (and group) leader, 0 */
    char line[32];            /* COMMAND: the runner's report */
    size_t len;
    struct http_client_req *req; /* HTTP */

    /* Health. */
    int64_t started_ns; /* monotonic, when monitoring began */
    int64_t grace_ns;
    uint32_t max_failures;
    bool initializing; /* no success seen yet */
    uint32_t failures; /* consecutive */

    /* Check: the latest result (owned), empty of the type at first. */
    Mesos__V1__CheckStatusInfo *last;
};

struct monitor {
    struct agent_health *h;
    struct agent_task *t;
    char *key;
    struct checker *health, *check;
    bool killed_by_health;
};

struct agent_health {
    struct event_base *base;
    struct agent_health_cbs cbs;
    struct hmap *monitors; /* key(fw, task) -> struct monitor */
};

static char *key_of(const char *fw, const char *task_id)
{
    return xasprintf("%s\n%s", fw, task_id);
}

static int64_t secs_ns(bool has, double v, double fallback)
{
    double s = has ? v : fallback;
    if (!(s >= 0)) /* negative (refused by the master) or NaN */
        s = fallback;
    if (s > MAX_SECS)
        s = MAX_SECS;
    return (int64_t)(s * (double)CLOCK_NS_PER_SEC);
}

static void arm(struct checker *c, int64_t ns)
{
    struct timeval tv = {(time_t)(ns / CLOCK_NS_PER_SEC),
                         (suseconds_t)((ns % CLOCK_NS_PER_SEC) / 1000)};
    event_add(c->timer, &tv);
}

/* ---- Check statuses ---- */

static Mesos__V1__CheckStatusInfo *check_status_empty(enum probe_kind kind)
{
    Mesos__V1__CheckStatusInfo *cs = xmalloc(sizeof(*cs));
    mesos__v1__check_status_info__init(cs);
    cs->has_type = 1;
    cs->type = (Mesos__V1__CheckInfo__Type)kind;
    switch (kind) {
    case PROBE_COMMAND:
        cs->command = xmalloc(sizeof(*cs->command));
        mesos__v1__check_status_info__command__init(cs->command);
        break;
    case PROBE_HTTP:
        cs->http = xmalloc(sizeof(*cs->http));
        mesos__v1__check_status_info__http__init(cs->http);
        break;
    case PROBE_TCP:
        cs->tcp = xmalloc(sizeof(*cs->tcp));
        mesos__v1__check_status_info__tcp__init(cs->tcp);
        break;
    }
    return cs;
}

static Mesos__V1__CheckStatusInfo *check_status_of(enum probe_kind kind,
                                                   const struct probe_result *r)
{
    Mesos__V1__CheckStatusInfo *cs = check_status_empty(kind);
    if (!r->done)
        return cs;
    switch (kind) {
    case PROBE_COMMAND:
        cs->command->has_exit_code = 1;
        cs->command->exit_code = r->exit_code;
        break;
    case PROBE_HTTP:
        cs->http->has_status_code = 1;
        cs->http->status_code = (uint32_t)r->status_code;
        break;
    case PROBE_TCP:
        cs->tcp->has_succeeded = 1;
        cs->tcp->succeeded = r->tcp_ok;
        break;
    }
    return cs;
}

static bool check_status_equal(const Mesos__V1__CheckStatusInfo *a,
                               const Mesos__V1__CheckStatusInfo *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    size_t la = protobuf_c_message_get_packed_size(&a->base);
    size_t lb = protobuf_c_message_get_packed_size(&b->base);
    if (la != lb)
        return false;
    uint8_t *pa = xmalloc(la ? la : 1), *pb = xmalloc(lb ? lb : 1);
    protobuf_c_message_pack(&a->base, pa);
    protobuf_c_message_pack(&b->base, pb);
    bool eq = memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return eq;
}

/* ---- Updates ---- */

/* Whether t may still get health and check updates. */
static bool may_update(const struct agent_task *t)
{
    return !t->kill_requested &&
           t->state == MESOS__V1__TASK_STATE__TASK_RUNNING &&
           t->last_status != NULL;
}

/* A copy of t's latest status with a new uuid, timestamp and reason. */
static Mesos__V1__TaskStatus *status_from_last(const struct agent_task *t,
                                               Mesos__V1__TaskStatus__Reason r)
{
    Mesos__V1__TaskStatus *st =
        jpb_copy(&mesos__v1__task_status__descriptor, &t->last_status->base);
    free(st->uuid.data);
    st->has_uuid = 1;
    st->uuid.len = 16;
    st->uuid.data = xmalloc(16);
    id_uuid_v4_bytes(st->uuid.data);
    st->has_timestamp = 1;
    st->timestamp = clock_wall_secs();
    st->has_reason = 1;
    st->reason = r;
    return st;
}

static void send_health(struct checker *c, bool healthy)
{
    struct monitor *m = c->mon;
    Mesos__V1__TaskStatus *st = status_from_last(
        m->t,
        MESOS__V1__TASK_STATUS__REASON__REASON_TASK_HEALTH_CHECK_STATUS_UPDATED);
    st->has_healthy = 1;
    st->healthy = healthy;
    m->h->cbs.update(m->t, st, m->h->cbs.arg);
}

/* ---- Interpreting results ---- */

static bool healthy_result(const struct checker *c,
                           const struct probe_result *r, char *why,
                           size_t whylen)
{
    if (!r->done) {
        snprintf(why, whylen, "%s", r->why);
        return false;
    }
    switch (c->kind) {
    case PROBE_COMMAND:
        if (r->exit_code == 0)
            return true;
        snprintf(why, whylen, "Command exited with status %d", r->exit_code);
        return false;
    case PROBE_HTTP:
        if (r->status_code >= 200 && r->status_code < 400)
            return true;
        snprintf(why, whylen, "Unexpected HTTP response code: %d",
                 r->status_code);
        return false;
    case PROBE_TCP:
        if (r->tcp_ok)
            return true;
        snprintf(why, whylen, "TCP connection failed");
        return false;
    }
    return false;
}

static void health_result(struct checker *c, const struct probe_result *r)
{
    struct monitor *m = c->mon;
    struct agent_task *t = m->t;
    char why[256];
    if (healthy_result(c, r, why, sizeof(why))) {
        log_debug("%s for task '%s' passed", c->name, t->task_id);
        if (c->initializing || c->failures > 0) {
            c->initializing = false;
            c->failures = 0;
            log_info("%s for task '%s' passed: task is healthy", c->name,
                     t->task_id);
            send_health(c, true);
        }
        c->failures = 0;
        return;
    }
    log_warn("%s for task '%s' failed: %s", c->name, t->task_id, why);
    if (c->initializing && c->grace_ns > 0 &&
        clock_monotonic_ns() - c->started_ns <= c->grace_ns) {
        log_info("Ignoring failure of %s for task '%s': still in grace period",
                 c->name, t->task_id);
        return;
    }
    c->failures++;
    log_warn("%s for task '%s' failed %u times consecutively", c->name,
             t->task_id, c->failures);
    send_health(c, false);
    if (c->failures >= c->max_failures) {
        log_warn("killing task '%s': %s failed %u times", t->task_id, c->name,
                 c->failures);
        m->killed_by_health = true;
        m->h->cbs.kill(t, m->h->cbs.arg);
    }
}

static void check_result(struct checker *c, const struct probe_result *r)
{
    struct monitor *m = c->mon;
    if (!r->done)
        log_warn("%s for task '%s' failed: %s", c->name, m->t->task_id, r->why);
    Mesos__V1__CheckStatusInfo *cs = check_status_of(c->kind, r);
    if (check_status_equal(cs, c->last)) {
        jpb_free(&cs->base);
        return;
    }
    if (c->last != NULL)
        jpb_free(&c->last->base);
    c->last = cs;
    Mesos__V1__TaskStatus *st = status_from_last(
        m->t, MESOS__V1__TASK_STATUS__REASON__REASON_TASK_CHECK_STATUS_UPDATED);
    if (st->check_status != NULL)
        jpb_free(&st->check_status->base);
    st->check_status =
        jpb_copy(&mesos__v1__check_status_info__descriptor, &cs->base);
    m->h->cbs.update(m->t, st, m->h->cbs.arg);
}

/* ---- Probes ---- */

/* End the probe under way (if any) without a result: close what it holds
 * and kill a command's processes. */
static void probe_abort(struct checker *c)
{
    if (c->io != NULL) {
        event_free(c->io);
        c->io = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    if (c->runner > 0) {
        kill(-c->runner, SIGKILL);
        c->runner = 0;
    }
    if (c->req != NULL) {
        http_client_cancel(c->req);
        c->req = NULL;
    }
    c->len = 0;
    c->running = false;
}

/* The probe ended with r: interpret it, then schedule the next one unless
 * the task no longer takes updates. */
static void probe_done(struct checker *c, const struct probe_result *r)
{
    event_del(c->timer);
    probe_abort(c);
    if (!may_update(c->mon->t))
        return; /* paused for good: killed, or no longer running */
    if (c->health)
        health_result(c, r);
    else
        check_result(c, r);
    if (may_update(c->mon->t))
        arm(c, c->interval_ns);
}

/* The probe could not complete: why, then detail. */
static void done_failed(struct checker *c, const char *why, const char *detail)
{
    struct probe_result r;
    memset(&r, 0, sizeof(r));
    snprintf(r.why, sizeof(r.why), "%s%s", why, detail);
    probe_done(c, &r);
}

/* COMMAND: the runner's report pipe. */
static void on_command_io(evutil_socket_t fd, short what, void *arg)
{
    struct checker *c = arg;
    (void)what;
    for (;;) {
        ssize_t n = read(fd, c->line + c->len, sizeof(c->line) - 1 - c->len);
        if (n > 0) {
            c->len += (size_t)n;
            if (c->len < sizeof(c->line) - 1)
                continue;
            n = 0; /* no report is this long: take it as the end */
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        break; /* EOF (the runner exited) or an error */
    }
    c->line[c->len] = '\0';
    c->runner = 0; /* gone: nothing left to kill */
    int status = 0;
    struct probe_result r;
    memset(&r, 0, sizeof(r));
    if (sscanf(c->line, "S %d", &status) != 1) {
        snprintf(r.why, sizeof(r.why), "Failed to reap the command process");
    } else if (WIFEXITED(status)) {
        r.done = true;
        r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        snprintf(r.why, sizeof(r.why), "Command terminated by signal %d",
                 WTERMSIG(status));
    } else {
        snprintf(r.why, sizeof(r.why), "Command ended with wait status %d",
                 status);
    }
    probe_done(c, &r);
}

/* Write "<tag> <n>\n" with no library call that may allocate (after a
 * fork). */
static void report_number(int fd, char tag, long n)
{
    char buf[32];
    size_t i = sizeof(buf);
    unsigned long u = n < 0 ? (unsigned long)-n : (unsigned long)n;
    buf[--i] = '\n';
    do {
        buf[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0 && i > 3);
    if (n < 0)
        buf[--i] = '-';
    buf[--i] = ' ';
    buf[--i] = tag;
    ssize_t w = write(fd, buf + i, sizeof(buf) - i);
    (void)w;
}

/* The runner's report pipe. */
#define RUNNER_REPORT_FD 3

/* In the runner: leave the agent's signal handlers and descriptors behind,
 * run the command and report its wait status. */
static void __attribute__((noreturn))
run_command(const struct checker *c, const char *sandbox, int report_fd)
{
    (void)setsid();
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (report_fd != RUNNER_REPORT_FD &&
        dup2(report_fd, RUNNER_REPORT_FD) != RUNNER_REPORT_FD)
        _exit(1);
    /* Not inherited by the command: only the runner may hold the pipe, so
     * that its exit is the pipe's end. */
    (void)fcntl(RUNNER_REPORT_FD, F_SETFD, FD_CLOEXEC);
    close_range(RUNNER_REPORT_FD + 1, ~0U, 0);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0)
        _exit(1);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
    if (devnull > RUNNER_REPORT_FD)
        close(devnull);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(sandbox) != 0)
            _exit(127);
        execvpe(c->cmd.file, c->cmd.argv, c->cmd.envp);
        _exit(127);
    }
    int status = 127 << 8;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    report_number(RUNNER_REPORT_FD, 'S', status);
    _exit(0);
}

static void start_command(struct checker *c)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        done_failed(c, "Failed to create a pipe: ", strerror(errno));
        return;
    }
    const char *sandbox = c->mon->t->sandbox;
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        /* The write end must stay open in the runner only, and blocking. */
        int fl = fcntl(p[1], F_GETFL);
        if (fl >= 0)
            (void)fcntl(p[1], F_SETFL, fl & ~O_NONBLOCK);
        pid_t runner = fork();
        if (runner == 0)
            run_command(c, sandbox, p[1]);
        /* Tell the parent the runner's pid, then go (to be reaped). */
        report_number(p[1], 'P', (long)runner);
        _exit(runner > 0 ? 0 : 1);
    }
    close(p[1]);
    if (child < 0) {
        close(p[0]);
        done_failed(c, "Failed to fork: ", strerror(errno));
        return;
    }
    int st;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR)
        ;
    /* The child wrote the runner's pid before it exited. */
    char buf[32];
    ssize_t n = read(p[0], buf, sizeof(buf) - 1);
    long runner = 0;
    size_t used = 0;
    if (n > 0) {
        buf[n] = '\0';
        char *nl = strchr(buf, '\n');
        if (nl != NULL && sscanf(buf, "P %ld", &runner) == 1) {
            used = (size_t)(nl + 1 - buf);
            /* Anything after it is the start of the runner's report. */
            c->len = (size_t)n - used;
            memcpy(c->line, buf + used, c->len);
        }
    }
    if (runner <= 0) {
        close(p[0]);
        done_failed(c, "Failed to launch the ", c->name);
        return;
    }
    c->runner = (pid_t)runner;
    c->fd = p[0];
    c->io = event_new(c->mon->h->base, c->fd, EV_READ | EV_PERSIST,
                      on_command_io, c);
    event_add(c->io, NULL);
}

/* Redirects an HTTP probe follows, as curl's --max-redirs default. */
#define MAX_HOPS 50

static void start_http(struct checker *c);

/* The host and port of a URL's authority a (al bytes: "host", "host:port",
 * "[v6]" or "[v6]:port"); port dflt when absent. 0, or -1. */
static int parse_authority(const char *a, size_t al, uint16_t dflt, char **host,
                           uint16_t *port)
{
    const char *end = a + al, *colon = NULL, *h = a, *he;
    if (al > 0 && a[0] == '[') {
        const char *rb = memchr(a, ']', al);
        if (rb == NULL)
            return -1;
        h = a + 1;
        he = rb;
        if (rb + 1 < end) {
            if (rb[1] != ':')
                return -1;
            colon = rb + 1;
        }
    } else {
        colon = memchr(a, ':', al);
        he = colon != NULL ? colon : end;
    }
    if (he == h)
        return -1;
    *port = dflt;
    if (colon != NULL) {
        unsigned long v = 0;
        const char *d = colon + 1;
        if (d == end)
            return -1;
        for (; d < end; d++) {
            if (*d < '0' || *d > '9' ||
                (v = v * 10 + (unsigned)(*d - '0')) > 65535)
                return -1;
        }
        if (v == 0)
            return -1;
        *port = (uint16_t)v;
    }
    *host = xasprintf("%.*s", (int)(he - h), h);
    return 0;
}

/* Aim c's next request where a redirect's Location sends it, as curl -L
 * does: an absolute URL (http or https, any host), a path on the same
 * server, or a path relative to the current one. 0, or -1 when loc is none
 * of these (the 3xx then stands as the result). */
static int follow_location(struct checker *c, const char *loc)
{
    const char *cur = c->hop_path != NULL ? c->hop_path : c->path;
    char *path;
    size_t ll = strcspn(loc, "#"); /* a fragment is never sent */
    if (strncasecmp(loc, "http://", 7) == 0 ||
        strncasecmp(loc, "https://", 8) == 0) {
        bool https = loc[4] == 's' || loc[4] == 'S';
        const char *a = loc + (https ? 8 : 7);
        size_t al = strcspn(a, "/?#");
        char *host;
        uint16_t port;
        if (parse_authority(a, al, https ? 443 : 80, &host, &port) != 0)
            return -1;
        const char *rest = a + al;
        size_t rl = strcspn(rest, "#");
        path = rest[0] == '/' ? xasprintf("%.*s", (int)rl, rest)
                              : xasprintf("/%.*s", (int)rl, rest);
        free(c->hop_host);
        c->hop_host = host;
        c->hop_port = port;
        c->hop_https = https;
    } else if (loc[0] == '/' && loc[1] != '/') {
        path = xasprintf("%.*s", (int)ll, loc);
    } else if (ll > 0 && loc[0] != '/' && strchr(loc, ':') == NULL) {
        size_t dl = strcspn(cur, "?");
        while (dl > 0 && cur[dl - 1] != '/')
            dl--;
        path = xasprintf("%.*s%.*s", (int)dl, cur, (int)ll, loc);
    } else {
        return -1; /* "//host/..." or another scheme */
    }
    free(c->hop_path);
    c->hop_path = path;
    return 0;
}

static bool is_redirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 ||
           status == 308;
}

/* HTTP: the response (or the failure). */
static void on_http_done(const struct http_client_response *resp, void *arg)
{
    struct checker *c = arg;
    c->req = NULL; /* dead after this callback */
    struct probe_result r;
    memset(&r, 0, sizeof(r));
    int status = http_client_status(resp);
    const char *loc = http_client_header(resp, "Location");
    if (is_redirect(status) && loc != NULL) {
        if (c->hops >= MAX_HOPS) {
            snprintf(r.why, sizeof(r.why),
                     "HTTP request failed: more than %d redirects", MAX_HOPS);
            probe_done(c, &r);
            return;
        }
        if (follow_location(c, loc) == 0) {
            c->hops++;
            start_http(c);
            return;
        }
    }
    if (status > 0) {
        r.done = true;
        r.status_code = status;
    } else {
        const char *e = http_client_error(resp);
        snprintf(r.why, sizeof(r.why), "HTTP request failed: %s",
                 e != NULL ? e : "no response");
    }
    probe_done(c, &r);
}

static void start_http(struct checker *c)
{
    struct http_client_options o;
    memset(&o, 0, sizeof(o));
    /* The task's server, in the check's scheme whatever the agent's own
     * TLS; https verifies nothing, as Mesos's curl -k. After a redirect,
     * wherever it pointed. */
    bool https = c->hop_host != NULL ? c->hop_https : c->https;
    o.tls = https ? HTTP_CLIENT_TLS_INSECURE : HTTP_CLIENT_TLS_OFF;
    o.host = c->hop_host != NULL ? c->hop_host : c->ipv6 ? "::1" : "127.0.0.1";
    o.port = c->hop_host != NULL ? c->hop_port : c->port;
    o.method = HTTP_GET;
    o.path = c->hop_path != NULL ? c->hop_path : c->path;
    o.max_body = HTTP_MAX_BODY;
    /* Our own timer enforces the timeout; this only bounds the request
     * should that timer be off (timeout 0). */
    o.timeout_ms = 0;
    c->req = http_client_request(c->mon->h->base, &o, on_http_done, c);
}

/* TCP: the socket became writable (connected or failed). */
static void on_tcp_io(evutil_socket_t fd, short what, void *arg)
{
    struct checker *c = arg;
    (void)what;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    struct probe_result r;
    memset(&r, 0, sizeof(r));
    r.done = true;
    r.tcp_ok = err == 0;
    if (err != 0)
        log_debug("%s for task '%s': connect: %s", c->name, c->mon->t->task_id,
                  strerror(err));
    probe_done(c, &r);
}

static void start_tcp(struct checker *c)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof(ss));
    if (c->ipv6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(c->port);
        s6->sin6_addr = in6addr_loopback;
        sl = sizeof(*s6);
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(c->port);
        s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof(*s4);
    }
    int fd =
        socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        done_failed(c, "Failed to create a socket: ", strerror(errno));
        return;
    }
    c->fd = fd;
    if (connect(fd, (struct sockaddr *)&ss, sl) != 0 && errno != EINPROGRESS) {
        /* Refused at once: a completed probe that failed. */
        struct probe_result r;
        memset(&r, 0, sizeof(r));
        r.done = true;
        r.tcp_ok = false;
        probe_done(c, &r);
        return;
    }
    /* Connected at once or in progress: writable tells either way. */
    c->io = event_new(c->mon->h->base, fd, EV_WRITE, on_tcp_io, c);
    event_add(c->io, NULL);
}

/* The timer: start a probe, or end one that ran out of time. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct checker *c = arg;
    (void)fd;
    (void)what;
    if (c->running) {
        char t[64];
        snprintf(t, sizeof(t), "%.3gs", (double)c->timeout_ns / 1e9);
        done_failed(c,
                    c->kind == PROBE_COMMAND ? "Command timed out after "
                                             : "Timed out after ",
                    t);
        return;
    }
    if (!may_update(c->mon->t))
        return; /* paused for good */
    c->running = true;
    if (c->timeout_ns > 0)
        arm(c, c->timeout_ns);
    switch (c->kind) {
    case PROBE_COMMAND:
        start_command(c);
        break;
    case PROBE_HTTP:
        /* Each probe starts at the check's own URL. */
        c->hops = 0;
        free(c->hop_host);
        free(c->hop_path);
        c->hop_host = c->hop_path = NULL;
        start_http(c);
        break;
    case PROBE_TCP:
        start_tcp(c);
        break;
    }
}

/* ---- Checkers ---- */

static void checker_free(struct checker *c)
{
    if (c == NULL)
        return;
    probe_abort(c);
    if (c->timer != NULL)
        event_free(c->timer);
    agent_command_clear(&c->cmd);
    free(c->path);
    free(c->hop_host);
    free(c->hop_path);
    if (c->last != NULL)
        jpb_free(&c->last->base);
    free(c);
}

static const char *name_of(bool health, enum probe_kind kind)
{
    static const char *const names[2][4] = {
        {"check", "COMMAND check", "HTTP check", "TCP check"},
        {"health check", "COMMAND health check", "HTTP health check",
         "TCP health check"},
    };
    return names[health ? 1 : 0][(int)kind <= 3 ? (int)kind : 0];
}

static struct checker *checker_new(struct monitor *m, bool health,
                                   enum probe_kind kind)
{
    struct checker *c = xcalloc(1, sizeof(*c));
    c->mon = m;
    c->health = health;
    c->kind = kind;
    c->name = name_of(health, kind);
    c->fd = -1;
    c->started_ns = clock_monotonic_ns();
    c->initializing = true;
    c->timer = event_new(m->h->base, -1, 0, on_timer, c);
    return c;
}

static int build_command(struct checker *c, const Mesos__V1__CommandInfo *ci,
                         const char *agent_id)
{
    const struct agent_task *t = c->mon->t;
    /* The task's own environment as its command got it (task_env.h);
     * without the agent's --executor_environment_variables, which the
     * probe has no copy of. */
    struct agent_task_env_ids ids = {
        .sandbox = t->sandbox,
        .framework_id = t->framework_id,
        .executor_id = t->task_id,
        .task_id = t->task_id,
        .agent_id = agent_id,
    };
    char err[256];
    if (ci == NULL || agent_command_build(ci, environ, NULL, &ids, &c->cmd, err,
                                          sizeof(err)) != 0) {
        log_warn("%s of task '%s' not started: %s", c->name, t->task_id,
                 ci == NULL ? "no command" : err);
        return -1;
    }
    return 0;
}

static char *path_of(const char *path)
{
    return xstrdup(path != NULL && path[0] != '\0' ? path : "/");
}

static struct checker *health_checker(struct monitor *m,
                                      const Mesos__V1__HealthCheck *hc,
                                      const char *agent_id)
{
    if (!hc->has_type || hc->type < 1 || hc->type > 3)
        return NULL;
    struct checker *c = checker_new(m, true, (enum probe_kind)hc->type);
    c->delay_ns =
        secs_ns(hc->has_delay_seconds, hc->delay_seconds, DEFAULT_DELAY_SECS);
    c->interval_ns = secs_ns(hc->has_interval_seconds, hc->interval_seconds,
                             DEFAULT_INTERVAL_SECS);
    c->timeout_ns = secs_ns(hc->has_timeout_seconds, hc->timeout_seconds,
                            DEFAULT_TIMEOUT_SECS);
    c->grace_ns = secs_ns(hc->has_grace_period_seconds,
                          hc->grace_period_seconds, DEFAULT_GRACE_SECS);
    c->max_failures = hc->has_consecutive_failures ? hc->consecutive_failures
                                                   : DEFAULT_FAILURES;
    bool ok = true;
    switch (c->kind) {
    case PROBE_COMMAND:
        ok = build_command(c, hc->command, agent_id) == 0;
        break;
    case PROBE_HTTP:
        ok = hc->http != NULL;
        if (ok) {
            c->port = (uint16_t)hc->http->port;
            c->path = path_of(hc->http->path);
            c->https = hc->http->scheme != NULL &&
                       strcmp(hc->http->scheme, "https") == 0;
            c->ipv6 =
                hc->http->has_protocol &&
                hc->http->protocol == MESOS__V1__NETWORK_INFO__PROTOCOL__IPv6;
        }
        break;
    case PROBE_TCP:
        ok = hc->tcp != NULL;
        if (ok) {
            c->port = (uint16_t)hc->tcp->port;
            c->ipv6 =
                hc->tcp->has_protocol &&
                hc->tcp->protocol == MESOS__V1__NETWORK_INFO__PROTOCOL__IPv6;
        }
        break;
    }
    if (!ok) {
        checker_free(c);
        return NULL;
    }
    return c;
}

static struct checker *check_checker(struct monitor *m,
                                     const Mesos__V1__CheckInfo *ci,
                                     const char *agent_id)
{
    if (!ci->has_type || ci->type < 1 || ci->type > 3)
        return NULL;
    struct checker *c = checker_new(m, false, (enum probe_kind)ci->type);
    c->delay_ns =
        secs_ns(ci->has_delay_seconds, ci->delay_seconds, DEFAULT_DELAY_SECS);
    c->interval_ns = secs_ns(ci->has_interval_seconds, ci->interval_seconds,
                             DEFAULT_INTERVAL_SECS);
    c->timeout_ns = secs_ns(ci->has_timeout_seconds, ci->timeout_seconds,
                            DEFAULT_TIMEOUT_SECS);
    c->last = check_status_empty(c->kind);
    bool ok = true;
    switch (c->kind) {
    case PROBE_COMMAND:
        ok = ci->command != NULL &&
             build_command(c, ci->command->command, agent_id) == 0;
        break;
    case PROBE_HTTP:
        ok = ci->http != NULL;
        if (ok) {
            c->port = (uint16_t)ci->http->port;
            c->path = path_of(ci->http->path);
        }
        break;
    case PROBE_TCP:
        ok = ci->tcp != NULL;
        if (ok)
            c->port = (uint16_t)ci->tcp->port;
        break;
    }
    if (!ok) {
        checker_free(c);
        return NULL;
    }
    return c;
}

static void checker_go(struct checker *c)
{
    if (c->interval_ns < MIN_INTERVAL_NS)
        c->interval_ns = MIN_INTERVAL_NS;
    arm(c, c->delay_ns);
}

/* ---- The table ---- */

static void monitor_free(void *p)
{
    struct monitor *m = p;
    checker_free(m->health);
    checker_free(m->check);
    free(m->key);
    free(m);
}

struct agent_health *agent_health_new(struct event_base *base,
                                      const struct agent_health_cbs *cbs)
{
    struct agent_health *h = xcalloc(1, sizeof(*h));
    h->base = base;
    h->cbs = *cbs;
    h->monitors = hmap_new();
    return h;
}

void agent_health_free(struct agent_health *h)
{
    if (h == NULL)
        return;
    hmap_free(h->monitors, monitor_free);
    free(h);
}

void agent_health_start(struct agent_health *h, struct agent_task *t,
                        const char *agent_id)
{
    const Mesos__V1__TaskInfo *ti = t->info;
    if (ti == NULL || (ti->health_check == NULL && ti->check == NULL) ||
        t->sandbox == NULL)
        return;
    char *key = key_of(t->framework_id, t->task_id);
    if (hmap_get(h->monitors, key) != NULL) {
        free(key);
        return;
    }
    struct monitor *m = xcalloc(1, sizeof(*m));
    m->h = h;
    m->t = t;
    m->key = key;
    const Mesos__V1__TaskStatus *last = t->last_status;
    if (ti->health_check != NULL) {
        m->health = health_checker(m, ti->health_check, agent_id);
        if (m->health != NULL && last != NULL && last->has_healthy) {
            /* Re-attached: the grace period is over, and a success
             * reports only after a reported failure. */
            m->health->initializing = false;
            m->health->failures = last->healthy ? 0 : 1;
        }
    }
    if (ti->check != NULL) {
        m->check = check_checker(m, ti->check, agent_id);
        if (m->check != NULL && last != NULL && last->check_status != NULL &&
            last->check_status->has_type &&
            (int)last->check_status->type == (int)m->check->kind) {
            jpb_free(&m->check->last->base);
            m->check->last = jpb_copy(&mesos__v1__check_status_info__descriptor,
                                      &last->check_status->base);
        }
    }
    if (m->health == NULL && m->check == NULL) {
        monitor_free(m);
        return;
    }
    hmap_put(h->monitors, m->key, m);
    if (m->health != NULL)
        checker_go(m->health);
    if (m->check != NULL)
        checker_go(m->check);
    log_info("task '%s' of framework %s: %s%s%s started", t->task_id,
             t->framework_id, m->health ? m->health->name : "",
             m->health && m->check ? " and " : "",
             m->check ? m->check->name : "");
}

void agent_health_stop(struct agent_health *h, const struct agent_task *t)
{
    char *key = key_of(t->framework_id, t->task_id);
    struct monitor *m = hmap_del(h->monitors, key);
    free(key);
    if (m != NULL)
        monitor_free(m);
}

void agent_health_decorate(const struct agent_health *h,
                           const struct agent_task *t,
                           Mesos__V1__TaskStatus *st)
{
    const Mesos__V1__TaskInfo *ti = t->info;
    if (ti != NULL && ti->check != NULL && ti->check->has_type &&
        ti->check->type >= 1 && ti->check->type <= 3 &&
        st->check_status == NULL)
        st->check_status = check_status_empty((enum probe_kind)ti->check->type);
    if (!task_state_is_terminal(st->state))
        return;
    char *key = key_of(t->framework_id, t->task_id);
    const struct monitor *m = hmap_get(h->monitors, key);
    free(key);
    if (m != NULL && m->killed_by_health) {
        st->has_healthy = 1;
        st->healthy = false;
    }
}

size_t agent_health_count(const struct agent_health *h)
{
    return hmap_count(h->monitors);
}
