/* common/zk_url: Mesos's zk:// URL form, and the real ZooKeeper servers of
 * tests/zk (one standalone, and an ensemble losing its quorum) that the HA
 * tests build on. */
#include "common/zk_url.h"
#include "zk/zk_harness.h"

#include "check_main.h"

#include <check.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

START_TEST(test_parse_forms)
{
    struct zk_url u;
    char err[256];
    ck_assert_int_eq(
        zk_url_parse("zk://10.0.0.1:2181/mesos", &u, err, sizeof(err)), 0);
    ck_assert_str_eq(u.hosts, "10.0.0.1:2181");
    ck_assert_str_eq(u.path, "/mesos");
    ck_assert_str_eq(u.auth, "");

    ck_assert_int_eq(zk_url_parse("zk://jo:s3cr@t@zk1:2181,zk2:2182/a/b", &u,
                                  err, sizeof(err)),
                     0);
    ck_assert_str_eq(u.hosts, "zk1:2181,zk2:2182");
    ck_assert_str_eq(u.path, "/a/b");
    ck_assert_str_eq(u.auth, "jo:s3cr@t");

    ck_assert_int_eq(zk_url_parse("zk://h:1/", &u, err, sizeof(err)), 0);
    ck_assert_str_eq(u.path, "/");
    ck_assert(zk_url_is_zk("zk://x"));
    ck_assert(!zk_url_is_zk("http://x"));
    ck_assert(!zk_url_is_zk(NULL));
}
END_TEST

START_TEST(test_parse_refusals)
{
    static const char *const bad[] = {
        "http://h:1/p",    "zk://h:1",        "zk:///p",        "zk://h/p",
        "zk://h:0/p",      "zk://h:65536/p",  "zk://h:12a/p",   "zk://:1/p",
        "zk://h:1,/p",     "zk://,h:1/p",     "zk://h:1//p",    "zk://h:1/p/",
        "zk://h:1/p q",    "zk://user@h:1/p", "zk://:pw@h:1/p", "zk://h:1/p\n",
        "zk://h:123456/p", "zk://h:1,,h:2/p",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct zk_url u;
        char err[256] = "";
        ck_assert_msg(zk_url_parse(bad[i], &u, err, sizeof(err)) == -1,
                      "accepted '%s'", bad[i]);
        ck_assert_msg(strncmp(err, "zk URL: ", 8) == 0, "reason '%s'", err);
        ck_assert(strchr(err, '\n') == NULL);
    }
}
END_TEST

START_TEST(test_join)
{
    char out[64];
    ck_assert_int_eq(zk_url_join("/mesos", "json.info_1", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/mesos/json.info_1");
    ck_assert_int_eq(zk_url_join("/", "x", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "/x");
    ck_assert_int_eq(zk_url_join("/mesos", "0123456789", out, 8), -1);
    ck_assert_str_eq(out, "");
}
END_TEST

/* A session to hosts, waited for synchronously (the watcher runs on the
 * client's own thread: only an int crosses, under the client's guarantee
 * that zoo_state is safe to poll). */
static zhandle_t *connect_sync(const char *hosts)
{
    zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
    zhandle_t *zh = zookeeper_init(hosts, NULL, 4000, NULL, NULL, 0);
    ck_assert_ptr_nonnull(zh);
    for (int i = 0; i < 200 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    ck_assert_int_eq(zoo_state(zh), ZOO_CONNECTED_STATE);
    return zh;
}

START_TEST(test_standalone_server)
{
    char err[256];
    struct zk_ensemble *z = zk_ensemble_start(1, 60000, err, sizeof(err));
    ck_assert_msg(z != NULL, "%s", err);
    char url[256];
    ck_assert_int_eq(zk_ensemble_url(z, "/offerd", url, sizeof(url)), 0);
    struct zk_url u;
    ck_assert_int_eq(zk_url_parse(url, &u, err, sizeof(err)), 0);
    ck_assert_str_eq(u.hosts, zk_ensemble_hosts(z));

    zhandle_t *zh = connect_sync(u.hosts);
    ck_assert_int_eq(
        zoo_create(zh, u.path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    char buf[8];
    int len = sizeof(buf);
    ck_assert_int_eq(zoo_get(zh, u.path, 0, buf, &len, NULL), ZOK);
    ck_assert_int_eq(len, 1);
    zookeeper_close(zh);

    /* Stopped and started again on the same ports, the data is kept. */
    ck_assert_int_eq(zk_server_stop(z, 0), 0);
    ck_assert(!zk_server_serving(z, 0));
    ck_assert_int_eq(zk_server_start(z, 0, 60000), 0);
    zh = connect_sync(u.hosts);
    len = sizeof(buf);
    ck_assert_int_eq(zoo_get(zh, u.path, 0, buf, &len, NULL), ZOK);
    zookeeper_close(zh);
    zk_ensemble_stop(z);
}
END_TEST

START_TEST(test_ensemble_quorum)
{
    char err[256];
    struct zk_ensemble *z = zk_ensemble_start(3, 90000, err, sizeof(err));
    ck_assert_msg(z != NULL, "%s", err);
    ck_assert_int_eq(zk_ensemble_size(z), 3);
    for (int i = 0; i < 3; i++)
        ck_assert(zk_server_serving(z, i));
    zhandle_t *zh = connect_sync(zk_ensemble_hosts(z));
    ck_assert_int_eq(
        zoo_create(zh, "/q", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK);
    zookeeper_close(zh);

    /* One server down: the other two still form a quorum. */
    ck_assert_int_eq(zk_server_stop(z, 0), 0);
    ck_assert(zk_ensemble_wait_serving(z, 30000));
    /* Two down: the last one no longer serves. */
    ck_assert_int_eq(zk_server_stop(z, 1), 0);
    bool lost = false;
    for (int i = 0; i < 200 && !lost; i++) {
        lost = !zk_server_serving(z, 2);
        if (!lost) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    ck_assert(lost);
    /* Quorum back. */
    ck_assert_int_eq(zk_server_start(z, 1, 60000), 0);
    ck_assert(zk_ensemble_wait_serving(z, 60000));
    zk_ensemble_stop(z);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("zk_url");
    TCase *tc = tcase_create("url");
    tcase_add_test(tc, test_parse_forms);
    tcase_add_test(tc, test_parse_refusals);
    tcase_add_test(tc, test_join);
    suite_add_tcase(s, tc);
    TCase *srv = tcase_create("servers");
    tcase_set_timeout(srv, 240);
    tcase_add_test(srv, test_standalone_server);
    tcase_add_test(srv, test_ensemble_quorum);
    suite_add_tcase(s, srv);
    return s;
}

OFFERD_CHECK_MAIN(suite)
