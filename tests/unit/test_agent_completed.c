/*
 * What the agent keeps of ended executors and frameworks (agent/completed.h)
 * and how /state shows it (agent/state_json.h): completed tasks of custom
 * executors, completed executors, completed frameworks, their bounds, a
 * framework taken back, and the view_* filters (viewer.h) on all of it, with
 * view_roles and view_flags on the agent's own fields. The agent's steps
 * are played by hand over a task table (no processes, no master): a task is
 * recorded (agent_completed_task), removed, and what is idle settled, as
 * agent.c's forget_task does.
 */
#include "agent/attributes.h"
#include "agent/auth_agent.h"
#include "agent/completed.h"
#include "agent/flags_agent.h"
#include "agent/state_json.h"
#include "agent/tasks.h"
#include "agent/viewer.h"
#include "check_main.h"
#include "common/auth.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ops sees everything; al sees alice's frameworks and tasks, no executor,
 * no role, no flag. */
/* clang-format off */
static const char ACLS[] =
    "--acls={\"permissive\": false,"
    "\"view_frameworks\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": \"ANY\"}},"
    " {\"principals\": {\"values\": [\"al\"]}, \"users\": {\"values\": "
    "[\"alice\"]}}],"
    "\"view_tasks\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": \"ANY\"}},"
    " {\"principals\": {\"values\": [\"al\"]}, \"users\": {\"values\": "
    "[\"alice\"]}}],"
    "\"view_executors\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": "
    "\"ANY\"}}],"
    "\"view_roles\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"roles\": {\"type\": "
    "\"ANY\"}}],"
    "\"view_flags\": ["
    " {\"principals\": {\"values\": [\"ops\"]}, \"flags\": {\"type\": "
    "\"ANY\"}}]}";
/* clang-format on */

static char creds[64];
static struct event_base *base;
static struct agent_flags af;
static struct agent_auth *auth;
static struct agent_tasks *tasks;
static struct hmap *frameworks;
static struct agent_completed *done;
static res_list total = RES_LIST_INIT;
static struct agent_attrs attrs; /* none */

/* A running task of fw: a command task, or (ex not NULL) one of custom
 * executor ex; user: its command's user (NULL: none). */
static void add_task(const char *fw, const char *id, const char *ex,
                     const char *user)
{
    char json[768], exec[256] = "";
    if (ex != NULL)
        snprintf(exec, sizeof(exec),
                 ", \"executor\": {\"executor_id\": {\"value\": \"%s\"},"
                 " \"name\": \"exec %s\", \"command\": {\"value\": \"x\"}}",
                 ex, ex);
    snprintf(
        json, sizeof(json),
        "{\"name\": \"%s\", \"task_id\": {\"value\": \"%s\"},"
        " \"agent_id\": {\"value\": \"S0\"}, \"resources\": []%s%s%s%s%s%s}",
        id, id, ex == NULL ? ", \"command\": {\"value\": \"sleep 1\"" : "",
        ex == NULL && user != NULL ? ", \"user\": \"" : "",
        ex == NULL && user != NULL ? user : "",
        ex == NULL && user != NULL ? "\"" : "", ex == NULL ? "}" : "", exec);
    char err[256];
    Mesos__V1__TaskInfo *ti = (Mesos__V1__TaskInfo *)jpb_from_json_text(
        &mesos__v1__task_info__descriptor, json, strlen(json), err,
        sizeof(err));
    ck_assert_msg(ti != NULL, "%s: %s", err, json);
    struct agent_task *t = agent_tasks_add(tasks, fw, ti);
    jpb_free(&ti->base);
    ck_assert_ptr_nonnull(t);
    t->phase = AGENT_TASK_RUNNING;
    t->state = MESOS__V1__TASK_STATE__TASK_RUNNING;
    agent_task_note_state(t, t->state, 1.0);
}

/* What forget_task does once t's terminal update is acknowledged. */
static void finish_and_forget(const char *fw, const char *id)
{
    struct agent_task *t = agent_tasks_get(tasks, fw, id);
    ck_assert_ptr_nonnull(t);
    t->phase = AGENT_TASK_ENDED;
    t->state = MESOS__V1__TASK_STATE__TASK_FINISHED;
    agent_task_note_state(t, t->state, 2.0);
    agent_completed_task(done, t, hmap_get(frameworks, fw), NULL, "S0");
    agent_tasks_remove(tasks, t);
    agent_completed_settle(done, fw, tasks, NULL);
}

static void add_framework(const char *id, const char *user)
{
    Mesos__V1__FrameworkInfo *fi = xmalloc(sizeof(*fi));
    mesos__v1__framework_info__init(fi);
    fi->user = xstrdup(user);
    fi->name = xstrdup(id);
    hmap_put(frameworks, id, fi);
}

static void free_info(void *v)
{
    jpb_free(v);
}

static void start(size_t max_executors, size_t max_frameworks)
{
    done = agent_completed_new(max_executors, max_frameworks);
}

static void setup(void)
{
    snprintf(creds, sizeof(creds), "/tmp/offerd-completed-XXXXXX");
    int fd = mkstemp(creds);
    ck_assert_int_ge(fd, 0);
    const char text[] = "ops so\nal sa\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char cflag[96];
    snprintf(cflag, sizeof(cflag), "--http_credentials=%s", creds);
    char *argv[] = {"offerd-agent",    "--master=127.0.0.1:5050",
                    "--work_dir=/tmp", cflag,
                    (char *)ACLS,      NULL};
    char err[256];
    agent_flags_init(&af);
    ck_assert_int_eq(agent_flags_parse(&af, 5, argv, NULL, err, sizeof(err)),
                     FLAGS_OK);
    auth = agent_auth_new(&af, err, sizeof(err));
    ck_assert_msg(auth != NULL, "%s", err);
    base = event_base_new();
    struct agent_tasks_cbs cbs = {NULL, NULL, NULL};
    tasks = agent_tasks_new(base, &cbs);
    frameworks = hmap_new();
    add_framework("fw1", "alice");
    add_framework("fw2", "bob");
    ck_assert_int_eq(res_parse_text("cpus:4;mem:512;cpus(web):1;mem(db):64",
                                    "*", &total, err, sizeof(err)),
                     0);
}

static void teardown(void)
{
    agent_completed_free(done);
    done = NULL;
    hmap_free(frameworks, free_info);
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_auth_free(auth);
    agent_flags_fini(&af);
    res_list_clear(&total);
    unlink(creds);
}

/* /state as principal (NULL: without --acls, everything). */
static json_t *state_as(const char *principal, const char *secret)
{
    struct agent_state_view v = {
        .agent_id = "S0",
        .hostname = "host",
        .ip = "127.0.0.1",
        .port = 5051,
        .master = "127.0.0.1:5050",
        .resources = &total,
        .attributes = &attrs,
        .flags = agent_flags_object(&af),
        .frameworks = frameworks,
        .tasks = tasks,
        .completed = done,
    };
    if (principal == NULL)
        return agent_state_json(&v);
    struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/state");
    char *h = auth_basic_header(principal, secret);
    http_fake_add_header(x, "Authorization", h);
    free(h);
    struct agent_viewer w;
    struct http_request *req = http_fake_request(x);
    ck_assert(agent_auth_viewer(auth, req, &w));
    v.viewer = &w;
    json_t *st = agent_state_json(&v);
    agent_viewer_fini(&w);
    http_reply(req, 200, NULL, NULL, 0); /* frees req */
    http_fake_free(x);
    return st;
}

/* The framework object of id in the array named key of st, or NULL. */
static json_t *framework_in(json_t *st, const char *key, const char *id)
{
    json_t *arr = json_object_get(st, key), *f;
    size_t i;
    json_array_foreach(arr, i, f)
    {
        if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0)
            return f;
    }
    return NULL;
}

static const char *str_at(json_t *arr, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(arr, i), key));
}

/* A command task's executor moves to completed_executors once its task is
 * forgotten; its framework, with nothing left, to completed_frameworks. */
START_TEST(test_command_executor_and_framework_complete)
{
    start(150, 50);
    add_task("fw1", "t1", NULL, NULL);
    add_task("fw1", "t2", NULL, NULL);
    finish_and_forget("fw1", "t1");
    ck_assert_uint_eq(agent_completed_executors_of(done, "fw1"), 1);
    ck_assert_uint_eq(agent_completed_frameworks(done), 0);

    json_t *st = state_as(NULL, NULL);
    json_t *f = framework_in(st, "frameworks", "fw1");
    ck_assert_ptr_nonnull(f);
    json_t *live = json_object_get(f, "executors");
    ck_assert_uint_eq(json_array_size(live), 1);
    ck_assert_str_eq(str_at(live, 0, "id"), "t2");
    json_t *ended = json_object_get(f, "completed_executors");
    ck_assert_uint_eq(json_array_size(ended), 1);
    json_t *e = json_array_get(ended, 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "id")), "t1");
    ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
                     "Command Executor (Task: t1)");
    ck_assert_uint_eq(json_array_size(json_object_get(e, "tasks")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "queued_tasks")), 0);
    json_t *ct = json_object_get(e, "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), 1);
    ck_assert_str_eq(str_at(ct, 0, "id"), "t1");
    ck_assert_str_eq(str_at(ct, 0, "state"), "TASK_FINISHED");
    ck_assert_str_eq(str_at(ct, 0, "slave_id"), "S0");
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    json_decref(st);

    finish_and_forget("fw1", "t2");
    ck_assert_uint_eq(agent_completed_frameworks(done), 1);
    st = state_as(NULL, NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(st, "frameworks")), 0);
    f = framework_in(st, "completed_frameworks", "fw1");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(json_string_value(json_object_get(f, "user")), "alice");
    ck_assert_uint_eq(json_array_size(json_object_get(f, "executors")), 0);
    ended = json_object_get(f, "completed_executors");
    ck_assert_uint_eq(json_array_size(ended), 2);
    ck_assert_str_eq(str_at(ended, 0, "id"), "t1");
    ck_assert_str_eq(str_at(ended, 1, "id"), "t2");
    json_decref(st);
}
END_TEST

/* A custom executor keeps its forgotten tasks in completed_tasks (before
 * its terminal tasks still held, as Mesos orders them) while it has
 * others, and completes (no process runs it here) with all of them. */
START_TEST(test_custom_executor_completed_tasks)
{
    start(150, 50);
    add_task("fw1", "a", "ex1", NULL);
    add_task("fw1", "b", "ex1", NULL);
    add_task("fw1", "held", "ex1", NULL);
    finish_and_forget("fw1", "a");
    ck_assert_uint_eq(agent_completed_tasks_of(done, "fw1", "ex1"), 1);
    /* Terminal, its update not acknowledged yet. */
    struct agent_task *held = agent_tasks_get(tasks, "fw1", "held");
    held->state = MESOS__V1__TASK_STATE__TASK_FAILED;
    ck_assert_uint_eq(agent_completed_executors_of(done, "fw1"), 0);
    json_t *st = state_as(NULL, NULL);
    json_t *f = framework_in(st, "frameworks", "fw1");
    json_t *exs = json_object_get(f, "executors");
    ck_assert_uint_eq(json_array_size(exs), 1);
    json_t *e = json_array_get(exs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(e, "id")), "ex1");
    ck_assert_uint_eq(json_array_size(json_object_get(e, "tasks")), 1);
    json_t *ct = json_object_get(e, "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), 2);
    ck_assert_str_eq(str_at(ct, 0, "id"), "a");
    ck_assert_str_eq(str_at(ct, 1, "id"), "held");
    ck_assert_uint_eq(
        json_array_size(json_object_get(f, "completed_executors")), 0);
    json_decref(st);

    finish_and_forget("fw1", "held");
    finish_and_forget("fw1", "b");
    ck_assert_uint_eq(agent_completed_executors_of(done, "fw1"), 1);
    st = state_as(NULL, NULL);
    f = framework_in(st, "completed_frameworks", "fw1");
    ck_assert_ptr_nonnull(f);
    json_t *ended = json_object_get(f, "completed_executors");
    ck_assert_uint_eq(json_array_size(ended), 1);
    ck_assert_str_eq(str_at(ended, 0, "name"), "exec ex1");
    ct = json_object_get(json_array_get(ended, 0), "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), 3);
    ck_assert_str_eq(str_at(ct, 0, "id"), "a");
    ck_assert_str_eq(str_at(ct, 1, "id"), "held");
    ck_assert_str_eq(str_at(ct, 2, "id"), "b");
    json_decref(st);
}
END_TEST

/* Completed tasks per executor are bounded by 200 (Mesos's constant), the
 * oldest dropped first. */
START_TEST(test_completed_tasks_bounded)
{
    start(150, 50);
    add_task("fw1", "keep", "ex1", NULL);
    char id[32];
    for (int i = 0; i < AGENT_COMPLETED_TASKS_PER_EXECUTOR + 5; i++) {
        snprintf(id, sizeof(id), "t%d", i);
        add_task("fw1", id, "ex1", NULL);
        finish_and_forget("fw1", id);
    }
    ck_assert_uint_eq(agent_completed_tasks_of(done, "fw1", "ex1"),
                      AGENT_COMPLETED_TASKS_PER_EXECUTOR);
    json_t *st = state_as(NULL, NULL);
    json_t *e = json_array_get(
        json_object_get(framework_in(st, "frameworks", "fw1"), "executors"), 0);
    json_t *ct = json_object_get(e, "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), AGENT_COMPLETED_TASKS_PER_EXECUTOR);
    ck_assert_str_eq(str_at(ct, 0, "id"), "t5");
    json_decref(st);
}
END_TEST

/* --max_completed_executors_per_framework and --max_completed_frameworks:
 * the oldest go first; 0 keeps none. */
START_TEST(test_bounds)
{
    start(2, 2);
    add_task("fw1", "live", NULL, NULL);
    for (int i = 0; i < 3; i++) {
        char id[8];
        snprintf(id, sizeof(id), "c%d", i);
        add_task("fw1", id, NULL, NULL);
        finish_and_forget("fw1", id);
    }
    ck_assert_uint_eq(agent_completed_executors_of(done, "fw1"), 2);
    json_t *st = state_as(NULL, NULL);
    json_t *ended = json_object_get(framework_in(st, "frameworks", "fw1"),
                                    "completed_executors");
    ck_assert_str_eq(str_at(ended, 0, "id"), "c1");
    ck_assert_str_eq(str_at(ended, 1, "id"), "c2");
    json_decref(st);

    for (int i = 0; i < 3; i++) {
        char fw[8];
        snprintf(fw, sizeof(fw), "f%d", i);
        add_framework(fw, "bob");
        add_task(fw, "x", NULL, NULL);
        finish_and_forget(fw, "x");
    }
    ck_assert_uint_eq(agent_completed_frameworks(done), 2);
    st = state_as(NULL, NULL);
    json_t *cf = json_object_get(st, "completed_frameworks");
    ck_assert_uint_eq(json_array_size(cf), 2);
    ck_assert_str_eq(str_at(cf, 0, "id"), "f1");
    ck_assert_str_eq(str_at(cf, 1, "id"), "f2");
    json_decref(st);
    ck_assert_ptr_null(agent_completed_framework_info(done, "f0"));
    agent_completed_free(done);

    start(0, 0);
    add_task("fw2", "x", NULL, NULL);
    finish_and_forget("fw2", "x");
    ck_assert_uint_eq(agent_completed_executors_of(done, "fw2"), 0);
    ck_assert_uint_eq(agent_completed_frameworks(done), 0);
    st = state_as(NULL, NULL);
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    json_decref(st);
}
END_TEST

/* A completed framework that launches a task again is active again, with
 * its completed executors. */
START_TEST(test_framework_back)
{
    start(150, 50);
    add_task("fw2", "x", NULL, NULL);
    finish_and_forget("fw2", "x");
    ck_assert_uint_eq(agent_completed_frameworks(done), 1);
    agent_completed_framework_back(done, "fw2");
    add_task("fw2", "y", NULL, NULL);
    ck_assert_uint_eq(agent_completed_frameworks(done), 0);
    json_t *st = state_as(NULL, NULL);
    json_t *f = framework_in(st, "frameworks", "fw2");
    ck_assert_ptr_nonnull(f);
    ck_assert_str_eq(str_at(json_object_get(f, "completed_executors"), 0, "id"),
                     "x");
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    json_decref(st);
}
END_TEST

/* Under --acls: completed frameworks by view_frameworks, completed
 * executors by view_executors, completed tasks by view_tasks (a task run as
 * root is not alice's), reserved resources by view_roles, flags by
 * view_flags. */
START_TEST(test_filtered)
{
    start(150, 50);
    add_task("fw1", "mine", "ex1", NULL);
    add_task("fw1", "root", "ex1", NULL);
    add_task("fw1", "rootcmd", NULL, "root");
    add_task("fw1", "live", "ex1", NULL);
    finish_and_forget("fw1", "mine");
    finish_and_forget("fw1", "rootcmd");
    add_task("fw2", "b", NULL, NULL);
    finish_and_forget("fw2", "b");
    struct agent_task *t = agent_tasks_get(tasks, "fw1", "root");
    t->info->executor->command->user = xstrdup("root");
    finish_and_forget("fw1", "root");

    json_t *st = state_as("ops", "so");
    json_t *f = framework_in(st, "frameworks", "fw1");
    json_t *e = json_array_get(json_object_get(f, "executors"), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "completed_tasks")),
                      2);
    ck_assert_uint_eq(
        json_array_size(json_object_get(f, "completed_executors")), 1);
    ck_assert_ptr_nonnull(framework_in(st, "completed_frameworks", "fw2"));
    json_t *rr = json_object_get(st, "reserved_resources");
    ck_assert_ptr_nonnull(json_object_get(rr, "web"));
    ck_assert_ptr_nonnull(json_object_get(rr, "db"));
    ck_assert_ptr_nonnull(
        json_object_get(json_object_get(st, "reserved_resources_full"), "db"));
    ck_assert_ptr_nonnull(json_object_get(st, "flags"));
    json_decref(st);

    /* al: alice's framework and tasks, no executor (so no task inside
     * one), bob's completed framework hidden, no role, no flags. */
    st = state_as("al", "sa");
    f = framework_in(st, "frameworks", "fw1");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(json_array_size(json_object_get(f, "executors")), 0);
    ck_assert_uint_eq(
        json_array_size(json_object_get(f, "completed_executors")), 0);
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    ck_assert_uint_eq(
        json_object_size(json_object_get(st, "reserved_resources")), 0);
    ck_assert_uint_eq(
        json_object_size(json_object_get(st, "reserved_resources_full")), 0);
    ck_assert_ptr_nonnull(json_object_get(st, "resources"));
    ck_assert_ptr_null(json_object_get(st, "flags"));
    json_decref(st);
}
END_TEST

/* The same filters through a viewer that may see executors but not root's
 * tasks: the completed task run as root is left out of its executor. */
START_TEST(test_task_filter_inside_executor)
{
    start(150, 50);
    add_task("fw1", "mine", NULL, NULL);
    add_task("fw1", "rootcmd", NULL, "root");
    add_task("fw1", "live", NULL, NULL);
    finish_and_forget("fw1", "mine");
    finish_and_forget("fw1", "rootcmd");
    /* clang-format off */
    static const char rules[] =
        "{\"permissive\": false,"
        " \"view_frameworks\": [{\"principals\": {\"type\": \"ANY\"},"
        " \"users\": {\"type\": \"ANY\"}}],"
        " \"view_executors\": [{\"principals\": {\"type\": \"ANY\"},"
        " \"users\": {\"type\": \"ANY\"}}],"
        " \"view_tasks\": [{\"principals\": {\"type\": \"ANY\"},"
        " \"users\": {\"values\": [\"alice\"]}}]}";
    /* clang-format on */
    char err[256];
    struct acls *acls = acls_parse(rules, strlen(rules), err, sizeof(err));
    ck_assert_msg(acls != NULL, "%s", err);
    struct agent_viewer w;
    agent_viewer_init(&w, acls, "anyone");
    struct agent_state_view v = {
        .agent_id = "S0",
        .hostname = "host",
        .ip = "127.0.0.1",
        .port = 5051,
        .master = "127.0.0.1:5050",
        .resources = &total,
        .attributes = &attrs,
        .flags = agent_flags_object(&af),
        .frameworks = frameworks,
        .tasks = tasks,
        .completed = done,
        .viewer = &w,
    };
    json_t *st = agent_state_json(&v);
    agent_viewer_fini(&w);
    acls_free(acls);
    json_t *ended = json_object_get(framework_in(st, "frameworks", "fw1"),
                                    "completed_executors");
    ck_assert_uint_eq(json_array_size(ended), 2);
    ck_assert_str_eq(str_at(ended, 0, "id"), "mine");
    ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(ended, 0),
                                                      "completed_tasks")),
                      1);
    ck_assert_str_eq(str_at(ended, 1, "id"), "rootcmd");
    ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(ended, 1),
                                                      "completed_tasks")),
                      0);
    json_decref(st);
}
END_TEST

/* The two flags: defaults as Mesos's, bounds checked. */
START_TEST(test_flags)
{
    ck_assert_int_eq(af.max_completed_executors_per_framework, 150);
    ck_assert_int_eq(af.max_completed_frameworks, 50);
    static const char *const bad[] = {
        "--max_completed_frameworks=-1",
        "--max_completed_executors_per_framework=100001",
    };
    for (size_t i = 0; i < 2; i++) {
        struct agent_flags f;
        agent_flags_init(&f);
        char *argv[] = {"offerd-agent", "--master=127.0.0.1:5050",
                        (char *)bad[i], NULL};
        char err[256];
        ck_assert_int_eq(agent_flags_parse(&f, 3, argv, NULL, err, sizeof(err)),
                         FLAGS_ERROR);
        ck_assert_msg(strstr(err, "must be between 0 and 100000") != NULL, "%s",
                      err);
        agent_flags_fini(&f);
    }
}
END_TEST

static Suite *agent_completed_suite(void)
{
    Suite *s = suite_create("agent_completed");
    TCase *tc = tcase_create("completed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_command_executor_and_framework_complete);
    tcase_add_test(tc, test_custom_executor_completed_tasks);
    tcase_add_test(tc, test_completed_tasks_bounded);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_framework_back);
    tcase_add_test(tc, test_filtered);
    tcase_add_test(tc, test_task_filter_inside_executor);
    tcase_add_test(tc, test_flags);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_completed_suite)
