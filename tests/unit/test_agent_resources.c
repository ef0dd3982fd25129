/*
 * Tests of the agent's resource detection rule (agent/resources_detect.h)
 * and of how detected resources complete --resources.
 */
#include "agent/resources_detect.h"
#include "check_main.h"
#include "common/resources.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define MB (UINT64_C(1) << 20)
#define GB (UINT64_C(1) << 30)

START_TEST(test_mem_rule)
{
    static const struct {
        uint64_t total, want_mb;
    } cases[] = {
        {0, 0},
        {512 * MB, 256}, /* below 2 GB: half */
        {2 * GB - MB, (2 * GB - MB) / 2 / MB},
        {2 * GB, 1024}, /* from 2 GB: minus 1 GB */
        {16 * GB, 15 * 1024},
        {16 * GB + 3 * MB, 15 * 1024 + 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_detect_mem_mb(cases[i].total) == cases[i].want_mb,
                      "case %zu: %llu", i,
                      (unsigned long long)agent_detect_mem_mb(cases[i].total));
}
END_TEST

START_TEST(test_disk_rule)
{
    static const struct {
        uint64_t total, want_mb;
    } cases[] = {
        {0, 0},
        {4 * GB, 2048},        /* below 10 GB: half */
        {10 * GB, 5 * 1024},   /* 10 GB: minus max(5 GB, 1 GB) */
        {40 * GB, 35 * 1024},  /* 10% is 4 GB < 5 GB */
        {50 * GB, 45 * 1024},  /* 10% is exactly 5 GB */
        {100 * GB, 90 * 1024}, /* minus 10% */
        {1000 * GB, 900 * 1024},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(agent_detect_disk_mb(cases[i].total) == cases[i].want_mb,
                      "case %zu: %llu", i,
                      (unsigned long long)agent_detect_disk_mb(cases[i].total));
}
END_TEST

static const struct agent_machine machine = {
    .cpus = 8,
    .mem_bytes = 16 * GB,
    .disk_bytes = 100 * GB,
};

static char *build(const char *text, const char *role)
{
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(
        agent_resources_build(text, role, &machine, &l, err, sizeof(err)) == 0,
        "%s", err);
    char *s = res_list_render(&l);
    res_list_clear(&l);
    return s;
}

START_TEST(test_everything_detected)
{
    char *s = build(NULL, "*");
    ck_assert_str_eq(s, "cpus:8;mem:15360;disk:92160;ports:[31000-32000]");
    free(s);
    s = build("", "*");
    ck_assert_str_eq(s, "cpus:8;mem:15360;disk:92160;ports:[31000-32000]");
    free(s);
}
END_TEST

START_TEST(test_given_resources_win)
{
    char *s = build("cpus:2;mem:1024", "*");
    ck_assert_str_eq(s, "cpus:2;mem:1024;disk:92160;ports:[31000-32000]");
    free(s);
    s = build("ports:[1000-2000];gpus:1;disk(ops):10", "*");
    /* disk is named (reserved to ops), so it is not detected. */
    ck_assert_ptr_nonnull(strstr(s, "ports:[1000-2000]"));
    ck_assert_ptr_nonnull(strstr(s, "disk(ops):10"));
    ck_assert_ptr_null(strstr(s, "disk:92160"));
    ck_assert_ptr_nonnull(strstr(s, "gpus:1"));
    ck_assert_ptr_nonnull(strstr(s, "cpus:8"));
    free(s);
}
END_TEST

START_TEST(test_json_resources)
{
    char *s = build("[{\"name\":\"cpus\",\"type\":\"SCALAR\","
                    "\"scalar\":{\"value\":3}}]",
                    "*");
    ck_assert_ptr_nonnull(strstr(s, "cpus:3"));
    ck_assert_ptr_nonnull(strstr(s, "mem:15360"));
    free(s);
}
END_TEST

START_TEST(test_default_role_reserves_detected)
{
    char *s = build("cpus:1", "eng");
    ck_assert_str_eq(
        s,
        "cpus(eng):1;mem(eng):15360;disk(eng):92160;ports(eng):[31000-32000]");
    free(s);
}
END_TEST

START_TEST(test_bad_text_fails_unchanged)
{
    res_list l = RES_LIST_INIT;
    char err[256] = "";
    ck_assert_int_eq(
        agent_resources_build("cpus:abc", "*", &machine, &l, err, sizeof(err)),
        -1);
    ck_assert(err[0] != '\0');
    ck_assert_uint_eq(l.n, 0);
}
END_TEST

START_TEST(test_small_machine)
{
    struct agent_machine m = {1, 1 * GB, 2 * GB};
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_int_eq(agent_resources_build(NULL, "*", &m, &l, err, sizeof(err)),
                     0);
    char *s = res_list_render(&l);
    ck_assert_str_eq(s, "cpus:1;mem:512;disk:1024;ports:[31000-32000]");
    free(s);
    res_list_clear(&l);
}
END_TEST

START_TEST(test_probe_reads_the_machine)
{
    struct agent_machine m;
    char err[256];
    ck_assert_int_eq(agent_machine_probe("/", &m, err, sizeof(err)), 0);
    ck_assert_uint_ge(m.cpus, 1);
    ck_assert(m.mem_bytes > 0);
    ck_assert(m.disk_bytes > 0);
    ck_assert_int_eq(
        agent_machine_probe("/nonexistent/dir", &m, err, sizeof(err)), -1);
}
END_TEST

static Suite *agent_resources_suite(void)
{
    Suite *s = suite_create("agent_resources");
    TCase *tc = tcase_create("detect");
    tcase_add_test(tc, test_mem_rule);
    tcase_add_test(tc, test_disk_rule);
    tcase_add_test(tc, test_everything_detected);
    tcase_add_test(tc, test_given_resources_win);
    tcase_add_test(tc, test_json_resources);
    tcase_add_test(tc, test_default_role_reserves_detected);
    tcase_add_test(tc, test_bad_text_fails_unchanged);
    tcase_add_test(tc, test_small_machine);
    tcase_add_test(tc, test_probe_reads_the_machine);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_resources_suite)
