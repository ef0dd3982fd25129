/*
 * Tests of common/task_state.h: which TaskState values are terminal, and
 * their names.
 */
#include "common/task_state.h"

#include "check_main.h"
#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <stdbool.h>

/* Every value mesos.v1.TaskState defines, and whether it is terminal. */
static const struct {
    int state;
    const char *name;
    bool terminal;
} states[] = {
    {MESOS__V1__TASK_STATE__TASK_STAGING, "TASK_STAGING", false},
    {MESOS__V1__TASK_STATE__TASK_STARTING, "TASK_STARTING", false},
    {MESOS__V1__TASK_STATE__TASK_RUNNING, "TASK_RUNNING", false},
    {MESOS__V1__TASK_STATE__TASK_KILLING, "TASK_KILLING", false},
    {MESOS__V1__TASK_STATE__TASK_UNREACHABLE, "TASK_UNREACHABLE", false},
    {MESOS__V1__TASK_STATE__TASK_UNKNOWN, "TASK_UNKNOWN", false},
    {MESOS__V1__TASK_STATE__TASK_FINISHED, "TASK_FINISHED", true},
    {MESOS__V1__TASK_STATE__TASK_FAILED, "TASK_FAILED", true},
    {MESOS__V1__TASK_STATE__TASK_KILLED, "TASK_KILLED", true},
    {MESOS__V1__TASK_STATE__TASK_ERROR, "TASK_ERROR", true},
    {MESOS__V1__TASK_STATE__TASK_LOST, "TASK_LOST", true},
    {MESOS__V1__TASK_STATE__TASK_DROPPED, "TASK_DROPPED", true},
    {MESOS__V1__TASK_STATE__TASK_GONE, "TASK_GONE", true},
    {MESOS__V1__TASK_STATE__TASK_GONE_BY_OPERATOR, "TASK_GONE_BY_OPERATOR",
     true},
};

START_TEST(test_terminal)
{
    ck_assert_msg(task_state_is_terminal(states[_i].state) ==
                      states[_i].terminal,
                  "%s", states[_i].name);
}
END_TEST

START_TEST(test_name)
{
    ck_assert_str_eq(task_state_name(states[_i].state), states[_i].name);
}
END_TEST

/* The table above covers the whole enum, so a state added to the .proto
 * is a decision to make here. */
START_TEST(test_table_covers_the_enum)
{
    ck_assert_uint_eq(mesos__v1__task_state__descriptor.n_values,
                      sizeof(states) / sizeof(states[0]));
}
END_TEST

START_TEST(test_undefined_values)
{
    static const int undefined[] = {-1, 999, 1 << 30};
    for (size_t i = 0; i < sizeof(undefined) / sizeof(undefined[0]); i++) {
        ck_assert(!task_state_is_terminal(undefined[i]));
        ck_assert_str_eq(task_state_name(undefined[i]), "?");
    }
}
END_TEST

static Suite *task_state_suite(void)
{
    Suite *s = suite_create("task_state");
    TCase *tc = tcase_create("task_state");
    int n = (int)(sizeof(states) / sizeof(states[0]));
    tcase_add_loop_test(tc, test_terminal, 0, n);
    tcase_add_loop_test(tc, test_name, 0, n);
    tcase_add_test(tc, test_table_covers_the_enum);
    tcase_add_test(tc, test_undefined_values);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(task_state_suite)
