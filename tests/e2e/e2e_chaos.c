/*
 * End-to-end chaos test (issue 7): two real agents reach the real master
 * only through chaos proxies in this process (harness_proxy.h, one per
 * agent, seeded RNG, seed printed) that for CHAOS_MS delay data, stall,
 * cut connections, refuse new ones and partition the agent long enough for
 * the master to remove it (--agent_ping_timeout=500ms,
 * --max_agent_ping_timeouts=3); the agents reconnect fast. A
 * partition-aware libofferd framework (harness_wl.h) talks to the master
 * directly and runs a few hundred short tasks (0.1 to 2 s, some failing
 * with exit codes) through the chaos, plus a few long ones that live
 * through all of it; it reconciles its tasks as docs/reconciliation.md
 * says (a task of a removed agent goes TASK_UNREACHABLE, then its real
 * state comes back).
 *
 * Afterwards, with the proxies healed: the master (implicit
 * reconciliation), the agents' /state and the framework agree on every
 * task (the long ones RUNNING, nothing else held), and every task the
 * framework launched reached exactly one terminal state at the framework,
 * its true one (see wl_check_outcomes); after the long tasks are killed
 * nothing is left anywhere.
 */
#include "harness.h"
#include "harness_proxy.h"
#include "harness_wl.h"

#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define NAGENTS  2
#define NLONG    4
#define NSHORT   300
#define CHAOS_MS 40000
#define FEED_MS  500 /* a batch of short tasks every FEED_MS ... */
#define FEED_N   4   /* ... of FEED_N tasks: 300 in 37.5 s */

static const char *const MASTER_ARGS[] = {"--allocation_interval=50ms",
                                          "--agent_ping_timeout=500ms",
                                          "--max_agent_ping_timeouts=3", NULL};

static struct e2e_proc master, agents[NAGENTS];
static struct e2e_proxy *proxies[NAGENTS];
static uint16_t agent_ports[NAGENTS];
static struct event_base *base;
static struct wl w;
static char marker_dir[200];
static uint64_t rng;
static int nshort_added;

static bool healed(void)
{
    for (int i = 0; i < NAGENTS; i++)
        if (!e2e_proxy_healed(proxies[i]))
            return false;
    return true;
}

START_TEST(test_chaos_proxy)
{
    uint64_t seed = wl_seed("e2e_chaos");
    rng = seed;
    ck_assert_int_eq(e2e_start_master(&master, MASTER_ARGS), 0);
    wl_make_marker_dir(&master, marker_dir, sizeof(marker_dir));
    for (int i = 0; i < NAGENTS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "agent%d", i);
        struct e2e_proxy_config pc = {name, master.port,
                                      seed ^ (UINT64_C(0x51ed27) * (i + 1))};
        proxies[i] = e2e_proxy_start(&pc);
        ck_assert_ptr_nonnull(proxies[i]);
        wl_start_agent(&agents[i], i, e2e_proxy_port(proxies[i]));
        agent_ports[i] = agents[i].port;
    }
    ck_assert_msg(e2e_wait_agents(&master, NAGENTS, 20000) == 0,
                  "the agents did not register");
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    memset(&w, 0, sizeof(w));
    w.name = "chaos";
    w.partition_aware = true;
    wl_start(&w, base, master.port);

    wl_add_long(&w, NLONG, marker_dir);
    ck_assert_msg(wl_wait_first_running(&w, NLONG, 30000),
                  "the long tasks did not start");

    /* Chaos, while the short tasks are queued a few at a time. */
    for (int i = 0; i < NAGENTS; i++)
        e2e_proxy_chaos(proxies[i], CHAOS_MS);
    int64_t next_feed = 0;
    while (!healed() || nshort_added < NSHORT) {
        if (nshort_added < NSHORT && e2e_now_ms() >= next_feed) {
            for (int k = 0; k < FEED_N && nshort_added < NSHORT; k++)
                wl_add_short(&w, &rng, "chaos", nshort_added++, 20, marker_dir);
            next_feed = e2e_now_ms() + FEED_MS;
        }
        e2e_loop_for(base, 20);
    }
    for (int i = 0; i < NAGENTS; i++) {
        struct e2e_proxy_stats st;
        e2e_proxy_get_stats(proxies[i], &st);
        fprintf(stderr,
                "proxy agent%d: %u connections, %u refused, %u cut, %lu "
                "bytes forwarded, %lu dropped; episodes: %u calm, %u slow, "
                "%u stall, %u cut, %u refuse, %u partition\n",
                i, st.accepted, st.refused, st.cut, st.forwarded, st.dropped,
                st.episodes[0], st.episodes[1], st.episodes[2], st.episodes[3],
                st.episodes[4], st.episodes[5]);
    }
    fprintf(stderr,
            "after the chaos: %d of %d tasks ended; master: %.0f agent "
            "removals, %.0f re-registrations, %.0f tasks adopted, %.0f tasks "
            "asked about\n",
            wl_terminal_count(&w), w.ntasks,
            e2e_metric(master.port, "master/slave_removals"),
            e2e_metric(master.port, "master/slave_reregistrations"),
            e2e_metric(master.port, "master/tasks_adopted"),
            e2e_metric(master.port, "master/agent_task_reconciliations"));

    /* Healed: the agents come back, every short task ends. */
    ck_assert_msg(wl_wait_recovered(&w, master.port, NAGENTS, 30000),
                  "the agents did not come back after the chaos");
    int want = NSHORT;
    bool done = wl_wait_terminal(&w, want, 90000);
    int stuck = 0;
    if (!done)
        wl_dump_unfinished(&w, &stuck);
    ck_assert_msg(done,
                  "%d of %d short tasks ended (%d of the others stay "
                  "TASK_UNREACHABLE)",
                  wl_terminal_count(&w), want, stuck);

    /* Master, agents and framework agree; then the long tasks go. */
    wl_finish(&w, agent_ports, NAGENTS, NLONG, marker_dir);

    wl_free(&w);
    event_base_free(base);
    base = NULL;
    for (int i = 0; i < NAGENTS; i++) {
        ck_assert_int_eq(e2e_proc_stop(&agents[i], SIGTERM, 10000), 0);
        e2e_proc_cleanup(&agents[i]);
        e2e_proxy_stop(proxies[i]);
        proxies[i] = NULL;
    }
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *chaos_suite(void)
{
    Suite *s = suite_create("e2e_chaos");
    TCase *tc = tcase_create("chaos_proxy");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_chaos_proxy);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(chaos_suite)
