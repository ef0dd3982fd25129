/*
 * End-to-end smoke test of offerd-loadgen (src/bench/loadgen.c) at a tiny
 * size: 50 simulated agents and 200 tasks against a real master started
 * by the harness, with its pid for RSS and CPU. The JSON it prints must
 * carry every field docs/performance.md describes, with the counts right.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifndef OFFERD_LOADGEN_BIN
#define OFFERD_LOADGEN_BIN "offerd-loadgen"
#endif

static struct e2e_proc master;

/* The number at path (keys separated by '.'; a key may hold '/' or '?'). */
static json_t *at(json_t *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    json_t *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k != NULL;
         k = strtok_r(NULL, ".", &save)) {
        v = json_object_get(v, k);
        ck_assert_msg(v != NULL, "no %s (at %s)", path, k);
    }
    return v;
}

static double num(json_t *o, const char *path)
{
    json_t *v = at(o, path);
    ck_assert_msg(json_is_number(v), "%s is not a number", path);
    return json_number_value(v);
}

static void timed(json_t *o, const char *path, bool want_samples)
{
    char p[200];
    const char *keys[] = {"count", "min_ms", "p50_ms", "p99_ms", "max_ms"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof(p), "%s.%s", path, keys[i]);
        double v = num(o, p);
        ck_assert_msg(v >= 0, "%s < 0", p);
        if (want_samples && i == 0)
            ck_assert_msg(v > 0, "%s: no samples", p);
    }
}

START_TEST(test_loadgen_tiny)
{
    const char *margs[] = {"--registry=in_memory", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    char addr[64], pid[32];
    snprintf(addr, sizeof(addr), "--master=127.0.0.1:%u",
             (unsigned)master.port);
    snprintf(pid, sizeof(pid), "--pid=%d", (int)master.pid);
    const char *args[] = {addr,
                          pid,
                          "--agents=50",
                          "--tasks=200",
                          "--idle-seconds=1",
                          "--poll-seconds=1",
                          "--endpoint-reads=2",
                          "--timeout=25",
                          NULL};
    static char out[1 << 16];
    int rc = e2e_run(OFFERD_LOADGEN_BIN, args, out, sizeof(out), 40000);
    ck_assert_msg(rc == 0, "offerd-loadgen exited %d: %s", rc, out);
    const char *start = strchr(out, '{');
    ck_assert_msg(start != NULL, "no JSON: %s", out);
    json_error_t err;
    json_t *o = json_loads(start, JSON_DISABLE_EOF_CHECK, &err);
    ck_assert_msg(o != NULL, "bad JSON (%s): %s", err.text, out);

    ck_assert_double_eq(num(o, "load.agents"), 50);
    ck_assert_double_eq(num(o, "load.tasks"), 200);
    num(o, "load.pollers");
    num(o, "load.fd_limit");
    num(o, "load.machine_load_1min");
    ck_assert(json_is_string(at(o, "load.scheduler_encoding")));
    ck_assert_double_gt(num(o, "master_memory.rss_all_running_mib"), 0);
    ck_assert_double_gt(num(o, "master_memory.rss_end_mib"), 0);
    ck_assert_double_gt(num(o, "master_memory.peak_rss_mib"), 0);
    num(o, "agents_registered_ms");
    ck_assert_double_gt(num(o, "launch.seconds"), 0);
    ck_assert_double_gt(num(o, "launch.launches_per_sec"), 0);
    timed(o, "launch.accept_to_running", true);
    ck_assert_double_eq(num(o, "launch.accept_to_running.count"), 200);
    ck_assert_double_ge(num(o, "launch.master_cpu_ms_per_1k"), 0);
    ck_assert_double_ge(num(o, "launch.loadgen_cpu_ms_per_1k"), 0);
    /* STARTING and RUNNING of each task, one after the other's ack. */
    ck_assert_double_eq(num(o, "launch.agent_updates_sent"), 400);
    const char *eps[] = {"/state", "/metrics/snapshot", "/tasks?limit=100",
                         "/state-summary"};
    json_t *e = at(o, "endpoints");
    for (size_t i = 0; i < 4; i++) {
        json_t *ep = json_object_get(e, eps[i]);
        ck_assert_msg(ep != NULL, "no endpoint %s", eps[i]);
        ck_assert_double_eq(json_number_value(json_object_get(ep, "count")), 2);
        ck_assert(json_number_value(json_object_get(ep, "bytes")) > 0);
        ck_assert(json_is_number(json_object_get(ep, "p50_ms")));
        ck_assert(json_is_number(json_object_get(ep, "p99_ms")));
    }
    ck_assert(json_is_string(at(o, "cheap_call.call")));
    timed(o, "cheap_call.idle", true);
    timed(o, "cheap_call.during_state_polling", false);
    ck_assert_double_ge(num(o, "cheap_call.longest_idle_stall_ms"), 0);
    timed(o, "state_polling", false);
    ck_assert_double_gt(num(o, "loadgen_cpu_ms_total"), 0);
    json_decref(o);

    /* The master lived through it (the framework went with the loadgen,
     * and its tasks with it: a failover timeout of 0). */
    ck_assert(e2e_proc_running(&master));
    e2e_proc_cleanup(&master);
}
END_TEST

E2E_ONE_TEST_MAIN("loadgen", "tiny", test_loadgen_tiny, 60)
