/*
 * Tests of what a launch is checked and prepared with: the containerizer
 * check (agent/containerizer.h), the user a task runs as (agent/run_as.h),
 * the launch flags (agent/flags_launch.h) and the prepared launch
 * (agent/task_launch.h).
 */
#include "agent/containerizer.h"
#include "agent/fetcher.h"
#include "agent/flags_agent.h"
#include "agent/run_as.h"
#include "agent/task_launch.h"
#include "check_main.h"

#include <check.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_container_check)
{
    char err[512] = "";
    ck_assert_int_eq(agent_container_check(NULL, "mesos", err, sizeof(err)), 0);
    Mesos__V1__ContainerInfo ci = MESOS__V1__CONTAINER_INFO__INIT;
    ci.type = MESOS__V1__CONTAINER_INFO__TYPE__MESOS;
    ck_assert_int_eq(agent_container_check(&ci, "mesos", err, sizeof(err)), 0);
    Mesos__V1__ContainerInfo__MesosInfo mi =
        MESOS__V1__CONTAINER_INFO__MESOS_INFO__INIT;
    ci.mesos = &mi;
    ck_assert_int_eq(agent_container_check(&ci, "mesos", err, sizeof(err)), 0);
    Mesos__V1__Image img = MESOS__V1__IMAGE__INIT;
    mi.image = &img;
    ck_assert_int_eq(agent_container_check(&ci, "mesos", err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(
        strstr(err, "None of the enabled containerizers (mesos) could create "
                    "a container for the provided TaskInfo/ExecutorInfo "
                    "message"));
    ck_assert_ptr_nonnull(strstr(err, "with an image"));
    Mesos__V1__ContainerInfo dk = MESOS__V1__CONTAINER_INFO__INIT;
    dk.type = MESOS__V1__CONTAINER_INFO__TYPE__DOCKER;
    ck_assert_int_eq(agent_container_check(&dk, "mesos", err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "DOCKER"));
}
END_TEST

START_TEST(test_run_as_pick)
{
    struct agent_run_as u;
    bool picked = true;
    char err[256] = "";
    /* --switch_user=false: always the agent's user. */
    ck_assert_int_eq(agent_run_as_pick(false, "no-such-user-xyz", "x", &u,
                                       &picked, err, sizeof(err)),
                     0);
    ck_assert(!picked);
    /* Nobody named. */
    ck_assert_int_eq(
        agent_run_as_pick(true, "", "", &u, &picked, err, sizeof(err)), 0);
    ck_assert(!picked);
    ck_assert_int_eq(
        agent_run_as_pick(true, NULL, NULL, &u, &picked, err, sizeof(err)), 0);
    ck_assert(!picked);
    /* CommandInfo.user wins over FrameworkInfo.user. */
    ck_assert_int_eq(agent_run_as_pick(true, "root", "no-such-user-xyz", &u,
                                       &picked, err, sizeof(err)),
                     0);
    ck_assert(picked);
    ck_assert_str_eq(u.name, "root");
    ck_assert_uint_eq(u.uid, 0);
    ck_assert_uint_ge(u.ngroups, 1);
    /* Else FrameworkInfo.user; an unknown user is refused as Mesos does. */
    ck_assert_int_eq(agent_run_as_pick(true, NULL, "no-such-user-xyz", &u,
                                       &picked, err, sizeof(err)),
                     -1);
    ck_assert_str_eq(err, "Failed to chown directory to 'no-such-user-xyz': "
                          "No such user 'no-such-user-xyz'");
}
END_TEST

static enum flags_result parse(struct agent_flags *af, const char *extra,
                               char *err, size_t errlen)
{
    char *argv[] = {"offerd-agent", "--master=127.0.0.1:5050", (char *)extra,
                    NULL};
    agent_flags_init(af);
    return agent_flags_parse(af, extra != NULL ? 3 : 2, argv, NULL, err,
                             errlen);
}

START_TEST(test_launch_flag_defaults)
{
    struct agent_flags af;
    char err[256];
    ck_assert_int_eq(parse(&af, NULL, err, sizeof(err)), FLAGS_OK);
    ck_assert_str_eq(af.launch.containerizers, "mesos");
    ck_assert(af.launch.switch_user);
    ck_assert_ptr_null(af.launch.executor_env);
    ck_assert_uint_eq(af.launch.fetcher_cache_size, 2ULL << 30);
    ck_assert_ptr_null(af.launch.fetcher_cache_dir);
    ck_assert_int_eq(af.launch.fetcher_stall_timeout_ns, 60000000000LL);
    ck_assert_ptr_null(af.launch.frameworks_home);
    agent_flags_fini(&af);
    ck_assert_int_eq(parse(&af,
                           "--executor_environment_variables={\"PATH\":\"/x\"}",
                           err, sizeof(err)),
                     FLAGS_OK);
    ck_assert_ptr_nonnull(af.launch.executor_env);
    ck_assert_str_eq(
        json_string_value(json_object_get(af.launch.executor_env, "PATH")),
        "/x");
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_launch_flag_rejections)
{
    static const struct {
        const char *arg, *why;
    } bad[] = {
        {"--containerizers=docker", "offerd has no docker containerizer"},
        {"--containerizers=mesos,docker", "offerd has no docker containerizer"},
        {"--containerizers=lxc", "unknown containerizer 'lxc'"},
        {"--containerizers=", "must name"},
        {"--executor_environment_variables={\"A\":1}",
         "must only contain string values"},
        {"--executor_environment_variables=[]", "not a JSON object"},
        {"--fetcher_stall_timeout=0secs", "must be above 0"},
        {"--fetcher_cache_dir=", "must not be empty"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct agent_flags af;
        char err[256] = "";
        ck_assert_int_eq(parse(&af, bad[i].arg, err, sizeof(err)), FLAGS_ERROR);
        ck_assert_msg(strstr(err, bad[i].why) != NULL, "%s: %s", bad[i].arg,
                      err);
        agent_flags_fini(&af);
    }
}
END_TEST

START_TEST(test_prepare)
{
    struct agent_flags af;
    char err[512] = "";
    ck_assert_int_eq(parse(&af, NULL, err, sizeof(err)), FLAGS_OK);
    char *environ_[] = {"HOME=/root", NULL};
    struct agent_launch_ctx ctx = {&af.launch, "/w/fetch", "A-S1",
                                   "127.0.0.1:5051", environ_};
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "fw";
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.id = &fid;
    fi.user = "root";
    fi.has_checkpoint = 1;
    fi.checkpoint = 1;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "t1";
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    u.value = "http://127.0.0.1:1/app.tar.gz";
    Mesos__V1__CommandInfo__URI *uv[] = {&u};
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "./app/run.sh";
    cmd.n_uris = 1;
    cmd.uris = uv;
    Mesos__V1__Resource__AllocationInfo ai =
        MESOS__V1__RESOURCE__ALLOCATION_INFO__INIT;
    ai.role = "eng";
    Mesos__V1__Resource r = MESOS__V1__RESOURCE__INIT;
    r.name = "cpus";
    r.allocation_info = &ai;
    Mesos__V1__Resource *rv[] = {&r};
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.task_id = &tid;
    ti.command = &cmd;
    ti.n_resources = 1;
    ti.resources = rv;
    ck_assert_int_eq(agent_launch_check(&ctx, &ti, err, sizeof(err)), 0);
    struct agent_launch_prep prep;
    ck_assert_msg(agent_launch_prepare(&ctx, &fi, &ti, "/w/sb", &prep, err,
                                       sizeof(err)) == 0,
                  "%s", err);
    ck_assert(prep.has_run_as);
    ck_assert_str_eq(prep.run_as.name, "root");
    ck_assert_ptr_nonnull(prep.fetch);
    ck_assert_uint_eq(prep.fetch->n, 1);
    ck_assert(prep.fetch->items[0].extract);
    ck_assert_str_eq(prep.fetch->cache_dir, "/w/fetch");
    struct agent_launch l;
    agent_launch_prep_fill(&prep, "/w/sb", &l);
    ck_assert_ptr_eq(l.run_as, &prep.run_as);
    ck_assert_ptr_eq(l.fetch, prep.fetch);
    bool role = false, ckpt = false;
    for (char *const *e = l.envp; *e != NULL; e++) {
        role = role || strcmp(*e, "MESOS_ALLOCATION_ROLE=eng") == 0;
        ckpt = ckpt || strcmp(*e, "MESOS_CHECKPOINT=1") == 0;
        ck_assert_msg(strncmp(*e, "HOME=", 5) != 0, "%s", *e);
    }
    ck_assert(role && ckpt);
    agent_launch_prep_clear(&prep);

    /* An unknown user, and a bad URI, are refused with nothing held. */
    fi.user = "no-such-user-xyz";
    ck_assert_int_eq(
        agent_launch_prepare(&ctx, &fi, &ti, "/w/sb", &prep, err, sizeof(err)),
        -1);
    ck_assert_ptr_nonnull(strstr(err, "No such user 'no-such-user-xyz'"));
    fi.user = "root";
    u.value = "http://host";
    ck_assert_int_eq(
        agent_launch_prepare(&ctx, &fi, &ti, "/w/sb", &prep, err, sizeof(err)),
        -1);
    ck_assert_ptr_nonnull(strstr(err, "Malformed URI"));
    /* DOCKER is refused before anything is made. */
    Mesos__V1__ContainerInfo ci = MESOS__V1__CONTAINER_INFO__INIT;
    ci.type = MESOS__V1__CONTAINER_INFO__TYPE__DOCKER;
    ti.container = &ci;
    ck_assert_int_eq(agent_launch_check(&ctx, &ti, err, sizeof(err)), -1);
    agent_flags_fini(&af);
}
END_TEST

/* A custom executor is prepared as a command task is: its user, its URIs
 * and an executor's environment; its ContainerInfo is checked first. */
START_TEST(test_prepare_executor)
{
    struct agent_flags af;
    char err[512] = "";
    ck_assert_int_eq(parse(&af, NULL, err, sizeof(err)), FLAGS_OK);
    char *environ_[] = {"HOME=/root", NULL};
    struct agent_launch_ctx ctx = {&af.launch, "/w/fetch", "A-S1",
                                   "127.0.0.1:5051", environ_};
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = "fw";
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.id = &fid;
    fi.user = "root";
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = "ex1";
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    u.value = "file:///opt/executor.tar.gz";
    Mesos__V1__CommandInfo__URI *uv[] = {&u};
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "./executor/run";
    cmd.n_uris = 1;
    cmd.uris = uv;
    Mesos__V1__ExecutorInfo ei = MESOS__V1__EXECUTOR_INFO__INIT;
    ei.executor_id = &eid;
    ei.command = &cmd;
    struct agent_launch_prep prep;
    ck_assert_msg(agent_launch_prepare_executor(&ctx, &fi, &ei, "/w/ex",
                                                7000000000LL, &prep, err,
                                                sizeof(err)) == 0,
                  "%s", err);
    ck_assert(prep.has_run_as);
    ck_assert_ptr_nonnull(prep.fetch);
    ck_assert_uint_eq(prep.fetch->n, 1);
    bool exid = false, backoff = false, grace = false;
    for (char *const *e = prep.cmd.envp; *e != NULL; e++) {
        exid = exid || strcmp(*e, "MESOS_EXECUTOR_ID=ex1") == 0;
        backoff =
            backoff || strncmp(*e, "MESOS_SUBSCRIPTION_BACKOFF_MAX=", 31) == 0;
        grace = grace ||
                strcmp(*e, "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD=7secs") == 0;
        ck_assert_msg(strncmp(*e, "MESOS_TASK_ID=", 14) != 0, "%s", *e);
        ck_assert_msg(strncmp(*e, "HOME=", 5) != 0, "%s", *e);
    }
    ck_assert(exid && backoff && grace);
    agent_launch_prep_clear(&prep);

    Mesos__V1__ContainerInfo ci = MESOS__V1__CONTAINER_INFO__INIT;
    ci.type = MESOS__V1__CONTAINER_INFO__TYPE__DOCKER;
    ei.container = &ci;
    ck_assert_int_eq(agent_launch_prepare_executor(&ctx, &fi, &ei, "/w/ex", 0,
                                                   &prep, err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "None of the enabled containerizers"));
    agent_flags_fini(&af);
}
END_TEST

static Suite *agent_launch_suite(void)
{
    Suite *s = suite_create("agent_launch");
    TCase *tc = tcase_create("launch");
    tcase_add_test(tc, test_container_check);
    tcase_add_test(tc, test_run_as_pick);
    tcase_add_test(tc, test_launch_flag_defaults);
    tcase_add_test(tc, test_launch_flag_rejections);
    tcase_add_test(tc, test_prepare);
    tcase_add_test(tc, test_prepare_executor);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_launch_suite)
