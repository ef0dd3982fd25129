/*
 * Tests of status building and exit-status mapping (agent/status.h).
 */
#include "agent/status.h"
#include "check_main.h"
#include "common/json_pb.h"

#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_every_field)
{
    struct agent_status_spec spec = {
        .task_id = "t1",
        .state = MESOS__V1__TASK_STATE__TASK_FAILED,
        .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR,
        .has_reason = true,
        .reason =
            MESOS__V1__TASK_STATUS__REASON__REASON_COMMAND_EXECUTOR_FAILED,
        .message = "Command exited with status 3",
        .agent_id = "A-S1",
        .executor_id = "t1",
        .timestamp = 1700000000.25,
    };
    Mesos__V1__TaskStatus *st = agent_status_new(&spec);
    ck_assert_str_eq(st->task_id->value, "t1");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert(st->has_source);
    ck_assert_int_eq(st->source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
    ck_assert(st->has_reason);
    ck_assert_str_eq(st->message, "Command exited with status 3");
    ck_assert_str_eq(st->agent_id->value, "A-S1");
    ck_assert_str_eq(st->executor_id->value, "t1");
    ck_assert(st->has_timestamp && st->timestamp == 1700000000.25);
    ck_assert(st->has_uuid);
    ck_assert_uint_eq(st->uuid.len, 16);
    /* A random version-4 uuid. */
    ck_assert_int_eq(st->uuid.data[6] >> 4, 4);
    /* Encodes, decodes and reads as JSON with Mesos's names. */
    char *json = jpb_to_json_text(&st->base, NULL);
    ck_assert_ptr_nonnull(strstr(json, "\"state\":\"TASK_FAILED\""));
    ck_assert_ptr_nonnull(
        strstr(json, "\"reason\":\"REASON_COMMAND_EXECUTOR_FAILED\""));
    ck_assert_ptr_nonnull(strstr(json, "\"source\":\"SOURCE_EXECUTOR\""));
    free(json);
    size_t len;
    uint8_t *pb = jpb_to_pb(&st->base, &len);
    char err[256];
    ProtobufCMessage *back = jpb_from_pb(&mesos__v1__task_status__descriptor,
                                         pb, len, err, sizeof(err));
    ck_assert_msg(back != NULL, "%s", err);
    jpb_free(back);
    free(pb);
    jpb_free(&st->base);
}
END_TEST

START_TEST(test_optional_fields_and_given_uuid)
{
    uint8_t uuid[16] = {9, 8, 7};
    struct agent_status_spec spec = {
        .task_id = "x",
        .state = MESOS__V1__TASK_STATE__TASK_LOST,
        .source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT,
        .timestamp = 5,
        .uuid = uuid,
    };
    Mesos__V1__TaskStatus *st = agent_status_new(&spec);
    ck_assert(!st->has_reason);
    ck_assert_ptr_null(st->message);
    ck_assert_ptr_null(st->agent_id);
    ck_assert_ptr_null(st->executor_id);
    ck_assert(memcmp(st->uuid.data, uuid, 16) == 0);
    jpb_free(&st->base);
    /* Two new statuses get different uuids. */
    spec.uuid = NULL;
    Mesos__V1__TaskStatus *a = agent_status_new(&spec);
    Mesos__V1__TaskStatus *b = agent_status_new(&spec);
    ck_assert(memcmp(a->uuid.data, b->uuid.data, 16) != 0);
    jpb_free(&a->base);
    jpb_free(&b->base);
}
END_TEST

/* Wait statuses as the kernel builds them. */
#define EXITED(n)   ((n) << 8)
#define SIGNALED(s) (s)

START_TEST(test_exit_outcomes)
{
    static const struct {
        int ws;
        bool killed;
        Mesos__V1__TaskState state;
        bool has_reason;
        const char *message;
    } cases[] = {
        {EXITED(0), false, MESOS__V1__TASK_STATE__TASK_FINISHED, false,
         "Command exited with status 0"},
        {EXITED(3), false, MESOS__V1__TASK_STATE__TASK_FAILED, true,
         "Command exited with status 3"},
        {EXITED(127), false, MESOS__V1__TASK_STATE__TASK_FAILED, true,
         "Command exited with status 127"},
        {SIGNALED(SIGKILL), false, MESOS__V1__TASK_STATE__TASK_FAILED, true,
         "Command terminated by signal 9 (Killed)"},
        {SIGNALED(SIGTERM), true, MESOS__V1__TASK_STATE__TASK_KILLED, false,
         "Command terminated by signal 15 (Terminated)"},
        {EXITED(0), true, MESOS__V1__TASK_STATE__TASK_KILLED, false,
         "Command exited with status 0"},
        {SIGNALED(SIGKILL), true, MESOS__V1__TASK_STATE__TASK_KILLED, false,
         "Command terminated by signal 9 (Killed)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct agent_exit_outcome o;
        agent_exit_outcome(cases[i].ws, cases[i].killed, &o);
        ck_assert_msg(o.state == cases[i].state, "case %zu", i);
        ck_assert_msg(o.has_reason == cases[i].has_reason, "case %zu", i);
        if (o.has_reason)
            ck_assert_int_eq(
                o.reason,
                MESOS__V1__TASK_STATUS__REASON__REASON_COMMAND_EXECUTOR_FAILED);
        ck_assert_str_eq(o.message, cases[i].message);
    }
}
END_TEST

static Suite *agent_status_suite(void)
{
    Suite *s = suite_create("agent_status");
    TCase *tc = tcase_create("status");
    tcase_add_test(tc, test_every_field);
    tcase_add_test(tc, test_optional_fields_and_given_uuid);
    tcase_add_test(tc, test_exit_outcomes);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_status_suite)
