/*
 * Tests of the agent's v1 operator API (agent/operator_api.h) through fake
 * requests (common/http_fake.h), over a hand-built agent view: a task
 * table with a running and a finished task, a framework, flags, a
 * temporary sandboxes tree and a crafted /proc. No master, no sockets.
 */
#include "agent/endpoints.h"
#include "agent/flags_agent.h"
#include "agent/operator_api.h"
#include "agent/tasks.h"
#include "check_main.h"
#include "common/files.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/json_pb.h"
#include "common/log_toggle.h"
#include "common/mem.h"
#include "common/prom.h"
#include "common/resources.h"
#include "mesos/v1/agent.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUNNING_PID 4242

static char top[PATH_MAX];       /* temporary directory */
static char root[PATH_MAX];      /* top/sandboxes, canonical */
static char proc[PATH_MAX + 16]; /* top/proc, a crafted /proc */

static struct event_base *base;
static struct agent_flags af;
static struct agent_tasks *tasks;
static struct hmap *frameworks;
static res_list total = RES_LIST_INIT;
static struct agent_opapi *api;
static struct log_toggle *toggle;
static struct files *sandboxes;

static void write_file(const char *rel, const char *text)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", top, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void mkdir_rel(const char *rel)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", top, rel);
    ck_assert_int_eq(mkdir(p, 0755), 0);
}

static Mesos__V1__TaskInfo *task_info(const char *id, double cpus, double mem)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"name\": \"%s-name\", \"task_id\": {\"value\": \"%s\"},"
             " \"agent_id\": {\"value\": \"S0\"}, \"resources\": ["
             "{\"name\": \"cpus\", \"type\": \"SCALAR\", \"scalar\": "
             "{\"value\": %g}},"
             "{\"name\": \"mem\", \"type\": \"SCALAR\", \"scalar\": "
             "{\"value\": %g}}]}",
             id, id, cpus, mem);
    char err[256];
    Mesos__V1__TaskInfo *ti = (Mesos__V1__TaskInfo *)jpb_from_json_text(
        &mesos__v1__task_info__descriptor, json, strlen(json), err,
        sizeof(err));
    ck_assert_msg(ti != NULL, "%s", err);
    return ti;
}

static void view(void *arg, struct agent_state_view *out)
{
    (void)arg;
    out->agent_id = "S0";
    out->hostname = "host";
    out->ip = "127.0.0.1";
    out->port = 5051;
    out->master = "127.0.0.1:5050";
    out->start_time = 1000.0;
    out->resources = &total;
    out->flags = agent_flags_object(&af);
    out->frameworks = frameworks;
    out->tasks = tasks;
}

static void setup(void)
{
    char tmpl[] = "/tmp/offerd-opapi-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_ptr_nonnull(realpath(tmpl, top));
    mkdir_rel("sandboxes");
    mkdir_rel("sandboxes/fw1");
    mkdir_rel("sandboxes/fw1/t1");
    write_file("sandboxes/fw1/t1/stdout", "hello world\n");
    write_file("secret", "no");
    mkdir_rel("proc");
    mkdir_rel("proc/4242");
    /* utime 300, stime 100, cutime 50, cstime 50 ticks; 10 pages. */
    write_file("proc/4242/stat",
               "4242 (sleep) S 1 4242 4242 0 -1 4194560 120 0 0 0 300 100 "
               "50 50 20 0 1 0 12345 2236416 200 18446744073709551615 1 1 "
               "0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
    write_file("proc/4242/statm", "100 10 5 1 0 20 0\n");
    /* A kernel thread: process group and session 0. */
    mkdir_rel("proc/2");
    write_file("proc/2/stat",
               "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 7 9 0 0 20 0 1 0 "
               "2 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 "
               "0 0 0\n");
    write_file("proc/2/statm", "0 0 0 0 0 0 0\n");
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/sandboxes", top);
    ck_assert_ptr_nonnull(realpath(p, root));
    snprintf(proc, sizeof(proc), "%s/proc", top);

    char work[PATH_MAX + 32];
    snprintf(work, sizeof(work), "--work_dir=%s/work", top);
    char *argv[] = {"offerd-agent", "--master=127.0.0.1:5050", work, NULL};
    char err[256];
    agent_flags_init(&af);
    ck_assert_int_eq(agent_flags_parse(&af, 3, argv, NULL, err, sizeof(err)),
                     FLAGS_OK);

    base = event_base_new();
    struct agent_tasks_cbs cbs = {NULL, NULL, NULL};
    tasks = agent_tasks_new(base, &cbs);
    ck_assert_ptr_nonnull(tasks);

    Mesos__V1__TaskInfo *ti = task_info("t1", 0.5, 64);
    struct agent_task *t = agent_tasks_add(tasks, "fw1", ti);
    jpb_free(&ti->base);
    /* A running task as the table would show it (no real process: the
     * crafted /proc has its pid). */
    t->phase = AGENT_TASK_RUNNING;
    t->task_pid = RUNNING_PID;
    t->state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    snprintf(t->run_id, sizeof(t->run_id), "run-1");
    agent_task_note_state(t, MESOS__V1__TASK_STATE__TASK_STARTING, 1001.0);
    agent_task_note_state(t, MESOS__V1__TASK_STATE__TASK_RUNNING, 1002.0);

    /* A task still launching: no pid yet. */
    ti = task_info("t3", 0.25, 16);
    t = agent_tasks_add(tasks, "fw1", ti);
    jpb_free(&ti->base);
    t->phase = AGENT_TASK_LAUNCHING;

    ti = task_info("t2", 1, 32);
    t = agent_tasks_add(tasks, "fw2", ti);
    jpb_free(&ti->base);
    t->phase = AGENT_TASK_ENDED;
    t->state = MESOS__V1__TASK_STATE__TASK_FINISHED;

    frameworks = hmap_new();
    Mesos__V1__FrameworkInfo *fi = xmalloc(sizeof(*fi));
    mesos__v1__framework_info__init(fi);
    fi->user = xstrdup("alice");
    fi->name = xstrdup("marathon");
    hmap_put(frameworks, "fw1", fi);

    ck_assert_int_eq(res_parse_text("cpus:4;mem:1024;disk:2048", "*", &total,
                                    err, sizeof(err)),
                     0);

    toggle = log_toggle_new(base, LOG_LEVEL_INFO);
    sandboxes = files_new();
    files_set_base(sandboxes, root);
    ck_assert_int_eq(files_attach(sandboxes, root, root, err, sizeof(err)), 0);
    struct agent_opapi_config cfg = {sandboxes, proc, view, NULL, toggle, NULL};
    api = agent_opapi_new(&cfg);
}

static void free_info(void *v)
{
    jpb_free(v);
}

static void teardown(void)
{
    agent_opapi_free(api);
    log_toggle_free(toggle);
    files_free(sandboxes);
    res_list_clear(&total);
    hmap_free(frameworks, free_info);
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_flags_fini(&af);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
}

/* POST body (of content_type; accept may be NULL) and return the exchange
 * (caller frees). */
static struct http_fake *post(const char *content_type, const char *accept,
                              const void *body, size_t len)
{
    struct http_fake *x = http_fake_new(NULL, HTTP_POST, "/api/v1");
    if (content_type != NULL)
        http_fake_add_header(x, "Content-Type", content_type);
    if (accept != NULL)
        http_fake_add_header(x, "Accept", accept);
    http_fake_set_body(x, body, len);
    http_fake_dispatch(x, agent_opapi_handle, api);
    ck_assert(http_fake_replied(x));
    return x;
}

/* POST a JSON call, expect 200 and return the decoded Response (in the
 * encoding enc asked by Accept). Caller jpb_free's it. */
static Mesos__V1__Agent__Response *call_ok(const char *json,
                                           enum http_encoding enc)
{
    struct http_fake *x =
        post(HTTP_CONTENT_JSON,
             enc == HTTP_ENC_JSON ? HTTP_CONTENT_JSON : HTTP_CONTENT_PROTOBUF,
             json, strlen(json));
    size_t len;
    const uint8_t *b = http_fake_body(x, &len);
    ck_assert_msg(http_fake_status(x) == 200, "%d: %s", http_fake_status(x),
                  (const char *)b);
    ck_assert_str_eq(http_fake_content_type(x), enc == HTTP_ENC_JSON
                                                    ? HTTP_CONTENT_JSON
                                                    : HTTP_CONTENT_PROTOBUF);
    char err[256];
    Mesos__V1__Agent__Response *r = (Mesos__V1__Agent__Response *)jpb_decode(
        &mesos__v1__agent__response__descriptor, (enum jpb_format)enc, b, len,
        err, sizeof(err));
    ck_assert_msg(r != NULL, "%s", err);
    http_fake_free(x);
    return r;
}

/* POST body as JSON; expect status and a reason containing want. */
static void call_refused(const char *json, int status, const char *want)
{
    struct http_fake *x = post(HTTP_CONTENT_JSON, NULL, json, strlen(json));
    size_t len;
    const char *b = (const char *)http_fake_body(x, &len);
    ck_assert_int_eq(http_fake_status(x), status);
    ck_assert_msg(strstr(b, want) != NULL, "'%s' lacks '%s'", b, want);
    http_fake_free(x);
}

START_TEST(test_simple_calls)
{
    for (int e = 0; e < 2; e++) {
        enum http_encoding enc = (enum http_encoding)e;
        Mesos__V1__Agent__Response *r =
            call_ok("{\"type\": \"GET_HEALTH\"}", enc);
        ck_assert_int_eq(r->type, MESOS__V1__AGENT__RESPONSE__TYPE__GET_HEALTH);
        ck_assert(r->get_health->healthy);
        jpb_free(&r->base);

        r = call_ok("{\"type\": \"GET_VERSION\"}", enc);
        ck_assert_str_eq(r->get_version->version_info->version, OFFERD_VERSION);
        jpb_free(&r->base);

        r = call_ok("{\"type\": \"GET_LOGGING_LEVEL\"}", enc);
        ck_assert_int_eq(r->type,
                         MESOS__V1__AGENT__RESPONSE__TYPE__GET_LOGGING_LEVEL);
        ck_assert_ptr_nonnull(r->get_logging_level);
        jpb_free(&r->base);

        r = call_ok("{\"type\": \"GET_AGENT\"}", enc);
        const Mesos__V1__AgentInfo *ai = r->get_agent->agent_info;
        ck_assert_str_eq(ai->hostname, "host");
        ck_assert_int_eq(ai->port, 5051);
        ck_assert_str_eq(ai->id->value, "S0");
        ck_assert_uint_eq(ai->n_resources, 3);
        ck_assert_uint_eq(ai->n_attributes, 0);
        jpb_free(&r->base);

        r = call_ok("{\"type\": \"GET_FLAGS\"}", enc);
        bool seen = false;
        for (size_t i = 0; i < r->get_flags->n_flags; i++)
            if (strcmp(r->get_flags->flags[i]->name, "master") == 0) {
                ck_assert_str_eq(r->get_flags->flags[i]->value,
                                 "127.0.0.1:5050");
                seen = true;
            }
        ck_assert(seen);
        jpb_free(&r->base);
    }
}
END_TEST

static double metric_of(const Mesos__V1__Agent__Response *r, const char *name)
{
    for (size_t i = 0; i < r->get_metrics->n_metrics; i++)
        if (strcmp(r->get_metrics->metrics[i]->name, name) == 0)
            return r->get_metrics->metrics[i]->value;
    ck_abort_msg("no metric %s", name);
    return -1;
}

/* POST a JSON call that answers 200 with no body. */
static void call_done(const char *json)
{
    struct http_fake *x = post(HTTP_CONTENT_JSON, NULL, json, strlen(json));
    size_t len;
    const char *b = (const char *)http_fake_body(x, &len);
    ck_assert_msg(http_fake_status(x) == 200, "%d: %s", http_fake_status(x), b);
    ck_assert_uint_eq(len, 0);
    http_fake_free(x);
}

/* SET_LOGGING_LEVEL raises the verbosity (DEBUG) for its duration, then
 * the toggle's timer puts it back; GET_LOGGING_LEVEL answers it. */
START_TEST(test_logging_level)
{
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_INFO);
    call_done(
        "{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":2,"
        "\"duration\":{\"nanoseconds\":600000000000}}}");
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_DEBUG);
    Mesos__V1__Agent__Response *r =
        call_ok("{\"type\": \"GET_LOGGING_LEVEL\"}", HTTP_ENC_PROTOBUF);
    ck_assert_uint_eq(r->get_logging_level->level, 2);
    jpb_free(&r->base);
    call_done(
        "{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":1,"
        "\"duration\":{\"nanoseconds\":20000000}}}");
    for (int i = 0; i < 100 && log_toggle_verbosity(toggle) != 0; i++)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_uint_eq(log_toggle_verbosity(toggle), 0);
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_INFO);

    call_refused("{\"type\":\"SET_LOGGING_LEVEL\"}", 400,
                 "'set_logging_level'");
    call_refused("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{"
                 "\"level\":1}}",
                 400, "duration");
    call_refused("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{"
                 "\"level\":1,\"duration\":{\"nanoseconds\":-1}}}",
                 400, "negative");
    ck_assert_uint_eq(log_toggle_verbosity(toggle), 0);
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_INFO);
}
END_TEST

START_TEST(test_metrics)
{
    Mesos__V1__Agent__Response *r =
        call_ok("{\"type\": \"GET_METRICS\"}", HTTP_ENC_PROTOBUF);
    ck_assert_double_eq(metric_of(r, "slave/registered"), 1);
    ck_assert_double_eq(metric_of(r, "slave/tasks_running"), 1);
    ck_assert_double_eq(metric_of(r, "slave/tasks_staging"), 1);
    ck_assert_double_eq(metric_of(r, "slave/executors_running"), 2);
    ck_assert_double_eq(metric_of(r, "slave/frameworks_active"), 1);
    ck_assert_double_eq(metric_of(r, "slave/cpus_total"), 4);
    ck_assert_double_eq(metric_of(r, "slave/cpus_used"), 0.75);
    ck_assert_double_eq(metric_of(r, "slave/mem_used"), 80);
    ck_assert_double_eq(metric_of(r, "slave/mem_percent"), 80.0 / 1024);
    jpb_free(&r->base);
}
END_TEST

/* /metrics/snapshot and /metrics show GET_METRICS's keys (one list):
 * the snapshot as Mesos's JSON, /metrics as Prometheus gauges (the agent
 * keeps no counters) with the request latency of the agent's routes. */
/* The reply body of f as text (NUL-terminated past its length). */
static const char *body_text(const struct http_fake *f)
{
    size_t len;
    return (const char *)http_fake_body(f, &len);
}

START_TEST(test_metrics_endpoints)
{
    struct http_server *srv = http_server_new(base, NULL);
    struct agent_endpoints *e =
        agent_endpoints_register(srv, agent_flags_object(&af), NULL, NULL);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(agent_endpoints_metrics(e, srv, view, NULL), 0);
    ck_assert_int_eq(agent_endpoints_metrics(e, srv, view, NULL), -1);

    struct http_fake *f =
        http_fake_new(base, HTTP_GET, "/slave(1)/metrics/snapshot");
    http_fake_dispatch_server(f, srv);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *j = json_loads(body_text(f), 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_double_eq(
        json_number_value(json_object_get(j, "slave/tasks_running")), 1);
    ck_assert_double_eq(
        json_number_value(json_object_get(j, "slave/cpus_used")), 0.75);
    json_decref(j);
    http_fake_free(f);

    f = http_fake_new(base, HTTP_GET, "/metrics");
    http_fake_dispatch_server(f, srv);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), PROM_CONTENT_TYPE);
    const char *text = body_text(f);
    ck_assert_ptr_nonnull(strstr(text,
                                 "# TYPE offerd_slave_tasks_running gauge\n"
                                 "offerd_slave_tasks_running 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nofferd_slave_mem_used 80\n"));
    ck_assert_ptr_nonnull(strstr(text, "# TYPE "
                                       "offerd_http_request_duration_seconds "
                                       "histogram\n"));
    ck_assert_ptr_null(strstr(text, " counter\n"));
    http_fake_free(f);
    http_server_free(srv);
    agent_endpoints_free(e);
}
END_TEST

/* The task of id among v[0..n) (the table's order is unspecified). */
static const Mesos__V1__Task *task_in(Mesos__V1__Task *const *v, size_t n,
                                      const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i]->task_id->value, id) == 0)
            return v[i];
    ck_abort_msg("no task %s", id);
    return NULL;
}

START_TEST(test_state)
{
    for (int e = 0; e < 2; e++) {
        Mesos__V1__Agent__Response *r =
            call_ok("{\"type\": \"GET_STATE\"}", (enum http_encoding)e);
        ck_assert_int_eq(r->type, MESOS__V1__AGENT__RESPONSE__TYPE__GET_STATE);
        const Mesos__V1__Agent__Response__GetTasks *gt =
            r->get_state->get_tasks;
        ck_assert_uint_eq(gt->n_launched_tasks, 2);
        ck_assert_uint_eq(gt->n_terminated_tasks, 1);
        const Mesos__V1__Task *t =
            task_in(gt->launched_tasks, gt->n_launched_tasks, "t1");
        ck_assert_str_eq(t->task_id->value, "t1");
        ck_assert_str_eq(t->name, "t1-name");
        ck_assert_str_eq(t->framework_id->value, "fw1");
        ck_assert_str_eq(t->executor_id->value, "t1");
        ck_assert_str_eq(t->agent_id->value, "S0");
        ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
        ck_assert_uint_eq(t->n_resources, 2);
        ck_assert_uint_eq(t->n_statuses, 2);
        ck_assert_int_eq(t->statuses[1]->state,
                         MESOS__V1__TASK_STATE__TASK_RUNNING);
        ck_assert_double_eq(t->statuses[1]->timestamp, 1002.0);
        ck_assert_str_eq(gt->terminated_tasks[0]->task_id->value, "t2");
        t = task_in(gt->launched_tasks, gt->n_launched_tasks, "t3");
        ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_STAGING);
        ck_assert_uint_eq(t->n_statuses, 0);

        const Mesos__V1__Agent__Response__GetExecutors *ge =
            r->get_state->get_executors;
        ck_assert_uint_eq(ge->n_executors, 2);
        ck_assert_uint_eq(ge->n_completed_executors, 1);
        ck_assert_str_eq(
            ge->completed_executors[0]->executor_info->executor_id->value,
            "t2");
        ck_assert_str_eq(
            ge->completed_executors[0]->executor_info->framework_id->value,
            "fw2");

        const Mesos__V1__Agent__Response__GetFrameworks *gf =
            r->get_state->get_frameworks;
        ck_assert_uint_eq(gf->n_frameworks, 2);
        for (size_t i = 0; i < 2; i++) {
            const Mesos__V1__FrameworkInfo *fi =
                gf->frameworks[i]->framework_info;
            if (strcmp(fi->id->value, "fw1") == 0) {
                ck_assert_str_eq(fi->name, "marathon");
                ck_assert_str_eq(fi->user, "alice");
            } else {
                ck_assert_str_eq(fi->id->value, "fw2");
                ck_assert_str_eq(fi->name, "");
            }
        }
        jpb_free(&r->base);
    }
    /* The parts alone. */
    Mesos__V1__Agent__Response *r =
        call_ok("{\"type\": \"GET_TASKS\"}", HTTP_ENC_JSON);
    ck_assert_int_eq(r->type, MESOS__V1__AGENT__RESPONSE__TYPE__GET_TASKS);
    ck_assert_uint_eq(r->get_tasks->n_launched_tasks, 2);
    jpb_free(&r->base);
    r = call_ok("{\"type\": \"GET_EXECUTORS\"}", HTTP_ENC_JSON);
    ck_assert_uint_eq(r->get_executors->n_executors, 2);
    jpb_free(&r->base);
    r = call_ok("{\"type\": \"GET_FRAMEWORKS\"}", HTTP_ENC_JSON);
    ck_assert_uint_eq(r->get_frameworks->n_frameworks, 2);
    jpb_free(&r->base);
}
END_TEST

START_TEST(test_containers)
{
    Mesos__V1__Agent__Response *r =
        call_ok("{\"type\": \"GET_CONTAINERS\"}", HTTP_ENC_PROTOBUF);
    ck_assert_int_eq(r->type, MESOS__V1__AGENT__RESPONSE__TYPE__GET_CONTAINERS);
    ck_assert_uint_eq(r->get_containers->n_containers, 2);
    const Mesos__V1__Agent__Response__GetContainers__Container *c = NULL,
                                                               *c3 = NULL;
    for (size_t i = 0; i < 2; i++) {
        if (strcmp(r->get_containers->containers[i]->executor_id->value,
                   "t1") == 0)
            c = r->get_containers->containers[i];
        else
            c3 = r->get_containers->containers[i];
    }
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(c3);
    /* Launching: no run id yet (the task id stands in), no pid, nothing
     * measured (the kernel thread with group 0 is not its). */
    ck_assert_str_eq(c3->executor_id->value, "t3");
    ck_assert_str_eq(c3->container_id->value, "t3");
    ck_assert(!c3->container_status->has_executor_pid);
    ck_assert_ptr_null(c3->resource_statistics);

    ck_assert_str_eq(c->container_id->value, "run-1");
    ck_assert_str_eq(c->framework_id->value, "fw1");
    ck_assert_str_eq(c->executor_id->value, "t1");
    ck_assert_uint_eq(c->container_status->executor_pid, RUNNING_PID);
    const Mesos__V1__ResourceStatistics *s = c->resource_statistics;
    ck_assert_ptr_nonnull(s);
    long tck = sysconf(_SC_CLK_TCK);
    ck_assert_uint_eq(s->processes, 1);
    ck_assert_double_eq_tol(s->cpus_user_time_secs, 350.0 / tck, 1e-9);
    ck_assert_double_eq_tol(s->cpus_system_time_secs, 150.0 / tck, 1e-9);
    ck_assert_uint_eq(s->mem_rss_bytes, 10 * (uint64_t)sysconf(_SC_PAGESIZE));
    ck_assert_double_eq(s->cpus_limit, 0.5);
    ck_assert_uint_eq(s->mem_limit_bytes, 64 * 1048576ull);
    jpb_free(&r->base);
}
END_TEST

START_TEST(test_files)
{
    Mesos__V1__Agent__Response *r =
        call_ok("{\"type\": \"LIST_FILES\", \"list_files\": {\"path\": "
                "\"fw1/t1\"}}",
                HTTP_ENC_JSON);
    ck_assert_uint_eq(r->list_files->n_file_infos, 1);
    const Mesos__V1__FileInfo *f = r->list_files->file_infos[0];
    ck_assert_str_eq(f->path, "fw1/t1/stdout");
    ck_assert_uint_eq(f->size, 12);
    ck_assert(S_ISREG(f->mode));
    ck_assert_ptr_nonnull(f->mtime);
    jpb_free(&r->base);

    for (int e = 0; e < 2; e++) {
        r = call_ok("{\"type\": \"READ_FILE\", \"read_file\": {\"path\": "
                    "\"fw1/t1/stdout\", \"offset\": 6, \"length\": 5}}",
                    (enum http_encoding)e);
        ck_assert_uint_eq(r->read_file->size, 12);
        ck_assert_uint_eq(r->read_file->data.len, 5);
        ck_assert(memcmp(r->read_file->data.data, "world", 5) == 0);
        jpb_free(&r->base);
    }
    /* No length: to the end; past the end: nothing. */
    char json[PATH_MAX + 256];
    snprintf(json, sizeof(json),
             "{\"type\": \"READ_FILE\", \"read_file\": {\"path\": "
             "\"%s/fw1/t1/stdout\", \"offset\": 0}}",
             root);
    r = call_ok(json, HTTP_ENC_JSON);
    ck_assert_uint_eq(r->read_file->data.len, 12);
    jpb_free(&r->base);
    r = call_ok("{\"type\": \"READ_FILE\", \"read_file\": {\"path\": "
                "\"fw1/t1/stdout\", \"offset\": \"18446744073709551615\"}}",
                HTTP_ENC_JSON);
    ck_assert_uint_eq(r->read_file->size, 12);
    ck_assert_uint_eq(r->read_file->data.len, 0);
    jpb_free(&r->base);
}
END_TEST

START_TEST(test_file_refusals)
{
    static const struct {
        const char *json;
        int status;
        const char *reason;
    } cases[] = {
        {"{\"type\": \"LIST_FILES\"}", 400, "'list_files'"},
        {"{\"type\": \"READ_FILE\"}", 400, "'read_file'"},
        {"{\"type\": \"READ_FILE\", \"read_file\": {\"path\": \"x\"}}", 400,
         "read_file.offset"},
        {"{\"type\": \"LIST_FILES\", \"list_files\": {\"path\": \"nope\"}}",
         404, "not found"},
        {"{\"type\": \"LIST_FILES\", \"list_files\": {\"path\": \"../\"}}", 403,
         "inaccessible"},
        {"{\"type\": \"READ_FILE\", \"read_file\": {\"path\": \"../secret\", "
         "\"offset\": 0}}",
         403, "inaccessible"},
        {"{\"type\": \"READ_FILE\", \"read_file\": {\"path\": \"fw1\", "
         "\"offset\": 0}}",
         400, "directory"},
        {"{\"type\": \"READ_FILE\", \"read_file\": {\"path\": \"/etc/passwd\", "
         "\"offset\": 0}}",
         404, "not found"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        call_refused(cases[i].json, cases[i].status, cases[i].reason);
}
END_TEST

START_TEST(test_refusals)
{
    call_refused("{\"type\": \"LAUNCH_NESTED_CONTAINER\"}", 501,
                 "LAUNCH_NESTED_CONTAINER");
    call_refused("{\"type\": \"WAIT_NESTED_CONTAINER\"}", 501,
                 "WAIT_NESTED_CONTAINER");
    call_refused("{}", 400, "'type'");
    call_refused("{\"type\": \"UNKNOWN\"}", 400, "'type'");
    call_refused("{\"type\": \"NOPE\"}", 400, "type: unknown enum value");
    call_refused("{\"type\": 7", 400, "invalid JSON");
    call_refused("[]", 400, "expected an object");

    /* Protobuf garbage. */
    struct http_fake *x = post(HTTP_CONTENT_PROTOBUF, NULL, "\xff\xff", 2);
    ck_assert_int_eq(http_fake_status(x), 400);
    http_fake_free(x);

    /* Content negotiation. */
    const char *body = "{\"type\": \"GET_HEALTH\"}";
    x = post(NULL, NULL, body, strlen(body));
    ck_assert_int_eq(http_fake_status(x), 415);
    http_fake_free(x);
    x = post("text/plain", NULL, body, strlen(body));
    ck_assert_int_eq(http_fake_status(x), 415);
    http_fake_free(x);
    x = post(HTTP_CONTENT_JSON, "text/html", body, strlen(body));
    ck_assert_int_eq(http_fake_status(x), 406);
    http_fake_free(x);

    /* A protobuf call with no Accept is answered in protobuf. */
    Mesos__V1__Agent__Call c = MESOS__V1__AGENT__CALL__INIT;
    c.has_type = true;
    c.type = MESOS__V1__AGENT__CALL__TYPE__GET_HEALTH;
    size_t len;
    uint8_t *pb = jpb_to_pb(&c.base, &len);
    x = post(HTTP_CONTENT_PROTOBUF, NULL, pb, len);
    free(pb);
    ck_assert_int_eq(http_fake_status(x), 200);
    ck_assert_str_eq(http_fake_content_type(x), HTTP_CONTENT_PROTOBUF);
    http_fake_free(x);
}
END_TEST

static Suite *agent_operator_api_suite(void)
{
    Suite *s = suite_create("agent_operator_api");
    TCase *tc = tcase_create("calls");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_metrics_endpoints);
    tcase_add_test(tc, test_simple_calls);
    tcase_add_test(tc, test_logging_level);
    tcase_add_test(tc, test_metrics);
    tcase_add_test(tc, test_state);
    tcase_add_test(tc, test_containers);
    tcase_add_test(tc, test_files);
    tcase_add_test(tc, test_file_refusals);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_operator_api_suite)
