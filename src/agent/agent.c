/*
 * The agent: master events in, task processes and status updates out.
 *
 * Flow of a task: RUN_TASK -> sandbox, checkpoint, supervisor ->
 * TASK_STARTING; the supervisor reports the exec -> TASK_RUNNING; the
 * supervisor exits -> the terminal state from the task's exit status. Every
 * update goes through the update manager (reliable, in order per task) and
 * is checkpointed with the task's state before the loop sends it. A task is
 * forgotten (record, checkpoint) when it is terminal and its terminal
 * update was acknowledged.
 *
 * A restarted agent first recovers (agent_start, recover): it reads the
 * checkpoint, puts every task back (re-attached to its supervisor, or ended
 * while the agent was down), queues the pending updates oldest first, and
 * only then subscribes, so that the SUBSCRIBE carries them all.
 */
#include "agent/agent.h"

#include "agent/checkpoint.h"
#include "agent/command.h"
#include "agent/completed.h"
#include "agent/isolator.h"
#include "agent/fetcher.h"
#include "agent/health.h"
#include "agent/executor_api.h"
#include "agent/executors.h"
#include "agent/master_conn.h"
#include "agent/oversub.h"
#include "agent/recovery.h"
#include "agent/sandbox.h"
#include "agent/state_json.h"
#include "agent/status.h"
#include "agent/task_launch.h"
#include "agent/tasks.h"
#include "agent/update_manager.h"
#include "agent/volumes.h"
#include "common/clock.h"
#include "common/hmap.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "common/task_state.h"

#include <errno.h>
#include <event2/event.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Mesos's default kill grace period for command tasks. */
#define DEFAULT_GRACE_NS (3 * CLOCK_NS_PER_SEC)
/* After the last task died on shutdown, how long to let the last updates
 * go out. */
#define SHUTDOWN_DRAIN_NS (2 * CLOCK_NS_PER_SEC)
/* How often shutdown progress is checked. */
#define SHUTDOWN_POLL_MS 50

struct agent {
    struct event_base *base;
    struct agent_config cfg;
    char *sandbox_root;
    char *fetch_cache_dir; /* effective --fetcher_cache_dir */
    char endpoint[300];    /* "host:port" tasks reach the agent at */
    char master[512];      /* --master as given (host:port, zk://, file://) */
    char *user;            /* the agent's own user name */
    double start_time;

    struct agent_ckpt *ckpt;
    struct agent_um *um;
    struct agent_conn *conn;
    struct agent_tasks *tasks;
    struct agent_vols *vols; /* checkpointed resources, volume directories */
    bool recovering;         /* in recover(): no volume is removed yet */
    struct hmap *frameworks; /* id -> Mesos__V1__FrameworkInfo (owned) */
    char *agent_id;          /* NULL until registered (or checkpointed) */

    struct event *retry_timer; /* the update manager's next resend */

    bool cleanup; /* --recover=cleanup: wipe the checkpoint at the end */
    bool shutting_down;
    struct event *shutdown_timer; /* polls shutdown progress */
    int64_t shutdown_deadline;    /* monotonic ns */
    int64_t drain_until;          /* monotonic ns; 0: tasks still live */

    /* The resource estimator and the QoS controller (oversub.h). */
    struct agent_oversub *oversub;
    struct agent_iso *iso;       /* cgroups and disk quota (isolator.h) */
    struct agent_health *health; /* health checks and checks (health.h) */

    struct agent_execs *execs; /* custom executors (executors.h) */
    /* What ended, for /state (completed.h). */
    struct agent_completed *completed;
};

static int64_t now_ns(void)
{
    return clock_monotonic_ns();
}

/* ---- Status updates ---- */

static void reschedule_retry(struct agent *a)
{
    int64_t d = agent_um_next_deadline(a->um);
    if (d < 0) {
        event_del(a->retry_timer);
        return;
    }
    int64_t delay = d - now_ns();
    if (delay < 0)
        delay = 0;
    struct timeval tv = {(time_t)(delay / CLOCK_NS_PER_SEC),
                         (suseconds_t)((delay % CLOCK_NS_PER_SEC) / 1000)};
    event_add(a->retry_timer, &tv);
}

static void on_retry_timer(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    (void)fd;
    (void)what;
    agent_um_tick(a->um, now_ns());
    reschedule_retry(a);
}

/* The update manager's send function: one UPDATE call. */
static void send_update(const char *framework_id,
                        const Mesos__V1__TaskStatus *status,
                        Mesos__V1__TaskState latest, void *arg)
{
    struct agent *a = arg;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)framework_id;
    Offerd__Agent__Call__Update upd = OFFERD__AGENT__CALL__UPDATE__INIT;
    upd.framework_id = &fid;
    upd.status = (Mesos__V1__TaskStatus *)status;
    upd.has_latest_state = 1;
    upd.latest_state = latest;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__UPDATE;
    call.agent_id = a->agent_id != NULL ? &aid : NULL;
    call.update = &upd;
    char uuid[ID_UUID_SIZE] = "";
    if (status->uuid.len == 16)
        id_uuid_format(status->uuid.data, uuid);
    if (agent_conn_send(a->conn, &call) == 0)
        log_info("sent %s (%s) of task %s of framework %s to the master",
                 task_state_name(status->state), uuid, status->task_id->value,
                 framework_id);
}

struct collect {
    Offerd__Agent__Call__Update *v;
    Mesos__V1__FrameworkID *fids;
    size_t n, cap;
};

static void collect_update(const char *framework_id,
                           const Mesos__V1__TaskStatus *status, void *arg)
{
    struct collect *c = arg;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
        c->fids = xreallocarray(c->fids, c->cap, sizeof(*c->fids));
    }
    Mesos__V1__FrameworkID *fid = &c->fids[c->n];
    mesos__v1__framework_id__init(fid);
    fid->value = (char *)framework_id;
    Offerd__Agent__Call__Update *u = &c->v[c->n];
    offerd__agent__call__update__init(u);
    u->status = (Mesos__V1__TaskStatus *)status;
    c->n++;
}

/* Point each collected update at its framework id (the arrays may have
 * moved while growing) and set latest_state to the newest state. */
static void collect_finish(struct collect *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->v[i].framework_id = &c->fids[i];
}

/* A mesos.v1.Task for t with its latest state and status (all owned). */
static Mesos__V1__Task *task_pb(const struct agent *a,
                                const struct agent_task *t)
{
    Mesos__V1__Task *m = xmalloc(sizeof(*m));
    mesos__v1__task__init(m);
    m->name = xstrdup(t->info->name);
    m->task_id = xmalloc(sizeof(*m->task_id));
    mesos__v1__task_id__init(m->task_id);
    m->task_id->value = xstrdup(t->task_id);
    m->framework_id = xmalloc(sizeof(*m->framework_id));
    mesos__v1__framework_id__init(m->framework_id);
    m->framework_id->value = xstrdup(t->framework_id);
    m->executor_id = xmalloc(sizeof(*m->executor_id));
    mesos__v1__executor_id__init(m->executor_id);
    m->executor_id->value = xstrdup(t->task_id);
    m->agent_id = xmalloc(sizeof(*m->agent_id));
    mesos__v1__agent_id__init(m->agent_id);
    m->agent_id->value =
        xstrdup(a->agent_id != NULL ? a->agent_id : t->info->agent_id->value);
    m->state = t->state;
    if (t->info->n_resources > 0) {
        m->n_resources = t->info->n_resources;
        m->resources = xcalloc(m->n_resources, sizeof(*m->resources));
        for (size_t i = 0; i < m->n_resources; i++)
            m->resources[i] = jpb_copy(&mesos__v1__resource__descriptor,
                                       &t->info->resources[i]->base);
    }
    if (t->last_status != NULL) {
        m->n_statuses = 1;
        m->statuses = xcalloc(1, sizeof(*m->statuses));
        m->statuses[0] = jpb_copy(&mesos__v1__task_status__descriptor,
                                  &t->last_status->base);
    }
    /* The update in flight: the oldest pending one, else the latest. */
    struct collect c = {0};
    agent_um_foreach_task(a->um, t->framework_id, t->task_id, collect_update,
                          &c);
    const Mesos__V1__TaskStatus *head =
        c.n > 0 ? c.v[0].status : t->last_status;
    if (head != NULL) {
        m->has_status_update_state = 1;
        m->status_update_state = head->state;
        m->has_status_update_uuid = 1;
        m->status_update_uuid.len = head->uuid.len;
        m->status_update_uuid.data = xmemdup(head->uuid.data, head->uuid.len);
    }
    free(c.v);
    free(c.fids);
    if (t->info->labels != NULL)
        m->labels =
            jpb_copy(&mesos__v1__labels__descriptor, &t->info->labels->base);
    if (t->info->kill_policy != NULL)
        m->kill_policy = jpb_copy(&mesos__v1__kill_policy__descriptor,
                                  &t->info->kill_policy->base);
    return m;
}

/* Checkpoint a task's state (when t is non-NULL) and its pending updates;
 * remove its checkpoint when nothing is left of it. */
static void checkpoint_task(struct agent *a, const char *fw,
                            const char *task_id, const struct agent_task *t)
{
    if (!agent_ckpt_id_is_safe(fw) || !agent_ckpt_id_is_safe(task_id))
        return; /* refused at launch; nothing can be stored under it */
    char err[512];
    struct collect c = {0};
    agent_um_foreach_task(a->um, fw, task_id, collect_update, &c);
    collect_finish(&c);
    if (t == NULL && c.n == 0) {
        agent_ckpt_remove_task(a->ckpt, fw, task_id);
    } else {
        /* Updates first: a reader takes the newest pending update's state
         * as the task's (checkpoint.h), so a crash between the two writes
         * loses no state. */
        const Offerd__Agent__Call__Update **pv =
            xcalloc(c.n ? c.n : 1, sizeof(*pv));
        for (size_t i = 0; i < c.n; i++)
            pv[i] = &c.v[i];
        if (agent_ckpt_save_updates(a->ckpt, fw, task_id, pv, c.n, err,
                                    sizeof(err)) != 0)
            log_error("checkpoint: %s", err);
        free(pv);
        if (t != NULL) {
            Mesos__V1__Task *m = task_pb(a, t);
            if (agent_ckpt_save_task(a->ckpt, fw, m, err, sizeof(err)) != 0)
                log_error("checkpoint: %s", err);
            jpb_free(&m->base);
        }
    }
    free(c.v);
    free(c.fids);
}

static void queue_status(struct agent *a, const char *fw, const char *task_id,
                         struct agent_task *t, Mesos__V1__TaskStatus *st);

/* Report a new state of a task (t may be NULL for a task the agent does not
 * hold): build the status, remember it, checkpoint, queue it. */
static void report(struct agent *a, const char *fw, const char *task_id,
                   struct agent_task *t, Mesos__V1__TaskState state,
                   Mesos__V1__TaskStatus__Source source, bool has_reason,
                   Mesos__V1__TaskStatus__Reason reason, const char *message)
{
    struct agent_status_spec spec = {
        .task_id = task_id,
        .state = state,
        .source = source,
        .has_reason = has_reason,
        .reason = reason,
        .message = message,
        .agent_id = a->agent_id,
        .executor_id = task_id,
        .timestamp = clock_wall_secs(),
    };
    Mesos__V1__TaskStatus *st = agent_status_new(&spec);
    if (t != NULL)
        agent_health_decorate(a->health, t, st);
    queue_status(a, fw, task_id, t, st);
}

/* Remember st (ownership taken) as t's latest status, checkpoint, queue it
 * on the update manager. */
#define HEALTH_REASON                                                          \
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_HEALTH_CHECK_STATUS_UPDATED
#define CHECK_REASON                                                           \
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_CHECK_STATUS_UPDATED

static void queue_status(struct agent *a, const char *fw, const char *task_id,
                         struct agent_task *t, Mesos__V1__TaskStatus *st)
{
    Mesos__V1__TaskState state = st->state;
    const char *message = st->message;
    if (t != NULL) {
        t->state = state;
        /* Health and check results are not new states: /state's history
         * keeps one entry per state, and stays bounded. */
        bool probe = st->has_reason && (st->reason == HEALTH_REASON ||
                                        st->reason == CHECK_REASON);
        if (!probe || t->nstates == 0 ||
            t->states[t->nstates - 1].state != state)
            agent_task_note_state(t, state, st->timestamp);
        if (t->last_status != NULL)
            jpb_free(&t->last_status->base);
        t->last_status =
            jpb_copy(&mesos__v1__task_status__descriptor, &st->base);
    }
    log_info("task %s of framework %s is %s%s%s", task_id, fw,
             task_state_name(state), message ? ": " : "",
             message ? message : "");
    agent_um_add(a->um, fw, st, now_ns());
    checkpoint_task(a, fw, task_id, t);
    reschedule_retry(a);
}

/* ---- Frameworks ---- */

static void framework_free(void *p)
{
    jpb_free(p);
}

static void remember_framework(struct agent *a, const char *fw,
                               const Mesos__V1__FrameworkInfo *fi)
{
    Mesos__V1__FrameworkInfo *copy =
        jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    void *old = hmap_put(a->frameworks, fw, copy);
    if (old != NULL)
        framework_free(old);
    agent_completed_framework_back(a->completed, fw);
    char err[512];
    if (agent_ckpt_id_is_safe(fw) &&
        agent_ckpt_save_framework(a->ckpt, fw, copy, err, sizeof(err)) != 0)
        log_error("checkpoint: %s", err);
}

static bool framework_has_tasks(const struct agent *a, const char *fw)
{
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
        if (strcmp(t->framework_id, fw) == 0)
            return true;
    return false;
}

static bool
framework_has_capability(const struct agent *a, const char *fw,
                         Mesos__V1__FrameworkInfo__Capability__Type c)
{
    const Mesos__V1__FrameworkInfo *fi = hmap_get(a->frameworks, fw);
    for (size_t i = 0; fi != NULL && i < fi->n_capabilities; i++)
        if (fi->capabilities[i]->has_type && fi->capabilities[i]->type == c)
            return true;
    return false;
}

/* Forget a terminal, acknowledged task, and its framework with its last
 * task. */
static void forget_task(struct agent *a, struct agent_task *t)
{
    char *fw = xstrdup(t->framework_id);
    log_info("forgetting task %s of framework %s", t->task_id, fw);
    agent_health_stop(a->health, t);
    if (agent_ckpt_id_is_safe(fw) && agent_ckpt_id_is_safe(t->task_id))
        agent_ckpt_remove_task(a->ckpt, fw, t->task_id);
    agent_completed_task(a->completed, t, hmap_get(a->frameworks, fw), a->execs,
                         a->agent_id);
    agent_tasks_remove(a->tasks, t);
    if (!framework_has_tasks(a, fw)) {
        void *fi = hmap_del(a->frameworks, fw);
        if (fi != NULL)
            framework_free(fi);
        if (agent_ckpt_id_is_safe(fw))
            agent_ckpt_remove_framework(a->ckpt, fw);
    }
    agent_completed_settle(a->completed, fw, a->tasks, a->execs);
    free(fw);
}

/* ---- Launching ---- */

static void kill_task(struct agent *a, struct agent_task *t,
                      const Mesos__V1__KillPolicy *override);
static void kill_on_executor(struct agent *a, struct agent_task *t,
                             const Mesos__V1__KillPolicy *override);

/* As Mesos's default executor does for a task group: when one task of the
 * group ends other than FINISHED, the others are killed. */
static void kill_group_of(struct agent *a, const struct agent_task *t,
                          Mesos__V1__TaskState state)
{
    if (t->group == NULL || state == MESOS__V1__TASK_STATE__TASK_FINISHED)
        return;
    size_t pos = 0;
    struct agent_task *o;
    while ((o = agent_tasks_next(a->tasks, &pos)) != NULL) {
        if (o == t || o->group == NULL || o->kill_requested ||
            task_state_is_terminal(o->state) ||
            strcmp(o->group, t->group) != 0 ||
            strcmp(o->framework_id, t->framework_id) != 0)
            continue;
        log_info("killing task %s: task %s of its group ended", o->task_id,
                 t->task_id);
        kill_task(a, o, NULL);
    }
}

static void launch_failed(struct agent *a, struct agent_task *t,
                          const char *message)
{
    report(a, t->framework_id, t->task_id, t,
           MESOS__V1__TASK_STATE__TASK_FAILED,
           MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
           MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LAUNCH_FAILED,
           message);
    kill_group_of(a, t, MESOS__V1__TASK_STATE__TASK_FAILED);
}

/* The executor that runs t, or NULL for a command task. */
static const char *executor_of(const struct agent_task *t)
{
    return t->info->executor != NULL ? t->info->executor->executor_id->value
                                     : NULL;
}

/* Hand t (or, with group set, the group whose tasks are in the table
 * already) to its custom executor (executors.h); the executor reports its
 * states, the agent only its failures. */
static void run_on_executor(struct agent *a, const Mesos__V1__FrameworkInfo *fi,
                            struct agent_task *t,
                            const Mesos__V1__ExecutorInfo *ei,
                            const Mesos__V1__TaskGroupInfo *group)
{
    char err[1024];
    if (agent_execs_run(a->execs, fi, ei, group ? NULL : t->info, group, err,
                        sizeof(err)) != 0) {
        launch_failed(a, t, err);
        return;
    }
    const char *sandbox = NULL;
    agent_execs_info(a->execs, t->framework_id, executor_of(t), &sandbox);
    if (sandbox != NULL &&
        agent_ckpt_save_task_info(a->ckpt, t->framework_id, t->info, sandbox,
                                  err, sizeof(err)) != 0)
        log_error("checkpoint: %s", err);
}

/* Start one task; group is the executor id of its task group, or NULL. */
static void run_task(struct agent *a, const Mesos__V1__FrameworkInfo *fi,
                     const Mesos__V1__TaskInfo *ti, const char *group)
{
    if (fi->id == NULL) {
        log_warn("RUN_TASK for task %s without a framework id: ignored",
                 ti->task_id->value);
        return;
    }
    const char *fw = fi->id->value;
    const char *task_id = ti->task_id->value;
    log_info("RUN_TASK %s (%s) of framework %s", task_id, ti->name, fw);
    if (agent_tasks_get(a->tasks, fw, task_id) != NULL) {
        log_warn("task %s of framework %s already exists: RUN_TASK ignored",
                 task_id, fw);
        return;
    }
    if (!agent_ckpt_id_is_safe(fw) || !agent_ckpt_id_is_safe(task_id)) {
        report(a, fw, task_id, NULL, MESOS__V1__TASK_STATE__TASK_ERROR,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_TASK_INVALID,
               "The framework or task id cannot name a sandbox directory");
        return;
    }
    remember_framework(a, fw, fi);
    struct agent_task *t = agent_tasks_add(a->tasks, fw, ti);
    if (group != NULL)
        t->group = xstrdup(group);
    if (a->shutting_down) {
        launch_failed(a, t, "The agent is shutting down");
        return;
    }
    if (ti->executor != NULL) {
        run_on_executor(a, fi, t, ti->executor, NULL);
        return;
    }
    if (ti->command == NULL) {
        launch_failed(a, t, "Task has neither a command nor an executor");
        return;
    }
    char err[1024];
    struct agent_launch_ctx lctx = {&a->cfg.flags->launch, a->fetch_cache_dir,
                                    a->agent_id, a->endpoint, environ};
    if (agent_launch_check(&lctx, ti, err, sizeof(err)) != 0) {
        launch_failed(a, t, err);
        return;
    }
    t->sandbox = agent_sandbox_create(a->sandbox_root, fw, task_id, t->run_id,
                                      err, sizeof(err));
    if (t->sandbox == NULL) {
        launch_failed(a, t, err);
        return;
    }
    if (agent_ckpt_save_task_info(a->ckpt, fw, t->info, t->sandbox, err,
                                  sizeof(err)) != 0)
        log_error("checkpoint: %s", err);
    if (agent_vols_attach(a->vols, ti, t->sandbox, err, sizeof(err)) != 0) {
        launch_failed(a, t, err);
        return;
    }
    struct agent_launch_prep prep;
    if (agent_launch_prepare(&lctx, fi, ti, t->sandbox, &prep, err,
                             sizeof(err)) != 0) {
        launch_failed(a, t, err);
        return;
    }
    struct agent_launch l;
    agent_launch_prep_fill(&prep, t->sandbox, &l);
    int rc = agent_iso_prepare(a->iso, t, &l, err, sizeof(err));
    if (rc == 0)
        rc = agent_tasks_launch(a->tasks, t, &l, err, sizeof(err));
    agent_launch_prep_clear(&prep);
    if (rc != 0) {
        struct agent_iso_limitation none;
        agent_iso_ended(a->iso, t, &none); /* its cgroup, if made */
        launch_failed(a, t, err);
        return;
    }
    report(a, fw, task_id, t, MESOS__V1__TASK_STATE__TASK_STARTING,
           MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR, false, 0, NULL);
}

/* A task group for a CUSTOM executor: every task in the table (with the
 * executor in its TaskInfo copy), then the group to the executor. */
static void run_group_on_executor(struct agent *a,
                                  const Offerd__Agent__Event__RunTaskGroup *g)
{
    const Mesos__V1__FrameworkInfo *fi = g->framework_info;
    if (fi->id == NULL)
        return;
    struct agent_task **ts = xcalloc(g->task_group->n_tasks + 1, sizeof(*ts));
    size_t n = 0;
    for (size_t i = 0; i < g->task_group->n_tasks; i++) {
        Mesos__V1__TaskInfo ti = *g->task_group->tasks[i];
        ti.executor = g->executor;
        const char *task_id = ti.task_id->value;
        if (agent_tasks_get(a->tasks, fi->id->value, task_id) != NULL ||
            !agent_ckpt_id_is_safe(task_id)) {
            log_warn("RUN_TASK_GROUP: task %s exists or has an unsafe id: "
                     "ignored",
                     task_id);
            continue;
        }
        ts[n++] = agent_tasks_add(a->tasks, fi->id->value, &ti);
    }
    if (n == 0) {
        free(ts);
        return;
    }
    remember_framework(a, fi->id->value, fi);
    char err[1024];
    if (a->shutting_down ||
        agent_execs_run(a->execs, fi, g->executor, NULL, g->task_group, err,
                        sizeof(err)) != 0) {
        for (size_t i = 0; i < n; i++)
            launch_failed(a, ts[i],
                          a->shutting_down ? "The agent is shutting down"
                                           : err);
        free(ts);
        return;
    }
    const char *sandbox = NULL;
    agent_execs_info(a->execs, fi->id->value, g->executor->executor_id->value,
                     &sandbox);
    for (size_t i = 0; i < n && sandbox != NULL; i++)
        if (agent_ckpt_save_task_info(a->ckpt, fi->id->value, ts[i]->info,
                                      sandbox, err, sizeof(err)) != 0)
            log_error("checkpoint: %s", err);
    free(ts);
}

/* The tasks of a group run side by side, each as a command task in its own
 * sandbox and process group (this agent has no nested containers); they
 * share the group's fate (kill_group_of). */
static void run_task_group(struct agent *a,
                           const Offerd__Agent__Event__RunTaskGroup *g)
{
    const char *group = g->executor->executor_id->value;
    if (g->executor->has_type &&
        g->executor->type == MESOS__V1__EXECUTOR_INFO__TYPE__CUSTOM) {
        run_group_on_executor(a, g);
        return;
    }
    for (size_t i = 0; i < g->task_group->n_tasks; i++)
        run_task(a, g->framework_info, g->task_group->tasks[i], group);
    /* A task that could not start takes the group down, including the
     * tasks started after it. */
    const char *fw = g->framework_info->id ? g->framework_info->id->value : "";
    for (size_t i = 0; i < g->task_group->n_tasks; i++) {
        struct agent_task *t = agent_tasks_get(
            a->tasks, fw, g->task_group->tasks[i]->task_id->value);
        if (t != NULL && task_state_is_terminal(t->state))
            kill_group_of(a, t, t->state);
    }
}

/* ---- Task process callbacks ---- */

static void on_task_running(struct agent_task *t, void *arg)
{
    struct agent *a = arg;
    if (t->kill_requested)
        return; /* killed before it ran: the kill decides its state */
    if (t->state == MESOS__V1__TASK_STATE__TASK_RUNNING)
        return; /* re-attached: already reported before the restart */
    report(a, t->framework_id, t->task_id, t,
           MESOS__V1__TASK_STATE__TASK_RUNNING,
           MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR, false, 0, NULL);
    agent_health_start(a->health, t, a->agent_id);
}

/* Report how t's processes ended (from the supervisor's record of the
 * task's exit, or why there is none). */
static void report_end(struct agent *a, struct agent_task *t,
                       const struct agent_task_end *end)
{
    Mesos__V1__TaskState state;
    Mesos__V1__TaskStatus__Source source =
        MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR;
    bool has_reason = false;
    Mesos__V1__TaskStatus__Reason reason = 0;
    const char *message = end->message;
    struct agent_exit_outcome out;
    if (end->has_status && !end->launch_failed) {
        agent_exit_outcome(end->wait_status, t->kill_requested, &out);
        state = out.state;
        has_reason = out.has_reason;
        reason = out.reason;
        message = out.message;
    } else if (t->kill_requested) {
        state = MESOS__V1__TASK_STATE__TASK_KILLED;
    } else if (end->launch_failed) {
        state = MESOS__V1__TASK_STATE__TASK_FAILED;
        source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT;
        has_reason = true;
        reason = MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LAUNCH_FAILED;
    } else {
        state = MESOS__V1__TASK_STATE__TASK_FAILED;
        has_reason = true;
        reason = MESOS__V1__TASK_STATUS__REASON__REASON_EXECUTOR_TERMINATED;
    }
    if (state == MESOS__V1__TASK_STATE__TASK_KILLED && t->kill_during_launch) {
        has_reason = true;
        reason =
            MESOS__V1__TASK_STATUS__REASON__REASON_TASK_KILLED_DURING_LAUNCH;
    }
    if (state == MESOS__V1__TASK_STATE__TASK_KILLED && t->has_kill_reason) {
        /* An eviction, or a kill the master gave a reason for. */
        source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT;
        has_reason = true;
        reason = t->kill_reason;
    }
    /* A limit the task went over (OOM, disk) ended it, as Mesos says. */
    struct agent_iso_limitation lim;
    agent_iso_ended(a->iso, t, &lim);
    if (lim.limited && !t->kill_requested) {
        state = MESOS__V1__TASK_STATE__TASK_FAILED;
        source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT;
        has_reason = true;
        reason = lim.reason;
        message = lim.message;
    }
    report(a, t->framework_id, t->task_id, t, state, source, has_reason, reason,
           message[0] != '\0' ? message : NULL);
    agent_health_stop(a->health, t);
    kill_group_of(a, t, state);
    /* Volumes left the list while it ran may go now. */
    if (!a->recovering && agent_vols_removing(a->vols) > 0)
        agent_vols_collect(a->vols);
}

/* Health checks and checks (health.h): their updates, and the kill of a
 * task that failed its health check. */
static void on_health_update(struct agent_task *t, Mesos__V1__TaskStatus *st,
                             void *arg)
{
    queue_status(arg, t->framework_id, t->task_id, t, st);
}

static void on_health_kill(struct agent_task *t, void *arg)
{
    kill_task(arg, t, NULL);
}

static void on_task_ended(struct agent_task *t,
                          const struct agent_task_end *end, void *arg)
{
    report_end(arg, t, end);
}

/* ---- Master events ---- */

static int64_t grace_of(const Mesos__V1__KillPolicy *kp, int64_t fallback)
{
    if (kp != NULL && kp->grace_period != NULL &&
        kp->grace_period->nanoseconds >= 0)
        return kp->grace_period->nanoseconds;
    return fallback;
}

static void kill_task(struct agent *a, struct agent_task *t,
                      const Mesos__V1__KillPolicy *override)
{
    if (executor_of(t) != NULL) {
        kill_on_executor(a, t, override);
        return;
    }
    if (task_state_is_terminal(t->state) || t->phase == AGENT_TASK_ENDED ||
        t->phase == AGENT_TASK_NEW) {
        log_info("task %s of framework %s is already %s: nothing to kill",
                 t->task_id, t->framework_id, task_state_name(t->state));
        return;
    }
    int64_t grace =
        grace_of(override, grace_of(t->info->kill_policy, DEFAULT_GRACE_NS));
    if (!t->kill_requested || grace < t->grace_ns) {
        /* Recorded before any signal, so that a restarted agent resumes
         * the kill (with what is left of its grace period). */
        struct agent_ckpt_kill k = {
            .grace_ns = grace,
            .deadline_wall_ns = clock_wall_ns() + grace,
            .during_launch =
                t->kill_during_launch || t->phase == AGENT_TASK_LAUNCHING,
            .has_reason = t->has_kill_reason,
            .reason = (int)t->kill_reason,
        };
        char err[512];
        if (agent_ckpt_id_is_safe(t->framework_id) &&
            agent_ckpt_id_is_safe(t->task_id) &&
            agent_ckpt_save_kill(a->ckpt, t->framework_id, t->task_id, &k, err,
                                 sizeof(err)) != 0)
            log_error("checkpoint: %s", err);
    }
    if (t->state != MESOS__V1__TASK_STATE__TASK_KILLING &&
        framework_has_capability(
            a, t->framework_id,
            MESOS__V1__FRAMEWORK_INFO__CAPABILITY__TYPE__TASK_KILLING_STATE))
        report(a, t->framework_id, t->task_id, t,
               MESOS__V1__TASK_STATE__TASK_KILLING,
               t->has_kill_reason
                   ? MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT
                   : MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
               t->has_kill_reason, t->kill_reason, NULL);
    agent_tasks_kill(a->tasks, t, grace);
}

/* A task of a custom executor: the executor kills it (KILL event); one
 * still queued is dropped and reported killed here. */
static void kill_on_executor(struct agent *a, struct agent_task *t,
                             const Mesos__V1__KillPolicy *override)
{
    if (task_state_is_terminal(t->state))
        return;
    const Mesos__V1__KillPolicy *kp =
        override != NULL ? override : t->info->kill_policy;
    switch (agent_execs_kill(a->execs, t->framework_id, executor_of(t),
                             t->task_id, kp)) {
    case AGENT_EXECS_KILL_DEQUEUED:
        report(a, t->framework_id, t->task_id, t,
               MESOS__V1__TASK_STATE__TASK_KILLED,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_TASK_KILLED_DURING_LAUNCH,
               "Killed before its executor subscribed");
        break;
    case AGENT_EXECS_KILL_NONE:
        report(a, t->framework_id, t->task_id, t,
               MESOS__V1__TASK_STATE__TASK_LOST,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_EXECUTOR_TERMINATED,
               "The task's executor is gone");
        break;
    default:
        break;
    }
}

/* Kill t for a reason its TASK_KILLING and TASK_KILLED report (with
 * SOURCE_AGENT): an eviction by the QoS controller, or the master's. */
static void kill_task_for(struct agent *a, struct agent_task *t,
                          const Mesos__V1__KillPolicy *override,
                          Mesos__V1__TaskStatus__Reason reason)
{
    if (!task_state_is_terminal(t->state) && t->phase != AGENT_TASK_ENDED &&
        t->phase != AGENT_TASK_NEW) {
        t->has_kill_reason = true;
        t->kill_reason = reason;
    }
    kill_task(a, t, override);
}

static void handle_kill(struct agent *a,
                        const Offerd__Agent__Event__KillTask *k)
{
    const char *fw = k->framework_id->value;
    const char *task_id = k->task_id->value;
    log_info("KILL_TASK %s of framework %s", task_id, fw);
    struct agent_task *t = agent_tasks_get(a->tasks, fw, task_id);
    if (t == NULL) {
        report(a, fw, task_id, NULL, MESOS__V1__TASK_STATE__TASK_LOST,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_TASK_UNKNOWN,
               "Task unknown to the agent");
        return;
    }
    if (k->has_reason)
        kill_task_for(a, t, k->kill_policy, k->reason);
    else
        kill_task(a, t, k->kill_policy);
}

static void handle_ack(struct agent *a,
                       const Offerd__Agent__Event__Acknowledge *k)
{
    const char *fw = k->framework_id->value;
    const char *task_id = k->task_id->value;
    struct agent_task *t = agent_tasks_get(a->tasks, fw, task_id);
    /* An update its executor made goes back to it as ACKNOWLEDGED: is the
     * oldest pending update (the one acknowledged) the executor's? */
    bool from_executor = false;
    if (t != NULL && executor_of(t) != NULL) {
        struct collect c = {0};
        agent_um_foreach_task(a->um, fw, task_id, collect_update, &c);
        from_executor =
            c.n > 0 && c.v[0].status->has_source &&
            c.v[0].status->source ==
                MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR &&
            c.v[0].status->uuid.len == k->uuid.len &&
            memcmp(c.v[0].status->uuid.data, k->uuid.data, k->uuid.len) == 0;
        free(c.v);
        free(c.fids);
    }
    Mesos__V1__TaskState acked = 0;
    enum agent_um_ack_result r = agent_um_ack(a->um, fw, task_id, k->uuid.data,
                                              k->uuid.len, now_ns(), &acked);
    char uuid[ID_UUID_SIZE] = "?";
    if (k->uuid.len == 16)
        id_uuid_format(k->uuid.data, uuid);
    if (r == AGENT_UM_ACK_UNKNOWN) {
        log_warn("ACKNOWLEDGE %s for task %s of framework %s, which has no "
                 "pending update: ignored",
                 uuid, task_id, fw);
        return;
    }
    if (r == AGENT_UM_ACK_MISMATCH) {
        log_warn("ACKNOWLEDGE %s for task %s of framework %s is not for its "
                 "oldest pending update: ignored",
                 uuid, task_id, fw);
        return;
    }
    log_info("%s (%s) of task %s of framework %s acknowledged",
             task_state_name(acked), uuid, task_id, fw);
    if (from_executor)
        agent_execs_acknowledged(a->execs, fw, executor_of(t), task_id,
                                 k->uuid.data, k->uuid.len);
    if (t != NULL && task_state_is_terminal(t->state) &&
        (t->phase == AGENT_TASK_ENDED || t->phase == AGENT_TASK_NEW) &&
        agent_um_count(a->um, fw, task_id) == 0)
        forget_task(a, t);
    else
        checkpoint_task(a, fw, task_id, t);
    reschedule_retry(a);
}

static void reconcile(struct agent *a,
                      Offerd__Agent__Event__Reconcile__Task *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *fw = v[i]->framework_id->value;
        const char *task_id = v[i]->task_id->value;
        struct agent_task *t = agent_tasks_get(a->tasks, fw, task_id);
        if (t == NULL) {
            report(a, fw, task_id, NULL, MESOS__V1__TASK_STATE__TASK_LOST,
                   MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
                   MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION,
                   "Task unknown to the agent");
        } else if (!agent_um_resend(a->um, fw, task_id, now_ns())) {
            report(a, fw, task_id, t, t->state,
                   MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
                   MESOS__V1__TASK_STATUS__REASON__REASON_RECONCILIATION,
                   "Reconciliation: latest state");
        }
    }
    reschedule_retry(a);
}

/* What executors are told of this agent (SUBSCRIBED.agent_info). */
static void set_executors_agent(struct agent *a)
{
    Mesos__V1__AgentInfo ai = MESOS__V1__AGENT_INFO__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    ai.id = a->agent_id != NULL ? &aid : NULL;
    ai.hostname = (char *)a->cfg.flags->hostname;
    ai.has_port = 1;
    ai.port = a->cfg.port;
    ai.resources = res_list_to_pb(a->cfg.resources, true, &ai.n_resources);
    agent_execs_set_agent(a->execs, &ai);
    res_pb_array_free(ai.resources, ai.n_resources);
}

static void handle_registered(struct agent *a,
                              const Offerd__Agent__Event__Registered *r)
{
    const char *id = r->agent_id->value;
    if (a->agent_id == NULL || strcmp(a->agent_id, id) != 0) {
        if (a->agent_id != NULL)
            log_warn("the master gave the new id %s (was %s)", id, a->agent_id);
        free(a->agent_id);
        a->agent_id = xstrdup(id);
        char err[512];
        if (agent_ckpt_save_agent_id(a->ckpt, id, err, sizeof(err)) != 0)
            log_error("checkpoint: %s", err);
    }
    agent_um_set_online(a->um, true, now_ns());
    set_executors_agent(a);
    reconcile(a, r->reconcile_tasks, r->n_reconcile_tasks);
    reschedule_retry(a);
    agent_oversub_registered(a->oversub);
}

static void shutdown_framework(struct agent *a, const char *fw)
{
    log_info("SHUTDOWN_FRAMEWORK %s: killing its tasks", fw);
    size_t pos = 0;
    struct agent_task *t;
    /* Kills change no table entry, so iterating while killing is safe. */
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
        if (strcmp(t->framework_id, fw) == 0 && executor_of(t) == NULL)
            kill_task(a, t, NULL);
    agent_execs_shutdown_all(a->execs, fw);
}

/* Answer a CHECKPOINT_RESOURCES (error NULL: applied). */
static void send_checkpointed(struct agent *a, uint64_t version,
                              const char *error)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    Offerd__Agent__Call__CheckpointedResources cr =
        OFFERD__AGENT__CALL__CHECKPOINTED_RESOURCES__INIT;
    cr.version = version;
    cr.error = (char *)error;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__CHECKPOINTED_RESOURCES;
    call.agent_id = a->agent_id != NULL ? &aid : NULL;
    call.checkpointed_resources = &cr;
    agent_conn_send(a->conn, &call);
}

/* The master's new list of dynamic reservations and persistent volumes:
 * made durable (and the volume directories made) before the answer. */
static void
handle_checkpoint_resources(struct agent *a,
                            const Offerd__Agent__Event__CheckpointResources *cr)
{
    char err[1024];
    log_info("CHECKPOINT_RESOURCES version %llu: %zu resource(s)",
             (unsigned long long)cr->version, cr->n_resources);
    enum agent_vols_result r = agent_vols_apply(
        a->vols, cr->resources, cr->n_resources, cr->version, err, sizeof(err));
    if (r == AGENT_VOLS_APPLIED) {
        log_info("checkpointed resources version %llu applied",
                 (unsigned long long)cr->version);
        send_checkpointed(a, cr->version, NULL);
        return;
    }
    if (r == AGENT_VOLS_STALE)
        log_warn("CHECKPOINT_RESOURCES: %s", err);
    else
        log_error("CHECKPOINT_RESOURCES version %llu not applied: %s",
                  (unsigned long long)cr->version, err);
    send_checkpointed(a, cr->version, err);
}

/* Whether a task whose processes may run uses the volume (role, id). */
static bool volume_in_use(const char *role, const char *id, void *arg)
{
    struct agent *a = arg;
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
        if ((t->phase == AGENT_TASK_LAUNCHING ||
             t->phase == AGENT_TASK_RUNNING) &&
            agent_vol_task_uses(t->info, role, id))
            return true;
    return false;
}

static void on_event(const Offerd__Agent__Event *ev, void *arg)
{
    struct agent *a = arg;
    switch (ev->type) {
    case OFFERD__AGENT__EVENT__TYPE__REGISTERED:
        handle_registered(a, ev->registered);
        break;
    case OFFERD__AGENT__EVENT__TYPE__RUN_TASK:
        if (ev->run_task != NULL)
            run_task(a, ev->run_task->framework_info, ev->run_task->task, NULL);
        break;
    case OFFERD__AGENT__EVENT__TYPE__RUN_TASK_GROUP:
        if (ev->run_task_group != NULL)
            run_task_group(a, ev->run_task_group);
        break;
    case OFFERD__AGENT__EVENT__TYPE__KILL_TASK:
        if (ev->kill_task != NULL)
            handle_kill(a, ev->kill_task);
        break;
    case OFFERD__AGENT__EVENT__TYPE__ACKNOWLEDGE:
        if (ev->acknowledge != NULL)
            handle_ack(a, ev->acknowledge);
        break;
    case OFFERD__AGENT__EVENT__TYPE__RECONCILE:
        if (ev->reconcile != NULL)
            reconcile(a, ev->reconcile->tasks, ev->reconcile->n_tasks);
        break;
    case OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_FRAMEWORK:
        if (ev->shutdown_framework != NULL)
            shutdown_framework(a, ev->shutdown_framework->framework_id->value);
        break;
    case OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_EXECUTOR:
        if (ev->shutdown_executor != NULL) {
            const char *fw = ev->shutdown_executor->framework_id->value;
            const char *ex = ev->shutdown_executor->executor_id->value;
            log_info("SHUTDOWN_EXECUTOR %s of framework %s", ex, fw);
            struct agent_task *t = agent_tasks_get(a->tasks, fw, ex);
            if (agent_execs_shutdown(a->execs, fw, ex) != 0 && t != NULL &&
                executor_of(t) == NULL)
                kill_task(a, t, NULL);
        }
        break;
    case OFFERD__AGENT__EVENT__TYPE__FRAMEWORK_MESSAGE:
        if (ev->framework_message != NULL) {
            const Offerd__Agent__Event__FrameworkMessage *m =
                ev->framework_message;
            if (agent_execs_message(a->execs, m->framework_id->value,
                                    m->executor_id->value, m->data.data,
                                    m->data.len) != 0)
                log_warn("FRAMEWORK_MESSAGE for executor %s of framework %s, "
                         "which is not subscribed here: dropped",
                         m->executor_id->value, m->framework_id->value);
        }
        break;
    case OFFERD__AGENT__EVENT__TYPE__UPDATE_FRAMEWORK:
        if (ev->update_framework != NULL &&
            ev->update_framework->framework_info->id != NULL) {
            const Mesos__V1__FrameworkInfo *fi =
                ev->update_framework->framework_info;
            if (hmap_get(a->frameworks, fi->id->value) != NULL)
                remember_framework(a, fi->id->value, fi);
        }
        break;
    case OFFERD__AGENT__EVENT__TYPE__CHECKPOINT_RESOURCES:
        if (ev->checkpoint_resources != NULL)
            handle_checkpoint_resources(a, ev->checkpoint_resources);
        break;
    case OFFERD__AGENT__EVENT__TYPE__SHUTDOWN: {
        const char *why = ev->shutdown != NULL && ev->shutdown->message != NULL
                              ? ev->shutdown->message
                              : "no reason given";
        char msg[512];
        snprintf(msg, sizeof(msg), "SHUTDOWN from the master: %s", why);
        agent_shutdown(a, msg);
        break;
    }
    case OFFERD__AGENT__EVENT__TYPE__ERROR:
        break; /* logged by the connection; the stream closes */
    default: {
        const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
            &offerd__agent__event__type__descriptor, (int)ev->type);
        log_warn("event %s is not supported: ignored", v ? v->name : "?");
        break;
    }
    }
}

static void on_disconnected(void *arg)
{
    struct agent *a = arg;
    agent_um_set_online(a->um, false, now_ns());
    reschedule_retry(a);
}

/* ---- SUBSCRIBE ---- */

static Offerd__Agent__Call *build_subscribe(void *arg)
{
    struct agent *a = arg;
    const struct agent_flags *af = a->cfg.flags;
    Offerd__Agent__Call *call = xmalloc(sizeof(*call));
    offerd__agent__call__init(call);
    call->type = OFFERD__AGENT__CALL__TYPE__SUBSCRIBE;
    Offerd__Agent__Call__Subscribe *s = xmalloc(sizeof(*s));
    offerd__agent__call__subscribe__init(s);
    call->subscribe = s;

    Mesos__V1__AgentInfo *ai = xmalloc(sizeof(*ai));
    mesos__v1__agent_info__init(ai);
    ai->hostname = xstrdup(af->hostname);
    ai->has_port = 1;
    ai->port = a->cfg.port;
    ai->resources = res_list_to_pb(a->cfg.resources, true, &ai->n_resources);
    ai->attributes = agent_attrs_to_pb(a->cfg.attributes, &ai->n_attributes);
    if (a->cfg.domain != NULL)
        ai->domain =
            jpb_copy(&mesos__v1__domain_info__descriptor, &a->cfg.domain->base);
    if (a->agent_id != NULL) {
        ai->id = xmalloc(sizeof(*ai->id));
        mesos__v1__agent_id__init(ai->id);
        ai->id->value = xstrdup(a->agent_id);
        call->agent_id = xmalloc(sizeof(*call->agent_id));
        mesos__v1__agent_id__init(call->agent_id);
        call->agent_id->value = xstrdup(a->agent_id);
    }
    s->agent_info = ai;

    s->address = xmalloc(sizeof(*s->address));
    mesos__v1__address__init(s->address);
    s->address->hostname = xstrdup(af->hostname);
    if (strcmp(af->ip, "0.0.0.0") != 0)
        s->address->ip = xstrdup(af->ip);
    s->address->port = a->cfg.port;
    s->version = xstrdup(OFFERD_VERSION);

    /* The checkpointed resources as the master sent them; the static
     * resources above stay what --resources (or detection) says. */
    s->checkpointed_resources =
        agent_vols_resources_pb(a->vols, &s->n_checkpointed_resources);
    s->has_checkpointed_resources_version = 1;
    s->checkpointed_resources_version = agent_vols_version(a->vols);

    static const Mesos__V1__AgentInfo__Capability__Type caps[] = {
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__MULTI_ROLE,
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__HIERARCHICAL_ROLE,
        MESOS__V1__AGENT_INFO__CAPABILITY__TYPE__RESERVATION_REFINEMENT,
    };
    s->n_capabilities = sizeof(caps) / sizeof(caps[0]);
    s->capabilities = xcalloc(s->n_capabilities, sizeof(*s->capabilities));
    for (size_t i = 0; i < s->n_capabilities; i++) {
        Mesos__V1__AgentInfo__Capability *c = xmalloc(sizeof(*c));
        mesos__v1__agent_info__capability__init(c);
        c->has_type = 1;
        c->type = caps[i];
        s->capabilities[i] = c;
    }

    /* Frameworks with tasks, every task held, pending updates. */
    size_t nf = hmap_count(a->frameworks), pos = 0, k = 0;
    s->frameworks = xcalloc(nf ? nf : 1, sizeof(*s->frameworks));
    void *val;
    while (hmap_next(a->frameworks, &pos, NULL, &val))
        s->frameworks[k++] =
            jpb_copy(&mesos__v1__framework_info__descriptor, val);
    s->n_frameworks = k;

    size_t nt = agent_tasks_count(a->tasks);
    s->tasks = xcalloc(nt ? nt : 1, sizeof(*s->tasks));
    pos = 0;
    k = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
        s->tasks[k++] = task_pb(a, t);
    s->n_tasks = k;

    size_t nx = agent_execs_count(a->execs);
    s->executors = xcalloc(nx ? nx : 1, sizeof(*s->executors));
    pos = 0;
    const char *xfw, *xsandbox;
    const Mesos__V1__ExecutorInfo *xinfo;
    while (agent_execs_next(a->execs, &pos, &xfw, &xinfo, &xsandbox))
        s->executors[s->n_executors++] =
            jpb_copy(&mesos__v1__executor_info__descriptor, &xinfo->base);

    struct collect c = {0};
    agent_um_foreach(a->um, collect_update, &c);
    collect_finish(&c);
    /* Tasks known only by their pending updates (e.g. the TASK_LOST this
     * agent answered for a task it never had) are not both terminal and
     * acknowledged either: reported too, in their newest state. */
    size_t extra = 0;
    for (size_t i = 0; i < c.n; i++) {
        const char *fwid = c.v[i].framework_id->value;
        const Mesos__V1__TaskStatus *st = c.v[i].status;
        if (agent_tasks_get(a->tasks, fwid, st->task_id->value) != NULL)
            continue;
        Mesos__V1__Task *m = NULL;
        for (size_t j = k; j < k + extra; j++)
            if (strcmp(s->tasks[j]->task_id->value, st->task_id->value) == 0 &&
                strcmp(s->tasks[j]->framework_id->value, fwid) == 0)
                m = s->tasks[j];
        if (m == NULL) {
            s->tasks =
                xreallocarray(s->tasks, k + extra + 1, sizeof(*s->tasks));
            m = xmalloc(sizeof(*m));
            mesos__v1__task__init(m);
            m->name = xstrdup(st->task_id->value);
            m->task_id =
                jpb_copy(&mesos__v1__task_id__descriptor, &st->task_id->base);
            m->framework_id = jpb_copy(&mesos__v1__framework_id__descriptor,
                                       &c.v[i].framework_id->base);
            m->agent_id = xmalloc(sizeof(*m->agent_id));
            mesos__v1__agent_id__init(m->agent_id);
            m->agent_id->value = xstrdup(a->agent_id ? a->agent_id : "");
            m->has_status_update_state = 1;
            m->status_update_state = st->state;
            m->has_status_update_uuid = 1;
            m->status_update_uuid.len = st->uuid.len;
            m->status_update_uuid.data = xmemdup(st->uuid.data, st->uuid.len);
            s->tasks[k + extra] = m;
            extra++;
        }
        m->state = st->state; /* the newest pending one wins */
    }
    s->n_tasks = k + extra;
    s->unacknowledged_updates =
        xcalloc(c.n ? c.n : 1, sizeof(*s->unacknowledged_updates));
    for (size_t i = 0; i < c.n; i++) {
        Offerd__Agent__Call__Update *u = xmalloc(sizeof(*u));
        offerd__agent__call__update__init(u);
        u->framework_id = jpb_copy(&mesos__v1__framework_id__descriptor,
                                   &c.v[i].framework_id->base);
        u->status =
            jpb_copy(&mesos__v1__task_status__descriptor, &c.v[i].status->base);
        s->unacknowledged_updates[i] = u;
    }
    s->n_unacknowledged_updates = c.n;
    free(c.v);
    free(c.fids);

    log_info("subscribing as %s with %zu task(s), %zu pending update(s) and "
             "checkpointed resources version %llu",
             a->agent_id != NULL ? a->agent_id : "a new agent", s->n_tasks,
             s->n_unacknowledged_updates,
             (unsigned long long)s->checkpointed_resources_version);
    return call;
}

/* ---- Recovery ---- */

struct rec_counts {
    size_t attached, ended, interrupted, terminal, forgotten, updates;
};

struct rec_order {
    const struct agent_ckpt_task *t;
    double oldest; /* timestamp of its oldest pending update */
    size_t index;  /* its place in the checkpoint's order */
};

/* By oldest pending update, so that the resends after registering keep
 * the order the updates were made in across tasks too; tasks without
 * pending updates last. */
static int by_oldest_update(const void *x, const void *y)
{
    const struct rec_order *a = x, *b = y;
    if (a->oldest != b->oldest)
        return a->oldest < b->oldest ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* A TaskInfo for a recovered task (owned): its checkpointed one, else
 * rebuilt from its checkpointed Task, else the bare ids. */
static Mesos__V1__TaskInfo *recovered_info(const struct agent *a,
                                           const struct agent_ckpt_task *ct)
{
    if (ct->info != NULL)
        return jpb_copy(&mesos__v1__task_info__descriptor, &ct->info->base);
    const Mesos__V1__Task *tk = ct->task;
    Mesos__V1__TaskInfo *ti = xmalloc(sizeof(*ti));
    mesos__v1__task_info__init(ti);
    ti->name = xstrdup(tk != NULL ? tk->name : ct->task_id);
    ti->task_id = xmalloc(sizeof(*ti->task_id));
    mesos__v1__task_id__init(ti->task_id);
    ti->task_id->value = xstrdup(ct->task_id);
    ti->agent_id = xmalloc(sizeof(*ti->agent_id));
    mesos__v1__agent_id__init(ti->agent_id);
    ti->agent_id->value = xstrdup(tk != NULL            ? tk->agent_id->value
                                  : a->agent_id != NULL ? a->agent_id
                                                        : "");
    if (tk != NULL && tk->n_resources > 0) {
        ti->n_resources = tk->n_resources;
        ti->resources = xcalloc(tk->n_resources, sizeof(*ti->resources));
        for (size_t i = 0; i < tk->n_resources; i++)
            ti->resources[i] = jpb_copy(&mesos__v1__resource__descriptor,
                                        &tk->resources[i]->base);
    }
    if (tk != NULL && tk->labels != NULL)
        ti->labels =
            jpb_copy(&mesos__v1__labels__descriptor, &tk->labels->base);
    if (tk != NULL && tk->kill_policy != NULL)
        ti->kill_policy = jpb_copy(&mesos__v1__kill_policy__descriptor,
                                   &tk->kill_policy->base);
    return ti;
}

/* Put back one checkpointed task (see recovery.h for the rules). */
static void recover_task(struct agent *a, const struct agent_ckpt_task *ct,
                         struct rec_counts *n)
{
    const char *fw = ct->framework_id;
    const char *task_id = ct->task_id;
    /* Its pending updates first, oldest first: any new update follows. */
    for (size_t i = 0; i < ct->nupdates; i++)
        agent_um_add(a->um, fw,
                     jpb_copy(&mesos__v1__task_status__descriptor,
                              &ct->updates[i]->status->base),
                     now_ns());
    n->updates += ct->nupdates;

    struct agent_rec_plan p;
    agent_rec_plan(ct, &p);
    /* A task of a custom executor has no process of its own (the sandbox
     * is its executor's): it is put back as it was, and fails below when
     * its executor did not come back. */
    const Mesos__V1__ExecutorInfo *cex =
        ct->info != NULL ? ct->info->executor : NULL;
    if (cex != NULL &&
        (p.action == AGENT_REC_ATTACH || p.action == AGENT_REC_ENDED ||
         p.action == AGENT_REC_INTERRUPTED)) {
        p.action = AGENT_REC_TERMINAL;
        p.sup_pid = 0;
        p.task_pid = 0;
    }
    log_info("recovery: task %s of framework %s (%s, %zu pending "
             "update(s)): %s",
             task_id, fw,
             ct->has_state ? task_state_name(ct->state) : "state unknown",
             ct->nupdates, agent_rec_action_name(p.action));
    if (p.action == AGENT_REC_FORGET) {
        agent_ckpt_remove_task(a->ckpt, fw, task_id);
        n->forgotten++;
        return;
    }
    if (p.action == AGENT_REC_UPDATES_ONLY)
        return;
    if (p.action == AGENT_REC_INTERRUPTED || p.action == AGENT_REC_ENDED) {
        /* What still runs of it would make the report a lie. */
        if (p.task_pid > 0)
            kill(-p.task_pid, SIGKILL);
        if (p.sup_pid > 0)
            kill(p.sup_pid, SIGKILL);
    }
    if (p.action == AGENT_REC_INTERRUPTED && ct->info == NULL &&
        ct->task == NULL) {
        /* Only the directory: an update without a task record. */
        report(a, fw, task_id, NULL, MESOS__V1__TASK_STATE__TASK_FAILED,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_RESTARTED,
               p.message);
        n->interrupted++;
        return;
    }

    struct agent_task_restore r;
    memset(&r, 0, sizeof(r));
    r.phase = AGENT_TASK_ENDED;
    r.sandbox = ct->sandbox;
    if (p.action == AGENT_REC_ATTACH) {
        r.phase = p.task_pid > 0 ? AGENT_TASK_RUNNING : AGENT_TASK_LAUNCHING;
        r.sup_pid = p.sup_pid;
        r.task_pid = p.task_pid;
    }
    if (ct->has_kill) {
        int64_t left = ct->kill.deadline_wall_ns - clock_wall_ns();
        r.kill_requested = true;
        r.kill_grace_ns = left < 0                   ? 0
                          : left > ct->kill.grace_ns ? ct->kill.grace_ns
                                                     : left;
        r.kill_during_launch = ct->kill.during_launch;
    }
    Mesos__V1__TaskInfo *info = recovered_info(a, ct);
    struct agent_task *t = agent_tasks_restore(a->tasks, fw, info, &r);
    jpb_free(&info->base);
    if (t == NULL)
        return; /* directory names are unique: cannot happen */
    if (ct->has_kill && ct->kill.has_reason) {
        t->has_kill_reason = true;
        t->kill_reason = (Mesos__V1__TaskStatus__Reason)ct->kill.reason;
    }
    t->state = ct->has_state ? ct->state : MESOS__V1__TASK_STATE__TASK_STAGING;
    const Mesos__V1__TaskStatus *last =
        ct->nupdates > 0 ? ct->updates[ct->nupdates - 1]->status
        : ct->task != NULL && ct->task->n_statuses > 0
            ? ct->task->statuses[ct->task->n_statuses - 1]
            : NULL;
    if (last != NULL)
        t->last_status =
            jpb_copy(&mesos__v1__task_status__descriptor, &last->base);
    agent_task_note_state(t, t->state,
                          last != NULL && last->has_timestamp
                              ? last->timestamp
                              : clock_wall_secs());
    if (ct->sandbox != NULL) {
        const char *slash = strrchr(ct->sandbox, '/');
        snprintf(t->run_id, sizeof(t->run_id), "%s",
                 slash != NULL ? slash + 1 : ct->sandbox);
    }

    switch (p.action) {
    case AGENT_REC_TERMINAL:
        n->terminal++;
        if (cex != NULL && !task_state_is_terminal(t->state) &&
            agent_execs_info(a->execs, fw, cex->executor_id->value, NULL) ==
                NULL)
            report(a, fw, task_id, t, MESOS__V1__TASK_STATE__TASK_FAILED,
                   MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
                   MESOS__V1__TASK_STATUS__REASON__REASON_EXECUTOR_TERMINATED,
                   "The task's executor ended while the agent was down");
        break;
    case AGENT_REC_ATTACH:
        n->attached++;
        if (t->kill_requested)
            break; /* the kill decides its state */
        if (t->phase == AGENT_TASK_RUNNING &&
            (t->state == MESOS__V1__TASK_STATE__TASK_STAGING ||
             t->state == MESOS__V1__TASK_STATE__TASK_STARTING))
            report(a, fw, task_id, t, MESOS__V1__TASK_STATE__TASK_RUNNING,
                   MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR, false, 0,
                   NULL);
        else if (t->state == MESOS__V1__TASK_STATE__TASK_STAGING)
            report(a, fw, task_id, t, MESOS__V1__TASK_STATE__TASK_STARTING,
                   MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR, false, 0,
                   NULL);
        if (t->phase == AGENT_TASK_RUNNING &&
            t->state == MESOS__V1__TASK_STATE__TASK_RUNNING)
            agent_health_start(a->health, t, a->agent_id);
        break;
    case AGENT_REC_ENDED: {
        n->ended++;
        struct agent_task_end end;
        memset(&end, 0, sizeof(end));
        end.has_status = p.has_status;
        end.wait_status = p.wait_status;
        snprintf(end.message, sizeof(end.message), "%s", p.message);
        report_end(a, t, &end);
        break;
    }
    case AGENT_REC_INTERRUPTED:
        n->interrupted++;
        report(a, fw, task_id, t, MESOS__V1__TASK_STATE__TASK_FAILED,
               MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
               MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_RESTARTED,
               p.message);
        break;
    default:
        break;
    }
}

/* Read the checkpoint and put back every task, its framework and its
 * pending updates, before the first subscription (which carries them). */
static void recover(struct agent *a)
{
    /* The checkpointed resources first: volumes awaiting removal are
     * removed only once every task is back (recovering). */
    size_t vol_problems = agent_vols_recover(a->vols);
    a->recovering = true;
    /* Executors before their tasks: a task whose executor is back keeps
     * its state. */
    size_t nexecs = agent_execs_recover(a->execs);
    if (nexecs > 0)
        log_info("recovery: %zu executor(s) re-attached", nexecs);
    struct agent_ckpt_state st;
    agent_ckpt_read(a->ckpt, &st);
    for (size_t i = 0; i < st.nframeworks; i++)
        if (st.frameworks[i].info != NULL)
            hmap_put(a->frameworks, st.frameworks[i].id,
                     jpb_copy(&mesos__v1__framework_info__descriptor,
                              &st.frameworks[i].info->base));

    struct rec_order *order =
        xcalloc(st.ntasks ? st.ntasks : 1, sizeof(*order));
    for (size_t i = 0; i < st.ntasks; i++) {
        order[i].t = &st.tasks[i];
        order[i].index = i;
        order[i].oldest = st.tasks[i].nupdates > 0 &&
                                  st.tasks[i].updates[0]->status->has_timestamp
                              ? st.tasks[i].updates[0]->status->timestamp
                              : HUGE_VAL;
    }
    qsort(order, st.ntasks, sizeof(*order), by_oldest_update);
    struct rec_counts n;
    memset(&n, 0, sizeof(n));
    for (size_t i = 0; i < st.ntasks; i++)
        recover_task(a, order[i].t, &n);
    free(order);

    /* Frameworks: those of the tasks held (a lost FrameworkInfo is made up
     * from the id); the others are forgotten, and their directories too
     * when no task directory is left in them. */
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL) {
        if (hmap_get(a->frameworks, t->framework_id) != NULL)
            continue;
        log_warn("recovery: framework %s has no readable FrameworkInfo: "
                 "using its id alone",
                 t->framework_id);
        Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
        Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
        fid.value = t->framework_id;
        fi.id = &fid;
        fi.user = a->user != NULL ? a->user : "";
        fi.name = "";
        remember_framework(a, t->framework_id, &fi);
    }
    for (size_t i = 0; i < st.nframeworks; i++) {
        const char *fw = st.frameworks[i].id;
        if (framework_has_tasks(a, fw))
            continue;
        void *fi = hmap_del(a->frameworks, fw);
        if (fi != NULL)
            framework_free(fi);
        bool has_dirs = false;
        for (size_t k = 0; k < st.ntasks && !has_dirs; k++)
            has_dirs = strcmp(st.tasks[k].framework_id, fw) == 0;
        if (!has_dirs)
            agent_ckpt_remove_framework(a->ckpt, fw);
    }
    a->recovering = false;
    agent_vols_collect(a->vols);
    st.problems += vol_problems;
    if (st.ntasks > 0 || st.problems > 0)
        log_info("recovered %zu task(s): %zu re-attached, %zu ended while "
                 "the agent was down, %zu launch(es) cut short, %zu terminal "
                 "awaiting acknowledgement, %zu forgotten; %zu pending "
                 "update(s); %zu checkpoint problem(s)",
                 st.ntasks, n.attached, n.ended, n.interrupted, n.terminal,
                 n.forgotten, n.updates, st.problems);
    agent_ckpt_state_clear(&st);
}

/* ---- Shutdown ---- */

/* The end of a shutdown: forget the checkpoint in cleanup mode, stop the
 * loop. */
static void shutdown_done(struct agent *a)
{
    if (a->cleanup) {
        if (agent_ckpt_remove_all(a->ckpt) != 0)
            log_error("--recover=cleanup: could not remove all of %s",
                      agent_ckpt_dir(a->ckpt));
        else
            log_info("--recover=cleanup: checkpoint removed; the next start "
                     "registers as a new agent");
    }
    event_del(a->shutdown_timer);
    event_base_loopexit(a->base, NULL);
}

static void on_shutdown_poll(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    (void)fd;
    (void)what;
    int64_t now = now_ns();
    size_t live = agent_tasks_live(a->tasks) + agent_execs_count(a->execs);
    if (live > 0 && now < a->shutdown_deadline)
        return;
    if (live > 0) {
        log_warn("%zu task(s) still alive at the shutdown timeout: killing "
                 "them",
                 live);
        size_t pos = 0;
        struct agent_task *t;
        while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
            agent_tasks_kill_now(a->tasks, t);
        agent_execs_kill_now(a->execs);
        shutdown_done(a);
        return;
    }
    if (a->drain_until == 0)
        a->drain_until = now + SHUTDOWN_DRAIN_NS;
    if (agent_conn_inflight(a->conn) > 0 && now < a->drain_until)
        return;
    log_info("every task is gone: exiting");
    shutdown_done(a);
}

void agent_shutdown(struct agent *a, const char *why)
{
    if (a->shutting_down)
        return;
    a->shutting_down = true;
    agent_oversub_stop(a->oversub);
    log_info("shutting down (%s): killing %zu task(s)", why,
             agent_tasks_live(a->tasks));
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL)
        if (executor_of(t) == NULL)
            kill_task(a, t, NULL);
    agent_execs_shutdown_all(a->execs, NULL);
    a->shutdown_deadline = now_ns() + a->cfg.flags->shutdown_timeout_ns;
    struct timeval tv = {0, SHUTDOWN_POLL_MS * 1000};
    event_add(a->shutdown_timer, &tv);
}

/* ---- Oversubscription (oversub.h) ---- */

static int send_oversub_call(Offerd__Agent__Call *call, void *arg)
{
    struct agent *a = arg;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    call->agent_id = a->agent_id != NULL ? &aid : NULL;
    int rc = agent_conn_send(a->conn, call);
    call->agent_id = NULL;
    return rc;
}

static void evict_task(struct agent_task *t, const char *why, void *arg)
{
    struct agent *a = arg;
    (void)why; /* logged by the QoS controller */
    if (a->shutting_down)
        return;
    kill_task_for(a, t, NULL,
                  MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED);
}

/* ---- Custom executors (executors.h) ---- */

/* An executor's status update: recorded and sent as the agent's own are.
 * One the agent holds already (re-sent on a re-subscription) is dropped;
 * one acknowledged already is acknowledged to the executor again. */
static void on_exec_update(const char *fw, const char *ex,
                           const Mesos__V1__TaskStatus *st, void *arg)
{
    struct agent *a = arg;
    const char *task_id = st->task_id->value;
    struct agent_task *t = agent_tasks_get(a->tasks, fw, task_id);
    if (t == NULL || executor_of(t) == NULL ||
        strcmp(executor_of(t), ex) != 0) {
        log_warn("UPDATE %s from executor %s of framework %s for task %s, "
                 "which is not its task: dropped",
                 task_state_name(st->state), ex, fw, task_id);
        return;
    }
    struct collect c = {0};
    agent_um_foreach_task(a->um, fw, task_id, collect_update, &c);
    bool dup = false;
    for (size_t i = 0; i < c.n && !dup; i++)
        dup =
            c.v[i].status->uuid.len == st->uuid.len &&
            memcmp(c.v[i].status->uuid.data, st->uuid.data, st->uuid.len) == 0;
    free(c.v);
    free(c.fids);
    if (dup)
        return;
    if (t->last_status != NULL && t->last_status->uuid.len == st->uuid.len &&
        memcmp(t->last_status->uuid.data, st->uuid.data, st->uuid.len) == 0) {
        agent_execs_acknowledged(a->execs, fw, ex, task_id, st->uuid.data,
                                 st->uuid.len);
        return;
    }
    if (task_state_is_terminal(t->state)) {
        log_warn("UPDATE %s from executor %s for task %s, which is %s "
                 "already: dropped",
                 task_state_name(st->state), ex, task_id,
                 task_state_name(t->state));
        return;
    }
    Mesos__V1__TaskStatus tmp = *st;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    if (a->agent_id != NULL)
        tmp.agent_id = &aid;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = (char *)ex;
    tmp.executor_id = &eid;
    if (!tmp.has_timestamp) {
        tmp.has_timestamp = 1;
        tmp.timestamp = clock_wall_secs();
    }
    Mesos__V1__TaskStatus *copy =
        jpb_copy(&mesos__v1__task_status__descriptor, &tmp.base);
    t->state = st->state;
    agent_task_note_state(t, st->state, copy->timestamp);
    if (t->last_status != NULL)
        jpb_free(&t->last_status->base);
    t->last_status = jpb_copy(&mesos__v1__task_status__descriptor, &copy->base);
    log_info("task %s of framework %s is %s (executor %s)", task_id, fw,
             task_state_name(st->state), ex);
    agent_um_add(a->um, fw, copy, now_ns());
    checkpoint_task(a, fw, task_id, t);
    reschedule_retry(a);
}

static void on_exec_message(const char *fw, const char *ex, const uint8_t *data,
                            size_t len, void *arg)
{
    struct agent *a = arg;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = (char *)ex;
    Offerd__Agent__Call__ExecutorMessage m =
        OFFERD__AGENT__CALL__EXECUTOR_MESSAGE__INIT;
    m.framework_id = &fid;
    m.executor_id = &eid;
    m.data.data = (uint8_t *)data;
    m.data.len = len;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__EXECUTOR_MESSAGE;
    call.agent_id = a->agent_id != NULL ? &aid : NULL;
    call.executor_message = &m;
    if (agent_conn_send(a->conn, &call) != 0)
        log_warn("MESSAGE from executor %s of framework %s: not sent (no "
                 "master)",
                 ex, fw);
}

/* The executor is gone: its unfinished tasks fail, the master hears. */
static void on_exec_exited(const char *fw, const char *ex,
                           const struct agent_exec_end *end, void *arg)
{
    struct agent *a = arg;
    size_t pos = 0;
    struct agent_task *t;
    while ((t = agent_tasks_next(a->tasks, &pos)) != NULL) {
        if (executor_of(t) == NULL || strcmp(executor_of(t), ex) != 0 ||
            strcmp(t->framework_id, fw) != 0 ||
            task_state_is_terminal(t->state))
            continue;
        report(
            a, fw, t->task_id, t, MESOS__V1__TASK_STATE__TASK_FAILED,
            MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT, true,
            end->registration_timeout
                ? MESOS__V1__TASK_STATUS__REASON__REASON_EXECUTOR_REGISTRATION_TIMEOUT
                : MESOS__V1__TASK_STATUS__REASON__REASON_EXECUTOR_TERMINATED,
            end->message);
    }
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = a->agent_id;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = (char *)ex;
    Offerd__Agent__Call__ExecutorExited x =
        OFFERD__AGENT__CALL__EXECUTOR_EXITED__INIT;
    x.framework_id = &fid;
    x.executor_id = &eid;
    x.has_status = end->has_status;
    x.status = end->wait_status;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED;
    call.agent_id = a->agent_id != NULL ? &aid : NULL;
    call.executor_exited = &x;
    agent_conn_send(a->conn, &call);
    if (end->info != NULL)
        agent_completed_executor_exited(a->completed, fw, end->framework,
                                        end->info, end->sandbox);
    agent_completed_settle(a->completed, fw, a->tasks, a->execs);
}

/* ---- Life ---- */

static char *own_user(void)
{
    char buf[4096];
    struct passwd pw, *res = NULL;
    if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) == 0 && res != NULL)
        return xstrdup(res->pw_name);
    return NULL;
}

struct agent *agent_new(struct event_base *base, const struct agent_config *cfg,
                        char *err, size_t errlen)
{
    struct agent *a = xcalloc(1, sizeof(*a));
    a->base = base;
    a->cfg = *cfg;
    a->start_time = clock_wall_secs();
    a->user = own_user();
    if (cfg->flags->master != NULL)
        snprintf(a->master, sizeof(a->master), "%s", cfg->flags->master);
    else
        snprintf(a->master, sizeof(a->master), "%s:%u", cfg->flags->master_ip,
                 (unsigned)cfg->flags->master_port);
    a->frameworks = hmap_new();
    a->completed = agent_completed_new(
        (size_t)a->cfg.flags->max_completed_executors_per_framework,
        (size_t)a->cfg.flags->max_completed_frameworks);
    a->sandbox_root = agent_sandbox_root(cfg->work_dir);
    a->fetch_cache_dir = cfg->flags->launch.fetcher_cache_dir != NULL
                             ? xstrdup(cfg->flags->launch.fetcher_cache_dir)
                             : xasprintf("%s/fetch", cfg->work_dir);
    if (agent_fetch_cache_reset(a->fetch_cache_dir, err, errlen) != 0)
        goto fail;
    snprintf(a->endpoint, sizeof(a->endpoint), "%s:%u",
             strcmp(cfg->flags->ip, "0.0.0.0") != 0 ? cfg->flags->ip
                                                    : cfg->flags->hostname,
             (unsigned)cfg->port);
    a->ckpt = agent_ckpt_new(cfg->work_dir, err, errlen);
    if (a->ckpt == NULL)
        goto fail;
    char id[256];
    int rc = agent_ckpt_load_agent_id(a->ckpt, id, sizeof(id), err, errlen);
    if (rc < 0)
        log_error("checkpoint: %s: registering as a new agent", err);
    if (rc == 1) {
        a->agent_id = xstrdup(id);
        log_info("checkpointed agent id: %s", id);
    }
    a->vols = agent_vols_new(cfg->work_dir, a->ckpt, volume_in_use, a);
    a->um = agent_um_new(cfg->flags->update_retry_min_ns,
                         cfg->flags->update_retry_max_ns, send_update, a);
    struct agent_health_cbs hcbs = {on_health_update, on_health_kill, a};
    a->health = agent_health_new(base, &hcbs);
    struct agent_execs_config xc = {
        .work_dir = cfg->work_dir,
        .agent_endpoint = a->endpoint,
        .registration_timeout_ns = cfg->flags->executor_registration_timeout_ns,
        .reregistration_timeout_ns =
            cfg->flags->executor_reregistration_timeout_ns,
        .shutdown_grace_ns = cfg->flags->executor_shutdown_grace_period_ns,
        .heartbeat_interval_ns = AGENT_EXECS_HEARTBEAT_NS,
        .lf = &cfg->flags->launch,
        .cache_dir = a->fetch_cache_dir,
        .exec_auth = cfg->exec_auth,
    };
    struct agent_execs_cbs xcbs = {on_exec_update, on_exec_message,
                                   on_exec_exited, a};
    a->execs = agent_execs_new(base, &xc, &xcbs);
    struct agent_tasks_cbs tcbs = {on_task_running, on_task_ended, a};
    a->tasks = agent_tasks_new(base, &tcbs);
    if (a->tasks == NULL) {
        snprintf(err, errlen, "cannot watch SIGCHLD");
        goto fail;
    }
    struct agent_conn_config cc = {
        .master_ip = cfg->flags->master_ip,
        .master_port = cfg->flags->master_port,
        .master = cfg->flags->master, /* followed through master_detect */
        .backoff_factor_ns = cfg->flags->registration_backoff_factor_ns,
        .backoff_max_ns = cfg->flags->registration_backoff_max_ns,
        .authorization = cfg->master_authorization,
    };
    struct agent_conn_cbs ccbs = {build_subscribe, on_event, on_disconnected,
                                  a};
    a->conn = agent_conn_new(base, &cc, &ccbs);
    if (a->conn == NULL) {
        snprintf(err, errlen, "--master: cannot follow '%s'",
                 cfg->flags->master);
        goto fail;
    }
    a->iso = agent_iso_new(base, &cfg->flags->iso, NULL, cfg->work_dir,
                           a->tasks, err, errlen);
    if (a->iso == NULL)
        goto fail;
    struct agent_oversub_config oc = {cfg->flags, "/proc", a->iso};
    struct agent_oversub_cbs ocbs = {send_oversub_call, evict_task, a};
    a->oversub = agent_oversub_new(base, &oc, a->tasks, &ocbs, err, errlen);
    if (a->oversub == NULL)
        goto fail;
    a->retry_timer = evtimer_new(base, on_retry_timer, a);
    a->shutdown_timer = event_new(base, -1, EV_PERSIST, on_shutdown_poll, a);
    return a;
fail:
    agent_free(a);
    return NULL;
}

void agent_start(struct agent *a)
{
    recover(a);
    agent_iso_recover(a->iso);
    agent_iso_start(a->iso);
    if (a->cfg.flags->recover_cleanup) {
        a->cleanup = true;
        agent_shutdown(a, "--recover=cleanup: killing the recovered tasks");
        return;
    }
    agent_oversub_start(a->oversub);
    agent_conn_start(a->conn);
}

void agent_state_view_of(const struct agent *a, struct agent_state_view *out)
{
    struct agent_state_view v = {
        .agent_id = a->agent_id,
        .hostname = a->cfg.flags->hostname,
        .ip = a->cfg.flags->ip,
        .port = a->cfg.port,
        .master = a->master,
        .start_time = a->start_time,
        .resources = a->cfg.resources,
        .attributes = a->cfg.attributes,
        .domain = a->cfg.domain,
        .flags = agent_flags_object(a->cfg.flags),
        .frameworks = a->frameworks,
        .tasks = a->tasks,
        .execs = a->execs,
        .checkpointed = agent_vols_resources(a->vols),
        .checkpointed_version = agent_vols_version(a->vols),
        .iso = a->iso,
        .completed = a->completed,
    };
    *out = v;
}

json_t *agent_state(const struct agent *a)
{
    struct agent_state_view v;
    agent_state_view_of(a, &v);
    return agent_state_json(&v);
}

int agent_routes(struct agent *a, struct http_server *srv)
{
    return agent_exec_api_register(srv, a->execs);
}

void agent_free(struct agent *a)
{
    if (a == NULL)
        return;
    agent_conn_free(a->conn);
    agent_execs_free(a->execs);
    agent_oversub_free(a->oversub);
    agent_iso_free(a->iso);
    agent_health_free(a->health);
    agent_tasks_free(a->tasks);
    agent_um_free(a->um);
    hmap_free(a->frameworks, framework_free);
    agent_completed_free(a->completed);
    agent_vols_free(a->vols);
    agent_ckpt_free(a->ckpt);
    if (a->retry_timer != NULL)
        event_free(a->retry_timer);
    if (a->shutdown_timer != NULL)
        event_free(a->shutdown_timer);
    free(a->sandbox_root);
    free(a->fetch_cache_dir);
    free(a->agent_id);
    free(a->user);
    free(a);
}
