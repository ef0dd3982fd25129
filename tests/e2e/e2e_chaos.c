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
#include "harness_fw.h"
#include "harness_proxy.h"
#include "harness_wl.h"

#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

static void start_agent(int i)
{
    char host[32];
    snprintf(host, sizeof(host), "--hostname=agent%d", i);
    const char *args[] = {"--resources=cpus:2;mem:512;disk:1024", host,
                          "--status_update_retry_interval_min=500ms",
                          "--status_update_retry_interval_max=2secs", NULL};
    ck_assert_int_eq(
        e2e_start_agent(&agents[i], e2e_proxy_port(proxies[i]), args), 0);
    agent_ports[i] = agents[i].port;
}

/* Queue short task number i: sleep 0.1 .. 2 s, exit 0 mostly, else one of
 * a few failure codes. */
static void add_short(int i)
{
    static const int codes[] = {1, 2, 3, 7, 42};
    int tenths = wl_rand_between(&rng, 1, 20);
    int code = wl_rand_between(&rng, 0, 9) < 7 ? 0 : codes[wl_rand(&rng) % 5];
    char id[48], cmd[320];
    snprintf(id, sizeof(id), "chaos-%03d", i);
    int n =
        snprintf(cmd, sizeof(cmd), "echo started > %s/%s; sleep %d.%d; exit %d",
                 marker_dir, id, tenths / 10, tenths % 10, code);
    ck_assert(n > 0 && (size_t)n < sizeof(cmd));
    wl_add(&w, id, cmd, code);
}

static bool healed(void)
{
    for (int i = 0; i < NAGENTS; i++)
        if (!e2e_proxy_healed(proxies[i]))
            return false;
    return true;
}

static bool cond_long_running(void *arg)
{
    (void)arg;
    for (int i = 0; i < NLONG; i++)
        if (w.tasks[i].state != MESOS__V1__TASK_STATE__TASK_RUNNING)
            return false;
    return true;
}

static bool cond_all_terminal(void *arg)
{
    int want = *(const int *)arg;
    return wl_queued(&w) == 0 && wl_terminal_count(&w) == want;
}

static bool cond_agents_back(void *arg)
{
    (void)arg;
    static int64_t next;
    if (e2e_now_ms() < next)
        return false;
    next = e2e_now_ms() + 200;
    return e2e_metric(master.port, "master/slaves_active") == NAGENTS;
}

START_TEST(test_chaos_proxy)
{
    uint64_t seed = wl_seed("e2e_chaos");
    rng = seed;
    ck_assert_int_eq(e2e_start_master(&master, MASTER_ARGS), 0);
    int n = snprintf(marker_dir, sizeof(marker_dir), "%s/markers", master.dir);
    ck_assert(n > 0 && (size_t)n < sizeof(marker_dir));
    ck_assert_int_eq(mkdir(marker_dir, 0700), 0);
    for (int i = 0; i < NAGENTS; i++) {
        char name[16];
        snprintf(name, sizeof(name), "agent%d", i);
        struct e2e_proxy_config pc = {name, master.port,
                                      seed ^ (UINT64_C(0x51ed27) * (i + 1))};
        proxies[i] = e2e_proxy_start(&pc);
        ck_assert_ptr_nonnull(proxies[i]);
        start_agent(i);
    }
    ck_assert_msg(e2e_wait_agents(&master, NAGENTS, 20000) == 0,
                  "the agents did not register");
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    memset(&w, 0, sizeof(w));
    w.name = "chaos";
    w.partition_aware = true;
    wl_start(&w, base, master.port);

    for (int i = 0; i < NLONG; i++) {
        char id[48], cmd[320];
        snprintf(id, sizeof(id), "long-%d", i);
        int k = snprintf(cmd, sizeof(cmd), "echo started > %s/%s; sleep 600",
                         marker_dir, id);
        ck_assert(k > 0 && (size_t)k < sizeof(cmd));
        wl_add(&w, id, cmd, WL_EXIT_KILLED);
    }
    ck_assert_msg(e2e_loop_until(base, cond_long_running, NULL, 30000),
                  "the long tasks did not start");

    /* Chaos, while the short tasks are queued a few at a time. */
    for (int i = 0; i < NAGENTS; i++)
        e2e_proxy_chaos(proxies[i], CHAOS_MS);
    int64_t next_feed = 0;
    while (!healed() || nshort_added < NSHORT) {
        if (nshort_added < NSHORT && e2e_now_ms() >= next_feed) {
            for (int k = 0; k < FEED_N && nshort_added < NSHORT; k++)
                add_short(nshort_added++);
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
    ck_assert_msg(e2e_loop_until(base, cond_agents_back, NULL, 30000),
                  "the agents did not come back after the chaos");
    int want = NSHORT;
    bool done = e2e_loop_until(base, cond_all_terminal, &want, 90000);
    int stuck = 0;
    if (!done)
        wl_dump_unfinished(&w, &stuck);
    ck_assert_msg(done,
                  "%d of %d short tasks ended (%d of the others stay "
                  "TASK_UNREACHABLE)",
                  wl_terminal_count(&w), want, stuck);

    /* Master, agents and framework agree: the long tasks run, nothing
     * else is held. */
    char aid[128];
    wl_agent_id(agent_ports[0], aid, sizeof(aid));
    ck_assert_msg(wl_wait_quiet(&w, agent_ports, NAGENTS, NLONG, 30000),
                  "the agents still hold ended tasks");
    wl_check_agreement(&w, agent_ports, NAGENTS, aid, NLONG);

    for (int i = 0; i < NLONG; i++)
        wl_kill(&w, &w.tasks[i]);
    want = NSHORT + NLONG;
    ck_assert_msg(e2e_loop_until(base, cond_all_terminal, &want, 30000),
                  "the long tasks were not killed");
    ck_assert_msg(wl_wait_quiet(&w, agent_ports, NAGENTS, 0, 30000),
                  "the agents still hold tasks");
    wl_check_agreement(&w, agent_ports, NAGENTS, aid, 0);
    wl_check_outcomes(&w, marker_dir);
    ck_assert_int_eq(w.errors, 0);

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
