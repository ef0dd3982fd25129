/*
 * master/ha's standby server, without sockets or ZooKeeper: what a master
 * that is not leading answers (307 to the leader's same path, 503 with no
 * leader, its own /state, /health, /metrics/snapshot), and the --zk flags.
 */
#include "common/http.h"
#include "common/http_fake.h"
#include "common/master_detect.h"
#include "master/flags_master.h"
#include "master/ha.h"
#include "master_fixture.h"

#include "check_main.h"

#include <check.h>
#include <jansson.h>
#include <string.h>

static struct mfx X;
static struct ha_standby *S;

static void setup(void)
{
    const char *flags[] = {"--zk=zk://127.0.0.1:2181/mesos", NULL};
    mfx_start(&X, flags);
    S = ha_standby_new(X.base, &X.flags, "standby-id", "127.0.0.1", 5050);
}

static void teardown(void)
{
    ha_standby_free(S);
    S = NULL;
    mfx_stop(&X);
}

static struct http_fake *req(enum http_method method, const char *target,
                             const char *body)
{
    struct http_fake *f = http_fake_new(X.base, method, target);
    if (body != NULL) {
        http_fake_add_header(f, "Content-Type", "application/json");
        http_fake_set_body(f, body, strlen(body));
    }
    http_fake_dispatch_server(f, ha_standby_server(S));
    ck_assert(http_fake_replied(f));
    return f;
}

static void set_leader(void)
{
    struct master_leader l;
    memset(&l, 0, sizeof(l));
    l.known = true;
    snprintf(l.id, sizeof(l.id), "leader-id");
    snprintf(l.hostname, sizeof(l.hostname), "leader.example.com");
    snprintf(l.ip, sizeof(l.ip), "10.0.0.9");
    l.port = 5051;
    ha_standby_set_leader(S, &l);
}

static json_t *body_json(const struct http_fake *f)
{
    size_t len;
    const uint8_t *b = http_fake_body(f, &len);
    json_t *j = json_loadb((const char *)b, len, 0, NULL);
    ck_assert_ptr_nonnull(j);
    return j;
}

START_TEST(test_no_leader_is_503)
{
    const char *paths[] = {"/api/v1/scheduler", "/api/v1", "/api/v1/agent",
                           "/redirect", "/master/redirect"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        enum http_method m =
            strstr(paths[i], "redirect") ? HTTP_GET : HTTP_POST;
        struct http_fake *f = req(m, paths[i], m == HTTP_POST ? "{}" : NULL);
        ck_assert_int_eq(http_fake_status(f), 503);
        ck_assert_ptr_null(http_fake_reply_header(f, "Location"));
        ck_assert_str_eq(mfx_body(f), "No leader elected\n");
        http_fake_free(f);
    }
}
END_TEST

START_TEST(test_redirects_to_the_leaders_path)
{
    set_leader();
    static const struct {
        enum http_method m;
        const char *target, *location;
    } cases[] = {
        {HTTP_POST, "/api/v1/scheduler",
         "//leader.example.com:5051/api/v1/scheduler"},
        {HTTP_POST, "/master/api/v1",
         "//leader.example.com:5051/master/api/v1"},
        {HTTP_POST, "/api/v1/agent", "//leader.example.com:5051/api/v1/agent"},
        {HTTP_POST, "/maintenance/schedule",
         "//leader.example.com:5051/maintenance/schedule"},
        {HTTP_DELETE, "/quota/role?x=1",
         "//leader.example.com:5051/quota/role"},
        {HTTP_GET, "/slaves", "//leader.example.com:5051/slaves"},
        {HTTP_GET, "/", "//leader.example.com:5051/"},
        /* /redirect goes to the leader's base URL (no loop). */
        {HTTP_GET, "/redirect", "//leader.example.com:5051"},
        {HTTP_GET, "/master/redirect", "//leader.example.com:5051"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_fake *f =
            req(cases[i].m, cases[i].target,
                cases[i].m == HTTP_POST ? "{\"type\":\"SUBSCRIBE\"}" : NULL);
        ck_assert_msg(http_fake_status(f) == 307, "%s: %d", cases[i].target,
                      http_fake_status(f));
        ck_assert_str_eq(http_fake_reply_header(f, "Location"),
                         cases[i].location);
        http_fake_free(f);
    }
    /* No leader again: 503 again. */
    ha_standby_set_leader(S, NULL);
    struct http_fake *f = req(HTTP_POST, "/api/v1/scheduler", "{}");
    ck_assert_int_eq(http_fake_status(f), 503);
    http_fake_free(f);
}
END_TEST

START_TEST(test_answers_of_its_own)
{
    set_leader();
    const char *ok[] = {"/health", "/master/health", "/version", "/flags",
                        "/master/flags"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct http_fake *f = req(HTTP_GET, ok[i], NULL);
        ck_assert_msg(http_fake_status(f) == 200, "%s", ok[i]);
        http_fake_free(f);
    }
    struct http_fake *f = req(HTTP_GET, "/metrics/snapshot", NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    json_t *j = body_json(f);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "master/elected")),
                     0);
    json_decref(j);
    http_fake_free(f);

    f = req(HTTP_GET, "/state", NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    j = body_json(f);
    ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "standby-id");
    ck_assert_str_eq(json_string_value(json_object_get(j, "pid")),
                     "master@127.0.0.1:5050");
    ck_assert_str_eq(json_string_value(json_object_get(j, "leader")),
                     "master@10.0.0.9:5051");
    json_t *li = json_object_get(j, "leader_info");
    ck_assert_str_eq(json_string_value(json_object_get(li, "id")), "leader-id");
    ck_assert_str_eq(json_string_value(json_object_get(li, "hostname")),
                     "leader.example.com");
    ck_assert_int_eq(json_integer_value(json_object_get(li, "port")), 5051);
    ck_assert_str_eq(json_string_value(json_object_get(li, "pid")),
                     "master@10.0.0.9:5051");
    ck_assert_uint_eq(json_array_size(json_object_get(j, "frameworks")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(j, "slaves")), 0);
    ck_assert_ptr_nonnull(json_object_get(j, "version"));
    ck_assert_ptr_null(json_object_get(j, "elected_time"));
    json_decref(j);
    http_fake_free(f);

    /* No leader: /state says so by leaving the leader out. */
    ha_standby_set_leader(S, NULL);
    f = req(HTTP_GET, "/master/state", NULL);
    ck_assert_int_eq(http_fake_status(f), 200);
    j = body_json(f);
    ck_assert_ptr_null(json_object_get(j, "leader"));
    ck_assert_ptr_null(json_object_get(j, "leader_info"));
    json_decref(j);
    http_fake_free(f);
}
END_TEST

START_TEST(test_local_paths)
{
    ck_assert(ha_path_is_local("/health"));
    ck_assert(ha_path_is_local("/master/redirect"));
    ck_assert(ha_path_is_local("/metrics/snapshot"));
    ck_assert(!ha_path_is_local("/api/v1/scheduler"));
    ck_assert(!ha_path_is_local("/state"));
}
END_TEST

static int parse(const char *const *extra, char *err, size_t errlen)
{
    struct master_flags mf;
    master_flags_init(&mf);
    char *argv[8] = {"offerd"};
    int argc = 1;
    for (; *extra != NULL; extra++)
        argv[argc++] = (char *)*extra;
    char *env[] = {NULL};
    int rc = master_flags_parse(&mf, argc, argv, env, err, errlen);
    master_flags_fini(&mf);
    return rc;
}

START_TEST(test_zk_flags)
{
    char err[512];
    const char *ok1[] = {"--zk=zk://h:1/mesos", "--zk_session_timeout=2secs",
                         "--quorum=2", NULL};
    ck_assert_int_eq(parse(ok1, err, sizeof(err)), FLAGS_OK);
    const char *ok2[] = {"--zk=file:///etc/offerd/zk", NULL};
    ck_assert_int_eq(parse(ok2, err, sizeof(err)), FLAGS_OK);
    const char *bad1[] = {"--zk=h:1/mesos", NULL};
    ck_assert_int_eq(parse(bad1, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--zk"));
    const char *bad2[] = {"--zk=zk://h:1/m", "--zk_session_timeout=1ms", NULL};
    ck_assert_int_eq(parse(bad2, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--zk_session_timeout"));
}
END_TEST

static Suite *master_ha_suite(void)
{
    Suite *s = suite_create("master_ha");
    TCase *tc = tcase_create("standby");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_no_leader_is_503);
    tcase_add_test(tc, test_redirects_to_the_leaders_path);
    tcase_add_test(tc, test_answers_of_its_own);
    suite_add_tcase(s, tc);
    TCase *flags = tcase_create("flags");
    tcase_add_test(flags, test_local_paths);
    tcase_add_test(flags, test_zk_flags);
    suite_add_tcase(s, flags);
    return s;
}

OFFERD_CHECK_MAIN(master_ha_suite)
