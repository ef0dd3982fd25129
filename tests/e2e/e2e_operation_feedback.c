/*
 * End-to-end test of offer operation feedback with the real master and
 * agent: a framework RESERVEs with an operation id and receives
 * OPERATION_FINISHED (with a uuid) once the master made the change durable,
 * the agent checkpoints the reservation, GET_OPERATIONS lists the
 * operation until the framework acknowledges it, RECONCILE_OPERATIONS then
 * answers OPERATION_UNKNOWN; a refused UNRESERVE with an id is answered
 * OPERATION_ERROR and changes nothing.
 */
#include "harness.h"
#include "harness_api.h"

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const MASTER_FLAGS[] = {"--allocation_interval=50ms", NULL};
static const char *const AGENT_FLAGS[] = {
    "--resources=cpus:2;mem:512;disk:1024", "--hostname=agent0", NULL};

#define FRAMEWORK_INFO                                                         \
    "{\"user\":\"nobody\",\"name\":\"opfeed\",\"roles\":[\"eng\"],"            \
    "\"principal\":\"ops\",\"capabilities\":[{\"type\":\"MULTI_ROLE\"},"       \
    "{\"type\":\"RESERVATION_REFINEMENT\"}]}"
#define RESV(name, value)                                                      \
    "{\"name\":\"" name "\",\"type\":\"SCALAR\",\"scalar\":{\"value\":" value  \
    "},\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","              \
    "\"principal\":\"ops\"}],\"allocation_info\":{\"role\":\"eng\"}}"

static struct e2e_proc master, agent;

static void teardown(void)
{
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* ACCEPT offer with one operation (its JSON); returns the status. */
static int accept_op(struct conn *fw, const char *offer, const char *op)
{
    char payload[4096];
    snprintf(payload, sizeof(payload),
             "{\"offer_ids\":[{\"value\":\"%s\"}],\"operations\":[%s],"
             "\"filters\":{\"refuse_seconds\":0}}",
             offer, op);
    return api_fw_call(fw, master.port, "ACCEPT", "accept", payload);
}

/* The latest offer seen while waiting for something else (offers and
 * operation statuses arrive in either order). */
static char last_offer[256];

/* The next event of type on fw; OFFERS on the way are remembered in
 * last_offer. NULL when none came in time. */
static json_t *wait_for(struct conn *fw, const char *type)
{
    for (;;) {
        json_t *ev = api_next_event(fw, T);
        if (ev == NULL)
            return NULL;
        const char *t = json_string_value(json_object_get(ev, "type"));
        if (t != NULL && strcmp(t, "OFFERS") == 0) {
            const char *id = json_string_value(json_object_get(
                json_object_get(
                    json_array_get(json_object_get(
                                       json_object_get(ev, "offers"), "offers"),
                                   0),
                    "id"),
                "value"));
            if (id != NULL)
                snprintf(last_offer, sizeof(last_offer), "%s", id);
        }
        if (t != NULL && strcmp(t, type) == 0)
            return ev;
        json_decref(ev);
    }
}

/* The next operation status of fw (borrowed from *ev, which the caller
 * decrefs). */
static json_t *next_status(struct conn *fw, json_t **ev)
{
    *ev = wait_for(fw, "UPDATE_OPERATION_STATUS");
    ck_assert_msg(*ev != NULL, "no UPDATE_OPERATION_STATUS");
    return json_object_get(json_object_get(*ev, "update_operation_status"),
                           "status");
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* How many operations GET_OPERATIONS lists. */
static size_t operations_listed(void)
{
    char body[16384];
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL,
                              "{\"type\":\"GET_OPERATIONS\"}", body,
                              sizeof(body)),
                     200);
    json_error_t e;
    json_t *j = json_loads(body, 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s", body);
    size_t n = json_array_size(
        json_object_get(json_object_get(j, "get_operations"), "operations"));
    json_decref(j);
    return n;
}

static bool ckpt_version_reached(void *arg)
{
    return api_agent_ckpt_version(agent.port) >= *(const long long *)arg;
}

START_TEST(test_reserve_with_feedback)
{
    ck_assert_int_eq(e2e_start_master(&master, MASTER_FLAGS), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    struct conn fw;
    api_subscribe_framework(&fw, master.port, FRAMEWORK_INFO);
    char offer[256], agent_id[256];
    json_t *ev = api_wait_offer(&fw, offer, agent_id, T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    last_offer[0] = '\0';

    /* RESERVE with an id: OPERATION_FINISHED, reliable (uuid). */
    ck_assert_int_eq(
        accept_op(&fw, offer,
                  "{\"type\":\"RESERVE\",\"id\":{\"value\":\"op-1\"},"
                  "\"reserve\":{\"resources\":[" RESV("cpus", "1") "]}}"),
        202);
    json_t *st = next_status(&fw, &ev);
    ck_assert_str_eq(str(st, "state"), "OPERATION_FINISHED");
    ck_assert_str_eq(str(json_object_get(st, "operation_id"), "value"), "op-1");
    ck_assert_str_eq(str(json_object_get(st, "agent_id"), "value"), agent_id);
    char uuid[64];
    ck_assert_ptr_nonnull(str(json_object_get(st, "uuid"), "value"));
    snprintf(uuid, sizeof(uuid), "%s",
             str(json_object_get(st, "uuid"), "value"));
    json_decref(ev);
    /* The agent checkpoints it. */
    long long v1 = 1;
    ck_assert(e2e_poll_until(ckpt_version_reached, &v1, 10000));
    /* Listed until acknowledged. */
    ck_assert_uint_eq(operations_listed(), 1);
    char payload[1024];
    snprintf(payload, sizeof(payload),
             "{\"agent_id\":{\"value\":\"%s\"},\"operation_id\":{\"value\":"
             "\"op-1\"},\"uuid\":\"%s\"}",
             agent_id, uuid);
    ck_assert_int_eq(api_fw_call(&fw, master.port,
                                 "ACKNOWLEDGE_OPERATION_STATUS",
                                 "acknowledge_operation_status", payload),
                     202);
    ck_assert_uint_eq(operations_listed(), 0);
    /* Forgotten: reconciliation says unknown. */
    snprintf(payload, sizeof(payload),
             "{\"operations\":[{\"operation_id\":{\"value\":\"op-1\"},"
             "\"agent_id\":{\"value\":\"%s\"}}]}",
             agent_id);
    ck_assert_int_eq(api_fw_call(&fw, master.port, "RECONCILE_OPERATIONS",
                                 "reconcile_operations", payload),
                     202);
    st = next_status(&fw, &ev);
    ck_assert_str_eq(str(st, "state"), "OPERATION_UNKNOWN");
    ck_assert_ptr_null(json_object_get(st, "uuid"));
    json_decref(ev);

    /* A refused UNRESERVE (mem is not reserved): OPERATION_ERROR, no
     * uuid, nothing checkpointed. */
    if (last_offer[0] == '\0') {
        ev = wait_for(&fw, "OFFERS");
        ck_assert_ptr_nonnull(ev);
        json_decref(ev);
    }
    snprintf(offer, sizeof(offer), "%s", last_offer);
    ck_assert_int_eq(
        accept_op(&fw, offer,
                  "{\"type\":\"UNRESERVE\",\"id\":{\"value\":\"op-2\"},"
                  "\"unreserve\":{\"resources\":[" RESV("mem", "64") "]}}"),
        202);
    st = next_status(&fw, &ev);
    ck_assert_str_eq(str(st, "state"), "OPERATION_ERROR");
    ck_assert_ptr_null(json_object_get(st, "uuid"));
    ck_assert_ptr_nonnull(strstr(str(st, "message"), "UNRESERVE refused"));
    json_decref(ev);
    ck_assert_int_eq(api_agent_ckpt_version(agent.port), 1);
    ck_assert_uint_eq(operations_listed(), 0);
    api_conn_close(&fw);
}
END_TEST

static Suite *operation_feedback_suite(void)
{
    Suite *s = suite_create("e2e_operation_feedback");
    TCase *tc = tcase_create("feedback");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_reserve_with_feedback);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(operation_feedback_suite)
