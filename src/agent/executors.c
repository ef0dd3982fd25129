/*
 * Custom executors: launching, the event stream, timeouts, shutdown, the
 * checkpoint and re-attachment (executors.h).
 */
#include "agent/executors.h"

#include "agent/executor_auth.h"

#include "agent/checkpoint.h"
#include "agent/task_launch.h"
#include "agent/supervisor.h"
#include "common/clock.h"
#include "common/fs.h"
#include "common/hmap.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Largest executor checkpoint file read back. */
#define CKPT_MAX ((size_t)1 << 20)

enum exec_phase {
    EXEC_REGISTERING, /* launched (or re-attached), not subscribed yet */
    EXEC_RUNNING,     /* subscribed: has a stream */
    EXEC_TERMINATING, /* shutting down: SHUTDOWN sent, signals to follow */
};

/* Work waiting for the executor to subscribe: a task or a task group. */
struct queued {
    Mesos__V1__TaskInfo *task;       /* owned, or NULL */
    Mesos__V1__TaskGroupInfo *group; /* owned, or NULL */
};

struct exec {
    struct agent_execs *x;
    char *key; /* "<fw>\n<ex>" */
    char *fw;
    char *ex;
    Mesos__V1__ExecutorInfo *info; /* owned, framework_id set */
    Mesos__V1__FrameworkInfo *fwi; /* owned */
    char *sandbox;                 /* run directory */
    enum exec_phase phase;
    bool ever_subscribed;
    bool recovered; /* re-attached after a restart: not our child */
    pid_t sup_pid;  /* its supervisor */
    pid_t pid;      /* the executor (and its process group), 0 until known */
    struct http_stream *stream; /* RUNNING: the event stream */
    enum http_encoding enc;
    struct queued *queue;
    size_t nqueue;
    char **kills; /* task ids whose KILL waits for a subscription */
    size_t nkills;
    bool reg_timed_out;
    int signals_sent;         /* TERMINATING: 0, 1 (SIGTERM), 2 (KILL) */
    struct event *reg_timer;  /* registration timeout */
    struct event *term_timer; /* TERMINATING: next signal */
};

struct agent_execs {
    struct event_base *base;
    struct agent_execs_config cfg;
    char *work_dir;
    char *endpoint;
    struct agent_execs_cbs cbs;
    struct hmap *execs;               /* key -> struct exec */
    Mesos__V1__AgentInfo *agent_info; /* owned, NULL until known */
    struct event *poll_timer;
    struct event *heartbeat_timer;
};

static char *exec_key(const char *fw, const char *ex)
{
    return xasprintf("%s\n%s", fw, ex);
}

static struct exec *find(const struct agent_execs *x, const char *fw,
                         const char *ex)
{
    char *k = exec_key(fw, ex);
    struct exec *e = hmap_get(x->execs, k);
    free(k);
    return e;
}

static void queued_clear(struct queued *q)
{
    if (q->task != NULL)
        jpb_free(&q->task->base);
    if (q->group != NULL)
        jpb_free(&q->group->base);
}

static void exec_free(void *p)
{
    struct exec *e = p;
    if (e->stream != NULL)
        http_stream_close(e->stream);
    for (size_t i = 0; i < e->nqueue; i++)
        queued_clear(&e->queue[i]);
    free(e->queue);
    for (size_t i = 0; i < e->nkills; i++)
        free(e->kills[i]);
    free(e->kills);
    if (e->reg_timer != NULL)
        event_free(e->reg_timer);
    if (e->term_timer != NULL)
        event_free(e->term_timer);
    jpb_free(&e->info->base);
    jpb_free(&e->fwi->base);
    free(e->sandbox);
    free(e->key);
    free(e->fw);
    free(e->ex);
    free(e);
}

/* ---- Checkpoint ---- */

static char *ckpt_dir(const struct agent_execs *x, const char *fw)
{
    return xasprintf("%s/meta/executors/%s", x->work_dir, fw);
}

static void ckpt_save(const struct exec *e)
{
    char err[512];
    char *dir = ckpt_dir(e->x, e->fw);
    if (fs_mkdirs(dir, err, sizeof(err)) != 0) {
        log_error("executor %s: checkpoint: %s", e->ex, err);
        free(dir);
        return;
    }
    json_t *j = json_object();
    json_object_set_new(j, "executor_info", jpb_to_json(&e->info->base));
    json_object_set_new(j, "framework_info", jpb_to_json(&e->fwi->base));
    json_object_set_new(j, "sandbox", json_string(e->sandbox));
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    char *path = xasprintf("%s/%s.json", dir, e->ex);
    if (text == NULL || fs_write_atomic(path, text, strlen(text)) != 0)
        log_error("executor %s: checkpoint %s: %s", e->ex, path,
                  strerror(errno));
    free(text);
    free(path);
    free(dir);
}

static void ckpt_remove(const struct exec *e)
{
    char *dir = ckpt_dir(e->x, e->fw);
    char *path = xasprintf("%s/%s.json", dir, e->ex);
    if (unlink(path) != 0 && errno != ENOENT)
        log_warn("executor %s: cannot remove %s: %s", e->ex, path,
                 strerror(errno));
    rmdir(dir); /* only once empty */
    free(path);
    free(dir);
}

/* ---- Events ---- */

static void send_event(struct exec *e, const Mesos__V1__Executor__Event *ev)
{
    if (e->stream == NULL)
        return;
    size_t len;
    uint8_t *buf = jpb_encode(&ev->base, (enum jpb_format)e->enc, &len);
    if (http_stream_send_record(e->stream, buf, len) != 0)
        log_warn("executor %s of framework %s: event stream closed", e->ex,
                 e->fw);
    free(buf);
}

static void send_launch(struct exec *e, const struct queued *q)
{
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    Mesos__V1__Executor__Event__Launch l =
        MESOS__V1__EXECUTOR__EVENT__LAUNCH__INIT;
    Mesos__V1__Executor__Event__LaunchGroup g =
        MESOS__V1__EXECUTOR__EVENT__LAUNCH_GROUP__INIT;
    ev.has_type = 1;
    if (q->task != NULL) {
        ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__LAUNCH;
        l.task = q->task;
        ev.launch = &l;
        log_info("executor %s of framework %s: LAUNCH task %s", e->ex, e->fw,
                 q->task->task_id->value);
    } else {
        ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__LAUNCH_GROUP;
        g.task_group = q->group;
        ev.launch_group = &g;
        log_info("executor %s of framework %s: LAUNCH_GROUP of %zu task(s)",
                 e->ex, e->fw, q->group->n_tasks);
    }
    send_event(e, &ev);
}

static void send_kill(struct exec *e, const char *task_id,
                      const Mesos__V1__KillPolicy *kp)
{
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__Executor__Event__Kill k = MESOS__V1__EXECUTOR__EVENT__KILL__INIT;
    k.task_id = &tid;
    k.kill_policy = (Mesos__V1__KillPolicy *)kp;
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    ev.has_type = 1;
    ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__KILL;
    ev.kill = &k;
    log_info("executor %s of framework %s: KILL task %s", e->ex, e->fw,
             task_id);
    send_event(e, &ev);
}

static void send_simple(struct exec *e, Mesos__V1__Executor__Event__Type t)
{
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    ev.has_type = 1;
    ev.type = t;
    send_event(e, &ev);
}

/* ---- Process life ---- */

static void drop_stream(struct exec *e)
{
    if (e->stream != NULL) {
        http_stream_close(e->stream);
        e->stream = NULL;
    }
}

/* Forget e: remove it from the map and its checkpoint, tell the owner. */
static void exec_ended(struct exec *e, const struct agent_exec_end *end)
{
    struct agent_execs *x = e->x;
    log_info("executor %s of framework %s ended: %s", e->ex, e->fw,
             end->message);
    hmap_del(x->execs, e->key);
    ckpt_remove(e);
    drop_stream(e);
    struct agent_exec_end as_ran = *end;
    as_ran.info = e->info;
    as_ran.framework = e->fwi;
    as_ran.sandbox = e->sandbox;
    if (x->cbs.on_exited != NULL)
        x->cbs.on_exited(e->fw, e->ex, &as_ran, x->cbs.arg);
    exec_free(e);
}

/* The executor's pid, from its supervisor's pid file once it exec'd. */
static pid_t exec_pid(struct exec *e)
{
    pid_t pid;
    if (e->pid == 0 && e->sandbox != NULL &&
        agent_supervisor_read_pid(e->sandbox, AGENT_TASK_PID_FILE, &pid) == 1)
        e->pid = pid;
    return e->pid;
}

/* Signal the executor's process group (or, before its exec, with SIGKILL,
 * its supervisor). */
static void signal_exec(struct exec *e, int sig)
{
    pid_t pid = exec_pid(e);
    if (pid > 0) {
        if (kill(-pid, sig) != 0 && errno != ESRCH)
            log_warn("executor %s: kill(%d): %s", e->ex, sig, strerror(errno));
    } else if (sig == SIGKILL && e->sup_pid > 0) {
        kill(e->sup_pid, SIGKILL);
    }
}

static bool sup_alive(const struct exec *e)
{
    if (e->sup_pid <= 0)
        return false;
    if (e->recovered)
        return agent_proc_runs_in(e->sup_pid, e->sandbox);
    /* Our child: reaped here, or already by the task table's SIGCHLD
     * handler (which reaps every child: ECHILD). */
    int st;
    pid_t r = waitpid(e->sup_pid, &st, WNOHANG);
    return r == 0 || (r < 0 && errno == EINTR);
}

static void check_exit(struct exec *e)
{
    if (sup_alive(e))
        return;
    struct agent_exec_end end;
    memset(&end, 0, sizeof(end));
    int ws;
    if (agent_supervisor_read_exit(e->sandbox, &ws) == 1) {
        end.has_status = true;
        end.wait_status = ws;
    }
    end.registration_timeout = e->reg_timed_out;
    end.shutdown = e->phase == EXEC_TERMINATING && !e->reg_timed_out;
    if (e->reg_timed_out)
        snprintf(end.message, sizeof(end.message),
                 "Executor did not register within the timeout");
    else if (end.has_status && WIFEXITED(ws))
        snprintf(end.message, sizeof(end.message),
                 "Executor terminated with exit status %d", WEXITSTATUS(ws));
    else if (end.has_status && WIFSIGNALED(ws))
        snprintf(end.message, sizeof(end.message),
                 "Executor terminated by signal %d (%s)", WTERMSIG(ws),
                 strsignal(WTERMSIG(ws)));
    else
        snprintf(end.message, sizeof(end.message), "Executor terminated");
    exec_ended(e, &end);
}

static void on_poll(evutil_socket_t fd, short what, void *arg)
{
    struct agent_execs *x = arg;
    (void)fd;
    (void)what;
    /* exec_ended removes entries: collect first. */
    size_t n = hmap_count(x->execs), k = 0, pos = 0;
    struct exec **v = xcalloc(n ? n : 1, sizeof(*v));
    void *val;
    while (hmap_next(x->execs, &pos, NULL, &val))
        v[k++] = val;
    for (size_t i = 0; i < k; i++)
        check_exit(v[i]);
    free(v);
    if (hmap_count(x->execs) > 0) {
        struct timeval tv = {0, (suseconds_t)(x->cfg.poll_ms * 1000)};
        event_add(x->poll_timer, &tv);
    }
}

static void arm_poll(struct agent_execs *x)
{
    if (evtimer_pending(x->poll_timer, NULL))
        return;
    struct timeval tv = {0, (suseconds_t)(x->cfg.poll_ms * 1000)};
    event_add(x->poll_timer, &tv);
}

static struct timeval tv_of(int64_t ns)
{
    struct timeval tv = {(time_t)(ns / CLOCK_NS_PER_SEC),
                         (suseconds_t)((ns % CLOCK_NS_PER_SEC) / 1000)};
    return tv;
}

static void on_term_timer(evutil_socket_t fd, short what, void *arg)
{
    struct exec *e = arg;
    (void)fd;
    (void)what;
    if (e->signals_sent == 0) {
        log_info("executor %s of framework %s: shutdown grace period over, "
                 "sending SIGTERM",
                 e->ex, e->fw);
        signal_exec(e, SIGTERM);
        e->signals_sent = 1;
        struct timeval tv = tv_of(e->x->cfg.shutdown_grace_ns);
        event_add(e->term_timer, &tv);
    } else {
        log_info("executor %s of framework %s: still alive, sending SIGKILL",
                 e->ex, e->fw);
        signal_exec(e, SIGKILL);
        e->signals_sent = 2;
    }
}

/* Begin shutting e down; with signal_now, skip the SHUTDOWN event and the
 * first grace period (an executor that never subscribed). */
static void begin_shutdown(struct exec *e, bool signal_now)
{
    if (e->phase == EXEC_TERMINATING)
        return;
    e->phase = EXEC_TERMINATING;
    event_del(e->reg_timer);
    if (e->stream != NULL && !signal_now) {
        log_info("executor %s of framework %s: SHUTDOWN", e->ex, e->fw);
        send_simple(e, MESOS__V1__EXECUTOR__EVENT__TYPE__SHUTDOWN);
        struct timeval tv = tv_of(e->x->cfg.shutdown_grace_ns);
        event_add(e->term_timer, &tv);
    } else {
        on_term_timer(-1, 0, e);
    }
}

static void on_reg_timer(evutil_socket_t fd, short what, void *arg)
{
    struct exec *e = arg;
    (void)fd;
    (void)what;
    if (e->phase != EXEC_REGISTERING)
        return;
    log_warn("executor %s of framework %s did not subscribe within %s: "
             "killing it",
             e->ex, e->fw,
             e->ever_subscribed ? "the re-registration timeout"
                                : "the registration timeout");
    e->reg_timed_out = true;
    begin_shutdown(e, true);
}

static void on_heartbeat(evutil_socket_t fd, short what, void *arg)
{
    struct agent_execs *x = arg;
    (void)fd;
    (void)what;
    size_t pos = 0;
    void *val;
    while (hmap_next(x->execs, &pos, NULL, &val)) {
        struct exec *e = val;
        if (e->phase == EXEC_RUNNING)
            send_simple(e, MESOS__V1__EXECUTOR__EVENT__TYPE__HEARTBEAT);
    }
}

static struct exec *exec_new(struct agent_execs *x, const char *fw,
                             const Mesos__V1__ExecutorInfo *ei,
                             const Mesos__V1__FrameworkInfo *fi)
{
    struct exec *e = xcalloc(1, sizeof(*e));
    e->x = x;
    e->fw = xstrdup(fw);
    e->ex = xstrdup(ei->executor_id->value);
    e->key = exec_key(e->fw, e->ex);
    /* The copy names its framework (SUBSCRIBED, /state, the master). */
    Mesos__V1__ExecutorInfo tmp = *ei;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    if (tmp.framework_id == NULL)
        tmp.framework_id = &fid;
    e->info = jpb_copy(&mesos__v1__executor_info__descriptor, &tmp.base);
    e->fwi = jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    e->reg_timer = evtimer_new(x->base, on_reg_timer, e);
    e->term_timer = evtimer_new(x->base, on_term_timer, e);
    return e;
}

static int touch(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    free(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* Make the sandbox and start the executor's supervisor. */
static int exec_launch(struct agent_execs *x, struct exec *e, char *err,
                       size_t errlen)
{
    const Mesos__V1__CommandInfo *cmd = e->info->command;
    if (cmd == NULL || cmd->value == NULL || cmd->value[0] == '\0') {
        snprintf(err, errlen, "executor %s has no command to run", e->ex);
        return -1;
    }
    char run[ID_UUID_SIZE];
    id_uuid_v4(run);
    const char *aid = x->agent_info != NULL && x->agent_info->id != NULL
                          ? x->agent_info->id->value
                          : "unregistered";
    e->sandbox = xasprintf("%s/slaves/%s/frameworks/%s/executors/%s/runs/%s",
                           x->work_dir, aid, e->fw, e->ex, run);
    if (fs_mkdirs(e->sandbox, err, errlen) != 0)
        return -1;
    if (touch(e->sandbox, "stdout") != 0 || touch(e->sandbox, "stderr") != 0) {
        snprintf(err, errlen, "cannot create the sandbox files in %s: %s",
                 e->sandbox, strerror(errno));
        return -1;
    }
    /* The user, URIs and environment a command task gets (task_launch.h),
     * with an executor's ids. */
    struct agent_launch_ctx ctx = {
        .lf = x->cfg.lf,
        .cache_dir = x->cfg.cache_dir,
        .agent_id = x->agent_info != NULL && x->agent_info->id != NULL
                        ? x->agent_info->id->value
                        : NULL,
        .agent_endpoint = x->endpoint,
        .agent_environ = environ,
    };
    /* Its token names it and this run (executor_auth.h). */
    char *token =
        x->cfg.exec_auth != NULL
            ? agent_exec_auth_token(x->cfg.exec_auth, e->fw, e->ex, run)
            : NULL;
    struct agent_launch_prep prep;
    if (agent_launch_prepare_executor(&ctx, e->fwi, e->info, e->sandbox,
                                      x->cfg.shutdown_grace_ns, &prep, err,
                                      errlen) != 0) {
        free(token);
        return -1;
    }
    if (token != NULL) {
        /* Last, so that no variable of the command replaces it. */
        struct agent_env env = {prep.cmd.envp, prep.cmd.nenv};
        agent_env_set(&env, AGENT_EXECUTOR_TOKEN_ENV, token);
        prep.cmd.envp = env.v;
        prep.cmd.nenv = env.n;
        explicit_bzero(token, strlen(token));
        free(token);
    }
    struct agent_launch l;
    agent_launch_prep_fill(&prep, e->sandbox, &l);
    int report_fd = -1;
    int rc = agent_supervisor_start(&l, &e->sup_pid, &report_fd, err, errlen);
    agent_launch_prep_clear(&prep);
    if (rc != 0)
        return -1;
    /* The pid files and the exit status file say what the pipe would. */
    close(report_fd);
    log_info("executor %s of framework %s launched (supervisor %d) in %s",
             e->ex, e->fw, (int)e->sup_pid, e->sandbox);
    return 0;
}

/* ---- Public ---- */

const struct agent_exec_auth *agent_execs_auth(const struct agent_execs *x)
{
    return x->cfg.exec_auth;
}

const char *agent_execs_container_id(const struct agent_execs *x,
                                     const char *fw, const char *ex)
{
    const struct exec *e = find(x, fw, ex);
    if (e == NULL)
        return NULL;
    /* As SUBSCRIBED's container_id: the sandbox's run directory. */
    const char *slash = e->sandbox != NULL ? strrchr(e->sandbox, '/') : NULL;
    return slash != NULL ? slash + 1 : e->ex;
}

struct agent_execs *agent_execs_new(struct event_base *base,
                                    const struct agent_execs_config *cfg,
                                    const struct agent_execs_cbs *cbs)
{
    struct agent_execs *x = xcalloc(1, sizeof(*x));
    x->base = base;
    x->cfg = *cfg;
    x->work_dir = xstrdup(cfg->work_dir);
    x->endpoint = xstrdup(cfg->agent_endpoint);
    x->cfg.work_dir = x->work_dir;
    x->cfg.agent_endpoint = x->endpoint;
    if (x->cfg.poll_ms <= 0)
        x->cfg.poll_ms = AGENT_EXECS_POLL_MS;
    x->cbs = *cbs;
    x->execs = hmap_new();
    x->poll_timer = evtimer_new(base, on_poll, x);
    if (cfg->heartbeat_interval_ns > 0) {
        x->heartbeat_timer = event_new(base, -1, EV_PERSIST, on_heartbeat, x);
        struct timeval tv = tv_of(cfg->heartbeat_interval_ns);
        event_add(x->heartbeat_timer, &tv);
    }
    return x;
}

void agent_execs_free(struct agent_execs *x)
{
    if (x == NULL)
        return;
    hmap_free(x->execs, exec_free);
    if (x->poll_timer != NULL)
        event_free(x->poll_timer);
    if (x->heartbeat_timer != NULL)
        event_free(x->heartbeat_timer);
    if (x->agent_info != NULL)
        jpb_free(&x->agent_info->base);
    free(x->work_dir);
    free(x->endpoint);
    free(x);
}

void agent_execs_set_agent(struct agent_execs *x,
                           const Mesos__V1__AgentInfo *info)
{
    if (x->agent_info != NULL)
        jpb_free(&x->agent_info->base);
    x->agent_info = jpb_copy(&mesos__v1__agent_info__descriptor, &info->base);
}

static bool same_command(const Mesos__V1__ExecutorInfo *a,
                         const Mesos__V1__ExecutorInfo *b)
{
    const char *va = a->command != NULL ? a->command->value : NULL;
    const char *vb = b->command != NULL ? b->command->value : NULL;
    if (va == NULL || vb == NULL)
        return va == vb;
    return strcmp(va, vb) == 0;
}

static void enqueue(struct exec *e, const Mesos__V1__TaskInfo *task,
                    const Mesos__V1__TaskGroupInfo *group)
{
    struct queued q = {0};
    if (task != NULL)
        q.task = jpb_copy(&mesos__v1__task_info__descriptor, &task->base);
    else
        q.group =
            jpb_copy(&mesos__v1__task_group_info__descriptor, &group->base);
    if (e->phase == EXEC_RUNNING) {
        send_launch(e, &q);
        queued_clear(&q);
        return;
    }
    e->queue = xreallocarray(e->queue, e->nqueue + 1, sizeof(*e->queue));
    e->queue[e->nqueue++] = q;
}

int agent_execs_run(struct agent_execs *x, const Mesos__V1__FrameworkInfo *fi,
                    const Mesos__V1__ExecutorInfo *ei,
                    const Mesos__V1__TaskInfo *task,
                    const Mesos__V1__TaskGroupInfo *group, char *err,
                    size_t errlen)
{
    const char *fw = fi->id->value;
    const char *ex = ei->executor_id->value;
    if (!agent_ckpt_id_is_safe(fw) || !agent_ckpt_id_is_safe(ex)) {
        snprintf(err, errlen,
                 "The framework or executor id cannot name a sandbox "
                 "directory");
        return -1;
    }
    struct exec *e = find(x, fw, ex);
    if (e != NULL) {
        if (e->phase == EXEC_TERMINATING) {
            snprintf(err, errlen, "Executor %s is terminating", ex);
            return -1;
        }
        if (!same_command(e->info, ei)) {
            snprintf(err, errlen,
                     "Executor %s runs already with another command", ex);
            return -1;
        }
        enqueue(e, task, group);
        return 0;
    }
    e = exec_new(x, fw, ei, fi);
    if (exec_launch(x, e, err, errlen) != 0) {
        exec_free(e);
        return -1;
    }
    hmap_put(x->execs, e->key, e);
    ckpt_save(e);
    struct timeval tv = tv_of(x->cfg.registration_timeout_ns);
    event_add(e->reg_timer, &tv);
    arm_poll(x);
    enqueue(e, task, group);
    return 0;
}

enum agent_execs_kill_result agent_execs_kill(struct agent_execs *x,
                                              const char *fw, const char *ex,
                                              const char *task_id,
                                              const Mesos__V1__KillPolicy *kp)
{
    struct exec *e = find(x, fw, ex);
    if (e == NULL)
        return AGENT_EXECS_KILL_NONE;
    for (size_t i = 0; i < e->nqueue; i++) {
        struct queued *q = &e->queue[i];
        if (q->task != NULL && strcmp(q->task->task_id->value, task_id) == 0) {
            queued_clear(q);
            memmove(q, q + 1, (e->nqueue - i - 1) * sizeof(*q));
            e->nqueue--;
            log_info("executor %s of framework %s: task %s killed while "
                     "queued",
                     ex, fw, task_id);
            return AGENT_EXECS_KILL_DEQUEUED;
        }
    }
    if (e->phase == EXEC_RUNNING) {
        send_kill(e, task_id, kp);
        return AGENT_EXECS_KILL_SENT;
    }
    e->kills = xreallocarray(e->kills, e->nkills + 1, sizeof(*e->kills));
    e->kills[e->nkills++] = xstrdup(task_id);
    return AGENT_EXECS_KILL_PENDING;
}

void agent_execs_acknowledged(struct agent_execs *x, const char *fw,
                              const char *ex, const char *task_id,
                              const uint8_t *uuid, size_t uuid_len)
{
    struct exec *e = find(x, fw, ex);
    if (e == NULL || e->phase != EXEC_RUNNING)
        return;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__Executor__Event__Acknowledged a =
        MESOS__V1__EXECUTOR__EVENT__ACKNOWLEDGED__INIT;
    a.task_id = &tid;
    a.uuid.data = (uint8_t *)uuid;
    a.uuid.len = uuid_len;
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    ev.has_type = 1;
    ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__ACKNOWLEDGED;
    ev.acknowledged = &a;
    send_event(e, &ev);
}

int agent_execs_message(struct agent_execs *x, const char *fw, const char *ex,
                        const uint8_t *data, size_t len)
{
    struct exec *e = find(x, fw, ex);
    if (e == NULL || e->phase != EXEC_RUNNING)
        return -1;
    Mesos__V1__Executor__Event__Message m =
        MESOS__V1__EXECUTOR__EVENT__MESSAGE__INIT;
    m.data.data = (uint8_t *)data;
    m.data.len = len;
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    ev.has_type = 1;
    ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__MESSAGE;
    ev.message = &m;
    send_event(e, &ev);
    return 0;
}

int agent_execs_shutdown(struct agent_execs *x, const char *fw, const char *ex)
{
    struct exec *e = find(x, fw, ex);
    if (e == NULL)
        return -1;
    begin_shutdown(e, false);
    return 0;
}

void agent_execs_shutdown_all(struct agent_execs *x, const char *fw)
{
    size_t pos = 0;
    void *val;
    /* begin_shutdown changes no map entry. */
    while (hmap_next(x->execs, &pos, NULL, &val)) {
        struct exec *e = val;
        if (fw == NULL || strcmp(e->fw, fw) == 0)
            begin_shutdown(e, false);
    }
}

void agent_execs_kill_now(struct agent_execs *x)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(x->execs, &pos, NULL, &val)) {
        struct exec *e = val;
        signal_exec(e, SIGKILL);
        if (e->sup_pid > 0 &&
            (!e->recovered || agent_proc_runs_in(e->sup_pid, e->sandbox)))
            kill(e->sup_pid, SIGKILL);
    }
}

size_t agent_execs_count(const struct agent_execs *x)
{
    return hmap_count(x->execs);
}

const Mesos__V1__ExecutorInfo *agent_execs_info(const struct agent_execs *x,
                                                const char *fw, const char *ex,
                                                const char **sandbox)
{
    struct exec *e = find(x, fw, ex);
    if (e == NULL)
        return NULL;
    if (sandbox != NULL)
        *sandbox = e->sandbox;
    return e->info;
}

bool agent_execs_next(const struct agent_execs *x, size_t *pos, const char **fw,
                      const Mesos__V1__ExecutorInfo **info,
                      const char **sandbox)
{
    void *val;
    if (!hmap_next(x->execs, pos, NULL, &val))
        return false;
    const struct exec *e = val;
    *fw = e->fw;
    *info = e->info;
    *sandbox = e->sandbox;
    return true;
}

/* ---- Recovery ---- */

/* Re-attach to one checkpointed executor (path: its JSON file). */
static bool recover_one(struct agent_execs *x, const char *path)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (fs_read(path, CKPT_MAX, &data, &len) != 1) {
        log_warn("recovery: cannot read %s", path);
        return false;
    }
    json_error_t jerr;
    json_t *j = json_loadb((const char *)data, len, 0, &jerr);
    free(data);
    char err[256];
    Mesos__V1__ExecutorInfo *ei = NULL;
    Mesos__V1__FrameworkInfo *fi = NULL;
    const char *sandbox =
        j != NULL ? json_string_value(json_object_get(j, "sandbox")) : NULL;
    if (j != NULL) {
        ei = (Mesos__V1__ExecutorInfo *)jpb_from_json(
            &mesos__v1__executor_info__descriptor,
            json_object_get(j, "executor_info"), err, sizeof(err));
        fi = (Mesos__V1__FrameworkInfo *)jpb_from_json(
            &mesos__v1__framework_info__descriptor,
            json_object_get(j, "framework_info"), err, sizeof(err));
    }
    bool ok = false;
    if (ei == NULL || fi == NULL || sandbox == NULL || fi->id == NULL ||
        ei->executor_id == NULL) {
        log_warn("recovery: %s is not a readable executor checkpoint", path);
        unlink(path);
        goto out;
    }
    struct agent_sup_probe p;
    agent_supervisor_probe(sandbox, &p);
    if (!p.sup_alive) {
        log_info("recovery: executor %s of framework %s is gone",
                 ei->executor_id->value, fi->id->value);
        if (p.task_alive)
            kill(-p.task_pid, SIGKILL);
        unlink(path);
        goto out;
    }
    struct exec *e = exec_new(x, fi->id->value, ei, fi);
    e->sandbox = xstrdup(sandbox);
    e->recovered = true;
    e->ever_subscribed = true;
    e->sup_pid = p.sup_pid;
    e->pid = p.task_alive ? p.task_pid : 0;
    hmap_put(x->execs, e->key, e);
    struct timeval tv = tv_of(x->cfg.reregistration_timeout_ns);
    event_add(e->reg_timer, &tv);
    log_info("recovery: executor %s of framework %s re-attached (supervisor "
             "%d); waiting for it to subscribe again",
             e->ex, e->fw, (int)e->sup_pid);
    ok = true;
out:
    if (ei != NULL)
        jpb_free(&ei->base);
    if (fi != NULL)
        jpb_free(&fi->base);
    json_decref(j);
    return ok;
}

size_t agent_execs_recover(struct agent_execs *x)
{
    char *root = xasprintf("%s/meta/executors", x->work_dir);
    size_t n = 0;
    DIR *d = opendir(root);
    struct dirent *de;
    while (d != NULL && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char *fdir = xasprintf("%s/%s", root, de->d_name);
        DIR *fd = opendir(fdir);
        struct dirent *fe;
        while (fd != NULL && (fe = readdir(fd)) != NULL) {
            size_t nl = strlen(fe->d_name);
            if (nl < 6 || strcmp(fe->d_name + nl - 5, ".json") != 0)
                continue;
            char *path = xasprintf("%s/%s", fdir, fe->d_name);
            if (recover_one(x, path))
                n++;
            free(path);
        }
        if (fd != NULL)
            closedir(fd);
        rmdir(fdir); /* only once empty */
        free(fdir);
    }
    if (d != NULL)
        closedir(d);
    free(root);
    if (n > 0)
        arm_poll(x);
    return n;
}

/* ---- The HTTP API's entry points ---- */

bool agent_execs_check_call(const struct agent_execs *x,
                            const Mesos__V1__Executor__Call *call,
                            struct agent_execs_answer *out)
{
    const char *fw = call->framework_id->value;
    const char *ex = call->executor_id->value;
    struct exec *e = find(x, fw, ex);
    if (e == NULL) {
        bool has_fw = false;
        size_t pos = 0;
        void *val;
        while (!has_fw && hmap_next(x->execs, &pos, NULL, &val))
            has_fw = strcmp(((struct exec *)val)->fw, fw) == 0;
        out->status = 400;
        snprintf(out->message, sizeof(out->message), "%s",
                 has_fw ? "Executor cannot be found"
                        : "Framework cannot be found");
        return false;
    }
    if (e->phase == EXEC_REGISTERING &&
        call->type != MESOS__V1__EXECUTOR__CALL__TYPE__SUBSCRIBE) {
        out->status = 403;
        snprintf(out->message, sizeof(out->message),
                 "Executor is not subscribed");
        return false;
    }
    out->status = 202;
    out->message[0] = '\0';
    return true;
}

static void on_stream_closed(struct http_stream *s, enum http_close_reason why,
                             void *arg)
{
    struct exec *e = arg;
    (void)why;
    if (e->stream != s)
        return;
    http_stream_close(s);
    e->stream = NULL;
    log_info("executor %s of framework %s: event stream closed", e->ex, e->fw);
    if (e->phase == EXEC_RUNNING) {
        /* It may subscribe again (e.g. it restarts its connection); it
         * still runs its tasks. */
        e->phase = EXEC_REGISTERING;
        struct timeval tv = tv_of(e->x->cfg.reregistration_timeout_ns);
        event_add(e->reg_timer, &tv);
    }
}

void agent_execs_subscribe(struct agent_execs *x,
                           const Mesos__V1__Executor__Call *call,
                           struct http_request *req, enum http_encoding enc)
{
    struct exec *e =
        find(x, call->framework_id->value, call->executor_id->value);
    drop_stream(e);
    e->enc = enc;
    e->stream = http_stream_start(
        req, enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
        0, on_stream_closed, e);
    bool again = e->ever_subscribed;
    if (e->phase != EXEC_TERMINATING)
        e->phase = EXEC_RUNNING;
    e->ever_subscribed = true;
    event_del(e->reg_timer);
    log_info("executor %s of framework %s %s", e->ex, e->fw,
             again ? "subscribed again" : "subscribed");

    Mesos__V1__Executor__Event__Subscribed sub =
        MESOS__V1__EXECUTOR__EVENT__SUBSCRIBED__INIT;
    Mesos__V1__AgentInfo empty = MESOS__V1__AGENT_INFO__INIT;
    empty.hostname = "";
    sub.executor_info = e->info;
    sub.framework_info = e->fwi;
    sub.agent_info = x->agent_info != NULL ? x->agent_info : &empty;
    Mesos__V1__ContainerID cid = MESOS__V1__CONTAINER_ID__INIT;
    const char *slash = e->sandbox != NULL ? strrchr(e->sandbox, '/') : NULL;
    cid.value = slash != NULL ? (char *)slash + 1 : e->ex;
    sub.container_id = &cid;
    Mesos__V1__Executor__Event ev = MESOS__V1__EXECUTOR__EVENT__INIT;
    ev.has_type = 1;
    ev.type = MESOS__V1__EXECUTOR__EVENT__TYPE__SUBSCRIBED;
    ev.subscribed = &sub;
    send_event(e, &ev);

    /* Updates it sent that were never acknowledged: again through the
     * agent (which drops those it already holds). */
    const Mesos__V1__Executor__Call__Subscribe *s = call->subscribe;
    for (size_t i = 0; s != NULL && i < s->n_unacknowledged_updates; i++)
        if (s->unacknowledged_updates[i]->status != NULL &&
            x->cbs.on_update != NULL)
            x->cbs.on_update(e->fw, e->ex, s->unacknowledged_updates[i]->status,
                             x->cbs.arg);
    if (e->phase == EXEC_TERMINATING) {
        send_simple(e, MESOS__V1__EXECUTOR__EVENT__TYPE__SHUTDOWN);
        return;
    }
    for (size_t i = 0; i < e->nqueue; i++) {
        send_launch(e, &e->queue[i]);
        queued_clear(&e->queue[i]);
    }
    free(e->queue);
    e->queue = NULL;
    e->nqueue = 0;
    for (size_t i = 0; i < e->nkills; i++) {
        send_kill(e, e->kills[i], NULL);
        free(e->kills[i]);
    }
    free(e->kills);
    e->kills = NULL;
    e->nkills = 0;
}

void agent_execs_update(struct agent_execs *x,
                        const Mesos__V1__Executor__Call *call)
{
    if (x->cbs.on_update != NULL)
        x->cbs.on_update(call->framework_id->value, call->executor_id->value,
                         call->update->status, x->cbs.arg);
}

void agent_execs_executor_message(struct agent_execs *x,
                                  const Mesos__V1__Executor__Call *call)
{
    if (x->cbs.on_message != NULL)
        x->cbs.on_message(call->framework_id->value, call->executor_id->value,
                          call->message->data.data, call->message->data.len,
                          x->cbs.arg);
}
