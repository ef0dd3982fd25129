/*
 * Limits on frameworks (master/limits.c): frameworks per principal and per
 * peer (--max_frameworks_per_principal), Mesos's --rate_limits applied to
 * SUBSCRIBE, and the failover timeout cap of frameworks that never launched
 * a task (--max_failover_timeout). Through the master fixture: no sockets.
 */
#include "master/limits.h"
#include "master/master.h"
#include "master/scheduler_api.h"

#include "check_main.h"
#include "master_fixture.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

MFX_STANDARD_FIXTURE

#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"

static void start(const char *flag1, const char *flag2)
{
    const char *flags[] = {flag1, flag2, NULL};
    mfx_start(&X, flags);
}

/* A SUBSCRIBE from peer (NULL: the fake default) of a framework with
 * principal (NULL: none) and id (NULL: new). Returns the exchange: a stream
 * when admitted, else the reply. */
static struct http_fake *subscribe_from(const char *peer, const char *principal,
                                        const char *id)
{
    char idpart[300] = "", fiid[300] = "", ppart[300] = "";
    if (id != NULL) {
        snprintf(idpart, sizeof(idpart), "\"framework_id\":{\"value\":\"%s\"},",
                 id);
        snprintf(fiid, sizeof(fiid), ",\"id\":{\"value\":\"%s\"}", id);
    }
    if (principal != NULL)
        snprintf(ppart, sizeof(ppart), ",\"principal\":\"%s\"", principal);
    char body[1024];
    snprintf(body, sizeof(body),
             "{%s\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":{"
             "\"user\":\"u\",\"name\":\"fw\",\"failover_timeout\":3000000%s%s"
             "}}}",
             idpart, ppart, fiid);
    struct http_fake *f = http_fake_new(X.base, HTTP_POST, "/api/v1/scheduler");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f, "Accept", HTTP_CONTENT_JSON);
    if (peer != NULL)
        http_fake_set_peer(f, peer);
    http_fake_set_body(f, body, strlen(body));
    http_fake_dispatch(f, master_scheduler_api, X.m);
    for (int i = 0; i < 100 && !http_fake_replied(f); i++)
        mfx_settle(&X);
    ck_assert_msg(http_fake_replied(f), "no reply to %s", body);
    return f;
}

static int subscribe_status(const char *peer, const char *principal)
{
    struct http_fake *f = subscribe_from(peer, principal, NULL);
    int st = http_fake_status(f);
    http_fake_free(f);
    return st;
}

START_TEST(test_cap_per_peer)
{
    start("--max_frameworks_per_principal=2", NULL);
    ck_assert_int_eq(subscribe_status("10.0.0.1:1000", NULL), 200);
    ck_assert_int_eq(subscribe_status("10.0.0.1:1001", NULL), 200);
    struct http_fake *f = subscribe_from("10.0.0.1:1002", NULL, NULL);
    ck_assert_int_eq(http_fake_status(f), 503);
    ck_assert_str_eq(mfx_body(f), "too many frameworks from 10.0.0.1 "
                                  "(--max_frameworks_per_principal=2)\n");
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 2);
    /* Another peer is not held back. */
    ck_assert_int_eq(subscribe_status("10.0.0.2:1000", NULL), 200);
    ck_assert_int_eq(subscribe_status("[::1]:1000", NULL), 200);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 4);
}
END_TEST

START_TEST(test_cap_per_principal)
{
    start("--max_frameworks_per_principal=2", NULL);
    ck_assert_int_eq(subscribe_status("10.0.0.1:1", "p"), 200);
    ck_assert_int_eq(subscribe_status("10.0.0.2:1", "p"), 200);
    struct http_fake *f = subscribe_from("10.0.0.3:1", "p", NULL);
    ck_assert_int_eq(http_fake_status(f), 503);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "principal 'p'"));
    http_fake_free(f);
    ck_assert_int_eq(subscribe_status("10.0.0.3:1", "q"), 200);
}
END_TEST

START_TEST(test_resubscribe_at_cap_admitted)
{
    start("--max_frameworks_per_principal=1", NULL);
    struct http_fake *a = subscribe_from("10.0.0.1:1", NULL, NULL);
    ck_assert(http_fake_is_stream(a));
    size_t pos = 0;
    const char *id = NULL;
    ck_assert(hmap_next(X.m->frameworks, &pos, &id, NULL));
    char fid[256];
    snprintf(fid, sizeof(fid), "%s", id);
    http_fake_disconnect(a);
    mfx_settle(&X);
    ck_assert_int_eq(subscribe_status("10.0.0.1:2", NULL), 503);
    /* The framework itself comes back with its id: never refused. */
    struct http_fake *b = subscribe_from("10.0.0.1:3", NULL, fid);
    ck_assert_msg(http_fake_is_stream(b), "got %d: %s", http_fake_status(b),
                  mfx_body(b));
    http_fake_free(a);
    http_fake_free(b);
}
END_TEST

START_TEST(test_teardown_frees_a_slot)
{
    start("--max_frameworks_per_principal=1", NULL);
    mfx_framework_subscribe(&X, &FW, "{\"user\":\"u\",\"name\":\"fw\"}");
    ck_assert_int_eq(subscribe_status(NULL, NULL), 503);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "TEARDOWN", NULL, NULL), 202);
    mfx_settle(&X);
    ck_assert_int_eq(subscribe_status(NULL, NULL), 200);
}
END_TEST

START_TEST(test_rate_limit_principal)
{
    start("--rate_limits={\"limits\":[{\"principal\":\"slow\",\"qps\":0.001,"
          "\"capacity\":2}]}",
          NULL);
    ck_assert_int_eq(subscribe_status("10.0.0.1:1", "slow"), 200);
    ck_assert_int_eq(subscribe_status("10.0.0.2:1", "slow"), 200);
    struct http_fake *f = subscribe_from("10.0.0.3:1", "slow", NULL);
    ck_assert_int_eq(http_fake_status(f), 429);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "principal 'slow'"));
    ck_assert_str_eq(http_fake_reply_header(f, "Retry-After"), "1000");
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 2);
    /* Unlisted principals and anonymous frameworks: no aggregate default,
     * no limit. */
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(subscribe_status("10.0.0.4:1", "other"), 200);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(subscribe_status("10.0.0.4:1", NULL), 200);
}
END_TEST

START_TEST(test_rate_limit_aggregate_per_peer)
{
    start("--rate_limits={\"aggregate_default_qps\":0.001,"
          "\"aggregate_default_capacity\":1}",
          NULL);
    ck_assert_int_eq(subscribe_status("10.0.0.1:1", NULL), 200);
    ck_assert_int_eq(subscribe_status("10.0.0.1:2", NULL), 429);
    ck_assert_int_eq(subscribe_status("10.0.0.2:1", NULL), 200);
    /* Unlisted principals share one aggregate bucket. */
    ck_assert_int_eq(subscribe_status("10.0.0.3:1", "a"), 200);
    ck_assert_int_eq(subscribe_status("10.0.0.4:1", "b"), 429);
}
END_TEST

START_TEST(test_bad_rate_limits)
{
    const char *bad[] = {
        "{",
        "[]",
        "{\"limits\":{}}",
        "{\"limits\":[{\"qps\":1}]}",
        "{\"limits\":[{\"principal\":\"p\",\"qps\":-1}]}",
        "{\"limits\":[{\"principal\":\"p\",\"capacity\":0}]}",
        "{\"limits\":[{\"principal\":\"p\"},{\"principal\":\"p\"}]}",
        "{\"aggregate_default_qps\":\"x\"}",
        "file:///nonexistent/rate_limits.json",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct master_flags mf;
        master_flags_init(&mf);
        char arg[256];
        snprintf(arg, sizeof(arg), "--rate_limits=%s", bad[i]);
        char *argv[] = {"offerd", arg, NULL};
        char *env[] = {NULL};
        char err[512];
        ck_assert_int_eq(
            master_flags_parse(&mf, 2, argv, env, err, sizeof(err)), FLAGS_OK);
        struct master_limits *l = master_limits_new(&mf, err, sizeof(err));
        ck_assert_msg(l == NULL, "accepted %s", bad[i]);
        ck_assert_msg(strncmp(err, "--rate_limits: ", 15) == 0, "%s", err);
        master_flags_fini(&mf);
    }
}
END_TEST

static bool no_frameworks(void *arg)
{
    (void)arg;
    return hmap_count(X.m->frameworks) == 0;
}

START_TEST(test_failover_capped_without_tasks)
{
    start("--max_failover_timeout=1secs", NULL);
    struct http_fake *a = subscribe_from(NULL, NULL, NULL);
    ck_assert(http_fake_is_stream(a));
    http_fake_disconnect(a);
    mfx_settle(&X);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 1);
    /* failover_timeout 3e6 s asked; 1 s honoured: it never launched. */
    ck_assert(mfx_run_until(&X, no_frameworks, NULL));
    ck_assert_uint_eq(hmap_count(X.m->completed), 1);
    /* Its slot is free again. */
    http_fake_free(a);
}
END_TEST

static bool timer_fired(void *arg)
{
    (void)arg;
    return false;
}

START_TEST(test_failover_kept_with_tasks)
{
    start("--max_failover_timeout=1secs", NULL);
    mfx_framework_subscribe(&X, &FW,
                            "{\"user\":\"u\",\"name\":\"fw\","
                            "\"failover_timeout\":3000000}");
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    char offer_id[256];
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"t1\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"true\"}}]}}]}",
             offer_id, AG.id, SMALL);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    http_fake_disconnect(FW.stream);
    mfx_settle(&X);
    /* Past the cap (the fixture waits MFX_DEADLINE_MS): still there. */
    ck_assert(!mfx_run_until(&X, timer_fired, NULL));
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 1);
}
END_TEST

static Suite *master_limits_suite(void)
{
    Suite *s = suite_create("master_limits");
    TCase *tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_cap_per_peer);
    tcase_add_test(tc, test_cap_per_principal);
    tcase_add_test(tc, test_resubscribe_at_cap_admitted);
    tcase_add_test(tc, test_teardown_frees_a_slot);
    tcase_add_test(tc, test_rate_limit_principal);
    tcase_add_test(tc, test_rate_limit_aggregate_per_peer);
    tcase_add_test(tc, test_failover_capped_without_tasks);
    tcase_add_test(tc, test_failover_kept_with_tasks);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("flags");
    tcase_add_test(tp, test_bad_rate_limits);
    suite_add_tcase(s, tp);
    return s;
}

OFFERD_CHECK_MAIN(master_limits_suite)
