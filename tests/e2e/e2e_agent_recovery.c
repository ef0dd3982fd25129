/*
 * End-to-end tests of agent recovery with the real master: an offerd-agent
 * killed with SIGKILL (a crash) or stopped with SIGTERM while its tasks run
 * is started again on the same work_dir. A libofferd framework (harness_fw.h)
 * with auto-acknowledgement off watches: no task is killed by the restart
 * (same pids), the master still shows them, tasks that ended while the
 * agent was down are reported with their real exit status, a terminal
 * update left unacknowledged across the restart still arrives, every
 * update reaches the framework in order and none it acknowledged comes
 * again; once the framework acknowledges, the agent forgets the tasks.
 */
#include "harness.h"
#include "harness_fw.h"

#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const AGENT_FLAGS[] = {
    "--resources=cpus:2;mem:512;disk:1024", "--hostname=agent0", NULL};

static struct e2e_proc master, agent;
static struct event_base *base;
static struct hfw fw;

static void cluster_start(enum offerd_encoding enc, enum hfw_ack_policy ack)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    memset(&fw, 0, sizeof(fw));
    fw.name = "recovery";
    fw.ack = ack;
    hfw_start(&fw, base, master.port, enc);
}

static void cluster_stop(void)
{
    hfw_free(&fw);
    event_base_free(base);
    base = NULL;
    /* The recovered agent stops cleanly (no leak under the sanitizers). */
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&agent); /* and the tasks under its work_dir */
    e2e_proc_cleanup(&master);
}

static bool cond_connected(void *arg)
{
    return e2e_metric(master.port, "master/slaves_connected") ==
           *(const int *)arg;
}

/* Wait (running the framework's loop) until the master counts n connected
 * agents. */
static void wait_connected(int n, int timeout_ms)
{
    ck_assert_msg(e2e_loop_until(base, cond_connected, &n, timeout_ms),
                  "the master does not count %d connected agent(s)", n);
}

/* Every update of the framework's task arg sent so far is acknowledged at
 * the agent: its checkpointed pending updates (src/agent/checkpoint.h's
 * layout) are none. */
static bool cond_acks_through(void *arg)
{
    char p[PATH_MAX + 512];
    snprintf(p, sizeof(p), "%s/meta/frameworks/%s/tasks/%s/updates",
             agent.work_dir, fw.id, (const char *)arg);
    struct stat st;
    return stat(p, &st) == 0 && st.st_size == 0;
}

/* Wait until the acknowledgements of the n tasks' updates reached the
 * agent. */
static void wait_acks_through(const char *const *tasks, int n)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(
            e2e_loop_until(base, cond_acks_through, (void *)tasks[i], 10000),
            "task %s: acknowledgements not through", tasks[i]);
}

struct sandbox_file {
    const char *dir, *name;
};

static bool cond_sandbox_file(void *arg)
{
    const struct sandbox_file *f = arg;
    return e2e_file_exists(f->dir, f->name);
}

/* Wait (running the loop) until sandbox/name exists. */
static bool wait_sandbox_file(const char *sandbox, const char *name,
                              int timeout_ms)
{
    struct sandbox_file f = {sandbox, name};
    return e2e_loop_until(base, cond_sandbox_file, &f, timeout_ms);
}

/* Tasks the agent holds (running or kept until acknowledged). */
static int agent_task_count(void)
{
    json_t *j = e2e_get_json(agent.port, "/state");
    ck_assert_ptr_nonnull(j);
    int n = 0;
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(j, "frameworks"), i, f)
    {
        json_array_foreach(json_object_get(f, "executors"), k, e)
        {
            n += (int)json_array_size(json_object_get(e, "tasks"));
            n += (int)json_array_size(json_object_get(e, "completed_tasks"));
        }
    }
    json_decref(j);
    return n;
}

/* The task's state among the master's live tasks ("" when absent; /tasks
 * would list it after its end too, among the completed ones). */
static void master_task_state(const char *task_id, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s", "");
    json_t *j = e2e_get_json(master.port, "/state");
    ck_assert_ptr_nonnull(j);
    size_t i, k;
    json_t *f, *t;
    json_array_foreach(json_object_get(j, "frameworks"), k, f)
    {
        json_array_foreach(json_object_get(f, "tasks"), i, t)
        {
            const char *id = json_string_value(json_object_get(t, "id"));
            if (id != NULL && strcmp(id, task_id) == 0)
                snprintf(out, outlen, "%s",
                         json_string_value(json_object_get(t, "state")));
        }
    }
    json_decref(j);
}

static void assert_master_state(const char *task_id, const char *want)
{
    char st[64];
    master_task_state(task_id, st, sizeof(st));
    ck_assert_msg(strcmp(st, want) == 0, "master: task %s is '%s', not %s",
                  task_id, st, want);
}

/* Conditions. */

struct want_state {
    const char *const *tasks;
    int n;
    int state; /* -1: any terminal state */
};

static bool cond_states(void *arg)
{
    const struct want_state *w = arg;
    for (int i = 0; i < w->n; i++) {
        int st = hfw_state(&fw, w->tasks[i]);
        if (w->state < 0 ? !task_state_is_terminal(st) : st != w->state)
            return false;
    }
    return true;
}

static void wait_states(const char *const *tasks, int n, int state,
                        int timeout_ms)
{
    struct want_state w = {tasks, n, state};
    bool ok = e2e_loop_until(base, cond_states, &w, timeout_ms);
    if (!ok)
        for (int i = 0; i < n; i++)
            fprintf(stderr, "  task %s: state %d\n", tasks[i],
                    hfw_state(&fw, tasks[i]));
    ck_assert_msg(ok, "tasks did not reach state %d in time", state);
}

static bool cond_agent_holds(void *arg)
{
    return agent_task_count() == *(const int *)arg;
}

/* The master no longer holds task arg live. */
static bool cond_master_forgot(void *arg)
{
    char st[64];
    master_task_state(arg, st, sizeof(st));
    return st[0] == '\0';
}

/* The distinct updates of a task (by uuid) are exactly states[0..n). */
static void assert_update_states(const char *task_id, const int *states, int n)
{
    const struct hfw_update *u[16];
    size_t got = hfw_distinct_updates_of(&fw, task_id, u, 16);
    ck_assert_msg(got == (size_t)n, "task %s: %zu distinct updates, not %d",
                  task_id, got, n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(u[i]->state == states[i],
                      "task %s: update %d is state %d, not %d", task_id, i,
                      u[i]->state, states[i]);
}

/* ---- Tests ---- */

static const int RUNNING_STATES[] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                     MESOS__V1__TASK_STATE__TASK_RUNNING};

/* kill -9 of the agent while 5 long tasks run: after the restart they still
 * run (same pids), the master still shows them RUNNING, the framework gets
 * nothing new (every update was acknowledged), and a kill afterwards gives
 * TASK_KILLED; then the agent forgets them. */
START_TEST(test_kill9_running_tasks_survive)
{
    cluster_start(OFFERD_ENCODING_JSON, HFW_ACK_ALL);
    static const char *const ids[] = {"long-0", "long-1", "long-2", "long-3",
                                      "long-4"};
    for (int i = 0; i < 5; i++)
        hfw_launch(&fw, ids[i], "sleep 120");
    wait_states(ids, 5, MESOS__V1__TASK_STATE__TASK_RUNNING, 30000);
    wait_acks_through(ids, 5);
    pid_t pids[5];
    for (int i = 0; i < 5; i++) {
        char sb[PATH_MAX];
        ck_assert(e2e_agent_sandbox(agent.port, ids[i], sb, sizeof(sb)));
        pids[i] = e2e_read_pid_file(sb, ".offerd.task.pid");
        ck_assert(e2e_pid_alive(pids[i]));
    }
    int before = fw.nupdates;

    ck_assert_int_eq(e2e_proc_stop(&agent, SIGKILL, 5000), -1);
    wait_connected(0, 10000);
    for (int i = 0; i < 5; i++)
        ck_assert_msg(e2e_pid_alive(pids[i]), "task %s died with the agent",
                      ids[i]);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    wait_connected(1, 20000);
    /* The re-registered agent resends nothing (all was acknowledged): a
     * window that proves an absence, nothing to wait for. */
    e2e_loop_for(base, 1000);

    for (int i = 0; i < 5; i++) {
        char sb[PATH_MAX];
        ck_assert(e2e_agent_sandbox(agent.port, ids[i], sb, sizeof(sb)));
        ck_assert_int_eq(e2e_read_pid_file(sb, ".offerd.task.pid"), pids[i]);
        ck_assert(e2e_pid_alive(pids[i]));
        assert_master_state(ids[i], "TASK_RUNNING");
    }
    ck_assert_int_eq(fw.nupdates, before);
    ck_assert_int_eq(fw.acked_again, 0);
    ck_assert_double_eq(e2e_metric(master.port, "master/slave_reregistrations"),
                        1);

    for (int i = 0; i < 5; i++)
        hfw_kill(&fw, ids[i]);
    wait_states(ids, 5, MESOS__V1__TASK_STATE__TASK_KILLED, 20000);
    static const int killed[] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                 MESOS__V1__TASK_STATE__TASK_RUNNING,
                                 MESOS__V1__TASK_STATE__TASK_KILLED};
    for (int i = 0; i < 5; i++) {
        assert_update_states(ids[i], killed, 3);
        ck_assert(!e2e_pid_alive(pids[i]));
    }
    ck_assert_int_eq(fw.acked_again, 0);
    int zero = 0;
    ck_assert_msg(e2e_loop_until(base, cond_agent_holds, &zero, 10000),
                  "the agent still holds tasks after the acknowledgements");
    cluster_stop();
}
END_TEST

/* Stop the agent with sig while: a task's terminal update is held
 * unacknowledged by the framework, two tasks are about to end (one
 * successfully, one with exit code 7), and one runs on. The agent stays
 * down until both have ended. After the restart: the two are reported
 * with their real exit status, the held update is still pending (it may
 * come again, with the same uuid), every task's updates arrived in order,
 * none acknowledged came again, the long task was left alone; then the
 * framework acknowledges and the agent forgets the ended tasks. */
static void restart_with_pending_updates(int sig, enum offerd_encoding enc)
{
    cluster_start(enc, HFW_ACK_NONTERMINAL);
    hfw_launch(&fw, "fail3", "sleep 0.5; exit 3");
    hfw_launch(&fw, "done", "sleep 5");
    hfw_launch(&fw, "fail7", "sleep 5; exit 7");
    hfw_launch(&fw, "long", "sleep 120");
    static const char *const ended_before[] = {"fail3"};
    static const char *const live[] = {"done", "fail7", "long"};
    wait_states(ended_before, 1, MESOS__V1__TASK_STATE__TASK_FAILED, 30000);
    wait_states(live, 3, MESOS__V1__TASK_STATE__TASK_RUNNING, 30000);
    wait_acks_through(live, 3);
    char sb_done[PATH_MAX], sb_fail7[PATH_MAX], sb_long[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "done", sb_done, sizeof(sb_done)));
    ck_assert(
        e2e_agent_sandbox(agent.port, "fail7", sb_fail7, sizeof(sb_fail7)));
    ck_assert(e2e_agent_sandbox(agent.port, "long", sb_long, sizeof(sb_long)));
    pid_t long_pid = e2e_read_pid_file(sb_long, ".offerd.task.pid");
    const struct hfw_update *u[16];
    ck_assert_uint_eq(hfw_updates_of(&fw, "fail3", u, 16), 3);
    uint8_t fail3_uuid[16];
    memcpy(fail3_uuid, u[2]->uuid, 16);

    int rc = e2e_proc_stop(&agent, sig, 10000);
    if (sig == SIGTERM)
        ck_assert_int_eq(rc, 0);
    ck_assert_msg(!e2e_file_exists(sb_done, ".offerd.exit_status") &&
                      !e2e_file_exists(sb_fail7, ".offerd.exit_status"),
                  "the tasks ended before the agent stopped: too slow a "
                  "machine for this test");
    wait_connected(0, 10000);
    /* Down until both have ended (about 5 s after their start). */
    ck_assert(wait_sandbox_file(sb_done, ".offerd.exit_status", 20000));
    ck_assert(wait_sandbox_file(sb_fail7, ".offerd.exit_status", 20000));
    ck_assert(e2e_pid_alive(long_pid));
    assert_master_state("done", "TASK_RUNNING"); /* nobody told it yet */

    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    wait_connected(1, 20000);
    static const char *const ended_down[] = {"done", "fail7"};
    wait_states(ended_down, 2, -1, 20000);
    /* Each update arrives once (counted below): a window for duplicates
     * that proves an absence, nothing to wait for. */
    e2e_loop_for(base, 1000);

    static const int finished[] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                   MESOS__V1__TASK_STATE__TASK_RUNNING,
                                   MESOS__V1__TASK_STATE__TASK_FINISHED};
    static const int failed[] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                 MESOS__V1__TASK_STATE__TASK_RUNNING,
                                 MESOS__V1__TASK_STATE__TASK_FAILED};
    assert_update_states("done", finished, 3);
    assert_update_states("fail7", failed, 3);
    assert_update_states("fail3", failed, 3);
    assert_update_states("long", RUNNING_STATES, 2);
    /* Each once: the new terminal updates arrived once, the held one at
     * most twice (the restarted agent resends what is unacknowledged; the
     * master forwards it), with its uuid; nothing acknowledged came again. */
    ck_assert_uint_eq(hfw_updates_of(&fw, "done", u, 16), 3);
    ck_assert_uint_eq(hfw_updates_of(&fw, "fail7", u, 16), 3);
    ck_assert_str_eq(u[2]->message, "Command exited with status 7");
    ck_assert_int_eq(
        u[2]->reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_COMMAND_EXECUTOR_FAILED);
    ck_assert_int_eq(u[2]->source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
    ck_assert_uint_eq(hfw_updates_of(&fw, "long", u, 16), 2);
    size_t nfail3 = hfw_updates_of(&fw, "fail3", u, 16);
    ck_assert_msg(nfail3 == 3 || nfail3 == 4, "fail3: %zu updates", nfail3);
    for (size_t i = 2; i < nfail3; i++)
        ck_assert(memcmp(u[i]->uuid, fail3_uuid, 16) == 0);
    ck_assert_str_eq(u[2]->message, "Command exited with status 3");
    ck_assert_int_eq(fw.acked_again, 0);
    ck_assert_int_eq(e2e_read_pid_file(sb_long, ".offerd.task.pid"), long_pid);
    ck_assert(e2e_pid_alive(long_pid));
    assert_master_state("done", "TASK_FINISHED");
    assert_master_state("fail7", "TASK_FAILED");
    assert_master_state("fail3", "TASK_FAILED");
    assert_master_state("long", "TASK_RUNNING");

    /* Acknowledged: the agent forgets the three ended tasks. */
    ck_assert_int_eq(hfw_ack_held(&fw), 3);
    int one = 1;
    ck_assert_msg(e2e_loop_until(base, cond_agent_holds, &one, 10000),
                  "the agent did not forget the acknowledged tasks");
    /* ... and so does the master. */
    ck_assert_msg(e2e_loop_until(base, cond_master_forgot, "done", 10000),
                  "the master still shows the acknowledged task");

    hfw_kill(&fw, "long");
    static const char *const l[] = {"long"};
    wait_states(l, 1, MESOS__V1__TASK_STATE__TASK_KILLED, 20000);
    ck_assert(!e2e_pid_alive(long_pid));
    ck_assert_int_eq(hfw_ack_held(&fw), 1);
    int zero = 0;
    ck_assert(e2e_loop_until(base, cond_agent_holds, &zero, 10000));
    ck_assert_int_eq(fw.acked_again, 0);
    cluster_stop();
}

START_TEST(test_kill9_with_pending_updates)
{
    restart_with_pending_updates(SIGKILL, OFFERD_ENCODING_PROTOBUF);
}
END_TEST

START_TEST(test_sigterm_with_pending_updates)
{
    restart_with_pending_updates(SIGTERM, OFFERD_ENCODING_JSON);
}
END_TEST

/* A kill of a task that survives SIGTERM is under way (grace period 3 s)
 * when the agent is killed -9; after the restart the task is killed all
 * the same and the framework gets TASK_KILLED. */
START_TEST(test_kill_in_progress_survives_restart)
{
    cluster_start(OFFERD_ENCODING_JSON, HFW_ACK_ALL);
    fw.kill_grace_secs = 3;
    /* It notes in its sandbox that its SIGTERM handler is set ("trapped")
     * and each SIGTERM it gets ("term"), and keeps running. */
    hfw_launch(&fw, "stubborn",
               "trap 'echo TERM >> term' TERM; touch trapped; "
               "while :; do sleep 0.05; done");
    static const char *const ids[] = {"stubborn"};
    wait_states(ids, 1, MESOS__V1__TASK_STATE__TASK_RUNNING, 30000);
    char sb[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "stubborn", sb, sizeof(sb)));
    ck_assert(wait_sandbox_file(sb, "trapped", 10000));
    pid_t pid = e2e_read_pid_file(sb, ".offerd.task.pid");
    hfw_kill(&fw, "stubborn");
    ck_assert_msg(wait_sandbox_file(sb, "term", 10000),
                  "the task got no SIGTERM");
    ck_assert(e2e_pid_alive(pid)); /* SIGTERM survived, grace period running */
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGKILL, 5000), -1);
    wait_connected(0, 10000);
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    wait_states(ids, 1, MESOS__V1__TASK_STATE__TASK_KILLED, 20000);
    ck_assert(!e2e_pid_alive(pid));
    static const int killed[] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                 MESOS__V1__TASK_STATE__TASK_RUNNING,
                                 MESOS__V1__TASK_STATE__TASK_KILLED};
    assert_update_states("stubborn", killed, 3);
    ck_assert_int_eq(fw.acked_again, 0);
    cluster_stop();
}
END_TEST

static Suite *agent_recovery_suite(void)
{
    Suite *s = suite_create("e2e_agent_recovery");
    struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"kill9_running", test_kill9_running_tasks_survive},
        {"kill9_pending", test_kill9_with_pending_updates},
        {"sigterm_pending", test_sigterm_with_pending_updates},
        {"kill_in_progress", test_kill_in_progress_survives_restart},
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

E2E_CHECK_MAIN(agent_recovery_suite)
