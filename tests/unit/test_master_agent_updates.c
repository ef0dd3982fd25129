/*
 * The agent API's UPDATES call (several status updates in one request)
 * without sockets (master_fixture.h): applied in order as single UPDATEs
 * would be, refused whole when one entry is malformed, and the single
 * UPDATE of an older agent still accepted.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/frameworks.h"
#include "master/master_types.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"

MFX_STANDARD_FIXTURE

/* A framework, an agent and tasks t1 and t2 launched on it by one ACCEPT
 * (both TASK_STAGING, their RUN_TASKs read). */
static void two_tasks(void)
{
    char offer_id[256];
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    json_decref(mfx_first_offer(&X, &FW, offer_id));
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":["
             "{\"name\":\"a\",\"task_id\":{\"value\":\"t1\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}},"
             "{\"name\":\"b\",\"task_id\":{\"value\":\"t2\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}}]}}]}",
             offer_id, AG.id, SMALL, AG.id, SMALL);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    for (int i = 0; i < 2; i++) {
        json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
        ck_assert_ptr_nonnull(run);
        json_decref(run);
    }
}

static struct task *task_of(const char *task_id)
{
    struct task *t =
        hmap_get(master_framework_find(X.m, FW.id)->tasks, task_id);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* One Update's JSON: task_id in state with uuid (base64, as given). */
static void update_json(char *out, size_t len, const char *task_id,
                        const char *state, const char *uuid)
{
    snprintf(out, len,
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"%s\"},\"state\":\"%s\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"uuid\":\"%s\",\"agent_id\":{\"value\":"
             "\"%s\"}}}",
             FW.id, task_id, state, uuid, AG.id);
}

/* POST an UPDATES call of AG whose updates are the JSON array text
 * entries ("[...]"); returns the exchange. */
static struct http_fake *post_updates(const char *entries)
{
    char *json = xasprintf("{\"type\":\"UPDATES\",\"agent_id\":{\"value\":"
                           "\"%s\"},\"updates\":{\"updates\":%s}}",
                           AG.id, entries);
    struct http_fake *f = mfx_post(&X, master_agent_api, AG.stream_id, json);
    free(json);
    return f;
}

static const char *event_task_state(json_t *ev, const char **task_id)
{
    json_t *st = json_object_get(json_object_get(ev, "update"), "status");
    *task_id = json_string_value(
        json_object_get(json_object_get(st, "task_id"), "value"));
    return json_string_value(json_object_get(st, "state"));
}

#define U1 "AAAAAAAAAAAAAAAAAAAAAQ=="
#define U2 "AAAAAAAAAAAAAAAAAAAAAg=="
#define U3 "AAAAAAAAAAAAAAAAAAAAAw=="

/* Both tasks' updates in one call reach the framework in the batch's
 * order, and the master's tasks take their states; two updates of one
 * task in a batch are applied in their order (the last one wins). */
START_TEST(test_updates_applied_in_order)
{
    two_tasks();
    char a[1024], b[1024], c[1024], entries[4096];
    update_json(a, sizeof(a), "t2", "TASK_STARTING", U1);
    update_json(b, sizeof(b), "t1", "TASK_STARTING", U2);
    update_json(c, sizeof(c), "t1", "TASK_RUNNING", U3);
    snprintf(entries, sizeof(entries), "[%s,%s,%s]", a, b, c);
    struct http_fake *f = post_updates(entries);
    ck_assert_int_eq(http_fake_status(f), 202);
    http_fake_free(f);
    static const char *const want[][2] = {{"t2", "TASK_STARTING"},
                                          {"t1", "TASK_STARTING"},
                                          {"t1", "TASK_RUNNING"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
        ck_assert_ptr_nonnull(ev);
        const char *tid;
        const char *state = event_task_state(ev, &tid);
        ck_assert_str_eq(tid, want[i][0]);
        ck_assert_str_eq(state, want[i][1]);
        json_decref(ev);
    }
    ck_assert_int_eq(task_of("t1")->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_int_eq(task_of("t2")->state,
                     MESOS__V1__TASK_STATE__TASK_STARTING);
    /* The framework's acknowledgement of one goes to the agent as a
     * single ACKNOWLEDGE, as for an UPDATE call. */
    char ack[512];
    snprintf(ack, sizeof(ack),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t2\"},"
             "\"uuid\":\"%s\"}",
             AG.id, U1);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", ack), 202);
    json_t *ev = mfx_next_event(&X, &AG, "ACKNOWLEDGE");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

/* A batch with one bad entry, an empty batch, a missing payload or too
 * many entries: 400 with a one-line reason, no task changes state, the
 * framework gets nothing. */
START_TEST(test_updates_malformed_changes_nothing)
{
    two_tasks();
    char good[1024], bad[1024], entries[4096];
    update_json(good, sizeof(good), "t1", "TASK_RUNNING", U1);
    update_json(bad, sizeof(bad), "t2", "TASK_RUNNING", "AAEC");
    snprintf(entries, sizeof(entries), "[%s,%s]", good, bad);
    struct http_fake *f = post_updates(entries);
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_msg(strstr(mfx_body(f), "updates.updates[1].status.uuid") != NULL,
                  "%s", mfx_body(f));
    /* One line. */
    const char *nl = strchr(mfx_body(f), '\n');
    ck_assert(nl == NULL || nl[1] == '\0');
    http_fake_free(f);

    f = post_updates("[]");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "updates.updates: empty"));
    http_fake_free(f);

    /* An entry without its required status is refused by the decoder. */
    char no_status[2048];
    snprintf(no_status, sizeof(no_status),
             "[%s,{\"framework_id\":{\"value\":\"%s\"}}]", good, FW.id);
    f = post_updates(no_status);
    ck_assert_int_eq(http_fake_status(f), 400);
    http_fake_free(f);

    char *json = xasprintf("{\"type\":\"UPDATES\",\"agent_id\":{\"value\":"
                           "\"%s\"}}",
                           AG.id);
    f = mfx_post(&X, master_agent_api, AG.stream_id, json);
    free(json);
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "updates: required for UPDATES"));
    http_fake_free(f);

    /* One more than MASTER_AGENT_MAX_UPDATES. */
    size_t n = MASTER_AGENT_MAX_UPDATES + 1, len = strlen(good) + 1;
    char *many = xcalloc(n * len + 3, 1), *p = many;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(p, good, len - 1);
        p += len - 1;
        *p++ = i + 1 < n ? ',' : ']';
    }
    f = post_updates(many);
    free(many);
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "more than 1024"));
    http_fake_free(f);

    mfx_settle(&X);
    ck_assert_int_eq(task_of("t1")->state, MESOS__V1__TASK_STATE__TASK_STAGING);
    ck_assert_int_eq(task_of("t2")->state, MESOS__V1__TASK_STATE__TASK_STAGING);
    ck_assert(!mfx_has_event(&FW, "UPDATE"));
}
END_TEST

/* An older agent's single UPDATE is still taken. */
START_TEST(test_single_update_still_accepted)
{
    two_tasks();
    char u[1024];
    update_json(u, sizeof(u), "t1", "TASK_RUNNING", U1);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UPDATE", "update", u), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    const char *tid;
    ck_assert_str_eq(event_task_state(ev, &tid), "TASK_RUNNING");
    ck_assert_str_eq(tid, "t1");
    json_decref(ev);
    ck_assert_int_eq(task_of("t1")->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
}
END_TEST

static Suite *master_agent_updates_suite(void)
{
    Suite *s = suite_create("master_agent_updates");
    TCase *tc = tcase_create("updates");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_updates_applied_in_order);
    tcase_add_test(tc, test_updates_malformed_changes_nothing);
    tcase_add_test(tc, test_single_update_still_accepted);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_agent_updates_suite)
