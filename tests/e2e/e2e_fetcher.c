/*
 * End-to-end tests of how the agent launches command tasks, with the real
 * master and agent and a libofferd framework (harness_fw.h):
 *  - the fetcher downloads a tar.gz from an HTTP server in this test process
 *    (offerd's own server, common/http.h, on the framework's loop),
 *    extracts it in the sandbox and the task runs a script from it; a second
 *    task fetching the same cached URI is served from the agent's cache (the
 *    server sees one request; the cache holds one file; the sandbox's stderr
 *    says so);
 *  - a URI that cannot be fetched fails the task (TASK_FAILED,
 *    REASON_CONTAINER_LAUNCH_FAILED, the URI and the error in the message);
 *  - a DOCKER task is refused as Mesos refuses what no containerizer runs;
 *  - the task's environment is Mesos's (it writes `env` to a file);
 *  - --switch_user: a task runs as `nobody` and its sandbox files are
 *    nobody's; an unknown user fails the task.
 */
#include "harness.h"
#include "harness_fw.h"

#include "common/fs.h"
#include "common/http.h"
#include "mesos/v1/mesos.pb-c.h"

#include <check.h>
#include <event2/event.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct e2e_proc master, agent;
static struct event_base *base;
static struct hfw fw;

/* The test's file server: serves <files>/<name> for GET /<name>, counts
 * requests per name. */
static struct {
    struct http_server *srv;
    uint16_t port;
    char files[PATH_MAX];
    int requests; /* all GETs */
} web;

static void serve(struct http_request *req, void *arg)
{
    (void)arg;
    web.requests++;
    const char *path = http_request_path(req);
    char file[PATH_MAX + 64];
    snprintf(file, sizeof(file), "%s%s", web.files, path);
    uint8_t *data = NULL;
    size_t len = 0;
    if (strstr(path, "..") != NULL ||
        fs_read(file, 16 << 20, &data, &len) != 1) {
        free(data);
        http_reply_error(req, 404, "no such file");
        return;
    }
    http_reply(req, 200, "application/octet-stream", data, len);
    free(data);
}

static void web_start(void)
{
    snprintf(web.files, sizeof(web.files), "%s/files", master.dir);
    char err[256];
    ck_assert_int_eq(fs_mkdirs(web.files, err, sizeof(err)), 0);
    web.srv = http_server_new(base, NULL);
    ck_assert_ptr_nonnull(web.srv);
    ck_assert_msg(http_server_bind(web.srv, "127.0.0.1", 0, &web.port, err,
                                   sizeof(err)) == 0,
                  "%s", err);
    ck_assert_int_eq(
        http_server_route_prefix(web.srv, "/", HTTP_GET, serve, NULL), 0);
    web.requests = 0;
}

/* Start a master, one agent with extra flags, the file server and the
 * framework (FrameworkInfo.user user, NULL: harness_fw's). */
static void cluster_start(const char *const *agent_extra, const char *user)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    const char *aargs[16] = {"--resources=cpus:2;mem:512;disk:1024"};
    int n = 1;
    for (; agent_extra != NULL && *agent_extra != NULL && n < 15; agent_extra++)
        aargs[n++] = *agent_extra;
    aargs[n] = NULL;
    ck_assert_int_eq(e2e_start_master(&master, margs), 0);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_msg(e2e_wait_agents(&master, 1, 20000) == 0,
                  "the agent did not register");
    base = event_base_new();
    ck_assert_ptr_nonnull(base);
    web_start();
    memset(&fw, 0, sizeof(fw));
    fw.name = "fetcher";
    fw.user = user;
    hfw_start(&fw, base, master.port, OFFERD_ENCODING_JSON);
}

static void cluster_stop(void)
{
    hfw_free(&fw);
    http_server_free(web.srv);
    web.srv = NULL;
    event_base_free(base);
    base = NULL;
    e2e_stop_master_agent(&master, &agent);
}

static bool cond_terminal(void *arg)
{
    int st = hfw_state(&fw, arg);
    return st >= 0 && task_state_is_terminal((Mesos__V1__TaskState)st);
}

/* Wait until the task's latest update is terminal and return it. */
static const struct hfw_update *wait_terminal(const char *task_id)
{
    ck_assert_msg(e2e_loop_until(base, cond_terminal, (void *)task_id, 30000),
                  "task %s did not end (state %d)", task_id,
                  hfw_state(&fw, task_id));
    const struct hfw_update *u[32];
    size_t n = hfw_updates_of(&fw, task_id, u, 32);
    ck_assert_uint_gt(n, 0);
    return u[n < 32 ? n - 1 : 31];
}

/* The whole of sandbox/name (NUL-terminated; free it), failing the test
 * when it cannot be read. */
static char *sandbox_text(const char *sandbox, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", sandbox, name);
    uint8_t *data = NULL;
    size_t len = 0;
    ck_assert_msg(fs_read(p, 1 << 20, &data, &len) == 1, "cannot read %s", p);
    return (char *)data;
}

/* The run directory of the agent's sandbox for task_id (the agent forgets
 * a task, and leaves /state, once its terminal update is acknowledged). */
static void sandbox_of(const char *task_id, char *out, size_t outlen)
{
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof(pattern), "%s/sandboxes/%s/%s/*", agent.work_dir,
             fw.id, task_id);
    glob_t g;
    ck_assert_msg(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1,
                  "no sandbox for %s", task_id);
    snprintf(out, outlen, "%s", g.gl_pathv[0]);
    globfree(&g);
}

/* ---- What the tasks are given (harness_fw's edit_task hook) ---- */

static struct {
    char uri[PATH_MAX + 64];
    bool cache;
    const char *cmd_user; /* CommandInfo.user, NULL: none */
    bool docker;
} give;
static Mesos__V1__CommandInfo__URI give_uri;
static Mesos__V1__CommandInfo__URI *give_uris[1];
static Mesos__V1__ContainerInfo give_container;
static Mesos__V1__Environment__Variable give_var;
static Mesos__V1__Environment__Variable *give_vars[1];
static Mesos__V1__Environment give_env;

static void edit_task(Mesos__V1__TaskInfo *ti, void *arg)
{
    (void)arg;
    if (give.uri[0] != '\0') {
        mesos__v1__command_info__uri__init(&give_uri);
        give_uri.value = give.uri;
        give_uri.has_cache = give.cache;
        give_uri.cache = give.cache;
        give_uris[0] = &give_uri;
        ti->command->n_uris = 1;
        ti->command->uris = give_uris;
    }
    if (give.cmd_user != NULL)
        ti->command->user = (char *)give.cmd_user;
    if (give.docker) {
        mesos__v1__container_info__init(&give_container);
        give_container.type = MESOS__V1__CONTAINER_INFO__TYPE__DOCKER;
        ti->container = &give_container;
    }
    mesos__v1__environment__variable__init(&give_var);
    give_var.name = "E2E_FROM_COMMAND";
    give_var.value = "cmd-value";
    give_vars[0] = &give_var;
    mesos__v1__environment__init(&give_env);
    give_env.n_variables = 1;
    give_env.variables = give_vars;
    ti->command->environment = &give_env;
}

static void give_reset(void)
{
    memset(&give, 0, sizeof(give));
    fw.edit_task = edit_task;
}

/* ---- Tests ---- */

/* app.tar.gz holding app/run.sh, which writes result.txt. */
static void make_app_archive(void)
{
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && mkdir -p app && "
             "printf '#!/bin/sh\\necho fetched-ok > result.txt\\n' > "
             "app/run.sh && chmod 755 app/run.sh && tar czf app.tar.gz app && "
             "rm -rf app",
             web.files);
    ck_assert_int_eq(system(cmd), 0);
}

static int cache_files(const char *dir)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c -x 'c[0-9a-f]*'", dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    int n = -1;
    if (fscanf(p, "%d", &n) != 1)
        n = -1;
    pclose(p);
    return n;
}

START_TEST(test_fetch_extract_and_cache)
{
    cluster_start(NULL, NULL);
    make_app_archive();
    give_reset();
    snprintf(give.uri, sizeof(give.uri), "http://127.0.0.1:%u/app.tar.gz",
             (unsigned)web.port);
    give.cache = true;
    hfw_launch(&fw, "first", "./app/run.sh");
    const struct hfw_update *u = wait_terminal("first");
    ck_assert_msg(u->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%d: %s",
                  u->state, u->message);
    char sb[PATH_MAX];
    sandbox_of("first", sb, sizeof(sb));
    char *text = sandbox_text(sb, "result.txt");
    ck_assert_str_eq(text, "fetched-ok\n");
    free(text);
    ck_assert(e2e_file_exists(sb, "app.tar.gz"));
    ck_assert_int_eq(web.requests, 1);

    /* The same URI again: from the cache, no second download. */
    hfw_launch(&fw, "second", "./app/run.sh");
    u = wait_terminal("second");
    ck_assert_msg(u->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%d: %s",
                  u->state, u->message);
    sandbox_of("second", sb, sizeof(sb));
    text = sandbox_text(sb, "result.txt");
    ck_assert_str_eq(text, "fetched-ok\n");
    free(text);
    text = sandbox_text(sb, "stderr");
    ck_assert_msg(strstr(text, "from cache") != NULL, "%s", text);
    free(text);
    ck_assert_int_eq(web.requests, 1);
    char cache[PATH_MAX];
    snprintf(cache, sizeof(cache), "%s/fetch", agent.work_dir);
    ck_assert_int_eq(cache_files(cache), 1);
    cluster_stop();
}
END_TEST

START_TEST(test_fetch_failure_fails_task)
{
    cluster_start(NULL, NULL);
    give_reset();
    snprintf(give.uri, sizeof(give.uri), "http://127.0.0.1:%u/missing.tar.gz",
             (unsigned)web.port);
    hfw_launch(&fw, "nofile", "touch ran");
    const struct hfw_update *u = wait_terminal("nofile");
    ck_assert_int_eq(u->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_int_eq(
        u->reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LAUNCH_FAILED);
    ck_assert_msg(strstr(u->message, give.uri) != NULL, "%s", u->message);
    ck_assert_msg(strstr(u->message, "received HTTP return code 404") != NULL,
                  "%s", u->message);
    char sb[PATH_MAX];
    sandbox_of("nofile", sb, sizeof(sb));
    ck_assert(!e2e_file_exists(sb, "ran"));
    cluster_stop();
}
END_TEST

START_TEST(test_docker_refused)
{
    cluster_start(NULL, NULL);
    give_reset();
    give.docker = true;
    hfw_launch(&fw, "docker", "touch ran");
    const struct hfw_update *u = wait_terminal("docker");
    ck_assert_int_eq(u->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_int_eq(
        u->reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LAUNCH_FAILED);
    ck_assert_msg(strstr(u->message,
                         "None of the enabled containerizers "
                         "(mesos) could create a container") != NULL,
                  "%s", u->message);
    cluster_stop();
}
END_TEST

START_TEST(test_task_environment)
{
    setenv("E2E_AGENT_ONLY", "leaks", 1);
    /* Not split inside the array: clang's -Wstring-concatenation refuses
     * that. */
    static const char envflag[] =
        "--executor_environment_variables={\"PATH\": \"/usr/bin:/bin\", "
        "\"E2E_FROM_FLAG\": \"flag-value\"}";
    const char *aargs[] = {envflag, NULL};
    cluster_start(aargs, NULL);
    give_reset();
    hfw_launch(&fw, "env", "env > env.txt");
    const struct hfw_update *u = wait_terminal("env");
    ck_assert_msg(u->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%d: %s",
                  u->state, u->message);
    char sb[PATH_MAX];
    sandbox_of("env", sb, sizeof(sb));
    char *env = sandbox_text(sb, "env.txt");
    char want[PATH_MAX + 256];
    const char *fixed[] = {
        "MESOS_TASK_ID=env\n",        "MESOS_EXECUTOR_ID=env\n",
        "MESOS_ALLOCATION_ROLE=*\n",  "MESOS_CHECKPOINT=0\n",
        "E2E_FROM_FLAG=flag-value\n", "E2E_FROM_COMMAND=cmd-value\n",
        "PATH=/usr/bin:/bin\n",       "LIBPROCESS_PORT=0\n"};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        ck_assert_msg(strstr(env, fixed[i]) != NULL, "no %s in:\n%s", fixed[i],
                      env);
    snprintf(want, sizeof(want), "MESOS_SANDBOX=%s\n", sb);
    ck_assert_msg(strstr(env, want) != NULL, "no %s", want);
    snprintf(want, sizeof(want), "MESOS_DIRECTORY=%s\n", sb);
    ck_assert_msg(strstr(env, want) != NULL, "no %s", want);
    snprintf(want, sizeof(want), "MESOS_FRAMEWORK_ID=%s\n", fw.id);
    ck_assert_msg(strstr(env, want) != NULL, "no %s", want);
    snprintf(want, sizeof(want), "MESOS_AGENT_ENDPOINT=127.0.0.1:%u\n",
             (unsigned)agent.port);
    ck_assert_msg(strstr(env, want) != NULL, "no %s", want);
    snprintf(want, sizeof(want), "MESOS_SLAVE_ID=%s\n", u->agent_id);
    ck_assert_msg(strstr(env, want) != NULL, "no %s", want);
    /* The agent's own environment does not pass. */
    ck_assert_msg(strstr(env, "E2E_AGENT_ONLY") == NULL, "%s", env);
    ck_assert_msg(strstr(env, "\nHOME=") == NULL && strncmp(env, "HOME=", 5),
                  "%s", env);
    free(env);
    cluster_stop();
}
END_TEST

START_TEST(test_switch_user)
{
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || pw == NULL) {
        fprintf(stderr, "test_switch_user skipped: needs root and 'nobody'\n");
        return;
    }
    uid_t nobody = pw->pw_uid;
    const char *aargs[] = {"--switch_user=true", NULL};
    cluster_start(aargs, "nobody");
    /* A file fetched for the task, from a path only root can read. */
    char src[PATH_MAX / 2];
    snprintf(src, sizeof(src), "%s/files/data.txt", master.dir);
    ck_assert_int_eq(fs_write_atomic(src, "data\n", 5), 0);
    give_reset();
    snprintf(give.uri, sizeof(give.uri), "file://%s", src);
    hfw_launch(&fw, "asnobody", "id -un > who.txt; touch mine");
    const struct hfw_update *u = wait_terminal("asnobody");
    ck_assert_msg(u->state == MESOS__V1__TASK_STATE__TASK_FINISHED, "%d: %s",
                  u->state, u->message);
    char sb[PATH_MAX];
    sandbox_of("asnobody", sb, sizeof(sb));
    char *who = sandbox_text(sb, "who.txt");
    ck_assert_str_eq(who, "nobody\n");
    free(who);
    const char *names[] = {".",        "who.txt", "mine",
                           "data.txt", "stdout",  "stderr"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof(p), "%s/%s", sb, names[i]);
        struct stat st;
        ck_assert_msg(stat(p, &st) == 0, "%s", p);
        ck_assert_msg(st.st_uid == nobody, "%s is owned by %u", p,
                      (unsigned)st.st_uid);
    }

    /* CommandInfo.user naming no user: TASK_FAILED, nothing run. */
    give_reset();
    give.cmd_user = "no-such-user-e2e";
    hfw_launch(&fw, "nouser", "touch ran");
    u = wait_terminal("nouser");
    ck_assert_int_eq(u->state, MESOS__V1__TASK_STATE__TASK_FAILED);
    ck_assert_int_eq(
        u->reason,
        MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_LAUNCH_FAILED);
    ck_assert_msg(strstr(u->message, "No such user 'no-such-user-e2e'") != NULL,
                  "%s", u->message);
    cluster_stop();
}
END_TEST

static Suite *fetcher_suite(void)
{
    Suite *s = suite_create("e2e_fetcher");
    struct {
        const char *name;
        const TTest *test;
    } tests[] = {
        {"fetch_extract_and_cache", test_fetch_extract_and_cache},
        {"fetch_failure", test_fetch_failure_fails_task},
        {"docker_refused", test_docker_refused},
        {"task_environment", test_task_environment},
        {"switch_user", test_switch_user},
    };
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, tests[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

E2E_CHECK_MAIN(fetcher_suite)
