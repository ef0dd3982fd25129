/*
 * Custom executors end to end: the real master and agent, a framework
 * speaking the scheduler API in JSON (harness_api.h) with checkpointing on,
 * and test_executor (written only against Mesos's documented executor
 * API). Two tasks launched on one executor run; messages go both ways
 * (scheduler MESSAGE -> executor, executor MESSAGE -> framework); KILL
 * ends one; the agent is killed with SIGKILL and started again on the same
 * port, the executor subscribes again and keeps its task, which the master
 * still shows running; scheduler SHUTDOWN ends the executor, whose last
 * task is killed, and the framework gets FAILURE for the executor.
 */
#include "harness.h"
#include "harness_api.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#ifndef TEST_EXECUTOR_BIN
#define TEST_EXECUTOR_BIN "test_executor"
#endif

#define TASK_RES                                                               \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.2}},"     \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"
#define EXEC_RES                                                               \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},"     \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

static struct e2e_proc master, agent;
static struct conn fw;

/* A TaskInfo (JSON text) on executor "ex1" into buf. The executor's
 * program comes into its sandbox as a URI (the fetcher, as for a command
 * task) and runs from there. */
static void task_json(char *buf, size_t len, const char *task_id,
                      const char *agent_id)
{
    snprintf(buf, len,
             "{\"name\":\"%s\",\"task_id\":{\"value\":\"%s\"},"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":" TASK_RES ","
             "\"executor\":{\"executor_id\":{\"value\":\"ex1\"},"
             "\"type\":\"CUSTOM\",\"name\":\"e2e executor\","
             "\"command\":{\"value\":\"./test_executor\",\"shell\":false,"
             "\"uris\":[{\"value\":\"%s\",\"executable\":true,"
             "\"output_file\":\"test_executor\"}]},"
             "\"resources\":" EXEC_RES "}}",
             task_id, task_id, agent_id, TEST_EXECUTOR_BIN);
}

/* The next UPDATE of task_id in state (others are acknowledged and
 * skipped); acknowledged too. Returns the status (new reference). */
static json_t *wait_update(const char *task_id, const char *state)
{
    int64_t deadline = e2e_now_ms() + 20000;
    while (e2e_now_ms() < deadline) {
        json_t *ev = api_wait_event(&fw, "UPDATE", 1000);
        if (ev == NULL)
            continue;
        json_t *st = json_object_get(json_object_get(ev, "update"), "status");
        api_fw_ack_status(&fw, master.port, st);
        const char *tid = json_string_value(
            json_object_get(json_object_get(st, "task_id"), "value"));
        const char *s = json_string_value(json_object_get(st, "state"));
        if (tid != NULL && s != NULL && strcmp(tid, task_id) == 0 &&
            strcmp(s, state) == 0) {
            json_incref(st);
            json_decref(ev);
            return st;
        }
        json_decref(ev);
    }
    ck_abort_msg("no %s for task %s", state, task_id);
    return NULL;
}

/* The master's state of task_id in its /state ("" when absent). */
static void master_task_state(const char *task_id, char *out, size_t len)
{
    json_t *st = api_get_json(master.port, "/state");
    out[0] = '\0';
    size_t i, k;
    json_t *f, *t;
    json_array_foreach(json_object_get(st, "frameworks"), i, f)
        json_array_foreach(json_object_get(f, "tasks"), k, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "id")), task_id) == 0)
            snprintf(out, len, "%s",
                     json_string_value(json_object_get(t, "state")));
    }
    json_decref(st);
}

START_TEST(test_executor_end_to_end)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    const char *aargs[] = {"--resources=cpus:2;mem:1024", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    api_subscribe_framework(&fw, master.port,
                            "{\"user\":\"e2e\",\"name\":\"executors\","
                            "\"checkpoint\":true}");

    char offer_id[256], agent_id[256];
    json_t *offers = api_wait_offer(&fw, offer_id, agent_id, 10000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    char t1[2048], t2[2048], payload[8192];
    task_json(t1, sizeof(t1), "t1", agent_id);
    task_json(t2, sizeof(t2), "t2", agent_id);
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[%s,%s]}}],"
             "\"filters\":{\"refuse_seconds\":3600}}",
             offer_id, t1, t2);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "ACCEPT", "accept", payload),
                     202);
    json_decref(wait_update("t1", "TASK_RUNNING"));
    json_t *st = wait_update("t2", "TASK_RUNNING");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(st, "executor_id"), "value")),
                     "ex1");
    json_decref(st);

    /* Framework -> executor -> framework. */
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"executor_id\":{\"value\":"
             "\"ex1\"},\"data\":\"aGVsbG8=\"}",
             agent_id); /* "hello" */
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "MESSAGE", "message", payload), 202);
    json_t *m = api_wait_event(&fw, "MESSAGE", 15000);
    ck_assert_msg(m != NULL, "no MESSAGE from the executor");
    json_t *mm = json_object_get(m, "message");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(mm, "executor_id"), "value")),
                     "ex1");
    /* base64 of "echo:hello" */
    ck_assert_str_eq(json_string_value(json_object_get(mm, "data")),
                     "ZWNobzpoZWxsbw==");
    json_decref(m);

    /* KILL one task. */
    snprintf(payload, sizeof(payload),
             "{\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":"
             "\"%s\"}}",
             agent_id);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "KILL", "kill", payload),
                     202);
    json_decref(wait_update("t1", "TASK_KILLED"));

    /* kill -9 the agent, start it again on its port: the executor
     * subscribes again and keeps t2. */
    e2e_proc_stop(&agent, SIGKILL, 10000);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    int64_t deadline = e2e_now_ms() + 15000;
    bool back = false;
    while (!back && e2e_now_ms() < deadline) {
        json_t *a = api_get_json(agent.port, "/state");
        size_t i, k;
        json_t *f, *e;
        json_array_foreach(json_object_get(a, "frameworks"), i, f)
            json_array_foreach(json_object_get(f, "executors"), k, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "id")), "ex1") ==
                    0 &&
                json_array_size(json_object_get(e, "tasks")) == 1)
                back = true;
        }
        json_decref(a);
        if (!back)
            e2e_sleep_ms(100);
    }
    ck_assert_msg(back, "the agent does not show ex1 with t2 after restart");

    /* The executor's sandbox is served by /files under its own path, and
     * holds the program the fetcher brought. */
    json_t *a = api_get_json(agent.port, "/state");
    const char *dir = NULL;
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(a, "frameworks"), i, f)
        json_array_foreach(json_object_get(f, "executors"), k, e) dir =
            json_string_value(json_object_get(e, "directory"));
    ck_assert_ptr_nonnull(dir);
    char url[PATH_MAX + 64];
    snprintf(url, sizeof(url), "/files/browse?path=%s", dir);
    json_t *listing = api_get_json(agent.port, url);
    ck_assert_msg(listing != NULL && json_is_array(listing), "%s: no listing",
                  url);
    bool fetched = false;
    json_array_foreach(listing, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "path"));
        fetched = fetched || (p != NULL && strstr(p, "/test_executor") != NULL);
    }
    ck_assert_msg(fetched, "%s does not list the fetched test_executor", url);
    json_decref(listing);
    json_decref(a);
    /* Past the re-registration timeout (2 s), t2 still runs. */
    e2e_sleep_ms(2500);
    char state[64];
    master_task_state("t2", state, sizeof(state));
    ck_assert_str_eq(state, "TASK_RUNNING");

    /* SHUTDOWN the executor: t2 killed, FAILURE for the executor. */
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"executor_id\":{\"value\":"
             "\"ex1\"}}",
             agent_id);
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "SHUTDOWN", "shutdown", payload), 202);
    json_decref(wait_update("t2", "TASK_KILLED"));
    json_t *fail = api_wait_event(&fw, "FAILURE", 15000);
    ck_assert_msg(fail != NULL, "no FAILURE for the executor");
    json_t *ff = json_object_get(fail, "failure");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(ff, "executor_id"), "value")),
                     "ex1");
    ck_assert_int_eq(json_integer_value(json_object_get(ff, "status")), 0);
    json_decref(fail);
    ck_assert(e2e_wait_none_under(agent.work_dir, 5000));

    api_conn_close(&fw);
    e2e_stop_master_agent(&master, &agent);
}
END_TEST

E2E_ONE_TEST_MAIN("e2e_executors_master", "executors", test_executor_end_to_end,
                  120)
