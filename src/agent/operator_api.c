/*
 * POST /api/v1 on the agent: decode a mesos.v1.agent.Call, build the
 * Response from a fresh view of the agent, encode it as asked.
 *
 * Responses are built as heap messages (every sub-message and string
 * allocated here or copied with jpb_copy) and released in one
 * protobuf_c_message_free_unpacked, as unpacked messages are; nothing in a
 * Response is borrowed from the agent.
 */
#include "agent/isolator.h"
#include "agent/operator_api.h"

#include "agent/executors.h"

#include "agent/attributes.h"
#include "agent/auth_agent.h"
#include "agent/tasks.h"
#include "agent/usage.h"
#include "agent/viewer.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/log_toggle.h"
#include "common/mem.h"
#include "common/resources_pb.h"
#include "common/task_state.h"
#include "mesos/v1/agent.pb-c.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent_opapi {
    const struct files *files; /* borrowed */
    char *proc_root;
    void (*view)(void *arg, struct agent_state_view *out);
    void *arg;
    struct log_toggle *toggle;     /* borrowed; NULL: no SET_LOGGING_LEVEL */
    const struct agent_auth *auth; /* borrowed; NULL: no filtering */
};

typedef Mesos__V1__Agent__Response Response;

/* A growing array of message pointers, handed to a repeated field. */
struct ptrs {
    void **v;
    size_t n;
};

static void ptrs_push(struct ptrs *p, void *x)
{
    p->v = xreallocarray(p->v, p->n + 1, sizeof(*p->v));
    p->v[p->n++] = x;
}

/* The array (NULL when empty) and its length in *n; p is emptied. */
static void *ptrs_take(struct ptrs *p, size_t *n)
{
    void *v = p->v;
    *n = p->n;
    p->v = NULL;
    p->n = 0;
    return v;
}

/* A new message of desc's type, initialized; it is freed with the
 * Response it is put in. */
static void *msg_new(const ProtobufCMessageDescriptor *desc)
{
    void *m = xmalloc(desc->sizeof_message);
    protobuf_c_message_init(desc, m);
    return m;
}

static Response *response_new(Mesos__V1__Agent__Response__Type type)
{
    Response *r = msg_new(&mesos__v1__agent__response__descriptor);
    r->has_type = true;
    r->type = type;
    return r;
}

/* ---- Building blocks ---------------------------------------------------- */

static Mesos__V1__FrameworkID *framework_id(const char *id)
{
    Mesos__V1__FrameworkID *f = msg_new(&mesos__v1__framework_id__descriptor);
    f->value = xstrdup(id);
    return f;
}

static Mesos__V1__ExecutorID *executor_id(const char *id)
{
    Mesos__V1__ExecutorID *e = msg_new(&mesos__v1__executor_id__descriptor);
    e->value = xstrdup(id);
    return e;
}

static Mesos__V1__TaskID *task_id(const char *id)
{
    Mesos__V1__TaskID *t = msg_new(&mesos__v1__task_id__descriptor);
    t->value = xstrdup(id);
    return t;
}

/* Copies of the task's resources (n_out entries). */
static Mesos__V1__Resource **task_resources(const struct agent_task *t,
                                            size_t *n_out)
{
    size_t n = t->info->n_resources;
    *n_out = n;
    if (n == 0)
        return NULL;
    Mesos__V1__Resource **v = xcalloc(n, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = jpb_copy(&mesos__v1__resource__descriptor,
                        &t->info->resources[i]->base);
    return v;
}

/* The sum of the task's scalar resource name (0 when none). */
static double task_scalar(const struct agent_task *t, const char *name)
{
    double sum = 0;
    for (size_t i = 0; i < t->info->n_resources; i++) {
        const Mesos__V1__Resource *r = t->info->resources[i];
        if (r->name != NULL && strcmp(r->name, name) == 0 && r->scalar != NULL)
            sum += r->scalar->value;
    }
    return sum;
}

static bool task_is_live(const struct agent_task *t)
{
    return t->phase == AGENT_TASK_LAUNCHING || t->phase == AGENT_TASK_RUNNING;
}

/* The task as Mesos's v1 Task (executor id = task id, as /state). */
static Mesos__V1__Task *task_msg(const struct agent_task *t,
                                 const char *agent_id)
{
    Mesos__V1__Task *m = msg_new(&mesos__v1__task__descriptor);
    m->name = xstrdup(t->info->name != NULL ? t->info->name : "");
    m->task_id = task_id(t->task_id);
    m->framework_id = framework_id(t->framework_id);
    m->executor_id = executor_id(t->info->executor != NULL
                                     ? t->info->executor->executor_id->value
                                     : t->task_id);
    m->agent_id = msg_new(&mesos__v1__agent_id__descriptor);
    m->agent_id->value = xstrdup(agent_id != NULL ? agent_id : "");
    m->state = t->state;
    m->resources = task_resources(t, &m->n_resources);
    if (t->nstates > 0) {
        m->statuses = xcalloc(t->nstates, sizeof(*m->statuses));
        m->n_statuses = t->nstates;
        for (size_t i = 0; i < t->nstates; i++) {
            Mesos__V1__TaskStatus *s =
                msg_new(&mesos__v1__task_status__descriptor);
            s->task_id = task_id(t->task_id);
            s->state = t->states[i].state;
            s->has_timestamp = true;
            s->timestamp = t->states[i].timestamp;
            m->statuses[i] = s;
        }
    }
    return m;
}

static Mesos__V1__ExecutorInfo *executor_msg(const struct agent_task *t)
{
    Mesos__V1__ExecutorInfo *e = msg_new(&mesos__v1__executor_info__descriptor);
    e->executor_id = executor_id(t->task_id);
    e->framework_id = framework_id(t->framework_id);
    e->name = xasprintf("Command Executor (Task: %s)", t->task_id);
    e->source = xstrdup(t->task_id);
    e->resources = task_resources(t, &e->n_resources);
    return e;
}

/* The framework's info as the agent knows it, with its id set; a framework
 * the agent has no info for gets empty user and name. */
static Mesos__V1__FrameworkInfo *framework_msg(const struct agent_state_view *v,
                                               const char *id)
{
    const Mesos__V1__FrameworkInfo *fi = hmap_get(v->frameworks, id);
    Mesos__V1__FrameworkInfo *m;
    if (fi != NULL) {
        m = jpb_copy(&mesos__v1__framework_info__descriptor, &fi->base);
    } else {
        m = msg_new(&mesos__v1__framework_info__descriptor);
        m->user = xstrdup("");
        m->name = xstrdup("");
    }
    if (m->id == NULL)
        m->id = framework_id(id);
    return m;
}

/* ---- The calls ---------------------------------------------------------- */

static Response *get_health(void)
{
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_HEALTH);
    r->get_health =
        msg_new(&mesos__v1__agent__response__get_health__descriptor);
    r->get_health->healthy = true;
    return r;
}

static Response *get_flags(const struct agent_state_view *v)
{
    /* The values /flags shows: one source of truth (common/flags). */
    json_t *j = flags_to_json(v->flags);
    struct ptrs flags = {0};
    const char *name;
    json_t *val;
    json_object_foreach(json_object_get(j, "flags"), name, val)
    {
        Mesos__V1__Flag *f = msg_new(&mesos__v1__flag__descriptor);
        f->name = xstrdup(name);
        if (json_is_string(val))
            f->value = xstrdup(json_string_value(val));
        ptrs_push(&flags, f);
    }
    json_decref(j);
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_FLAGS);
    r->get_flags = msg_new(&mesos__v1__agent__response__get_flags__descriptor);
    r->get_flags->flags = ptrs_take(&flags, &r->get_flags->n_flags);
    return r;
}

static Response *get_version(void)
{
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_VERSION);
    r->get_version =
        msg_new(&mesos__v1__agent__response__get_version__descriptor);
    r->get_version->version_info =
        msg_new(&mesos__v1__version_info__descriptor);
    r->get_version->version_info->version = xstrdup(OFFERD_VERSION);
    return r;
}

static void metric(struct ptrs *p, const char *name, double value)
{
    Mesos__V1__Metric *m = msg_new(&mesos__v1__metric__descriptor);
    m->name = xstrdup(name);
    m->has_value = true;
    m->value = value;
    ptrs_push(p, m);
}

static void metric_cb(void *arg, const char *name, double value)
{
    metric(arg, name, value);
}

static Response *get_metrics(const struct agent_state_view *v)
{
    struct ptrs ms = {0};
    agent_metrics_collect(v, metric_cb, &ms);
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_METRICS);
    r->get_metrics =
        msg_new(&mesos__v1__agent__response__get_metrics__descriptor);
    r->get_metrics->metrics = ptrs_take(&ms, &r->get_metrics->n_metrics);
    return r;
}

/* The agent keeps no counters of its own: these are gauges read from its
 * state, under Mesos's agent metric names. */
void agent_metrics_collect(const struct agent_state_view *v, agent_metric_fn fn,
                           void *arg)
{
    double staging = 0, starting = 0, running = 0, killing = 0, live = 0;
    double used[4] = {0};
    static const char *const names[4] = {"cpus", "mem", "disk", "gpus"};
    struct hmap *fws = hmap_new();
    size_t pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (task_state_is_terminal(t->state))
            continue;
        hmap_put(fws, t->framework_id, (void *)t);
        live++;
        switch (t->state) {
        case MESOS__V1__TASK_STATE__TASK_STAGING:
            staging++;
            break;
        case MESOS__V1__TASK_STATE__TASK_STARTING:
            starting++;
            break;
        case MESOS__V1__TASK_STATE__TASK_RUNNING:
            running++;
            break;
        case MESOS__V1__TASK_STATE__TASK_KILLING:
            killing++;
            break;
        default:
            break;
        }
        for (size_t i = 0; i < 4; i++)
            used[i] += task_scalar(t, names[i]);
    }
    fn(arg, "slave/registered", v->agent_id != NULL ? 1 : 0);
    fn(arg, "slave/uptime_secs", clock_wall_secs() - v->start_time);
    fn(arg, "slave/frameworks_active", (double)hmap_count(fws));
    fn(arg, "slave/executors_running", live);
    fn(arg, "slave/tasks_staging", staging);
    fn(arg, "slave/tasks_starting", starting);
    fn(arg, "slave/tasks_running", running);
    fn(arg, "slave/tasks_killing", killing);
    hmap_free(fws, NULL);
    for (size_t i = 0; i < 4; i++) {
        char name[64];
        double total =
            v->resources != NULL
                ? res_scalar_to_double(res_list_scalar(v->resources, names[i]))
                : 0;
        snprintf(name, sizeof(name), "slave/%s_total", names[i]);
        fn(arg, name, total);
        snprintf(name, sizeof(name), "slave/%s_used", names[i]);
        fn(arg, name, used[i]);
        snprintf(name, sizeof(name), "slave/%s_percent", names[i]);
        fn(arg, name, total > 0 ? used[i] / total : 0);
    }
}

/* Mesos answers glog's verbosity (--v, 0 by default): offerd answers the
 * verbosity its toggle set (common/log_toggle.h); without a toggle, DEBUG
 * counts as verbosity 1. */
static Response *get_logging_level(const struct agent_opapi *o)
{
    Response *r =
        response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_LOGGING_LEVEL);
    r->get_logging_level =
        msg_new(&mesos__v1__agent__response__get_logging_level__descriptor);
    r->get_logging_level->level =
        o->toggle != NULL ? log_toggle_verbosity(o->toggle)
                          : (log_get_level() == LOG_LEVEL_DEBUG ? 1 : 0);
    return r;
}

/* SET_LOGGING_LEVEL {level, duration}: replies 200 once set, or 400. */
static void set_logging_level(const struct agent_opapi *o,
                              struct http_request *req,
                              const Mesos__V1__Agent__Call__SetLoggingLevel *s)
{
    if (s->duration == NULL) {
        http_reply_error(req, 400, "set_logging_level.duration: required");
        return;
    }
    if (s->duration->nanoseconds < 0) {
        http_reply_error(req, 400,
                         "set_logging_level.duration: must not be negative");
        return;
    }
    log_toggle_set(o->toggle, s->level, s->duration->nanoseconds);
    http_reply(req, 200, NULL, NULL, 0);
}

/* LIST_FILES: NULL after answering the request (403, 404). */
static Response *list_files(const struct agent_opapi *o,
                            struct http_request *req, const char *path)
{
    Mesos__V1__FileInfo **infos = NULL;
    size_t n = 0;
    char why[PATH_MAX + 64];
    int status = files_list_pb(o->files, path, &infos, &n, why, sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return NULL;
    }
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__LIST_FILES);
    r->list_files =
        msg_new(&mesos__v1__agent__response__list_files__descriptor);
    r->list_files->file_infos = infos;
    r->list_files->n_file_infos = n;
    return r;
}

/* READ_FILE: NULL after answering the request (400, 403, 404, 500). */
static Response *read_file(const struct agent_opapi *o,
                           struct http_request *req,
                           const Mesos__V1__Agent__Call__ReadFile *rf)
{
    uint8_t *data;
    size_t len;
    int64_t size;
    char why[PATH_MAX + 64];
    int status =
        files_read_call(o->files, rf->path, rf->offset, rf->has_length,
                        rf->length, &data, &len, &size, why, sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return NULL;
    }
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__READ_FILE);
    r->read_file = msg_new(&mesos__v1__agent__response__read_file__descriptor);
    r->read_file->size = (uint64_t)size;
    r->read_file->data.data = data; /* NULL with len 0 is an empty field */
    r->read_file->data.len = len;
    return r;
}

static Mesos__V1__Agent__Response__GetTasks *
tasks_msg(const struct agent_state_view *v)
{
    struct ptrs launched = {0}, terminated = {0};
    size_t pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL)
        if (agent_view_task(v, t))
            ptrs_push(task_state_is_terminal(t->state) ? &terminated
                                                       : &launched,
                      task_msg(t, v->agent_id));
    Mesos__V1__Agent__Response__GetTasks *g =
        msg_new(&mesos__v1__agent__response__get_tasks__descriptor);
    g->launched_tasks = ptrs_take(&launched, &g->n_launched_tasks);
    g->terminated_tasks = ptrs_take(&terminated, &g->n_terminated_tasks);
    return g;
}

/* Executors as /state shows them: one per command task, live while its
 * task is, and the custom executors (executors.h), live while they run. */
static Mesos__V1__Agent__Response__GetExecutors *
executors_msg(const struct agent_state_view *v)
{
    struct ptrs live = {0}, done = {0};
    size_t pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (t->info->executor != NULL || !agent_view_task_executor(v, t))
            continue;
        Mesos__V1__Agent__Response__GetExecutors__Executor *e = msg_new(
            &mesos__v1__agent__response__get_executors__executor__descriptor);
        e->executor_info = executor_msg(t);
        ptrs_push(task_state_is_terminal(t->state) ? &done : &live, e);
    }
    pos = 0;
    const char *fw, *sandbox;
    const Mesos__V1__ExecutorInfo *info;
    while (v->execs != NULL &&
           agent_execs_next(v->execs, &pos, &fw, &info, &sandbox)) {
        if (!agent_view_executor(v, fw, info))
            continue;
        Mesos__V1__Agent__Response__GetExecutors__Executor *e = msg_new(
            &mesos__v1__agent__response__get_executors__executor__descriptor);
        e->executor_info =
            jpb_copy(&mesos__v1__executor_info__descriptor, &info->base);
        ptrs_push(&live, e);
    }
    Mesos__V1__Agent__Response__GetExecutors *g =
        msg_new(&mesos__v1__agent__response__get_executors__descriptor);
    g->executors = ptrs_take(&live, &g->n_executors);
    g->completed_executors = ptrs_take(&done, &g->n_completed_executors);
    return g;
}

/* Frameworks as /state shows them: those the agent holds tasks of. */
static Mesos__V1__Agent__Response__GetFrameworks *
frameworks_msg(const struct agent_state_view *v)
{
    struct hmap *seen = hmap_new();
    struct ptrs fws = {0};
    size_t pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (hmap_get(seen, t->framework_id) != NULL ||
            !agent_view_framework(v, t->framework_id))
            continue;
        hmap_put(seen, t->framework_id, (void *)t);
        Mesos__V1__Agent__Response__GetFrameworks__Framework *f = msg_new(
            &mesos__v1__agent__response__get_frameworks__framework__descriptor);
        f->framework_info = framework_msg(v, t->framework_id);
        ptrs_push(&fws, f);
    }
    hmap_free(seen, NULL);
    Mesos__V1__Agent__Response__GetFrameworks *g =
        msg_new(&mesos__v1__agent__response__get_frameworks__descriptor);
    g->frameworks = ptrs_take(&fws, &g->n_frameworks);
    return g;
}

static Response *get_state(const struct agent_state_view *v)
{
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_STATE);
    r->get_state = msg_new(&mesos__v1__agent__response__get_state__descriptor);
    r->get_state->get_tasks = tasks_msg(v);
    r->get_state->get_executors = executors_msg(v);
    r->get_state->get_frameworks = frameworks_msg(v);
    return r;
}

/* One container per live task (its run id names it), with what its
 * processes use when /proc shows any. */
static Response *get_containers(const struct agent_opapi *o,
                                const struct agent_state_view *v)
{
    size_t n = 0, pos = 0;
    const struct agent_task *t;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL)
        n += task_is_live(t) && agent_view_task_executor(v, t);
    const struct agent_task **live = xcalloc(n ? n : 1, sizeof(*live));
    pid_t *leaders = xcalloc(n ? n : 1, sizeof(*leaders));
    struct agent_usage *use = xcalloc(n ? n : 1, sizeof(*use));
    size_t m = 0;
    pos = 0;
    while ((t = agent_tasks_next(v->tasks, &pos)) != NULL) {
        if (!task_is_live(t) || !agent_view_task_executor(v, t))
            continue;
        live[m] = t;
        /* No pid yet: -1 leads no process (0 would gather the kernel's
         * threads, whose group and session are 0). */
        leaders[m] = t->task_pid > 0 ? t->task_pid : -1;
        m++;
    }
    double now = clock_wall_secs();
    bool scanned =
        n > 0 && agent_usage_scan(o->proc_root, leaders, n, use) == 0;
    long tck = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    struct ptrs cs = {0};
    for (size_t i = 0; i < n; i++) {
        t = live[i];
        Mesos__V1__Agent__Response__GetContainers__Container *c = msg_new(
            &mesos__v1__agent__response__get_containers__container__descriptor);
        c->framework_id = framework_id(t->framework_id);
        c->executor_id = executor_id(t->task_id);
        c->executor_name = xasprintf("Command Executor (Task: %s)", t->task_id);
        c->container_id = msg_new(&mesos__v1__container_id__descriptor);
        c->container_id->value =
            xstrdup(t->run_id[0] != '\0' ? t->run_id : t->task_id);
        c->container_status = msg_new(&mesos__v1__container_status__descriptor);
        c->container_status->container_id = jpb_copy(
            &mesos__v1__container_id__descriptor, &c->container_id->base);
        if (t->task_pid > 0) {
            c->container_status->has_executor_pid = true;
            c->container_status->executor_pid = (uint32_t)t->task_pid;
        }
        /* Its cgroup's figures where it has one (isolator.h). */
        Mesos__V1__ResourceStatistics *cs_stats =
            v->iso != NULL && t->task_pid > 0
                ? agent_iso_statistics(v->iso, t, now)
                : NULL;
        if (cs_stats != NULL) {
            c->resource_statistics = cs_stats;
        } else if (scanned && t->task_pid > 0 && use[i].nprocs > 0) {
            /* A task not running yet (no pid) has nothing to measure. */
            Mesos__V1__ResourceStatistics *s =
                msg_new(&mesos__v1__resource_statistics__descriptor);
            s->timestamp = now;
            s->has_processes = true;
            s->processes = (uint32_t)use[i].nprocs;
            if (tck > 0) {
                s->has_cpus_user_time_secs = true;
                s->cpus_user_time_secs = (double)use[i].user_ticks / tck;
                s->has_cpus_system_time_secs = true;
                s->cpus_system_time_secs = (double)use[i].system_ticks / tck;
            }
            if (page > 0) {
                s->has_mem_rss_bytes = true;
                s->mem_rss_bytes = use[i].rss_pages * (uint64_t)page;
            }
            s->has_cpus_limit = true;
            s->cpus_limit = task_scalar(t, "cpus");
            s->has_mem_limit_bytes = true;
            s->mem_limit_bytes = (uint64_t)(task_scalar(t, "mem") * 1048576.0);
            c->resource_statistics = s;
        }
        ptrs_push(&cs, c);
    }
    free(live);
    free(leaders);
    free(use);
    Response *r =
        response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_CONTAINERS);
    r->get_containers =
        msg_new(&mesos__v1__agent__response__get_containers__descriptor);
    r->get_containers->containers =
        ptrs_take(&cs, &r->get_containers->n_containers);
    return r;
}

/* The AgentInfo the agent subscribes with (resources: its own, as
 * configured or detected, without the checkpointed ones). */
static Response *get_agent(const struct agent_state_view *v)
{
    Mesos__V1__AgentInfo *ai = msg_new(&mesos__v1__agent_info__descriptor);
    ai->hostname = xstrdup(v->hostname != NULL ? v->hostname : "");
    ai->has_port = true;
    ai->port = v->port;
    if (v->resources != NULL)
        ai->resources = res_list_to_pb(v->resources, true, &ai->n_resources);
    if (v->attributes != NULL)
        ai->attributes = agent_attrs_to_pb(v->attributes, &ai->n_attributes);
    if (v->agent_id != NULL) {
        ai->id = msg_new(&mesos__v1__agent_id__descriptor);
        ai->id->value = xstrdup(v->agent_id);
    }
    Response *r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_AGENT);
    r->get_agent = msg_new(&mesos__v1__agent__response__get_agent__descriptor);
    r->get_agent->agent_info = ai;
    return r;
}

/* ---- Dispatch ----------------------------------------------------------- */

static const char *call_name(Mesos__V1__Agent__Call__Type type)
{
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__agent__call__type__descriptor, (int)type);
    return ev != NULL ? ev->name : "UNKNOWN";
}

void agent_opapi_handle(struct http_request *req, void *arg)
{
    const struct agent_opapi *o = arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[512];
    Mesos__V1__Agent__Call *call = (Mesos__V1__Agent__Call *)jpb_decode(
        &mesos__v1__agent__call__descriptor, (enum jpb_format)body_enc, body,
        len, err, sizeof(err));
    if (call == NULL) {
        log_debug("agent api: bad call from %s: %s", http_request_peer(req),
                  err);
        http_reply_error(req, 400, "Failed to parse body into Call: %s", err);
        return;
    }
    struct agent_state_view v;
    memset(&v, 0, sizeof(v));
    o->view(o->arg, &v);
    struct agent_viewer viewer;
    if (agent_auth_viewer(o->auth, req, &viewer))
        v.viewer = &viewer;
    Response *r = NULL;
    if (!call->has_type ||
        call->type == MESOS__V1__AGENT__CALL__TYPE__UNKNOWN) {
        http_reply_error(req, 400, "Expecting 'type' to be present");
        goto out;
    }
    switch (call->type) {
    case MESOS__V1__AGENT__CALL__TYPE__GET_HEALTH:
        r = get_health();
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_FLAGS:
        if (!agent_auth_allow(o->auth, req, ACL_VIEW_FLAGS))
            goto out;
        r = get_flags(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_VERSION:
        r = get_version();
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_METRICS:
        r = get_metrics(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_LOGGING_LEVEL:
        r = get_logging_level(o);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__SET_LOGGING_LEVEL:
        if (!agent_auth_allow(o->auth, req, ACL_SET_LOG_LEVEL))
            goto out;
        if (o->toggle == NULL)
            goto unsupported;
        if (call->set_logging_level == NULL) {
            http_reply_error(req, 400,
                             "Expecting 'set_logging_level' to be present");
            goto out;
        }
        set_logging_level(o, req, call->set_logging_level);
        goto out;
    case MESOS__V1__AGENT__CALL__TYPE__LIST_FILES:
        if (call->list_files == NULL) {
            http_reply_error(req, 400, "Expecting 'list_files' to be present");
            goto out;
        }
        if (!agent_auth_allow_file(o->auth, req, call->list_files->path))
            goto out;
        r = list_files(o, req, call->list_files->path);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__READ_FILE:
        if (call->read_file == NULL) {
            http_reply_error(req, 400, "Expecting 'read_file' to be present");
            goto out;
        }
        if (!agent_auth_allow_file(o->auth, req, call->read_file->path))
            goto out;
        r = read_file(o, req, call->read_file);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_STATE:
        r = get_state(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_CONTAINERS:
        r = get_containers(o, &v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_FRAMEWORKS:
        r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_FRAMEWORKS);
        r->get_frameworks = frameworks_msg(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_EXECUTORS:
        r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_EXECUTORS);
        r->get_executors = executors_msg(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_TASKS:
        r = response_new(MESOS__V1__AGENT__RESPONSE__TYPE__GET_TASKS);
        r->get_tasks = tasks_msg(&v);
        break;
    case MESOS__V1__AGENT__CALL__TYPE__GET_AGENT:
        r = get_agent(&v);
        break;
    default:
    unsupported:
        http_reply_error(req, 501, "%s is not supported by offerd yet",
                         call_name(call->type));
        goto out;
    }
    if (r != NULL) {
        size_t n;
        uint8_t *buf = jpb_encode(&r->base, (enum jpb_format)reply_enc, &n);
        http_reply(req, 200,
                   reply_enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON
                                              : HTTP_CONTENT_PROTOBUF,
                   buf, n);
        free(buf);
        protobuf_c_message_free_unpacked(&r->base, NULL);
    }
out:
    if (v.viewer != NULL)
        agent_viewer_fini(&viewer);
    jpb_free(&call->base);
}

/* ---- Life --------------------------------------------------------------- */

struct agent_opapi *agent_opapi_new(const struct agent_opapi_config *cfg)
{
    struct agent_opapi *o = xcalloc(1, sizeof(*o));
    o->files = cfg->files;
    o->proc_root = xstrdup(cfg->proc_root);
    o->view = cfg->view;
    o->arg = cfg->arg;
    o->toggle = cfg->toggle;
    o->auth = cfg->auth;
    return o;
}

int agent_opapi_register(struct agent_opapi *o, struct http_server *srv)
{
    if (http_server_route(srv, "/api/v1", HTTP_POST, agent_opapi_handle, o) !=
            0 ||
        http_server_route(srv, "/slave(1)/api/v1", HTTP_POST,
                          agent_opapi_handle, o) != 0)
        return -1;
    return 0;
}

void agent_opapi_free(struct agent_opapi *o)
{
    if (o == NULL)
        return;
    free(o->proc_root);
    free(o);
}
