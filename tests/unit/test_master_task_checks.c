/*
 * The master's validation of TaskInfo.health_check and TaskInfo.check
 * (master/task_checks.h) through ACCEPT: each invalid one refuses the task
 * with TASK_ERROR, REASON_TASK_INVALID and Mesos's message, sends no
 * RUN_TASK and records no task; valid ones reach the agent unchanged.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "common/http_fake.h"
#include "master/frameworks.h"
#include "master/master_types.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"

#define FW_INFO "{\"user\":\"u\",\"name\":\"fw\",\"role\":\"web\"}"
#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"

MFX_STANDARD_FIXTURE

/* ACCEPT the first offer launching task t1 whose TaskInfo also has extra
 * (JSON members, e.g. "\"check\":{...}"); returns fw's next UPDATE, or
 * NULL when none came. */
static json_t *launch_with(const char *extra, bool expect_update)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"sleep 100\"},%s}]}}]}",
             offer_id, AG.id, SMALL, extra);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    return expect_update ? mfx_next_event(&X, &FW, "UPDATE") : NULL;
}

static const char *status_field(json_t *ev, const char *field)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), field));
}

static const struct {
    const char *extra;
    const char *message;
} refused[] = {
    {"\"health_check\":{}",
     "Task uses invalid health check: HealthCheck must specify 'type'"},
    {"\"health_check\":{\"type\":\"UNKNOWN\"}",
     "Task uses invalid health check: 'UNKNOWN' is not a valid health check "
     "type"},
    {"\"health_check\":{\"type\":\"HTTP\"}",
     "Task uses invalid health check: Expecting 'http' to be set for HTTP "
     "health check"},
    {"\"health_check\":{\"type\":\"TCP\"}",
     "Task uses invalid health check: Expecting 'tcp' to be set for TCP "
     "health check"},
    {"\"health_check\":{\"type\":\"COMMAND\"}",
     "Task uses invalid health check: Expecting 'command' to be set for "
     "COMMAND health check"},
    {"\"health_check\":{\"type\":\"COMMAND\",\"command\":{}}",
     "Task uses invalid health check: Command health check must contain "
     "'shell command'"},
    {"\"health_check\":{\"type\":\"COMMAND\",\"command\":{\"shell\":false}}",
     "Task uses invalid health check: Command health check must contain "
     "'executable path'"},
    {"\"health_check\":{\"type\":\"COMMAND\",\"command\":{\"value\":\"true\","
     "\"environment\":{\"variables\":[{\"name\":\"A\"}]}}}",
     "Task uses invalid health check: Health check's `CommandInfo` is "
     "invalid: Environment variable 'A' of type 'VALUE' must have a value "
     "set"},
    {"\"health_check\":{\"type\":\"HTTP\",\"http\":{\"port\":80,"
     "\"scheme\":\"ftp\"}}",
     "Task uses invalid health check: Unsupported HTTP health check scheme: "
     "'ftp'"},
    {"\"health_check\":{\"type\":\"HTTP\",\"http\":{\"port\":80,"
     "\"path\":\"health\"}}",
     "Task uses invalid health check: The path 'health' of HTTP health check "
     "must start with '/'"},
    {"\"health_check\":{\"type\":\"HTTP\",\"http\":{\"port\":70000}}",
     "Task uses invalid health check: Expecting 'port' to be in [1, 65535], "
     "got 70000"},
    {"\"health_check\":{\"type\":\"TCP\",\"tcp\":{\"port\":0}}",
     "Task uses invalid health check: Expecting 'port' to be in [1, 65535], "
     "got 0"},
    {"\"health_check\":{\"type\":\"TCP\",\"tcp\":{\"port\":80},"
     "\"delay_seconds\":-1}",
     "Task uses invalid health check: Expecting 'delay_seconds' to be "
     "non-negative"},
    {"\"health_check\":{\"type\":\"TCP\",\"tcp\":{\"port\":80},"
     "\"grace_period_seconds\":-1}",
     "Task uses invalid health check: Expecting 'grace_period_seconds' to be "
     "non-negative"},
    {"\"health_check\":{\"type\":\"TCP\",\"tcp\":{\"port\":80},"
     "\"interval_seconds\":-0.5}",
     "Task uses invalid health check: Expecting 'interval_seconds' to be "
     "non-negative"},
    {"\"health_check\":{\"type\":\"TCP\",\"tcp\":{\"port\":80},"
     "\"timeout_seconds\":-2}",
     "Task uses invalid health check: Expecting 'timeout_seconds' to be "
     "non-negative"},
    {"\"check\":{}", "Task uses invalid check: CheckInfo must specify 'type'"},
    {"\"check\":{\"type\":\"UNKNOWN\"}",
     "Task uses invalid check: 'UNKNOWN' is not a valid check type"},
    {"\"check\":{\"type\":\"COMMAND\"}",
     "Task uses invalid check: Expecting 'command' to be set for COMMAND "
     "check"},
    {"\"check\":{\"type\":\"COMMAND\",\"command\":{\"command\":{}}}",
     "Task uses invalid check: Command check must contain 'shell command'"},
    {"\"check\":{\"type\":\"COMMAND\",\"command\":{\"command\":{\"value\":"
     "\"x\",\"environment\":{\"variables\":[{\"name\":\"S\",\"type\":"
     "\"SECRET\"}]}}}}",
     "Task uses invalid check: Check's `CommandInfo` is invalid: Environment "
     "variable 'S' of type 'SECRET' must have a secret set"},
    {"\"check\":{\"type\":\"HTTP\"}",
     "Task uses invalid check: Expecting 'http' to be set for HTTP check"},
    {"\"check\":{\"type\":\"HTTP\",\"http\":{\"port\":8080,\"path\":\"x\"}}",
     "Task uses invalid check: The path 'x' of HTTP check must start with "
     "'/'"},
    {"\"check\":{\"type\":\"TCP\"}",
     "Task uses invalid check: Expecting 'tcp' to be set for TCP check"},
    {"\"check\":{\"type\":\"TCP\",\"tcp\":{\"port\":65536}}",
     "Task uses invalid check: Expecting 'port' to be in [1, 65535], got "
     "65536"},
    {"\"check\":{\"type\":\"TCP\",\"tcp\":{\"port\":1},\"timeout_seconds\":-1}",
     "Task uses invalid check: Expecting 'timeout_seconds' to be "
     "non-negative"},
    /* The check is validated first, as Mesos does. */
    {"\"check\":{\"type\":\"TCP\"},\"health_check\":{}",
     "Task uses invalid check: Expecting 'tcp' to be set for TCP check"},
};

START_TEST(test_refused)
{
    json_t *ev = launch_with(refused[_i].extra, true);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(status_field(ev, "state"), "TASK_ERROR");
    ck_assert_str_eq(status_field(ev, "reason"), "REASON_TASK_INVALID");
    ck_assert_str_eq(status_field(ev, "source"), "SOURCE_MASTER");
    ck_assert_str_eq(status_field(ev, "message"), refused[_i].message);
    json_decref(ev);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    struct framework *fw = master_framework_find(X.m, FW.id);
    ck_assert_uint_eq(hmap_count(fw->tasks), 0);
}
END_TEST

START_TEST(test_valid_reach_the_agent)
{
    launch_with("\"health_check\":{\"type\":\"HTTP\",\"http\":{\"port\":8080,"
                "\"path\":\"/ok\",\"scheme\":\"http\"},\"delay_seconds\":0,"
                "\"interval_seconds\":0.2,\"consecutive_failures\":2},"
                "\"check\":{\"type\":\"COMMAND\",\"command\":{\"command\":{"
                "\"value\":\"true\"}}}",
                false);
    json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(run);
    json_t *ti = json_object_get(json_object_get(run, "run_task"), "task");
    json_t *hc = json_object_get(ti, "health_check");
    ck_assert_ptr_nonnull(hc);
    ck_assert_str_eq(json_string_value(json_object_get(hc, "type")), "HTTP");
    ck_assert_int_eq(json_integer_value(
                         json_object_get(json_object_get(hc, "http"), "port")),
                     8080);
    json_t *ck = json_object_get(ti, "check");
    ck_assert_ptr_nonnull(ck);
    ck_assert_str_eq(json_string_value(json_object_get(ck, "type")), "COMMAND");
    json_decref(run);
    ck_assert(!mfx_has_event(&FW, "UPDATE"));
}
END_TEST

/* GET target through the master's routes; the body as JSON. */
static json_t *get_json(const char *target)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, target);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(http_fake_replied(f));
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *body = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)body, len, 0, NULL);
    http_fake_free(f);
    ck_assert_ptr_nonnull(j);
    return j;
}

/* The agent reports t1 RUNNING with healthy and a check_status (uuid
 * numbered u); fw's UPDATE is returned (new reference). */
static json_t *agent_reports(int u, const char *healthy, int exit_code)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"reason\":"
             "\"REASON_TASK_HEALTH_CHECK_STATUS_UPDATED\",\"uuid\":"
             "\"AAAAAAAAAAAAAAAAAAAAA%c==\",\"agent_id\":{\"value\":\"%s\"},"
             "\"healthy\":%s,\"check_status\":{\"type\":\"COMMAND\","
             "\"command\":{\"exit_code\":%d}}}}",
             FW.id, "AQgw"[u], AG.id, healthy, exit_code);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UPDATE", "update", payload), 202);
    return mfx_next_event(&X, &FW, "UPDATE");
}

static json_t *status_of(json_t *ev)
{
    return json_object_get(json_object_get(ev, "update"), "status");
}

START_TEST(test_health_and_check_status_shown)
{
    launch_with("\"check\":{\"type\":\"COMMAND\",\"command\":{\"command\":{"
                "\"value\":\"true\"}}}",
                false);
    json_decref(mfx_next_event(&X, &AG, "RUN_TASK"));
    /* Forwarded to the framework as the agent sent them. */
    json_t *ev = agent_reports(1, "true", 3);
    ck_assert_ptr_nonnull(ev);
    json_t *st = status_of(ev);
    ck_assert(json_is_true(json_object_get(st, "healthy")));
    ck_assert_int_eq(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(st, "check_status"), "command"),
            "exit_code")),
        3);
    json_decref(ev);
    json_decref(agent_reports(2, "false", 4));

    /* /state: the latest status's healthy and check_status. */
    json_t *state = get_json("/state");
    json_t *task = json_array_get(
        json_object_get(json_array_get(json_object_get(state, "frameworks"), 0),
                        "tasks"),
        0);
    json_t *sts = json_object_get(task, "statuses");
    json_t *last = json_array_get(sts, json_array_size(sts) - 1);
    ck_assert_str_eq(json_string_value(json_object_get(last, "state")),
                     "TASK_RUNNING");
    ck_assert(json_is_false(json_object_get(last, "healthy")));
    json_t *cs = json_object_get(last, "check_status");
    ck_assert_str_eq(json_string_value(json_object_get(cs, "type")), "COMMAND");
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(cs, "command"), "exit_code")),
                     4);
    json_decref(state);

    /* Reconciliation answers with them too, as Mesos. */
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "RECONCILE", "reconcile", "{}"), 202);
    ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    st = status_of(ev);
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                     "REASON_RECONCILIATION");
    ck_assert(json_is_false(json_object_get(st, "healthy")));
    ck_assert_int_eq(
        json_integer_value(json_object_get(
            json_object_get(json_object_get(st, "check_status"), "command"),
            "exit_code")),
        4);
    json_decref(ev);
}
END_TEST

static Suite *task_checks_suite(void)
{
    Suite *s = suite_create("master_task_checks");
    TCase *tc = tcase_create("validation");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_refused, 0,
                        (int)(sizeof(refused) / sizeof(refused[0])));
    tcase_add_test(tc, test_valid_reach_the_agent);
    tcase_add_test(tc, test_health_and_check_status_shown);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(task_checks_suite)
