/*
 * End-to-end tests of custom executors on offerd-agent, driven by the fake
 * master of harness_agent_master.h: RUN_TASK with an ExecutorInfo whose
 * command is test_executor (a small executor written only against Mesos's
 * documented executor API), then the executor HTTP API between them:
 * SUBSCRIBE, LAUNCH of queued and later tasks, UPDATE through the agent's
 * reliable updates and ACKNOWLEDGED back, messages both ways, KILL,
 * SHUTDOWN, the registration timeout, an executor that exits, the refusals
 * of bad calls, and an agent kill -9 and restart with the executor
 * subscribing again and keeping its tasks.
 *
 * No executor may outlive a test: executors run in their sandboxes under
 * the agent's work_dir, and every process there is SIGKILLed at teardown
 * and when the suite ends.
 */
#include "harness.h"
#include "harness_agent_master.h"

#include "common/fs.h"
#include "common/json_pb.h"
#include "common/jwt.h"
#include "mesos/v1/executor.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <check.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TEST_EXECUTOR_BIN
#define TEST_EXECUTOR_BIN "test_executor"
#endif

#define FW_ID "fw-exec-0001"
#define EX_ID "ex1"

#define RUNNING MESOS__V1__TASK_STATE__TASK_RUNNING
#define KILLED  MESOS__V1__TASK_STATE__TASK_KILLED
#define FAILED  MESOS__V1__TASK_STATE__TASK_FAILED
#define UPDATE  OFFERD__AGENT__CALL__TYPE__UPDATE

static char base_dir[64];

static void suite_setup(void)
{
    snprintf(base_dir, sizeof(base_dir), "/tmp/offerd-exec-e2e-XXXXXX");
    if (mkdtemp(base_dir) == NULL)
        base_dir[0] = '\0';
}

static void suite_teardown(void)
{
    if (e2e_kill_under(base_dir) > 0)
        fprintf(stderr, "e2e_executors: killed processes left by failed "
                        "tests\n");
    fs_remove_tree(base_dir);
}

static struct e2e_proc agent;
static char agent_work[PATH_MAX];

static void start_agent(const char *const *extra)
{
    ck_assert_msg(hfm_spawn_agent(&agent, agent_work, extra) == 0,
                  "offerd-agent did not start");
}

static void setup(void)
{
    ck_assert(base_dir[0] != '\0');
    snprintf(agent_work, sizeof(agent_work), "%s/agent-XXXXXX", base_dir);
    ck_assert_ptr_nonnull(mkdtemp(agent_work));
    hfm_start();
}

static void teardown(void)
{
    if (agent.pid > 0)
        ck_assert_int_eq(hfm_stop_agent(&agent), 0);
    e2e_proc_cleanup(&agent);
    e2e_kill_under(agent_work);
    fs_remove_tree(agent_work);
    hfm_stop();
}

/* ---- Building the master's events ---- */

struct exec_task {
    const char *task_id;
    const char *name;    /* NULL: the task id */
    const char *command; /* the executor's shell command; NULL: executor */
    const char *mode;    /* TEST_EXECUTOR_MODE, or NULL */
    const char *program; /* instead of test_executor, no shell */
    bool checkpoint;     /* FrameworkInfo.checkpoint */
};

/* RUN_TASK of a task on executor EX_ID of FW_ID. */
static void run_exec_task(const struct exec_task *t)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "e2e";
    fi.name = "e2e-executors";
    fi.id = &fid;
    fi.has_checkpoint = 1;
    fi.checkpoint = t->checkpoint;

    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = (char *)(t->command != NULL   ? t->command
                         : t->program != NULL ? t->program
                                              : TEST_EXECUTOR_BIN);
    cmd.has_shell = 1;
    cmd.shell = t->command != NULL;
    Mesos__V1__Environment env = MESOS__V1__ENVIRONMENT__INIT;
    Mesos__V1__Environment__Variable var =
        MESOS__V1__ENVIRONMENT__VARIABLE__INIT;
    Mesos__V1__Environment__Variable *vars[1] = {&var};
    if (t->mode != NULL) {
        var.name = "TEST_EXECUTOR_MODE";
        var.value = (char *)t->mode;
        env.n_variables = 1;
        env.variables = vars;
        cmd.environment = &env;
    }
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX_ID;
    Mesos__V1__ExecutorInfo ei = MESOS__V1__EXECUTOR_INFO__INIT;
    ei.has_type = 1;
    ei.type = MESOS__V1__EXECUTOR_INFO__TYPE__CUSTOM;
    ei.executor_id = &eid;
    ei.command = &cmd;
    ei.name = "e2e executor";

    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)t->task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = HFM_AGENT_ID;
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = (char *)(t->name != NULL ? t->name : t->task_id);
    ti.task_id = &tid;
    ti.agent_id = &aid;
    ti.executor = &ei;

    Offerd__Agent__Event__RunTask rt = OFFERD__AGENT__EVENT__RUN_TASK__INIT;
    rt.framework_info = &fi;
    rt.task = &ti;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__RUN_TASK;
    ev.run_task = &rt;
    hfm_send(&ev);
}

static void framework_message(const char *data)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX_ID;
    Offerd__Agent__Event__FrameworkMessage m =
        OFFERD__AGENT__EVENT__FRAMEWORK_MESSAGE__INIT;
    m.framework_id = &fid;
    m.executor_id = &eid;
    m.data.data = (uint8_t *)data;
    m.data.len = strlen(data);
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__FRAMEWORK_MESSAGE;
    ev.framework_message = &m;
    hfm_send(&ev);
}

static void shutdown_executor(void)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX_ID;
    Offerd__Agent__Event__ShutdownExecutor s =
        OFFERD__AGENT__EVENT__SHUTDOWN_EXECUTOR__INIT;
    s.framework_id = &fid;
    s.executor_id = &eid;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_EXECUTOR;
    ev.shutdown_executor = &s;
    hfm_send(&ev);
}

/* ---- Looking at the agent ---- */

static json_t *agent_state(void)
{
    json_t *j = e2e_get_json(agent.port, "/state");
    ck_assert_ptr_nonnull(j);
    return j;
}

/* The executor EX_ID's object in the agent's /state, or NULL (new
 * reference of the whole document in *doc). */
static json_t *state_executor(json_t **doc)
{
    *doc = agent_state();
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(*doc, "frameworks"), i, f)
        json_array_foreach(json_object_get(f, "executors"), k, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "id")), EX_ID) == 0)
            return e;
    }
    return NULL;
}

/* The executor's sandbox (from /state) into out. */
static void executor_sandbox(char *out, size_t len)
{
    json_t *doc;
    json_t *e = state_executor(&doc);
    ck_assert_msg(e != NULL, "no executor %s in /state", EX_ID);
    snprintf(out, len, "%s",
             json_string_value(json_object_get(e, "directory")));
    json_decref(doc);
}

struct needle {
    const char *sandbox;
    const char *text;
};

static bool stdout_has(void *arg)
{
    const struct needle *n = arg;
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/stdout", n->sandbox);
    uint8_t *data = NULL;
    size_t len;
    if (fs_read(p, 1 << 20, &data, &len) != 1)
        return false;
    bool found = strstr((const char *)data, n->text) != NULL;
    free(data);
    return found;
}

/* Wait until the executor's stdout holds text. */
static void wait_stdout(const char *sandbox, const char *text)
{
    struct needle n = {sandbox, text};
    ck_assert_msg(hfm_pump_until(stdout_has, &n, 15000),
                  "the executor's stdout never said '%s'", text);
}

static const Mesos__V1__TaskStatus *wait_update(size_t *from,
                                                const char *task_id, int state)
{
    long i = hfm_wait_call(from, UPDATE, task_id, state, 15000);
    ck_assert_msg(i >= 0, "no UPDATE %d for task %s", state, task_id);
    return hfm.calls[i]->update->status;
}

static const Offerd__Agent__Call *wait_call(size_t *from,
                                            Offerd__Agent__Call__Type type)
{
    long i = hfm_wait_call(from, type, NULL, -1, 15000);
    ck_assert_msg(i >= 0, "no call of type %d", (int)type);
    return hfm.calls[i];
}

/* POST a call body to the agent's executor API. */
static int post_executor(const char *ctype, const void *body, size_t len,
                         char *reason, size_t rlen)
{
    char h[128];
    snprintf(h, sizeof(h), "Content-Type: %s", ctype);
    const char *headers[] = {h, NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, "POST", "/api/v1/executor", headers,
                              body, len, 5000, &r),
                     0);
    int status = r.status;
    if (reason != NULL)
        snprintf(reason, rlen, "%s", r.body != NULL ? r.body : "");
    e2e_response_free(&r);
    return status;
}

static int post_json(const char *json, char *reason, size_t rlen)
{
    return post_executor("application/json", json, strlen(json), reason, rlen);
}

/* POST a JSON call with "Authorization: Bearer <token>" (token NULL: no
 * header); returns the status. */
static int post_with_token(const char *token, const char *json, char *reason,
                           size_t rlen)
{
    char auth[JWT_MAX_TOKEN + 64];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
             token != NULL ? token : "");
    const char *headers[] = {"Content-Type: application/json",
                             token != NULL ? auth : NULL, NULL};
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, "POST", "/api/v1/executor", headers,
                              json, strlen(json), 5000, &r),
                     0);
    int status = r.status;
    snprintf(reason, rlen, "%s", r.body != NULL ? r.body : "");
    e2e_response_free(&r);
    return status;
}

/* The agent's executor key in these tests. */
static const char key[] = "e2e-executor-key\n";

/* Write key next to the agent's work_dir (removed with base_dir) into
 * keyfile (PATH_MAX + 16 bytes) and its flag into keyflag (PATH_MAX + 64
 * bytes). */
static void write_executor_key(char *keyfile, char *keyflag)
{
    snprintf(keyfile, PATH_MAX + 16, "%s.key", agent_work);
    ck_assert_int_eq(fs_write_atomic(keyfile, key, strlen(key)), 0);
    snprintf(keyflag, PATH_MAX + 64, "--executor_secret_key=%s", keyfile);
}

/* A token over fid, eid and cid signed with k. New string. */
static char *token_of(const char *k, const char *fid, const char *eid,
                      const char *cid)
{
    json_t *claims =
        json_pack("{s:s, s:s, s:s}", "fid", fid, "eid", eid, "cid", cid);
    char *t = jwt_hs256_sign(claims, (const uint8_t *)k, strlen(k));
    json_decref(claims);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* ---- Tests ---- */

START_TEST(test_two_tasks_messages_kill_shutdown)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "t1"}, t2 = {.task_id = "t2"};
    run_exec_task(&t1);
    run_exec_task(&t2);
    size_t f1 = from, f2 = from;
    const Mesos__V1__TaskStatus *st = wait_update(&f1, "t1", RUNNING);
    ck_assert_int_eq(st->source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
    ck_assert_str_eq(st->executor_id->value, EX_ID);
    ck_assert_str_eq(st->agent_id->value, HFM_AGENT_ID);
    ck_assert_uint_eq(st->uuid.len, 16);
    wait_update(&f2, "t2", RUNNING);

    /* One executor, two tasks, Mesos's sandbox layout and environment. */
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    char want[PATH_MAX + 128];
    snprintf(want, sizeof(want),
             "%s/slaves/" HFM_AGENT_ID "/frameworks/" FW_ID "/executors/" EX_ID
             "/runs/",
             agent_work);
    ck_assert_msg(strncmp(sandbox, want, strlen(want)) == 0,
                  "sandbox %s is not under %s", sandbox, want);
    json_t *doc;
    json_t *e = state_executor(&doc);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "tasks")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(e, "name")),
                     "e2e executor");
    json_decref(doc);
    /* The agent's operator API lists it too. */
    const char *hj[] = {"Content-Type: application/json",
                        "Accept: application/json", NULL};
    const char *get = "{\"type\":\"GET_EXECUTORS\"}";
    struct e2e_response r;
    ck_assert_int_eq(
        e2e_http(agent.port, "POST", "/api/v1", hj, get, strlen(get), 5000, &r),
        0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(
        strstr(r.body, "\"executor_id\":{\"value\":\"" EX_ID));
    e2e_response_free(&r);
    char env[PATH_MAX + 256];
    snprintf(env, sizeof(env),
             "executor " EX_ID " of framework " FW_ID
             ", agent 127.0.0.1:%u, sandbox %s, checkpoint 0",
             (unsigned)agent.port, sandbox);
    wait_stdout(sandbox, env);
    wait_stdout(sandbox, "LAUNCH t2");
    /* The master acknowledged (auto_ack): the executor hears of it. */
    wait_stdout(sandbox, "ACKNOWLEDGED");

    /* Messages both ways. */
    size_t fm = from;
    framework_message("hello");
    const Offerd__Agent__Call *m =
        wait_call(&fm, OFFERD__AGENT__CALL__TYPE__EXECUTOR_MESSAGE);
    ck_assert_str_eq(m->executor_message->framework_id->value, FW_ID);
    ck_assert_str_eq(m->executor_message->executor_id->value, EX_ID);
    ck_assert_uint_eq(m->executor_message->data.len, 10);
    ck_assert(memcmp(m->executor_message->data.data, "echo:hello", 10) == 0);

    /* KILL one task: the executor kills it, the other runs on. */
    size_t fk = from;
    hfm_kill(FW_ID, "t1", -1);
    wait_update(&fk, "t1", KILLED);
    wait_stdout(sandbox, "KILL t1");

    /* SHUTDOWN: the executor kills the rest and exits. */
    size_t fs = from, fx = from;
    shutdown_executor();
    wait_update(&fs, "t2", KILLED);
    const Offerd__Agent__Call *x =
        wait_call(&fx, OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED);
    ck_assert_str_eq(x->executor_exited->executor_id->value, EX_ID);
    ck_assert(x->executor_exited->has_status);
    ck_assert(WIFEXITED(x->executor_exited->status));
    ck_assert_int_eq(WEXITSTATUS(x->executor_exited->status), 0);
    /* No TASK_FAILED for tasks it ended itself. */
    size_t ff = from;
    ck_assert(hfm_wait_call(&ff, UPDATE, NULL, FAILED, 0) < 0);
}
END_TEST

START_TEST(test_task_after_subscription_and_finish)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "a1"};
    run_exec_task(&t1);
    wait_update(&from, "a1", RUNNING);
    /* Sent as LAUNCH at once, the executor subscribed. */
    struct exec_task t2 = {.task_id = "a2", .name = "finish-me"};
    run_exec_task(&t2);
    wait_update(&from, "a2", MESOS__V1__TASK_STATE__TASK_FINISHED);
    /* Finished (and acknowledged, the agent forgets it): among the
     * running executor's completed tasks, as Mesos shows it. */
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    json_t *doc;
    json_t *e;
    int64_t deadline = e2e_now_ms() + 10000;
    size_t ntasks = 0, ndone = 0;
    bool a2 = false;
    do {
        hfm_pump(50);
        e = state_executor(&doc);
        ntasks = json_array_size(json_object_get(e, "tasks"));
        json_t *ct = json_object_get(e, "completed_tasks");
        ndone = json_array_size(ct);
        const char *id =
            json_string_value(json_object_get(json_array_get(ct, 0), "id"));
        a2 = id != NULL && strcmp(id, "a2") == 0;
        json_decref(doc);
    } while ((ntasks != 1 || ndone != 1 || !a2) && e2e_now_ms() < deadline);
    ck_assert_uint_eq(ntasks, 1);
    ck_assert_uint_eq(ndone, 1);
    ck_assert_msg(a2, "a2 is not the completed task");
}
END_TEST

/* --authenticate_http_executors: the executor runs its tasks with the
 * token the agent gave it; a call without one, with a forged one, or with
 * a valid one of another executor or container is refused. */
START_TEST(test_executor_tokens)
{
    char keyfile[PATH_MAX + 16], keyflag[PATH_MAX + 64];
    write_executor_key(keyfile, keyflag);
    /* HTTP Basic on the agent's read-write endpoints too: the executor
     * API is not in that realm (its tokens are no Basic credentials). */
    char credfile[PATH_MAX + 16], credflag[PATH_MAX + 64];
    snprintf(credfile, sizeof(credfile), "%s.creds", agent_work);
    ck_assert_int_eq(fs_write_atomic(credfile, "ops so\neve se\n", 14), 0);
    snprintf(credflag, sizeof(credflag), "--http_credentials=%s", credfile);
    /* And view_* rules: eve may see no framework; everyone else all. */
    const char *acls =
        "--acls={\"view_frameworks\": [{\"principals\": {\"values\": "
        "[\"eve\"]}, \"users\": {\"type\": \"NONE\"}}]}";
    const char *extra[] = {"--authenticate_http_executors", keyflag, credflag,
                           "--authenticate_http_readwrite", acls,    NULL};
    hfm.auto_ack = true;
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "k1"};
    run_exec_task(&t1);
    wait_update(&from, "k1", RUNNING); /* its own token works */
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    const char *cid = strrchr(sandbox, '/') + 1; /* the run's id */

    static const char msg[] =
        "{\"type\":\"MESSAGE\",\"framework_id\":{\"value\":\"" FW_ID
        "\"},\"executor_id\":{\"value\":\"" EX_ID "\"},\"message\":{"
        "\"data\":\"aGk=\"}}";
    char reason[512];
    ck_assert_int_eq(post_with_token(NULL, msg, reason, sizeof(reason)), 401);
    ck_assert_str_eq(reason, "authentication required\n");
    ck_assert_int_eq(
        post_with_token("not-a-token", msg, reason, sizeof(reason)), 401);
    /* Signed with another key: forged. */
    char *forged = token_of("guessed-key", FW_ID, EX_ID, cid);
    ck_assert_int_eq(post_with_token(forged, msg, reason, sizeof(reason)), 401);
    ck_assert_str_eq(reason, "token signature does not match\n");
    free(forged);
    /* Genuine, but another executor's: it cannot act for EX_ID. */
    char *other = token_of(key, FW_ID, "another-executor", cid);
    ck_assert_int_eq(post_with_token(other, msg, reason, sizeof(reason)), 403);
    ck_assert_msg(strstr(reason, "'eid' claim") != NULL, "%s", reason);
    free(other);
    /* Genuine, EX_ID's, but of an earlier container. */
    char *stale = token_of(key, FW_ID, EX_ID, "an-earlier-run");
    ck_assert_int_eq(post_with_token(stale, msg, reason, sizeof(reason)), 403);
    ck_assert_msg(strstr(reason, "'cid' claim") != NULL, "%s", reason);
    free(stale);
    /* No message reached the master through the refused calls; a call
     * with the right claims is accepted. */
    size_t fm = from;
    ck_assert(hfm_wait_call(&fm, OFFERD__AGENT__CALL__TYPE__EXECUTOR_MESSAGE,
                            NULL, -1, 0) < 0);
    char *good = token_of(key, FW_ID, EX_ID, cid);
    ck_assert_int_eq(post_with_token(good, msg, reason, sizeof(reason)), 202);
    free(good);
    wait_call(&fm, OFFERD__AGENT__CALL__TYPE__EXECUTOR_MESSAGE);

    /* The agent's readers under --acls: eve sees no framework, executor
     * or task in /state, /monitor/statistics or the operator API. */
    static const char eve[] = "Authorization: Basic ZXZlOnNl"; /* eve:se */
    static const char ops[] = "Authorization: Basic b3BzOnNv"; /* ops:so */
    const char *who[] = {ops, eve};
    for (size_t i = 0; i < 2; i++) {
        size_t want = i == 0 ? 1 : 0;
        const char *h[] = {who[i], "Content-Type: application/json",
                           "Accept: application/json", NULL};
        struct e2e_response r;
        ck_assert_int_eq(
            e2e_http(agent.port, "GET", "/state", h, NULL, 0, 5000, &r), 0);
        ck_assert_int_eq(r.status, 200);
        json_t *st = json_loads(r.body, 0, NULL);
        ck_assert_uint_eq(json_array_size(json_object_get(st, "frameworks")),
                          want);
        json_decref(st);
        e2e_response_free(&r);
        const char *get = "{\"type\":\"GET_EXECUTORS\"}";
        ck_assert_int_eq(e2e_http(agent.port, "POST", "/api/v1", h, get,
                                  strlen(get), 5000, &r),
                         0);
        ck_assert_int_eq(r.status, 200);
        st = json_loads(r.body, 0, NULL);
        ck_assert_uint_eq(
            json_array_size(json_object_get(
                json_object_get(st, "get_executors"), "executors")),
            want);
        json_decref(st);
        e2e_response_free(&r);
        ck_assert_int_eq(e2e_http(agent.port, "GET", "/monitor/statistics", h,
                                  NULL, 0, 5000, &r),
                         0);
        ck_assert_int_eq(r.status, 200);
        st = json_loads(r.body, 0, NULL);
        if (i == 1)
            ck_assert_uint_eq(json_array_size(st), 0);
        json_decref(st);
        e2e_response_free(&r);
    }
    unlink(credfile);
}
END_TEST

START_TEST(test_registration_timeout)
{
    const char *flags[] = {"--executor_registration_timeout=1secs", NULL};
    start_agent(flags);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0, fx = 0;
    struct exec_task t = {.task_id = "s1", .mode = "silent"};
    run_exec_task(&t);
    const Mesos__V1__TaskStatus *st = wait_update(&from, "s1", FAILED);
    ck_assert_str_eq(hfm_reason_name(st),
                     "REASON_EXECUTOR_REGISTRATION_TIMEOUT");
    ck_assert_int_eq(st->source, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    const Offerd__Agent__Call *x =
        wait_call(&fx, OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED);
    ck_assert(WIFSIGNALED(x->executor_exited->status));
    ck_assert(e2e_wait_none_under(agent_work, 5000));
}
END_TEST

/* The framework of /state's completed_frameworks whose completed executor
 * EX_ID holds a completed task, or NULL (new reference of the whole
 * document in *doc). */
static json_t *completed_executor(json_t **doc)
{
    *doc = agent_state();
    size_t i, k;
    json_t *f, *e;
    json_array_foreach(json_object_get(*doc, "completed_frameworks"), i, f)
        json_array_foreach(json_object_get(f, "completed_executors"), k, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "id")), EX_ID) == 0 &&
            json_array_size(json_object_get(e, "completed_tasks")) > 0)
            return e;
    }
    return NULL;
}

START_TEST(test_executor_exit_fails_tasks)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0, fx = 0;
    struct exec_task t = {.task_id = "x1", .command = "sleep 0.2; exit 3"};
    run_exec_task(&t);
    const Mesos__V1__TaskStatus *st = wait_update(&from, "x1", FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_EXECUTOR_TERMINATED");
    ck_assert_ptr_nonnull(strstr(st->message, "exit status 3"));
    const Offerd__Agent__Call *x =
        wait_call(&fx, OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED);
    ck_assert_int_eq(WEXITSTATUS(x->executor_exited->status), 3);
    /* Once its failed task is acknowledged and forgotten, the executor is
     * a completed executor of a completed framework, as in Mesos. */
    int64_t deadline = e2e_now_ms() + 10000;
    json_t *doc, *e;
    while ((e = completed_executor(&doc)) == NULL && e2e_now_ms() < deadline) {
        json_decref(doc);
        hfm_pump(50);
    }
    ck_assert_msg(e != NULL, "no completed executor %s in /state", EX_ID);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(e, "directory")),
               "/executors/" EX_ID "/runs/"));
    json_t *ct = json_array_get(json_object_get(e, "completed_tasks"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(ct, "id")), "x1");
    ck_assert_str_eq(json_string_value(json_object_get(ct, "state")),
                     "TASK_FAILED");
    json_decref(doc);
}
END_TEST

START_TEST(test_bad_calls_refused)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t = {.task_id = "b1", .mode = "silent"};
    run_exec_task(&t);
    /* Wait until the agent knows the executor (in /state). */
    int64_t deadline = e2e_now_ms() + 10000;
    json_t *doc;
    while (state_executor(&doc) == NULL && e2e_now_ms() < deadline) {
        json_decref(doc);
        hfm_pump(50);
    }
    json_decref(doc);

    char reason[512];
    ck_assert_int_eq(post_json("{\"type\":\"SUBSCRIBE\",\"subscribe\":{},"
                               "\"framework_id\":{\"value\":\"nope\"},"
                               "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                               reason, sizeof(reason)),
                     400);
    ck_assert_ptr_nonnull(strstr(reason, "Framework cannot be found"));
    ck_assert_int_eq(post_json("{\"type\":\"SUBSCRIBE\",\"subscribe\":{},"
                               "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                               "\"executor_id\":{\"value\":\"nope\"}}",
                               reason, sizeof(reason)),
                     400);
    ck_assert_ptr_nonnull(strstr(reason, "Executor cannot be found"));
    ck_assert_int_eq(
        post_json("{\"type\":\"MESSAGE\",\"message\":{\"data\":\"aGk=\"},"
                  "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                  "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                  reason, sizeof(reason)),
        403);
    ck_assert_ptr_nonnull(strstr(reason, "Executor is not subscribed"));
    ck_assert_int_eq(post_json("{\"type\":", reason, sizeof(reason)), 400);
    ck_assert_int_eq(
        post_json("{\"type\":\"UPDATE\",\"update\":{\"status\":{"
                  "\"task_id\":{\"value\":\"b1\"},\"state\":\"TASK_RUNNING\","
                  "\"source\":\"SOURCE_EXECUTOR\"}},"
                  "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                  "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                  reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "'uuid'"));
    ck_assert_int_eq(
        post_json("{\"type\":\"UPDATE\",\"update\":{\"status\":{"
                  "\"task_id\":{\"value\":\"b1\"},\"state\":\"TASK_STAGING\","
                  "\"source\":\"SOURCE_EXECUTOR\","
                  "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}},"
                  "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                  "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                  reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "TASK_STAGING"));
    ck_assert_int_eq(
        post_json("{\"type\":\"UPDATE\",\"update\":{\"status\":{"
                  "\"task_id\":{\"value\":\"b1\"},\"state\":\"TASK_RUNNING\","
                  "\"source\":\"SOURCE_MASTER\","
                  "\"uuid\":\"AAAAAAAAAAAAAAAAAAAAAA==\"}},"
                  "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                  "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                  reason, sizeof(reason)),
        400);
    ck_assert_ptr_nonnull(strstr(reason, "SOURCE_EXECUTOR"));
    ck_assert_int_eq(post_executor("text/plain", "x", 1, NULL, 0), 415);
    /* Nothing changed: no update went out, the agent still serves. */
    ck_assert(hfm_wait_call(&from, UPDATE, "b1", -1, 0) < 0);
    ck_assert_int_eq(post_json("{\"type\":\"HEARTBEAT\","
                               "\"framework_id\":{\"value\":\"" FW_ID "\"},"
                               "\"executor_id\":{\"value\":\"" EX_ID "\"}}",
                               reason, sizeof(reason)),
                     202);
}
END_TEST

/* Read the next Event of a protobuf executor stream (RecordIO). */
static Mesos__V1__Executor__Event *next_pb_event(struct e2e_stream *s,
                                                 char **pend, size_t *plen)
{
    int64_t deadline = e2e_now_ms() + 10000;
    for (;;) {
        char *nl = *plen > 0 ? memchr(*pend, '\n', *plen) : NULL;
        if (nl != NULL) {
            size_t rlen = strtoul(*pend, NULL, 10);
            size_t hl = (size_t)(nl - *pend) + 1;
            if (*plen >= hl + rlen) {
                char err[256];
                Mesos__V1__Executor__Event *ev =
                    (Mesos__V1__Executor__Event *)jpb_from_pb(
                        &mesos__v1__executor__event__descriptor,
                        (const uint8_t *)*pend + hl, rlen, err, sizeof(err));
                ck_assert_msg(ev != NULL, "bad event: %s", err);
                memmove(*pend, *pend + hl + rlen, *plen - hl - rlen);
                *plen -= hl + rlen;
                return ev;
            }
        }
        ck_assert_msg(e2e_now_ms() < deadline, "no event on the stream");
        char *data;
        size_t len;
        int rc = e2e_stream_next(s, 200, &data, &len);
        ck_assert_int_ne(rc, 0);
        if (rc < 0)
            continue;
        *pend = realloc(*pend, *plen + len + 1);
        memcpy(*pend + *plen, data, len);
        *plen += len;
        free(data);
    }
}

START_TEST(test_protobuf_subscribe_gets_queued_task)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    /* A silent executor: the test subscribes in its place. */
    struct exec_task t = {.task_id = "p1", .mode = "silent"};
    run_exec_task(&t);
    int64_t deadline = e2e_now_ms() + 10000;
    json_t *doc;
    while (state_executor(&doc) == NULL && e2e_now_ms() < deadline) {
        json_decref(doc);
        hfm_pump(50);
    }
    json_decref(doc);

    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    eid.value = EX_ID;
    Mesos__V1__Executor__Call__Subscribe sub =
        MESOS__V1__EXECUTOR__CALL__SUBSCRIBE__INIT;
    Mesos__V1__Executor__Call call = MESOS__V1__EXECUTOR__CALL__INIT;
    call.framework_id = &fid;
    call.executor_id = &eid;
    call.has_type = 1;
    call.type = MESOS__V1__EXECUTOR__CALL__TYPE__SUBSCRIBE;
    call.subscribe = &sub;
    size_t len;
    uint8_t *body = jpb_to_pb(&call.base, &len);
    const char *headers[] = {"Content-Type: application/x-protobuf",
                             "Accept: application/x-protobuf", NULL};
    struct e2e_stream s;
    ck_assert_int_eq(e2e_stream_open(agent.port, "POST", "/api/v1/executor",
                                     headers, body, len, 5000, &s),
                     0);
    free(body);
    ck_assert_int_eq(s.head.status, 200);
    char *pend = NULL;
    size_t plen = 0;
    Mesos__V1__Executor__Event *ev = next_pb_event(&s, &pend, &plen);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__SUBSCRIBED);
    ck_assert_str_eq(ev->subscribed->executor_info->executor_id->value, EX_ID);
    ck_assert_str_eq(ev->subscribed->framework_info->id->value, FW_ID);
    ck_assert_str_eq(ev->subscribed->agent_info->id->value, HFM_AGENT_ID);
    jpb_free(&ev->base);
    ev = next_pb_event(&s, &pend, &plen);
    ck_assert_int_eq(ev->type, MESOS__V1__EXECUTOR__EVENT__TYPE__LAUNCH);
    ck_assert_str_eq(ev->launch->task->task_id->value, "p1");
    jpb_free(&ev->base);

    /* An UPDATE in protobuf goes to the master; its ack comes back. */
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = "p1";
    Mesos__V1__TaskStatus st = MESOS__V1__TASK_STATUS__INIT;
    st.task_id = &tid;
    st.state = RUNNING;
    st.has_source = 1;
    st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR;
    uint8_t uuid[16] = {1,    2,  3,  4,  5,  6,  0x40, 8,
                        0x80, 10, 11, 12, 13, 14, 15,   16};
    st.has_uuid = 1;
    st.uuid.data = uuid;
    st.uuid.len = 16;
    Mesos__V1__Executor__Call__Update up =
        MESOS__V1__EXECUTOR__CALL__UPDATE__INIT;
    up.status = &st;
    call.type = MESOS__V1__EXECUTOR__CALL__TYPE__UPDATE;
    call.subscribe = NULL;
    call.update = &up;
    body = jpb_to_pb(&call.base, &len);
    ck_assert_int_eq(
        post_executor("application/x-protobuf", body, len, NULL, 0), 202);
    free(body);
    wait_update(&from, "p1", RUNNING);
    for (;;) {
        ev = next_pb_event(&s, &pend, &plen);
        if (ev->type == MESOS__V1__EXECUTOR__EVENT__TYPE__ACKNOWLEDGED)
            break;
        jpb_free(&ev->base);
    }
    ck_assert_str_eq(ev->acknowledged->task_id->value, "p1");
    ck_assert(memcmp(ev->acknowledged->uuid.data, uuid, 16) == 0);
    jpb_free(&ev->base);
    free(pend);
    e2e_stream_close(&s);
}
END_TEST

static size_t restart_agent_kill9(const char *const *extra)
{
    uint16_t port = agent.port;
    e2e_proc_stop(&agent, SIGKILL, 10000);
    e2e_proc_cleanup(&agent);
    size_t mark = hfm.ncalls;
    ck_assert_msg(hfm_spawn_agent_on(&agent, agent_work, port, extra) == 0,
                  "offerd-agent did not start again on port %u",
                  (unsigned)port);
    return mark;
}

START_TEST(test_agent_restart_executor_resubscribes)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "r1", .checkpoint = true};
    struct exec_task t2 = {.task_id = "r2", .checkpoint = true};
    run_exec_task(&t1);
    run_exec_task(&t2);
    size_t f = from;
    wait_update(&f, "r1", RUNNING);
    f = from;
    wait_update(&f, "r2", RUNNING);
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    wait_stdout(sandbox, "ACKNOWLEDGED");
    pid_t pid = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    ck_assert(e2e_pid_alive(pid));

    size_t mark = restart_agent_kill9(NULL);
    ck_assert(e2e_pid_alive(pid));
    f = mark;
    long i = hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL, -1,
                           15000);
    ck_assert(i >= 0);
    const Offerd__Agent__Call__Subscribe *s = hfm.calls[i]->subscribe;
    ck_assert_uint_eq(s->n_tasks, 2);
    for (size_t k = 0; k < s->n_tasks; k++)
        ck_assert_int_eq(s->tasks[k]->state, RUNNING);
    ck_assert_uint_eq(s->n_executors, 1);
    ck_assert_str_eq(s->executors[0]->executor_id->value, EX_ID);
    wait_stdout(sandbox, "SUBSCRIBE answered 200 (again)");
    /* Past the re-registration timeout (2 s): still there, same process,
     * tasks alive (pumping proves an absence of failures). */
    hfm_pump(2500);
    ck_assert(e2e_pid_alive(pid));
    size_t ff = mark;
    ck_assert(hfm_wait_call(&ff, UPDATE, NULL, FAILED, 0) < 0);
    /* And it still answers the agent: KILL after the restart. */
    f = mark;
    hfm_kill(FW_ID, "r1", -1);
    wait_update(&f, "r1", KILLED);
}
END_TEST

START_TEST(test_agent_restart_executor_not_back)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {
        .task_id = "n1", .checkpoint = true, .mode = "noresub"};
    run_exec_task(&t1);
    wait_update(&from, "n1", RUNNING);
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    pid_t pid = e2e_read_pid_file(sandbox, ".offerd.task.pid");

    size_t mark = restart_agent_kill9(NULL);
    size_t f = mark;
    const Mesos__V1__TaskStatus *st = wait_update(&f, "n1", FAILED);
    ck_assert_str_eq(hfm_reason_name(st),
                     "REASON_EXECUTOR_REGISTRATION_TIMEOUT");
    int64_t deadline = e2e_now_ms() + 10000;
    while (e2e_pid_alive(pid) && e2e_now_ms() < deadline)
        hfm_pump(50);
    ck_assert(!e2e_pid_alive(pid));
}
END_TEST

/* The framework is removed: its executor is shut down, its task killed. */
START_TEST(test_shutdown_framework_shuts_executor_down)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "f1"};
    run_exec_task(&t1);
    wait_update(&from, "f1", RUNNING);
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Offerd__Agent__Event__ShutdownFramework sf =
        OFFERD__AGENT__EVENT__SHUTDOWN_FRAMEWORK__INIT;
    sf.framework_id = &fid;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_FRAMEWORK;
    ev.shutdown_framework = &sf;
    size_t fx = from;
    hfm_send(&ev);
    wait_update(&from, "f1", KILLED);
    const Offerd__Agent__Call *x =
        wait_call(&fx, OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED);
    ck_assert_str_eq(x->executor_exited->executor_id->value, EX_ID);
}
END_TEST

/* The same flow with an executor written with a third-party library:
 * mesos-go's v1 executor API, speaking protobuf (go_executor/main.go),
 * sending the token the agent requires (--authenticate_http_executors). */
START_TEST(test_mesos_go_executor)
{
#ifndef GO_EXECUTOR_BIN
    fprintf(stderr, "e2e_executors: go or mesos-go missing: "
                    "test_mesos_go_executor skipped\n");
#else
    hfm.auto_ack = true;
    char keyfile[PATH_MAX + 16], keyflag[PATH_MAX + 64];
    write_executor_key(keyfile, keyflag);
    const char *extra[] = {"--authenticate_http_executors", keyflag, NULL};
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    struct exec_task t1 = {.task_id = "g1", .program = GO_EXECUTOR_BIN};
    struct exec_task t2 = {.task_id = "g2", .program = GO_EXECUTOR_BIN};
    struct exec_task t3 = {
        .task_id = "g3", .name = "finish-g3", .program = GO_EXECUTOR_BIN};
    run_exec_task(&t1);
    run_exec_task(&t2);
    size_t f = from;
    wait_update(&f, "g1", RUNNING);
    f = from;
    wait_update(&f, "g2", RUNNING);
    run_exec_task(&t3);
    f = from;
    wait_update(&f, "g3", MESOS__V1__TASK_STATE__TASK_FINISHED);
    char sandbox[PATH_MAX];
    executor_sandbox(sandbox, sizeof(sandbox));
    wait_stdout(sandbox, "go_executor: ACKNOWLEDGED g1");

    f = hfm.ncalls;
    framework_message("ping");
    const Offerd__Agent__Call *m =
        wait_call(&f, OFFERD__AGENT__CALL__TYPE__EXECUTOR_MESSAGE);
    ck_assert_uint_eq(m->executor_message->data.len, 9);
    ck_assert(memcmp(m->executor_message->data.data, "echo:ping", 9) == 0);

    f = hfm.ncalls;
    hfm_kill(FW_ID, "g1", -1);
    wait_update(&f, "g1", KILLED);
    f = hfm.ncalls;
    size_t fx = f;
    shutdown_executor();
    wait_update(&f, "g2", KILLED);
    const Offerd__Agent__Call *x =
        wait_call(&fx, OFFERD__AGENT__CALL__TYPE__EXECUTOR_EXITED);
    ck_assert_int_eq(WEXITSTATUS(x->executor_exited->status), 0);
#endif
}
END_TEST

static Suite *executors_suite(void)
{
    Suite *s = suite_create("e2e_executors");
    TCase *tc = tcase_create("executors");
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_two_tasks_messages_kill_shutdown);
    tcase_add_test(tc, test_task_after_subscription_and_finish);
    tcase_add_test(tc, test_registration_timeout);
    tcase_add_test(tc, test_executor_tokens);
    tcase_add_test(tc, test_executor_exit_fails_tasks);
    tcase_add_test(tc, test_bad_calls_refused);
    tcase_add_test(tc, test_protobuf_subscribe_gets_queued_task);
    tcase_add_test(tc, test_agent_restart_executor_resubscribes);
    tcase_add_test(tc, test_agent_restart_executor_not_back);
    tcase_add_test(tc, test_mesos_go_executor);
    tcase_add_test(tc, test_shutdown_framework_shuts_executor_down);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(executors_suite)
