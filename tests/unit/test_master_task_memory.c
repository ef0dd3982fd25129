/*
 * What the master keeps of a launched task (tasks.c, task_info_compact):
 * the agent gets the whole TaskInfo in RUN_TASK, and the master's copy
 * then drops what only the agent needed (the resources as protobuf, the
 * command line, the data, the check, the limits, the executor but its id
 * and user), while /tasks, GET_TASKS and the ACLs' user still show the
 * task as before.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "master/frameworks.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define HALF                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":128}}]"

MFX_STANDARD_FIXTURE

/* Launch t1 (a command task with user, data, a check, labels) or, with
 * executor, t1 on a custom executor e1 whose command has a user. */
static void launch_t1(bool executor)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    const char *run =
        executor ? "\"executor\":{\"executor_id\":{\"value\":\"e1\"},"
                   "\"type\":\"CUSTOM\",\"command\":{\"value\":\"./ex\","
                   "\"user\":\"bob\"},\"resources\":" HALF "}"
                 : "\"command\":{\"value\":\"sleep 1000\",\"user\":\"alice\","
                   "\"environment\":{\"variables\":[{\"name\":\"A\",\"value\":"
                   "\"1\"}]}},\"check\":{\"type\":\"COMMAND\",\"command\":{"
                   "\"command\":{\"value\":\"true\"}}}";
    char *p = NULL;
    ck_assert_int_gt(
        asprintf(&p,
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                 "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[{"
                 "\"name\":\"n1\",\"task_id\":{\"value\":\"t1\"},"
                 "\"agent_id\":{\"value\":\"%s\"},\"resources\":" HALF ","
                 "\"data\":\"aGVsbG8=\",\"labels\":{\"labels\":[{\"key\":"
                 "\"k\",\"value\":\"v\"}]},%s}]}}]}",
                 offer_id, AG.id, run),
        0);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", p), 202);
    free(p);
}

static struct task *t1(void)
{
    struct framework *fw = master_framework_find(X.m, FW.id);
    ck_assert_ptr_nonnull(fw);
    struct task *t = hmap_get(fw->tasks, "t1");
    ck_assert_ptr_nonnull(t);
    return t;
}

START_TEST(test_run_task_whole_record_compact)
{
    launch_t1(false);
    /* The agent got everything. */
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_t *task = json_object_get(json_object_get(ev, "run_task"), "task");
    ck_assert_str_eq(json_string_value(json_object_get(task, "data")),
                     "aGVsbG8=");
    json_t *cmd = json_object_get(task, "command");
    ck_assert_str_eq(json_string_value(json_object_get(cmd, "value")),
                     "sleep 1000");
    ck_assert_ptr_nonnull(json_object_get(cmd, "environment"));
    ck_assert_ptr_nonnull(json_object_get(task, "check"));
    ck_assert_uint_eq(json_array_size(json_object_get(task, "resources")), 2);
    json_decref(ev);

    /* The master kept what its readers use, nothing more. */
    const Mesos__V1__TaskInfo *ti = t1()->info;
    ck_assert_uint_eq(ti->n_resources, 0);
    ck_assert(!ti->has_data);
    ck_assert_ptr_null(ti->check);
    ck_assert_ptr_nonnull(ti->command);
    ck_assert_ptr_null(ti->command->value);
    ck_assert_ptr_null(ti->command->environment);
    ck_assert_str_eq(ti->command->user, "alice");
    ck_assert_str_eq(ti->name, "n1");
    ck_assert_ptr_nonnull(ti->labels);
    ck_assert_uint_eq(t1()->resources.n, 2);

    /* GET_TASKS shows it as before: resources, user, labels. */
    struct http_fake *f = mfx_operator(&X, "{\"type\":\"GET_TASKS\"}");
    json_error_t err;
    json_t *j = json_loads(mfx_body(f), 0, &err);
    ck_assert_ptr_nonnull(j);
    json_t *tasks = json_object_get(json_object_get(j, "get_tasks"), "tasks");
    ck_assert_uint_eq(json_array_size(tasks), 1);
    json_t *t = json_array_get(tasks, 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "name")), "n1");
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "alice");
    ck_assert_uint_eq(json_array_size(json_object_get(t, "resources")), 2);
    ck_assert_ptr_nonnull(json_object_get(t, "labels"));
    json_decref(j);
    http_fake_free(f);

    /* /tasks too. */
    f = mfx_http(&X, HTTP_GET, "/tasks", NULL, NULL);
    j = json_loads(mfx_body(f), 0, &err);
    ck_assert_ptr_nonnull(j);
    t = json_array_get(json_object_get(j, "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), "alice");
    ck_assert_double_eq(json_number_value(json_object_get(
                            json_object_get(t, "resources"), "cpus")),
                        0.5);
    json_decref(j);
    http_fake_free(f);
}
END_TEST

START_TEST(test_executor_kept_as_id_and_user)
{
    launch_t1(true);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_t *ex = json_object_get(
        json_object_get(json_object_get(ev, "run_task"), "task"), "executor");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(ex, "command"), "value")),
                     "./ex");
    json_decref(ev);

    const Mesos__V1__ExecutorInfo *kept = t1()->info->executor;
    ck_assert_ptr_nonnull(kept);
    ck_assert_str_eq(kept->executor_id->value, "e1");
    ck_assert_ptr_nonnull(kept->command);
    ck_assert_str_eq(kept->command->user, "bob");
    ck_assert_ptr_null(kept->command->value);
    ck_assert_uint_eq(kept->n_resources, 0);

    struct http_fake *f = mfx_http(&X, HTTP_GET, "/tasks", NULL, NULL);
    json_error_t err;
    json_t *j = json_loads(mfx_body(f), 0, &err);
    ck_assert_ptr_nonnull(j);
    json_t *t = json_array_get(json_object_get(j, "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "executor_id")),
                     "e1");
    json_decref(j);
    http_fake_free(f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_task_memory");
    TCase *tc = tcase_create("compact");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_run_task_whole_record_compact);
    tcase_add_test(tc, test_executor_kept_as_id_and_user);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
