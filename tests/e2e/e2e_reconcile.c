/*
 * End-to-end tests of the master's side of reconciliation
 * (docs/reconciliation.md), with a scripted agent and a scripted framework
 * so that every step is deterministic: the agent re-registers at each step
 * of a task's life and the master must handle the three cases (a task the
 * agent did not report, a task in another state, a task the master does
 * not know), agents coming back from unreachable, and the framework's
 * explicit reconciliation rules.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"

#define FW_PLAIN "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":600}"
#define FW_AWARE                                                               \
    "{\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":600,"                \
    "\"capabilities\":[{\"type\":\"PARTITION_AWARE\"}]}"
#define UUID1 "AAAAAAAAAAAAAAAAAAAAAQ=="
#define UUID2 "AAAAAAAAAAAAAAAAAAAAAg=="

static struct e2e_proc master;

static void start(const char *registry, const char *const *extra)
{
    const char *args[12] = {registry, "--allocation_interval=50ms"};
    int n = 2;
    for (; extra != NULL && *extra != NULL && n < 11; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
}

static void stop(void)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/health", NULL, NULL, 0, T, &r), 0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
    e2e_proc_cleanup(&master);
}

/* (Re-)subscribe the scripted agent `id` reporting tasks (a JSON array of
 * mesos.v1.Task, may be "[]") of framework fw (its FrameworkInfo JSON with
 * the id). Returns the REGISTERED event (caller json_decref's). */
static json_t *resubscribe(struct conn *c, const char *id, const char *fw_info,
                           const char *tasks)
{
    memset(c, 0, sizeof(*c));
    static char body[16384];
    snprintf(body, sizeof(body),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"id\":{\"value\":\"%s\"},\"hostname\":\"host1\",\"port\":5051,"
             "\"resources\":%s},\"frameworks\":[%s],\"tasks\":%s,"
             "\"version\":\"test\"}}",
             id, AGENT_RES, fw_info != NULL ? fw_info : "", tasks);
    const char *headers[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(e2e_stream_open(master.port, "POST", "/api/v1/agent",
                                     headers, body, strlen(body), T, &c->s),
                     0);
    ck_assert_int_eq(c->s.head.status, 200);
    const char *sid = e2e_response_header(&c->s.head, "Mesos-Stream-Id");
    ck_assert_ptr_nonnull(sid);
    snprintf(c->stream_id, sizeof(c->stream_id), "%s", sid);
    snprintf(c->id, sizeof(c->id), "%s", id);
    json_t *ev = api_wait_event(c, "REGISTERED", T);
    ck_assert_ptr_nonnull(ev);
    return ev;
}

/* A reported task in state, with SMALL resources. */
static char *task_json(const char *task_id, const char *fw_id,
                       const char *agent_id, const char *state)
{
    char *s = NULL;
    ck_assert_int_gt(
        asprintf(&s,
                 "{\"name\":\"t\",\"task_id\":{\"value\":\"%s\"},"
                 "\"framework_id\":{\"value\":\"%s\"},\"agent_id\":{"
                 "\"value\":\"%s\"},\"state\":\"%s\",\"resources\":%s}",
                 task_id, fw_id, agent_id, state, SMALL),
        0);
    return s;
}

/* The framework's FrameworkInfo with its id, for the agent's report. */
static char *fw_json(const char *info, const char *fw_id)
{
    char *s = NULL;
    size_t n = strlen(info);
    ck_assert_int_gt(asprintf(&s, "%.*s,\"id\":{\"value\":\"%s\"}}",
                              (int)(n - 1), info, fw_id),
                     0);
    return s;
}

/* The state of the next UPDATE of task_id on fw (others skipped), with its
 * reason in reason (may be NULL). Fails the test when none comes. */
static void expect_update(struct conn *fw, const char *task_id,
                          const char *state, const char *reason)
{
    for (;;) {
        json_t *up = api_wait_event(fw, "UPDATE", T);
        ck_assert_msg(up != NULL, "no update %s for %s", state, task_id);
        json_t *st = json_object_get(json_object_get(up, "update"), "status");
        const char *tid = json_string_value(
            json_object_get(json_object_get(st, "task_id"), "value"));
        if (strcmp(tid, task_id) != 0) {
            json_decref(up);
            continue;
        }
        ck_assert_str_eq(json_string_value(json_object_get(st, "state")),
                         state);
        if (reason != NULL)
            ck_assert_str_eq(json_string_value(json_object_get(st, "reason")),
                             reason);
        json_decref(up);
        return;
    }
}

/* No UPDATE reaches fw for ms: a window that proves an absence (the
 * master does not assume or answer anything yet), so there is nothing to
 * wait for instead. */
static void expect_no_update(struct conn *fw, int ms)
{
    json_t *up = api_wait_event(fw, "UPDATE", ms);
    ck_assert_msg(up == NULL, "unexpected update: %s",
                  up ? json_dumps(up, 0) : "");
}

static const char *task_state_in_master(const char *task_id)
{
    static char state[64];
    state[0] = '\0';
    /* The live tasks: /tasks also lists the completed ones. */
    json_t *j = api_get_json(master.port, "/state");
    size_t i, k;
    json_t *f, *t;
    json_array_foreach(json_object_get(j, "frameworks"), k, f)
    {
        json_array_foreach(json_object_get(f, "tasks"), i, t)
        {
            if (strcmp(json_string_value(json_object_get(t, "id")), task_id) ==
                0)
                snprintf(state, sizeof(state), "%s",
                         json_string_value(json_object_get(t, "state")));
        }
    }
    json_decref(j);
    return state[0] ? state : NULL;
}

/* Subscribe agent and framework and launch task "t1"; the agent receives
 * RUN_TASK. */
static void launch_t1(struct conn *ag, struct conn *fw, const char *fw_info)
{
    api_subscribe_agent(ag, master.port, "host1", AGENT_RES);
    api_subscribe_framework(fw, master.port, fw_info);
    char offer[256], agent[256];
    json_t *ev = api_wait_offer(fw, offer, agent, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    ck_assert_int_eq(api_launch(fw, master.port, offer, agent, "t1", SMALL),
                     202);
    json_t *run = api_wait_event(ag, "RUN_TASK", T);
    ck_assert_ptr_nonnull(run);
    json_decref(run);
}

static int ack(struct conn *fw, const char *agent_id, const char *uuid)
{
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t1\"},"
             "\"uuid\":\"%s\"}",
             agent_id, uuid);
    return api_fw_call(fw, master.port, "ACKNOWLEDGE", "acknowledge", payload);
}

/* Case 1: the RUN_TASK was lost (the agent re-registers without the task):
 * the master asks the agent instead of assuming the task lost, and the
 * agent's answer reaches the framework. */
START_TEST(test_unreported_task_is_asked_about)
{
    start("--registry=in_memory", NULL);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_PLAIN);
    api_conn_close(&ag);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    json_t *reg = resubscribe(&ag, id, NULL, "[]");
    json_t *rec =
        json_object_get(json_object_get(reg, "registered"), "reconcile_tasks");
    ck_assert_int_eq(json_array_size(rec), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(rec, 0), "task_id"), "value")),
        "t1");
    json_decref(reg);
    /* Not assumed lost: no update yet, the task is still STAGING. */
    expect_no_update(&fw, 300);
    ck_assert_str_eq(task_state_in_master("t1"), "TASK_STAGING");
    /* The agent never knew it. */
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_DROPPED", UUID1),
        202);
    expect_update(&fw, "t1", "TASK_DROPPED", NULL);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* A running task reported as running: nothing is asked, nothing is sent. */
START_TEST(test_running_task_reported)
{
    start("--registry=in_memory", NULL);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_PLAIN);
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_RUNNING", UUID1),
        202);
    expect_update(&fw, "t1", "TASK_RUNNING", NULL);
    ck_assert_int_eq(ack(&fw, ag.id, UUID1), 202);
    api_conn_close(&ag);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    char *t = task_json("t1", fw.id, id, "TASK_RUNNING");
    char tasks[4096];
    snprintf(tasks, sizeof(tasks), "[%s]", t);
    json_t *reg = resubscribe(&ag, id, NULL, tasks);
    ck_assert_int_eq(
        json_array_size(json_object_get(json_object_get(reg, "registered"),
                                        "reconcile_tasks")),
        0);
    json_decref(reg);
    expect_no_update(&fw, 300);
    ck_assert_str_eq(task_state_in_master("t1"), "TASK_RUNNING");
    free(t);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* Case 2: the task finished while the agent was away and its update is
 * pending: the agent's state is the truth at once, and the update flows
 * and its acknowledgement reaches the agent. */
START_TEST(test_other_state_agent_wins)
{
    start("--registry=in_memory", NULL);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_PLAIN);
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_RUNNING", UUID1),
        202);
    expect_update(&fw, "t1", "TASK_RUNNING", NULL);
    ck_assert_int_eq(ack(&fw, ag.id, UUID1), 202);
    api_conn_close(&ag);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    char *t = task_json("t1", fw.id, id, "TASK_FINISHED");
    char tasks[4096];
    snprintf(tasks, sizeof(tasks), "[%s]", t);
    json_t *reg = resubscribe(&ag, id, NULL, tasks);
    json_decref(reg);
    ck_assert_str_eq(task_state_in_master("t1"), "TASK_FINISHED");
    /* Its resources are free again: offered in full. */
    /* The pending update flows, the acknowledgement reaches the agent, and
     * the master forgets the task. */
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_FINISHED", UUID2),
        202);
    expect_update(&fw, "t1", "TASK_FINISHED", NULL);
    ck_assert_int_eq(ack(&fw, id, UUID2), 202);
    json_t *a = api_wait_event(&ag, "ACKNOWLEDGE", T);
    ck_assert_ptr_nonnull(a);
    json_decref(a);
    ck_assert_ptr_null(task_state_in_master("t1"));
    free(t);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* Case 3: after a master restart the agent reports a terminal task whose
 * update was never acknowledged: the master adopts it, the update reaches
 * the re-subscribed framework and the acknowledgement the agent. */
START_TEST(test_terminal_task_adopted_after_master_restart)
{
    start("--registry=sqlite", NULL);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_PLAIN);
    char id[256], fw_id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    snprintf(fw_id, sizeof(fw_id), "%s", fw.id);
    api_conn_close(&ag);
    api_conn_close(&fw);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 5000), 0);
    const char *again[] = {"--registry=sqlite", "--allocation_interval=50ms",
                           NULL};
    ck_assert_int_eq(e2e_restart_master(&master, again), 0);

    char *info = fw_json(FW_PLAIN, fw_id);
    char *t = task_json("t1", fw_id, id, "TASK_FAILED");
    char tasks[4096];
    snprintf(tasks, sizeof(tasks), "[%s]", t);
    json_t *reg = resubscribe(&ag, id, info, tasks);
    json_decref(reg);
    ck_assert_str_eq(task_state_in_master("t1"), "TASK_FAILED");
    json_t *m = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/tasks_adopted")), 1);
    json_decref(m);

    /* The framework re-subscribes with its id. */
    api_subscribe_framework(&fw, master.port, info);
    ck_assert_str_eq(fw.id, fw_id);
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw_id, "t1", "TASK_FAILED", UUID2),
        202);
    expect_update(&fw, "t1", "TASK_FAILED", NULL);
    ck_assert_int_eq(ack(&fw, id, UUID2), 202);
    json_t *a = api_wait_event(&ag, "ACKNOWLEDGE", T);
    ck_assert_ptr_nonnull(a);
    json_decref(a);
    ck_assert_ptr_null(task_state_in_master("t1"));
    free(t);
    free(info);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* An agent that missed its pings comes back: a partition-aware framework
 * hears its task is running again; while the agent was away explicit and
 * implicit reconciliation said TASK_UNREACHABLE. */
START_TEST(test_unreachable_agent_returns_partition_aware)
{
    const char *fast[] = {"--agent_ping_timeout=300ms",
                          "--max_agent_ping_timeouts=2", NULL};
    start("--registry=in_memory", fast);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_AWARE);
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_RUNNING", UUID1),
        202);
    expect_update(&fw, "t1", "TASK_RUNNING", NULL);
    ck_assert_int_eq(ack(&fw, ag.id, UUID1), 202);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    /* Silence: the agent stops answering pings. */
    expect_update(&fw, "t1", "TASK_UNREACHABLE", "REASON_AGENT_REMOVED");
    api_conn_close(&ag);

    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"tasks\":[{\"task_id\":{\"value\":\"t1\"},\"agent_id\":{"
             "\"value\":\"%s\"}}]}",
             id);
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "RECONCILE", "reconcile", payload), 202);
    expect_update(&fw, "t1", "TASK_UNREACHABLE", "REASON_RECONCILIATION");
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "RECONCILE", "reconcile", "{}"), 202);
    expect_update(&fw, "t1", "TASK_UNREACHABLE", "REASON_RECONCILIATION");

    char *t = task_json("t1", fw.id, id, "TASK_RUNNING");
    char tasks[4096];
    snprintf(tasks, sizeof(tasks), "[%s]", t);
    json_t *reg = resubscribe(&ag, id, NULL, tasks);
    json_decref(reg);
    expect_update(&fw, "t1", "TASK_RUNNING", "REASON_AGENT_REREGISTERED");
    ck_assert_str_eq(task_state_in_master("t1"), "TASK_RUNNING");
    free(t);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* The same for a framework that is not partition-aware: it was told
 * TASK_LOST, so the task is killed when the agent returns. */
START_TEST(test_unreachable_agent_returns_plain)
{
    const char *fast[] = {"--agent_ping_timeout=300ms",
                          "--max_agent_ping_timeouts=2", NULL};
    start("--registry=in_memory", fast);
    struct conn ag, fw;
    launch_t1(&ag, &fw, FW_PLAIN);
    ck_assert_int_eq(
        api_agent_update(&ag, master.port, fw.id, "t1", "TASK_RUNNING", UUID1),
        202);
    expect_update(&fw, "t1", "TASK_RUNNING", NULL);
    char id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    expect_update(&fw, "t1", "TASK_LOST", "REASON_AGENT_REMOVED");
    api_conn_close(&ag);
    char *t = task_json("t1", fw.id, id, "TASK_RUNNING");
    char tasks[4096];
    snprintf(tasks, sizeof(tasks), "[%s]", t);
    json_t *reg = resubscribe(&ag, id, NULL, tasks);
    json_decref(reg);
    json_t *kill = api_wait_event(&ag, "KILL_TASK", T);
    ck_assert_ptr_nonnull(kill);
    json_decref(kill);
    free(t);
    api_conn_close(&fw);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* Explicit reconciliation of unknown tasks, by what the master knows of
 * the agent. */
START_TEST(test_explicit_reconciliation_rules)
{
    start("--registry=in_memory", NULL);
    struct conn ag, aware, plain;
    api_subscribe_agent(&ag, master.port, "host1", AGENT_RES);
    api_subscribe_framework(&aware, master.port, FW_AWARE);
    api_subscribe_framework(&plain, master.port, FW_PLAIN);
    struct {
        const char *agent; /* NULL: no agent id */
        const char *aware_state, *plain_state;
    } cases[] = {
        {NULL, "TASK_UNKNOWN", "TASK_LOST"},
        {ag.id, "TASK_GONE", "TASK_LOST"},
        {"no-such-agent", "TASK_UNKNOWN", "TASK_LOST"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char payload[512], agent[300] = "";
        if (cases[i].agent != NULL)
            snprintf(agent, sizeof(agent), ",\"agent_id\":{\"value\":\"%s\"}",
                     cases[i].agent);
        snprintf(payload, sizeof(payload),
                 "{\"tasks\":[{\"task_id\":{\"value\":\"ghost\"}%s}]}", agent);
        ck_assert_int_eq(
            api_fw_call(&aware, master.port, "RECONCILE", "reconcile", payload),
            202);
        expect_update(&aware, "ghost", cases[i].aware_state,
                      "REASON_RECONCILIATION");
        ck_assert_int_eq(
            api_fw_call(&plain, master.port, "RECONCILE", "reconcile", payload),
            202);
        expect_update(&plain, "ghost", cases[i].plain_state,
                      "REASON_RECONCILIATION");
    }
    api_conn_close(&aware);
    api_conn_close(&plain);
    api_conn_close(&ag);
    stop();
}
END_TEST

/* The restarted master gave up on an agent that did not re-register. */
static bool recovery_removed(void *arg)
{
    (void)arg;
    return e2e_metric(master.port, "master/recovery_slave_removals") >= 1;
}

/* After a master restart an agent that does not come back within
 * --agent_reregister_timeout is marked unreachable (and stays so across
 * another restart); reconciliation waits for it until then. */
START_TEST(test_agent_not_back_after_restart)
{
    start("--registry=sqlite", NULL);
    struct conn ag, fw;
    api_subscribe_agent(&ag, master.port, "host1", AGENT_RES);
    api_subscribe_framework(&fw, master.port, FW_AWARE);
    char id[256], fw_id[256];
    snprintf(id, sizeof(id), "%s", ag.id);
    snprintf(fw_id, sizeof(fw_id), "%s", fw.id);
    api_conn_close(&ag);
    api_conn_close(&fw);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 5000), 0);
    const char *again[] = {"--registry=sqlite", "--allocation_interval=50ms",
                           "--agent_reregister_timeout=1secs", NULL};
    ck_assert_int_eq(e2e_restart_master(&master, again), 0);
    char *info = fw_json(FW_AWARE, fw_id);
    api_subscribe_framework(&fw, master.port, info);
    /* The agent is recovering: a task on it gets no answer yet. */
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"tasks\":[{\"task_id\":{\"value\":\"t9\"},\"agent_id\":{"
             "\"value\":\"%s\"}}]}",
             id);
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "RECONCILE", "reconcile", payload), 202);
    expect_no_update(&fw, 300);
    /* After the timeout (1 s from the restart): unreachable. */
    ck_assert_msg(e2e_poll_until(recovery_removed, NULL, 10000),
                  "the agent was not marked unreachable after its "
                  "re-registration timeout");
    json_t *m = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/recovery_slave_removals")),
        1);
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/slaves_unreachable")), 1);
    json_decref(m);
    ck_assert_int_eq(
        api_fw_call(&fw, master.port, "RECONCILE", "reconcile", payload), 202);
    expect_update(&fw, "t9", "TASK_UNREACHABLE", "REASON_RECONCILIATION");
    api_conn_close(&fw);
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 5000), 0);
    ck_assert_int_eq(e2e_restart_master(&master, again), 0);
    m = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/slaves_unreachable")), 1);
    json_decref(m);
    /* It may come back. */
    json_t *reg = resubscribe(&ag, id, NULL, "[]");
    json_decref(reg);
    m = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/slaves_unreachable")), 0);
    json_decref(m);
    free(info);
    api_conn_close(&ag);
    stop();
}
END_TEST

static Suite *reconcile_suite(void)
{
    Suite *s = suite_create("e2e_reconcile");
    TCase *tc = tcase_create("reconcile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_unreported_task_is_asked_about);
    tcase_add_test(tc, test_running_task_reported);
    tcase_add_test(tc, test_other_state_agent_wins);
    tcase_add_test(tc, test_terminal_task_adopted_after_master_restart);
    tcase_add_test(tc, test_unreachable_agent_returns_partition_aware);
    tcase_add_test(tc, test_unreachable_agent_returns_plain);
    tcase_add_test(tc, test_explicit_reconciliation_rules);
    tcase_add_test(tc, test_agent_not_back_after_restart);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(reconcile_suite)
