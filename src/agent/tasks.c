/*
 * Task table and process lifecycle (see tasks.h).
 */
#include "agent/tasks.h"

#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct agent_tasks {
    struct event_base *base;
    struct agent_tasks_cbs cbs;
    struct hmap *tasks; /* key(framework_id, task_id) -> struct agent_task */
    struct event *sigchld;
    struct event *poll_timer; /* adopted tasks to check (AGENT_TASKS_POLL_MS) */
    bool polling;             /* poll_timer is armed */
};

/* pidfd_open and pidfd_send_signal through syscall(): glibc wraps them only
 * from 2.36, and the kernel may lack them (ENOSYS: the table polls). */
static int pidfd_open_(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

static int pidfd_signal_(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
    (void)pidfd;
    (void)sig;
    errno = ENOSYS;
    return -1;
#endif
}

static char *task_key(const char *fw, const char *task)
{
    return xasprintf("%zu:%s%s", strlen(fw), fw, task);
}

static void close_report(struct agent_task *t)
{
    if (t->report_ev != NULL) {
        event_free(t->report_ev);
        t->report_ev = NULL;
    }
    if (t->report_fd >= 0) {
        close(t->report_fd);
        t->report_fd = -1;
    }
}

static void close_pidfd(struct agent_task *t)
{
    if (t->exit_ev != NULL) {
        event_free(t->exit_ev);
        t->exit_ev = NULL;
    }
    if (t->pidfd >= 0) {
        close(t->pidfd);
        t->pidfd = -1;
    }
}

static void task_free(void *p)
{
    struct agent_task *t = p;
    close_report(t);
    close_pidfd(t);
    if (t->kill_timer != NULL)
        event_free(t->kill_timer);
    if (t->info != NULL)
        jpb_free(&t->info->base);
    if (t->last_status != NULL)
        jpb_free(&t->last_status->base);
    free(t->states);
    free(t->sandbox);
    free(t->group);
    free(t->framework_id);
    free(t->task_id);
    free(t);
}

/* t's task exec'd as pid: RUNNING, and tell the owner. */
static void became_running(struct agent_task *t, pid_t pid)
{
    if (t->phase != AGENT_TASK_LAUNCHING)
        return;
    t->task_pid = pid;
    t->phase = AGENT_TASK_RUNNING;
    log_info("task %s of framework %s runs as pid %d (supervisor %d)",
             t->task_id, t->framework_id, (int)pid, (int)t->sup_pid);
    if (t->kill_requested && kill(-t->task_pid, SIGTERM) != 0 && errno != ESRCH)
        log_warn("task %s: SIGTERM: %s", t->task_id, strerror(errno));
    if (t->table->cbs.on_running != NULL)
        t->table->cbs.on_running(t, t->table->cbs.arg);
}

/* Signal t's supervisor: our child by pid; an adopted one through its
 * pidfd, or by pid only while /proc still shows it in the sandbox (its pid
 * may have been reused since). */
static void signal_supervisor(struct agent_task *t, int sig)
{
    if (t->sup_pid <= 0)
        return;
    if (!t->adopted) {
        kill(t->sup_pid, sig);
    } else if (t->pidfd >= 0) {
        if (pidfd_signal_(t->pidfd, sig) != 0 && errno != ESRCH)
            log_warn("task %s: signal to supervisor %d: %s", t->task_id,
                     (int)t->sup_pid, strerror(errno));
    } else if (t->sandbox != NULL &&
               agent_proc_runs_in(t->sup_pid, t->sandbox)) {
        kill(t->sup_pid, sig);
    }
}

/* Handle one report line of t's supervisor. */
static void handle_report_line(struct agent_task *t, const char *line)
{
    struct agent_sup_report r;
    if (agent_supervisor_parse_report(line, &r) != 0) {
        log_warn("task %s: unexpected supervisor report '%s'", t->task_id,
                 line);
        return;
    }
    if (!r.running) {
        /* Reported when the supervisor exits, right after. */
        t->launch_errno = r.exec_errno != 0 ? r.exec_errno : EIO;
        return;
    }
    became_running(t, r.pid);
}

/* Read what the supervisor wrote; returns 0 at EOF or error, 1 when the
 * pipe is just empty for now. */
static int drain_report(struct agent_task *t)
{
    if (t->report_fd < 0)
        return 0;
    for (;;) {
        char buf[256];
        ssize_t n = read(t->report_fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 1;
        if (n <= 0)
            return 0;
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] == '\n') {
                t->report_line[t->report_len] = '\0';
                t->report_len = 0;
                handle_report_line(t, t->report_line);
            } else if (t->report_len < sizeof(t->report_line) - 1) {
                t->report_line[t->report_len++] = buf[i];
            }
        }
    }
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
    struct agent_task *t = arg;
    (void)fd;
    (void)what;
    if (drain_report(t) == 0)
        close_report(t);
}

static void finish(struct agent_tasks *ts, struct agent_task *t, int sup_status)
{
    drain_report(t);
    close_report(t);
    close_pidfd(t);
    if (t->kill_timer != NULL)
        event_del(t->kill_timer);
    t->phase = AGENT_TASK_ENDED;

    struct agent_task_end end;
    memset(&end, 0, sizeof(end));
    int e = t->launch_errno;
    int ws = 0;
    int rc =
        t->sandbox != NULL ? agent_supervisor_read_exit(t->sandbox, &ws) : -1;
    char why[sizeof(end.message) - 32];
    if (e != 0 && t->sandbox != NULL &&
        agent_supervisor_read_launch_error(t->sandbox, why, sizeof(why)) == 1) {
        /* The fetcher or the user switch failed: its reason. */
        end.launch_failed = true;
        snprintf(end.message, sizeof(end.message),
                 "Failed to launch container: %s", why);
    } else if (e != 0) {
        end.launch_failed = true;
        snprintf(end.message, sizeof(end.message),
                 "Failed to launch the command: %s", strerror(e));
    } else if (rc == 1) {
        end.has_status = true;
        end.wait_status = ws;
    } else if (t->adopted) {
        snprintf(end.message, sizeof(end.message),
                 "The task's supervisor ended without recording the task's "
                 "exit status");
    } else {
        snprintf(end.message, sizeof(end.message),
                 "The task's supervisor ended (wait status %d) without "
                 "recording the task's exit status",
                 sup_status);
    }
    log_info("task %s of framework %s ended (supervisor %d %s)", t->task_id,
             t->framework_id, (int)t->sup_pid, t->adopted ? "gone" : "reaped");
    if (ts->cbs.on_ended != NULL)
        ts->cbs.on_ended(t, &end, ts->cbs.arg);
}

static struct agent_task *find_by_sup(const struct agent_tasks *ts, pid_t pid)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ts->tasks, &pos, NULL, &val)) {
        struct agent_task *t = val;
        /* An adopted supervisor is not our child: a child of ours may
         * have its pid after it exited. */
        if (t->sup_pid == pid && !t->adopted && t->phase != AGENT_TASK_ENDED &&
            t->phase != AGENT_TASK_NEW)
            return t;
    }
    return NULL;
}

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
    struct agent_tasks *ts = arg;
    (void)sig;
    (void)what;
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            break;
        struct agent_task *t = find_by_sup(ts, pid);
        if (t == NULL) {
            log_debug("reaped process %d (not a supervisor)", (int)pid);
            continue;
        }
        finish(ts, t, status);
    }
}

static void on_kill_timer(evutil_socket_t fd, short what, void *arg)
{
    struct agent_task *t = arg;
    (void)fd;
    (void)what;
    if (t->phase == AGENT_TASK_RUNNING && t->task_pid > 0) {
        log_info("task %s: grace period over, sending SIGKILL", t->task_id);
        if (kill(-t->task_pid, SIGKILL) != 0 && errno != ESRCH)
            log_warn("task %s: SIGKILL: %s", t->task_id, strerror(errno));
    } else if (t->phase == AGENT_TASK_LAUNCHING && t->sup_pid > 0) {
        log_warn("task %s: still launching after the grace period; killing "
                 "its supervisor",
                 t->task_id);
        signal_supervisor(t, SIGKILL);
    }
}

/* An adopted supervisor's pidfd became readable: it exited. */
static void on_pidfd_exit(evutil_socket_t fd, short what, void *arg)
{
    struct agent_task *t = arg;
    (void)fd;
    (void)what;
    if (t->phase == AGENT_TASK_LAUNCHING || t->phase == AGENT_TASK_RUNNING)
        finish(t->table, t, -1);
}

static bool needs_poll(const struct agent_task *t)
{
    return t->adopted && (t->phase == AGENT_TASK_LAUNCHING ||
                          (t->phase == AGENT_TASK_RUNNING && t->pidfd < 0));
}

static void arm_poll(struct agent_tasks *ts)
{
    if (ts->polling)
        return;
    struct timeval tv = {0, AGENT_TASKS_POLL_MS * 1000};
    event_add(ts->poll_timer, &tv);
    ts->polling = true;
}

/* Check the adopted tasks: the exec of those still launching, the end of
 * those without a pidfd. */
static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    struct agent_tasks *ts = arg;
    (void)fd;
    (void)what;
    ts->polling = false;
    /* Callbacks may remove the task they are given (only that one), so
     * the candidates are collected first. */
    size_t n = hmap_count(ts->tasks), k = 0, pos = 0;
    struct agent_task **v = xcalloc(n ? n : 1, sizeof(*v));
    void *val;
    while (hmap_next(ts->tasks, &pos, NULL, &val))
        if (needs_poll(val))
            v[k++] = val;
    for (size_t i = 0; i < k; i++) {
        struct agent_task *t = v[i];
        pid_t pid;
        if (t->phase == AGENT_TASK_LAUNCHING && t->sandbox != NULL &&
            agent_supervisor_read_pid(t->sandbox, AGENT_TASK_PID_FILE, &pid) ==
                1)
            became_running(t, pid);
        if (t->pidfd < 0 &&
            (t->phase == AGENT_TASK_LAUNCHING ||
             t->phase == AGENT_TASK_RUNNING) &&
            (t->sandbox == NULL || !agent_proc_runs_in(t->sup_pid, t->sandbox)))
            finish(ts, t, -1);
    }
    free(v);
    pos = 0;
    while (hmap_next(ts->tasks, &pos, NULL, &val))
        if (needs_poll(val)) {
            arm_poll(ts);
            break;
        }
}

struct agent_tasks *agent_tasks_new(struct event_base *base,
                                    const struct agent_tasks_cbs *cbs)
{
    struct agent_tasks *ts = xcalloc(1, sizeof(*ts));
    ts->base = base;
    ts->cbs = *cbs;
    ts->tasks = hmap_new();
    ts->poll_timer = evtimer_new(base, on_poll, ts);
    ts->sigchld = evsignal_new(base, SIGCHLD, on_sigchld, ts);
    if (ts->sigchld == NULL || evsignal_add(ts->sigchld, NULL) != 0) {
        agent_tasks_free(ts);
        return NULL;
    }
    return ts;
}

void agent_tasks_free(struct agent_tasks *ts)
{
    if (ts == NULL)
        return;
    hmap_free(ts->tasks, task_free);
    if (ts->sigchld != NULL)
        event_free(ts->sigchld);
    if (ts->poll_timer != NULL)
        event_free(ts->poll_timer);
    free(ts);
}

struct agent_task *agent_tasks_add(struct agent_tasks *ts,
                                   const char *framework_id,
                                   const Mesos__V1__TaskInfo *info)
{
    char *key = task_key(framework_id, info->task_id->value);
    if (hmap_get(ts->tasks, key) != NULL) {
        free(key);
        return NULL;
    }
    struct agent_task *t = xcalloc(1, sizeof(*t));
    t->framework_id = xstrdup(framework_id);
    t->task_id = xstrdup(info->task_id->value);
    t->info = jpb_copy(&mesos__v1__task_info__descriptor, &info->base);
    t->state = MESOS__V1__TASK_STATE__TASK_STAGING;
    t->phase = AGENT_TASK_NEW;
    t->report_fd = -1;
    t->pidfd = -1;
    t->table = ts;
    t->kill_timer = evtimer_new(ts->base, on_kill_timer, t);
    hmap_put(ts->tasks, key, t);
    free(key);
    return t;
}

struct agent_task *agent_tasks_get(const struct agent_tasks *ts,
                                   const char *framework_id,
                                   const char *task_id)
{
    char *key = task_key(framework_id, task_id);
    struct agent_task *t = hmap_get(ts->tasks, key);
    free(key);
    return t;
}

void agent_tasks_remove(struct agent_tasks *ts, struct agent_task *t)
{
    char *key = task_key(t->framework_id, t->task_id);
    hmap_del(ts->tasks, key);
    free(key);
    task_free(t);
}

int agent_tasks_launch(struct agent_tasks *ts, struct agent_task *t,
                       const struct agent_launch *l, char *err, size_t errlen)
{
    pid_t pid;
    int fd;
    if (agent_supervisor_start(l, &pid, &fd, err, errlen) != 0)
        return -1;
    t->sup_pid = pid;
    t->report_fd = fd;
    t->report_len = 0;
    t->launch_errno = 0;
    t->phase = AGENT_TASK_LAUNCHING;
    t->report_ev = event_new(ts->base, fd, EV_READ | EV_PERSIST, on_report, t);
    if (t->report_ev != NULL)
        event_add(t->report_ev, NULL);
    log_info("task %s of framework %s: supervisor %d started in %s", t->task_id,
             t->framework_id, (int)pid, l->sandbox);
    return 0;
}

void agent_tasks_kill(struct agent_tasks *ts, struct agent_task *t,
                      int64_t grace_ns)
{
    (void)ts;
    if (t->phase == AGENT_TASK_NEW || t->phase == AGENT_TASK_ENDED)
        return;
    if (grace_ns < 0)
        grace_ns = 0;
    if (t->kill_requested && grace_ns >= t->grace_ns)
        return;
    bool first = !t->kill_requested;
    t->kill_requested = true;
    t->grace_ns = grace_ns;
    if (first && t->phase == AGENT_TASK_LAUNCHING)
        t->kill_during_launch = true;
    if (first && t->phase == AGENT_TASK_RUNNING) {
        log_info("task %s: sending SIGTERM to process group %d (grace "
                 "period %lld ms)",
                 t->task_id, (int)t->task_pid, (long long)(grace_ns / 1000000));
        if (kill(-t->task_pid, SIGTERM) != 0 && errno != ESRCH)
            log_warn("task %s: SIGTERM: %s", t->task_id, strerror(errno));
    }
    struct timeval tv = {(time_t)(grace_ns / 1000000000),
                         (suseconds_t)((grace_ns % 1000000000) / 1000)};
    event_add(t->kill_timer, &tv);
}

struct agent_task *agent_tasks_restore(struct agent_tasks *ts,
                                       const char *framework_id,
                                       const Mesos__V1__TaskInfo *info,
                                       const struct agent_task_restore *r)
{
    struct agent_task *t = agent_tasks_add(ts, framework_id, info);
    if (t == NULL)
        return NULL;
    if (r->sandbox != NULL)
        t->sandbox = xstrdup(r->sandbox);
    t->kill_during_launch = r->kill_during_launch;
    bool live =
        (r->phase == AGENT_TASK_LAUNCHING || r->phase == AGENT_TASK_RUNNING) &&
        r->sup_pid > 0 && t->sandbox != NULL;
    if (!live) {
        t->phase =
            r->phase == AGENT_TASK_NEW ? AGENT_TASK_NEW : AGENT_TASK_ENDED;
        t->kill_requested = r->kill_requested;
        t->grace_ns = r->kill_grace_ns;
        return t;
    }
    t->adopted = true;
    t->phase = r->phase;
    t->sup_pid = r->sup_pid;
    t->task_pid = r->phase == AGENT_TASK_RUNNING ? r->task_pid : 0;
    if (t->phase == AGENT_TASK_RUNNING && t->task_pid <= 0)
        t->phase = AGENT_TASK_LAUNCHING;
    /* The pidfd is opened before the check that the process is still the
     * supervisor: once open it names that process, whatever reuses the
     * pid later. */
    t->pidfd = pidfd_open_(t->sup_pid);
    int open_errno = errno;
    if (t->pidfd < 0 && open_errno != ESRCH)
        log_info("task %s of framework %s: supervisor %d is polled (no "
                 "pidfd: %s)",
                 t->task_id, framework_id, (int)t->sup_pid,
                 strerror(open_errno));
    if (t->pidfd >= 0 && !agent_proc_runs_in(t->sup_pid, t->sandbox)) {
        /* It ended (or the pid is another process's now): the pidfd is
         * readable, or of the wrong process; the poll finishes the task. */
        close(t->pidfd);
        t->pidfd = -1;
    }
    if (t->pidfd >= 0) {
        t->exit_ev = event_new(ts->base, t->pidfd, EV_READ, on_pidfd_exit, t);
        if (t->exit_ev == NULL || event_add(t->exit_ev, NULL) != 0)
            close_pidfd(t);
    }
    log_info("task %s of framework %s: re-attached to supervisor %d (task "
             "pid %d)",
             t->task_id, framework_id, (int)t->sup_pid, (int)t->task_pid);
    if (r->kill_requested) {
        agent_tasks_kill(ts, t, r->kill_grace_ns);
        t->kill_during_launch = t->kill_during_launch || r->kill_during_launch;
    }
    if (needs_poll(t))
        arm_poll(ts);
    return t;
}

void agent_tasks_kill_now(struct agent_tasks *ts, struct agent_task *t)
{
    (void)ts;
    if (t->phase == AGENT_TASK_RUNNING && t->task_pid > 0)
        kill(-t->task_pid, SIGKILL);
    if (t->phase == AGENT_TASK_LAUNCHING || t->phase == AGENT_TASK_RUNNING)
        signal_supervisor(t, SIGKILL);
}

struct agent_task *agent_tasks_next(const struct agent_tasks *ts, size_t *pos)
{
    void *val;
    if (hmap_next(ts->tasks, pos, NULL, &val))
        return val;
    return NULL;
}

size_t agent_tasks_count(const struct agent_tasks *ts)
{
    return hmap_count(ts->tasks);
}

size_t agent_tasks_live(const struct agent_tasks *ts)
{
    size_t n = 0, pos = 0;
    void *val;
    while (hmap_next(ts->tasks, &pos, NULL, &val)) {
        const struct agent_task *t = val;
        if (t->phase == AGENT_TASK_LAUNCHING || t->phase == AGENT_TASK_RUNNING)
            n++;
    }
    return n;
}

void agent_task_note_state(struct agent_task *t, Mesos__V1__TaskState s,
                           double timestamp)
{
    t->states = xreallocarray(t->states, t->nstates + 1, sizeof(*t->states));
    t->states[t->nstates].state = s;
    t->states[t->nstates].timestamp = timestamp;
    t->nstates++;
}
