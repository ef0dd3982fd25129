/*
 * The operator API's GET_STATE, GET_TASKS, GET_FRAMEWORKS, GET_EXECUTORS
 * and GET_AGENTS written in slices (master/operator_stream.c): the bytes,
 * JSON and protobuf, are those of the whole Response operator_state.c
 * builds, filtered by authz.c and encoded by common/json_pb, for every
 * reader's view; a body takes many slices; a reader that leaves mid-body
 * ends the production and frees what it held.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "check_main.h"
#include "common/auth.h"
#include "common/http_fake.h"
#include "common/json_pb.h"
#include "master/authz.h"
#include "master/master.h"
#include "master/operator_state.h"
#include "master/operator_stream.h"
#include "master/state_stream.h"
#include "master_fixture.h"

#define NAG       6 /* agents */
#define PER_OFFER 3 /* tasks launched on each offer */
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

static struct mfx X;
static struct mfx_peer FW, FW2, FW3, AG[NAG];

static void teardown(void)
{
    struct mfx_peer *peers[NAG + 3] = {&FW, &FW2, &FW3};
    for (size_t i = 0; i < NAG; i++)
        peers[3 + i] = &AG[i];
    mfx_teardown(&X, peers, NAG + 3);
}

static struct mfx_peer *agent_of(const char *id)
{
    for (size_t i = 0; i < NAG; i++)
        if (strcmp(AG[i].id, id) == 0)
            return &AG[i];
    ck_abort_msg("no agent %s", id);
    return NULL;
}

/* Launch PER_OFFER tasks on every offer of fw's next OFFERS event: the
 * first with an executor (whose command runs as carol), the second with a
 * command user (dave), the others plain command tasks. Task k of offer i
 * is "<prefix>-<i>-<k>"; agents[i] is the agent of offer i. */
static void launch_on_offers(struct mfx_peer *fw, const char *prefix,
                             struct mfx_peer **agents)
{
    json_t *ev = mfx_next_event(&X, fw, "OFFERS");
    ck_assert_ptr_nonnull(ev);
    json_t *offers = json_object_get(json_object_get(ev, "offers"), "offers");
    size_t i;
    json_t *of;
    json_array_foreach(offers, i, of)
    {
        const char *oid = json_string_value(
            json_object_get(json_object_get(of, "id"), "value"));
        const char *aid = json_string_value(
            json_object_get(json_object_get(of, "agent_id"), "value"));
        agents[i] = agent_of(aid);
        char payload[8192];
        int len = snprintf(payload, sizeof(payload),
                           "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":"
                           "[{\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[",
                           oid);
        for (int k = 0; k < PER_OFFER; k++) {
            char how[512];
            if (k == 0)
                snprintf(
                    how, sizeof(how),
                    "\"executor\":{\"executor_id\":{\"value\":\"e-%s-%zu\"}"
                    ",\"type\":\"CUSTOM\",\"command\":{\"value\":\"./x\","
                    "\"user\":\"carol\"},\"resources\":" TINY "}",
                    prefix, i);
            else
                snprintf(how, sizeof(how), "\"command\":{\"value\":\"true\"%s}",
                         k == 1 ? ",\"user\":\"dave\"" : "");
            len += snprintf(payload + len, sizeof(payload) - (size_t)len,
                            "%s{\"name\":\"n\",\"task_id\":{\"value\":\"%s-%zu-"
                            "%d\"},\"agent_id\":{\"value\":\"%s\"},"
                            "\"resources\":" TINY ",\"labels\":{\"labels\":[{"
                            "\"key\":\"k\",\"value\":\"v\\\"\\u00e9\"}]},%s}",
                            k ? "," : "", prefix, i, k, aid, how);
        }
        snprintf(payload + len, sizeof(payload) - (size_t)len, "]}}]}");
        ck_assert_int_eq(
            mfx_framework_call(&X, fw, "ACCEPT", "accept", payload), 202);
    }
    json_decref(ev);
}

/* NAG agents; alice's framework (role web) and bob's (role batch) with
 * tasks on every offer, some running, one finished and acknowledged (a
 * completed task), one failed and not acknowledged (terminal, live); a
 * third framework torn down (a completed framework). */
static void fill(void)
{
    for (int i = 0; i < NAG; i++) {
        char host[32];
        snprintf(host, sizeof(host), "host%d", i);
        mfx_agent_subscribe(&X, &AG[i], host, "cpus:4;mem:4096");
    }
    mfx_framework_subscribe(
        &X, &FW,
        "{\"user\":\"alice\",\"name\":\"a\",\"roles\":[\"web\"],"
        "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}");
    struct mfx_peer *ags[NAG] = {0};
    launch_on_offers(&FW, "a", ags);
    mfx_task_update(&X, &FW, ags[0], "a-0-0", "TASK_RUNNING", 1, true);
    mfx_task_update(&X, &FW, ags[0], "a-0-1", "TASK_RUNNING", 2, true);
    mfx_task_update(&X, &FW, ags[0], "a-0-1", "TASK_FINISHED", 3, true);
    mfx_task_update(&X, &FW, ags[1], "a-1-2", "TASK_FAILED", 4, false);
    mfx_framework_subscribe(
        &X, &FW2,
        "{\"user\":\"bob\",\"name\":\"b\",\"roles\":[\"batch\"],"
        "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}],"
        "\"labels\":{\"labels\":[{\"key\":\"team\"}]}}");
    launch_on_offers(&FW2, "b", ags);
    mfx_framework_subscribe(&X, &FW3,
                            "{\"user\":\"carol\",\"name\":\"c\",\"roles\":["
                            "\"web\"],\"capabilities\":[{\"type\":\"MULTI_"
                            "ROLE\"}]}");
    char call[512];
    snprintf(call, sizeof(call),
             "{\"type\":\"TEARDOWN\",\"teardown\":{\"framework_id\":{"
             "\"value\":\"%s\"}}}",
             FW3.id);
    struct http_fake *f = mfx_operator(&X, call);
    ck_assert_int_eq(http_fake_status(f), 200);
    http_fake_free(f);
    ck_assert_uint_eq(X.m->ncompleted, 1);
}

static const Mesos__V1__Master__Call__Type TYPES[] = {
    MESOS__V1__MASTER__CALL__TYPE__GET_STATE,
    MESOS__V1__MASTER__CALL__TYPE__GET_TASKS,
    MESOS__V1__MASTER__CALL__TYPE__GET_FRAMEWORKS,
    MESOS__V1__MASTER__CALL__TYPE__GET_EXECUTORS,
    MESOS__V1__MASTER__CALL__TYPE__GET_AGENTS,
};
#define NTYPES (sizeof(TYPES) / sizeof(TYPES[0]))

/* The reference: the whole Response, filtered for who, encoded. */
static uint8_t *whole_body(const char *who, Mesos__V1__Master__Call__Type type,
                           enum http_encoding enc, size_t *len)
{
    Mesos__V1__Master__Response *r = master_opst_response(X.m, type);
    master_authz_filter_response(X.m, who, &r->base);
    uint8_t *b = jpb_encode(&r->base, (enum jpb_format)enc, len);
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return b;
}

static void assert_same(const uint8_t *a, size_t alen, const uint8_t *b,
                        size_t blen, const char *what)
{
    size_t at = 0;
    while (at < alen && at < blen && a[at] == b[at])
        at++;
    ck_assert_msg(alen == blen && at == alen,
                  "%s: %zu and %zu bytes, differ at %zu", what, alen, blen, at);
}

/* Every call, both encodings, for reader who: the writer's body is the
 * whole Response's; returns the GET_STATE JSON (caller frees). */
static char *check_bodies(const char *who)
{
    char *state = NULL;
    for (size_t t = 0; t < NTYPES; t++)
        for (int e = 0; e < 2; e++) {
            size_t wl, sl;
            uint8_t *whole = whole_body(who, TYPES[t], e, &wl);
            uint8_t *sliced = master_opstream_body(X.m, who, TYPES[t], e, &sl);
            char what[64];
            snprintf(what, sizeof(what), "type %d enc %d who %s", TYPES[t], e,
                     who ? who : "-");
            assert_same(whole, wl, sliced, sl, what);
            free(whole);
            if (t == 0 && e == 0)
                state = (char *)sliced;
            else
                free(sliced);
        }
    return state;
}

static char body_text[64];

/* POST {"type": type} to /api/v1 as principal who (secret), answered in
 * accept; not run to the end. */
static struct http_fake *op_request(const char *type, const char *accept,
                                    const char *who, const char *secret)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", "application/json");
    http_fake_add_header(f, "Accept", accept);
    if (who != NULL) {
        char *h = auth_basic_header(who, secret);
        http_fake_add_header(f, "Authorization", h);
        free(h);
    }
    snprintf(body_text, sizeof(body_text), "{\"type\":\"%s\"}", type);
    http_fake_set_body(f, body_text, strlen(body_text));
    http_fake_dispatch_server(f, X.m->http);
    return f;
}

static bool replied(void *arg)
{
    return http_fake_replied(arg);
}

/* ---- Bytes ------------------------------------------------------------- */

static void plain_setup(void)
{
    mfx_start(&X, NULL);
}

START_TEST(test_bodies_equal_whole_response)
{
    fill();
    char *state = check_bodies(NULL);
    /* What the body holds: every kind of entity. */
    static const char *const has[] = {
        "\"type\":\"GET_STATE\"",
        "\"completed_tasks\":[",
        "\"executors\":[",
        "\"completed_frameworks\":[",
        "\"agents\":[",
        "TASK_FINISHED",
        "TASK_FAILED",
        "TASK_RUNNING",
    };
    for (size_t i = 0; i < sizeof(has) / sizeof(has[0]); i++)
        ck_assert_msg(strstr(state, has[i]) != NULL, "no %s", has[i]);
    free(state);
}
END_TEST

/* Through HTTP, one entity per slice: many chunks, the same bytes; the
 * loop answers another request between two slices. */
START_TEST(test_sliced_over_http)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    static const char *const accept[2] = {"application/json",
                                          "application/x-protobuf"};
    uint64_t slices = 0;
    for (int e = 0; e < 2; e++) {
        struct http_fake *f = op_request("GET_STATE", accept[e], NULL, NULL);
        ck_assert(!http_fake_replied(f));
        struct http_fake *h = http_fake_new(X.base, HTTP_GET, "/health");
        http_fake_dispatch_server(h, X.m->http);
        ck_assert(http_fake_replied(h));
        http_fake_free(h);
        ck_assert(!http_fake_replied(f));
        ck_assert(mfx_run_until(&X, replied, f));
        ck_assert_int_eq(http_fake_status(f), 200);
        ck_assert_str_eq(http_fake_content_type(f), accept[e]);
        /* JSON goes out as written; protobuf once its lengths are known,
         * a segment per slice. */
        struct master_state_stream_stats s;
        master_state_stream_stats(X.m, &s);
        ck_assert_uint_gt(s.slices - slices, 2 * NAG);
        slices = s.slices;
        if (e == 0)
            ck_assert_uint_gt(http_fake_chunk_count(f), 2 * NAG);
        size_t wl, bl;
        uint8_t *whole =
            whole_body(NULL, MESOS__V1__MASTER__CALL__TYPE__GET_STATE, e, &wl);
        const uint8_t *b = http_fake_body(f, &bl);
        assert_same(whole, wl, b, bl, accept[e]);
        free(whole);
        http_fake_free(f);
    }
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert_uint_eq(s.productions, 2);
    ck_assert_uint_eq(s.active, 0);
}
END_TEST

static struct http_fake *R[4];

static bool all_replied(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < 4; i++)
        if (!http_fake_replied(R[i]))
            return false;
    return true;
}

/* Readers of one call and encoding arriving while a body is written share
 * the next one; another encoding gets its own. */
START_TEST(test_concurrent_readers_batched)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    static const char *const accept[4] = {
        "application/json", "application/json", "application/json",
        "application/x-protobuf"};
    for (size_t i = 0; i < 4; i++)
        R[i] = op_request("GET_STATE", accept[i], NULL, NULL);
    ck_assert(mfx_run_until(&X, all_replied, NULL));
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    /* JSON: the first reader's body, then one shared by the two others;
     * protobuf: one. */
    ck_assert_uint_eq(s.productions, 3);
    ck_assert_uint_eq(s.readers, 4);
    size_t l0, l;
    const uint8_t *b0 = http_fake_body(R[0], &l0);
    for (size_t i = 1; i < 3; i++) {
        const uint8_t *b = http_fake_body(R[i], &l);
        assert_same(b0, l0, b, l, "batched");
    }
    for (size_t i = 0; i < 4; i++)
        http_fake_free(R[i]);
}
END_TEST

static bool no_production(void *arg)
{
    struct master_state_stream_stats s;
    master_state_stream_stats(arg, &s);
    return s.active == 0;
}

/* A reader that leaves mid-body ends the production; what it held is
 * freed (the sanitizer builds check), for either encoding. */
START_TEST(test_reader_leaving_mid_body)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    static const char *const accept[2] = {"application/json",
                                          "application/x-protobuf"};
    for (int e = 0; e < 2; e++) {
        struct http_fake *f = op_request("GET_STATE", accept[e], NULL, NULL);
        /* Into the task lists, well before the end. */
        for (int i = 0; i < 20; i++)
            event_base_loop(X.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        ck_assert(!http_fake_replied(f));
        http_fake_disconnect(f);
        ck_assert(mfx_run_until(&X, no_production, X.m));
        ck_assert(!http_fake_replied(f));
        http_fake_free(f);
    }
    /* The master stops with a body under way. */
    struct http_fake *g = op_request("GET_TASKS", accept[1], NULL, NULL);
    ck_assert(!http_fake_replied(g));
    master_free(X.m);
    X.m = NULL;
    http_fake_free(g);
}
END_TEST

/* ---- Views --------------------------------------------------------------- */

static char creds_path[64];

/* eve sees alice's frameworks only, no task, no executor, the role web
 * only; ops sees everything. */
static const char ACLS[] =
    "--acls={"
    "\"view_frameworks\": [{\"principals\": {\"values\": [\"eve\"]}, "
    "\"users\": {\"values\": [\"alice\"]}}, {\"principals\": {\"type\": "
    "\"ANY\"}, \"users\": {\"type\": \"ANY\"}}],"
    "\"view_tasks\": [{\"principals\": {\"values\": [\"ops\"]}, "
    "\"users\": {\"type\": \"ANY\"}}, {\"principals\": {\"values\": "
    "[\"eve\"]}, \"users\": {\"values\": [\"dave\"]}}, {\"principals\": "
    "{\"type\": \"ANY\"}, \"users\": {\"type\": \"NONE\"}}],"
    "\"view_executors\": [{\"principals\": {\"values\": [\"ops\"]}, "
    "\"users\": {\"type\": \"ANY\"}}, {\"principals\": {\"type\": "
    "\"ANY\"}, \"users\": {\"type\": \"NONE\"}}],"
    "\"view_roles\": [{\"principals\": {\"values\": [\"eve\"]}, "
    "\"roles\": {\"values\": [\"web\"]}}, {\"principals\": {\"type\": "
    "\"ANY\"}, \"roles\": {\"type\": \"ANY\"}}]}";

static void acl_setup(void)
{
    snprintf(creds_path, sizeof(creds_path), "/tmp/offerd-creds-XXXXXX");
    int fd = mkstemp(creds_path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "eve se\nops so\n";
    ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
                     (ssize_t)(sizeof(text) - 1));
    close(fd);
    char creds_flag[96];
    snprintf(creds_flag, sizeof(creds_flag), "--credentials=%s", creds_path);
    const char *flags[] = {creds_flag, ACLS, NULL};
    mfx_start(&X, flags);
}

static void acl_teardown(void)
{
    teardown();
    unlink(creds_path);
}

START_TEST(test_views_equal_whole_response)
{
    fill();
    char *ops = check_bodies("ops");
    char *eve = check_bodies("eve");
    char *anon = check_bodies(NULL);
    /* The filters did act: eve sees dave's tasks, not the others, and no
     * executor. */
    ck_assert(strstr(ops, "\"executors\":[") != NULL);
    ck_assert(strstr(eve, "\"executors\":[") == NULL);
    ck_assert(strstr(eve, "\"user\":\"dave\"") != NULL);
    ck_assert(strstr(eve, "\"value\":\"a-0-0\"") == NULL);
    ck_assert(strstr(ops, "\"value\":\"a-0-0\"") != NULL);
    ck_assert_uint_lt(strlen(eve), strlen(ops));
    ck_assert_uint_lt(strlen(anon), strlen(ops));
    free(ops);
    free(eve);
    free(anon);

    /* Over HTTP, sliced, as eve. */
    master_state_stream_tune(X.m, 0, 0, 0);
    struct http_fake *f =
        op_request("GET_STATE", "application/x-protobuf", "eve", "se");
    ck_assert(mfx_run_until(&X, replied, f));
    size_t wl, bl;
    uint8_t *whole = whole_body("eve", MESOS__V1__MASTER__CALL__TYPE__GET_STATE,
                                HTTP_ENC_PROTOBUF, &wl);
    const uint8_t *b = http_fake_body(f, &bl);
    assert_same(whole, wl, b, bl, "eve over HTTP");
    free(whole);
    http_fake_free(f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_operator_stream");
    TCase *tc = tcase_create("bytes");
    tcase_add_checked_fixture(tc, plain_setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bodies_equal_whole_response);
    tcase_add_test(tc, test_sliced_over_http);
    tcase_add_test(tc, test_concurrent_readers_batched);
    tcase_add_test(tc, test_reader_leaving_mid_body);
    suite_add_tcase(s, tc);
    tc = tcase_create("views");
    tcase_add_checked_fixture(tc, acl_setup, acl_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_views_equal_whole_response);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
