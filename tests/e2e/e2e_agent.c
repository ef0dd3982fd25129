/*
 * End-to-end tests of offerd-agent against the fake master of
 * harness_agent_master.h, run in-process on its own event loop: tests send
 * RUN_TASK, KILL_TASK, ACKNOWLEDGE, PING, SHUTDOWN_FRAMEWORK ... on the
 * agent's stream and wait (polling with deadlines) for the calls they
 * expect.
 *
 * No task or supervisor may outlive a test: every agent is stopped with
 * SIGUSR1 (kill everything) at teardown, and as a last resort every process
 * whose working directory lies under this binary's work directories (tasks
 * and supervisors run in their sandboxes) is SIGKILLed, after each test and
 * again in the parent when the suite ends (a failed test's child skips its
 * teardown).
 */
#include "harness.h"
#include "harness_agent_master.h"

#include "agent/checkpoint.h"
#include "common/fs.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "mesos/v1/mesos.pb-c.h"
#include "offerd/agent.pb-c.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
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

#ifndef OFFERD_AGENT_BIN
#define OFFERD_AGENT_BIN "offerd-agent"
#endif

#define FW_ID    "fw-e2e-0001"
#define AGENT_ID HFM_AGENT_ID

/* ---- Last-resort cleanup of tasks and supervisors ---- */

/* Every agent work_dir of this binary lives under base_dir (made in the
 * parent by the unchecked fixture). */
static char base_dir[64];

static void suite_setup(void)
{
    snprintf(base_dir, sizeof(base_dir), "/tmp/offerd-agent-e2e-XXXXXX");
    if (mkdtemp(base_dir) == NULL)
        base_dir[0] = '\0';
}

static void suite_teardown(void)
{
    if (e2e_kill_under(base_dir) > 0)
        fprintf(stderr, "e2e_agent: killed processes left by failed tests\n");
    fs_remove_tree(base_dir);
}

/* ---- Tasks ---- */

/* A task that notes in its sandbox that its SIGTERM handler is set
 * ("trapped") and each SIGTERM it gets ("term"), and keeps running: only a
 * SIGKILL ends it. */
#define STUBBORN                                                               \
    "trap 'echo TERM >> term' TERM; touch trapped; "                           \
    "while :; do sleep 0.05; done"

/* RUN_TASK of FW_ID's task running cmd with the shell. */
static void shell_task(const char *task_id, const char *cmd)
{
    struct hfm_task t = {
        .framework_id = FW_ID, .task_id = task_id, .shell = cmd};
    hfm_run_task(&t);
}

/* The same with a kill policy's grace period. */
static void shell_task_grace(const char *task_id, const char *cmd, int grace_ms)
{
    struct hfm_task t = {.framework_id = FW_ID,
                         .task_id = task_id,
                         .shell = cmd,
                         .grace_ms = grace_ms};
    hfm_run_task(&t);
}

struct sandbox_file {
    const char *dir, *name;
};

static bool sandbox_file_exists(void *arg)
{
    const struct sandbox_file *f = arg;
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", f->dir, f->name);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Wait (pumping the fake master) until sandbox/name exists (a symbolic
 * link counts, wherever it leads). */
static bool wait_sandbox_file(const char *sandbox, const char *name,
                              int timeout_ms)
{
    struct sandbox_file f = {sandbox, name};
    return hfm_pump_until(sandbox_file_exists, &f, timeout_ms);
}

/* ---- The agent under test ---- */

static struct e2e_proc agent;
static char agent_work[PATH_MAX]; /* its --work_dir, under base_dir */

static int spawn_agent(const char *const *extra)
{
    return hfm_spawn_agent(&agent, agent_work, extra);
}

static void start_agent(const char *const *extra)
{
    ck_assert_msg(spawn_agent(extra) == 0, "offerd-agent did not start");
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
    if (agent.pid > 0) {
        /* Exit 0 (under the sanitizers: no leak), and nothing left once
         * what it killed has gone (a supervisor an earlier, killed agent
         * started is not its child: it exits a moment later). */
        ck_assert_int_eq(hfm_stop_agent(&agent), 0);
        ck_assert_msg(e2e_wait_none_under(agent_work, 5000),
                      "processes left under the agent's work_dir");
    }
    e2e_proc_cleanup(&agent);
    e2e_kill_under(agent_work);
    fs_remove_tree(agent_work);
    hfm_stop();
}

static json_t *agent_get_json(const char *path, int want_status)
{
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, "GET", path, NULL, NULL, 0, 5000, &r),
                     0);
    ck_assert_msg(r.status == want_status, "%s: status %d (%s)", path, r.status,
                  r.body);
    json_error_t e;
    json_t *j = json_loadb(r.body, r.body_len, 0, &e);
    ck_assert_msg(j != NULL, "%s: bad JSON: %s", path, e.text);
    e2e_response_free(&r);
    return j;
}

static int agent_get_status(const char *path)
{
    struct e2e_response r;
    ck_assert_int_eq(e2e_http(agent.port, "GET", path, NULL, NULL, 0, 5000, &r),
                     0);
    int status = r.status;
    e2e_response_free(&r);
    return status;
}

/* Percent-encode s into a query value. */
static void query_escape(const char *s, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *s && o + 4 < outlen; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || strchr("-_.~/", c))
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outlen - o, "%%%02X", c);
    }
    out[o] = '\0';
}

/* /files/read of a sandbox file: the data (malloc'd) or NULL. */
static char *read_sandbox_file(const char *sandbox, const char *name)
{
    char path[PATH_MAX + 64], q[3 * PATH_MAX + 64], url[3 * PATH_MAX + 128];
    snprintf(path, sizeof(path), "%s/%s", sandbox, name);
    query_escape(path, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=0", q);
    json_t *j = agent_get_json(url, 200);
    char *data = xstrdup(json_string_value(json_object_get(j, "data")));
    json_decref(j);
    return data;
}

/* ---- Tests ---- */

START_TEST(test_help_and_bad_flags)
{
    char out[16384];
    const char *help[] = {"--help", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, help, out, sizeof(out), 10000),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "--master"));
    ck_assert_ptr_nonnull(strstr(out, "--resources"));
    ck_assert_ptr_nonnull(strstr(out, "--status_update_retry_interval_min"));
    ck_assert_ptr_nonnull(strstr(out, "1 GB"));

    const char *bogus[] = {"--master=127.0.0.1:5050", "--bogus=1", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, bogus, out, sizeof(out), 10000),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "bogus"));
    const char *none[] = {NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, none, out, sizeof(out), 10000),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "--master"));
    /* Host names are taken (resolved at each attempt); a missing port is
     * not. */
    const char *badmaster[] = {"--master=master.example.com", NULL};
    ck_assert_int_eq(
        e2e_run(OFFERD_AGENT_BIN, badmaster, out, sizeof(out), 10000), 1);
    const char *badattr[] = {"--master=127.0.0.1:5050", "--attributes=a:{x,y}",
                             NULL};
    ck_assert_int_eq(
        e2e_run(OFFERD_AGENT_BIN, badattr, out, sizeof(out), 10000), 1);
    ck_assert_ptr_nonnull(strstr(out, "sets are not supported"));
    const char *badres[] = {"--master=127.0.0.1:5050", "--resources=cpus:x",
                            NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, badres, out, sizeof(out), 10000),
                     1);
}
END_TEST

static const Mesos__V1__Resource *find_resource(const Mesos__V1__AgentInfo *ai,
                                                const char *name)
{
    for (size_t i = 0; i < ai->n_resources; i++)
        if (strcmp(ai->resources[i]->name, name) == 0)
            return ai->resources[i];
    return NULL;
}

/* The agent's /state shows an agent id. */
static bool agent_has_id(void *arg)
{
    (void)arg;
    json_t *st = agent_get_json("/state", 200);
    bool has = json_is_string(json_object_get(st, "id"));
    json_decref(st);
    return has;
}

/* The agent's /state shows no framework (every task forgotten). */
static bool agent_holds_no_framework(void *arg)
{
    (void)arg;
    json_t *st = agent_get_json("/state", 200);
    bool none = json_array_size(json_object_get(st, "frameworks")) == 0;
    json_decref(st);
    return none;
}

START_TEST(test_registration)
{
    const char *extra[] = {"--attributes=rack:r1;zone:z1;cores:8", NULL};
    start_agent(extra);
    size_t from = 0;
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL,
                           -1, 10000);
    ck_assert_msg(i >= 0, "no SUBSCRIBE");
    const Offerd__Agent__Call__Subscribe *s = hfm.calls[i]->subscribe;
    ck_assert_ptr_nonnull(s);
    const Mesos__V1__AgentInfo *ai = s->agent_info;
    ck_assert_ptr_null(ai->id); /* a new agent */
    ck_assert_int_eq(ai->port, agent.port);
    const Mesos__V1__Resource *cpus = find_resource(ai, "cpus");
    ck_assert_ptr_nonnull(cpus);
    ck_assert(cpus->scalar->value == 2.0);
    ck_assert(find_resource(ai, "mem")->scalar->value == 1024.0);
    ck_assert(find_resource(ai, "disk")->scalar->value == 4096.0);
    const Mesos__V1__Resource *ports = find_resource(ai, "ports");
    ck_assert_ptr_nonnull(ports); /* detected */
    ck_assert_uint_eq(ports->ranges->range[0]->begin, 31000);
    ck_assert_uint_eq(ports->ranges->range[0]->end, 32000);
    ck_assert_uint_eq(ai->n_attributes, 3);
    ck_assert_str_eq(ai->attributes[0]->name, "rack");
    ck_assert_int_eq(ai->attributes[0]->type, MESOS__V1__VALUE__TYPE__TEXT);
    ck_assert_str_eq(ai->attributes[0]->text->value, "r1");
    ck_assert_int_eq(ai->attributes[2]->type, MESOS__V1__VALUE__TYPE__SCALAR);
    ck_assert(ai->attributes[2]->scalar->value == 8.0);
    ck_assert_ptr_nonnull(s->version);
    hfm_wait_subscribed(1, 5000);

    /* /state shows the id once REGISTERED arrived. */
    ck_assert_msg(hfm_pump_until(agent_has_id, NULL, 10000),
                  "the agent's /state shows no id");
    json_t *st = agent_get_json("/state", 200);
    ck_assert_str_eq(json_string_value(json_object_get(st, "id")), AGENT_ID);
    json_t *attrs = json_object_get(st, "attributes");
    ck_assert_str_eq(json_string_value(json_object_get(attrs, "rack")), "r1");
    ck_assert_str_eq(json_string_value(json_object_get(attrs, "zone")), "z1");
    ck_assert(json_number_value(json_object_get(attrs, "cores")) == 8.0);
    json_t *res = json_object_get(st, "resources");
    ck_assert(json_number_value(json_object_get(res, "cpus")) == 2.0);
    ck_assert_str_eq(json_string_value(json_object_get(res, "ports")),
                     "[31000-32000]");
    ck_assert_int_eq(json_array_size(json_object_get(st, "frameworks")), 0);
    json_decref(st);

    json_t *flags = agent_get_json("/flags", 200);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(flags, "flags"), "attributes")),
                     "rack:r1;zone:z1;cores:8");
    json_decref(flags);
    ck_assert_int_eq(agent_get_status("/health"), 200);
}
END_TEST

START_TEST(test_task_finishes)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    struct hfm_task t1 = {.framework_id = FW_ID,
                          .task_id = "t1",
                          .shell = "echo hello $GREETING; echo oops >&2",
                          .env_name = "GREETING",
                          .env_value = "world"};
    hfm_run_task(&t1);
    size_t from = 0;
    long fin = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "t1",
                             MESOS__V1__TASK_STATE__TASK_FINISHED, 15000);
    ck_assert_msg(fin >= 0, "no TASK_FINISHED");
    const Mesos__V1__TaskStatus *u[8];
    size_t n = hfm_updates_of("t1", 0, u, 8);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(u[0]->state, MESOS__V1__TASK_STATE__TASK_STARTING);
    ck_assert_int_eq(u[1]->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_int_eq(u[2]->state, MESOS__V1__TASK_STATE__TASK_FINISHED);
    for (size_t k = 0; k < n; k++) {
        ck_assert_int_eq(u[k]->source,
                         MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR);
        ck_assert_uint_eq(u[k]->uuid.len, 16);
        ck_assert_str_eq(u[k]->agent_id->value, AGENT_ID);
        ck_assert_str_eq(u[k]->executor_id->value, "t1");
        ck_assert(u[k]->timestamp > 1e9);
    }
    ck_assert(memcmp(u[0]->uuid.data, u[1]->uuid.data, 16) != 0);
    const Offerd__Agent__Call *c = hfm.calls[fin];
    ck_assert_str_eq(c->agent_id->value, AGENT_ID);
    ck_assert_str_eq(c->update->framework_id->value, FW_ID);
    ck_assert_str_eq(u[2]->message, "Command exited with status 0");

    /* The output is in the sandbox, readable through /files/read while the
     * task is held (its terminal update may still await its ack). */
    char sandbox[PATH_MAX];
    if (e2e_agent_sandbox(agent.port, "t1", sandbox, sizeof(sandbox))) {
        char *out = read_sandbox_file(sandbox, "stdout");
        ck_assert_str_eq(out, "hello world\n");
        free(out);
        char *er = read_sandbox_file(sandbox, "stderr");
        ck_assert_str_eq(er, "oops\n");
        free(er);
    }
    /* Once the FINISHED ack is through, the task is forgotten. */
    ck_assert_msg(hfm_pump_until(agent_holds_no_framework, NULL, 10000),
                  "the acknowledged task is still held");
    /* Its sandbox stays, readable by its path relative to the sandboxes
     * root. */
    char rel[PATH_MAX], url[PATH_MAX + 64];
    DIR *d;
    char dir[PATH_MAX + 64];
    snprintf(dir, sizeof(dir), "%s/sandboxes/%s/t1", agent_work, FW_ID);
    d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    rel[0] = '\0';
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            snprintf(rel, sizeof(rel), "%s/t1/%s/stdout", FW_ID, de->d_name);
    closedir(d);
    ck_assert(rel[0] != '\0');
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=-1", rel);
    json_t *j = agent_get_json(url, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")), 12);
    ck_assert_str_eq(json_string_value(json_object_get(j, "data")), "");
    json_decref(j);
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=6&length=3", rel);
    j = agent_get_json(url, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")), 6);
    ck_assert_str_eq(json_string_value(json_object_get(j, "data")), "wor");
    json_decref(j);
}
END_TEST

START_TEST(test_task_fails)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("t3", "exit 3");
    size_t from = 0;
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "t3",
                           MESOS__V1__TASK_STATE__TASK_FAILED, 15000);
    ck_assert_msg(i >= 0, "no TASK_FAILED");
    const Mesos__V1__TaskStatus *st = hfm.calls[i]->update->status;
    ck_assert_str_eq(st->message, "Command exited with status 3");
    ck_assert_str_eq(hfm_reason_name(st), "REASON_COMMAND_EXECUTOR_FAILED");

    /* An argv command that cannot be executed fails its launch. */
    char *argv[] = {"no-such-program", "x", NULL};
    struct hfm_task t4 = {.framework_id = FW_ID,
                          .task_id = "t4",
                          .program = "/nonexistent/no-such-program",
                          .argv = argv};
    hfm_run_task(&t4);
    i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "t4",
                      MESOS__V1__TASK_STATE__TASK_FAILED, 15000);
    ck_assert_msg(i >= 0, "no TASK_FAILED for a bad program");
    st = hfm.calls[i]->update->status;
    ck_assert_str_eq(hfm_reason_name(st), "REASON_CONTAINER_LAUNCH_FAILED");
    ck_assert_ptr_nonnull(strstr(st->message, "No such file"));

    /* An argv command with arguments runs without a shell. */
    char *argv2[] = {"sh", "-c", "exit 5", NULL};
    struct hfm_task t5 = {.framework_id = FW_ID,
                          .task_id = "t5",
                          .program = "/bin/sh",
                          .argv = argv2};
    hfm_run_task(&t5);
    i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "t5",
                      MESOS__V1__TASK_STATE__TASK_FAILED, 15000);
    ck_assert_msg(i >= 0, "no TASK_FAILED for exit 5");
    ck_assert_str_eq(hfm.calls[i]->update->status->message,
                     "Command exited with status 5");
}
END_TEST

START_TEST(test_kill_within_grace)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("long", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "long",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    int64_t t0 = e2e_now_ms();
    hfm_kill(FW_ID, "long", -1);
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "long",
                           MESOS__V1__TASK_STATE__TASK_KILLED, 10000);
    ck_assert_msg(i >= 0, "no TASK_KILLED");
    /* sleep dies of the SIGTERM, well within the 3 s default grace. */
    ck_assert_int_lt(e2e_now_ms() - t0, 2500);
    ck_assert_ptr_nonnull(
        strstr(hfm.calls[i]->update->status->message, "signal 15"));
}
END_TEST

START_TEST(test_kill_escalates_to_sigkill)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task_grace("stubborn", "trap '' TERM; sleep 60", 400);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE,
                            "stubborn", MESOS__V1__TASK_STATE__TASK_RUNNING,
                            15000) >= 0);
    int64_t t0 = e2e_now_ms();
    hfm_kill(FW_ID, "stubborn", -1);
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "stubborn",
                           MESOS__V1__TASK_STATE__TASK_KILLED, 10000);
    ck_assert_msg(i >= 0, "no TASK_KILLED");
    int64_t took = e2e_now_ms() - t0;
    ck_assert_int_ge(took, 350);
    ck_assert_int_lt(took, 3000);
    ck_assert_ptr_nonnull(
        strstr(hfm.calls[i]->update->status->message, "signal 9"));
}
END_TEST

/* An UPDATE of task arg arrived whose latest_state is TASK_FINISHED. */
static bool finished_rides_along(void *arg)
{
    for (size_t i = 0; i < hfm.ncalls; i++) {
        const Offerd__Agent__Call *c = hfm.calls[i];
        if (c->type == OFFERD__AGENT__CALL__TYPE__UPDATE &&
            strcmp(c->update->status->task_id->value, arg) == 0 &&
            c->update->latest_state == MESOS__V1__TASK_STATE__TASK_FINISHED)
            return true;
    }
    return false;
}

START_TEST(test_unacknowledged_update_is_retried)
{
    const char *extra[] = {"--status_update_retry_interval_min=200ms",
                           "--status_update_retry_interval_max=400ms", NULL};
    start_agent(extra);
    hfm_wait_subscribed(1, 10000);
    shell_task("r1", "true");
    size_t from = 0;
    long first = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                               MESOS__V1__TASK_STATE__TASK_STARTING, 10000);
    ck_assert(first >= 0);
    long again = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                               MESOS__V1__TASK_STATE__TASK_STARTING, 5000);
    ck_assert_msg(again >= 0, "STARTING was not resent");
    const Mesos__V1__TaskStatus *a = hfm.calls[first]->update->status;
    const Mesos__V1__TaskStatus *b = hfm.calls[again]->update->status;
    ck_assert(memcmp(a->uuid.data, b->uuid.data, 16) == 0);
    /* The task finishes meanwhile; the latest state rides along on the
     * resends. */
    ck_assert_msg(hfm_pump_until(finished_rides_along, "r1", 5000),
                  "no resend of STARTING with latest_state TASK_FINISHED");
    /* Nothing follows STARTING until it is acknowledged: a window of two
     * more resends or so that proves an absence (nothing to wait for). */
    hfm_pump(600);
    const Mesos__V1__TaskStatus *u[64];
    size_t n = hfm_updates_of("r1", 0, u, 64);
    ck_assert_uint_ge(n, 3);
    for (size_t k = 0; k < n; k++)
        ck_assert_int_eq(u[k]->state, MESOS__V1__TASK_STATE__TASK_STARTING);

    hfm_ack(FW_ID, a);
    long running = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                                 MESOS__V1__TASK_STATE__TASK_RUNNING, 5000);
    ck_assert_msg(running >= 0, "RUNNING did not follow the ack");
    hfm_ack(FW_ID, hfm.calls[running]->update->status);
    long fin = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                             MESOS__V1__TASK_STATE__TASK_FINISHED, 5000);
    ck_assert_msg(fin >= 0, "FINISHED did not follow the ack");
    hfm_ack(FW_ID, hfm.calls[fin]->update->status);
    /* Acknowledged: the task is forgotten, and nothing is resent (a window
     * of a few retry intervals that proves an absence). */
    ck_assert(hfm_pump_until(agent_holds_no_framework, NULL, 5000));
    size_t before = hfm.ncalls;
    hfm_pump(700);
    for (size_t k = before; k < hfm.ncalls; k++)
        ck_assert_int_ne(hfm.calls[k]->type, OFFERD__AGENT__CALL__TYPE__UPDATE);
}
END_TEST

START_TEST(test_resubscribes_after_stream_closes)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("keep", "sleep 60");
    size_t from = 0;
    long starting =
        hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "keep",
                      MESOS__V1__TASK_STATE__TASK_STARTING, 10000);
    ck_assert(starting >= 0);
    hfm_ack(FW_ID, hfm.calls[starting]->update->status);
    long running =
        hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "keep",
                      MESOS__V1__TASK_STATE__TASK_RUNNING, 10000);
    ck_assert(running >= 0);
    uint8_t uuid[16];
    memcpy(uuid, hfm.calls[running]->update->status->uuid.data, 16);

    /* The master goes away: the stream ends. */
    hfm_close_stream();
    long sub = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL,
                             -1, 10000);
    ck_assert_msg(sub >= 0, "the agent did not subscribe again");
    const Offerd__Agent__Call__Subscribe *s = hfm.calls[sub]->subscribe;
    ck_assert_ptr_nonnull(s->agent_info->id);
    ck_assert_str_eq(s->agent_info->id->value, AGENT_ID);
    ck_assert_uint_eq(s->n_tasks, 1);
    ck_assert_str_eq(s->tasks[0]->task_id->value, "keep");
    ck_assert_int_eq(s->tasks[0]->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_uint_eq(s->n_frameworks, 1);
    ck_assert_uint_eq(s->n_unacknowledged_updates, 1);
    ck_assert(
        memcmp(s->unacknowledged_updates[0]->status->uuid.data, uuid, 16) == 0);
    /* After REGISTERED the pending update is sent again at once. */
    long resent =
        hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "keep",
                      MESOS__V1__TASK_STATE__TASK_RUNNING, 5000);
    ck_assert_msg(resent >= 0, "RUNNING was not resent after re-registering");
    ck_assert(memcmp(hfm.calls[resent]->update->status->uuid.data, uuid, 16) ==
              0);
}
END_TEST

START_TEST(test_files_confinement)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("f1", "echo data > out.txt; mkdir sub; ln -s /etc/passwd "
                     "leak; sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "f1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "f1", sandbox, sizeof(sandbox)));
    char q[3 * PATH_MAX], url[3 * PATH_MAX + 128], p[PATH_MAX + 64];
    /* Wait until the task wrote its files. */
    ck_assert(wait_sandbox_file(sandbox, "leak", 10000));
    ck_assert_int_eq(agent_get_status("/files/read?path=../meta/agent_id"),
                     403);
    ck_assert_int_eq(
        agent_get_status("/files/read?path=fw/../../../../../etc/passwd"), 403);
    ck_assert_int_eq(agent_get_status("/files/read?path=/etc/passwd"), 404);
    ck_assert_int_eq(agent_get_status("/files/browse?path=.."), 403);
    snprintf(p, sizeof(p), "%s/../../../../meta/agent_id", sandbox);
    query_escape(p, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s", q);
    ck_assert_int_eq(agent_get_status(url), 403);
    /* A symlink that leads out. */
    snprintf(p, sizeof(p), "%s/leak", sandbox);
    query_escape(p, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s", q);
    ck_assert_int_eq(agent_get_status(url), 403);
    /* Missing, bad parameters, directories. */
    snprintf(p, sizeof(p), "%s/nope", sandbox);
    query_escape(p, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s", q);
    ck_assert_int_eq(agent_get_status(url), 404);
    ck_assert_int_eq(agent_get_status("/files/read"), 400);
    query_escape(sandbox, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s", q);
    ck_assert_int_eq(agent_get_status(url), 400); /* a directory */
    snprintf(p, sizeof(p), "%s/out.txt", sandbox);
    query_escape(p, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=x", q);
    ck_assert_int_eq(agent_get_status(url), 400);
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=-2", q);
    ck_assert_int_eq(agent_get_status(url), 400);
    snprintf(url, sizeof(url), "/files/read?path=%s&length=-5", q);
    ck_assert_int_eq(agent_get_status(url), 400);
    snprintf(url, sizeof(url), "/files/read?path=%s", q);
    json_t *j = agent_get_json(url, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "offset")), 5);
    json_decref(j);
    snprintf(url, sizeof(url), "/files/read?path=%s&offset=0", q);
    j = agent_get_json(url, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "data")), "data\n");
    json_decref(j);

    /* Browse lists the sandbox. */
    query_escape(sandbox, q, sizeof(q));
    snprintf(url, sizeof(url), "/files/browse?path=%s", q);
    j = agent_get_json(url, 200);
    ck_assert(json_is_array(j));
    int seen_stdout = 0, seen_sub = 0;
    size_t k;
    json_t *e;
    json_array_foreach(j, k, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        const char *mode = json_string_value(json_object_get(e, "mode"));
        ck_assert_ptr_nonnull(path);
        ck_assert_ptr_nonnull(mode);
        ck_assert(json_is_integer(json_object_get(e, "size")));
        ck_assert(json_is_integer(json_object_get(e, "mtime")));
        ck_assert(json_is_integer(json_object_get(e, "nlink")));
        ck_assert(json_is_string(json_object_get(e, "uid")));
        ck_assert(json_is_string(json_object_get(e, "gid")));
        size_t pl = strlen(path);
        if (pl >= 7 && strcmp(path + pl - 7, "/stdout") == 0) {
            seen_stdout = 1;
            ck_assert_int_eq(mode[0], '-');
        }
        if (pl >= 4 && strcmp(path + pl - 4, "/sub") == 0) {
            seen_sub = 1;
            ck_assert_int_eq(mode[0], 'd');
        }
    }
    ck_assert(seen_stdout && seen_sub);
    json_decref(j);
}
END_TEST

START_TEST(test_unknown_task_kill_is_lost)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    hfm_kill(FW_ID, "ghost", -1);
    size_t from = 0;
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "ghost",
                           MESOS__V1__TASK_STATE__TASK_LOST, 10000);
    ck_assert_msg(i >= 0, "no TASK_LOST");
    const Mesos__V1__TaskStatus *st = hfm.calls[i]->update->status;
    ck_assert_int_eq(st->source, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_TASK_UNKNOWN");
}
END_TEST

START_TEST(test_ping_pong)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    Offerd__Agent__Event__Ping ping = OFFERD__AGENT__EVENT__PING__INIT;
    ping.sequence = 7;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__PING;
    ev.ping = &ping;
    hfm_send(&ev);
    size_t from = 0;
    long i =
        hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__PONG, NULL, -1, 10000);
    ck_assert_msg(i >= 0, "no PONG");
    ck_assert_uint_eq(hfm.calls[i]->pong->sequence, 7);
    ck_assert_str_eq(hfm.calls[i]->agent_id->value, AGENT_ID);
}
END_TEST

START_TEST(test_shutdown_framework_kills_its_tasks)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("a", "sleep 60");
    shell_task("b", "sleep 60");
    struct hfm_task c = {
        .framework_id = "other-fw", .task_id = "c", .shell = "sleep 60"};
    hfm_run_task(&c);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "a",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "b",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "c",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Offerd__Agent__Event__ShutdownFramework sf =
        OFFERD__AGENT__EVENT__SHUTDOWN_FRAMEWORK__INIT;
    sf.framework_id = &fid;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN_FRAMEWORK;
    ev.shutdown_framework = &sf;
    hfm_send(&ev);
    size_t f1 = 0, f2 = 0;
    ck_assert(hfm_wait_call(&f1, OFFERD__AGENT__CALL__TYPE__UPDATE, "a",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 10000) >= 0);
    ck_assert(hfm_wait_call(&f2, OFFERD__AGENT__CALL__TYPE__UPDATE, "b",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 10000) >= 0);
    /* The other framework's task runs on: a window that proves an absence
     * (its kill would have come with the others'), nothing to wait for. */
    hfm_pump(200);
    size_t f3 = 0;
    ck_assert(hfm_wait_call(&f3, OFFERD__AGENT__CALL__TYPE__UPDATE, "c",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 0) < 0);
}
END_TEST

static bool agent_exited(void *arg)
{
    (void)arg;
    return !e2e_proc_running(&agent);
}

START_TEST(test_sigusr1_kills_tasks_and_exits)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("u1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "u1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "u1", sandbox, sizeof(sandbox)));
    pid_t task = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    pid_t sup = e2e_read_pid_file(sandbox, ".offerd.supervisor.pid");
    ck_assert(e2e_pid_alive(task));
    ck_assert(e2e_pid_alive(sup));
    kill(agent.pid, SIGUSR1);
    /* The agent reports the kill while it shuts down. */
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "u1",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 10000) >= 0);
    ck_assert(hfm_pump_until(agent_exited, NULL, 10000));
    ck_assert(WIFEXITED(agent.exit_status));
    ck_assert_int_eq(WEXITSTATUS(agent.exit_status), 0);
    ck_assert(!e2e_pid_alive(task));
    ck_assert(!e2e_pid_alive(sup));
}
END_TEST

START_TEST(test_sigterm_leaves_tasks_and_keeps_id)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("s1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "s1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "s1", sandbox, sizeof(sandbox)));
    pid_t task = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    ck_assert(e2e_pid_alive(task));
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    /* The task outlives the agent. */
    ck_assert(e2e_pid_alive(task));
    e2e_proc_cleanup(&agent);

    /* A restarted agent registers with the id it was given. */
    size_t mark = hfm.ncalls;
    start_agent(NULL);
    size_t f = mark;
    long sub = hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL, -1,
                             10000);
    ck_assert(sub >= 0);
    ck_assert_ptr_nonnull(hfm.calls[sub]->subscribe->agent_info->id);
    ck_assert_str_eq(hfm.calls[sub]->subscribe->agent_info->id->value,
                     AGENT_ID);
    ck_assert_str_eq(hfm.calls[sub]->agent_id->value, AGENT_ID);
    /* ... and holds the task again (teardown's SIGUSR1 kills it). */
    ck_assert_uint_eq(hfm.calls[sub]->subscribe->n_tasks, 1);
    ck_assert(e2e_pid_alive(task));
}
END_TEST

/* ---- Recovery after a restart ---- */

/* Stop the agent with sig (SIGKILL: as a crash; SIGTERM: exits 0) and start
 * it again on the same work_dir with extra flags. Returns the index the
 * new agent's calls start at. */
static size_t restart_agent(int sig, const char *const *extra)
{
    int rc = e2e_proc_stop(&agent, sig, 10000);
    if (sig == SIGTERM)
        ck_assert_int_eq(rc, 0);
    e2e_proc_cleanup(&agent); /* its log directory; the tasks live on */
    size_t mark = hfm.ncalls;
    start_agent(extra);
    return mark;
}

/* The SUBSCRIBE at index >= *from (waited for). */
static const Offerd__Agent__Call__Subscribe *wait_subscribe(size_t *from)
{
    long i = hfm_wait_call(from, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL, -1,
                           10000);
    ck_assert_msg(i >= 0, "no SUBSCRIBE");
    return hfm.calls[i]->subscribe;
}

static const Mesos__V1__Task *
subscribe_task(const Offerd__Agent__Call__Subscribe *s, const char *task_id)
{
    for (size_t i = 0; i < s->n_tasks; i++)
        if (strcmp(s->tasks[i]->task_id->value, task_id) == 0)
            return s->tasks[i];
    return NULL;
}

static bool path_exists(const char *rel)
{
    char p[PATH_MAX + 128];
    snprintf(p, sizeof(p), "%s/%s", agent_work, rel);
    struct stat st;
    return stat(p, &st) == 0;
}

static bool path_gone(void *arg)
{
    return !path_exists(arg);
}

/* Every update of FW_ID's task arg sent so far is acknowledged: the
 * task's checkpointed pending updates (checkpoint.h) are none. */
static bool acks_through(void *arg)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof(p), "%s/meta/frameworks/%s/tasks/%s/updates", agent_work,
             FW_ID, (const char *)arg);
    struct stat st;
    return stat(p, &st) == 0 && st.st_size == 0;
}

struct task_state {
    const char *task_id;
    const char *state; /* e.g. "TASK_FAILED" */
};

/* The agent's /state shows the task in that state. */
static bool agent_task_in_state(void *arg)
{
    const struct task_state *w = arg;
    json_t *st = agent_get_json("/state", 200);
    bool found = false;
    size_t i, k, n;
    json_t *f, *e, *t;
    json_array_foreach(json_object_get(st, "frameworks"), i, f)
    {
        json_array_foreach(json_object_get(f, "executors"), k, e)
        {
            const char *lists[] = {"tasks", "completed_tasks"};
            for (int l = 0; l < 2; l++) {
                json_array_foreach(json_object_get(e, lists[l]), n, t)
                {
                    const char *id =
                        json_string_value(json_object_get(t, "id"));
                    const char *s =
                        json_string_value(json_object_get(t, "state"));
                    found |= id != NULL && s != NULL &&
                             strcmp(id, w->task_id) == 0 &&
                             strcmp(s, w->state) == 0;
                }
            }
        }
    }
    json_decref(st);
    return found;
}

struct pids {
    pid_t a, b;
};

static bool both_dead(void *arg)
{
    const struct pids *p = arg;
    return !e2e_pid_alive(p->a) && !e2e_pid_alive(p->b);
}

/* kill -9 of the agent while a task runs: the task and its supervisor live
 * on, the new agent subscribes with the same id carrying the task (RUNNING,
 * nothing pending), sends no update already acknowledged, and still
 * controls the task: a kill gives TASK_KILLED. */
START_TEST(test_restart_reattaches_running_task)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("r1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(hfm_pump_until(acks_through, "r1", 5000));
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "r1", sandbox, sizeof(sandbox)));
    pid_t task = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    pid_t sup = e2e_read_pid_file(sandbox, ".offerd.supervisor.pid");
    ck_assert(e2e_pid_alive(task) && e2e_pid_alive(sup));

    size_t mark = restart_agent(SIGKILL, NULL);
    ck_assert(e2e_pid_alive(task) && e2e_pid_alive(sup));
    size_t f = mark;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&f);
    ck_assert_str_eq(s->agent_info->id->value, AGENT_ID);
    ck_assert_uint_eq(s->n_frameworks, 1);
    ck_assert_str_eq(s->frameworks[0]->id->value, FW_ID);
    ck_assert_uint_eq(s->n_tasks, 1);
    ck_assert_int_eq(s->tasks[0]->state, MESOS__V1__TASK_STATE__TASK_RUNNING);
    ck_assert_uint_eq(s->n_unacknowledged_updates, 0);
    hfm_wait_subscribed(2, 10000);
    /* Pending updates go at once after REGISTERED; none is: a window that
     * proves an absence, nothing to wait for. */
    hfm_pump(500);
    f = mark;
    ck_assert_msg(
        hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1", -1, 0) < 0,
        "an acknowledged update was sent again");
    char again[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "r1", again, sizeof(again)));
    ck_assert_str_eq(again, sandbox);

    hfm_kill(FW_ID, "r1", -1);
    long k = hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__UPDATE, "r1",
                           MESOS__V1__TASK_STATE__TASK_KILLED, 10000);
    ck_assert_msg(k >= 0, "no TASK_KILLED after the restart");
    struct pids both = {task, sup};
    ck_assert(hfm_pump_until(both_dead, &both, 5000));
    /* Acknowledged: forgotten, checkpoint included. */
    ck_assert(hfm_pump_until(path_gone, "meta/frameworks/" FW_ID, 5000));
}
END_TEST

/* kill -9 while none of a task's updates is acknowledged and the task has
 * ended: the new SUBSCRIBE carries the task (TASK_FAILED) and its three
 * updates oldest first, the first with the uuid already sent; after
 * REGISTERED they go one at a time, in order, each once, as acknowledged;
 * then the task is forgotten. */
START_TEST(test_restart_resends_pending_updates_in_order)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("p1", "exit 3");
    size_t from = 0;
    long i0 = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "p1",
                            MESOS__V1__TASK_STATE__TASK_STARTING, 15000);
    ck_assert(i0 >= 0);
    uint8_t first_uuid[16];
    memcpy(first_uuid, hfm.calls[i0]->update->status->uuid.data, 16);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "p1", sandbox, sizeof(sandbox)));
    ck_assert(wait_sandbox_file(sandbox, ".offerd.exit_status", 10000));
    struct task_state failed = {"p1", "TASK_FAILED"};
    ck_assert_msg(hfm_pump_until(agent_task_in_state, &failed, 10000),
                  "the agent did not see the task end");

    size_t mark = restart_agent(SIGKILL, NULL);
    size_t f = mark;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&f);
    const Mesos__V1__Task *t = subscribe_task(s, "p1");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_uint_eq(s->n_unacknowledged_updates, 3);
    static const int want[3] = {MESOS__V1__TASK_STATE__TASK_STARTING,
                                MESOS__V1__TASK_STATE__TASK_RUNNING,
                                MESOS__V1__TASK_STATE__TASK_FAILED};
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(s->unacknowledged_updates[k]->status->state, want[k]);
    ck_assert(memcmp(s->unacknowledged_updates[0]->status->uuid.data,
                     first_uuid, 16) == 0);
    hfm_wait_subscribed(2, 10000);

    for (int k = 0; k < 3; k++) {
        long u = hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__UPDATE, "p1", -1,
                               10000);
        ck_assert_msg(u >= 0, "update %d not sent", k);
        const Mesos__V1__TaskStatus *st = hfm.calls[u]->update->status;
        ck_assert_int_eq(st->state, want[k]);
        ck_assert(memcmp(st->uuid.data,
                         s->unacknowledged_updates[k]->status->uuid.data,
                         16) == 0);
        if (k == 2)
            ck_assert_ptr_nonnull(strstr(st->message, "status 3"));
        /* Nothing else goes before the acknowledgement: a window that
         * proves an absence, nothing to wait for. */
        hfm_pump(200);
        size_t g = f;
        ck_assert(hfm_wait_call(&g, OFFERD__AGENT__CALL__TYPE__UPDATE, "p1", -1,
                                0) < 0);
        hfm_ack(FW_ID, st);
    }
    ck_assert(hfm_pump_until(path_gone, "meta/frameworks/" FW_ID, 5000));
    json_t *st = agent_get_json("/state", 200);
    ck_assert_int_eq(json_array_size(json_object_get(st, "frameworks")), 0);
    json_decref(st);
}
END_TEST

/* Tasks that end while the agent is stopped (SIGTERM) are reported after
 * the restart with their real exit status. */
START_TEST(test_restart_reports_tasks_ended_while_down)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("e1", "sleep 1; exit 5");
    shell_task("e2", "sleep 1");
    size_t from = 0, from2 = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "e1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(hfm_wait_call(&from2, OFFERD__AGENT__CALL__TYPE__UPDATE, "e2",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(hfm_pump_until(acks_through, "e1", 5000));
    ck_assert(hfm_pump_until(acks_through, "e2", 5000));
    char s1[PATH_MAX], s2[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "e1", s1, sizeof(s1)));
    ck_assert(e2e_agent_sandbox(agent.port, "e2", s2, sizeof(s2)));
    struct pids sups = {e2e_read_pid_file(s1, ".offerd.supervisor.pid"),
                        e2e_read_pid_file(s2, ".offerd.supervisor.pid")};
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&agent);
    ck_assert(wait_sandbox_file(s1, ".offerd.exit_status", 10000));
    ck_assert(wait_sandbox_file(s2, ".offerd.exit_status", 10000));
    /* Their supervisors are gone too before the agent comes back. */
    ck_assert(hfm_pump_until(both_dead, &sups, 10000));

    size_t mark = hfm.ncalls;
    start_agent(NULL);
    size_t f = mark;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&f);
    ck_assert_uint_eq(s->n_tasks, 2);
    ck_assert_int_eq(subscribe_task(s, "e1")->state,
                     MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_int_eq(subscribe_task(s, "e2")->state,
                     MESOS__V1__TASK_STATE__TASK_FINISHED);
    ck_assert_uint_eq(s->n_unacknowledged_updates, 2);
    size_t g = mark;
    long u =
        hfm_wait_call(&g, OFFERD__AGENT__CALL__TYPE__UPDATE, "e1", -1, 10000);
    ck_assert(u >= 0);
    const Mesos__V1__TaskStatus *st = hfm.calls[u]->update->status;
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_COMMAND_EXECUTOR_FAILED");
    ck_assert_ptr_nonnull(strstr(st->message, "status 5"));
    g = mark;
    u = hfm_wait_call(&g, OFFERD__AGENT__CALL__TYPE__UPDATE, "e2", -1, 10000);
    ck_assert(u >= 0);
    ck_assert_int_eq(hfm.calls[u]->update->status->state,
                     MESOS__V1__TASK_STATE__TASK_FINISHED);
    ck_assert(hfm_pump_until(path_gone, "meta/frameworks/" FW_ID, 5000));
}
END_TEST

/* A kill in progress (SIGTERM survived, 2 s grace period) when the agent
 * is killed -9 resumes after the restart, with no new KILL_TASK: SIGKILL
 * when the grace period ends, TASK_KILLED. */
START_TEST(test_restart_resumes_kill)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task_grace("k1", STUBBORN, 2000);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "k1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "k1", sandbox, sizeof(sandbox)));
    ck_assert(wait_sandbox_file(sandbox, "trapped", 10000));
    pid_t task = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    int64_t t0 = e2e_now_ms();
    hfm_kill(FW_ID, "k1", -1);
    ck_assert_msg(wait_sandbox_file(sandbox, "term", 10000),
                  "the task got no SIGTERM");
    ck_assert(e2e_pid_alive(task)); /* SIGTERM did not end it */
    size_t mark = restart_agent(SIGKILL, NULL);
    size_t f = mark;
    long k = hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__UPDATE, "k1",
                           MESOS__V1__TASK_STATE__TASK_KILLED, 15000);
    ck_assert_msg(k >= 0, "the kill did not resume");
    int64_t took = e2e_now_ms() - t0;
    ck_assert_msg(took >= 1500 && took < 9000, "killed after %lld ms",
                  (long long)took);
    ck_assert(!e2e_pid_alive(task));
}
END_TEST

/* --recover=cleanup kills the tasks it finds, forgets the checkpoint and
 * exits 0 without registering; the next agent registers as a new one. */
START_TEST(test_recover_cleanup)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("c1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "c1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(hfm_pump_until(acks_through, "c1", 5000));
    char sandbox[PATH_MAX];
    ck_assert(e2e_agent_sandbox(agent.port, "c1", sandbox, sizeof(sandbox)));
    pid_t task = e2e_read_pid_file(sandbox, ".offerd.task.pid");
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&agent);
    ck_assert(e2e_pid_alive(task));

    char a_master[64], a_work[PATH_MAX + 16], out[16384];
    snprintf(a_master, sizeof(a_master), "--master=127.0.0.1:%u",
             (unsigned)hfm.port);
    snprintf(a_work, sizeof(a_work), "--work_dir=%s", agent_work);
    const char *args[] = {
        a_master, "--ip=127.0.0.1",    "--port=0",
        a_work,   "--recover=cleanup", "--resources=cpus:2;mem:1024;disk:4096",
        NULL};
    size_t mark = hfm.ncalls;
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, args, out, sizeof(out), 30000),
                     0);
    ck_assert(!e2e_pid_alive(task));
    ck_assert_uint_eq(hfm.ncalls, mark); /* it did not subscribe */
    ck_assert(!path_exists("meta/agent_id"));
    ck_assert(!path_exists("meta/frameworks"));

    start_agent(NULL);
    size_t f = mark;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&f);
    ck_assert_ptr_null(s->agent_info->id);
    ck_assert_uint_eq(s->n_tasks, 0);
}
END_TEST

/* Crafted checkpoint helpers: a TaskInfo and a Task of FW_ID. */
static void craft_task(struct agent_ckpt *ck, const char *task_id,
                       const char *sandbox, int state)
{
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = AGENT_ID;
    Mesos__V1__TaskInfo ti = MESOS__V1__TASK_INFO__INIT;
    ti.name = (char *)task_id;
    ti.task_id = &tid;
    ti.agent_id = &aid;
    char err[256];
    ck_assert_int_eq(
        agent_ckpt_save_task_info(ck, FW_ID, &ti, sandbox, err, sizeof(err)),
        0);
    if (state < 0)
        return;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__Task t = MESOS__V1__TASK__INIT;
    t.name = (char *)task_id;
    t.task_id = &tid;
    t.framework_id = &fid;
    t.agent_id = &aid;
    t.state = (Mesos__V1__TaskState)state;
    ck_assert_int_eq(agent_ckpt_save_task(ck, FW_ID, &t, err, sizeof(err)), 0);
}

static void craft_sandbox(const char *task_id, const char *exit_status,
                          char *out, size_t outlen)
{
    char err[256];
    int n = snprintf(out, outlen, "%s/sandboxes/%s/%s/run", agent_work, FW_ID,
                     task_id);
    ck_assert(n > 0 && (size_t)n < outlen);
    ck_assert_int_eq(fs_mkdirs(out, err, sizeof(err)), 0);
    char p[PATH_MAX + 64];
    /* A supervisor that is long gone. */
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%d\n", (int)dead);
    snprintf(p, sizeof(p), "%s/.offerd.supervisor.pid", out);
    ck_assert_int_eq(fs_write_atomic(p, buf, (size_t)len), 0);
    if (exit_status != NULL) {
        snprintf(p, sizeof(p), "%s/.offerd.exit_status", out);
        ck_assert_int_eq(fs_write_atomic(p, exit_status, strlen(exit_status)),
                         0);
    }
}

/* The UPDATE of task_id from index from on (waited for). */
static const Mesos__V1__TaskStatus *wait_update_of(size_t from,
                                                   const char *task_id)
{
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, task_id,
                           -1, 10000);
    ck_assert_msg(i >= 0, "no update of %s", task_id);
    return hfm.calls[i]->update->status;
}

/* An agent started on a checkpoint crafted by hand, with a task that ended
 * with a status, one whose supervisor left none, a half-written one, one
 * with an unreadable state, the pending TASK_LOST of a task it never ran
 * (in a framework whose FrameworkInfo is missing) and a directory that is
 * not an id: it starts, reports each as the rules say, and forgets them
 * once acknowledged. */
START_TEST(test_recovery_from_crafted_checkpoint)
{
    char err[256];
    struct agent_ckpt *ck = agent_ckpt_new(agent_work, err, sizeof(err));
    ck_assert_msg(ck != NULL, "%s", err);
    ck_assert_int_eq(agent_ckpt_save_agent_id(ck, AGENT_ID, err, sizeof(err)),
                     0);
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = FW_ID;
    Mesos__V1__FrameworkInfo fi = MESOS__V1__FRAMEWORK_INFO__INIT;
    fi.user = "u";
    fi.name = "crafted";
    fi.id = &fid;
    ck_assert_int_eq(
        agent_ckpt_save_framework(ck, FW_ID, &fi, err, sizeof(err)), 0);
    char sb[PATH_MAX];
    craft_sandbox("ended3", "768\n", sb, sizeof(sb));
    craft_task(ck, "ended3", sb, MESOS__V1__TASK_STATE__TASK_RUNNING);
    craft_sandbox("nostatus", NULL, sb, sizeof(sb));
    craft_task(ck, "nostatus", sb, MESOS__V1__TASK_STATE__TASK_RUNNING);
    craft_sandbox("half", NULL, sb, sizeof(sb));
    craft_task(ck, "half", sb, -1);
    char p[PATH_MAX + 128];
    snprintf(p, sizeof(p), "%s/meta/frameworks/%s/tasks/junk", agent_work,
             FW_ID);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    snprintf(p, sizeof(p), "%s/meta/frameworks/%s/tasks/junk/task", agent_work,
             FW_ID);
    ck_assert_int_eq(fs_write_atomic(p, "\xff\xfe", 2), 0);
    /* A TASK_LOST as the agent makes them (status.h), by hand. */
    uint8_t lost_uuid[16] = {0x10, 0x57, 1, 2,  3,  4,  5,  6,
                             7,    8,    9, 10, 11, 12, 13, 14};
    Mesos__V1__TaskID lost_tid = MESOS__V1__TASK_ID__INIT;
    lost_tid.value = "lostonly";
    Mesos__V1__AgentID lost_aid = MESOS__V1__AGENT_ID__INIT;
    lost_aid.value = AGENT_ID;
    Mesos__V1__TaskStatus lost_st = MESOS__V1__TASK_STATUS__INIT;
    lost_st.task_id = &lost_tid;
    lost_st.state = MESOS__V1__TASK_STATE__TASK_LOST;
    lost_st.has_source = 1;
    lost_st.source = MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT;
    lost_st.agent_id = &lost_aid;
    lost_st.has_timestamp = 1;
    lost_st.timestamp = 1;
    lost_st.has_uuid = 1;
    lost_st.uuid.len = sizeof(lost_uuid);
    lost_st.uuid.data = lost_uuid;
    Mesos__V1__TaskStatus *lost = &lost_st;
    Mesos__V1__FrameworkID ofid = MESOS__V1__FRAMEWORK_ID__INIT;
    ofid.value = "fw-other";
    Offerd__Agent__Call__Update up = OFFERD__AGENT__CALL__UPDATE__INIT;
    up.framework_id = &ofid;
    up.status = lost;
    const Offerd__Agent__Call__Update *pv[1] = {&up};
    ck_assert_int_eq(agent_ckpt_save_updates(ck, "fw-other", "lostonly", pv, 1,
                                             err, sizeof(err)),
                     0);
    snprintf(p, sizeof(p), "%s/meta/frameworks/bad name", agent_work);
    ck_assert_int_eq(fs_mkdirs(p, err, sizeof(err)), 0);
    agent_ckpt_free(ck);

    hfm.auto_ack = true;
    start_agent(NULL);
    size_t f = 0;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&f);
    ck_assert_str_eq(s->agent_info->id->value, AGENT_ID);
    /* Four crafted tasks, and "lostonly", known only by its pending
     * update: reported too (it is not both terminal and acknowledged). */
    ck_assert_uint_eq(s->n_tasks, 5);
    for (size_t i = 0; i < s->n_tasks; i++)
        ck_assert_int_eq(s->tasks[i]->state,
                         strcmp(s->tasks[i]->task_id->value, "lostonly") == 0
                             ? MESOS__V1__TASK_STATE__TASK_LOST
                             : MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_uint_eq(s->n_unacknowledged_updates, 5);
    /* The oldest pending update (the crafted one) goes first. */
    ck_assert_str_eq(s->unacknowledged_updates[0]->status->task_id->value,
                     "lostonly");
    ck_assert_uint_eq(s->n_frameworks, 1);
    ck_assert_str_eq(s->frameworks[0]->name, "crafted");

    const Mesos__V1__TaskStatus *st = wait_update_of(0, "ended3");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_COMMAND_EXECUTOR_FAILED");
    ck_assert_str_eq(st->message, "Command exited with status 3");
    st = wait_update_of(0, "nostatus");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_EXECUTOR_TERMINATED");
    st = wait_update_of(0, "half");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_AGENT_RESTARTED");
    ck_assert_int_eq(st->source, MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    st = wait_update_of(0, "junk");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_EXECUTOR_TERMINATED");
    long i = hfm_wait_call(&(size_t){0}, OFFERD__AGENT__CALL__TYPE__UPDATE,
                           "lostonly", MESOS__V1__TASK_STATE__TASK_LOST, 10000);
    ck_assert(i >= 0);
    ck_assert_str_eq(hfm.calls[i]->update->framework_id->value, "fw-other");
    ck_assert(memcmp(hfm.calls[i]->update->status->uuid.data, lost->uuid.data,
                     16) == 0);

    ck_assert(hfm_pump_until(path_gone, "meta/frameworks/" FW_ID, 5000));
    ck_assert(hfm_pump_until(path_gone, "meta/frameworks/fw-other", 5000));
    ck_assert(path_exists("meta/frameworks/bad name")); /* left alone */
}
END_TEST

/* A bad --recover value is refused. */
START_TEST(test_recover_flag_checked)
{
    char out[4096];
    const char *args[] = {"--master=127.0.0.1:5050", "--recover=maybe", NULL};
    ck_assert_int_eq(e2e_run(OFFERD_AGENT_BIN, args, out, sizeof(out), 10000),
                     1);
    ck_assert_ptr_nonnull(strstr(out, "--recover"));
}
END_TEST

START_TEST(test_shutdown_event)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("z1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "z1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    Offerd__Agent__Event__Shutdown sd = OFFERD__AGENT__EVENT__SHUTDOWN__INIT;
    sd.message = "removed by the operator";
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__SHUTDOWN;
    ev.shutdown = &sd;
    hfm_send(&ev);
    ck_assert(hfm_pump_until(agent_exited, NULL, 10000));
    ck_assert_int_eq(WEXITSTATUS(agent.exit_status), 0);
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "z1",
                            MESOS__V1__TASK_STATE__TASK_KILLED, 0) >= 0);
}
END_TEST

static void reconcile(const char *fw, const char *task_id)
{
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    fid.value = (char *)fw;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    tid.value = (char *)task_id;
    Offerd__Agent__Event__Reconcile__Task t =
        OFFERD__AGENT__EVENT__RECONCILE__TASK__INIT;
    t.framework_id = &fid;
    t.task_id = &tid;
    Offerd__Agent__Event__Reconcile__Task *tv[1] = {&t};
    Offerd__Agent__Event__Reconcile r = OFFERD__AGENT__EVENT__RECONCILE__INIT;
    r.n_tasks = 1;
    r.tasks = tv;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__RECONCILE;
    ev.reconcile = &r;
    hfm_send(&ev);
}

START_TEST(test_reconcile)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    shell_task("rc1", "sleep 60");
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "rc1",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(hfm_pump_until(acks_through, "rc1", 5000));
    reconcile(FW_ID, "nobody");
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "nobody",
                           MESOS__V1__TASK_STATE__TASK_LOST, 10000);
    ck_assert_msg(i >= 0, "no TASK_LOST for an unknown task");
    ck_assert_str_eq(hfm_reason_name(hfm.calls[i]->update->status),
                     "REASON_RECONCILIATION");
    ck_assert_int_eq(hfm.calls[i]->update->status->source,
                     MESOS__V1__TASK_STATUS__SOURCE__SOURCE_AGENT);
    /* A task it holds: its latest state again. */
    reconcile(FW_ID, "rc1");
    i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__UPDATE, "rc1",
                      MESOS__V1__TASK_STATE__TASK_RUNNING, 10000);
    ck_assert_msg(i >= 0, "no status for a known task");
    ck_assert_str_eq(hfm_reason_name(hfm.calls[i]->update->status),
                     "REASON_RECONCILIATION");
}
END_TEST

START_TEST(test_ping_timeout_resubscribes)
{
    hfm.ping_timeout = 0.3;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    int64_t t0 = e2e_now_ms();
    size_t from = 1;
    /* No PING comes: the agent gives up on this stream. */
    long i = hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL,
                           -1, 10000);
    ck_assert_msg(i >= 0, "no new SUBSCRIBE after the ping timeout");
    ck_assert_int_ge(e2e_now_ms() - t0, 250);
    ck_assert_str_eq(hfm.calls[i]->subscribe->agent_info->id->value, AGENT_ID);
    /* PINGs keep the new stream: one every 100 ms for a second (a pace,
     * and a window that proves an absence), and no further SUBSCRIBE. */
    hfm_wait_subscribed(2, 5000);
    size_t mark = hfm.ncalls;
    for (int k = 0; k < 10; k++) {
        Offerd__Agent__Event__Ping ping = OFFERD__AGENT__EVENT__PING__INIT;
        ping.sequence = (uint64_t)k;
        Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
        ev.type = OFFERD__AGENT__EVENT__TYPE__PING;
        ev.ping = &ping;
        hfm_send(&ev);
        hfm_pump(100);
    }
    size_t f = mark;
    ck_assert(hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE, NULL, -1,
                            0) < 0);
    f = mark;
    ck_assert(hfm_wait_call(&f, OFFERD__AGENT__CALL__TYPE__PONG, NULL, -1, 0) >=
              0);
}
END_TEST

START_TEST(test_refused_call_resubscribes)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    hfm.refuse_calls = true;
    Offerd__Agent__Event__Ping ping = OFFERD__AGENT__EVENT__PING__INIT;
    ping.sequence = 1;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__PING;
    ev.ping = &ping;
    hfm_send(&ev);
    size_t from = 0;
    ck_assert(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__PONG, NULL, -1,
                            10000) >= 0);
    /* The PONG was answered 403: the agent subscribes again. */
    ck_assert_msg(hfm_wait_call(&from, OFFERD__AGENT__CALL__TYPE__SUBSCRIBE,
                                NULL, -1, 10000) >= 0,
                  "no SUBSCRIBE after a 403");
    hfm.refuse_calls = false;
}
END_TEST

/* ---- Checkpointed resources and persistent volumes ---- */

/* A volume of role "eng" with persistence id `id` at container path
 * "data", and cpus reserved to "eng" (JSON objects). */
#define E2E_VOLUME(id)                                                         \
    "{\"name\":\"disk\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32},"        \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}],\"disk\":{\"persistence\":{\"id\":\"" id "\"},"   \
    "\"volume\":{\"container_path\":\"data\",\"mode\":\"RW\"}}}"
#define E2E_ENG_CPUS                                                           \
    "{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1},"         \
    "\"reservations\":[{\"type\":\"DYNAMIC\",\"role\":\"eng\","                \
    "\"principal\":\"ops\"}]}"

static void checkpoint_resources(const char *json, uint64_t version)
{
    Offerd__Agent__Event__CheckpointResources cr =
        OFFERD__AGENT__EVENT__CHECKPOINT_RESOURCES__INIT;
    cr.resources = hfm_resources_from_json(json, &cr.n_resources);
    cr.version = version;
    Offerd__Agent__Event ev = OFFERD__AGENT__EVENT__INIT;
    ev.type = OFFERD__AGENT__EVENT__TYPE__CHECKPOINT_RESOURCES;
    ev.checkpoint_resources = &cr;
    hfm_send(&ev);
    hfm_resources_free(cr.resources, cr.n_resources);
}

/* The CHECKPOINTED_RESOURCES answer for version at index >= *from. */
static const Offerd__Agent__Call__CheckpointedResources *
wait_checkpointed(size_t *from, uint64_t version)
{
    int64_t deadline = e2e_now_ms() + 10000;
    for (;;) {
        long i = hfm_wait_call(
            from, OFFERD__AGENT__CALL__TYPE__CHECKPOINTED_RESOURCES, NULL, -1,
            (int)(deadline - e2e_now_ms()));
        ck_assert_msg(i >= 0, "no CHECKPOINTED_RESOURCES for version %llu",
                      (unsigned long long)version);
        const Offerd__Agent__Call__CheckpointedResources *c =
            hfm.calls[i]->checkpointed_resources;
        if (c != NULL && c->version == version)
            return c;
    }
}

/* RUN_TASK of FW_ID's shell task with resources (a JSON array). */
static void run_task_with(const char *task_id, const char *cmd,
                          const char *resources_json)
{
    struct hfm_task t = {.framework_id = FW_ID,
                         .task_id = task_id,
                         .shell = cmd,
                         .resources_json = resources_json};
    hfm_run_task(&t);
}

struct terminal_wait {
    const char *task_id;
    const Mesos__V1__TaskStatus *st; /* OUT: its terminal update */
};

static bool task_ended(void *arg)
{
    struct terminal_wait *w = arg;
    const Mesos__V1__TaskStatus *u[16];
    size_t n = hfm_updates_of(w->task_id, 0, u, 16);
    for (size_t i = 0; i < n; i++)
        if (task_state_is_terminal((int)u[i]->state)) {
            w->st = u[i];
            return true;
        }
    return false;
}

/* The terminal update of task_id (waited for). */
static const Mesos__V1__TaskStatus *wait_terminal(const char *task_id)
{
    struct terminal_wait w = {task_id, NULL};
    ck_assert_msg(hfm_pump_until(task_ended, &w, 15000), "task %s did not end",
                  task_id);
    return w.st;
}

static bool path_there(void *arg)
{
    return path_exists(arg);
}

/* Wait (pumping) until work_dir/rel exists or not. */
static bool wait_path(const char *rel, bool want, int timeout_ms)
{
    return hfm_pump_until(want ? path_there : path_gone, (void *)rel,
                          timeout_ms);
}

/* meta/resources/checkpointed as it is now: its version, or -1 when
 * missing or unreadable. */
static long long checkpointed_version_on_disk(size_t *nresources)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/meta/resources/checkpointed", agent_work);
    uint8_t *data = NULL;
    size_t len = 0;
    if (fs_read(p, 1 << 20, &data, &len) != 1)
        return -1;
    Offerd__Agent__Event__CheckpointResources *cr =
        (Offerd__Agent__Event__CheckpointResources *)jpb_from_pb(
            &offerd__agent__event__checkpoint_resources__descriptor, data, len,
            NULL, 0);
    free(data);
    if (cr == NULL)
        return -1;
    long long v = (long long)cr->version;
    if (nresources != NULL)
        *nresources = cr->n_resources;
    jpb_free(&cr->base);
    return v;
}

/* CHECKPOINT_RESOURCES is answered once the list is on disk and the volume
 * directory made; /state shows the reservations; a new SUBSCRIBE reports
 * the list and version, the static resources unchanged. */
START_TEST(test_checkpoint_resources_applied)
{
    start_agent(NULL);
    size_t from = 0;
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&from);
    ck_assert_uint_eq(s->checkpointed_resources_version, 0);
    ck_assert_uint_eq(s->n_checkpointed_resources, 0);
    hfm_wait_subscribed(1, 10000);
    ck_assert_int_eq(checkpointed_version_on_disk(NULL), -1);

    checkpoint_resources("[" E2E_VOLUME("v1") "," E2E_ENG_CPUS "]", 1);
    const Offerd__Agent__Call__CheckpointedResources *c =
        wait_checkpointed(&from, 1);
    /* Checked as the answer arrives: already durable and made. */
    size_t n = 0;
    ck_assert_int_eq(checkpointed_version_on_disk(&n), 1);
    ck_assert_uint_eq(n, 2);
    ck_assert_ptr_null(c->error);
    ck_assert(path_exists("volumes/roles/eng/v1"));

    json_t *st = agent_get_json("/state", 200);
    ck_assert_int_eq(json_integer_value(
                         json_object_get(st, "checkpointed_resources_version")),
                     1);
    ck_assert_uint_eq(
        json_array_size(json_object_get(st, "checkpointed_resources")), 2);
    json_t *eng =
        json_object_get(json_object_get(st, "reserved_resources"), "eng");
    ck_assert(json_number_value(json_object_get(eng, "cpus")) == 1.0);
    ck_assert(json_number_value(json_object_get(eng, "disk")) == 32.0);
    json_t *unres = json_object_get(st, "unreserved_resources");
    ck_assert(json_number_value(json_object_get(unres, "cpus")) == 1.0);
    ck_assert(json_number_value(json_object_get(unres, "disk")) == 4064.0);
    ck_assert(json_number_value(json_object_get(
                  json_object_get(st, "resources"), "disk")) == 4096.0);
    json_t *full =
        json_object_get(json_object_get(st, "reserved_resources_full"), "eng");
    ck_assert_uint_eq(json_array_size(full), 2);
    json_decref(st);

    /* A new SUBSCRIBE (the stream closes) carries the list. */
    hfm_close_stream();
    s = wait_subscribe(&from);
    ck_assert_uint_eq(s->checkpointed_resources_version, 1);
    ck_assert_uint_eq(s->n_checkpointed_resources, 2);
    ck_assert_str_eq(s->checkpointed_resources[0]->disk->persistence->id, "v1");
    /* The static resources stay unreserved. */
    for (size_t i = 0; i < s->agent_info->n_resources; i++)
        ck_assert_uint_eq(s->agent_info->resources[i]->n_reservations, 0);
    ck_assert(find_resource(s->agent_info, "disk")->scalar->value == 4096.0);
}
END_TEST

/* A list the agent cannot apply is answered with an error and leaves the
 * previous one; an older version is ignored. */
START_TEST(test_checkpoint_resources_refused)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    checkpoint_resources("[" E2E_VOLUME("v1") "]", 3);
    ck_assert_ptr_null(wait_checkpointed(&from, 3)->error);
    /* An id that is not one path component. */
    checkpoint_resources("[" E2E_VOLUME("../../escape") "]", 4);
    const Offerd__Agent__Call__CheckpointedResources *c =
        wait_checkpointed(&from, 4);
    ck_assert_ptr_nonnull(c->error);
    ck_assert_ptr_nonnull(strstr(c->error, "escape"));
    ck_assert_int_eq(checkpointed_version_on_disk(NULL), 3);
    /* Older than held. */
    checkpoint_resources("[]", 2);
    c = wait_checkpointed(&from, 2);
    ck_assert_ptr_nonnull(c->error);
    ck_assert_ptr_nonnull(strstr(c->error, "older"));
    ck_assert_int_eq(checkpointed_version_on_disk(NULL), 3);
    ck_assert(path_exists("volumes/roles/eng/v1"));
    json_t *st = agent_get_json("/state", 200);
    ck_assert_int_eq(json_integer_value(
                         json_object_get(st, "checkpointed_resources_version")),
                     3);
    json_decref(st);
}
END_TEST

/* A task writes into its volume, a second task reads what it wrote; a task
 * naming a volume the agent does not hold fails to launch. */
START_TEST(test_volume_data_persists_across_tasks)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    checkpoint_resources("[" E2E_VOLUME("v1") "]", 1);
    ck_assert_ptr_null(wait_checkpointed(&from, 1)->error);

    run_task_with("writer", "echo persisted > data/f",
                  "[" E2E_VOLUME("v1") "]");
    const Mesos__V1__TaskStatus *st = wait_terminal("writer");
    ck_assert_msg(st->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%s",
                  st->message ? st->message : "");
    ck_assert(path_exists("volumes/roles/eng/v1/f"));
    run_task_with("reader", "test \"$(cat data/f)\" = persisted",
                  "[" E2E_VOLUME("v1") "]");
    st = wait_terminal("reader");
    ck_assert_msg(st->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%s",
                  st->message ? st->message : "");

    run_task_with("stranger", "true", "[" E2E_VOLUME("v9") "]");
    st = wait_terminal("stranger");
    ck_assert_int_eq(st->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_str_eq(hfm_reason_name(st), "REASON_CONTAINER_LAUNCH_FAILED");
    ck_assert_ptr_nonnull(strstr(st->message, "'v9'"));
    ck_assert_ptr_nonnull(strstr(st->message, "not held"));
}
END_TEST

/* A volume dropped from the list is removed at once when unused, and only
 * when its last task ends otherwise. */
START_TEST(test_volume_removed_when_unused)
{
    hfm.auto_ack = true;
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    checkpoint_resources("[" E2E_VOLUME("busy") "," E2E_VOLUME("idle") "]", 1);
    ck_assert_ptr_null(wait_checkpointed(&from, 1)->error);
    run_task_with("user", "echo x > data/f; sleep 60",
                  "[" E2E_VOLUME("busy") "]");
    size_t ufrom = 0;
    ck_assert(hfm_wait_call(&ufrom, OFFERD__AGENT__CALL__TYPE__UPDATE, "user",
                            MESOS__V1__TASK_STATE__TASK_RUNNING, 15000) >= 0);
    ck_assert(wait_path("volumes/roles/eng/busy/f", true, 10000));

    checkpoint_resources("[]", 2);
    ck_assert_ptr_null(wait_checkpointed(&from, 2)->error);
    ck_assert(!path_exists("volumes/roles/eng/idle"));
    ck_assert(path_exists("volumes/roles/eng/busy/f"));
    /* A restart in between does not forget it. */
    restart_agent(SIGTERM, NULL);
    hfm_wait_subscribed(2, 10000);
    ck_assert(path_exists("volumes/roles/eng/busy/f"));
    hfm_kill(FW_ID, "user", -1);
    ck_assert_int_eq(wait_terminal("user")->state,
                     MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert_msg(wait_path("volumes/roles/eng/busy", false, 10000),
                  "the dropped volume stayed after its task ended");
}
END_TEST

/* The list survives a restart, even a crash; a corrupt file is version 0. */
START_TEST(test_checkpoint_resources_survive_restart)
{
    start_agent(NULL);
    hfm_wait_subscribed(1, 10000);
    size_t from = 0;
    checkpoint_resources("[" E2E_VOLUME("v1") "," E2E_ENG_CPUS "]", 5);
    ck_assert_ptr_null(wait_checkpointed(&from, 5)->error);
    from = restart_agent(SIGKILL, NULL);
    const Offerd__Agent__Call__Subscribe *s = wait_subscribe(&from);
    ck_assert_uint_eq(s->checkpointed_resources_version, 5);
    ck_assert_uint_eq(s->n_checkpointed_resources, 2);

    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    e2e_proc_cleanup(&agent);
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/meta/resources/checkpointed", agent_work);
    ck_assert_int_eq(fs_write_atomic(p, "\x0a\xff", 2), 0);
    from = hfm.ncalls;
    start_agent(NULL);
    s = wait_subscribe(&from);
    ck_assert_uint_eq(s->checkpointed_resources_version, 0);
    ck_assert_uint_eq(s->n_checkpointed_resources, 0);
    /* Nothing is removed on its strength; the master's list applies. */
    ck_assert(path_exists("volumes/roles/eng/v1"));
    hfm_wait_subscribed(3, 10000);
    checkpoint_resources("[" E2E_VOLUME("v1") "]", 5);
    ck_assert_ptr_null(wait_checkpointed(&from, 5)->error);
    ck_assert_int_eq(checkpointed_version_on_disk(NULL), 5);
}
END_TEST

static Suite *agent_suite(void)
{
    Suite *s = suite_create("e2e_agent");
    TCase *tc = tcase_create("agent");
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_help_and_bad_flags);
    tcase_add_test(tc, test_registration);
    tcase_add_test(tc, test_task_finishes);
    tcase_add_test(tc, test_task_fails);
    tcase_add_test(tc, test_kill_within_grace);
    tcase_add_test(tc, test_kill_escalates_to_sigkill);
    tcase_add_test(tc, test_unacknowledged_update_is_retried);
    tcase_add_test(tc, test_resubscribes_after_stream_closes);
    tcase_add_test(tc, test_files_confinement);
    tcase_add_test(tc, test_unknown_task_kill_is_lost);
    tcase_add_test(tc, test_ping_pong);
    tcase_add_test(tc, test_shutdown_framework_kills_its_tasks);
    tcase_add_test(tc, test_sigusr1_kills_tasks_and_exits);
    tcase_add_test(tc, test_sigterm_leaves_tasks_and_keeps_id);
    tcase_add_test(tc, test_shutdown_event);
    tcase_add_test(tc, test_reconcile);
    tcase_add_test(tc, test_ping_timeout_resubscribes);
    tcase_add_test(tc, test_refused_call_resubscribes);
    tcase_add_test(tc, test_restart_reattaches_running_task);
    tcase_add_test(tc, test_restart_resends_pending_updates_in_order);
    tcase_add_test(tc, test_restart_reports_tasks_ended_while_down);
    tcase_add_test(tc, test_restart_resumes_kill);
    tcase_add_test(tc, test_recover_cleanup);
    tcase_add_test(tc, test_recover_flag_checked);
    tcase_add_test(tc, test_recovery_from_crafted_checkpoint);
    tcase_add_test(tc, test_checkpoint_resources_applied);
    tcase_add_test(tc, test_checkpoint_resources_refused);
    tcase_add_test(tc, test_volume_data_persists_across_tasks);
    tcase_add_test(tc, test_volume_removed_when_unused);
    tcase_add_test(tc, test_checkpoint_resources_survive_restart);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(agent_suite)
