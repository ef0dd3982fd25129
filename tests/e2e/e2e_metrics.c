/*
 * End-to-end test of GET /metrics (Prometheus text) on the real master and
 * agent: after a framework ran a task, both expositions pass promtool's
 * parser (Debian's prometheus package, scripts/install-deps.sh), carry the
 * exposition's Content-Type, and the histograms have counted something.
 *
 * promtool's linter also flags names offerd keeps on purpose, because they
 * are Mesos's snapshot keys (a gauge "master/cpus_total", units such as
 * "_ms" and "_secs", a gauge "registrar/state_store_ms/count"): those kinds of
 * lint are accepted, anything else it prints (a parse error above all) fails
 * the test.
 */
#include <check.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prom.h"
#include "harness.h"
#include "harness_fw.h"
#include "mesos/v1/mesos.pb-c.h"

#ifndef PROMTOOL_BIN
#define PROMTOOL_BIN ""
#endif

static struct e2e_proc master, agent;

/* GET /metrics on port: 200 with the exposition's Content-Type. The body
 * is the caller's (free). */
static char *get_metrics(uint16_t port)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(port, "GET", "/metrics", NULL, NULL, 0, 10000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    const char *ct = e2e_response_header(&r, "Content-Type");
    ck_assert_ptr_nonnull(ct);
    ck_assert_str_eq(ct, PROM_CONTENT_TYPE);
    char *body = r.body;
    r.body = NULL;
    e2e_response_free(&r);
    return body;
}

/* The value of the sample whose line starts with "series " in text, or -1
 * when there is none. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p != NULL && *p != '\0';) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

/* Run promtool check metrics on text (through a file in dir); fail on a
 * parse error or a lint outside the accepted kinds. */
static void promtool_accepts(const char *dir, const char *name,
                             const char *text)
{
    ck_assert_msg(PROMTOOL_BIN[0] != '\0',
                  "promtool not found at configure time: install Debian's "
                  "prometheus package (scripts/install-deps.sh)");
    char path[512], cmd[1200];
    snprintf(path, sizeof(path), "%s/%s.prom", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    ck_assert_int_eq(fclose(f), 0);
    snprintf(cmd, sizeof(cmd), "'%s' check metrics < '%s'", PROMTOOL_BIN, path);
    const char *args[] = {"-c", cmd, NULL};
    static char out[1 << 16];
    int rc = e2e_run("/bin/sh", args, out, sizeof(out), 30000);
    /* 0: clean; 3: lint problems only; 1: the text did not parse. */
    ck_assert_msg(rc == 0 || rc == 3, "promtool exit %d on %s:\n%s", rc, name,
                  out);
    static const char *const accepted[] = {
        "non-counter metrics should not have \"_total\" suffix",
        "metric names should not contain abbreviated units",
        /* registrar/state_store_ms/count, Mesos's timer's sample count
         * (promtool: non-histogram and non-summary metrics should not ...) */
        "metrics should not have \"_count\" suffix",
    };
    for (char *line = strtok(out, "\n"); line != NULL;
         line = strtok(NULL, "\n")) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
            ok = ok || strstr(line, accepted[i]) != NULL;
        ck_assert_msg(ok, "promtool on %s: %s", name, line);
    }
}

static bool cond_finished(void *arg)
{
    return hfw_state(arg, "t1") == MESOS__V1__TASK_STATE__TASK_FINISHED;
}

START_TEST(test_both_daemons_expose_prometheus_text)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    const char *aargs[] = {"--resources=cpus:2;mem:512;disk:1024", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 20000), 0);
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    static struct hfw f = {.name = "metrics"};
    hfw_start(&f, base, master.port, OFFERD_ENCODING_JSON);
    hfw_launch(&f, "t1", "echo metrics");
    ck_assert_msg(e2e_loop_until(base, cond_finished, &f, 30000),
                  "t1 did not finish");

    /* The second read also shows the first one's latency. */
    free(get_metrics(master.port));
    char *m = get_metrics(master.port);
    promtool_accepts(master.dir, "master", m);
    ck_assert_double_gt(
        sample(m, "offerd_allocator_allocation_cycle_seconds_count"), 0);
    ck_assert_double_gt(sample(m, "offerd_master_offer_accept_seconds_count"),
                        0);
    ck_assert_double_gt(sample(m, "offerd_registrar_state_store_seconds_count"),
                        0);
    ck_assert_double_gt(sample(m, "offerd_http_request_duration_seconds_count"
                                  "{endpoint=\"/api/v1/scheduler\"}"),
                        0);
    ck_assert_double_gt(sample(m, "offerd_http_request_duration_seconds_count"
                                  "{endpoint=\"/metrics\"}"),
                        0);
    ck_assert_double_ge(sample(m, "offerd_http_request_duration_seconds_count"
                                  "{endpoint=\"other\"}"),
                        0);
    /* Snapshot keys: a counter and a gauge. */
    ck_assert_double_eq(sample(m, "offerd_master_tasks_finished_total"), 1);
    ck_assert_double_eq(sample(m, "offerd_master_slaves_active"), 1);
    ck_assert_ptr_nonnull(
        strstr(m, "# TYPE offerd_master_tasks_finished_total counter\n"));
    ck_assert_ptr_nonnull(
        strstr(m, "# TYPE offerd_master_slaves_active gauge\n"));
    free(m);

    char *a = get_metrics(agent.port);
    promtool_accepts(agent.dir, "agent", a);
    ck_assert_double_eq(sample(a, "offerd_slave_registered"), 1);
    ck_assert_double_gt(sample(a, "offerd_http_request_duration_seconds_count"
                                  "{endpoint=\"/health\"}"),
                        0);
    free(a);

    hfw_free(&f);
    event_base_free(base);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *metrics_suite(void)
{
    Suite *s = suite_create("e2e_metrics");
    TCase *tc = tcase_create("metrics");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_both_daemons_expose_prometheus_text);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(metrics_suite)
