/*
 * Tests of the master's GET /metrics (system_endpoints.c): every snapshot
 * key appears once, as a counter or a gauge by the one table, and the
 * histograms count allocation cycles, offer answers and registry writes.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/prom.h"
#include "master/state_endpoints.h"
#include "master/system_endpoints.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"

static struct mfx X;
static struct mfx_peer FW, AG;

static void setup(void)
{
    mfx_start(&X, NULL);
}

static void teardown(void)
{
    mfx_peer_free(&FW);
    mfx_peer_free(&AG);
    mfx_stop(&X);
}

/* A framework, an agent and the framework's first offer. */
static void cluster(char *offer_id)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
}

/* How many times needle occurs in text. */
static size_t occurrences(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL;
         p = strstr(p + 1, needle))
        n++;
    return n;
}

struct key_check {
    const char *text;
    size_t nkeys;
};

/* Each key's family is there with the type the table gives it. */
static void check_key(void *arg, const char *key, double v)
{
    (void)v;
    struct key_check *c = arg;
    bool counter = master_metric_is_counter(key);
    char name[256], want[320];
    ck_assert_int_eq(
        prom_name("offerd_", key, counter ? "_total" : NULL, name, 256), 0);
    snprintf(want, sizeof(want), "# TYPE %s %s\n", name,
             counter ? "counter" : "gauge");
    ck_assert_msg(strstr(c->text, want) != NULL, "%s: no '%s'", key, want);
    c->nkeys++;
}

START_TEST(test_every_snapshot_key_once)
{
    char offer_id[128];
    cluster(offer_id);
    struct prom_writer *w = master_metrics_prometheus(X.m);
    const char *text = prom_writer_text(w, NULL);
    struct key_check c = {text, 0};
    master_metrics_collect(X.m, check_key, &c);
    ck_assert_uint_gt(c.nkeys, 50);
    /* No two keys collapsed into one name: one family per key, plus the
     * four histograms. */
    ck_assert_uint_eq(occurrences(text, "# TYPE "), c.nkeys + 4);
    ck_assert_uint_eq(occurrences(text, "# TYPE "),
                      occurrences(text, "# HELP "));
    prom_writer_free(w);
}
END_TEST

START_TEST(test_counter_table)
{
    static const struct {
        const char *key;
        bool counter;
    } cases[] = {
        {"master/tasks_finished", true},
        {"master/tasks_running", false},
        {"master/messages_kill_task", true},
        {"master/invalid_calls", true},
        {"master/slave_removals", true},
        {"master/slave_removals/reason_unhealthy", true},
        {"master/slaves_active", false},
        {"master/cpus_total", false},
        {"allocator/mesos/allocation_runs", true},
        {"allocator/mesos/allocation_run_ms", false},
        {"registrar/state_store_ms/count", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(master_metric_is_counter(cases[i].key) ==
                          cases[i].counter,
                      "%s", cases[i].key);
}
END_TEST

START_TEST(test_histograms_count)
{
    char offer_id[128];
    cluster(offer_id);
    ck_assert_uint_gt(X.m->metrics.allocation_cycle.count, 0);
    ck_assert_uint_eq(X.m->metrics.offer_answer.count, 0);
    char payload[256];
    snprintf(payload, sizeof(payload), "{\"offer_ids\":[{\"value\":\"%s\"}]}",
             offer_id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "DECLINE", "decline", payload),
                     202);
    ck_assert_uint_eq(X.m->metrics.offer_answer.count, 1);
    /* An unknown offer is no answer. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "DECLINE", "decline", payload),
                     202);
    ck_assert_uint_eq(X.m->metrics.offer_answer.count, 1);

    struct prom_writer *w = master_metrics_prometheus(X.m);
    const char *text = prom_writer_text(w, NULL);
    ck_assert_ptr_nonnull(
        strstr(text, "\nofferd_master_offer_accept_seconds_count 1\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "# TYPE offerd_allocator_allocation_cycle_seconds "
                     "histogram\n"));
    /* The subscriptions were written to the (memory) registry. */
    ck_assert_ptr_null(
        strstr(text, "\nofferd_registrar_state_store_seconds_count 0\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "\nofferd_registrar_state_store_seconds_count "));
    prom_writer_free(w);
}
END_TEST

START_TEST(test_route)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/metrics");
    http_fake_dispatch_server(f, X.m->http);
    ck_assert_int_eq(http_fake_status(f), 200);
    ck_assert_str_eq(http_fake_content_type(f), PROM_CONTENT_TYPE);
    size_t len;
    const char *body = (const char *)http_fake_body(f, &len);
    ck_assert_uint_gt(len, 0);
    ck_assert_ptr_nonnull(strstr(body, "# TYPE offerd_master_elected gauge\n"));
    /* Fake requests are not timed; the family is there with "other". */
    ck_assert_ptr_nonnull(strstr(
        body,
        "offerd_http_request_duration_seconds_count{endpoint=\"other\"} 0\n"));
    http_fake_free(f);
}
END_TEST

static Suite *master_metrics_suite(void)
{
    Suite *s = suite_create("master_metrics");
    TCase *tc = tcase_create("metrics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_snapshot_key_once);
    tcase_add_test(tc, test_counter_table);
    tcase_add_test(tc, test_histograms_count);
    tcase_add_test(tc, test_route);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_metrics_suite)
