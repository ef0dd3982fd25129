/*
 * End-to-end: offerd with --registry=zk keeps its registry in a real
 * ZooKeeper server (tests/zk harness): a weight set through one master is
 * there for another master started with a different work_dir on the same
 * --zk; a registry copied from a master's SQLite work_dir by
 * offerd-registry copy is what a master started with --registry=zk finds,
 * and a second copy into it is refused without --force.
 */
#include "harness.h"
#include "zk_harness.h"

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define T 10000

static struct zk_ensemble *zk;
static char url[512];
static char zkarg[600];
static int paths;

static void setup(void)
{
    char err[512];
    zk = zk_ensemble_start(1, 60000, err, sizeof(err));
    ck_assert_msg(zk != NULL, "ZooKeeper: %s", err);
    char path[64];
    snprintf(path, sizeof(path), "/offerd-e2e-%d", ++paths);
    ck_assert_int_eq(zk_ensemble_url(zk, path, url, sizeof(url)), 0);
    snprintf(zkarg, sizeof(zkarg), "--zk=%s", url);
}

static void teardown(void)
{
    zk_ensemble_stop(zk);
}

static int put_weight(uint16_t port, const char *body)
{
    const char *headers[] = {"Content-Type: application/json", NULL};
    struct e2e_response r;
    if (e2e_http(port, "PUT", "/weights", headers, body, strlen(body), T, &r) !=
        0)
        return -1;
    int status = r.status;
    e2e_response_free(&r);
    return status;
}

struct weight_query {
    uint16_t port;
    const char *role;
    double want;
};

/* The role's weight in GET /weights is q->want. */
static bool has_weight(void *arg)
{
    const struct weight_query *q = arg;
    json_t *w = e2e_get_json(q->port, "/weights");
    bool found = false;
    size_t i;
    json_t *e;
    if (json_is_array(w))
        json_array_foreach(w, i, e)
        {
            const char *role = json_string_value(json_object_get(e, "role"));
            if (role && strcmp(role, q->role) == 0 &&
                json_number_value(json_object_get(e, "weight")) == q->want)
                found = true;
        }
    json_decref(w);
    return found;
}

START_TEST(test_registry_shared_through_zk)
{
    struct e2e_proc a, b;
    const char *args[] = {"--registry=zk", zkarg, NULL};
    ck_assert_int_eq(e2e_start_master(&a, args), 0);
    ck_assert_int_eq(put_weight(a.port, "[{\"role\":\"web\",\"weight\":2.5}]"),
                     200);
    ck_assert_int_eq(e2e_proc_stop(&a, SIGTERM, 5000), 0);

    /* Another master, with a work_dir of its own. */
    ck_assert_int_eq(e2e_start_master(&b, args), 0);
    struct weight_query q = {b.port, "web", 2.5};
    ck_assert_msg(e2e_poll_until(has_weight, &q, T),
                  "the weight did not come back from ZooKeeper");
    e2e_proc_cleanup(&b);
    e2e_proc_cleanup(&a);
}
END_TEST

START_TEST(test_registry_zk_needs_zk)
{
    const char *args[] = {OFFERD_BIN, "--registry=zk", "--work_dir=/tmp", NULL};
    char out[4096];
    ck_assert_int_ne(e2e_run(OFFERD_BIN, args + 1, out, sizeof(out), T), 0);
    ck_assert_msg(strstr(out, "--registry=zk needs --zk") != NULL, "%s", out);
}
END_TEST

START_TEST(test_migrate_sqlite_to_zk)
{
    struct e2e_proc a, b;
    const char *sq[] = {"--registry=sqlite", NULL};
    ck_assert_int_eq(e2e_start_master(&a, sq), 0);
    ck_assert_int_eq(put_weight(a.port, "[{\"role\":\"db\",\"weight\":4}]"),
                     200);
    ck_assert_int_eq(e2e_proc_stop(&a, SIGTERM, 5000), 0);

    char from[400], out[4096];
    snprintf(from, sizeof(from), "sqlite:%s", a.work_dir);
    const char *copy[] = {"copy", from, url, NULL};
    int rc = e2e_run(OFFERD_REGISTRY_BIN, copy, out, sizeof(out), 30000);
    ck_assert_msg(rc == 0, "offerd-registry: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "copied 1 entities"));
    /* Again: the destination is not empty any more. */
    rc = e2e_run(OFFERD_REGISTRY_BIN, copy, out, sizeof(out), 30000);
    ck_assert_int_eq(rc, 1);
    ck_assert_ptr_nonnull(strstr(out, "refusing to overwrite"));
    const char *bad[] = {"copy", a.work_dir, url, NULL};
    ck_assert_int_eq(e2e_run(OFFERD_REGISTRY_BIN, bad, out, sizeof(out), T), 2);

    const char *args[] = {"--registry=zk", zkarg, NULL};
    ck_assert_int_eq(e2e_start_master(&b, args), 0);
    struct weight_query q = {b.port, "db", 4};
    ck_assert_msg(e2e_poll_until(has_weight, &q, T),
                  "the migrated weight is not there");
    e2e_proc_cleanup(&b);
    e2e_proc_cleanup(&a);
}
END_TEST

static Suite *registry_zk_suite(void)
{
    Suite *s = suite_create("e2e_registry_zk");
    TCase *tc = tcase_create("zk");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_registry_shared_through_zk);
    tcase_add_test(tc, test_registry_zk_needs_zk);
    tcase_add_test(tc, test_migrate_sqlite_to_zk);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(registry_zk_suite)
