/*
 * Custom executors on the master (executors.c): LAUNCH and LAUNCH_GROUP
 * with an ExecutorInfo, validated as Mesos's master does; an executor's
 * resources taken once per agent however many tasks share it; /state,
 * GET_EXECUTORS; EXECUTOR_EXITED (FAILURE to the framework, resources
 * back); MESSAGE and SHUTDOWN to the agent, EXECUTOR_MESSAGE to the
 * framework; executors gone with their agent or framework; executors an
 * agent reports when it re-registers after a master failover.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/log.h"
#include "master/agents.h"
#include "master/executors.h"
#include "master/frameworks.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
/* 0.5 cpus and 128 MB. */
#define HALF                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":128}}]"
#define EXEC_CMD "{\"value\":\"./my-executor\"}"

MFX_STANDARD_FIXTURE

/* An ExecutorInfo's JSON: id, type (NULL: unset), command (NULL: none),
 * resources (NULL: none). */
static char *executor_json(const char *id, const char *type, const char *cmd,
                           const char *res)
{
    char *j = NULL;
    ck_assert_int_gt(
        asprintf(&j, "{\"executor_id\":{\"value\":\"%s\"}%s%s%s%s%s%s%s}", id,
                 type ? ",\"type\":\"" : "", type ? type : "", type ? "\"" : "",
                 cmd ? ",\"command\":" : "", cmd ? cmd : "",
                 res ? ",\"resources\":" : "", res ? res : ""),
        0);
    return j;
}

/* A TaskInfo's JSON with executor (JSON, NULL: a command task). */
static char *task_json(const char *id, const char *executor)
{
    char *j = NULL;
    ck_assert_int_gt(
        asprintf(&j,
                 "{\"name\":\"%s\",\"task_id\":{\"value\":\"%s\"},"
                 "\"agent_id\":{\"value\":\"%s\"},\"resources\":" HALF ",%s%s}",
                 id, id, AG.id, executor ? "\"executor\":" : "",
                 executor ? executor : "\"command\":{\"value\":\"true\"}"),
        0);
    return j;
}

/* ACCEPT of offer_id with one LAUNCH of the tasks (JSON, comma-joined). */
static int accept_launch(const char *offer_id, const char *tasks)
{
    char *p = NULL;
    ck_assert_int_gt(
        asprintf(&p,
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                 "\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[%s]}}],"
                 "\"filters\":{\"refuse_seconds\":0}}",
                 offer_id, tasks),
        0);
    int st = mfx_framework_call(&X, &FW, "ACCEPT", "accept", p);
    free(p);
    return st;
}

/* Subscribe FW and AG (cpus:2;mem:1024) and return the first offer's id. */
static void start_cluster(char *offer_id)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
}

/* Launch t1 on executor e1 (HALF each) from a fresh offer. */
static void launch_t1_on_e1(void)
{
    char offer_id[256];
    start_cluster(offer_id);
    char *ex = executor_json("e1", "CUSTOM", EXEC_CMD, HALF);
    char *t = task_json("t1", ex);
    ck_assert_int_eq(accept_launch(offer_id, t), 202);
    free(t);
    free(ex);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}

/* Milli-cpus the agent's tasks and executors use. */
static int64_t agent_used_cpus(void)
{
    res_list used = RES_LIST_INIT, offered = RES_LIST_INIT;
    master_agent_usage(master_agent_find(X.m, AG.id), &used, &offered);
    int64_t cpus = 0;
    for (uint32_t i = 0; i < used.n; i++)
        if (strcmp(used.v[i].name, "cpus") == 0)
            cpus += used.v[i].scalar;
    res_list_clear(&used);
    res_list_clear(&offered);
    return cpus;
}

static struct framework *fw_state(void)
{
    return master_framework_find(X.m, FW.id);
}

static const char *update_field(json_t *ev, const char *field)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), field));
}

/* ---- Launch -----------------------------------------------------------------
 */

/* RUN_TASK carries the executor with the framework's id; the executor is
 * tracked and its resources used beside the task's. */
START_TEST(test_launch_with_executor)
{
    char offer_id[256];
    start_cluster(offer_id);
    char *ex = executor_json("e1", "CUSTOM", EXEC_CMD, HALF);
    char *t = task_json("t1", ex);
    ck_assert_int_eq(accept_launch(offer_id, t), 202);
    free(t);
    free(ex);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_t *e = json_object_get(
        json_object_get(json_object_get(ev, "run_task"), "task"), "executor");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(e, "executor_id"), "value")),
                     "e1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(e, "framework_id"), "value")),
                     FW.id);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(e, "command"), "value")),
                     "./my-executor");
    json_decref(ev);
    struct executor *x =
        master_executor_find(master_agent_find(X.m, AG.id), FW.id, "e1");
    ck_assert_ptr_nonnull(x);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 1);
    ck_assert_int_eq(agent_used_cpus(), 1000);
}
END_TEST

/* Two tasks on one executor in one ACCEPT, then a third from a later
 * offer: the executor's resources are taken once. */
START_TEST(test_tasks_share_executor)
{
    char offer_id[256];
    start_cluster(offer_id);
    char *ex = executor_json("e1", "CUSTOM", EXEC_CMD, HALF);
    char *t1 = task_json("t1", ex), *t2 = task_json("t2", ex);
    char both[4096];
    snprintf(both, sizeof(both), "%s,%s", t1, t2);
    ck_assert_int_eq(accept_launch(offer_id, both), 202);
    for (int i = 0; i < 2; i++) {
        json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
        ck_assert_ptr_nonnull(ev);
        json_decref(ev);
    }
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 1);
    ck_assert_int_eq(agent_used_cpus(), 1500);

    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char *t3 = task_json("t3", ex);
    ck_assert_int_eq(accept_launch(offer_id, t3), 202);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(agent_used_cpus(), 2000);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 1);
    free(t1);
    free(t2);
    free(t3);
    free(ex);
}
END_TEST

/* The same executor id with another ExecutorInfo on the agent: TASK_ERROR
 * "not compatible", nothing launched, nothing used. */
START_TEST(test_incompatible_executor_refused)
{
    launch_t1_on_e1();
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char *ex = executor_json("e1", "CUSTOM", "{\"value\":\"./other\"}", HALF);
    char *t = task_json("t2", ex);
    ck_assert_int_eq(accept_launch(offer_id, t), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(update_field(ev, "state"), "TASK_ERROR");
    ck_assert_ptr_nonnull(strstr(update_field(ev, "message"),
                                 "ExecutorInfo is not compatible with "
                                 "existing ExecutorInfo with same "
                                 "ExecutorID"));
    json_decref(ev);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    ck_assert_ptr_null(hmap_get(fw_state()->tasks, "t2"));
    ck_assert_int_eq(agent_used_cpus(), 1000);
    free(t);
    free(ex);
}
END_TEST

/* Each bad executor is a TASK_ERROR with Mesos's reason; nothing is
 * launched or tracked. */
START_TEST(test_executor_validation)
{
    static const struct {
        const char *type, *cmd, *res, *extra, *reason;
    } bad[] = {
        {"CUSTOM", NULL, HALF, NULL,
         "'ExecutorInfo.command' must be set for 'CUSTOM' executor"},
        {NULL, NULL, HALF, NULL, "'ExecutorInfo.command' must be set"},
        {"DEFAULT", NULL, HALF, NULL, "'ExecutorInfo.type' must be 'CUSTOM'"},
        {"CUSTOM", EXEC_CMD, HALF, "\"framework_id\":{\"value\":\"other\"}",
         "ExecutorInfo has an invalid FrameworkID (Actual: other"},
        {"CUSTOM", EXEC_CMD,
         "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1.8}}]",
         NULL, "Total resources"},
        {"CUSTOM", EXEC_CMD,
         "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":-1}}]",
         NULL, "Executor uses invalid resources"},
        {"CUSTOM", EXEC_CMD, HALF,
         "\"shutdown_grace_period\":{\"nanoseconds\":-5}",
         "'shutdown_grace_period' must be non-negative"},
    };
    char offer_id[256];
    start_cluster(offer_id);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *ex = executor_json("e1", bad[i].type, bad[i].cmd, bad[i].res);
        if (bad[i].extra != NULL) {
            char *ex2 = NULL;
            ex[strlen(ex) - 1] = '\0';
            ck_assert_int_gt(asprintf(&ex2, "%s,%s}", ex, bad[i].extra), 0);
            free(ex);
            ex = ex2;
        }
        char *t = task_json("t1", ex);
        ck_assert_int_eq(accept_launch(offer_id, t), 202);
        json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
        ck_assert_ptr_nonnull(ev);
        ck_assert_str_eq(update_field(ev, "state"), "TASK_ERROR");
        ck_assert_msg(strstr(update_field(ev, "message"), bad[i].reason) !=
                          NULL,
                      "case %zu: %s", i, update_field(ev, "message"));
        json_decref(ev);
        free(t);
        free(ex);
        ck_assert_uint_eq(hmap_count(fw_state()->executors), 0);
        ck_assert_uint_eq(hmap_count(fw_state()->tasks), 0);
        json_decref(mfx_first_offer(&X, &FW, offer_id));
    }
    /* A task with both a command and an executor. */
    {
        char *ex1 = executor_json("e1", "CUSTOM", EXEC_CMD, HALF);
        char *t1 = task_json("t1", ex1);
        t1[strlen(t1) - 1] = '\0';
        char *both = NULL;
        ck_assert_int_gt(
            asprintf(&both, "%s,\"command\":{\"value\":\"true\"}}", t1), 0);
        ck_assert_int_eq(accept_launch(offer_id, both), 202);
        json_t *ev1 = mfx_next_event(&X, &FW, "UPDATE");
        ck_assert_ptr_nonnull(strstr(update_field(ev1, "message"),
                                     "at least one (but not both)"));
        json_decref(ev1);
        json_decref(mfx_first_offer(&X, &FW, offer_id));
        free(both);
        free(t1);
        free(ex1);
    }
    /* An executor id that names no directory. */
    char *ex = executor_json("a/b", "CUSTOM", EXEC_CMD, HALF);
    char *t = task_json("t1", ex);
    ck_assert_int_eq(accept_launch(offer_id, t), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(
        strstr(update_field(ev, "message"), "contains invalid characters"));
    json_decref(ev);
    free(t);
    free(ex);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    ck_assert_int_eq(agent_used_cpus(), 0);
}
END_TEST

/* LAUNCH_GROUP: the group's executor is tracked with its resources; a
 * second group on it shares them. */
START_TEST(test_launch_group_tracks_executor)
{
    char offer_id[256];
    start_cluster(offer_id);
    char *ex = executor_json("g1", "DEFAULT", NULL, HALF);
    char *t1 = NULL;
    ck_assert_int_gt(
        asprintf(&t1,
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                 "\"type\":\"LAUNCH_GROUP\",\"launch_group\":{\"executor\":%s,"
                 "\"task_group\":{\"tasks\":[{\"name\":\"a\",\"task_id\":{"
                 "\"value\":\"a\"},\"agent_id\":{\"value\":\"%s\"},"
                 "\"resources\":" HALF
                 ",\"command\":{\"value\":\"true\"}}]}}}],"
                 "\"filters\":{\"refuse_seconds\":0}}",
                 offer_id, ex, AG.id),
        0);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", t1), 202);
    json_t *ev = mfx_next_event(&X, &AG, "RUN_TASK_GROUP");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_ptr_nonnull(
        master_executor_find(master_agent_find(X.m, AG.id), FW.id, "g1"));
    ck_assert_int_eq(agent_used_cpus(), 1000);

    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char *t2 = NULL;
    ck_assert_int_gt(
        asprintf(
            &t2,
            "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
            "\"type\":\"LAUNCH_GROUP\",\"launch_group\":{\"executor\":%s,"
            "\"task_group\":{\"tasks\":[{\"name\":\"b\",\"task_id\":{"
            "\"value\":\"b\"},\"agent_id\":{\"value\":\"%s\"},\"executor\":%s,"
            "\"resources\":" HALF ",\"command\":{\"value\":\"true\"}}]}}}],"
            "\"filters\":{\"refuse_seconds\":0}}",
            offer_id, ex, AG.id, ex),
        0);
    /* (task b repeats the group's executor, which Mesos allows) */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", t2), 202);
    ev = mfx_next_event(&X, &AG, "RUN_TASK_GROUP");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(agent_used_cpus(), 1500);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 1);

    /* A task of a group with another executor than the group's. */
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char *other = executor_json("g2", "DEFAULT", NULL, NULL);
    char *t3 = NULL;
    ck_assert_int_gt(
        asprintf(&t3,
                 "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{"
                 "\"type\":\"LAUNCH_GROUP\",\"launch_group\":{\"executor\":%s,"
                 "\"task_group\":{\"tasks\":[{\"name\":\"c\",\"task_id\":{"
                 "\"value\":\"c\"},\"agent_id\":{\"value\":\"%s\"},"
                 "\"executor\":%s,\"resources\":" HALF
                 ",\"command\":{\"value\":\"true\"}}]}}}]}",
                 offer_id, ex, AG.id, other),
        0);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", t3), 202);
    ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(update_field(ev, "state"), "TASK_ERROR");
    ck_assert_ptr_nonnull(
        strstr(update_field(ev, "message"), "is different from executor 'g1'"));
    json_decref(ev);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK_GROUP"));
    ck_assert_int_eq(agent_used_cpus(), 1500);
    free(t3);
    free(other);
    free(t1);
    free(t2);
    free(ex);
}
END_TEST

/* ---- Reading them -----------------------------------------------------------
 */

static json_t *get_state(void)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(f, X.m->http);
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(test_state_and_get_executors)
{
    launch_t1_on_e1();
    json_t *st = get_state();
    json_t *fw = json_array_get(json_object_get(st, "frameworks"), 0);
    json_t *e = json_array_get(json_object_get(fw, "executors"), 0);
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(json_string_value(json_object_get(e, "executor_id")),
                     "e1");
    ck_assert_str_eq(json_string_value(json_object_get(e, "slave_id")), AG.id);
    ck_assert_str_eq(json_string_value(json_object_get(e, "framework_id")),
                     FW.id);
    ck_assert_str_eq(json_string_value(json_object_get(e, "type")), "CUSTOM");
    ck_assert_str_eq(json_string_value(json_object_get(e, "role")), "web");
    ck_assert(json_real_value(json_object_get(json_object_get(e, "resources"),
                                              "cpus")) == 0.5);
    json_t *t = json_array_get(json_object_get(fw, "tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(t, "executor_id")),
                     "e1");
    ck_assert(json_real_value(json_object_get(
                  json_object_get(fw, "used_resources"), "cpus")) == 1.0);
    json_t *ag = json_array_get(json_object_get(st, "slaves"), 0);
    ck_assert(json_real_value(json_object_get(
                  json_object_get(ag, "used_resources"), "cpus")) == 1.0);
    json_decref(st);

    struct http_fake *f = mfx_operator(&X, "{\"type\":\"GET_EXECUTORS\"}");
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *r = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    json_t *x = json_array_get(
        json_object_get(json_object_get(r, "get_executors"), "executors"), 0);
    ck_assert_ptr_nonnull(x);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(x, "executor_info"), "executor_id"),
            "value")),
        "e1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(x, "agent_id"), "value")),
                     AG.id);
    json_decref(r);

    f = mfx_operator(&X, "{\"type\":\"GET_STATE\"}");
    r = json_loads(mfx_body(f), 0, NULL);
    http_fake_free(f);
    ck_assert_uint_eq(
        json_array_size(json_object_get(
            json_object_get(json_object_get(r, "get_state"), "get_executors"),
            "executors")),
        1);
    json_decref(r);
}
END_TEST

/* ---- Exits, messages, shutdown ----------------------------------------------
 */

START_TEST(test_executor_exited)
{
    launch_t1_on_e1();
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"executor_id\":{"
             "\"value\":\"e1\"},\"status\":256}",
             FW.id);
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "EXECUTOR_EXITED", "executor_exited", payload),
        202);
    json_t *ev = mfx_next_event(&X, &FW, "FAILURE");
    ck_assert_ptr_nonnull(ev);
    json_t *fl = json_object_get(ev, "failure");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(fl, "executor_id"), "value")),
                     "e1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(fl, "agent_id"), "value")),
                     AG.id);
    ck_assert_int_eq(json_integer_value(json_object_get(fl, "status")), 256);
    json_decref(ev);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 0);
    ck_assert_int_eq(agent_used_cpus(), 500); /* the task's only */
    ck_assert(mfx_metric(&X, "master/messages_exited_executor") == 1);

    /* Again (now unknown): counted, ignored. */
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "EXECUTOR_EXITED", "executor_exited", payload),
        202);
    mfx_settle(&X);
    ck_assert(!mfx_has_event(&FW, "FAILURE"));
    ck_assert(mfx_metric(&X, "master/messages_exited_executor") == 2);
}
END_TEST

START_TEST(test_messages_and_shutdown)
{
    launch_t1_on_e1();
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"executor_id\":{\"value\":"
             "\"e1\"},\"data\":\"aGVsbG8=\"}",
             AG.id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "MESSAGE", "message", payload),
                     202);
    json_t *ev = mfx_next_event(&X, &AG, "FRAMEWORK_MESSAGE");
    ck_assert_ptr_nonnull(ev);
    json_t *fm = json_object_get(ev, "framework_message");
    ck_assert_str_eq(json_string_value(json_object_get(fm, "data")),
                     "aGVsbG8=");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(fm, "executor_id"), "value")),
                     "e1");
    json_decref(ev);

    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"executor_id\":{\"value\":"
             "\"e1\"}}",
             AG.id);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "SHUTDOWN", "shutdown", payload), 202);
    ev = mfx_next_event(&X, &AG, "SHUTDOWN_EXECUTOR");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_object_get(ev, "shutdown_executor"),
                            "executor_id"),
            "value")),
        "e1");
    json_decref(ev);

    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"executor_id\":{"
             "\"value\":\"e1\"},\"data\":\"d29ybGQ=\"}",
             FW.id);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "EXECUTOR_MESSAGE",
                                    "executor_message", payload),
                     202);
    ev = mfx_next_event(&X, &FW, "MESSAGE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(ev, "message"), "data")),
                     "d29ybGQ=");
    json_decref(ev);
    ck_assert(mfx_metric(&X, "master/messages_executor_to_framework") == 1);
    ck_assert(mfx_metric(&X, "master/valid_executor_to_framework_messages") ==
              1);
    /* For a framework the master does not know. */
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "EXECUTOR_MESSAGE", "executor_message",
                       "{\"framework_id\":{\"value\":\"nope\"},\"executor_id\":"
                       "{\"value\":\"e1\"},\"data\":\"eA==\"}"),
        202);
    ck_assert(mfx_metric(&X, "master/invalid_executor_to_framework_messages") ==
              1);
    ck_assert(mfx_metric(&X, "master/valid_framework_to_executor_messages") ==
              1);
}
END_TEST

/* ---- Removal ----------------------------------------------------------------
 */

START_TEST(test_teardown_removes_executors)
{
    launch_t1_on_e1();
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    json_t *ev = mfx_next_event(&X, &AG, "SHUTDOWN_FRAMEWORK");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_uint_eq(hmap_count(master_agent_find(X.m, AG.id)->executors), 0);
    ck_assert_int_eq(agent_used_cpus(), 0);
}
END_TEST

START_TEST(test_agent_removal_removes_executors)
{
    launch_t1_on_e1();
    master_agent_remove(X.m, master_agent_find(X.m, AG.id),
                        AGENT_REMOVED_SHUTDOWN, "test");
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 0);
}
END_TEST

/* ---- Re-registration --------------------------------------------------------
 */

/* The agent's re-registration (its id, the framework, the task and the
 * executors it runs) as JSON. */
static char *resubscribe_json(bool with_executor)
{
    char *j = NULL;
    ck_assert_int_gt(
        asprintf(
            &j,
            "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
            "\"id\":{\"value\":\"%s\"},\"hostname\":\"host1\",\"port\":5051,"
            "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
            "\"scalar\":{\"value\":2}},{\"name\":\"mem\",\"type\":\"SCALAR\","
            "\"scalar\":{\"value\":1024}}]},\"version\":\"test\","
            "\"address\":{\"ip\":\"127.0.0.2\",\"port\":5051},"
            "\"frameworks\":[{\"id\":{\"value\":\"%s\"},\"user\":\"u\","
            "\"name\":\"fw\",\"roles\":[\"web\"],\"capabilities\":[{\"type\":"
            "\"MULTI_ROLE\"}]}],"
            "\"tasks\":[{\"name\":\"t1\",\"task_id\":{\"value\":\"t1\"},"
            "\"framework_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":"
            "\"%s\"},\"executor_id\":{\"value\":\"e1\"},\"state\":"
            "\"TASK_RUNNING\",\"resources\":[{\"name\":\"cpus\",\"type\":"
            "\"SCALAR\",\"scalar\":{\"value\":0.5},\"allocation_info\":{"
            "\"role\":\"web\"}}]}]%s%s%s%s}}",
            AG.id, FW.id, FW.id, AG.id,
            with_executor ? ",\"executors\":[{\"executor_id\":{\"value\":"
                            "\"e1\"},\"framework_id\":{\"value\":\""
                          : "",
            with_executor ? FW.id : "",
            with_executor ? "\"},\"type\":\"CUSTOM\",\"command\":" EXEC_CMD
                            ",\"resources\":[{\"name\":\"cpus\",\"type\":"
                            "\"SCALAR\",\"scalar\":{\"value\":0.5},"
                            "\"allocation_info\":{\"role\":\"web\"}}]}"
                          : "",
            with_executor ? "]" : ""),
        0);
    return j;
}

static void resubscribe(bool with_executor)
{
    char *json = resubscribe_json(with_executor);
    mfx_peer_free(&AG);
    char id[256];
    snprintf(id, sizeof(id), "%s", AG.id);
    AG.stream = mfx_post(&X, master_agent_api, NULL, json);
    ck_assert_msg(http_fake_is_stream(AG.stream), "SUBSCRIBE answered %d: %s",
                  http_fake_status(AG.stream), mfx_body(AG.stream));
    snprintf(AG.stream_id, sizeof(AG.stream_id), "%s",
             http_fake_reply_header(AG.stream, "Mesos-Stream-Id"));
    snprintf(AG.id, sizeof(AG.id), "%s", id);
    AG.next = 0;
    json_t *ev = mfx_next_event(&X, &AG, "REGISTERED");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    free(json);
}

/* After a master failover the agent reports its executor: the master
 * rebuilds it, and counts its resources as used. */
START_TEST(test_reregistration_rebuilds_executors)
{
    launch_t1_on_e1();
    mfx_restart(&X);
    resubscribe(true);
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_ptr_nonnull(ag);
    struct executor *e = master_executor_find(ag, FW.id, "e1");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->info->command->value, "./my-executor");
    ck_assert_int_eq(agent_used_cpus(), 1000);
    ck_assert_uint_eq(hmap_count(e->fw->executors), 1);
}
END_TEST

/* A known agent that reconnects without the executor: the master forgets
 * it and recovers its resources (Mesos's reconciliation of a known
 * agent); with it, it stays. */
START_TEST(test_reconnect_reconciles_executors)
{
    launch_t1_on_e1();
    resubscribe(true);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 1);
    ck_assert_int_eq(agent_used_cpus(), 1000);
    resubscribe(false);
    ck_assert_uint_eq(hmap_count(fw_state()->executors), 0);
    ck_assert_int_eq(agent_used_cpus(), 500);
}
END_TEST

static bool both_replied(void *arg)
{
    struct http_fake **f = arg;
    return http_fake_replied(f[0]) && http_fake_replied(f[1]);
}

/* A failover's race: the agent re-registers with a task of a framework
 * this master does not know, and the framework's own first SUBSCRIBE to
 * this master arrives while the agent's registry write is in flight. The
 * agent's registration then finds the framework still being recorded (no
 * allocator entry yet): its task is accounted for all the same (the
 * master crashed here), and the framework's subscription completes. */
START_TEST(test_reregistration_while_framework_subscribes)
{
    snprintf(AG.id, sizeof(AG.id), "%s", "failover-S0");
    snprintf(FW.id, sizeof(FW.id), "%s", "failover-0000");
    char *ajson = resubscribe_json(false);
    struct http_fake *f[2];
    f[0] = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(f[0], "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f[0], "Accept", HTTP_CONTENT_JSON);
    http_fake_set_body(f[0], ajson, strlen(ajson));
    char *fjson = NULL;
    ck_assert_int_gt(
        asprintf(&fjson,
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
                 "\"id\":{\"value\":\"%s\"},\"user\":\"u\",\"name\":\"fw\","
                 "\"roles\":[\"web\"],\"failover_timeout\":60,"
                 "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}}}",
                 FW.id),
        0);
    f[1] = http_fake_new(X.base, HTTP_POST, "/api/v1/scheduler");
    http_fake_add_header(f[1], "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f[1], "Accept", HTTP_CONTENT_JSON);
    http_fake_set_body(f[1], fjson, strlen(fjson));
    /* Both handlers run before either registry write completes. */
    http_fake_dispatch(f[0], master_agent_api, X.m);
    http_fake_dispatch(f[1], master_scheduler_api, X.m);
    ck_assert(mfx_run_until(&X, both_replied, f));
    ck_assert_msg(http_fake_is_stream(f[0]), "agent: %d %s",
                  http_fake_status(f[0]), mfx_body(f[0]));
    ck_assert_msg(http_fake_is_stream(f[1]), "framework: %d %s",
                  http_fake_status(f[1]), mfx_body(f[1]));
    AG.stream = f[0];
    FW.stream = f[1];
    snprintf(FW.stream_id, sizeof(FW.stream_id), "%s",
             http_fake_reply_header(f[1], "Mesos-Stream-Id"));

    struct framework *fw = fw_state();
    ck_assert_ptr_nonnull(fw);
    ck_assert_ptr_nonnull(fw->alloc);
    ck_assert(fw->active);
    ck_assert_ptr_nonnull(hmap_get(fw->tasks, "t1"));
    ck_assert_int_eq(agent_used_cpus(), 500);
    /* The allocator counts the task: the framework is offered the rest. */
    json_t *ev = mfx_next_event(&X, &FW, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_t *res = json_object_get(
        json_array_get(json_object_get(json_object_get(ev, "offers"), "offers"),
                       0),
        "resources");
    double cpus = 0;
    size_t i;
    json_t *r;
    json_array_foreach(res, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), "cpus") == 0)
            cpus += json_real_value(
                json_object_get(json_object_get(r, "scalar"), "value"));
    }
    ck_assert_msg(cpus == 1.5, "offered %g cpus", cpus);
    json_decref(ev);
    free(ajson);
    free(fjson);
}
END_TEST

static Suite *master_executors_suite(void)
{
    Suite *s = suite_create("master_executors");
    TCase *tc = tcase_create("executors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_launch_with_executor);
    tcase_add_test(tc, test_tasks_share_executor);
    tcase_add_test(tc, test_incompatible_executor_refused);
    tcase_add_test(tc, test_executor_validation);
    tcase_add_test(tc, test_launch_group_tracks_executor);
    tcase_add_test(tc, test_state_and_get_executors);
    tcase_add_test(tc, test_executor_exited);
    tcase_add_test(tc, test_messages_and_shutdown);
    tcase_add_test(tc, test_teardown_removes_executors);
    tcase_add_test(tc, test_agent_removal_removes_executors);
    tcase_add_test(tc, test_reregistration_rebuilds_executors);
    tcase_add_test(tc, test_reconnect_reconciles_executors);
    tcase_add_test(tc, test_reregistration_while_framework_subscribes);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_executors_suite)
