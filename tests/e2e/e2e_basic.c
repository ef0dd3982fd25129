/*
 * End-to-end basics of the offerd master: start on a free port, the system
 * endpoints, routing errors, the body limit, flags, and a clean exit on
 * SIGTERM.
 */
#include "harness.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct e2e_proc master;

static void setup(void)
{
    ck_assert_msg(e2e_start_master(&master, NULL) == 0, "offerd did not start");
}

static void teardown(void)
{
    e2e_proc_cleanup(&master);
}

static json_t *get_json(const char *path)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", path, NULL, NULL, 0, 5000, &r), 0);
    ck_assert_msg(r.status == 200, "%s: %d", path, r.status);
    const char *ct = e2e_response_header(&r, "Content-Type");
    ck_assert_ptr_nonnull(ct);
    ck_assert_str_eq(ct, "application/json");
    json_error_t e;
    json_t *j = json_loadb(r.body, r.body_len, 0, &e);
    ck_assert_msg(j != NULL, "%s: bad JSON: %s", path, e.text);
    e2e_response_free(&r);
    return j;
}

START_TEST(test_health)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/health", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, 0);
    e2e_response_free(&r);
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/master/health", NULL, NULL, 0, 5000, &r),
        0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_version)
{
    json_t *j = get_json("/version");
    ck_assert(json_is_string(json_object_get(j, "version")));
    ck_assert(json_is_string(json_object_get(j, "build_date")));
    ck_assert(json_is_number(json_object_get(j, "build_time")));
    json_decref(j);
}
END_TEST

START_TEST(test_flags)
{
    json_t *j = get_json("/flags");
    json_t *flags = json_object_get(j, "flags");
    ck_assert(json_is_object(flags));
    char want[16];
    snprintf(want, sizeof(want), "%u", (unsigned)master.port);
    ck_assert_str_eq(json_string_value(json_object_get(flags, "port")), want);
    ck_assert_str_eq(json_string_value(json_object_get(flags, "ip")),
                     "127.0.0.1");
    ck_assert_str_eq(json_string_value(json_object_get(flags, "logging_level")),
                     "INFO");
    /* Every value is a string, as Mesos's /flags. */
    const char *key;
    json_t *value;
    json_object_foreach(flags, key, value)
    {
        ck_assert_msg(json_is_string(value), "flag %s is not a string", key);
    }
    json_decref(j);
    j = get_json("/master/flags");
    ck_assert(json_is_object(json_object_get(j, "flags")));
    json_decref(j);
}
END_TEST

START_TEST(test_work_dir_created)
{
    struct stat st;
    ck_assert_int_eq(stat(master.work_dir, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
}
END_TEST

START_TEST(test_unknown_path_404)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/no/such", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(e2e_response_header(&r, "Content-Type"),
                     "text/plain; charset=utf-8");
    ck_assert_ptr_eq(strchr(r.body, '\n'), r.body + r.body_len - 1);
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_wrong_method_405)
{
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(master.port, "POST", "/health", NULL, "x", 1, 5000, &r), 0);
    ck_assert_int_eq(r.status, 405);
    const char *allow = e2e_response_header(&r, "Allow");
    ck_assert_ptr_nonnull(allow);
    ck_assert_ptr_nonnull(strstr(allow, "GET"));
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_body_over_limit_413)
{
    size_t len = (4u << 20) + 1;
    char *body = malloc(len);
    ck_assert_ptr_nonnull(body);
    memset(body, 'x', len);
    struct e2e_response r;
    const char *h[] = {"Content-Type: application/json", NULL};
    ck_assert_int_eq(
        e2e_http(master.port, "POST", "/flags", h, body, len, 10000, &r), 0);
    free(body);
    ck_assert_int_eq(r.status, 413);
    e2e_response_free(&r);
    /* Still serving. */
    ck_assert_int_eq(
        e2e_http(master.port, "GET", "/health", NULL, NULL, 0, 5000, &r), 0);
    ck_assert_int_eq(r.status, 200);
    e2e_response_free(&r);
}
END_TEST

START_TEST(test_sigterm_exits_zero)
{
    ck_assert_int_eq(e2e_proc_stop(&master, SIGTERM, 10000), 0);
}
END_TEST

START_TEST(test_sigint_exits_zero)
{
    ck_assert_int_eq(e2e_proc_stop(&master, SIGINT, 10000), 0);
}
END_TEST

START_TEST(test_help_exits_zero)
{
    char out[16384];
    const char *args[] = {"--help", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_BIN, args, out, sizeof(out), 10000), 0);
    ck_assert_ptr_nonnull(strstr(out, "--port"));
    ck_assert_ptr_nonnull(strstr(out, "--work_dir"));
}
END_TEST

START_TEST(test_bad_flag_exits_one)
{
    char out[4096];
    const char *args[] = {"--bogus", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_BIN, args, out, sizeof(out), 10000), 1);
    ck_assert_ptr_nonnull(strstr(out, "--bogus"));
    const char *args2[] = {"--port", "5050", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_BIN, args2, out, sizeof(out), 10000), 1);
    const char *args3[] = {"--logging_level=LOUD", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_BIN, args3, out, sizeof(out), 10000), 1);
}
END_TEST

static Suite *e2e_basic_suite(void)
{
    Suite *s = suite_create("e2e_basic");
    TCase *tc = tcase_create("running");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_health);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_flags);
    tcase_add_test(tc, test_work_dir_created);
    tcase_add_test(tc, test_unknown_path_404);
    tcase_add_test(tc, test_wrong_method_405);
    tcase_add_test(tc, test_body_over_limit_413);
    tcase_add_test(tc, test_sigterm_exits_zero);
    tcase_add_test(tc, test_sigint_exits_zero);
    suite_add_tcase(s, tc);
    tc = tcase_create("command_line");
    tcase_add_test(tc, test_help_exits_zero);
    tcase_add_test(tc, test_bad_flag_exits_one);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(e2e_basic_suite)
