/*
 * Tests of the oversubscription flags (agent/flags_agent.h) and of the
 * estimator rounds (agent/oversub.h) without tasks: the fixed estimate
 * from the flag or from a file read again every round, UPDATE_OVERSUBSCRIBED
 * sent when it changes and after each registration, a bad file keeping the
 * previous estimate. (Rounds with tasks, the usage estimator and evictions
 * run end to end in tests/e2e/e2e_agent_oversub.c.)
 */
#include "agent/flags_agent.h"
#include "agent/oversub.h"
#include "agent/tasks.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/mem.h"
#include "common/resources.h"
#include "common/resources_pb.h"

#include <check.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static enum flags_result parse(struct agent_flags *af, const char *const *args,
                               char *err, size_t errlen)
{
    char *argv[32] = {"offerd-agent", "--master=127.0.0.1:5050"};
    int argc = 2;
    for (; *args != NULL; args++)
        argv[argc++] = (char *)*args;
    agent_flags_init(af);
    return agent_flags_parse(af, argc, argv, NULL, err, errlen);
}

START_TEST(test_flag_defaults)
{
    struct agent_flags af;
    char err[512] = "";
    const char *none[] = {NULL};
    ck_assert_int_eq(parse(&af, none, err, sizeof(err)), FLAGS_OK);
    ck_assert_int_eq(af.estimator, AGENT_ESTIMATOR_NONE);
    ck_assert_int_eq(af.qos, AGENT_QOS_NONE);
    ck_assert_ptr_null(af.oversubscribed_resources);
    ck_assert_int_eq(af.oversubscription_interval_ns, 15000000000LL);
    ck_assert(af.oversubscription_margin == 0.1);
    ck_assert(af.qos_load_threshold == 0); /* the number of CPUs */
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_flags_accepted)
{
    struct agent_flags af;
    char err[512] = "";
    const char *fixed[] = {"--resource_estimator=fixed",
                           "--oversubscribed_resources=cpus:2;mem:512",
                           "--oversubscription_interval=100ms",
                           "--qos_controller=load",
                           "--qos_load_threshold=2.5",
                           NULL};
    ck_assert_msg(parse(&af, fixed, err, sizeof(err)) == FLAGS_OK, "%s", err);
    ck_assert_int_eq(af.estimator, AGENT_ESTIMATOR_FIXED);
    ck_assert_int_eq(af.qos, AGENT_QOS_LOAD);
    ck_assert_int_eq(af.oversubscription_interval_ns, 100000000LL);
    ck_assert(af.qos_load_threshold == 2.5);
    agent_flags_fini(&af);

    const char *usage[] = {"--resource_estimator=usage",
                           "--oversubscription_margin=0", NULL};
    ck_assert_msg(parse(&af, usage, err, sizeof(err)) == FLAGS_OK, "%s", err);
    ck_assert_int_eq(af.estimator, AGENT_ESTIMATOR_USAGE);
    ck_assert(af.oversubscription_margin == 0);
    agent_flags_fini(&af);

    /* A file is not read at flag time. */
    const char *file[] = {"--resource_estimator=fixed",
                          "--oversubscribed_resources=file:///nonexistent",
                          NULL};
    ck_assert_msg(parse(&af, file, err, sizeof(err)) == FLAGS_OK, "%s", err);
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_flags_rejected)
{
    static const struct {
        const char *args[4];
        const char *needle;
    } cases[] = {
        {{"--resource_estimator=magic"}, "--resource_estimator"},
        {{"--resource_estimator=fixed"}, "--oversubscribed_resources"},
        {{"--oversubscribed_resources=cpus:1"}, "only for"},
        {{"--resource_estimator=usage", "--oversubscribed_resources=cpus:1"},
         "only for"},
        {{"--resource_estimator=fixed", "--oversubscribed_resources=cpus:x"},
         "--oversubscribed_resources"},
        {{"--resource_estimator=fixed",
          "--oversubscribed_resources=cpus(eng):1"},
         "cannot be reserved"},
        {{"--resource_estimator=fixed", "--oversubscribed_resources=file://"},
         "path"},
        {{"--oversubscription_interval=0ms"}, "--oversubscription_interval"},
        {{"--oversubscription_margin=1"}, "--oversubscription_margin"},
        {{"--oversubscription_margin=-0.1"}, "--oversubscription_margin"},
        {{"--qos_controller=kill-all"}, "--qos_controller"},
        {{"--qos_load_threshold=0"}, "--qos_load_threshold"},
        {{"--qos_load_threshold=-2"}, "--qos_load_threshold"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct agent_flags af;
        char err[512] = "";
        ck_assert_msg(parse(&af, cases[i].args, err, sizeof(err)) ==
                          FLAGS_ERROR,
                      "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].needle) != NULL, "case %zu: %s", i,
                      err);
        agent_flags_fini(&af);
    }
}
END_TEST

/* ---- Rounds ---- */

struct sent {
    bool registered; /* send succeeds */
    char *last;      /* rendered resources of the last call sent */
    int n;           /* calls sent */
    bool all_revocable;
};

static int record_send(Offerd__Agent__Call *call, void *arg)
{
    struct sent *s = arg;
    ck_assert_int_eq(call->type,
                     OFFERD__AGENT__CALL__TYPE__UPDATE_OVERSUBSCRIBED);
    ck_assert_ptr_nonnull(call->update_oversubscribed);
    if (!s->registered)
        return -1;
    res_list l = RES_LIST_INIT;
    char err[256];
    ck_assert_msg(res_list_from_pb(
                      call->update_oversubscribed->oversubscribed_resources,
                      call->update_oversubscribed->n_oversubscribed_resources,
                      &l, err, sizeof(err)) == 0,
                  "%s", err);
    s->all_revocable = true;
    for (uint32_t i = 0; i < l.n; i++)
        s->all_revocable = s->all_revocable && l.v[i].revocable;
    free(s->last);
    s->last = res_list_render(&l);
    res_list_clear(&l);
    s->n++;
    return 0;
}

static void no_evict(struct agent_task *t, const char *why, void *arg)
{
    (void)t;
    (void)why;
    (void)arg;
    ck_abort_msg("nothing to evict without tasks");
}

static void pump(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

static void write_text(const char *path, const char *text)
{
    ck_assert_int_eq(fs_write_atomic(path, text, strlen(text)), 0);
}

START_TEST(test_fixed_file_rounds)
{
    char dir[64], path[128], flag[256];
    snprintf(dir, sizeof(dir), "/tmp/offerd-oversub-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/estimate", dir);
    snprintf(flag, sizeof(flag), "--oversubscribed_resources=file://%s", path);
    write_text(path, "cpus:2;mem:512\n");

    struct agent_flags af;
    char err[512] = "";
    const char *args[] = {"--resource_estimator=fixed", flag,
                          "--oversubscription_interval=40ms", NULL};
    ck_assert_int_eq(parse(&af, args, err, sizeof(err)), FLAGS_OK);
    struct event_base *base = event_base_new();
    struct agent_tasks_cbs tcbs = {NULL, NULL, NULL};
    struct agent_tasks *tasks = agent_tasks_new(base, &tcbs);
    struct sent s = {0};
    struct agent_oversub_config cfg = {&af, "/proc", NULL};
    struct agent_oversub_cbs cbs = {record_send, no_evict, &s};
    struct agent_oversub *o =
        agent_oversub_new(base, &cfg, tasks, &cbs, err, sizeof(err));
    ck_assert_msg(o != NULL, "%s", err);
    ck_assert_ptr_null(agent_oversub_estimate(o));

    /* Not registered yet: the estimate waits for REGISTERED. */
    agent_oversub_start(o);
    ck_assert_ptr_nonnull(agent_oversub_estimate(o));
    ck_assert_int_eq(s.n, 0);
    s.registered = true;
    agent_oversub_registered(o);
    ck_assert_int_eq(s.n, 1);
    ck_assert(s.all_revocable);
    ck_assert_ptr_nonnull(strstr(s.last, "cpus"));
    ck_assert_ptr_nonnull(strstr(s.last, ":2"));

    /* Unchanged: nothing more is sent. */
    pump(base, 150);
    ck_assert_int_eq(s.n, 1);

    /* Changed: sent at the next round. */
    write_text(path, "cpus:1");
    pump(base, 150);
    ck_assert_int_eq(s.n, 2);
    ck_assert_ptr_null(strstr(s.last, "mem"));
    ck_assert_int_eq(res_list_scalar(agent_oversub_estimate(o), "cpus"), 1000);

    /* A bad file keeps the previous estimate. */
    write_text(path, "cpus:lots");
    pump(base, 150);
    ck_assert_int_eq(s.n, 2);
    unlink(path);
    pump(base, 100);
    ck_assert_int_eq(s.n, 2);
    ck_assert_int_eq(res_list_scalar(agent_oversub_estimate(o), "cpus"), 1000);

    /* An empty file: no revocable resources, sent as an empty list. */
    write_text(path, "\n");
    pump(base, 150);
    ck_assert_int_eq(s.n, 3);
    ck_assert_str_eq(s.last, "");

    /* Each registration sends it again. */
    agent_oversub_registered(o);
    ck_assert_int_eq(s.n, 4);

    /* Stopped: no more rounds. */
    agent_oversub_stop(o);
    write_text(path, "cpus:3");
    pump(base, 150);
    ck_assert_int_eq(s.n, 4);

    agent_oversub_free(o);
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_flags_fini(&af);
    free(s.last);
    fs_remove_tree(dir);
}
END_TEST

START_TEST(test_fixed_bad_file_at_start)
{
    struct agent_flags af;
    char err[512] = "";
    const char *args[] = {
        "--resource_estimator=fixed",
        "--oversubscribed_resources=file:///nonexistent/offerd-estimate", NULL};
    ck_assert_int_eq(parse(&af, args, err, sizeof(err)), FLAGS_OK);
    struct event_base *base = event_base_new();
    struct agent_tasks_cbs tcbs = {NULL, NULL, NULL};
    struct agent_tasks *tasks = agent_tasks_new(base, &tcbs);
    struct sent s = {0};
    struct agent_oversub_config cfg = {&af, "/proc", NULL};
    struct agent_oversub_cbs cbs = {record_send, no_evict, &s};
    ck_assert_ptr_null(
        agent_oversub_new(base, &cfg, tasks, &cbs, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/offerd-estimate"));
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_flags_fini(&af);
}
END_TEST

START_TEST(test_inline_fixed_and_none)
{
    struct agent_flags af;
    char err[512] = "";
    const char *args[] = {"--resource_estimator=fixed",
                          "--oversubscribed_resources=cpus:0.5", NULL};
    ck_assert_int_eq(parse(&af, args, err, sizeof(err)), FLAGS_OK);
    struct event_base *base = event_base_new();
    struct agent_tasks_cbs tcbs = {NULL, NULL, NULL};
    struct agent_tasks *tasks = agent_tasks_new(base, &tcbs);
    struct sent s = {.registered = true};
    struct agent_oversub_config cfg = {&af, "/proc", NULL};
    struct agent_oversub_cbs cbs = {record_send, no_evict, &s};
    struct agent_oversub *o =
        agent_oversub_new(base, &cfg, tasks, &cbs, err, sizeof(err));
    ck_assert_ptr_nonnull(o);
    agent_oversub_start(o);
    ck_assert_int_eq(s.n, 1);
    ck_assert(s.all_revocable);
    agent_oversub_free(o);
    agent_flags_fini(&af);

    /* No estimator: nothing is ever sent. */
    const char *none[] = {NULL};
    ck_assert_int_eq(parse(&af, none, err, sizeof(err)), FLAGS_OK);
    s.n = 0;
    o = agent_oversub_new(base, &cfg, tasks, &cbs, err, sizeof(err));
    ck_assert_ptr_nonnull(o);
    agent_oversub_start(o);
    agent_oversub_registered(o);
    ck_assert_int_eq(s.n, 0);
    ck_assert_ptr_null(agent_oversub_estimate(o));
    agent_oversub_free(o);
    agent_tasks_free(tasks);
    event_base_free(base);
    agent_flags_fini(&af);
    free(s.last);
}
END_TEST

static Suite *oversub_suite(void)
{
    Suite *s = suite_create("agent_oversub");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_flag_defaults);
    tcase_add_test(tc, test_flags_accepted);
    tcase_add_test(tc, test_flags_rejected);
    tcase_add_test(tc, test_fixed_file_rounds);
    tcase_add_test(tc, test_fixed_bad_file_at_start);
    tcase_add_test(tc, test_inline_fixed_and_none);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(oversub_suite)
