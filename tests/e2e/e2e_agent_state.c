/*
 * End-to-end tests of the agent's GET /state as Mesos's agent shows it,
 * against the fake master of harness_agent_master.h: a finished command
 * task's executor under its framework's completed_executors, a framework
 * with nothing left under completed_frameworks (both bounded by their
 * flags), and what a principal sees under --acls (view_tasks,
 * view_executors, view_flags).
 *
 * Every agent is stopped with SIGUSR1 at teardown and, as a last resort,
 * every process left under this binary's work directories is SIGKILLed.
 */
#include "harness.h"
#include "harness_agent_master.h"

#include "common/fs.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FW_ID "fw-state-0001"

/* ops (ops:so) sees everything; eve (eve:se) frameworks and executors
 * but no task, no flag. */
#define AUTH_OPS "Authorization: Basic b3BzOnNv"
#define AUTH_EVE "Authorization: Basic ZXZlOnNl"

/* clang-format off */
#define ACLS                                                                   \
    "--acls={\"permissive\": false,"                                           \
    " \"view_frameworks\": [{\"principals\": {\"type\": \"ANY\"},"             \
    "  \"users\": {\"type\": \"ANY\"}}],"                                      \
    " \"view_executors\": [{\"principals\": {\"type\": \"ANY\"},"              \
    "  \"users\": {\"type\": \"ANY\"}}],"                                      \
    " \"view_tasks\": [{\"principals\": {\"values\": [\"ops\"]},"              \
    "  \"users\": {\"type\": \"ANY\"}}],"                                      \
    " \"view_flags\": [{\"principals\": {\"values\": [\"ops\"]},"              \
    "  \"flags\": {\"type\": \"ANY\"}}]}"
/* clang-format on */

/* ---- Last-resort cleanup ---- */

static char base_dir[64];

static void suite_setup(void)
{
    snprintf(base_dir, sizeof(base_dir), "/tmp/offerd-agent-state-XXXXXX");
    if (mkdtemp(base_dir) == NULL)
        base_dir[0] = '\0';
}

static void suite_teardown(void)
{
    if (e2e_kill_under(base_dir) > 0)
        fprintf(stderr, "e2e_agent_state: killed processes left by failed "
                        "tests\n");
    fs_remove_tree(base_dir);
}

/* ---- The agent under test ---- */

static struct e2e_proc agent;
static char agent_work[PATH_MAX];

static void start_agent(const char *const *extra)
{
    ck_assert_msg(hfm_spawn_agent(&agent, agent_work, extra) == 0,
                  "offerd-agent did not start");
    hfm_wait_subscribed(1, 10000);
}

static void setup(void)
{
    ck_assert(base_dir[0] != '\0');
    snprintf(agent_work, sizeof(agent_work), "%s/agent-XXXXXX", base_dir);
    ck_assert_ptr_nonnull(mkdtemp(agent_work));
    hfm_start();
    hfm.auto_ack = true;
}

static void teardown(void)
{
    if (agent.pid > 0) {
        ck_assert_int_eq(hfm_stop_agent(&agent), 0);
        ck_assert_int_eq(e2e_kill_under(agent_work), 0);
    }
    e2e_proc_cleanup(&agent);
    e2e_kill_under(agent_work);
    fs_remove_tree(agent_work);
    hfm_stop();
}

/* GET /state with the header auth (NULL: none); fails the test unless
 * 200 with a JSON object. */
static json_t *state_as(const char *auth)
{
    const char *h[] = {auth, NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, "GET", "/state",
                              auth != NULL ? h : NULL, NULL, 0, 5000, &r),
                     0);
    ck_assert_msg(r.status == 200, "/state: %d %s", r.status, r.body);
    json_error_t e;
    json_t *j = json_loadb(r.body, r.body_len, 0, &e);
    ck_assert_msg(json_is_object(j), "/state: bad JSON: %s", e.text);
    e2e_response_free(&r);
    return j;
}

/* The object whose "id" is id in array arr, or NULL. */
static json_t *by_id(json_t *arr, const char *id)
{
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        const char *s = json_string_value(json_object_get(o, "id"));
        if (s != NULL && strcmp(s, id) == 0)
            return o;
    }
    return NULL;
}

static void shell_task(const char *task_id, const char *cmd)
{
    struct hfm_task t = {
        .framework_id = FW_ID, .task_id = task_id, .shell = cmd};
    hfm_run_task(&t);
}

/* What a wait looks for in /state. */
struct want {
    const char *auth;     /* the reader's header; NULL: none */
    const char *list;     /* "frameworks" or "completed_frameworks" */
    const char *executor; /* in the framework's completed_executors */
    size_t ncompleted;    /* how many completed executors it has */
};

static bool state_shows(void *arg)
{
    const struct want *w = arg;
    json_t *st = state_as(w->auth);
    json_t *f = by_id(json_object_get(st, w->list), FW_ID);
    json_t *done = json_object_get(f, "completed_executors");
    bool ok = f != NULL && json_array_size(done) == w->ncompleted &&
              (w->executor == NULL || by_id(done, w->executor) != NULL);
    json_decref(st);
    return ok;
}

static void wait_state_as(const char *auth, const char *list,
                          const char *executor, size_t ncompleted)
{
    struct want w = {auth, list, executor, ncompleted};
    ck_assert_msg(hfm_pump_until(state_shows, &w, 15000),
                  "/state never showed %s[%s].completed_executors with %s "
                  "(%zu)",
                  list, FW_ID, executor != NULL ? executor : "-", ncompleted);
}

static void wait_state(const char *list, const char *executor,
                       size_t ncompleted)
{
    wait_state_as(NULL, list, executor, ncompleted);
}

/* /state shows no framework, live or completed. */
static bool state_shows_none(void *arg)
{
    (void)arg;
    json_t *st = state_as(NULL);
    bool none =
        json_array_size(json_object_get(st, "frameworks")) == 0 &&
        json_array_size(json_object_get(st, "completed_frameworks")) == 0;
    json_decref(st);
    return none;
}

/* ---- Tests ---- */

/* A finished command task's executor moves to completed_executors (the
 * task in its completed_tasks) once its last update is acknowledged, while
 * the framework runs another task; when that one ends too the framework
 * moves to completed_frameworks with both. */
START_TEST(test_completed_executor_and_framework)
{
    start_agent(NULL);
    shell_task("long", "while :; do sleep 0.05; done");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "long",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    shell_task("done", "exit 0");
    wait_state("frameworks", "done", 1);

    json_t *st = state_as(NULL);
    json_t *f = by_id(json_object_get(st, "frameworks"), FW_ID);
    json_t *live = json_object_get(f, "executors");
    ck_assert_uint_eq(json_array_size(live), 1);
    json_t *e = by_id(live, "long");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(e, "tasks"), 0), "state")),
        "TASK_RUNNING");
    json_t *ended = by_id(json_object_get(f, "completed_executors"), "done");
    ck_assert_str_eq(json_string_value(json_object_get(ended, "name")),
                     "Command Executor (Task: done)");
    ck_assert_uint_eq(json_array_size(json_object_get(ended, "tasks")), 0);
    json_t *ct = json_object_get(ended, "completed_tasks");
    ck_assert_uint_eq(json_array_size(ct), 1);
    json_t *t = json_array_get(ct, 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "id")), "done");
    ck_assert_str_eq(json_string_value(json_object_get(t, "state")),
                     "TASK_FINISHED");
    ck_assert_str_eq(json_string_value(json_object_get(t, "slave_id")),
                     HFM_AGENT_ID);
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "completed_frameworks")), 0);
    json_decref(st);

    hfm_kill(FW_ID, "long", -1);
    wait_state("completed_frameworks", "long", 2);
    st = state_as(NULL);
    ck_assert_uint_eq(json_array_size(json_object_get(st, "frameworks")), 0);
    f = by_id(json_object_get(st, "completed_frameworks"), FW_ID);
    ck_assert_str_eq(json_string_value(json_object_get(f, "name")), "e2e");
    ck_assert_uint_eq(json_array_size(json_object_get(f, "executors")), 0);
    ended = by_id(json_object_get(f, "completed_executors"), "long");
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_array_get(json_object_get(ended, "completed_tasks"), 0),
            "state")),
        "TASK_KILLED");
    json_decref(st);
}
END_TEST

/* --max_completed_executors_per_framework=1 keeps the newest completed
 * executor; --max_completed_frameworks=0 keeps no framework. */
START_TEST(test_bounds)
{
    const char *flags[] = {"--max_completed_executors_per_framework=1",
                           "--max_completed_frameworks=0", NULL};
    start_agent(flags);
    shell_task("long", "while :; do sleep 0.05; done");
    shell_task("a", "exit 0");
    wait_state("frameworks", "a", 1);
    shell_task("b", "exit 0");
    wait_state("frameworks", "b", 1);
    hfm_kill(FW_ID, "long", -1);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "long",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000) >= 0);
    /* Gone altogether once its ack went through. */
    ck_assert_msg(hfm_pump_until(state_shows_none, NULL, 15000),
                  "the framework is still shown");
}
END_TEST

/* --help names both flags; a value out of bounds is refused at start. */
START_TEST(test_flags)
{
    char out[32768];
    const char *help[] = {"--help", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, help, out, sizeof(out), 10000),
                     0);
    ck_assert_ptr_nonnull(
        strstr(out, "--max_completed_executors_per_framework"));
    ck_assert_ptr_nonnull(strstr(out, "--max_completed_frameworks"));
    const char *bad[] = {"--master=127.0.0.1:5050",
                         "--max_completed_frameworks=-1", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, bad, out, sizeof(out), 10000),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "--max_completed_frameworks"));
}
END_TEST

/* Under --acls: a principal without view_tasks (and an anonymous reader)
 * sees the framework and the executors, live and completed, but no task in
 * them, and no flags; one with every right sees the tasks. */
START_TEST(test_view_tasks)
{
    char cred[PATH_MAX + 8];
    snprintf(cred, sizeof(cred), "%s/creds", agent_work);
    FILE *fp = fopen(cred, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("ops so\neve se\n", fp);
    fclose(fp);
    char cflag[PATH_MAX + 64];
    snprintf(cflag, sizeof(cflag), "--http_credentials=%s", cred);
    const char *flags[] = {cflag, ACLS, NULL};
    start_agent(flags);
    shell_task("long", "while :; do sleep 0.05; done");
    shell_task("done", "exit 0");
    wait_state_as(AUTH_OPS, "frameworks", "done", 1);

    json_t *st = state_as(AUTH_OPS);
    json_t *f = by_id(json_object_get(st, "frameworks"), FW_ID);
    json_t *e = by_id(json_object_get(f, "executors"), "long");
    ck_assert_uint_eq(json_array_size(json_object_get(e, "tasks")), 1);
    e = by_id(json_object_get(f, "completed_executors"), "done");
    ck_assert_uint_eq(json_array_size(json_object_get(e, "completed_tasks")),
                      1);
    ck_assert_ptr_nonnull(json_object_get(st, "flags"));
    json_decref(st);

    const char *readers[] = {AUTH_EVE, NULL};
    for (size_t i = 0; i < 2; i++) {
        st = state_as(readers[i]);
        /* eve, and an anonymous reader (ANY principal matches it). */
        f = by_id(json_object_get(st, "frameworks"), FW_ID);
        ck_assert_ptr_nonnull(f);
        e = by_id(json_object_get(f, "executors"), "long");
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(json_array_size(json_object_get(e, "tasks")), 0);
        ck_assert_uint_eq(
            json_array_size(json_object_get(e, "completed_tasks")), 0);
        e = by_id(json_object_get(f, "completed_executors"), "done");
        ck_assert_ptr_nonnull(e);
        ck_assert_uint_eq(
            json_array_size(json_object_get(e, "completed_tasks")), 0);
        ck_assert_ptr_null(json_object_get(st, "flags"));
        json_decref(st);
    }
}
END_TEST

static Suite *agent_state_suite(void)
{
    Suite *s = suite_create("e2e_agent_state");
    TCase *tc = tcase_create("state");
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_completed_executor_and_framework);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_flags);
    tcase_add_test(tc, test_view_tasks);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(agent_state_suite)
