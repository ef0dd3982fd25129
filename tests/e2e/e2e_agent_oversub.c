/*
 * End-to-end tests of the agent's side of oversubscription against the
 * fake master of harness_agent_master.h: the fixed estimator's
 * UPDATE_OVERSUBSCRIBED (after every registration), the usage estimator's
 * estimate from the tasks' real use, the QoS controller evicting exactly
 * the needed revocable tasks, newest first, after their grace period, while
 * a regular task keeps running, and KILL_TASK with a reason (also across an
 * agent crash mid-kill).
 */
#include "harness.h"
#include "harness_agent_master.h"

#include "common/fs.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <check.h>
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

#define FW "fw-oversub-0001"

/* A task that notes SIGTERM in its sandbox and keeps running, so that
 * only the SIGKILL after the grace period ends it. */
#define STUBBORN "trap 'echo TERM >> term' TERM; while :; do sleep 0.05; done"

static struct e2e_proc agent;

static void setup(void)
{
    hfm_start();
}

static void teardown(void)
{
    /* Exit 0: under the sanitizers, no leak. */
    ck_assert_int_eq(hfm_stop_agent(&agent), 0);
    e2e_proc_cleanup(&agent);
    hfm_stop();
}

static void start_agent(const char *const *extra)
{
    const char *args[32];
    int n = 0;
    args[n++] = "--resources=cpus:4;mem:2048;disk:1024";
    for (; extra != NULL && *extra != NULL && n < 31; extra++)
        args[n++] = *extra;
    args[n] = NULL;
    ck_assert_msg(e2e_start_agent(&agent, hfm.port, args) == 0,
                  "offerd-agent did not start");
}

/* The resources of an UPDATE_OVERSUBSCRIBED call, checked to be all
 * revocable and unreserved. */
static void estimate_of(const Offerd__Agent__Call *c, res_list *out)
{
    ck_assert_ptr_nonnull(c->update_oversubscribed);
    ck_assert_ptr_nonnull(c->agent_id);
    ck_assert_str_eq(c->agent_id->value, HFM_AGENT_ID);
    char err[256];
    ck_assert_msg(
        res_list_from_pb(c->update_oversubscribed->oversubscribed_resources,
                         c->update_oversubscribed->n_oversubscribed_resources,
                         out, err, sizeof(err)) == 0,
        "%s", err);
    for (uint32_t i = 0; i < out->n; i++) {
        ck_assert(out->v[i].revocable);
        ck_assert(res_is_unreserved(&out->v[i]));
    }
}

static void run(const char *task_id, const char *shell, const char *res,
                bool revocable, int grace_ms, bool killing)
{
    struct hfm_task t = {
        .framework_id = FW,
        .task_id = task_id,
        .shell = shell,
        .resources = res,
        .revocable = revocable,
        .grace_ms = grace_ms,
        .killing_capable = killing,
    };
    hfm_run_task(&t);
}

static void wait_running(const char *task_id)
{
    size_t from = 0;
    ck_assert_msg(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE,
                                task_id, MESOS__V1__TASK_STATE__TASK_RUNNING,
                                15000) >= 0,
                  "task %s did not run", task_id);
}

/* The last status of a task, or NULL. */
static const Mesos__V1__TaskStatus *last_update(const char *task_id)
{
    const Mesos__V1__TaskStatus *u[32];
    size_t n = hfm_updates_of(task_id, 0, u, 32);
    return n > 0 ? u[n - 1] : NULL;
}

/* ---- Tests ---- */

START_TEST(test_bad_flags_exit_1)
{
    char out[8192];
    const char *reserved[] = {"--master=127.0.0.1:5050",
                              "--resource_estimator=fixed",
                              "--oversubscribed_resources=cpus(eng):1", NULL};
    ck_assert_int_eq(
        e2e_run(OFFERD_AGENT_BIN, reserved, out, sizeof(out), 10000), 1);
    ck_assert_ptr_nonnull(strstr(out, "cannot be reserved"));
    const char *qos[] = {"--master=127.0.0.1:5050", "--qos_controller=kill",
                         NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, qos, out, sizeof(out), 10000),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "--qos_controller"));
    const char *help[] = {"--help", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, help, out, sizeof(out), 10000),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "--resource_estimator"));
    ck_assert_ptr_nonnull(strstr(out, "--qos_load_threshold"));
}
END_TEST

START_TEST(test_fixed_estimate_sent_after_each_registration)
{
    const char *extra[] = {"--resource_estimator=fixed",
                           "--oversubscribed_resources=cpus:1.5;mem:256", NULL};
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    long i =
        hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED,
                      NULL, -1, 10000);
    ck_assert_msg(i >= 0, "no UPDATE_OVERSUBSCRIBED");
    res_list est = RES_LIST_INIT;
    estimate_of(hfm.calls[i], &est);
    ck_assert_uint_eq(est.n, 2);
    ck_assert_int_eq(res_list_scalar(&est, "cpus"), 1500);
    ck_assert_int_eq(res_list_scalar(&est, "mem"), 256000);
    res_list_clear(&est);

    /* The stream closes: the agent subscribes again and sends the
     * estimate again. */
    hfm_close_stream();
    hfm_wait_subscribed(2, 10000);
    size_t sub = 0;
    long s2 = -1;
    for (int k = 0; k < 2; k++)
        s2 = hfm_wait_call(&sub, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL, -1,
                           1000);
    ck_assert(s2 > i);
    from = (size_t)s2;
    i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED,
                      NULL, -1, 10000);
    ck_assert_msg(i > s2, "no UPDATE_OVERSUBSCRIBED after re-registering");
    estimate_of(hfm.calls[i], &est);
    ck_assert_int_eq(res_list_scalar(&est, "cpus"), 1500);
    res_list_clear(&est);

    /* Unchanged, it is not sent again by the rounds: a window that proves
     * an absence, nothing to wait for. */
    hfm_pump(300);
    size_t again = (size_t)i + 1;
    ck_assert_int_lt(
        hfm_wait_call(&again, OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED,
                      NULL, -1, 0),
        0);
}
END_TEST

START_TEST(test_shrink_evicts_exactly_the_needed_newest_first)
{
    char path[PATH_MAX], flag[PATH_MAX + 64];
    /* The estimate lives in a file the agent reads every round. */
    snprintf(path, sizeof(path), "/tmp/offerd-oversub-e2e-%d", (int)getpid());
    ck_assert_int_eq(fs_write_atomic(path, "cpus:2;mem:512\n", 15), 0);
    snprintf(flag, sizeof(flag), "--oversubscribed_resources=file://%s", path);
    const char *extra[] = {
        "--resource_estimator=fixed",        flag,
        "--oversubscription_interval=100ms", "--qos_controller=load",
        "--qos_load_threshold=100000",       NULL};
    hfm.auto_ack = true;
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);

    /* A regular task and three revocable ones, oldest first; the
     * revocable ones hold 2 cpus, as much as the estimate. */
    run("regular", "sleep 1000", "cpus:0.5;mem:32", false, 1000, false);
    wait_running("regular");
    run("rev1", STUBBORN, "cpus:1", true, 1000, false);
    wait_running("rev1");
    run("rev2", STUBBORN, "cpus:0.5", true, 1000, false);
    wait_running("rev2");
    run("rev3", STUBBORN, "cpus:0.5", true, 1000, false);
    wait_running("rev3");
    char sb2[PATH_MAX], sb3[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "rev2", sb2, sizeof(sb2)));
    ck_assert(e2e_agent_sandbox(agent.port, "rev3", sb3, sizeof(sb3)));

    /* Nothing is evicted while they fit: five rounds (100 ms each), a
     * window that proves an absence. */
    hfm_pump(500);
    ck_assert_int_eq(last_update("rev1")->state,
                     MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_int_eq(last_update("rev3")->state,
                     MESOS__V1__TASK_STATE__TASK_RUNNING);

    /* The estimate shrinks to 1.2 cpus: rev3 (newest) and rev2 must go;
     * rev1 alone would have fitted too, but the newest go first. */
    size_t mark = hfm.ncalls;
    int64_t t0 = e2e_now_ms();
    ck_assert_int_eq(fs_write_atomic(path, "cpus:1.2;mem:512", 16), 0);
    size_t from = mark;
    long k3 = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "rev3",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000);
    from = mark;
    long k2 = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "rev2",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000);
    int64_t elapsed = e2e_now_ms() - t0;
    ck_assert_msg(k3 >= 0 && k2 >= 0, "rev2/rev3 were not evicted");
    /* After their grace period: they ignore SIGTERM, so only the SIGKILL
     * 1 s later ends them. */
    ck_assert_msg(elapsed >= 1000, "evicted after %lld ms only",
                  (long long)elapsed);
    ck_assert(e2e_file_exists(sb2, "term"));
    ck_assert(e2e_file_exists(sb3, "term"));
    const long ks[2] = {k3, k2};
    for (int i = 0; i < 2; i++) {
        const Mesos__V1__TaskStatus *st = hfm.calls[ks[i]]->update->status;
        ck_assert_int_eq(st->source,
                         MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
        ck_assert_msg(
            st->has_reason &&
                st->reason ==
                    MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED,
            "reason %s", hfm_reason_name(st));
    }
    /* The new estimate went to the master. */
    from = mark;
    long u = hfm_wait_call(
        &from, OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED, NULL, -1, 0);
    ck_assert(u >= 0);
    res_list est = RES_LIST_INIT;
    estimate_of(hfm.calls[u], &est);
    ck_assert_int_eq(res_list_scalar(&est, "cpus"), 1200);
    res_list_clear(&est);

    /* Rounds go on; rev1 and the regular task keep running (a window of 15
     * rounds that proves an absence). */
    hfm_pump(1500);
    ck_assert_int_eq(last_update("rev1")->state,
                     MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_int_eq(last_update("regular")->state,
                     MESOS__V1__TASK_STATE__TASK_RUNNING);

    /* An empty estimate: rev1 goes too, the regular task never. */
    mark = hfm.ncalls;
    ck_assert_int_eq(fs_write_atomic(path, "", 0), 0);
    from = mark;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "rev1",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000) >= 0);
    /* A window of five rounds that proves an absence. */
    hfm_pump(500);
    ck_assert_int_eq(last_update("regular")->state,
                     MESOS__V1__TASK_STATE__TASK_RUNNING);
    unlink(path);
}
END_TEST

START_TEST(test_kill_with_reason)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    /* A framework with TASK_KILLING_STATE: TASK_KILLING first, both with
     * the master's source and reason. */
    run("slack", "sleep 1000", "cpus:1", true, 200, true);
    wait_running("slack");
    run("plain", "sleep 1000", "cpus:1", false, 200, true);
    wait_running("plain");
    hfm_kill(FW, "slack",
             MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED);
    hfm_kill(FW, "plain", -1);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "slack",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000) >= 0);
    from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "plain",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 15000) >= 0);
    const Mesos__V1__TaskStatus *u[8];
    size_t n = hfm_updates_of("slack", 0, u, 8);
    ck_assert_uint_eq(n, 4); /* STARTING, RUNNING, KILLING, KILLED */
    ck_assert_int_eq(u[2]->state, MESOS__V1__TASK_STATE__TASK_KILLING);
    for (size_t i = 2; i < 4; i++) {
        ck_assert_int_eq(u[i]->source,
                         MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
        ck_assert_msg(
            u[i]->has_reason &&
                u[i]->reason ==
                    MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED,
            "reason %s", hfm_reason_name(u[i]));
    }
    /* Without a reason: as before, the executor's kill. */
    n = hfm_updates_of("plain", 0, u, 8);
    ck_assert_uint_eq(n, 4);
    for (size_t i = 2; i < 4; i++) {
        ck_assert_int_eq(u[i]->source,
                         MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
        ck_assert(!u[i]->has_reason);
    }
}
END_TEST

static bool file_there(void *arg)
{
    struct stat st;
    return stat(arg, &st) == 0;
}

START_TEST(test_kill_reason_survives_agent_crash)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    run("slow", STUBBORN, "cpus:1", true, 4000, false);
    wait_running("slow");
    hfm_kill(FW, "slow",
             MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED);
    /* The kill is checkpointed before the task is signalled. */
    char kill_file[PATH_MAX];
    snprintf(kill_file, sizeof(kill_file),
             "%s/meta/frameworks/" FW "/tasks/slow/kill", agent.work_dir);
    ck_assert_msg(hfm_pump_until(file_there, kill_file, 10000), "no %s",
                  kill_file);
    /* Crash, start again: the kill resumes and keeps its reason. */
    e2e_proc_stop(&agent, SIGKILL, 1000);
    size_t mark = hfm.ncalls;
    const char *res[] = {"--resources=cpus:4;mem:2048;disk:1024", NULL};
    ck_assert_int_eq(e2e_restart_agent(&agent, hfm.port, res), 0);
    size_t from = mark;
    long k = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "slow",
                           MESOS__V1__TASK_STATE__TASK_KILLED, 20000);
    ck_assert_msg(k >= 0, "no TASK_KILLED after the restart");
    const Mesos__V1__TaskStatus *s = hfm.calls[k]->update->status;
    ck_assert_int_eq(s->source, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    ck_assert_msg(
        s->has_reason &&
            s->reason ==
                MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED,
        "reason %s", hfm_reason_name(s));
}
END_TEST

/* Wait for an UPDATE_OVERSUBSCRIBED from index *from whose cpus satisfy
 * lo <= cpus <= hi (milli); returns its cpus and mem, or fails. */
static void wait_estimate(size_t *from, int64_t lo, int64_t hi, int64_t *cpus,
                          int64_t *mem, int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    int64_t last = -1;
    for (;;) {
        long i = hfm_wait_call(
            from, OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED, NULL, -1,
            (int)(deadline - e2e_now_ms() > 0 ? deadline - e2e_now_ms() : 0));
        ck_assert_msg(i >= 0,
                      "no estimate with cpus in [%lld, %lld] (last %lld)",
                      (long long)lo, (long long)hi, (long long)last);
        res_list est = RES_LIST_INIT;
        estimate_of(hfm.calls[i], &est);
        last = res_list_scalar(&est, "cpus");
        *mem = res_list_scalar(&est, "mem");
        res_list_clear(&est);
        if (last >= lo && last <= hi) {
            *cpus = last;
            return;
        }
    }
}

/* The cpus and mem of the last UPDATE_OVERSUBSCRIBED (fails without). */
static void last_estimate(int64_t *cpus, int64_t *mem)
{
    long last = -1;
    for (size_t i = 0; i < hfm.ncalls; i++)
        if (hfm.calls[i]->type ==
            OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED)
            last = (long)i;
    ck_assert(last >= 0);
    res_list est = RES_LIST_INIT;
    estimate_of(hfm.calls[last], &est);
    *cpus = res_list_scalar(&est, "cpus");
    *mem = res_list_scalar(&est, "mem");
    res_list_clear(&est);
}

/* The last estimate has at least min_mem and at most max_cpus (milli). */
struct estimate_wait {
    int64_t min_mem, max_cpus;
    int64_t cpus, mem; /* OUT: the last estimate read */
};

static bool estimate_is(void *arg)
{
    struct estimate_wait *w = arg;
    last_estimate(&w->cpus, &w->mem);
    return w->mem >= w->min_mem && w->cpus <= w->max_cpus;
}

START_TEST(test_usage_estimate)
{
    const char *extra[] = {"--resource_estimator=usage",
                           "--oversubscription_interval=200ms",
                           "--oversubscription_margin=0.1", NULL};
    hfm.auto_ack = true;
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);
    /* No task: nothing to report. */
    size_t from = 0;
    int64_t cpus, mem;
    wait_estimate(&from, 0, 0, &cpus, &mem, 10000);
    ck_assert_int_eq(mem, 0);

    /* An idle task holding 1 cpu and 256 MB: about 90% of it is reported
     * once measured (its shell and sleep use a few MB). */
    run("idle", "sleep 1000", "cpus:1;mem:256", false, 200, false);
    wait_running("idle");
    wait_estimate(&from, 850, 900, &cpus, &mem, 15000);
    ck_assert_msg(mem >= 200000 && mem <= 230000, "mem %lld", (long long)mem);
    ck_assert_int_eq(cpus % 10, 0);
    ck_assert_int_eq(mem % 1000, 0);

    /* A revocable task changes nothing: its resources are not the
     * regular tasks' (and its use runs on the estimate itself). */
    run("rev", "sleep 1000", "cpus:0.5;mem:128", true, 200, false);
    wait_running("rev");
    /* Seven rounds (200 ms each) with it: a window that proves the
     * estimate does not move. */
    hfm_pump(1500);
    last_estimate(&cpus, &mem);
    ck_assert_msg(cpus >= 850 && cpus <= 900, "cpus %lld", (long long)cpus);
    ck_assert_msg(mem >= 200000 && mem <= 230000, "mem %lld", (long long)mem);

    /* A busy regular task holding 0.5 cpus and 64 MB: once measured (its
     * mem shows up in the estimate), its use counts against the estimate.
     * Idle, it would add 0.45 cpus (1.33 in all); busy, it uses at least
     * 0.2 core even on a loaded machine, and with no CPU limit may use a
     * whole core, more than it holds, which eats the other's slack too. */
    run("busy", "while :; do :; done", "cpus:0.5;mem:64", false, 200, false);
    wait_running("busy");
    struct estimate_wait measured = {.min_mem = 260000, .max_cpus = INT64_MAX};
    ck_assert_msg(hfm_pump_until(estimate_is, &measured, 15000),
                  "the busy task was not measured: mem %lld",
                  (long long)measured.mem);
    /* Its use eats into the estimate as the rounds average it in. */
    struct estimate_wait eaten = {.min_mem = 260000, .max_cpus = 1150};
    ck_assert_msg(hfm_pump_until(estimate_is, &eaten, 10000), "cpus %lld",
                  (long long)eaten.cpus);
}
END_TEST

static Suite *oversub_suite(void)
{
    Suite *s = suite_create("e2e_agent_oversub");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bad_flags_exit_1);
    tcase_add_test(tc, test_fixed_estimate_sent_after_each_registration);
    tcase_add_test(tc, test_shrink_evicts_exactly_the_needed_newest_first);
    tcase_add_test(tc, test_kill_with_reason);
    tcase_add_test(tc, test_kill_reason_survives_agent_crash);
    tcase_add_test(tc, test_usage_estimate);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(oversub_suite)
