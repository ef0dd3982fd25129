/*
 * Tests of the task environment (agent/task_env.h): what Mesos's agent and
 * command executor put there, in which order, and what of the agent's own
 * environment passes.
 */
#include "agent/task_env.h"
#include "check_main.h"

#include <check.h>
#include <string.h>

static const struct agent_task_env_ids task_ids = {
    .sandbox = "/w/sandboxes/fw/t1/run",
    .framework_id = "fw",
    .executor_id = "t1",
    .task_id = "t1",
    .agent_id = "A-S0",
    .agent_endpoint = "127.0.0.1:5051",
    .allocation_role = "web",
    .checkpoint = true,
    .shutdown_grace_ns = 5000000000,
};

START_TEST(test_mesos_variables)
{
    char *agent_env[] = {"HOME=/root", "LIBPROCESS_IP=10.0.0.9",
                         "OFFERD_MASTER=x", NULL};
    struct agent_env e;
    char err[256];
    ck_assert_int_eq(agent_task_env_build(&task_ids, agent_env, NULL, NULL, &e,
                                          err, sizeof(err)),
                     0);
    static const char *const want[][2] = {
        {"MESOS_SANDBOX", "/w/sandboxes/fw/t1/run"},
        {"MESOS_DIRECTORY", "/w/sandboxes/fw/t1/run"},
        {"MESOS_FRAMEWORK_ID", "fw"},
        {"MESOS_EXECUTOR_ID", "t1"},
        {"MESOS_TASK_ID", "t1"},
        {"MESOS_SLAVE_ID", "A-S0"},
        {"MESOS_AGENT_ID", "A-S0"},
        {"MESOS_AGENT_ENDPOINT", "127.0.0.1:5051"},
        {"MESOS_SLAVE_PID", "slave(1)@127.0.0.1:5051"},
        {"MESOS_CHECKPOINT", "1"},
        {"MESOS_HTTP_COMMAND_EXECUTOR", "0"},
        {"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD", "5secs"},
        {"MESOS_ALLOCATION_ROLE", "web"},
        {"LIBPROCESS_PORT", "0"},
        {"LIBPROCESS_IP", "10.0.0.9"},
        {"PATH", AGENT_ENV_DEFAULT_PATH},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *v = agent_env_get(&e, want[i][0]);
        ck_assert_msg(v != NULL, "%s missing", want[i][0]);
        ck_assert_str_eq(v, want[i][1]);
    }
    /* Nothing else of the agent's environment without the flag. */
    ck_assert_ptr_null(agent_env_get(&e, "HOME"));
    ck_assert_ptr_null(agent_env_get(&e, "OFFERD_MASTER"));
    ck_assert_uint_eq(e.n, sizeof(want) / sizeof(want[0]));
    ck_assert_ptr_null(e.v[e.n]);
    agent_env_clear(&e);
}
END_TEST

START_TEST(test_executor_environment_variables)
{
    char err[256] = "";
    json_t *flag = agent_task_env_parse_flag(
        "{\"PATH\": \"/opt/bin\", \"HOME\": \"/home/x\", \"MESOS_TASK_ID\": "
        "\"stale\", \"LIBPROCESS_IP\": \"1.2.3.4\"}",
        err, sizeof(err));
    ck_assert_msg(flag != NULL, "%s", err);
    char *agent_env[] = {"LIBPROCESS_IP=10.0.0.9", "SHELL=/bin/bash", NULL};
    struct agent_env e;
    ck_assert_int_eq(agent_task_env_build(&task_ids, agent_env, flag, NULL, &e,
                                          err, sizeof(err)),
                     0);
    ck_assert_str_eq(agent_env_get(&e, "PATH"), "/opt/bin");
    ck_assert_str_eq(agent_env_get(&e, "HOME"), "/home/x");
    /* The flag's value wins over the agent's LIBPROCESS_IP, and the
     * agent's MESOS_ variables over the flag. */
    ck_assert_str_eq(agent_env_get(&e, "LIBPROCESS_IP"), "1.2.3.4");
    ck_assert_str_eq(agent_env_get(&e, "MESOS_TASK_ID"), "t1");
    ck_assert_ptr_null(agent_env_get(&e, "SHELL"));
    agent_env_clear(&e);
    json_decref(flag);
}
END_TEST

START_TEST(test_command_environment_order)
{
    Mesos__V1__Environment__Variable v[3];
    Mesos__V1__Environment__Variable *vp[3];
    const char *kv[3][2] = {{"PATH", "/custom"},
                            {"MESOS_SANDBOX", "/elsewhere"},
                            {"MESOS_ALLOCATION_ROLE", "mine"}};
    for (int i = 0; i < 3; i++) {
        mesos__v1__environment__variable__init(&v[i]);
        v[i].name = (char *)kv[i][0];
        v[i].value = (char *)kv[i][1];
        vp[i] = &v[i];
    }
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    env.n_variables = 3;
    env.variables = vp;
    struct agent_env e;
    char err[256];
    ck_assert_int_eq(
        agent_task_env_build(&task_ids, NULL, NULL, &env, &e, err, sizeof(err)),
        0);
    /* The command's variables win, but MESOS_ALLOCATION_ROLE is set last
     * (as Mesos's command executor does). */
    ck_assert_str_eq(agent_env_get(&e, "PATH"), "/custom");
    ck_assert_str_eq(agent_env_get(&e, "MESOS_SANDBOX"), "/elsewhere");
    ck_assert_str_eq(agent_env_get(&e, "MESOS_ALLOCATION_ROLE"), "web");
    agent_env_clear(&e);
}
END_TEST

START_TEST(test_executor_has_no_task_variables)
{
    struct agent_task_env_ids ids = task_ids;
    ids.task_id = NULL;
    ids.agent_id = NULL;
    ids.checkpoint = false;
    struct agent_env e;
    char err[256];
    ck_assert_int_eq(
        agent_task_env_build(&ids, NULL, NULL, NULL, &e, err, sizeof(err)), 0);
    ck_assert_ptr_null(agent_env_get(&e, "MESOS_TASK_ID"));
    ck_assert_ptr_null(agent_env_get(&e, "MESOS_ALLOCATION_ROLE"));
    ck_assert_ptr_null(agent_env_get(&e, "MESOS_SLAVE_ID"));
    ck_assert_str_eq(agent_env_get(&e, "MESOS_CHECKPOINT"), "0");
    ck_assert_str_eq(agent_env_get(&e, "MESOS_EXECUTOR_ID"), "t1");
    agent_env_clear(&e);
}
END_TEST

START_TEST(test_flag_rejections)
{
    static const char *const bad[] = {
        "[1]",      "{\"A\": 1}",    "{\"A\": null}",
        "not json", "{\"\": \"x\"}", "{\"A=B\": \"x\"}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        json_t *o = agent_task_env_parse_flag(bad[i], err, sizeof(err));
        ck_assert_msg(o == NULL, "%s accepted", bad[i]);
        ck_assert_ptr_nonnull(strstr(err, "--executor_environment_variables"));
    }
    char err[256] = "";
    ck_assert_ptr_null(
        agent_task_env_parse_flag("{\"A\": 2}", err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "must only contain string values"));
}
END_TEST

START_TEST(test_secret_refused)
{
    Mesos__V1__Environment__Variable v = MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    v.name = "TOKEN";
    v.has_type = 1;
    v.type = MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__SECRET;
    Mesos__V1__Environment__Variable *vp[] = {&v};
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    env.n_variables = 1;
    env.variables = vp;
    struct agent_env e = {NULL, 0};
    char err[256] = "";
    ck_assert_int_eq(
        agent_task_env_build(&task_ids, NULL, NULL, &env, &e, err, sizeof(err)),
        -1);
    ck_assert_ptr_nonnull(strstr(err, "TOKEN is a secret"));
    ck_assert_ptr_null(e.v);
}
END_TEST

static Suite *agent_task_env_suite(void)
{
    Suite *s = suite_create("agent_task_env");
    TCase *tc = tcase_create("env");
    tcase_add_test(tc, test_mesos_variables);
    tcase_add_test(tc, test_executor_environment_variables);
    tcase_add_test(tc, test_command_environment_order);
    tcase_add_test(tc, test_executor_has_no_task_variables);
    tcase_add_test(tc, test_flag_rejections);
    tcase_add_test(tc, test_secret_refused);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_task_env_suite)
