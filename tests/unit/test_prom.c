/*
 * Tests of common/prom.h: histograms, metric names and the text writer.
 */
#include "common/prom.h"

#include "check_main.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double B3[] = {0.1, 1, 10};

START_TEST(test_hist_buckets_are_upper_inclusive)
{
    struct prom_hist h;
    prom_hist_init(&h, B3, 3);
    const double v[] = {0, 0.1, 0.2, 1, 10, 11, NAN};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        prom_hist_observe(&h, v[i]);
    ck_assert_uint_eq(h.count, 6); /* NaN ignored */
    ck_assert_uint_eq(h.buckets[0], 2);
    ck_assert_uint_eq(h.buckets[1], 2);
    ck_assert_uint_eq(h.buckets[2], 1);
    ck_assert_uint_eq(h.buckets[3], 1); /* +Inf */
    ck_assert_double_eq_tol(h.sum, 22.3, 1e-9);
}
END_TEST

START_TEST(test_hist_bounds_capped)
{
    static double many[PROM_HIST_MAX_BOUNDS + 4];
    for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
        many[i] = (double)i;
    struct prom_hist h;
    prom_hist_init(&h, many, sizeof(many) / sizeof(many[0]));
    ck_assert_uint_eq(h.nbounds, PROM_HIST_MAX_BOUNDS);
    prom_hist_observe(&h, 1e9);
    ck_assert_uint_eq(h.buckets[PROM_HIST_MAX_BOUNDS], 1);
    ck_assert(PROM_BOUNDS_LATENCY_N <= PROM_HIST_MAX_BOUNDS);
    ck_assert(PROM_BOUNDS_WAIT_N <= PROM_HIST_MAX_BOUNDS);
}
END_TEST

START_TEST(test_names_from_snapshot_keys)
{
    static const struct {
        const char *prefix, *key, *suffix, *want;
    } cases[] = {
        {"offerd_", "master/tasks_running", NULL,
         "offerd_master_tasks_running"},
        {"offerd_", "master/tasks_finished", "_total",
         "offerd_master_tasks_finished_total"},
        {"offerd_", "registrar/state_store_ms/p99.9", NULL,
         "offerd_registrar_state_store_ms_p99_9"},
        {NULL, "9lives", NULL, "_lives"},
        {NULL, "a-b:c d\xc3\xa9", NULL, "a_b:c_d__"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[128];
        ck_assert_int_eq(prom_name(cases[i].prefix, cases[i].key,
                                   cases[i].suffix, out, sizeof(out)),
                         0);
        ck_assert_str_eq(out, cases[i].want);
        ck_assert(prom_name_valid(out));
    }
    char small[8];
    ck_assert_int_eq(prom_name("offerd_", "master/x", NULL, small, 8), -1);
    ck_assert_str_eq(small, "");
}
END_TEST

START_TEST(test_name_validity)
{
    const char *ok[] = {"a", "_a", ":a", "a1:b_C"};
    const char *bad[] = {"", "1a", "a-b", "a/b", "a b", "a\n"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        ck_assert_msg(prom_name_valid(ok[i]), "%s", ok[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!prom_name_valid(bad[i]), "%s", bad[i]);
    ck_assert(!prom_name_valid(NULL));
}
END_TEST

START_TEST(test_key_table)
{
    const char *const t[] = {"master/messages_*", "master/tasks_lost"};
    ck_assert(prom_key_in(t, 2, "master/messages_kill_task"));
    ck_assert(prom_key_in(t, 2, "master/tasks_lost"));
    ck_assert(!prom_key_in(t, 2, "master/tasks_lost_x"));
    ck_assert(!prom_key_in(t, 2, "master/message"));
    ck_assert(!prom_key_in(t, 0, "master/tasks_lost"));
}
END_TEST

START_TEST(test_writer_families_and_escaping)
{
    struct prom_writer *w = prom_writer_new();
    ck_assert_int_eq(prom_family(w, "x_total", "a \\ b\nc \"q\"", PROM_COUNTER),
                     0);
    prom_sample(w, "x_total", NULL, NULL, 3);
    ck_assert_int_eq(prom_family(w, "g", NULL, PROM_GAUGE), 0);
    prom_sample(w, "g", "endpoint", "/a\"b\\c\nd", 0.25);
    prom_sample(w, "g", NULL, NULL, NAN);
    prom_sample(w, "g", NULL, NULL, -INFINITY);
    prom_sample(w, "g", NULL, NULL, 0.1);
    /* A repeated or invalid name is refused and writes nothing. */
    ck_assert_int_eq(prom_family(w, "g", "again", PROM_GAUGE), -1);
    ck_assert_int_eq(prom_family(w, "bad-name", "x", PROM_GAUGE), -1);
    size_t len;
    const char *text = prom_writer_text(w, &len);
    const char *want = "# HELP x_total a \\\\ b\\nc \"q\"\n"
                       "# TYPE x_total counter\n"
                       "x_total 3\n"
                       "# HELP g \n"
                       "# TYPE g gauge\n"
                       "g{endpoint=\"/a\\\"b\\\\c\\nd\"} 0.25\n"
                       "g NaN\n"
                       "g -Inf\n"
                       "g 0.1\n";
    ck_assert_str_eq(text, want);
    ck_assert_uint_eq(len, strlen(want));
    prom_writer_free(w);
}
END_TEST

START_TEST(test_writer_histogram)
{
    struct prom_hist h;
    prom_hist_init(&h, B3, 3);
    prom_hist_observe(&h, 0.05);
    prom_hist_observe(&h, 5);
    prom_hist_observe(&h, 50);
    struct prom_writer *w = prom_writer_new();
    ck_assert_int_eq(prom_family(w, "lat_seconds", "h", PROM_HISTOGRAM), 0);
    prom_hist_write(w, "lat_seconds", "endpoint", "/x", &h);
    const char *want = "# HELP lat_seconds h\n"
                       "# TYPE lat_seconds histogram\n"
                       "lat_seconds_bucket{endpoint=\"/x\",le=\"0.1\"} 1\n"
                       "lat_seconds_bucket{endpoint=\"/x\",le=\"1\"} 1\n"
                       "lat_seconds_bucket{endpoint=\"/x\",le=\"10\"} 2\n"
                       "lat_seconds_bucket{endpoint=\"/x\",le=\"+Inf\"} 3\n"
                       "lat_seconds_sum{endpoint=\"/x\"} 55.05\n"
                       "lat_seconds_count{endpoint=\"/x\"} 3\n";
    ck_assert_str_eq(prom_writer_text(w, NULL), want);
    prom_writer_free(w);
}
END_TEST

START_TEST(test_writer_grows)
{
    struct prom_writer *w = prom_writer_new();
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        ck_assert_int_eq(prom_family(w, name, "help", PROM_GAUGE), 0);
        prom_sample(w, name, NULL, NULL, i);
    }
    size_t len;
    const char *text = prom_writer_text(w, &len);
    ck_assert_uint_eq(strlen(text), len);
    ck_assert_ptr_nonnull(strstr(text, "\nm1999 1999\n"));
    prom_writer_free(w);
}
END_TEST

static Suite *prom_suite(void)
{
    Suite *s = suite_create("prom");
    TCase *tc = tcase_create("prom");
    tcase_add_test(tc, test_hist_buckets_are_upper_inclusive);
    tcase_add_test(tc, test_hist_bounds_capped);
    tcase_add_test(tc, test_names_from_snapshot_keys);
    tcase_add_test(tc, test_name_validity);
    tcase_add_test(tc, test_key_table);
    tcase_add_test(tc, test_writer_families_and_escaping);
    tcase_add_test(tc, test_writer_histogram);
    tcase_add_test(tc, test_writer_grows);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(prom_suite)
