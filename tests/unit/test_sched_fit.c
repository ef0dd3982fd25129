/*
 * Tests for sched/fit.h: sched_fit_take, how the offer pool and
 * offerd-execute take a task's resources out of an offer (offerd-execute
 * itself is tested end to end in tests/e2e/e2e_execute.c).
 */
#include "sched/fit.h"
#include "common/resources.h"
#include "common/resources_pb.h"

#include "check_main.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static void parse(const char *text, res_list *out)
{
    char err[256];
    res_list_init(out);
    int rc = text[0] == '[' ? res_list_from_json(text, out, err, sizeof(err))
                            : res_parse_text(text, NULL, out, err, sizeof(err));
    ck_assert_msg(rc == 0, "parse '%s': %s", text, err);
}

static void assert_render(const res_list *l, const char *want)
{
    char *got = res_list_render(l);
    ck_assert_msg(strcmp(got, want) == 0, "got '%s', want '%s'", got, want);
    free(got);
}

static const struct {
    const char *name;
    const char *offer; /* text form, or a JSON array */
    const char *want;
    const char *role;
    int rc;
    const char *taken;  /* rendered, when rc == 0 */
    const char *remain; /* rendered avail afterwards (unchanged on -1) */
} cases[] = {
    {"exact fit", "cpus:1;mem:32", "cpus:1;mem:32", "*", 0, "cpus:1;mem:32",
     ""},
    {"part of an offer", "cpus:2;mem:128;disk:10", "cpus:0.5;mem:32", "*", 0,
     "cpus:0.5;mem:32", "cpus:1.5;mem:96;disk:10"},
    {"too small", "cpus:0.1;mem:32", "cpus:0.2;mem:32", "*", -1, NULL,
     "cpus:0.1;mem:32"},
    {"missing resource", "cpus:1", "cpus:0.1;mem:32", "*", -1, NULL, "cpus:1"},
    {"reserved first, then unreserved", "cpus(eng):0.5;cpus:1", "cpus:1", "eng",
     0, "cpus(eng):0.5;cpus:0.5", "cpus:0.5"},
    {"an ancestor's reservation serves a subrole", "cpus(eng):1", "cpus:1",
     "eng/web", 0, "cpus(eng):1", ""},
    {"another role's reservation is not used", "cpus(ops):2", "cpus:1", "eng",
     -1, NULL, "cpus(ops):2"},
    {"role * uses only unreserved", "cpus(eng):2;cpus:0.5", "cpus:1", "*", -1,
     NULL, "cpus(eng):2;cpus:0.5"},
    {"ranges inside one entry", "ports:[31000-32000]", "ports:[31000-31000]",
     "*", 0, "ports:[31000-31000]", "ports:[31001-32000]"},
    {"ranges outside", "ports:[31000-32000]", "ports:[80-80]", "*", -1, NULL,
     "ports:[31000-32000]"},
    {"set items", "zones:{a,b,c}", "zones:{b}", "*", 0, "zones:{b}",
     "zones:{a,c}"},
    {"revocable is never taken",
     "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":4},"
     "\"revocable\":{}}]",
     "cpus:1", "*", -1, NULL, "cpus{REV}:4"},
};

START_TEST(test_fit_table)
{
    res_list avail, want, taken = RES_LIST_INIT;
    parse(cases[_i].offer, &avail);
    parse(cases[_i].want, &want);
    int rc = sched_fit_take(&avail, &want, cases[_i].role, &taken);
    ck_assert_msg(rc == cases[_i].rc, "%s: rc %d", cases[_i].name, rc);
    if (rc == 0)
        assert_render(&taken, cases[_i].taken);
    else
        ck_assert(res_list_is_empty(&taken));
    assert_render(&avail, cases[_i].remain);
    res_list_clear(&avail);
    res_list_clear(&want);
    res_list_clear(&taken);
}
END_TEST

START_TEST(test_fit_repeatedly_until_full)
{
    res_list avail, want;
    parse("cpus:1;mem:128", &avail);
    parse("cpus:0.3;mem:32", &want);
    int n = 0;
    for (;;) {
        res_list taken = RES_LIST_INIT;
        int rc = sched_fit_take(&avail, &want, "*", &taken);
        res_list_clear(&taken);
        if (rc != 0)
            break;
        n++;
        ck_assert_int_le(n, 10);
    }
    ck_assert_int_eq(n, 3);
    assert_render(&avail, "cpus:0.1;mem:32");
    res_list_clear(&avail);
    res_list_clear(&want);
}
END_TEST

START_TEST(test_fit_keeps_allocation_role)
{
    /* Offered resources carry the allocation role the master checks. */
    res_list avail, want, taken = RES_LIST_INIT;
    parse("cpus:1;mem:64", &avail);
    res_list_allocate(&avail, "eng");
    parse("cpus:0.5;mem:64", &want);
    ck_assert_int_eq(sched_fit_take(&avail, &want, "eng", &taken), 0);
    ck_assert_int_eq(taken.n, 2);
    for (uint32_t i = 0; i < taken.n; i++)
        ck_assert_str_eq(taken.v[i].alloc_role, "eng");
    size_t n;
    Mesos__V1__Resource **pb = res_list_to_pb(&taken, false, &n);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(pb[0]->allocation_info->role, "eng");
    res_pb_array_free(pb, n);
    res_list_clear(&avail);
    res_list_clear(&want);
    res_list_clear(&taken);
}
END_TEST

static Suite *sched_fit_suite(void)
{
    Suite *s = suite_create("sched_fit");
    TCase *tc = tcase_create("fit");
    tcase_add_loop_test(tc, test_fit_table, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_fit_repeatedly_until_full);
    tcase_add_test(tc, test_fit_keeps_allocation_role);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(sched_fit_suite)
