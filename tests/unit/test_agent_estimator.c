/*
 * Tests of the resource estimators' arithmetic (agent/estimator.h):
 * smoothing, the usage estimate from fake samples (margin, rounding, never
 * negative, revocable-only tasks left out) and the fixed estimate's
 * parsing.
 */
#include "agent/estimator.h"
#include "check_main.h"
#include "common/resources.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_ewma)
{
    static const struct {
        double prev, sample, alpha, want;
    } cases[] = {
        {1.0, 2.0, 0.5, 2.0},   /* a rise replaces at once */
        {1.0, 1.0, 0.5, 1.0},   /* equal */
        {2.0, 0.0, 0.5, 1.0},   /* a drop moves half way */
        {2.0, 1.0, 0.25, 1.75}, /* a quarter of the way */
        {2.0, 0.0, 1.0, 0.0},   /* alpha 1: no smoothing */
        {0.0, 0.0, 0.5, 0.0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double got =
            agent_est_ewma(cases[i].prev, cases[i].sample, cases[i].alpha);
        ck_assert_msg(fabs(got - cases[i].want) < 1e-12, "case %zu: %g", i,
                      got);
    }
}
END_TEST

START_TEST(test_ewma_converges)
{
    /* A task that drops from 2 cores to 0.2: within 10% of the drop after
     * four rounds at the default alpha. */
    double v = 2.0;
    for (int i = 0; i < 4; i++)
        v = agent_est_ewma(v, 0.2, AGENT_EST_ALPHA);
    ck_assert(v > 0.2 && v - 0.2 <= 0.1 * 1.8 + 1e-9);
}
END_TEST

START_TEST(test_slack_table)
{
    static const struct {
        struct agent_est_task t[3];
        size_t n;
        double margin;
        int64_t cpus, mem;
    } cases[] = {
        /* Nothing running: nothing to report. */
        {{{0}}, 0, 0.1, 0, 0},
        /* One idle task holding 2 cpus, 1024 MB: 90% of it. */
        {{{2000, 1024000, 0.0, 0.0}}, 1, 0.1, 1800, 921000},
        /* Using some: 2*0.9 - 0.5 = 1.3; 1024*0.9 - 100.4 = 821.2 -> 821. */
        {{{2000, 1024000, 0.5, 100.4}}, 1, 0.1, 1300, 821000},
        /* Rounded down to 0.01 cpus: 1*0.9 - 0.123456 = 0.776544. */
        {{{1000, 0, 0.123456, 0}}, 1, 0.1, 770, 0},
        /* Never negative: using more than it holds. */
        {{{1000, 100000, 3.0, 500.0}}, 1, 0.1, 0, 0},
        /* Margin 0: all that is unused. */
        {{{1000, 100000, 0.25, 10.0}}, 1, 0.0, 750, 90000},
        /* Sums over tasks: one over-using task eats another's slack. */
        {{{1000, 100000, 0.0, 0.0}, {1000, 100000, 1.5, 100.0}},
         2,
         0.0,
         500,
         100000},
        /* Tasks holding no regular cpus (only revocable ones) do not count,
         * whatever they use; likewise for mem. */
        {{{1000, 0, 0.0, 50.0}, {0, 200000, 7.0, 10.0}}, 2, 0.0, 1000, 190000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t cpus = -1, mem = -1;
        agent_est_slack(cases[i].t, cases[i].n, cases[i].margin, &cpus, &mem);
        ck_assert_msg(cpus == cases[i].cpus, "case %zu: cpus %lld", i,
                      (long long)cpus);
        ck_assert_msg(mem == cases[i].mem, "case %zu: mem %lld", i,
                      (long long)mem);
    }
}
END_TEST

START_TEST(test_slack_random_properties)
{
    /* Whatever the samples: non-negative, multiples of the steps, never
     * above (1 - margin) of what is allocated, and never growing when a
     * task uses more. */
    unsigned seed = 20240917;
    srand(seed);
    for (int round = 0; round < 2000; round++) {
        struct agent_est_task t[5];
        size_t n = (size_t)(rand() % 6);
        int64_t alloc_c = 0, alloc_m = 0;
        for (size_t i = 0; i < n; i++) {
            t[i].cpus = (rand() % 4) * 250;
            t[i].mem = (rand() % 5) * 128000;
            t[i].cpus_used = (rand() % 3000) / 1000.0;
            t[i].mem_used = (rand() % 700000) / 1000.0;
            alloc_c += t[i].cpus;
            alloc_m += t[i].mem;
        }
        double margin = (rand() % 50) / 100.0;
        int64_t c, m;
        agent_est_slack(t, n, margin, &c, &m);
        ck_assert_msg(c >= 0 && m >= 0, "seed %u round %d", seed, round);
        ck_assert_msg(c % AGENT_EST_CPUS_STEP == 0 &&
                          m % AGENT_EST_MEM_STEP == 0,
                      "seed %u round %d", seed, round);
        ck_assert_msg((double)c <= alloc_c * (1 - margin) + 1e-6 &&
                          (double)m <= alloc_m * (1 - margin) + 1e-6,
                      "seed %u round %d", seed, round);
        if (n > 0) {
            t[0].cpus_used += 0.5;
            t[0].mem_used += 64;
            int64_t c2, m2;
            agent_est_slack(t, n, margin, &c2, &m2);
            ck_assert_msg(c2 <= c && m2 <= m, "seed %u round %d", seed, round);
        }
    }
}
END_TEST

START_TEST(test_list_is_revocable)
{
    res_list l = RES_LIST_INIT;
    agent_est_list(1500, 0, &l);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.v[0].name, "cpus");
    ck_assert(l.v[0].revocable);
    ck_assert(res_is_unreserved(&l.v[0]));
    ck_assert_int_eq(l.v[0].scalar, 1500);
    res_list_clear(&l);
    agent_est_list(10, 256000, &l);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_int_eq(res_list_scalar(&l, "mem"), 256000);
    for (uint32_t i = 0; i < l.n; i++)
        ck_assert(l.v[i].revocable);
    res_list_clear(&l);
    agent_est_list(0, 0, &l);
    ck_assert(res_list_is_empty(&l));
}
END_TEST

START_TEST(test_parse_fixed)
{
    res_list l = RES_LIST_INIT;
    char err[512] = "";
    ck_assert_msg(agent_est_parse_fixed("cpus:2.5;mem:1024;ports:[100-200]", &l,
                                        err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_uint_eq(l.n, 3);
    for (uint32_t i = 0; i < l.n; i++) {
        ck_assert(l.v[i].revocable);
        ck_assert(res_is_unreserved(&l.v[i]));
    }
    ck_assert_int_eq(res_list_scalar(&l, "cpus"), 2500);
    res_list_clear(&l);

    ck_assert_msg(agent_est_parse_fixed(
                      "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                      "\"value\":1}}]",
                      &l, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_uint_eq(l.n, 1);
    ck_assert(l.v[0].revocable);
    res_list_clear(&l);

    /* Empty text: no resources, fine. */
    ck_assert_int_eq(agent_est_parse_fixed("", &l, err, sizeof(err)), 0);
    ck_assert(res_list_is_empty(&l));
}
END_TEST

START_TEST(test_parse_fixed_rejects)
{
    static const struct {
        const char *in;
        const char *why;
    } cases[] = {
        {"cpus(eng):2", "cannot be reserved"},
        {"cpus:x", ""},
        {"cpus:-1", ""},
        {"[{\"name\":\"cpus\"", ""},
        {"[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
         "\"revocable\":{}}]",
         ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        res_list l = RES_LIST_INIT;
        char err[512] = "";
        ck_assert_msg(
            agent_est_parse_fixed(cases[i].in, &l, err, sizeof(err)) == -1,
            "accepted %s", cases[i].in);
        ck_assert(res_list_is_empty(&l));
        ck_assert(err[0] != '\0');
        ck_assert_msg(strstr(err, cases[i].why) != NULL, "%s: %s", cases[i].in,
                      err);
    }
}
END_TEST

static Suite *estimator_suite(void)
{
    Suite *s = suite_create("agent_estimator");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_ewma);
    tcase_add_test(tc, test_ewma_converges);
    tcase_add_test(tc, test_slack_table);
    tcase_add_test(tc, test_slack_random_properties);
    tcase_add_test(tc, test_list_is_revocable);
    tcase_add_test(tc, test_parse_fixed);
    tcase_add_test(tc, test_parse_fixed_rejects);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(estimator_suite)
