/*
 * Tests of the agent's flags (agent/flags_agent.h): --master forms, the
 * checks on values, defaults.
 */
#include "agent/flags_agent.h"
#include "check_main.h"

#include <check.h>
#include <string.h>

START_TEST(test_master_forms)
{
    static const struct {
        const char *in;
        int ok;
        const char *ip;
        unsigned port;
    } cases[] = {
        {"127.0.0.1:5050", 1, "127.0.0.1", 5050},
        {"localhost:5050", 1, "127.0.0.1", 5050},
        {"10.1.2.3:1", 1, "10.1.2.3", 1},
        {"10.1.2.3:65535", 1, "10.1.2.3", 65535},
        {"10.1.2.3", 0, NULL, 0},
        {"10.1.2.3:", 0, NULL, 0},
        {":5050", 0, NULL, 0},
        {"10.1.2.3:0", 0, NULL, 0},
        {"10.1.2.3:65536", 0, NULL, 0},
        {"10.1.2.3:+5", 0, NULL, 0},
        {"10.1.2.3:5x", 0, NULL, 0},
        {"master.example.com:5050", 1, "", 5050},
        {"master_1.example.com:5050", 1, "", 5050},
        {"zk://10.0.0.1:2181/mesos", 1, "", 0},
        {"zk://u:p@10.0.0.1:2181,10.0.0.2:2181/mesos", 1, "", 0},
        {"file:///etc/master", 1, "", 0},
        {"zk://10.0.0.1:2181", 0, NULL, 0},
        {"file://relative", 0, NULL, 0},
        {"bad host:5050", 0, NULL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char ip[AGENT_IP_SIZE] = "", err[256] = "";
        uint16_t port = 0;
        int rc = agent_parse_master(cases[i].in, ip, &port, err, sizeof(err));
        ck_assert_msg((rc == 0) == cases[i].ok, "%s: %s", cases[i].in, err);
        if (cases[i].ok) {
            ck_assert_str_eq(ip, cases[i].ip);
            ck_assert_uint_eq(port, cases[i].port);
        } else {
            ck_assert_ptr_nonnull(strstr(err, "--master"));
        }
    }
}
END_TEST

static enum flags_result parse(struct agent_flags *af, const char *const *args,
                               char *err, size_t errlen)
{
    char *argv[32] = {"offerd-agent"};
    int argc = 1;
    for (; *args != NULL; args++)
        argv[argc++] = (char *)*args;
    agent_flags_init(af);
    return agent_flags_parse(af, argc, argv, NULL, err, errlen);
}

START_TEST(test_defaults)
{
    struct agent_flags af;
    char err[256];
    const char *args[] = {"--master=127.0.0.1:5050", NULL};
    ck_assert_int_eq(parse(&af, args, err, sizeof(err)), FLAGS_OK);
    ck_assert_str_eq(af.ip, "0.0.0.0");
    ck_assert_uint_eq(af.port, 5051);
    ck_assert_str_eq(af.work_dir, "./.offerd/agent");
    ck_assert_ptr_null(af.resources);
    ck_assert_ptr_null(af.attributes);
    ck_assert_str_eq(af.default_role, "*");
    ck_assert_ptr_nonnull(af.hostname);
    ck_assert_int_eq(af.registration_backoff_factor_ns, 1000000000LL);
    ck_assert_int_eq(af.update_retry_min_ns, 10000000000LL);
    ck_assert_int_eq(af.update_retry_max_ns, 600000000000LL);
    ck_assert_int_eq(af.log_level, LOG_LEVEL_INFO);
    ck_assert_str_eq(af.recover, "reconnect");
    ck_assert(!af.recover_cleanup);
    agent_flags_fini(&af);

    const char *cleanup[] = {"--master=127.0.0.1:5050", "--recover=cleanup",
                             NULL};
    ck_assert_int_eq(parse(&af, cleanup, err, sizeof(err)), FLAGS_OK);
    ck_assert(af.recover_cleanup);
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_rejections)
{
    static const struct {
        const char *flag, *why;
    } cases[] = {
        {"--bogus=1", "bogus"},
        {"--ip=host.example.com", "--ip"},
        {"--port=70000", "port"},
        {"--logging_level=LOUD", "--logging_level"},
        {"--work_dir=", "--work_dir"},
        {"--status_update_retry_interval_min=0secs",
         "--status_update_retry_interval_min"},
        {"--status_update_retry_interval_max=1secs",
         "--status_update_retry_interval_max"},
        {"--registration_backoff_max=1ms", "--registration_backoff_max"},
        {"--recover=kill", "--recover"},
        {"--authenticate_http_executors",
         "--authenticate_http_executors needs --executor_secret_key"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct agent_flags af;
        char err[256] = "";
        const char *args[] = {"--master=127.0.0.1:5050", cases[i].flag, NULL};
        ck_assert_msg(parse(&af, args, err, sizeof(err)) == FLAGS_ERROR, "%s",
                      cases[i].flag);
        ck_assert_msg(strstr(err, cases[i].why) != NULL, "%s: %s",
                      cases[i].flag, err);
        agent_flags_fini(&af);
    }
    struct agent_flags af;
    char err[256] = "";
    const char *none[] = {NULL};
    ck_assert_int_eq(parse(&af, none, err, sizeof(err)), FLAGS_ERROR);
    ck_assert_ptr_nonnull(strstr(err, "--master is required"));
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_help)
{
    struct agent_flags af;
    char err[256];
    const char *args[] = {"--help", NULL};
    ck_assert_int_eq(parse(&af, args, err, sizeof(err)), FLAGS_HELP);
    agent_flags_fini(&af);
}
END_TEST

static Suite *agent_flags_suite(void)
{
    Suite *s = suite_create("agent_flags");
    TCase *tc = tcase_create("flags");
    tcase_add_test(tc, test_master_forms);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_help);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_flags_suite)
