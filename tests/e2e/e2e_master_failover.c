/*
 * End-to-end test of master failover (issue 7): a real master with its
 * SQLite registry, two real agents and a partition-aware libofferd
 * framework (harness_wl.h: failover timeout, acknowledging, reconciling
 * after every re-subscription) run a workload of about 100 short and long
 * shell tasks (0.1 to 3 s, some failing with exit codes). The master is
 * killed with SIGKILL at random points of the workload (seeded RNG, seed
 * printed; three rounds) and started again on the same work_dir and port;
 * the agents re-register, the framework re-subscribes and reconciles.
 *
 * Afterwards every task the framework launched reached exactly one
 * terminal state at the framework (a retried update may come twice, with
 * its uuid), and that state is the truth: FINISHED or FAILED as its
 * command exits, KILLED for the long tasks the test kills, and LOST,
 * DROPPED or GONE only for tasks that never started (each task's command
 * first writes a marker file, so the test knows). The master (implicit
 * reconciliation), the agents (/state) and the framework agree on the live
 * tasks, and finally none is left.
 */
#include "harness.h"
#include "harness_wl.h"

#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define NAGENTS 2
#define NLONG   4
#define NSHORT  96
#define ROUNDS  3

static const char *const MASTER_ARGS[] = {"--allocation_interval=50ms", NULL};

static struct e2e_proc master, agents[NAGENTS];
static uint16_t agent_ports[NAGENTS];
static struct event_base *base;
static struct wl w;
static char marker_dir[200];
static uint64_t rng;
static int nshort_added;

/* Run the framework for ms (or until the armed kill fired, with
 * until_killed), queueing 4 short tasks every 500 ms until all are
 * queued. */
static bool kill_fired;

static void run_feeding(int ms, bool until_killed)
{
    int64_t end = e2e_now_ms() + ms;
    static int64_t next_feed;
    while (e2e_now_ms() < end && !(until_killed && kill_fired)) {
        if (nshort_added < NSHORT && e2e_now_ms() >= next_feed) {
            for (int k = 0; k < 4 && nshort_added < NSHORT; k++)
                wl_add_short(&w, &rng, "short", nshort_added++, 30, marker_dir);
            next_feed = e2e_now_ms() + 500;
        }
        e2e_loop_for(base, 20);
    }
}

/* ---- When the master dies ----
 * At a random time, or a random 0-40 ms after the framework hands an
 * ACCEPT to libofferd (the launch may or may not reach the master and the
 * agent), or after a task's terminal update arrived (its acknowledgement
 * may or may not reach the master, and the agent). */
enum kill_point { KILL_NOW, KILL_AFTER_ACCEPT, KILL_AFTER_TERMINAL };
static const char *const KILL_POINT_NAMES[] = {"at once", "after an ACCEPT",
                                               "after a terminal update"};
static enum kill_point armed = KILL_NOW;
static int armed_delay_ms;

static void kill_master_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    if (master.pid > 0)
        kill(master.pid, SIGKILL);
    kill_fired = true;
}

static bool kill_pending;

static void fire(void)
{
    armed = KILL_NOW;
    kill_pending = true;
    struct timeval tv = {0, armed_delay_ms * 1000};
    ck_assert_int_eq(
        event_base_once(base, -1, EV_TIMEOUT, kill_master_cb, NULL, &tv), 0);
}

static void hook_accept(struct wl *wp, void *arg)
{
    (void)wp;
    (void)arg;
    if (armed == KILL_AFTER_ACCEPT)
        fire();
}

static void hook_terminal(struct wl *wp, struct wl_task *t, void *arg)
{
    (void)wp;
    (void)t;
    (void)arg;
    if (armed == KILL_AFTER_TERMINAL)
        fire();
}

static bool cond_kill_fired(void *arg)
{
    (void)arg;
    return kill_fired;
}

static int launched_count(void)
{
    int n = 0;
    for (int i = 0; i < w.ntasks; i++)
        n += w.tasks[i].launched;
    return n;
}

START_TEST(test_master_kill9_rounds)
{
    uint64_t seed = wl_seed("e2e_master_failover");
    rng = seed;
    ck_assert_int_eq(e2e_start_master(&master, MASTER_ARGS), 0);
    wl_make_marker_dir(&master, marker_dir, sizeof(marker_dir));
    for (int i = 0; i < NAGENTS; i++) {
        wl_start_agent(&agents[i], i, master.port);
        agent_ports[i] = agents[i].port;
    }
    ck_assert_msg(e2e_wait_agents(&master, NAGENTS, 20000) == 0,
                  "the agents did not register");
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    memset(&w, 0, sizeof(w));
    w.name = "failover";
    w.partition_aware = true;
    w.on_accept = hook_accept;
    w.on_terminal = hook_terminal;
    wl_start(&w, base, master.port);

    wl_add_long(&w, NLONG, marker_dir);
    ck_assert_msg(wl_wait_first_running(&w, NLONG, 30000),
                  "the long tasks did not start");

    for (int r = 0; r < ROUNDS; r++) {
        int before = wl_rand_between(&rng, 300, 3000);
        enum kill_point point = (enum kill_point)(wl_rand(&rng) % 3);
        armed_delay_ms = wl_rand_between(&rng, 0, 40);
        int down = wl_rand_between(&rng, 0, 1500);
        run_feeding(before, false);
        kill_fired = false;
        if (point != KILL_NOW) {
            /* Armed for the next such event (at most 3 s away). */
            armed = point;
            run_feeding(3000, true);
            armed = KILL_NOW;
            /* The timer is set (at most 40 ms): let it fire. */
            if (kill_pending)
                ck_assert(e2e_loop_until(base, cond_kill_fired, NULL, 5000));
            kill_pending = false;
        }
        fprintf(stderr,
                "round %d: kill -9 of the master %d ms in, %s%s (+%d ms); %d "
                "tasks launched, %d ended; down for %d ms\n",
                r, before, KILL_POINT_NAMES[point],
                point != KILL_NOW && !kill_fired ? " (none came)" : "",
                armed_delay_ms, launched_count(), wl_terminal_count(&w), down);
        ck_assert_int_eq(e2e_proc_stop(&master, SIGKILL, 5000), -1);
        run_feeding(down, false);
        ck_assert_int_eq(e2e_restart_master(&master, MASTER_ARGS), 0);
        int64_t t0 = e2e_now_ms();
        ck_assert_msg(wl_wait_recovered(&w, master.port, NAGENTS, 30000),
                      "round %d: agents and framework did not come back", r);
        fprintf(stderr, "round %d: recovered in %lld ms\n", r,
                (long long)(e2e_now_ms() - t0));
    }
    while (nshort_added < NSHORT)
        run_feeding(500, false);

    /* Every short task ends; the long ones run on. */
    int want = NSHORT;
    bool done = wl_wait_terminal(&w, want, 60000);
    if (!done)
        wl_dump_unfinished(&w, NULL);
    ck_assert_msg(done, "%d of %d short tasks ended", wl_terminal_count(&w),
                  want);

    fprintf(stderr,
            "master: %.0f tasks adopted, %.0f agent re-registrations after "
            "the last restart\n",
            e2e_metric(master.port, "master/tasks_adopted"),
            e2e_metric(master.port, "master/slave_reregistrations"));
    /* Master, agents and framework agree; then the long tasks go. */
    wl_finish(&w, agent_ports, NAGENTS, NLONG, marker_dir);

    wl_free(&w);
    event_base_free(base);
    base = NULL;
    for (int i = 0; i < NAGENTS; i++) {
        ck_assert_int_eq(e2e_proc_stop(&agents[i], SIGTERM, 10000), 0);
        e2e_proc_cleanup(&agents[i]);
    }
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *master_failover_suite(void)
{
    Suite *s = suite_create("e2e_master_failover");
    TCase *tc = tcase_create("kill9_rounds");
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_master_kill9_rounds);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(master_failover_suite)
