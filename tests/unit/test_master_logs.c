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
#include "master/operator_api.h"
#include "master_fixture.h"
#include "mesos/v1/master.pb-c.h"

#include <limits.h>
#include <unistd.h>

MFX_STANDARD_FIXTURE

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

/* ---- LIST_FILES, READ_FILE, /files ------------------------------------ */

#define LOG_TEXT "line one\nline two\n"

static char logdir[PATH_MAX]; /* a temporary --log_dir */
static char logfile[PATH_MAX + 32];

/* A master whose --log_dir holds offerd-master.log with LOG_TEXT. */
static void setup_log(void)
{
    char tmpl[] = "/tmp/offerd-mlogs-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    ck_assert_ptr_nonnull(realpath(tmpl, logdir));
    snprintf(logfile, sizeof(logfile), "%s/offerd-master.log", logdir);
    FILE *fp = fopen(logfile, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_ge(fputs(LOG_TEXT, fp), 0);
    fclose(fp);
    char flag[PATH_MAX + 16];
    snprintf(flag, sizeof(flag), "--log_dir=%s", logdir);
    const char *flags[] = {flag, NULL};
    mfx_start(&X, flags);
}

static void teardown_log(void)
{
    mfx_stop(&X);
    unlink(logfile);
    rmdir(logdir);
}

/* An operator call in protobuf (asking for protobuf): status, and the
 * Response unpacked when 200 (caller frees), else NULL. */
static Mesos__V1__Master__Response *op_pb(const Mesos__V1__Master__Call *call,
                                          int *status)
{
    uint8_t buf[1024];
    ck_assert_uint_lt(mesos__v1__master__call__get_packed_size(call),
                      sizeof(buf));
    size_t len = mesos__v1__master__call__pack(call, buf);
    struct http_fake *f = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_PROTOBUF);
    http_fake_add_header(f, "Accept", HTTP_CONTENT_PROTOBUF);
    http_fake_set_body(f, buf, len);
    http_fake_dispatch(f, master_operator_api, X.m);
    ck_assert(http_fake_replied(f));
    *status = http_fake_status(f);
    Mesos__V1__Master__Response *r = NULL;
    if (*status == 200) {
        ck_assert_str_eq(http_fake_content_type(f), HTTP_CONTENT_PROTOBUF);
        size_t blen;
        const uint8_t *body = http_fake_body(f, &blen);
        r = mesos__v1__master__response__unpack(NULL, blen, body);
        ck_assert_ptr_nonnull(r);
    }
    http_fake_free(f);
    return r;
}

/* READ_FILE in protobuf: the Response (caller frees) or NULL, status. */
static Mesos__V1__Master__Response *read_pb(const char *path, uint64_t offset,
                                            bool has_length, uint64_t length,
                                            int *status)
{
    Mesos__V1__Master__Call__ReadFile rf =
        MESOS__V1__MASTER__CALL__READ_FILE__INIT;
    rf.path = (char *)path;
    rf.offset = offset;
    rf.has_length = has_length;
    rf.length = length;
    Mesos__V1__Master__Call call = MESOS__V1__MASTER__CALL__INIT;
    call.has_type = true;
    call.type = MESOS__V1__MASTER__CALL__TYPE__READ_FILE;
    call.read_file = &rf;
    return op_pb(&call, status);
}

/* The log file is /master/log: READ_FILE reads it (protobuf and JSON,
 * where the bytes are base64), with offset and length; LIST_FILES of a
 * file is empty, as Mesos's browse; /files/read, /files/browse and
 * /files/debug show the same; /state has the log_dir. */
START_TEST(test_read_log)
{
    int status;
    Mesos__V1__Master__Response *r =
        read_pb("/master/log", 0, false, 0, &status);
    ck_assert_int_eq(status, 200);
    ck_assert_int_eq(r->type, MESOS__V1__MASTER__RESPONSE__TYPE__READ_FILE);
    ck_assert_uint_eq(r->read_file->size, strlen(LOG_TEXT));
    ck_assert_uint_eq(r->read_file->data.len, strlen(LOG_TEXT));
    ck_assert(memcmp(r->read_file->data.data, LOG_TEXT, strlen(LOG_TEXT)) == 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    r = read_pb("/master/log", 5, true, 3, &status);
    ck_assert_int_eq(status, 200);
    ck_assert_uint_eq(r->read_file->data.len, 3);
    ck_assert(memcmp(r->read_file->data.data, "one", 3) == 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    /* Past the end (even past INT64_MAX): the size, no data. */
    r = read_pb("/master/log", UINT64_MAX, true, UINT64_MAX, &status);
    ck_assert_int_eq(status, 200);
    ck_assert_uint_eq(r->read_file->size, strlen(LOG_TEXT));
    ck_assert_uint_eq(r->read_file->data.len, 0);
    protobuf_c_message_free_unpacked(&r->base, NULL);

    char body[16384];
    ck_assert_int_eq(op("{\"type\":\"READ_FILE\",\"read_file\":{\"path\":"
                        "\"/master/log\",\"offset\":0,\"length\":4}}",
                        body, sizeof(body)),
                     200);
    json_t *j = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *rf = json_object_get(j, "read_file");
    ck_assert_str_eq(json_string_value(json_object_get(rf, "data")),
                     "bGluZQ=="); /* "line" */
    ck_assert_int_eq(json_integer_value(json_object_get(rf, "size")),
                     (json_int_t)strlen(LOG_TEXT));
    json_decref(j);

    ck_assert_int_eq(op("{\"type\":\"LIST_FILES\",\"list_files\":{\"path\":"
                        "\"/master/log\"}}",
                        body, sizeof(body)),
                     200);
    j = json_loads(body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "type")),
                     "LIST_FILES");
    ck_assert_uint_eq(json_array_size(json_object_get(
                          json_object_get(j, "list_files"), "file_infos")),
                      0);
    json_decref(j);

    ck_assert_int_eq(get("/files/read?path=/master/log&offset=5&length=3", body,
                         sizeof(body)),
                     200);
    j = json_loads(body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "data")), "one");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")), 5);
    json_decref(j);
    ck_assert_int_eq(get("/files/read?path=/master/log", body, sizeof(body)),
                     200);
    j = json_loads(body, 0, NULL);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")),
                     (json_int_t)strlen(LOG_TEXT));
    json_decref(j);
    ck_assert_int_eq(get("/files/browse?path=/master/log", body, sizeof(body)),
                     200);
    ck_assert_str_eq(body, "[]");
    ck_assert_int_eq(get("/files/debug", body, sizeof(body)), 200);
    j = json_loads(body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "/master/log")),
                     logfile);
    json_decref(j);
    ck_assert_int_eq(get("/state", body, sizeof(body)), 200);
    j = json_loads(body, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "log_dir")), logdir);
    json_decref(j);
}
END_TEST

/* Paths that are not the log, and malformed calls: 4xx with a reason. */
START_TEST(test_files_refusals)
{
    const struct {
        const char *call;
        int status;
        const char *reason;
    } bad[] = {
        {"{\"type\":\"READ_FILE\",\"read_file\":{\"path\":\"/master/log/x\","
         "\"offset\":0}}",
         404, "not found"},
        {"{\"type\":\"READ_FILE\",\"read_file\":{\"path\":\"/etc/passwd\","
         "\"offset\":0}}",
         404, "not found"},
        {"{\"type\":\"LIST_FILES\",\"list_files\":{\"path\":\"/master\"}}", 404,
         "not found"},
        {"{\"type\":\"LIST_FILES\",\"list_files\":{\"path\":\"/\"}}", 404,
         "not found"},
        {"{\"type\":\"READ_FILE\"}", 400, "read_file"},
        {"{\"type\":\"LIST_FILES\"}", 400, "list_files"},
        {"{\"type\":\"READ_FILE\",\"read_file\":{\"path\":\"/master/log\"}}",
         400, "offset"},
        {"{\"type\":\"LIST_FILES\",\"list_files\":{}}", 400, "path"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char body[512];
        ck_assert_int_eq(op(bad[i].call, body, sizeof(body)), bad[i].status);
        ck_assert_msg(strstr(body, bad[i].reason) != NULL, "'%s' lacks '%s'",
                      body, bad[i].reason);
    }
    const struct {
        const char *target;
        int status;
    } http[] = {
        {"/files/read", 400},
        {"/files/read?path=/master/log&offset=-5", 400},
        {"/files/read?path=/master/log&length=x", 400},
        {"/files/read?path=/master/log/x", 404},
        {"/files/browse", 400},
        {"/files/browse?path=/nope", 404},
    };
    for (size_t i = 0; i < sizeof(http) / sizeof(http[0]); i++)
        ck_assert_msg(get(http[i].target, NULL, 0) == http[i].status, "%s",
                      http[i].target);
}
END_TEST

/* Without --log_dir nothing is attached: /master/log is not found. */
START_TEST(test_no_log_file)
{
    int status;
    Mesos__V1__Master__Response *r =
        read_pb("/master/log", 0, false, 0, &status);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(status, 404);
    char body[512];
    ck_assert_int_eq(op("{\"type\":\"LIST_FILES\",\"list_files\":{\"path\":"
                        "\"/master/log\"}}",
                        body, sizeof(body)),
                     404);
    ck_assert_int_eq(get("/files/read?path=/master/log&offset=0", NULL, 0),
                     404);
    ck_assert_int_eq(get("/files/browse?path=/master/log", NULL, 0), 404);
    ck_assert_int_eq(get("/files/debug", body, sizeof(body)), 200);
    ck_assert_str_eq(body, "{}");
    ck_assert_int_eq(get("/state", NULL, 0), 200);
}
END_TEST

static Suite *master_logs_suite(void)
{
    Suite *s = suite_create("master_logs");
    TCase *tc = tcase_create("logging_level");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_set_logging_level);
    tcase_add_test(tc, test_set_logging_level_refusals);
    tcase_add_test(tc, test_no_log_file);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup_log, teardown_log);
    tcase_add_test(tc, test_read_log);
    tcase_add_test(tc, test_files_refusals);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_logs_suite)
