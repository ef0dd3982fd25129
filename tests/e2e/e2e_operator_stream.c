/*
 * The operator API's event stream over loopback: a real offerd and
 * offerd-agent, a scripted framework, and two operator subscribers, one
 * reading JSON and one protobuf. Both see SUBSCRIBED first, then the agent,
 * the framework, its task being added and updated until it finished, and
 * the framework's removal; GET_STATE then agrees with the stream.
 */
#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_api.h"
#include "mesos/v1/master.pb-c.h"

static struct e2e_proc master, agent;

/* ---- Protobuf records ---------------------------------------------------- */

/* The next record of c's stream as a mesos.v1.master.Event (caller frees),
 * or NULL on timeout. */
static Mesos__V1__Master__Event *pb_next(struct conn *c, int timeout_ms)
{
    size_t len;
    uint8_t *rec = api_next_record(c, timeout_ms, &len);
    if (rec == NULL)
        return NULL;
    Mesos__V1__Master__Event *ev =
        mesos__v1__master__event__unpack(NULL, len, rec);
    free(rec);
    ck_assert_msg(ev != NULL, "a record is not an Event");
    return ev;
}

/* SUBSCRIBE to the operator stream in type. */
static void op_subscribe(struct conn *c, const char *type)
{
    api_operator_subscribe(c, master.port, type);
}

/* The JSON subscriber's next event of type whose "<field>.<sub>" equals
 * want (NULL: any), skipping others. */
static json_t *json_wait(struct conn *c, const char *type, const char *field,
                         const char *sub, const char *want)
{
    for (;;) {
        json_t *ev = api_wait_event(c, type, 20000);
        ck_assert_msg(ev != NULL, "no %s event", type);
        if (want == NULL)
            return ev;
        const char *got =
            json_string_value(json_object_get(json_object_get(ev, field), sub));
        if (got != NULL && strcmp(got, want) == 0)
            return ev;
        json_decref(ev);
    }
}

/* The framework acknowledges its task's updates (the agent sends the next
 * one only then) until one in state final. */
static void ack_until(struct conn *fw, const char *final)
{
    for (;;) {
        json_t *ev = api_wait_event(fw, "UPDATE", 20000);
        ck_assert_msg(ev != NULL, "no update before %s", final);
        json_t *st = json_object_get(json_object_get(ev, "update"), "status");
        const char *state = json_string_value(json_object_get(st, "state"));
        bool done = strcmp(state, final) == 0;
        api_fw_ack_status(fw, master.port, st);
        json_decref(ev);
        if (done)
            return;
    }
}

START_TEST(test_operator_stream_json_and_protobuf)
{
    const char *mflags[] = {"--registry=in_memory",
                            "--allocation_interval=100ms", NULL};
    ck_assert_int_eq(e2e_start_master(&master, mflags), 0);
    struct conn js, pb, fw;
    op_subscribe(&js, "application/json");
    op_subscribe(&pb, "application/x-protobuf");

    /* SUBSCRIBED first, with the (empty) state and the interval. */
    json_t *ev = api_next_event(&js, T);
    ck_assert_ptr_nonnull(ev);
    ck_assert_str_eq(json_string_value(json_object_get(ev, "type")),
                     "SUBSCRIBED");
    json_t *sub = json_object_get(ev, "subscribed");
    ck_assert_double_eq(
        json_number_value(json_object_get(sub, "heartbeat_interval_seconds")),
        15.0);
    ck_assert_ptr_nonnull(json_object_get(sub, "get_state"));
    json_decref(ev);
    Mesos__V1__Master__Event *pev = pb_next(&pb, T);
    ck_assert_ptr_nonnull(pev);
    ck_assert_int_eq(pev->type, MESOS__V1__MASTER__EVENT__TYPE__SUBSCRIBED);
    ck_assert_ptr_nonnull(pev->subscribed->get_state);
    protobuf_c_message_free_unpacked(&pev->base, NULL);

    /* An agent joins; a framework subscribes and runs a task. */
    const char *aflags[] = {"--resources=cpus:2;mem:512", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aflags), 0);
    ev = api_wait_event(&js, "AGENT_ADDED", 20000);
    ck_assert_ptr_nonnull(ev);
    char agent_id[256];
    snprintf(agent_id, sizeof(agent_id), "%s",
             json_string_value(json_object_get(
                 json_object_get(
                     json_object_get(
                         json_object_get(json_object_get(ev, "agent_added"),
                                         "agent"),
                         "agent_info"),
                     "id"),
                 "value")));
    json_decref(ev);

    api_subscribe_framework(&fw, master.port,
                            "{\"user\":\"u\",\"name\":\"opfw\"}");
    ev = api_wait_event(&js, "FRAMEWORK_ADDED", T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);
    char offer_id[256], offer_agent[256];
    json_t *offers = api_wait_offer(&fw, offer_id, offer_agent, 20000);
    ck_assert_ptr_nonnull(offers);
    json_decref(offers);
    ck_assert_str_eq(offer_agent, agent_id);
    ck_assert_int_eq(
        api_launch(&fw, master.port, offer_id, offer_agent, "t1", SMALL), 202);
    ev = api_wait_event(&js, "TASK_ADDED", T);
    ck_assert_ptr_nonnull(ev);
    json_t *task = json_object_get(json_object_get(ev, "task_added"), "task");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(task, "task_id"), "value")),
                     "t1");
    ck_assert_str_eq(json_string_value(json_object_get(task, "state")),
                     "TASK_STAGING");
    json_decref(ev);
    /* `true` runs and finishes on the real agent. */
    ack_until(&fw, "TASK_FINISHED");
    ev = json_wait(&js, "TASK_UPDATED", "task_updated", "state",
                   "TASK_FINISHED");
    json_decref(ev);

    /* GET_STATE agrees. */
    char body[1 << 16];
    ck_assert_int_eq(api_post(master.port, "/api/v1", NULL,
                              "{\"type\":\"GET_STATE\"}", body, sizeof(body)),
                     200);
    json_t *st = json_loads(body, 0, NULL);
    ck_assert_ptr_nonnull(st);
    json_t *gs = json_object_get(st, "get_state");
    /* t1 finished and was acknowledged: no longer a live task (offerd
     * keeps no completed-task history yet, so it may be in neither). */
    ck_assert_uint_eq(json_array_size(json_object_get(
                          json_object_get(gs, "get_tasks"), "tasks")),
                      0);
    ck_assert_uint_eq(json_array_size(json_object_get(
                          json_object_get(gs, "get_agents"), "agents")),
                      1);
    json_t *fws =
        json_object_get(json_object_get(gs, "get_frameworks"), "frameworks");
    ck_assert_uint_eq(json_array_size(fws), 1);
    ck_assert(
        json_is_true(json_object_get(json_array_get(fws, 0), "connected")));
    json_decref(st);

    /* The framework leaves. */
    ck_assert_int_eq(api_fw_call(&fw, master.port, "TEARDOWN", NULL, NULL),
                     202);
    ev = api_wait_event(&js, "FRAMEWORK_REMOVED", T);
    ck_assert_ptr_nonnull(ev);
    json_decref(ev);

    /* The protobuf subscriber saw the same story, in order. */
    static const Mesos__V1__Master__Event__Type story[] = {
        MESOS__V1__MASTER__EVENT__TYPE__AGENT_ADDED,
        MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_ADDED,
        MESOS__V1__MASTER__EVENT__TYPE__TASK_ADDED,
        MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED,
        MESOS__V1__MASTER__EVENT__TYPE__FRAMEWORK_REMOVED,
    };
    size_t next = 0;
    bool finished = false;
    while (next < sizeof(story) / sizeof(story[0])) {
        pev = pb_next(&pb, T);
        ck_assert_msg(pev != NULL, "protobuf stream: no event %zu", next);
        if (pev->type == MESOS__V1__MASTER__EVENT__TYPE__TASK_UPDATED &&
            pev->task_updated->state == MESOS__V1__TASK_STATE__TASK_FINISHED)
            finished = true;
        if (pev->type == story[next])
            next++;
        protobuf_c_message_free_unpacked(&pev->base, NULL);
    }
    ck_assert(finished);

    api_conn_close(&fw);
    api_conn_close(&js);
    api_conn_close(&pb);
    e2e_stop_master_agent(&master, &agent);
}
END_TEST

E2E_ONE_TEST_MAIN("e2e_operator_stream", "stream",
                  test_operator_stream_json_and_protobuf, 120)
