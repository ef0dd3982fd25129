/*
 * End-to-end tests of revocable resources at the master, with a scripted
 * agent and scripted frameworks: an agent's oversubscription estimate
 * offered as revocable only to capable frameworks, and allocation slack
 * (--offer_allocation_slack): resources reserved to role a and unused are
 * offered as revocable to role b; when a framework of a uses them, b's
 * revocable task is evicted.
 */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"

#define FW(role, caps)                                                         \
    "{\"user\":\"u\",\"name\":\"" role "\",\"roles\":[\"" role "\"],"          \
    "\"capabilities\":[{\"type\":\"MULTI_ROLE\"},{\"type\":"                   \
    "\"RESERVATION_REFINEMENT\"}" caps "]}"
#define REVOCABLE_CAP ",{\"type\":\"REVOCABLE_RESOURCES\"}"

static struct e2e_proc master;

/* Offers to fw until one has revocable cpus (declining the others for
 * 0 s). Returns it or NULL. */
static json_t *revocable_offer(struct conn *fw, char *offer, char *agent,
                               int tries)
{
    for (int i = 0; i < tries; i++) {
        json_t *ev = api_wait_offer(fw, offer, agent, T);
        if (ev == NULL)
            return NULL;
        if (api_offered_revocable(ev, "cpus") > 0)
            return ev;
        json_decref(ev);
        api_decline(fw, master.port, offer, 0);
    }
    return NULL;
}

static int launch_with(struct conn *fw, const char *offer, const char *agent,
                       const char *task_id, const char *resources)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[{\"type\":"
             "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\","
             "\"task_id\":{\"value\":\"%s\"},\"agent_id\":{\"value\":\"%s\"},"
             "\"resources\":%s,\"command\":{\"value\":\"sleep 60\"}}]}}],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer, task_id, agent, resources);
    return api_fw_call(fw, master.port, "ACCEPT", "accept", payload);
}

/* The agent's estimate is offered as revocable to capable frameworks only;
 * revocable resources cannot be reserved. */
START_TEST(test_estimate_offered_to_capable_only)
{
    const char *args[] = {"--allocation_interval=50ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
    struct conn ag, capable, plain;
    api_subscribe_agent(&ag, master.port, "host1", AGENT_RES);
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"type\":\"UPDATE_OVERSUBSCRIBED\",\"agent_id\":{\"value\":"
             "\"%s\"},\"update_oversubscribed\":{\"oversubscribed_resources\":"
             "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":"
             "1.5},\"revocable\":{}}]}}",
             ag.id);
    ck_assert_int_eq(
        api_post(master.port, "/api/v1/agent", ag.stream_id, body, NULL, 0),
        202);
    api_subscribe_framework(&plain, master.port, FW("b", ""));
    char offer[256], agent[256];
    for (int i = 0; i < 3; i++) {
        json_t *ev = api_wait_offer(&plain, offer, agent, T);
        ck_assert_ptr_nonnull(ev);
        ck_assert_double_eq(api_offered_revocable(ev, "cpus"), 0);
        json_decref(ev);
        api_decline(&plain, master.port, offer, i == 2 ? 600 : 0);
    }
    api_subscribe_framework(&capable, master.port, FW("c", REVOCABLE_CAP));
    json_t *ev = revocable_offer(&capable, offer, agent, 5);
    ck_assert_ptr_nonnull(ev);
    ck_assert_double_eq(api_offered_revocable(ev, "cpus"), 1.5);
    json_decref(ev);
    /* Reserving revocable cpus through the operator API is refused. */
    snprintf(body, sizeof(body),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"revocable\":{},\"reservations\":[{\"type\":\"DYNAMIC\","
             "\"role\":\"c\"}]}]}}",
             ag.id);
    char reason[512];
    ck_assert_int_eq(
        api_post(master.port, "/api/v1", NULL, body, reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "revocable"));
    api_conn_close(&capable);
    api_conn_close(&plain);
    api_conn_close(&ag);
    e2e_proc_cleanup(&master);
}
END_TEST

/* Allocation slack: b runs on a's unused reservation as revocable; a uses
 * it; b's task is evicted. */
START_TEST(test_allocation_slack_evicts_for_the_owner)
{
    const char *args[] = {"--allocation_interval=50ms",
                          "--offer_allocation_slack", NULL};
    ck_assert_int_eq(e2e_start_master(&master, args), 0);
    struct conn ag, a, b;
    api_subscribe_agent(&ag, master.port, "host1", AGENT_RES);
    char body[2048];
    snprintf(body, sizeof(body),
             "{\"type\":\"RESERVE_RESOURCES\",\"reserve_resources\":{"
             "\"agent_id\":{\"value\":\"%s\"},\"resources\":[{\"name\":"
             "\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\"}]},{"
             "\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":256},"
             "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"a\"}]}]}}",
             ag.id);
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL, body, NULL, 0),
                     202);

    /* b is offered a's slack as revocable and runs a task on it. */
    api_subscribe_framework(&b, master.port, FW("b", REVOCABLE_CAP));
    char offer[256], agent[256];
    json_t *ev = revocable_offer(&b, offer, agent, 10);
    ck_assert_ptr_nonnull(ev);
    ck_assert_double_eq(api_offered_revocable(ev, "cpus"), 1);
    json_decref(ev);
    ck_assert_int_eq(
        launch_with(&b, offer, agent, "slacker",
                    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                    "\"value\":1},\"revocable\":{},\"allocation_info\":{"
                    "\"role\":\"b\"}},{\"name\":\"mem\",\"type\":\"SCALAR\","
                    "\"scalar\":{\"value\":64},\"revocable\":{},"
                    "\"allocation_info\":{\"role\":\"b\"}}]"),
        202);
    json_t *run = api_wait_event(&ag, "RUN_TASK", T);
    ck_assert_ptr_nonnull(run);
    json_decref(run);
    ck_assert_int_eq(api_agent_update(&ag, master.port, b.id, "slacker",
                                      "TASK_RUNNING",
                                      "AAAAAAAAAAAAAAAAAAAAAQ=="),
                     202);

    /* a takes its reservation back. */
    api_subscribe_framework(&a, master.port, FW("a", ""));
    for (int i = 0;; i++) {
        ck_assert_int_lt(i, 10);
        ev = api_wait_offer(&a, offer, agent, T);
        ck_assert_ptr_nonnull(ev);
        double reserved = 0;
        json_t *o = json_array_get(
            json_object_get(json_object_get(ev, "offers"), "offers"), 0);
        size_t k;
        json_t *r;
        json_array_foreach(json_object_get(o, "resources"), k, r)
        {
            if (json_array_size(json_object_get(r, "reservations")) > 0 &&
                strcmp(json_string_value(json_object_get(r, "name")), "cpus") ==
                    0)
                reserved += json_real_value(
                    json_object_get(json_object_get(r, "scalar"), "value"));
        }
        json_decref(ev);
        if (reserved == 1)
            break;
    }
    ck_assert_int_eq(
        launch_with(&a, offer, agent, "owner",
                    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{"
                    "\"value\":1},\"reservations\":[{\"type\":\"DYNAMIC\","
                    "\"role\":\"a\"}],\"allocation_info\":{\"role\":\"a\"}}]"),
        202);
    /* The agent is told to kill b's task (and runs a's). */
    bool killed = false, ran = false;
    for (int i = 0; i < 6 && !(killed && ran); i++) {
        json_t *e = api_next_event(&ag, T);
        ck_assert_ptr_nonnull(e);
        const char *type = json_string_value(json_object_get(e, "type"));
        if (strcmp(type, "KILL_TASK") == 0) {
            json_t *kt = json_object_get(e, "kill_task");
            ck_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(kt, "task_id"), "value")),
                             "slacker");
            ck_assert_str_eq(json_string_value(json_object_get(kt, "reason")),
                             "REASON_CONTAINER_PREEMPTED");
            killed = true;
        } else if (strcmp(type, "RUN_TASK") == 0) {
            ran = true;
        }
        json_decref(e);
    }
    ck_assert(killed && ran);
    json_t *m = api_get_json(master.port, "/metrics/snapshot");
    ck_assert_double_eq(
        json_number_value(json_object_get(m, "master/slack_evictions")), 1);
    json_decref(m);
    api_conn_close(&a);
    api_conn_close(&b);
    api_conn_close(&ag);
    e2e_proc_cleanup(&master);
}
END_TEST

static Suite *slack_suite(void)
{
    Suite *s = suite_create("e2e_slack");
    TCase *tc = tcase_create("slack");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_estimate_offered_to_capable_only);
    tcase_add_test(tc, test_allocation_slack_evicts_for_the_owner);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(slack_suite)
