/*
 * Task table and process lifecycle (see tasks.h).
 */
#include "agent/tasks.h"

#include "agent/pb_copy.h"
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
#include <sys/wait.h>
#include <unistd.h>

struct agent_tasks {
    struct event_base *base;
    struct agent_tasks_cbs cbs;
    struct hmap *tasks; /* key(framework_id, task_id) -> struct agent_task */
    struct event *sigchld;
};

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

static void task_free(void *p)
{
    struct agent_task *t = p;
    close_report(t);
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
    if (t->phase != AGENT_TASK_LAUNCHING)
        return;
    t->task_pid = r.pid;
    t->phase = AGENT_TASK_RUNNING;
    log_info("task %s of framework %s runs as pid %d (supervisor %d)",
             t->task_id, t->framework_id, (int)r.pid, (int)t->sup_pid);
    if (t->kill_requested && kill(-t->task_pid, SIGTERM) != 0 && errno != ESRCH)
        log_warn("task %s: SIGTERM: %s", t->task_id, strerror(errno));
    if (t->table->cbs.on_running != NULL)
        t->table->cbs.on_running(t, t->table->cbs.arg);
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
    if (t->kill_timer != NULL)
        event_del(t->kill_timer);
    t->phase = AGENT_TASK_ENDED;

    struct agent_task_end end;
    memset(&end, 0, sizeof(end));
    int e = t->launch_errno;
    int ws = 0;
    int rc =
        t->sandbox != NULL ? agent_supervisor_read_exit(t->sandbox, &ws) : -1;
    if (e != 0) {
        end.launch_failed = true;
        snprintf(end.message, sizeof(end.message),
                 "Failed to launch the command: %s", strerror(e));
    } else if (rc == 1) {
        end.has_status = true;
        end.wait_status = ws;
    } else {
        snprintf(end.message, sizeof(end.message),
                 "The task's supervisor ended (wait status %d) without "
                 "recording the task's exit status",
                 sup_status);
    }
    log_info("task %s of framework %s ended (supervisor %d reaped)", t->task_id,
             t->framework_id, (int)t->sup_pid);
    if (ts->cbs.on_ended != NULL)
        ts->cbs.on_ended(t, &end, ts->cbs.arg);
}

static struct agent_task *find_by_sup(const struct agent_tasks *ts, pid_t pid)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(ts->tasks, &pos, NULL, &val)) {
        struct agent_task *t = val;
        if (t->sup_pid == pid && t->phase != AGENT_TASK_ENDED &&
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
        kill(t->sup_pid, SIGKILL);
    }
}

struct agent_tasks *agent_tasks_new(struct event_base *base,
                                    const struct agent_tasks_cbs *cbs)
{
    struct agent_tasks *ts = xcalloc(1, sizeof(*ts));
    ts->base = base;
    ts->cbs = *cbs;
    ts->tasks = hmap_new();
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
    t->info = (Mesos__V1__TaskInfo *)agent_pb_copy(&info->base);
    t->state = MESOS__V1__TASK_STATE__TASK_STAGING;
    t->phase = AGENT_TASK_NEW;
    t->report_fd = -1;
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
