/*
 * The master's call handling without sockets: the scheduler, agent and
 * operator APIs driven through fake requests (master_fixture.h). Each
 * rejection path asserts the reply, the events queued (or not) and that the
 * master's state did not change.
 */
#include <check.h>
#include <string.h>

#include "check_main.h"
#include "common/resources.h"
#include "master/agents.h"
#include "master/frameworks.h"
#include "master/operator_api.h"
#include "master/registry_mem.h"
#include "master/scheduler_api.h"
#include "master_fixture.h"

#define FW_INFO                                                                \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],"                     \
    "\"failover_timeout\":60,\"capabilities\":[{\"type\":\"MULTI_ROLE\"}]}"
#define FW_INFO_PA                                                             \
    "{\"user\":\"u\",\"name\":\"fw\",\"roles\":[\"web\"],\"capabilities\":[{"  \
    "\"type\":\"MULTI_ROLE\"},{\"type\":\"PARTITION_AWARE\"}]}"

MFX_STANDARD_FIXTURE

/* A framework and an agent (cpus:2;mem:1024), and the framework's first
 * offer. */
static json_t *cluster(const char *fw_info, char *offer_id)
{
    mfx_framework_subscribe(&X, &FW, fw_info);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    return mfx_first_offer(&X, &FW, offer_id);
}

static struct framework *fw_state(void)
{
    return master_framework_find(X.m, FW.id);
}

static const char *update_state(json_t *ev)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), "state"));
}

static const char *update_field(json_t *ev, const char *field)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "update"), "status"), field));
}

/* ACCEPT of offer_id launching one task with id and resources (JSON
 * array). */
static int launch(const char *offer_id, const char *task_id,
                  const char *resources_json)
{
    char payload[2048];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"true\"}}]}}]}",
             offer_id, task_id, AG.id, resources_json);
    return mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload);
}

#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},{"    \
    "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"
#define HUGE                                                                   \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"

/* ---- The prologue: every API, every malformed call ---------------------- */

START_TEST(test_subscribe_framework)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    ck_assert_int_eq(http_fake_status(FW.stream), 200);
    ck_assert_str_eq(http_fake_content_type(FW.stream), HTTP_CONTENT_JSON);
    struct framework *fw = fw_state();
    ck_assert_ptr_nonnull(fw);
    ck_assert(fw->active);
    ck_assert_str_eq(fw->stream_id, FW.stream_id);
    ck_assert_uint_eq(X.m->metrics.messages_register_framework, 1);
    /* Durable before the reply: the registry holds it. */
    ck_assert_int_eq(registry_mem_count(X.store, "framework"), 1);
}
END_TEST

START_TEST(test_malformed_calls)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    uint64_t invalid = X.m->metrics.invalid_calls;
    static const struct {
        const char *json;
        int status;
        const char *reason;
    } cases[] = {
        {"{", 400, "invalid JSON"},
        {"{\"type\":\"NOPE\"}", 400, "type"},
        {"{\"type\":\"UNKNOWN\"}", 400, "unknown call type"},
        {"{}", 400, "unknown call type"},
        {"{\"type\":\"SUBSCRIBE\"}", 400, "subscribe: required for SUBSCRIBE"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_fake *f =
            mfx_post(&X, master_scheduler_api, NULL, cases[i].json);
        ck_assert_int_eq(http_fake_status(f), cases[i].status);
        ck_assert_msg(strstr(mfx_body(f), cases[i].reason) != NULL, "%s: %s",
                      cases[i].json, mfx_body(f));
        http_fake_free(f);
    }
    ck_assert_uint_eq(X.m->metrics.invalid_calls, invalid + 5);
    /* Nothing reached the framework or the framework table. */
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 1);
    ck_assert_uint_eq(mfx_unread(&FW), 0);
}
END_TEST

START_TEST(test_content_negotiation)
{
    struct http_fake *f = http_fake_new(X.base, HTTP_POST, "/api/v1/scheduler");
    http_fake_add_header(f, "Content-Type", "text/plain");
    http_fake_set_body(f, "{}", 2);
    http_fake_dispatch(f, master_scheduler_api, X.m);
    ck_assert_int_eq(http_fake_status(f), 415);
    http_fake_free(f);
    f = http_fake_new(X.base, HTTP_POST, "/api/v1");
    http_fake_add_header(f, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_add_header(f, "Accept", "text/html");
    http_fake_set_body(f, "{\"type\":\"GET_HEALTH\"}", 21);
    http_fake_dispatch(f, master_operator_api, X.m);
    ck_assert_int_eq(http_fake_status(f), 406);
    http_fake_free(f);
}
END_TEST

START_TEST(test_session_checks)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char json[512];
    /* No Mesos-Stream-Id. */
    snprintf(json, sizeof(json),
             "{\"framework_id\":{\"value\":\"%s\"},\"type\":\"REVIVE\"}",
             FW.id);
    struct http_fake *f = mfx_post(&X, master_scheduler_api, NULL, json);
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "Mesos-Stream-Id"));
    http_fake_free(f);
    /* Another stream's id. */
    ck_assert_int_eq(mfx_post_status(&X, master_scheduler_api,
                                     "00000000-0000-0000-0000-000000000000",
                                     json),
                     400);
    /* An unknown framework. */
    ck_assert_int_eq(
        mfx_post_status(&X, master_scheduler_api, FW.stream_id,
                        "{\"framework_id\":{\"value\":\"nobody\"},\"type\":"
                        "\"REVIVE\"}"),
        400);
    /* No framework_id at all. */
    ck_assert_int_eq(mfx_post_status(&X, master_scheduler_api, FW.stream_id,
                                     "{\"type\":\"REVIVE\"}"),
                     400);
    ck_assert_uint_eq(X.m->metrics.messages_revive_offers, 0);
    /* The right one. */
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 202);
    ck_assert_uint_eq(X.m->metrics.messages_revive_offers, 1);
    /* After the stream closes: 403. */
    http_fake_disconnect(FW.stream);
    mfx_settle(&X);
    ck_assert(!fw_state()->active);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "REVIVE", NULL, NULL), 403);
}
END_TEST

START_TEST(test_missing_payload_every_api)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    struct {
        int status;
        const char *want;
    } got[3];
    char json[512];
    snprintf(json, sizeof(json),
             "{\"framework_id\":{\"value\":\"%s\"},\"type\":\"KILL\"}", FW.id);
    struct http_fake *f =
        mfx_post(&X, master_scheduler_api, FW.stream_id, json);
    got[0].status = http_fake_status(f);
    ck_assert_str_eq(mfx_body(f), "kill: required for KILL\n");
    http_fake_free(f);
    snprintf(json, sizeof(json),
             "{\"agent_id\":{\"value\":\"%s\"},\"type\":\"PONG\"}", AG.id);
    f = mfx_post(&X, master_agent_api, AG.stream_id, json);
    got[1].status = http_fake_status(f);
    ck_assert_str_eq(mfx_body(f), "pong: required for PONG\n");
    http_fake_free(f);
    f = mfx_operator(&X, "{\"type\":\"DRAIN_AGENT\"}");
    got[2].status = http_fake_status(f);
    ck_assert_str_eq(mfx_body(f), "drain_agent: required for DRAIN_AGENT\n");
    http_fake_free(f);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(got[i].status, 400);
    /* Every operator call of Mesos 1.11 is served now (no 501 left to
     * show); READ_FILE without its payload is refused like the others. */
    f = mfx_operator(&X, "{\"type\":\"READ_FILE\"}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_str_eq(mfx_body(f), "read_file: required for READ_FILE\n");
    http_fake_free(f);
}
END_TEST

/* ---- ACCEPT and LAUNCH ----------------------------------------------------
 */

START_TEST(test_accept_malformed_changes_nothing)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO, offer_id));
    size_t offers = hmap_count(X.m->offers);
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{}]}",
             offer_id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     400);
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\"}]}",
             offer_id);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     400);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", NULL, NULL), 400);
    /* The offer stands, no task, nothing sent anywhere. */
    ck_assert_uint_eq(hmap_count(X.m->offers), offers);
    ck_assert_ptr_nonnull(hmap_get(X.m->offers, offer_id));
    ck_assert_uint_eq(hmap_count(fw_state()->tasks), 0);
    ck_assert_uint_eq(X.m->metrics.messages_launch_tasks, 0);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    ck_assert(!mfx_has_event(&FW, "UPDATE"));
}
END_TEST

START_TEST(test_accept_stale_offer)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO, offer_id));
    ck_assert_int_eq(launch("no-such-offer", "t1", SMALL), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    /* Not partition-aware: TASK_LOST, REASON_INVALID_OFFERS. */
    ck_assert_str_eq(update_state(ev), "TASK_LOST");
    ck_assert_str_eq(update_field(ev, "reason"), "REASON_INVALID_OFFERS");
    ck_assert_ptr_nonnull(
        strstr(update_field(ev, "message"), "no longer valid"));
    json_decref(ev);
    ck_assert_uint_eq(hmap_count(fw_state()->tasks), 0);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    /* The real offer is untouched. */
    ck_assert_ptr_nonnull(hmap_get(X.m->offers, offer_id));
}
END_TEST

START_TEST(test_accept_stale_offer_partition_aware)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO_PA, offer_id));
    ck_assert_int_eq(launch("no-such-offer", "t1", SMALL), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_str_eq(update_state(ev), "TASK_DROPPED");
    json_decref(ev);
}
END_TEST

START_TEST(test_launch_too_big)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO, offer_id));
    ck_assert_int_eq(launch(offer_id, "big", HUGE), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(update_state(ev), "TASK_ERROR");
    json_decref(ev);
    /* The offer is used up (its resources went back), no task, no
     * RUN_TASK. */
    ck_assert_ptr_null(hmap_get(X.m->offers, offer_id));
    ck_assert_uint_eq(hmap_count(fw_state()->tasks), 0);
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
    ck_assert_uint_eq(X.m->metrics.offers_accepted, 1);
}
END_TEST

START_TEST(test_launch_duplicate_id)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO, offer_id));
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":["
             "{\"name\":\"a\",\"task_id\":{\"value\":\"dup\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}},"
             "{\"name\":\"b\",\"task_id\":{\"value\":\"dup\"},\"agent_id\":{"
             "\"value\":\"%s\"},\"resources\":%s,\"command\":{\"value\":"
             "\"true\"}}]}}]}",
             offer_id, AG.id, SMALL, AG.id, SMALL);
    ck_assert_int_eq(mfx_framework_call(&X, &FW, "ACCEPT", "accept", payload),
                     202);
    json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_str_eq(update_state(ev), "TASK_ERROR");
    json_decref(ev);
    /* One task, the first. */
    ck_assert_uint_eq(hmap_count(fw_state()->tasks), 1);
    struct task *t = hmap_get(fw_state()->tasks, "dup");
    ck_assert_str_eq(t->info->name, "a");
    ck_assert(!mfx_has_event(&AG, "RUN_TASK"));
}
END_TEST

/* Launch "t1" and move it to TASK_RUNNING through the agent. Returns the
 * update's uuid (base64) in uuid. */
static void running_task(char *uuid, size_t len)
{
    char offer_id[256];
    json_decref(cluster(FW_INFO, offer_id));
    ck_assert_int_eq(launch(offer_id, "t1", SMALL), 202);
    json_t *run = mfx_next_event(&X, &AG, "RUN_TASK");
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    struct task *t = hmap_get(fw_state()->tasks, "t1");
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_STAGING);
    snprintf(uuid, len, "AAECAwQFBgcICQoLDA0ODw==");
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"uuid\":\"%s\",\"agent_id\":{\"value\":"
             "\"%s\"}}}",
             FW.id, uuid, AG.id);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UPDATE", "update", payload), 202);
}

START_TEST(test_update_forwarded_and_acknowledged)
{
    char uuid[64];
    running_task(uuid, sizeof(uuid));
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(update_state(ev), "TASK_RUNNING");
    ck_assert_str_eq(update_field(ev, "uuid"), uuid);
    json_decref(ev);
    struct task *t = hmap_get(fw_state()->tasks, "t1");
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    char payload[512];
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t1\"},"
             "\"uuid\":\"%s\"}",
             AG.id, uuid);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", payload),
        202);
    json_t *ack = mfx_next_event(&X, &AG, "ACKNOWLEDGE");
    ck_assert_ptr_nonnull(ack);
    json_decref(ack);
    ck_assert(mfx_metric(&X, "master/valid_status_update_acknowledgements") ==
              1);
    ck_assert(mfx_metric(&X, "master/invalid_status_update_acknowledgements") ==
              0);
}
END_TEST

/* Mesos's invalid acknowledgements: for an agent the master does not have,
 * for an agent whose stream is gone, for a task whose update did not come
 * through this master; each counted, none counted valid. */
START_TEST(test_acknowledgement_metrics)
{
    char uuid[64];
    running_task(uuid, sizeof(uuid));
    json_decref(mfx_next_event(&X, &FW, "UPDATE"));
    char payload[512];
    /* Unknown agent. */
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"no-such-agent\"},\"task_id\":{"
             "\"value\":\"t1\"},\"uuid\":\"%s\"}",
             uuid);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", payload),
        202);
    ck_assert(mfx_metric(&X, "master/invalid_status_update_acknowledgements") ==
              1);
    /* A task whose update the master has not seen. */
    struct task *t = hmap_get(fw_state()->tasks, "t1");
    t->has_status_update_state = false;
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":"
             "\"t1\"},\"uuid\":\"%s\"}",
             AG.id, uuid);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", payload),
        202);
    ck_assert(mfx_metric(&X, "master/invalid_status_update_acknowledgements") ==
              2);
    t->has_status_update_state = true;
    /* The agent disconnected. */
    http_fake_disconnect(AG.stream);
    mfx_settle(&X);
    ck_assert_ptr_null(master_agent_find(X.m, AG.id)->stream);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", payload),
        202);
    ck_assert(mfx_metric(&X, "master/invalid_status_update_acknowledgements") ==
              3);
    ck_assert(mfx_metric(&X, "master/valid_status_update_acknowledgements") ==
              0);
    ck_assert(mfx_metric(&X, "master/messages_status_update_acknowledgement") ==
              3);
}
END_TEST

START_TEST(test_update_refusals)
{
    char uuid[64];
    running_task(uuid, sizeof(uuid));
    json_decref(mfx_next_event(&X, &FW, "UPDATE"));
    size_t unread = mfx_unread(&FW);
    /* A 3-byte uuid. */
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"framework_id\":{\"value\":\"%s\"},\"status\":{\"task_id\":{"
             "\"value\":\"t1\"},\"state\":\"TASK_FINISHED\",\"source\":"
             "\"SOURCE_EXECUTOR\",\"uuid\":\"AAEC\",\"agent_id\":{\"value\":"
             "\"%s\"}}}",
             FW.id, AG.id);
    ck_assert_int_eq(mfx_agent_call(&X, &AG, "UPDATE", "update", payload), 400);
    /* The same update from no stream, and from another agent id. */
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"agent_id\":{\"value\":\"%s\"},\"type\":\"UPDATE\",\"update\":"
             "%s}",
             AG.id, payload);
    ck_assert_int_eq(mfx_post_status(&X, master_agent_api, NULL, json), 400);
    snprintf(json, sizeof(json),
             "{\"agent_id\":{\"value\":\"other\"},\"type\":\"UPDATE\","
             "\"update\":%s}",
             payload);
    ck_assert_int_eq(mfx_post_status(&X, master_agent_api, AG.stream_id, json),
                     403);
    /* An ACKNOWLEDGE whose uuid is not 16 bytes. */
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"task_id\":{\"value\":\"t1\"},"
             "\"uuid\":\"AAEC\"}",
             AG.id);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "ACKNOWLEDGE", "acknowledge", payload),
        400);
    /* Nothing changed, nothing sent. */
    struct task *t = hmap_get(fw_state()->tasks, "t1");
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_uint_eq(mfx_unread(&FW), unread);
    ck_assert(!mfx_has_event(&AG, "ACKNOWLEDGE"));
}
END_TEST

/* ---- Reconciliation ------------------------------------------------------ */

START_TEST(test_reconcile_answers)
{
    char uuid[64];
    running_task(uuid, sizeof(uuid));
    json_decref(mfx_next_event(&X, &FW, "UPDATE"));
    /* Explicit: the known task, an unknown one on the known agent, an
     * unknown one on no agent. */
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"tasks\":[{\"task_id\":{\"value\":\"t1\"}},{\"task_id\":{"
             "\"value\":\"ghost\"},\"agent_id\":{\"value\":\"%s\"}},{"
             "\"task_id\":{\"value\":\"nowhere\"}}]}",
             AG.id);
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "RECONCILE", "reconcile", payload), 202);
    const char *want[][2] = {{"t1", "TASK_RUNNING"},
                             {"ghost", "TASK_LOST"},
                             {"nowhere", "TASK_LOST"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
        ck_assert_ptr_nonnull(ev);
        json_t *st = json_object_get(json_object_get(ev, "update"), "status");
        ck_assert_str_eq(json_string_value(json_object_get(
                             json_object_get(st, "task_id"), "value")),
                         want[i][0]);
        ck_assert_str_eq(update_state(ev), want[i][1]);
        ck_assert_str_eq(update_field(ev, "reason"), "REASON_RECONCILIATION");
        /* The master's answers need no acknowledgement. */
        ck_assert_ptr_null(update_field(ev, "uuid"));
        json_decref(ev);
    }
    /* Implicit: every task the master knows. */
    ck_assert_int_eq(
        mfx_framework_call(&X, &FW, "RECONCILE", "reconcile", "{}"), 202);
    json_t *ev = mfx_next_event(&X, &FW, "UPDATE");
    ck_assert_str_eq(update_state(ev), "TASK_RUNNING");
    json_decref(ev);
    ck_assert(!mfx_has_event(&FW, "UPDATE"));
    ck_assert_uint_eq(X.m->metrics.messages_reconcile_tasks, 2);
}
END_TEST

/* ---- Operator refusals --------------------------------------------------- */

START_TEST(test_maintenance_refusals)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:1;mem:128");
    static const char *const bad[] = {
        /* A window with no machines. */
        "{\"type\":\"UPDATE_MAINTENANCE_SCHEDULE\","
        "\"update_maintenance_schedule\":{\"schedule\":{\"windows\":[{"
        "\"machine_ids\":[],\"unavailability\":{\"start\":{\"nanoseconds\":"
        "1}}}]}}}",
        /* A negative duration. */
        "{\"type\":\"UPDATE_MAINTENANCE_SCHEDULE\","
        "\"update_maintenance_schedule\":{\"schedule\":{\"windows\":[{"
        "\"machine_ids\":[{\"hostname\":\"host1\"}],\"unavailability\":{"
        "\"start\":{\"nanoseconds\":1},\"duration\":{\"nanoseconds\":-5}}}]}}}",
        /* Down for a machine in no schedule. */
        "{\"type\":\"START_MAINTENANCE\",\"start_maintenance\":{\"machines\":"
        "[{\"hostname\":\"host1\"}]}}",
        /* Up for a machine that is not down. */
        "{\"type\":\"STOP_MAINTENANCE\",\"stop_maintenance\":{\"machines\":"
        "[{\"hostname\":\"host1\"}]}}",
        /* A negative grace period. */
        "{\"type\":\"DRAIN_AGENT\",\"drain_agent\":{\"agent_id\":{\"value\":"
        "\"x\"},\"max_grace_period\":{\"seconds\":-1}}}",
    };
    long stored = registry_mem_count(X.store, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct http_fake *f = mfx_operator(&X, bad[i]);
        ck_assert_msg(http_fake_status(f) == 400, "%s: %d %s", bad[i],
                      http_fake_status(f), mfx_body(f));
        http_fake_free(f);
    }
    /* Unknown agents: 404 for drain, as Mesos. */
    struct http_fake *f =
        mfx_operator(&X, "{\"type\":\"DEACTIVATE_AGENT\",\"deactivate_agent\":{"
                         "\"agent_id\":{\"value\":\"nobody\"}}}");
    ck_assert_int_ge(http_fake_status(f), 400);
    ck_assert_int_lt(http_fake_status(f), 500);
    http_fake_free(f);
    /* Nothing changed: no schedule, no machine, the agent active, the
     * registry as it was, no event to the agent. */
    ck_assert_ptr_null(X.m->schedule);
    ck_assert_uint_eq(hmap_count(X.m->machines), 0);
    ck_assert(!master_agent_find(X.m, AG.id)->deactivated);
    ck_assert_int_eq(registry_mem_count(X.store, NULL), stored);
    ck_assert(!mfx_has_event(&AG, "DRAIN"));
}
END_TEST

START_TEST(test_reservation_refusals)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char json[1024];
    long stored = registry_mem_count(X.store, NULL);
    /* An unknown agent. */
    struct http_fake *f = mfx_operator(
        &X, "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
            "\"agent_id\":{\"value\":\"nobody\"},\"resources\":[]}}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_ptr_nonnull(strstr(mfx_body(f), "No agent found"));
    http_fake_free(f);
    /* More than the agent has. */
    snprintf(json, sizeof(json),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":8},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG.id);
    f = mfx_operator(&X, json);
    ck_assert_int_eq(http_fake_status(f) / 100, 4);
    http_fake_free(f);
    /* Unreserving what is not reserved. */
    snprintf(json, sizeof(json),
             "{\"type\":\"UNRESERVE_RESOURCES\",\"unreserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG.id);
    f = mfx_operator(&X, json);
    ck_assert_int_eq(http_fake_status(f) / 100, 4);
    http_fake_free(f);
    /* Destroying a volume that does not exist. */
    snprintf(
        json, sizeof(json),
        "{\"type\":\"DESTROY_VOLUMES\",\"destroy_volumes\":{"
        "\"agent_id\":{\"value\":\"%s\"},\"volumes\":[{\"name\":\"disk\","
        "\"type\":\"SCALAR\",\"scalar\":{\"value\":1},\"reservations\":[{"
        "\"type\":\"DYNAMIC\",\"role\":\"web\"}],\"disk\":{\"persistence\":"
        "{\"id\":\"v\"},\"volume\":{\"mode\":\"RW\",\"container_path\":"
        "\"v\"}}}]}}",
        AG.id);
    f = mfx_operator(&X, json);
    ck_assert_int_eq(http_fake_status(f) / 100, 4);
    http_fake_free(f);
    /* Nothing changed: no checkpointed resources, none sent, the registry
     * as it was. */
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt.n, 0);
    ck_assert_uint_eq(ag->ckpt_version, 0);
    ck_assert(!mfx_has_event(&AG, "CHECKPOINT_RESOURCES"));
    ck_assert_int_eq(registry_mem_count(X.store, NULL), stored);
    /* And a good one goes through: durable, then sent. */
    snprintf(json, sizeof(json),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG.id);
    f = mfx_operator(&X, json);
    ck_assert_int_eq(http_fake_status(f) / 100, 2);
    http_fake_free(f);
    ck_assert_uint_eq(ag->ckpt_version, 1);
    json_t *ev = mfx_next_event(&X, &AG, "CHECKPOINT_RESOURCES");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
}
END_TEST

START_TEST(test_registry_failure_refuses_subscribe)
{
    registry_mem_set_failing(X.store, true);
    struct http_fake *f = mfx_post(
        &X, master_scheduler_api, NULL,
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"framework_info\":" FW_INFO
        "}}");
    ck_assert_int_eq(http_fake_status(f), 503);
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->frameworks), 0);
    registry_mem_set_failing(X.store, false);
}
END_TEST

START_TEST(test_restart_recovers_framework)
{
    mfx_framework_subscribe(&X, &FW, FW_INFO);
    char id[256];
    snprintf(id, sizeof(id), "%s", FW.id);
    mfx_restart(&X);
    struct framework *fw = master_framework_find(X.m, id);
    ck_assert_ptr_nonnull(fw);
    ck_assert(!fw->active);
}
END_TEST

START_TEST(test_agent_subscribe_refusals)
{
    static const struct {
        const char *agent_info;
        const char *reason;
    } bad[] = {
        {"{\"hostname\":\"\"}", "hostname: empty"},
        {"{\"hostname\":\"h\",\"port\":70000}", "port: out of range"},
        {"{\"hostname\":\"h\",\"resources\":[{\"name\":\"cpus\",\"type\":"
         "\"SCALAR\",\"scalar\":{\"value\":-1}}]}",
         "resources"},
        {"{\"hostname\":\"h\",\"resources\":[{\"name\":\"cpus\",\"type\":"
         "\"SCALAR\",\"scalar\":{\"value\":1},\"revocable\":{}}]}",
         "only unreserved or statically reserved"},
        {"{\"hostname\":\"h\",\"resources\":[{\"name\":\"cpus\",\"type\":"
         "\"SCALAR\",\"scalar\":{\"value\":1},\"reservations\":[{\"type\":"
         "\"DYNAMIC\",\"role\":\"web\"}]}]}",
         "only unreserved or statically reserved"},
        {"{\"hostname\":\"h\",\"id\":{\"value\":\"\"}}", "1 to 255 bytes"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":%s}}",
                 bad[i].agent_info);
        struct http_fake *f = mfx_post(&X, master_agent_api, NULL, json);
        ck_assert_msg(http_fake_status(f) == 400 &&
                          strstr(mfx_body(f), bad[i].reason) != NULL,
                      "%s: %d %s", bad[i].agent_info, http_fake_status(f),
                      mfx_body(f));
        http_fake_free(f);
    }
    /* A SUBSCRIBE carrying a stream id. */
    ck_assert_int_eq(
        mfx_post_status(&X, master_agent_api, "x",
                        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":"
                        "{\"hostname\":\"h\"}}}"),
        400);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    ck_assert_int_eq(registry_mem_count(X.store, NULL), 0);
    ck_assert_uint_eq(X.m->metrics.slave_registrations, 0);
}
END_TEST

/* An operator's RESERVE that lands while the agent's re-registration is
 * being recorded is kept: the registration does not put back the older
 * checkpointed resources it read, and the agent's new stream gets the
 * newer list. */
START_TEST(test_reserve_during_reregistration)
{
    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024");
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{"
             "\"id\":{\"value\":\"%s\"},\"hostname\":\"host1\",\"port\":5051,"
             "\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":2}},{\"name\":\"mem\",\"type\":\"SCALAR\","
             "\"scalar\":{\"value\":1024}}]},\"version\":\"test\","
             "\"address\":{\"ip\":\"127.0.0.2\",\"port\":5051}}}",
             AG.id);
    struct http_fake *again = http_fake_new(X.base, HTTP_POST, "/api/v1/agent");
    http_fake_add_header(again, "Content-Type", HTTP_CONTENT_JSON);
    http_fake_set_body(again, json, strlen(json));
    /* Dispatched, its registry write queued, not yet done. */
    http_fake_dispatch(again, master_agent_api, X.m);
    ck_assert(!http_fake_replied(again));
    snprintf(json, sizeof(json),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"web\"}]}]}}",
             AG.id);
    struct http_fake *f = mfx_operator(&X, json);
    ck_assert_int_eq(http_fake_status(f) / 100, 2);
    http_fake_free(f);
    mfx_settle(&X);
    ck_assert(http_fake_is_stream(again));
    struct agent *ag = master_agent_find(X.m, AG.id);
    ck_assert_uint_eq(ag->ckpt_version, 1);
    ck_assert_uint_eq(ag->ckpt.n, 1);
    /* The new stream carries the list. */
    struct mfx_peer ag2 = {.stream = again};
    json_t *ev = mfx_next_event(&X, &ag2, "CHECKPOINT_RESOURCES");
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    mfx_peer_free(&ag2);
}
END_TEST

/* The allocator keeps at most ALLOC_MAX_NAMES scalar resource names: an
 * agent whose resources would bring more is refused before anything is
 * recorded, and so is an estimate; known names are still welcome. */
START_TEST(test_agent_resource_name_cap)
{
    mfx_fill_resource_names(&X);

    struct http_fake *f = mfx_post(
        &X, master_agent_api, NULL,
        "{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"agent_info\":{\"hostname\":"
        "\"h\",\"resources\":[{\"name\":\"cpus\",\"type\":\"SCALAR\","
        "\"scalar\":{\"value\":1}},{\"name\":\"fresh\",\"type\":\"SCALAR\","
        "\"scalar\":{\"value\":1}}]}}}");
    ck_assert_int_eq(http_fake_status(f), 400);
    ck_assert_msg(strstr(mfx_body(f), "distinct scalar resource names"), "%s",
                  mfx_body(f));
    http_fake_free(f);
    ck_assert_uint_eq(hmap_count(X.m->agents), 0);
    ck_assert_int_eq(registry_mem_count(X.store, NULL), 0);

    mfx_agent_subscribe(&X, &AG, "host1", "cpus:2;mem:1024;x3:5");
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "UPDATE_OVERSUBSCRIBED",
                       "update_oversubscribed",
                       "{\"oversubscribed_resources\":[{\"name\":\"fresh\","
                       "\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
                       "\"revocable\":{}}]}"),
        400);
    ck_assert_uint_eq(master_agent_find(X.m, AG.id)->estimate.n, 0);
    ck_assert_int_eq(
        mfx_agent_call(&X, &AG, "UPDATE_OVERSUBSCRIBED",
                       "update_oversubscribed",
                       "{\"oversubscribed_resources\":[{\"name\":\"x3\","
                       "\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
                       "\"revocable\":{}}]}"),
        202);
    ck_assert_uint_eq(master_agent_find(X.m, AG.id)->estimate.n, 1);
}
END_TEST

static Suite *master_calls_suite(void)
{
    Suite *s = suite_create("master_calls");
    TCase *tc = tcase_create("prologue");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_subscribe_framework);
    tcase_add_test(tc, test_malformed_calls);
    tcase_add_test(tc, test_content_negotiation);
    tcase_add_test(tc, test_session_checks);
    tcase_add_test(tc, test_missing_payload_every_api);
    tcase_add_test(tc, test_agent_subscribe_refusals);
    tcase_add_test(tc, test_agent_resource_name_cap);
    suite_add_tcase(s, tc);
    tc = tcase_create("accept");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_accept_malformed_changes_nothing);
    tcase_add_test(tc, test_accept_stale_offer);
    tcase_add_test(tc, test_accept_stale_offer_partition_aware);
    tcase_add_test(tc, test_launch_too_big);
    tcase_add_test(tc, test_launch_duplicate_id);
    suite_add_tcase(s, tc);
    tc = tcase_create("updates");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_update_forwarded_and_acknowledged);
    tcase_add_test(tc, test_acknowledgement_metrics);
    tcase_add_test(tc, test_update_refusals);
    tcase_add_test(tc, test_reconcile_answers);
    suite_add_tcase(s, tc);
    tc = tcase_create("operator");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_maintenance_refusals);
    tcase_add_test(tc, test_reservation_refusals);
    tcase_add_test(tc, test_reserve_during_reregistration);
    suite_add_tcase(s, tc);
    tc = tcase_create("registry");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_registry_failure_refuses_subscribe);
    tcase_add_test(tc, test_restart_recovers_framework);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(master_calls_suite)
