/*
 * Tests of the agent's custom executors (agent/executors.h) and their HTTP
 * API (agent/executor_api.h) through fake requests (common/http_fake.h): a
 * real executor process ("sleep", which never subscribes by itself) in a
 * temporary work_dir; the test subscribes in its place and reads the
 * events off the fake stream. No agent, no master, no sockets.
 */
#include "agent/executor_api.h"
#include "agent/executors.h"
#include "agent/flags_launch.h"
#include "check_main.h"
#include "common/fs.h"
#include "common/http.h"
#include "common/http_fake.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "mesos/v1/executor.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FW "fw-1"
#define EX "ex-1"

static char top[PATH_MAX];
static struct event_base *base;
static struct agent_execs *execs;

/* What the callbacks saw. */
static int nupdates, nmessages, nexited;
static char last_update_task[64];
static char last_message[64];
static struct agent_exec_end last_end;

static void on_update(const char *fw, const char *ex,
                      const Mesos__V1__TaskStatus *st, void *arg)
{
    (void)fw;
    (void)ex;
    (void)arg;
    nupdates++;
    snprintf(last_update_task, sizeof(last_update_task), "%s",
             st->task_id->value);
}

static void on_message(const char *fw, const char *ex, const uint8_t *data,
                       size_t len, void *arg)
{
    (void)fw;
    (void)ex;
    (void)arg;
    nmessages++;
    snprintf(last_message, sizeof(last_message), "%.*s", (int)len,
             (const char *)data);
}

static void on_exited(const char *fw, const char *ex,
                      const struct agent_exec_end *end, void *arg)
{
    (void)fw;
    (void)ex;
    (void)arg;
    nexited++;
    last_end = *end;
}

/* Mesos's defaults, but tasks run as the test's own user. */
static struct agent_launch_flags launch_flags = {
    .containerizers = "mesos",
    .switch_user = false,
    .fetcher_cache_size = 1 << 20,
    .fetcher_stall_timeout_ns = 60LL * 1000000000LL,
};

static void setup(void)
{
    snprintf(top, sizeof(top), "/tmp/offerd-execs-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    base = event_base_new();
    struct agent_execs_config cfg = {
        .work_dir = top,
        .agent_endpoint = "127.0.0.1:5051",
        .registration_timeout_ns = 60LL * 1000000000LL,
        .reregistration_timeout_ns = 2LL * 1000000000LL,
        .shutdown_grace_ns = 100LL * 1000000LL,
        .poll_ms = 20,
        .lf = &launch_flags,
        .cache_dir = "/nonexistent/fetch",
    };
    struct agent_execs_cbs cbs = {on_update, on_message, on_exited, NULL};
    execs = agent_execs_new(base, &cfg, &cbs);
    Mesos__V1__AgentInfo ai = MESOS__V1__AGENT_INFO__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "agent-1";
    ai.id = &aid;
    ai.hostname = "host-1";
    agent_execs_set_agent(execs, &ai);
    nupdates = nmessages = nexited = 0;
}

static void teardown(void)
{
    agent_execs_kill_now(execs);
    agent_execs_free(execs);
    event_base_free(base);
    fs_remove_tree(top);
}

/* Launch EX of FW running "sleep 30" with task task_id. */
static void run_task(const char *task_id)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.id = &fid;
    fi.user = "u";
    fi.name = "n";
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "exec sleep 30";
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX;
    Mesos__V1__ExecutorInfo ei = MESOS__V1__EXECUTOR_INFO__INIT;
    ei.executor_id = &eid;
    ei.command = &cmd;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "agent-1";
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = (char *)task_id;
    ti.task_id = &tid;
    ti.agent_id = &aid;
    ti.executor = &ei;
    char err[256];
    ck_assert_msg(
        agent_execs_run(execs, &fi, &ei, &ti, NULL, err, sizeof(err)) == 0,
        "%s", err);
}

/* POST body (JSON) to the executor API; the exchange (free it). */
static struct http_fake *post(const char *json)
{
    struct http_fake *x = http_fake_new(base, HTTP_POST, "/api/v1/executor");
    http_fake_add_header(x, "Content-Type", "application/json");
    http_fake_set_body(x, json, strlen(json));
    http_fake_dispatch(x, agent_exec_api_handle, execs);
    return x;
}

/* Status and reason of a one-shot call. */
static int post_status(const char *json, char *reason, size_t len)
{
    struct http_fake *x = post(json);
    ck_assert(http_fake_replied(x));
    int status = http_fake_status(x);
    size_t n;
    const uint8_t *b = http_fake_body(x, &n);
    snprintf(reason, len, "%.*s", (int)n, b != NULL ? (const char *)b : "");
    http_fake_free(x);
    return status;
}

#define IDS                                                                    \
    "\"framework_id\":{\"value\":\"" FW "\"},"                                 \
    "\"executor_id\":{\"value\":\"" EX "\"}"

/* Record i of a stream as an Event (free with jpb_free). */
static Mesos__V1__Executor__Event *event_at(struct http_fake *x, size_t i)
{
    size_t len;
    const uint8_t *r = http_fake_record(x, i, &len);
    ck_assert_ptr_nonnull(r);
    char err[256];
    Mesos__V1__Executor__Event *ev = (Mesos__V1__Executor__Event *)jpb_decode(
        &mesos__v1__executor__event__descriptor, JPB_JSON, r, len, err,
        sizeof(err));
    ck_assert_msg(ev != NULL, "%s", err);
    return ev;
}

static Mesos__V1__Executor__Event__Type type_at(struct http_fake *x, size_t i)
{
    Mesos__V1__Executor__Event *ev = event_at(x, i);
    Mesos__V1__Executor__Event__Type t = ev->type;
    jpb_free(&ev->base);
    return t;
}

START_TEST(test_unknown_framework_and_executor)
{
    char why[256];
    ck_assert_int_eq(post_status("{\"type\":\"SUBSCRIBE\",\"subscribe\":{}," IDS
                                 "}",
                                 why, sizeof(why)),
                     400);
    ck_assert_ptr_nonnull(strstr(why, "Framework cannot be found"));
    run_task("t1");
    ck_assert_int_eq(post_status("{\"type\":\"SUBSCRIBE\",\"subscribe\":{},"
                                 "\"framework_id\":{\"value\":\"" FW "\"},"
                                 "\"executor_id\":{\"value\":\"other\"}}",
                                 why, sizeof(why)),
                     400);
    ck_assert_ptr_nonnull(strstr(why, "Executor cannot be found"));
}
END_TEST

/* Each refused call: status, words of the reason. */
static const struct {
    const char *body;
    int status;
    const char *reason;
} refused[] = {
    {"{", 400, "Failed to parse body"},
    {"{\"type\":\"SUBSCRIBE\"}", 400, "Failed to parse body"},
    {"{\"type\":\"SUBSCRIBE\"," IDS "}", 400, "'subscribe'"},
    {"{\"type\":\"UPDATE\"," IDS "}", 400, "'update'"},
    {"{\"type\":\"MESSAGE\"," IDS "}", 400, "'message'"},
    {"{" IDS "}", 400, "'type'"},
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\"}}," IDS
     "}",
     400, "'uuid'"},
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\","
     "\"uuid\":\"AAAA\"}}," IDS "}",
     400, "16 bytes"},
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\","
     "\"executor_id\":{\"value\":\"zz\"},"
     "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}," IDS "}",
     400, "does not match"},
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\","
     "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}," IDS "}",
     400, "SOURCE_EXECUTOR"},
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_STAGING\",\"source\":\"SOURCE_EXECUTOR\","
     "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}," IDS "}",
     400, "TASK_STAGING"},
    {"{\"type\":\"SUBSCRIBE\",\"subscribe\":{\"unacknowledged_updates\":[{"
     "\"status\":{\"task_id\":{\"value\":\"t1\"},\"state\":\"TASK_RUNNING\","
     "\"source\":\"SOURCE_EXECUTOR\"}}]}," IDS "}",
     400, "'uuid'"},
    /* Valid, but not subscribed yet. */
    {"{\"type\":\"UPDATE\",\"update\":{\"status\":{\"task_id\":{\"value\":"
     "\"t1\"},\"state\":\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\","
     "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}," IDS "}",
     403, "Executor is not subscribed"},
    {"{\"type\":\"MESSAGE\",\"message\":{\"data\":\"aGk=\"}," IDS "}", 403,
     "Executor is not subscribed"},
};

START_TEST(test_refused_calls_change_nothing)
{
    run_task("t1");
    char why[512];
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int st = post_status(refused[i].body, why, sizeof(why));
        ck_assert_msg(st == refused[i].status, "case %zu: %d (%s)", i, st, why);
        ck_assert_msg(strstr(why, refused[i].reason) != NULL,
                      "case %zu: reason '%s' lacks '%s'", i, why,
                      refused[i].reason);
    }
    ck_assert_int_eq(nupdates, 0);
    ck_assert_int_eq(nmessages, 0);
    ck_assert_uint_eq(agent_execs_count(execs), 1);
    /* HEARTBEAT is always fine. */
    ck_assert_int_eq(
        post_status("{\"type\":\"HEARTBEAT\"," IDS "}", why, sizeof(why)), 202);
}
END_TEST

START_TEST(test_subscribe_launch_update_message_shutdown)
{
    run_task("t1");
    run_task("t2"); /* same executor: queued too */
    ck_assert_uint_eq(agent_execs_count(execs), 1);
    struct http_fake *s =
        post("{\"type\":\"SUBSCRIBE\",\"subscribe\":{}," IDS "}");
    ck_assert(http_fake_is_stream(s));
    ck_assert_str_eq(http_fake_content_type(s), "application/json");
    ck_assert_uint_eq(http_fake_record_count(s), 3);
    Mesos__V1__Executor__Event *ev = event_at(s, 0);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__SUBSCRIBED);
    ck_assert_str_eq(ev->subscribed->executor_info->framework_id->value, FW);
    ck_assert_str_eq(ev->subscribed->agent_info->id->value, "agent-1");
    ck_assert_ptr_nonnull(ev->subscribed->container_id);
    jpb_free(&ev->base);
    ev = event_at(s, 1);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__LAUNCH);
    ck_assert_str_eq(ev->launch->task->task_id->value, "t1");
    jpb_free(&ev->base);
    ck_assert_int_eq(type_at(s, 2), MESOS__V1__EXECUTOR__EVENT__TYPE__LAUNCH);

    /* A later task goes out at once; KILL of a task too. */
    run_task("t3");
    ck_assert_uint_eq(http_fake_record_count(s), 4);
    ck_assert_int_eq(agent_execs_kill(execs, FW, EX, "t3", NULL),
                     AGENT_EXECS_KILL_SENT);
    ev = event_at(s, 4);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__KILL);
    ck_assert_str_eq(ev->kill->task_id->value, "t3");
    jpb_free(&ev->base);

    char why[256];
    ck_assert_int_eq(
        post_status("{\"type\":\"UPDATE\",\"update\":{\"status\":{"
                    "\"task_id\":{\"value\":\"t1\"},\"state\":"
                    "\"TASK_RUNNING\",\"source\":\"SOURCE_EXECUTOR\","
                    "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}}," IDS "}",
                    why, sizeof(why)),
        202);
    ck_assert_int_eq(nupdates, 1);
    ck_assert_str_eq(last_update_task, "t1");
    uint8_t uuid[16] = {0};
    agent_execs_acknowledged(execs, FW, EX, "t1", uuid, 16);
    ck_assert_int_eq(type_at(s, 5),
                     MESOS__V1__EXECUTOR__EVENT__TYPE__ACKNOWLEDGED);

    ck_assert_int_eq(
        post_status("{\"type\":\"MESSAGE\",\"message\":{\"data\":\"aGk=\"}," IDS
                    "}",
                    why, sizeof(why)),
        202);
    ck_assert_int_eq(nmessages, 1);
    ck_assert_str_eq(last_message, "hi");
    ck_assert_int_eq(
        agent_execs_message(execs, FW, EX, (const uint8_t *)"yo", 2), 0);
    ev = event_at(s, 6);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__MESSAGE);
    ck_assert_uint_eq(ev->message->data.len, 2);
    jpb_free(&ev->base);

    /* SHUTDOWN; the executor (sleep) ignores it, so SIGTERM after the
     * grace period ends it. */
    ck_assert_int_eq(agent_execs_shutdown(execs, FW, EX), 0);
    ck_assert_int_eq(type_at(s, 7), MESOS__V1__EXECUTOR__EVENT__TYPE__SHUTDOWN);
    for (int i = 0; i < 500 && nexited == 0; i++) {
        event_base_loop(base, EVLOOP_ONCE);
    }
    ck_assert_int_eq(nexited, 1);
    ck_assert(last_end.shutdown);
    ck_assert(!last_end.registration_timeout);
    ck_assert(last_end.has_status);
    ck_assert(WIFSIGNALED(last_end.wait_status));
    ck_assert_uint_eq(agent_execs_count(execs), 0);
    /* Its checkpoint is gone with it. */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/meta/executors/" FW "/" EX ".json", top);
    struct stat st;
    ck_assert_int_ne(stat(p, &st), 0);
    http_fake_free(s);
}
END_TEST

START_TEST(test_queued_task_killed_before_subscription)
{
    run_task("t1");
    run_task("t2");
    ck_assert_int_eq(agent_execs_kill(execs, FW, EX, "t1", NULL),
                     AGENT_EXECS_KILL_DEQUEUED);
    ck_assert_int_eq(agent_execs_kill(execs, FW, "nope", "t1", NULL),
                     AGENT_EXECS_KILL_NONE);
    struct http_fake *s =
        post("{\"type\":\"SUBSCRIBE\",\"subscribe\":{}," IDS "}");
    ck_assert_uint_eq(http_fake_record_count(s), 2);
    Mesos__V1__Executor__Event *ev = event_at(s, 1);
    ck_assert_str_eq(ev->launch->task->task_id->value, "t2");
    jpb_free(&ev->base);
    http_fake_free(s);
}
END_TEST

START_TEST(test_environment_and_sandbox)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.id = &fid;
    fi.user = "u";
    fi.name = "n";
    fi.has_checkpoint = 1;
    fi.checkpoint = 1;
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "env > env.txt; exec sleep 30";
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX;
    Mesos__V1__ExecutorInfo ei = MESOS__V1__EXECUTOR_INFO__INIT;
    ei.executor_id = &eid;
    ei.command = &cmd;
    char err[256];
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "t1";
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = "agent-1";
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = "t1";
    ti.task_id = &tid;
    ti.agent_id = &aid;
    ck_assert_int_eq(
        agent_execs_run(execs, &fi, &ei, &ti, NULL, err, sizeof(err)), 0);
    const char *sandbox = NULL;
    ck_assert_ptr_nonnull(agent_execs_info(execs, FW, EX, &sandbox));
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want),
             "%s/slaves/agent-1/frameworks/" FW "/executors/" EX "/runs/", top);
    ck_assert(strncmp(sandbox, want, strlen(want)) == 0);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/env.txt", sandbox);
    uint8_t *data = NULL;
    size_t len = 0;
    for (int i = 0; i < 200; i++) {
        free(data);
        data = NULL;
        if (fs_read(p, 1 << 20, &data, &len) == 1 &&
            strstr((char *)data, "MESOS_HTTP_COMMAND_EXECUTOR") != NULL)
            break;
        usleep(20000);
    }
    ck_assert_ptr_nonnull(data);
    const char *env = (const char *)data;
    char line[PATH_MAX + 64];
    snprintf(line, sizeof(line), "MESOS_SANDBOX=%s\n", sandbox);
    ck_assert_ptr_nonnull(strstr(env, line));
    snprintf(line, sizeof(line), "MESOS_DIRECTORY=%s\n", sandbox);
    ck_assert_ptr_nonnull(strstr(env, line));
    static const char *const want_env[] = {
        "MESOS_AGENT_ENDPOINT=127.0.0.1:5051\n",
        "MESOS_FRAMEWORK_ID=" FW "\n",
        "MESOS_EXECUTOR_ID=" EX "\n",
        "MESOS_AGENT_ID=agent-1\n",
        "MESOS_SLAVE_ID=agent-1\n",
        "MESOS_SLAVE_PID=slave(1)@127.0.0.1:5051\n",
        "MESOS_CHECKPOINT=1\n",
        "MESOS_RECOVERY_TIMEOUT=15mins\n",
        "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD=100ms\n",
        "MESOS_SUBSCRIPTION_BACKOFF_MAX=2secs\n",
        "MESOS_HTTP_COMMAND_EXECUTOR=0\n",
    };
    for (size_t i = 0; i < sizeof(want_env) / sizeof(want_env[0]); i++)
        ck_assert_msg(strstr(env, want_env[i]) != NULL, "no %s in %s",
                      want_env[i], env);
    free(data);
    /* Checkpointed. */
    snprintf(p, sizeof(p), "%s/meta/executors/" FW "/" EX ".json", top);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    /* Another command under the same id is refused. */
    cmd.value = "exec sleep 31";
    tid.value = "t2";
    ck_assert_int_eq(
        agent_execs_run(execs, &fi, &ei, &ti, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "another command"));
    /* An id that cannot name a directory is refused. */
    eid.value = "../x";
    ck_assert_int_eq(
        agent_execs_run(execs, &fi, &ei, &ti, NULL, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_registration_timeout_kills)
{
    agent_execs_free(execs);
    struct agent_execs_config cfg = {
        .work_dir = top,
        .agent_endpoint = "127.0.0.1:5051",
        .registration_timeout_ns = 200LL * 1000000LL,
        .reregistration_timeout_ns = 200LL * 1000000LL,
        .shutdown_grace_ns = 100LL * 1000000LL,
        .poll_ms = 20,
        .lf = &launch_flags,
        .cache_dir = "/nonexistent/fetch",
    };
    struct agent_execs_cbs cbs = {on_update, on_message, on_exited, NULL};
    execs = agent_execs_new(base, &cfg, &cbs);
    run_task("t1");
    for (int i = 0; i < 1000 && nexited == 0; i++)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_int_eq(nexited, 1);
    ck_assert(last_end.registration_timeout);
    ck_assert_ptr_nonnull(strstr(last_end.message, "did not register"));
}
END_TEST

START_TEST(test_recover_reattaches_live_executor)
{
    run_task("t1");
    const char *sandbox = NULL;
    agent_execs_info(execs, FW, EX, &sandbox);
    char *saved = xstrdup(sandbox);
    /* Wait until the supervisor recorded itself and the executor runs. */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/.offerd.task.pid", saved);
    struct stat st;
    for (int i = 0; i < 200 && stat(p, &st) != 0; i++)
        usleep(20000);
    ck_assert_int_eq(stat(p, &st), 0);
    /* A new module over the same work_dir (the agent restarted). */
    agent_execs_free(execs);
    struct agent_execs_config cfg = {
        .work_dir = top,
        .agent_endpoint = "127.0.0.1:5051",
        .registration_timeout_ns = 60LL * 1000000000LL,
        .reregistration_timeout_ns = 60LL * 1000000000LL,
        .shutdown_grace_ns = 100LL * 1000000LL,
        .poll_ms = 20,
        .lf = &launch_flags,
        .cache_dir = "/nonexistent/fetch",
    };
    struct agent_execs_cbs cbs = {on_update, on_message, on_exited, NULL};
    execs = agent_execs_new(base, &cfg, &cbs);
    ck_assert_uint_eq(agent_execs_recover(execs), 1);
    const char *again = NULL;
    ck_assert_ptr_nonnull(agent_execs_info(execs, FW, EX, &again));
    ck_assert_str_eq(again, saved);
    /* It subscribes again and gets SUBSCRIBED (nothing queued). */
    struct http_fake *s =
        post("{\"type\":\"SUBSCRIBE\",\"subscribe\":{}," IDS "}");
    ck_assert_uint_eq(http_fake_record_count(s), 1);
    http_fake_free(s);
    free(saved);
}
END_TEST

static Suite *executors_suite(void)
{
    Suite *s = suite_create("agent_executors");
    TCase *tc = tcase_create("executors");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_unknown_framework_and_executor);
    tcase_add_test(tc, test_refused_calls_change_nothing);
    tcase_add_test(tc, test_subscribe_launch_update_message_shutdown);
    tcase_add_test(tc, test_queued_task_killed_before_subscription);
    tcase_add_test(tc, test_environment_and_sandbox);
    tcase_add_test(tc, test_registration_timeout_kills);
    tcase_add_test(tc, test_recover_reattaches_live_executor);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(executors_suite)
