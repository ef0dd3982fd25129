/*
 * The master's logs through the operator API and its endpoints, driven
 * through fake requests (master_fixture.h): SET_LOGGING_LEVEL and
 * GET_LOGGING_LEVEL share /logging/toggle's verbosity and revert timer;
 * LIST_FILES, READ_FILE and /files/{browse,read,debug} serve the log file
 * as the virtual path /master/log when --log_dir is set.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/http_fake.h"
#include "common/log.h"
#include "master_fixture.h"

static struct mfx X;

static void setup(void)
{
    mfx_start(&X, NULL);
}

static void teardown(void)
{
    mfx_stop(&X);
}

/* An operator call's status and body (body copied into out, n bytes). */
static int op(const char *call_json, char *out, size_t n)
{
    struct http_fake *f = mfx_operator(&X, call_json);
    int status = http_fake_status(f);
    if (out != NULL)
        snprintf(out, n, "%s", mfx_body(f));
    http_fake_free(f);
    return status;
}

/* GET path through the master's routes: status, body in out. */
static int get(const char *path, char *out, size_t n)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, path);
    http_fake_dispatch_server(f, X.m->http);
    int status = http_fake_status(f);
    if (out != NULL)
        snprintf(out, n, "%s", mfx_body(f));
    http_fake_free(f);
    return status;
}

/* GET_LOGGING_LEVEL's level. */
static long logging_level(void)
{
    char body[512];
    ck_assert_int_eq(op("{\"type\":\"GET_LOGGING_LEVEL\"}", body, sizeof(body)),
                     200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *lvl =
        json_object_get(json_object_get(j, "get_logging_level"), "level");
    long v = lvl != NULL ? (long)json_integer_value(lvl) : 0;
    json_decref(j);
    return v;
}

static bool reverted(void *arg)
{
    (void)arg;
    return log_get_level() == X.flags.log_level;
}

/* ---- SET_LOGGING_LEVEL / GET_LOGGING_LEVEL ------------------------------- */

START_TEST(test_set_logging_level)
{
    ck_assert_int_eq(logging_level(), 0);
    ck_assert_int_eq(
        op("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":3,"
           "\"duration\":{\"nanoseconds\":600000000000}}}",
           NULL, 0),
        200);
    ck_assert_int_eq(log_get_level(), LOG_LEVEL_DEBUG);
    ck_assert_int_eq(logging_level(), 3);
    /* One verbosity: /logging/toggle shows it too. */
    char body[64];
    ck_assert_int_eq(get("/logging/toggle", body, sizeof(body)), 200);
    ck_assert_str_eq(body, "3\n");
    /* A later one replaces it; its timer reverts the level. */
    ck_assert_int_eq(
        op("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":1,"
           "\"duration\":{\"nanoseconds\":20000000}}}",
           NULL, 0),
        200);
    ck_assert_int_eq(logging_level(), 1);
    ck_assert(mfx_run_until(&X, reverted, NULL));
    ck_assert_int_eq(logging_level(), 0);
    /* Level 0 puts the --logging_level back at once. */
    ck_assert_int_eq(get("/logging/toggle?level=2&duration=10mins", NULL, 0),
                     200);
    ck_assert_int_eq(
        op("{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":0,"
           "\"duration\":{\"nanoseconds\":1}}}",
           NULL, 0),
        200);
    ck_assert_int_eq(log_get_level(), X.flags.log_level);
    ck_assert_int_eq(logging_level(), 0);
}
END_TEST

START_TEST(test_set_logging_level_refusals)
{
    const struct {
        const char *call, *reason;
    } bad[] = {
        {"{\"type\":\"SET_LOGGING_LEVEL\"}", "set_logging_level"},
        {"{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":1}}",
         "duration: required"},
        {"{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":1,"
         "\"duration\":{\"nanoseconds\":-5}}}",
         "must not be negative"},
        {"{\"type\":\"SET_LOGGING_LEVEL\",\"set_logging_level\":{\"level\":-1,"
         "\"duration\":{\"nanoseconds\":5}}}",
         "level"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[512];
        ck_assert_int_eq(op(bad[i].call, body, sizeof(body)), 400);
        ck_assert_msg(strstr(body, bad[i].reason) != NULL, "'%s' lacks '%s'",
                      body, bad[i].reason);
    }
    ck_assert_int_eq(log_get_level(), X.flags.log_level);
    ck_assert_int_eq(logging_level(), 0);
}
END_TEST

static Suite *master_logs_suite(void)
{
    Suite *s = suite_create("master_logs");
    TCase *tc = tcase_create("logging_level");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_set_logging_level);
    tcase_add_test(tc, test_set_logging_level_refusals);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_logs_suite)
