/*
 * Tests of how a CommandInfo becomes a program, argv and environment
 * (agent/command.h).
 */
#include "agent/command.h"
#include "check_main.h"

#include <check.h>
#include <string.h>

static const struct agent_task_env_ids ids = {
    .sandbox = "/sb/run",
    .framework_id = "fw1",
    .executor_id = "t1",
    .task_id = "t1",
    .agent_id = "A-S1",
    .agent_endpoint = "10.0.0.1:5051",
    .allocation_role = "web",
    .checkpoint = true,
    .shutdown_grace_ns = 5000000000,
};

static const char *env_get(const struct agent_command *c, const char *name)
{
    size_t nl = strlen(name);
    const char *found = NULL;
    size_t count = 0;
    for (size_t i = 0; i < c->nenv; i++)
        if (strncmp(c->envp[i], name, nl) == 0 && c->envp[i][nl] == '=') {
            found = c->envp[i] + nl + 1;
            count++;
        }
    ck_assert_uint_le(count, 1);
    return found;
}

START_TEST(test_shell_form)
{
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "echo hi | tr a-z A-Z";
    struct agent_command c;
    char err[256];
    /* shell unset means shell true. */
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), 0);
    ck_assert_str_eq(c.file, "/bin/sh");
    ck_assert_uint_eq(c.nargv, 3);
    ck_assert_str_eq(c.argv[0], "sh");
    ck_assert_str_eq(c.argv[1], "-c");
    ck_assert_str_eq(c.argv[2], "echo hi | tr a-z A-Z");
    ck_assert_ptr_null(c.argv[3]);
    agent_command_clear(&c);
}
END_TEST

START_TEST(test_argv_form)
{
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "/usr/bin/env";
    cmd.has_shell = 1;
    cmd.shell = 0;
    struct agent_command c;
    char err[256];
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), 0);
    ck_assert_str_eq(c.file, "/usr/bin/env");
    ck_assert_uint_eq(c.nargv, 1);
    ck_assert_str_eq(c.argv[0], "/usr/bin/env");
    agent_command_clear(&c);
    char *args[] = {"env", "-i", "a b"};
    cmd.arguments = args;
    cmd.n_arguments = 3;
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), 0);
    ck_assert_uint_eq(c.nargv, 3);
    ck_assert_str_eq(c.argv[0], "env");
    ck_assert_str_eq(c.argv[2], "a b");
    ck_assert_ptr_null(c.argv[3]);
    agent_command_clear(&c);
}
END_TEST

START_TEST(test_environment)
{
    char *base[] = {"PATH=/bin",  "OFFERD_MASTER=1.2.3.4:5050",
                    "HOME=/root", "MESOS_TASK_ID=stale",
                    "junk",       NULL};
    Mesos__V1__Environment__Variable v1 =
        MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    v1.name = "HOME";
    v1.value = "/home/task";
    Mesos__V1__Environment__Variable v2 =
        MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    v2.name = "EMPTY";
    Mesos__V1__Environment__Variable *vars[] = {&v1, &v2};
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    env.n_variables = 2;
    env.variables = vars;
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "true";
    cmd.environment = &env;
    struct agent_command c;
    char err[256];
    ck_assert_int_eq(
        agent_command_build(&cmd, base, NULL, &ids, &c, err, sizeof(err)), 0);
    /* Without --executor_environment_variables nothing of the agent's
     * environment passes; PATH gets Mesos's default. */
    ck_assert_str_eq(env_get(&c, "PATH"), AGENT_ENV_DEFAULT_PATH);
    ck_assert_ptr_null(env_get(&c, "OFFERD_MASTER"));
    ck_assert_str_eq(env_get(&c, "HOME"), "/home/task");
    ck_assert_str_eq(env_get(&c, "EMPTY"), "");
    ck_assert_str_eq(env_get(&c, "MESOS_TASK_ID"), "t1");
    ck_assert_str_eq(env_get(&c, "MESOS_EXECUTOR_ID"), "t1");
    ck_assert_str_eq(env_get(&c, "MESOS_FRAMEWORK_ID"), "fw1");
    ck_assert_str_eq(env_get(&c, "MESOS_SANDBOX"), "/sb/run");
    ck_assert_str_eq(env_get(&c, "MESOS_AGENT_ID"), "A-S1");
    ck_assert_ptr_null(env_get(&c, "junk"));
    ck_assert_ptr_null(c.envp[c.nenv]);
    agent_command_clear(&c);
    /* No agent id yet: no MESOS_AGENT_ID. */
    struct agent_task_env_ids noid = {.sandbox = "/sb",
                                      .framework_id = "f",
                                      .executor_id = "t",
                                      .task_id = "t"};
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &noid, &c, err, sizeof(err)), 0);
    ck_assert_ptr_null(env_get(&c, "MESOS_AGENT_ID"));
    agent_command_clear(&c);
}
END_TEST

START_TEST(test_rejections)
{
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    struct agent_command c;
    char err[256] = "";
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "no value"));
    ck_assert_ptr_null(c.argv);

    Mesos__V1__Environment__Variable v = MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    v.name = "TOKEN";
    v.has_type = 1;
    v.type = MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__SECRET;
    Mesos__V1__Environment__Variable *vars[] = {&v};
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    env.n_variables = 1;
    env.variables = vars;
    cmd.value = "true";
    cmd.environment = &env;
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "secret"));
    ck_assert_ptr_null(c.envp);
    v.has_type = 0;
    v.name = "A=B";
    ck_assert_int_eq(
        agent_command_build(&cmd, NULL, NULL, &ids, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "bad environment variable"));
}
END_TEST

static Suite *agent_command_suite(void)
{
    Suite *s = suite_create("agent_command");
    TCase *tc = tcase_create("command");
    tcase_add_test(tc, test_shell_form);
    tcase_add_test(tc, test_argv_form);
    tcase_add_test(tc, test_environment);
    tcase_add_test(tc, test_rejections);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_command_suite)
