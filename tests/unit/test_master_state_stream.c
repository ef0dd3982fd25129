/*
 * /state written in slices (master/state_stream.c): the body is the same
 * whether written whole or one entity per slice, and the same as the other
 * read endpoints' models of each entity; the loop answers other requests
 * between slices; readers arriving while a body is produced share the next
 * production; a reader that does not read pauses production instead of
 * making the master hold the body; a reader that leaves ends its share.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "check_main.h"
#include "common/auth.h"
#include "common/http_fake.h"
#include "master/frameworks.h"
#include "master/master.h"
#include "master/state_stream.h"
#include "master_fixture.h"

#define NAG       12 /* agents */
#define PER_OFFER 4  /* tasks launched on each offer */
#define TINY                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}]"

static struct mfx X;
static struct mfx_peer FW, FW2, AG[NAG];
static size_t ntasks; /* launched */

static void setup(void)
{
    mfx_start(&X, NULL);
}

static void teardown(void)
{
    struct mfx_peer *peers[NAG + 2] = {&FW, &FW2};
    for (size_t i = 0; i < NAG; i++)
        peers[2 + i] = &AG[i];
    mfx_teardown(&X, peers, NAG + 2);
    ntasks = 0;
}

/* Launch PER_OFFER tasks on every offer of fw's next OFFERS event. */
static void launch_on_offers(struct mfx_peer *fw, const char *prefix)
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
        char payload[8192];
        int len = snprintf(payload, sizeof(payload),
                           "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":"
                           "[{\"type\":\"LAUNCH\",\"launch\":{\"task_infos\":[",
                           oid);
        for (int k = 0; k < PER_OFFER; k++)
            len += snprintf(payload + len, sizeof(payload) - (size_t)len,
                            "%s{\"name\":\"n\",\"task_id\":{\"value\":\"%s-%zu-"
                            "%d\"},\"agent_id\":{\"value\":\"%s\"},"
                            "\"resources\":" TINY ",\"labels\":{\"labels\":[{"
                            "\"key\":\"k\",\"value\":\"v\\\"\\u00e9\"}]},"
                            "\"command\":{\"value\":\"true\"}}",
                            k ? "," : "", prefix, i, k, aid);
        snprintf(payload + len, sizeof(payload) - (size_t)len, "]}}]}");
        ck_assert_int_eq(
            mfx_framework_call(&X, fw, "ACCEPT", "accept", payload), 202);
        ntasks += PER_OFFER;
    }
    json_decref(ev);
}

/* NAG agents, two frameworks of two users, tasks on every offer, some of
 * them running and one framework's first task finished (a completed
 * task). */
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
    launch_on_offers(&FW, "a");
    mfx_framework_subscribe(
        &X, &FW2,
        "{\"user\":\"bob\",\"name\":\"b\",\"roles\":[\"batch\"],"
        "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}],"
        "\"labels\":{\"labels\":[{\"key\":\"team\"}]}}");
    launch_on_offers(&FW2, "b");
    ck_assert_uint_ge(ntasks, 2 * NAG * PER_OFFER);
}

/* GET /state to the end; returns the exchange (free it). */
static struct http_fake *get_state(const char *target)
{
    return mfx_http(&X, HTTP_GET, target, NULL, NULL);
}

static char *body_of(struct http_fake *f)
{
    ck_assert_int_eq(http_fake_status(f), 200);
    size_t len;
    const uint8_t *b = http_fake_body(f, &len);
    char *s = malloc(len + 1);
    memcpy(s, b, len + 1);
    return s;
}

static json_t *parse(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    ck_assert_msg(j != NULL, "not JSON: %s at %d: %.80s", err.text,
                  err.position,
                  text + (err.position > 40 ? err.position - 40 : 0));
    return j;
}

static json_t *get_json(const char *target)
{
    struct http_fake *f = get_state(target);
    char *text = body_of(f);
    http_fake_free(f);
    json_t *j = parse(text);
    free(text);
    return j;
}

static bool replied(void *arg)
{
    return http_fake_replied(arg);
}

/* Let a production whose reader is stalled (and the pause bound tiny) go
 * on slice by slice until the reader holds n chunks. */
static void advance_to(struct http_fake *f, size_t n)
{
    for (int i = 0; i < 100000 && http_fake_chunk_count(f) < n; i++) {
        http_fake_drain(f);
        event_base_loop(X.base, EVLOOP_ONCE);
    }
    ck_assert_uint_ge(http_fake_chunk_count(f), n);
}

/* ---- The body ---------------------------------------------------------- */

START_TEST(test_sliced_body_equals_whole_body)
{
    fill();
    struct http_fake *f = get_state("/state");
    char *whole = body_of(f);
    http_fake_free(f);

    /* One entity per slice. */
    master_state_stream_tune(X.m, 0, 0, 0);
    f = get_state("/master/state");
    char *sliced = body_of(f);
    ck_assert_uint_gt(http_fake_chunk_count(f), NAG + ntasks);
    http_fake_free(f);
    ck_assert_str_eq(sliced, whole);

    /* The pieces are what the other endpoints build for each entity. */
    json_t *st = parse(sliced);
    json_t *slaves = get_json("/slaves");
    json_t *fws = get_json("/frameworks");
    ck_assert(json_equal(json_object_get(st, "slaves"),
                         json_object_get(slaves, "slaves")));
    ck_assert(json_equal(json_object_get(st, "frameworks"),
                         json_object_get(fws, "frameworks")));
    ck_assert(json_equal(json_object_get(st, "completed_frameworks"),
                         json_object_get(fws, "completed_frameworks")));
    size_t n = 0, i;
    json_t *fw;
    json_array_foreach(json_object_get(st, "frameworks"), i, fw) n +=
        json_array_size(json_object_get(fw, "tasks"));
    ck_assert_uint_eq(n, ntasks);
    ck_assert_int_eq(
        json_integer_value(json_object_get(st, "activated_slaves")), NAG);
    json_decref(st);
    json_decref(slaves);
    json_decref(fws);
    free(whole);
    free(sliced);
}
END_TEST

START_TEST(test_jsonp_and_alias)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    struct http_fake *f = get_state("/state.json?jsonp=cb.x");
    ck_assert_str_eq(http_fake_content_type(f), "text/javascript");
    char *text = body_of(f);
    http_fake_free(f);
    ck_assert(strncmp(text, "cb.x({", 6) == 0);
    size_t len = strlen(text);
    ck_assert_int_eq(text[len - 1], ')');
    text[len - 1] = '\0';
    json_decref(parse(text + 5));
    free(text);

    f = get_state("/state?jsonp=alert(1)");
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);
}
END_TEST

/* A task that ends and is acknowledged between slices, after it was
 * written among the live tasks, is not written again among the completed
 * ones: each task appears once. */
START_TEST(test_task_ending_mid_body_appears_once)
{
    mfx_framework_subscribe(
        &X, &FW,
        "{\"user\":\"alice\",\"name\":\"a\",\"roles\":[\"web\"],"
        "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}");
    mfx_agent_subscribe(&X, &AG[0], "host0", "cpus:4;mem:4096");
    launch_on_offers(&FW, "a");
    /* One entity per slice, paused as soon as a byte waits unread. */
    master_state_stream_tune(X.m, 0, 0, 1);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_stall(f, true);
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(!http_fake_replied(f));
    /* Head, the agent, "frameworks", the framework's head, its tasks. */
    advance_to(f, 4 + PER_OFFER);
    /* Every live task written: they all end now. */
    for (int k = 0; k < PER_OFFER; k++) {
        char id[64];
        snprintf(id, sizeof(id), "a-0-%d", k);
        mfx_task_update(&X, &FW, &AG[0], id, "TASK_FINISHED", k, true);
    }
    ck_assert_uint_eq(master_framework_find(X.m, FW.id)->ncompleted_tasks,
                      PER_OFFER);
    http_fake_stall(f, false);
    http_fake_drain(f);
    ck_assert(mfx_run_until(&X, replied, f));
    char *text = body_of(f);
    json_t *st = parse(text);
    json_t *fw = json_array_get(json_object_get(st, "frameworks"), 0);
    size_t live = json_array_size(json_object_get(fw, "tasks"));
    size_t done = json_array_size(json_object_get(fw, "completed_tasks"));
    ck_assert_uint_eq(live + done, PER_OFFER);
    json_decref(st);
    free(text);
    http_fake_free(f);
}
END_TEST

/* ---- The loop ------------------------------------------------------------ */

START_TEST(test_loop_serves_others_between_slices)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(!http_fake_replied(f)); /* one slice so far */
    size_t before = http_fake_chunk_count(f);
    ck_assert_uint_eq(before, 1);
    /* Another client's request is answered while /state is under way. */
    struct http_fake *h = http_fake_new(X.base, HTTP_GET, "/health");
    http_fake_dispatch_server(h, X.m->http);
    ck_assert(http_fake_replied(h));
    ck_assert_int_eq(http_fake_status(h), 200);
    http_fake_free(h);
    ck_assert(!http_fake_replied(f));
    /* One turn of the loop: one more slice, not the rest of the body. */
    event_base_loop(X.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    ck_assert_uint_eq(http_fake_chunk_count(f), 2);
    ck_assert(!http_fake_replied(f));
    /* A scheduler call in between. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 202);
    ck_assert(mfx_run_until(&X, replied, f));
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert_uint_gt(s.slices, NAG + ntasks);
    ck_assert_uint_eq(s.productions, 1);
    ck_assert_uint_eq(s.active, 0);
    char *text = body_of(f);
    json_decref(parse(text));
    free(text);
    http_fake_free(f);
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

START_TEST(test_concurrent_readers_are_batched)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    for (size_t i = 0; i < 4; i++) {
        R[i] = http_fake_new(X.base, HTTP_GET, "/state");
        http_fake_dispatch_server(R[i], X.m->http);
    }
    ck_assert(mfx_run_until(&X, all_replied, NULL));
    /* The first reader's body, then one shared by the three others. */
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert_uint_eq(s.productions, 2);
    ck_assert_uint_eq(s.readers, 4);
    char *b[4];
    for (size_t i = 0; i < 4; i++)
        b[i] = body_of(R[i]);
    for (size_t i = 1; i < 4; i++)
        ck_assert_str_eq(b[i], b[0]);
    for (size_t i = 0; i < 4; i++) {
        free(b[i]);
        http_fake_free(R[i]);
    }
}
END_TEST

/* Readers as different principals (their ACL views differ) are not
 * batched; the same jsonp callback and principal are. */
START_TEST(test_jsonp_readers_not_batched_with_plain)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    const char *targets[4] = {"/state", "/state?jsonp=cb", "/state?jsonp=cb",
                              "/state"};
    for (size_t i = 0; i < 4; i++) {
        R[i] = http_fake_new(X.base, HTTP_GET, targets[i]);
        http_fake_dispatch_server(R[i], X.m->http);
    }
    ck_assert(mfx_run_until(&X, all_replied, NULL));
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert_uint_eq(s.productions, 4);
    char *b1 = body_of(R[1]), *b2 = body_of(R[2]);
    ck_assert_str_eq(b1, b2);
    ck_assert(strncmp(b1, "cb({", 4) == 0);
    free(b1);
    free(b2);
    for (size_t i = 0; i < 4; i++)
        http_fake_free(R[i]);
}
END_TEST

/* ---- Slow and gone readers ---------------------------------------------- */

START_TEST(test_stalled_reader_pauses_production)
{
    fill();
    /* One entity per slice; pause once 2 KiB wait unread. */
    master_state_stream_tune(X.m, 0, 0, 2048);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_stall(f, true);
    http_fake_dispatch_server(f, X.m->http);
    /* Run the loop well past the time a whole body would take. */
    for (int i = 0; i < 500; i++)
        event_base_loop(X.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
    mfx_settle(&X);
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert(!http_fake_replied(f));
    ck_assert_uint_gt(s.pauses, 0);
    ck_assert_uint_eq(s.active, 1);
    /* What was produced: the bound and one slice (an agent), not the body. */
    size_t len;
    http_fake_body(f, &len);
    ck_assert_uint_lt(len, 2048 + 16384);
    ck_assert_uint_le(s.max_buffered, 16384);
    size_t paused_at = len;
    /* The reader reads: production resumes to the end. */
    http_fake_stall(f, false);
    http_fake_drain(f);
    ck_assert(mfx_run_until(&X, replied, f));
    http_fake_body(f, &len);
    ck_assert_uint_gt(len, paused_at + 4096);
    char *text = body_of(f);
    json_decref(parse(text));
    free(text);
    http_fake_free(f);
}
END_TEST

static bool no_production(void *arg)
{
    struct master_state_stream_stats s;
    master_state_stream_stats(arg, &s);
    return s.active == 0;
}

START_TEST(test_reader_leaving_ends_production)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(f, X.m->http);
    ck_assert(!http_fake_replied(f));
    http_fake_disconnect(f);
    ck_assert(mfx_run_until(&X, no_production, X.m));
    ck_assert(!http_fake_replied(f));
    /* The next reader gets a whole body. */
    json_decref(get_json("/state"));
    http_fake_free(f);
}
END_TEST

/* The master stops with a body under way: readers are closed, nothing
 * leaks (the sanitizer builds check). */
START_TEST(test_master_stops_mid_body)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    struct http_fake *f = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(f, X.m->http);
    struct http_fake *g = http_fake_new(X.base, HTTP_GET, "/state");
    http_fake_dispatch_server(g, X.m->http);
    ck_assert(!http_fake_replied(f));
    master_free(X.m);
    X.m = NULL;
    http_fake_free(f);
    http_fake_free(g);
}
END_TEST

/* ---- Readers' views ------------------------------------------------------ */

static char creds_path[64];

/* view_tasks and view_flags for ops only; everyone sees frameworks. */
static const char ACLS[] =
    "--acls={\"view_tasks\": [{\"principals\": {\"values\": [\"ops\"]}, "
    "\"users\": {\"type\": \"ANY\"}}, {\"principals\": {\"type\": "
    "\"ANY\"}, \"users\": {\"type\": \"NONE\"}}], \"view_flags\": "
    "[{\"principals\": {\"values\": [\"ops\"]}, \"flags\": {\"type\": "
    "\"ANY\"}}, {\"principals\": {\"type\": \"ANY\"}, \"flags\": "
    "{\"type\": \"NONE\"}}]}";

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

static size_t tasks_in(const char *body)
{
    json_t *st = parse(body);
    size_t n = 0, i;
    json_t *fw;
    json_array_foreach(json_object_get(st, "frameworks"), i, fw) n +=
        json_array_size(json_object_get(fw, "tasks"));
    ck_assert_uint_eq(json_array_size(json_object_get(st, "frameworks")), 2);
    json_decref(st);
    return n;
}

/* Each reader's body is filtered for its principal, slice by slice;
 * readers of one principal share a production, of two do not. */
START_TEST(test_readers_filtered_per_principal)
{
    fill();
    master_state_stream_tune(X.m, 0, 0, 0);
    const char *who[3] = {"ops", "eve", "eve"};
    for (size_t i = 0; i < 3; i++) {
        R[i] = http_fake_new(X.base, HTTP_GET, "/state");
        char *h = auth_basic_header(who[i], i == 0 ? "so" : "se");
        http_fake_add_header(R[i], "Authorization", h);
        free(h);
        http_fake_dispatch_server(R[i], X.m->http);
    }
    R[3] = http_fake_new(X.base, HTTP_GET, "/health");
    http_fake_dispatch_server(R[3], X.m->http);
    ck_assert(mfx_run_until(&X, all_replied, NULL));
    struct master_state_stream_stats s;
    master_state_stream_stats(X.m, &s);
    ck_assert_uint_eq(s.productions, 3);
    char *b[3];
    for (size_t i = 0; i < 3; i++)
        b[i] = body_of(R[i]);
    ck_assert_uint_eq(tasks_in(b[0]), ntasks);
    ck_assert(strstr(b[0], "\"flags\":{") != NULL);
    ck_assert_uint_eq(tasks_in(b[1]), 0);
    ck_assert(strstr(b[1], "\"flags\":{") == NULL);
    ck_assert_str_eq(b[1], b[2]);
    for (size_t i = 0; i < 4; i++) {
        if (i < 3)
            free(b[i]);
        http_fake_free(R[i]);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("master_state_stream");
    TCase *tc = tcase_create("state_stream");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sliced_body_equals_whole_body);
    tcase_add_test(tc, test_jsonp_and_alias);
    tcase_add_test(tc, test_task_ending_mid_body_appears_once);
    tcase_add_test(tc, test_loop_serves_others_between_slices);
    tcase_add_test(tc, test_concurrent_readers_are_batched);
    tcase_add_test(tc, test_jsonp_readers_not_batched_with_plain);
    tcase_add_test(tc, test_stalled_reader_pauses_production);
    tcase_add_test(tc, test_reader_leaving_ends_production);
    tcase_add_test(tc, test_master_stops_mid_body);
    suite_add_tcase(s, tc);
    tc = tcase_create("views");
    tcase_add_checked_fixture(tc, acl_setup, acl_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_readers_filtered_per_principal);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
