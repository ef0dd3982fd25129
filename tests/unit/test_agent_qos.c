/*
 * Tests of the QoS controller's decision (agent/qos.h): newest first, only
 * as many as needed, tasks without revocable resources untouched, tasks
 * being killed skipped, the load rule, and /proc/loadavg parsing.
 */
#include "agent/qos.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/resources.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXT 16

/* A scenario: tasks with their revocable text ("" for none), start times
 * and dying flags; an estimate text or NULL. */
struct scen {
    res_list rev[MAXT];
    struct agent_qos_task t[MAXT];
    size_t n;
    res_list est;
    bool has_est;
};

static res_list revocable(const char *text)
{
    res_list l = RES_LIST_INIT, out = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_parse_text(text, NULL, &l, err, sizeof(err)) == 0, "%s",
                  err);
    for (uint32_t i = 0; i < l.n; i++) {
        struct resource r;
        res_copy(&r, &l.v[i]);
        r.revocable = true;
        res_list_add(&out, &r);
        res_clear(&r);
    }
    res_list_clear(&l);
    return out;
}

static void add_task(struct scen *s, int64_t start, const char *rev, bool dying)
{
    ck_assert_uint_lt(s->n, MAXT);
    size_t i = s->n++;
    s->rev[i] = revocable(rev);
    s->t[i].start_ns = start;
    s->t[i].seq = i;
    s->t[i].revocable = &s->rev[i];
    s->t[i].dying = dying;
}

static void set_estimate(struct scen *s, const char *text)
{
    s->est = revocable(text);
    s->has_est = true;
}

static size_t decide(struct scen *s, bool load_rule, double load,
                     double threshold, size_t *out, bool *by_load)
{
    struct agent_qos_input in = {
        .tasks = s->t,
        .ntasks = s->n,
        .estimate = s->has_est ? &s->est : NULL,
        .load_rule = load_rule,
        .load = load,
        .threshold = threshold,
    };
    return agent_qos_decide(&in, out, by_load);
}

static void scen_clear(struct scen *s)
{
    for (size_t i = 0; i < s->n; i++)
        res_list_clear(&s->rev[i]);
    res_list_clear(&s->est);
    memset(s, 0, sizeof(*s));
}

START_TEST(test_fits_nothing_evicted)
{
    struct scen s = {0};
    add_task(&s, 1, "cpus:1", false);
    add_task(&s, 2, "cpus:0.5;mem:128", false);
    set_estimate(&s, "cpus:1.5;mem:128");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_newest_first_only_as_many_as_needed)
{
    struct scen s = {0};
    add_task(&s, 100, "cpus:1", false);   /* 0: oldest, biggest */
    add_task(&s, 300, "cpus:0.5", false); /* 1: newest */
    add_task(&s, 200, "cpus:0.5", false); /* 2 */
    /* Held 2, estimate 1.2: the newest (1) then the next (2) go; the
     * oldest alone would have fitted, but the newest go first. */
    set_estimate(&s, "cpus:1.2");
    size_t out[MAXT];
    bool by_load = true;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 2);
    ck_assert_uint_eq(out[0], 1);
    ck_assert_uint_eq(out[1], 2);
    ck_assert(!by_load);
    scen_clear(&s);

    /* Held 2, estimate 1.5: only the newest. */
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 300, "cpus:0.5", false);
    add_task(&s, 200, "cpus:0.5", false);
    set_estimate(&s, "cpus:1.5");
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 1);
    scen_clear(&s);
}
END_TEST

START_TEST(test_empty_estimate_evicts_all_revocable)
{
    struct scen s = {0};
    add_task(&s, 1, "cpus:1", false);
    add_task(&s, 2, "", false); /* regular */
    add_task(&s, 3, "mem:64", false);
    set_estimate(&s, "");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 2);
    ck_assert_uint_eq(out[0], 2);
    ck_assert_uint_eq(out[1], 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_regular_tasks_never_chosen)
{
    /* Only regular tasks, an empty estimate and a huge load: nothing. */
    struct scen s = {0};
    add_task(&s, 1, "", false);
    add_task(&s, 2, "", false);
    set_estimate(&s, "");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, true, 100, 1, out, &by_load), 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_dying_tasks_skipped_and_count_as_returned)
{
    struct scen s = {0};
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 300, "cpus:1", true); /* newest, already being killed */
    add_task(&s, 200, "cpus:1", false);
    /* Held without the dying one: 2; estimate 1: one more goes, the
     * newest of the others. */
    set_estimate(&s, "cpus:1");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 2);
    scen_clear(&s);

    /* With the dying one gone, 2 fit in 2: nothing more. */
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 300, "cpus:1", true);
    add_task(&s, 200, "cpus:1", false);
    set_estimate(&s, "cpus:2");
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_resource_missing_from_estimate)
{
    /* A task holding revocable disk does not fit an estimate of cpus and
     * mem only. */
    struct scen s = {0};
    add_task(&s, 1, "cpus:0.1", false);
    add_task(&s, 2, "disk:10", false);
    set_estimate(&s, "cpus:4;mem:4096");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 1);
    scen_clear(&s);
}
END_TEST

START_TEST(test_roles_do_not_matter)
{
    /* Tasks' resources carry the allocation role; the estimate has none. */
    struct scen s = {0};
    add_task(&s, 1, "cpus:1", false);
    res_list_allocate(&s.rev[0], "eng");
    set_estimate(&s, "cpus:1");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_no_estimate_no_estimate_rule)
{
    struct scen s = {0};
    add_task(&s, 1, "cpus:1", false);
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 0);
    ck_assert_uint_eq(decide(&s, true, 0.5, 1, out, &by_load), 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_load_rule)
{
    struct scen s = {0};
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 200, "", false);
    add_task(&s, 150, "cpus:1", false);
    size_t out[MAXT];
    bool by_load = false;
    /* Above the threshold: the newest revocable task, one only. */
    ck_assert_uint_eq(decide(&s, true, 4.5, 4, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 2);
    ck_assert(by_load);
    /* At or below: none. */
    ck_assert_uint_eq(decide(&s, true, 4.0, 4, out, &by_load), 0);
    ck_assert_uint_eq(decide(&s, true, 0.1, 4, out, &by_load), 0);
    /* Rule off: none. */
    ck_assert_uint_eq(decide(&s, false, 9, 4, out, &by_load), 0);
    /* While a revocable task is being killed, wait for it. */
    s.t[2].dying = true;
    ck_assert_uint_eq(decide(&s, true, 9, 4, out, &by_load), 0);
    scen_clear(&s);

    /* A regular task being killed does not hold the load rule back. */
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 200, "", true);
    ck_assert_uint_eq(decide(&s, true, 9, 4, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 0);
    scen_clear(&s);
}
END_TEST

START_TEST(test_estimate_rule_before_load_rule)
{
    struct scen s = {0};
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 200, "cpus:1", false);
    add_task(&s, 300, "cpus:1", false);
    set_estimate(&s, "cpus:1");
    size_t out[MAXT];
    bool by_load = true;
    /* The estimate needs two gone; the load adds none on top. */
    ck_assert_uint_eq(decide(&s, true, 50, 1, out, &by_load), 2);
    ck_assert(!by_load);
    ck_assert_uint_eq(out[0], 2);
    ck_assert_uint_eq(out[1], 1);
    scen_clear(&s);
}
END_TEST

START_TEST(test_tie_broken_by_seq)
{
    struct scen s = {0};
    add_task(&s, 100, "cpus:1", false);
    add_task(&s, 100, "cpus:1", false);
    set_estimate(&s, "cpus:1");
    size_t out[MAXT];
    bool by_load;
    ck_assert_uint_eq(decide(&s, false, 0, 1, out, &by_load), 1);
    ck_assert_uint_eq(out[0], 1); /* larger seq: newer */
    scen_clear(&s);
}
END_TEST

START_TEST(test_random_properties)
{
    /* Whatever the tasks and the estimate: only live revocable tasks are
     * chosen, newest first, what is left fits, and keeping the last one
     * chosen would not have fitted (no more than needed). */
    unsigned seed = 424242;
    srand(seed);
    for (int round = 0; round < 500; round++) {
        struct scen s = {0};
        size_t n = (size_t)(rand() % 8);
        for (size_t i = 0; i < n; i++) {
            char text[64] = "";
            int kind = rand() % 4;
            if (kind == 1)
                snprintf(text, sizeof(text), "cpus:%d", 1 + rand() % 4);
            else if (kind == 2)
                snprintf(text, sizeof(text), "mem:%d", 32 * (1 + rand() % 8));
            else if (kind == 3)
                snprintf(text, sizeof(text), "cpus:%d;mem:%d", 1 + rand() % 4,
                         32 * (1 + rand() % 8));
            add_task(&s, rand() % 50, text, rand() % 5 == 0);
        }
        char est[64];
        snprintf(est, sizeof(est), "cpus:%d;mem:%d", rand() % 10,
                 32 * (rand() % 20));
        set_estimate(&s, est);
        size_t out[MAXT];
        bool by_load;
        size_t k = decide(&s, false, 0, 1, out, &by_load);
        bool chosen[MAXT] = {false};
        for (size_t i = 0; i < k; i++) {
            const struct agent_qos_task *t = &s.t[out[i]];
            ck_assert_msg(!t->dying && !res_list_is_empty(t->revocable),
                          "seed %u round %d", seed, round);
            chosen[out[i]] = true;
            if (i > 0) {
                const struct agent_qos_task *p = &s.t[out[i - 1]];
                ck_assert_msg(
                    p->start_ns > t->start_ns ||
                        (p->start_ns == t->start_ns && p->seq > t->seq),
                    "seed %u round %d: not newest first", seed, round);
            }
        }
        /* Every unchosen candidate is older than every chosen one. */
        for (size_t i = 0; i < s.n; i++) {
            if (chosen[i] || s.t[i].dying || res_list_is_empty(&s.rev[i]))
                continue;
            for (size_t j = 0; j < k; j++) {
                const struct agent_qos_task *c = &s.t[out[j]];
                ck_assert_msg(
                    c->start_ns > s.t[i].start_ns ||
                        (c->start_ns == s.t[i].start_ns && c->seq > s.t[i].seq),
                    "seed %u round %d: an older one went first", seed, round);
            }
        }
        res_list left = RES_LIST_INIT, with_last = RES_LIST_INIT;
        for (size_t i = 0; i < s.n; i++)
            if (!chosen[i] && !s.t[i].dying)
                res_list_add_all(&left, &s.rev[i]);
        ck_assert_msg(res_list_contains(&s.est, &left),
                      "seed %u round %d: what is left does not fit", seed,
                      round);
        if (k > 0) {
            res_list_copy(&with_last, &left);
            res_list_add_all(&with_last, &s.rev[out[k - 1]]);
            ck_assert_msg(!res_list_contains(&s.est, &with_last),
                          "seed %u round %d: one too many", seed, round);
        }
        res_list_clear(&left);
        res_list_clear(&with_last);
        scen_clear(&s);
    }
}
END_TEST

START_TEST(test_parse_loadavg)
{
    static const struct {
        const char *in;
        int rc;
        double load;
    } cases[] = {
        {"0.52 0.58 0.59 1/467 12345\n", 0, 0.52},
        {"12.00 3.00 1.00 5/100 7\n", 0, 12.0},
        {"0.00 0.00 0.00 1/1 1", 0, 0.0},
        {"", -1, 0},
        {"x 1 2", -1, 0},
        {"-1.0 0 0", -1, 0},
        {"1.5", -1, 0},
        {"1.5\n", -1, 0},
        {"nan 0 0", -1, 0},
        {"inf 0 0", -1, 0},
        {" 1.0 0 0", -1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double v = -7;
        int rc = agent_qos_parse_loadavg(cases[i].in, strlen(cases[i].in), &v);
        ck_assert_msg(rc == cases[i].rc, "'%s': %d", cases[i].in, rc);
        if (rc == 0)
            ck_assert(v == cases[i].load);
        else
            ck_assert(v == -7);
    }
}
END_TEST

START_TEST(test_read_loadavg)
{
    char root[64];
    snprintf(root, sizeof(root), "/tmp/offerd-qos-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    double v = -1;
    ck_assert_int_eq(agent_qos_read_loadavg(root, &v), -1);
    char path[128];
    snprintf(path, sizeof(path), "%s/loadavg", root);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("3.25 2.00 1.00 2/300 999\n", f);
    fclose(f);
    ck_assert_int_eq(agent_qos_read_loadavg(root, &v), 0);
    ck_assert(v == 3.25);
    fs_remove_tree(root);
    ck_assert_int_eq(agent_qos_read_loadavg("/proc", &v), 0);
    ck_assert(v >= 0);
}
END_TEST

static Suite *qos_suite(void)
{
    Suite *s = suite_create("agent_qos");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_fits_nothing_evicted);
    tcase_add_test(tc, test_newest_first_only_as_many_as_needed);
    tcase_add_test(tc, test_empty_estimate_evicts_all_revocable);
    tcase_add_test(tc, test_regular_tasks_never_chosen);
    tcase_add_test(tc, test_dying_tasks_skipped_and_count_as_returned);
    tcase_add_test(tc, test_resource_missing_from_estimate);
    tcase_add_test(tc, test_roles_do_not_matter);
    tcase_add_test(tc, test_no_estimate_no_estimate_rule);
    tcase_add_test(tc, test_load_rule);
    tcase_add_test(tc, test_estimate_rule_before_load_rule);
    tcase_add_test(tc, test_tie_broken_by_seq);
    tcase_add_test(tc, test_random_properties);
    tcase_add_test(tc, test_parse_loadavg);
    tcase_add_test(tc, test_read_loadavg);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(qos_suite)
