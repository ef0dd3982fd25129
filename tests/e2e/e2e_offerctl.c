/*
 * End-to-end tests of offerctl: a real master and agent (harness.h), and
 * each command run as the real binary, its stdout, stderr and exit status
 * captured apart, with the outcome checked through offerctl itself (e.g.
 * `reserve`, then `agents --json` shows the reservation) and the master's
 * endpoints. One test per command, plus the exit statuses of refusals,
 * usage errors and an unreachable master.
 */
#include "harness.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef OFFERCTL_BIN
#define OFFERCTL_BIN "offerctl"
#endif
#ifndef OFFERD_EXECUTE_BIN
#define OFFERD_EXECUTE_BIN "offerd-execute"
#endif

/* Bound on one offerctl run. */
#define RUN_MS 20000

static struct e2e_proc master, agent, fw;
static char master_arg[64]; /* --master=127.0.0.1:<port> */
static char agent_id[128];

/* What one run printed, and how it ended. */
struct result {
    int code; /* exit status, -1 if killed or timed out */
    char out[1 << 16];
    char err[4096];
};

static struct result R;

/* Run offerctl with --master and args (NULL-terminated) and fill R.
 * harness.h's e2e_run captures stdout and stderr together; offerctl's
 * contract keeps them apart (tables on stdout, one-line errors on stderr),
 * so this reads two pipes. */
static int run_args(const char *const *args, bool with_master)
{
    int po[2], pe[2];
    ck_assert_int_eq(pipe2(po, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(pe, O_CLOEXEC), 0);
    char *argv[40];
    int argc = 0;
    argv[argc++] = (char *)OFFERCTL_BIN;
    if (with_master)
        argv[argc++] = master_arg;
    for (; *args != NULL && argc < 39; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        if (with_master)
            unsetenv("OFFERD_MASTER");
        execv(OFFERCTL_BIN, argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t have[2] = {0, 0};
    char *bufs[2] = {R.out, R.err};
    size_t caps[2] = {sizeof(R.out) - 1, sizeof(R.err) - 1};
    struct pollfd pfd[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    int64_t deadline = e2e_now_ms() + RUN_MS;
    while (open_fds > 0) {
        int left = (int)(deadline - e2e_now_ms());
        if (left <= 0 || poll(pfd, 2, left) <= 0)
            break;
        for (int i = 0; i < 2; i++) {
            if (pfd[i].fd < 0 || pfd[i].revents == 0)
                continue;
            char buf[4096];
            ssize_t n = read(pfd[i].fd, buf, sizeof(buf));
            if (n <= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                open_fds--;
                continue;
            }
            size_t take = (size_t)n;
            if (have[i] + take > caps[i])
                take = caps[i] - have[i];
            memcpy(bufs[i] + have[i], buf, take);
            have[i] += take;
        }
    }
    for (int i = 0; i < 2; i++)
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
    R.out[have[0]] = '\0';
    R.err[have[1]] = '\0';
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (e2e_now_ms() >= deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            R.code = -1;
            return -1;
        }
        e2e_sleep_ms(10);
    }
    R.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return R.code;
}

#define OCTL(...)      run_args((const char *const[]){__VA_ARGS__, NULL}, true)
#define OCTL_BARE(...) run_args((const char *const[]){__VA_ARGS__, NULL}, false)

/* Run a command that must succeed. */
#define OK(...)                                                                \
    do {                                                                       \
        int rc_ = OCTL(__VA_ARGS__);                                           \
        ck_assert_msg(rc_ == 0, "exit %d: %s%s", rc_, R.out, R.err);           \
    } while (0)

/* Run with --json and parse stdout (caller json_decref's). */
#define JSON(...) json_of(OCTL(__VA_ARGS__, "--json"))

static json_t *json_of(int rc)
{
    ck_assert_msg(rc == 0, "exit %d: %s", rc, R.err);
    json_error_t je;
    json_t *j = json_loads(R.out, 0, &je);
    ck_assert_msg(j != NULL, "not JSON (%s): %s", je.text, R.out);
    return j;
}

/* The value at a dotted path under j ("get_agents.agents.0.agent_info"),
 * a number indexing an array; borrowed, NULL when absent. */
static json_t *at(const json_t *j, const char *path)
{
    char key[128];
    while (j != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        j = json_is_array(j) ? json_array_get(j, strtoul(key, NULL, 10))
                             : json_object_get(j, key);
        path += n + (path[n] == '.');
    }
    return (json_t *)j;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* A refusal: exit status code and exactly one line on stderr holding
 * `reason` ("": any), nothing on stdout. */
static void assert_refused(int code, const char *reason)
{
    ck_assert_msg(R.code == code, "exit %d, not %d: %s%s", R.code, code, R.out,
                  R.err);
    ck_assert_msg(strstr(R.err, reason) != NULL, "stderr '%s' lacks '%s'",
                  R.err, reason);
    ck_assert_int_eq(lines(R.err), 1);
    ck_assert_str_eq(R.out, "");
}

static void cluster_up(void)
{
    memset(&master, 0, sizeof(master));
    memset(&agent, 0, sizeof(agent));
    memset(&fw, 0, sizeof(fw));
    ck_assert_int_eq(e2e_start_master(&master, NULL), 0);
    const char *aargs[] = {"--hostname=node1",
                           "--resources=cpus:4;mem:4096;disk:10000", NULL};
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, aargs), 0);
    ck_assert_int_eq(e2e_wait_agents(&master, 1, 15000), 0);
    snprintf(master_arg, sizeof(master_arg), "--master=127.0.0.1:%u",
             (unsigned)master.port);
    json_t *j = JSON("agents");
    const char *id =
        json_string_value(at(j, "get_agents.agents.0.agent_info.id.value"));
    ck_assert_ptr_nonnull(id);
    snprintf(agent_id, sizeof(agent_id), "%s", id);
    json_decref(j);
}

static void cluster_down(void)
{
    e2e_proc_cleanup(&fw);
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* Start offerd-execute running command as one task; wait until offerctl
 * shows it TASK_RUNNING. */
static void start_task(const char *name, const char *command)
{
    char m[64], n[80], c[512];
    snprintf(m, sizeof(m), "--master=127.0.0.1:%u", (unsigned)master.port);
    snprintf(n, sizeof(n), "--name=%s", name);
    snprintf(c, sizeof(c), "--command=%s", command);
    const char *args[] = {m, n, c, "--resources=cpus:0.1;mem:32", NULL};
    ck_assert_int_eq(e2e_spawn(&fw, OFFERD_EXECUTE_BIN, args), 0);
    int64_t deadline = e2e_now_ms() + 20000;
    while (e2e_now_ms() < deadline) {
        OCTL("tasks");
        if (R.code == 0 && strstr(R.out, "TASK_RUNNING") != NULL)
            return;
        e2e_sleep_ms(E2E_POLL_MS * 5);
    }
    ck_abort_msg("task %s never ran: %s", name, R.out);
}

/* The first framework's id in `frameworks --json`. */
static void first_framework(char *out, size_t outlen, const char *list)
{
    char path[128];
    snprintf(path, sizeof(path), "get_frameworks.%s.0.framework_info.id.value",
             list);
    json_t *j = JSON("frameworks");
    const char *id = json_string_value(at(j, path));
    snprintf(out, outlen, "%s", id ? id : "");
    json_decref(j);
}

/* The total resources of the agent, from `agents --json`, as text. */
static char *agent_total_json(void)
{
    json_t *j = JSON("agents");
    json_t *total = at(j, "get_agents.agents.0.total_resources");
    char *s = json_dumps(total, JSON_COMPACT);
    json_decref(j);
    return s;
}

/* ---- One test per command ---- */

START_TEST(test_agents)
{
    OK("agents");
    ck_assert_ptr_nonnull(strstr(R.out, "HOSTNAME"));
    ck_assert_ptr_nonnull(strstr(R.out, agent_id));
    ck_assert_ptr_nonnull(strstr(R.out, "node1"));
    ck_assert_ptr_nonnull(strstr(R.out, "active"));
    ck_assert_ptr_nonnull(strstr(R.out, "0/4")); /* cpus allocated/total */
    ck_assert_int_eq(lines(R.out), 2);
    ck_assert_str_eq(R.err, "");
}
END_TEST

START_TEST(test_frameworks_and_teardown)
{
    start_task("web", "sleep 600");
    OK("frameworks");
    ck_assert_ptr_nonnull(strstr(R.out, "offerd-execute"));
    ck_assert_ptr_nonnull(strstr(R.out, "active"));
    char id[128];
    first_framework(id, sizeof(id), "frameworks");
    ck_assert_str_ne(id, "");
    OK("teardown", id);
    ck_assert_ptr_nonnull(strstr(R.out, "torn down"));
    /* Gone from the frameworks, listed as completed with --all. */
    OK("frameworks");
    ck_assert_ptr_null(strstr(R.out, id));
    OK("frameworks", "--all");
    ck_assert_ptr_nonnull(strstr(R.out, "completed"));
    /* Again: the master refuses with its reason. */
    OCTL("teardown", id);
    assert_refused(1, "No framework found with specified ID");
}
END_TEST

START_TEST(test_tasks)
{
    start_task("web", "sleep 600");
    OK("tasks");
    ck_assert_ptr_nonnull(strstr(R.out, "web-0"));
    ck_assert_ptr_nonnull(strstr(R.out, agent_id));
    ck_assert_ptr_nonnull(strstr(R.out, "32MB"));
    json_t *j = JSON("tasks");
    ck_assert_uint_eq(json_array_size(at(j, "get_tasks.tasks")), 1);
    json_decref(j);
}
END_TEST

START_TEST(test_roles_and_weights)
{
    OK("weights", "set", "web=2", "batch=0.5");
    OK("weights");
    ck_assert_ptr_nonnull(strstr(R.out, "web    2\n"));
    ck_assert_ptr_nonnull(strstr(R.out, "batch  0.5\n"));
    OK("roles");
    ck_assert_ptr_nonnull(strstr(R.out, "web"));
    json_t *w = e2e_get_json(master.port, "/weights");
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(json_array_size(w), 2);
    json_decref(w);
    /* A weight the CLI refuses never reaches the master. */
    OCTL("weights", "set", "web=0");
    assert_refused(2, "a positive number");
}
END_TEST

START_TEST(test_quota)
{
    OK("quota", "set", "web", "--guarantee=cpus:1;mem:128", "--limit=cpus:2");
    OK("quota");
    ck_assert_ptr_nonnull(strstr(R.out, "web   cpus:1;mem:128  cpus:2"));
    /* Beyond the cluster's capacity: the master's refusal, exit 1. */
    OCTL("quota", "set", "big", "--guarantee=cpus:100");
    assert_refused(1, "");
    OK("quota", "remove", "web");
    OK("quota");
    ck_assert_int_eq(lines(R.out), 1); /* the header only */
    OCTL("quota", "remove", "web");
    assert_refused(1, "no quota");
}
END_TEST

START_TEST(test_reserve_and_unreserve)
{
    OK("reserve", agent_id, "cpus:1;mem:512", "--role=db", "--principal=ops");
    char *total = agent_total_json();
    ck_assert_msg(strstr(total, "\"role\":\"db\"") != NULL &&
                      strstr(total, "\"DYNAMIC\"") != NULL,
                  "no reservation in %s", total);
    free(total);
    OK("agents");
    ck_assert_ptr_nonnull(strstr(R.out, "  db\n"));
    /* More than the agent has: the master's 409 reason, exit 1. */
    OCTL("reserve", agent_id, "cpus:64", "--role=db");
    assert_refused(1, "does not have cpus:64");
    OK("unreserve", agent_id, "cpus(db):1;mem(db):512", "--principal=ops");
    total = agent_total_json();
    ck_assert_ptr_null(strstr(total, "\"role\":\"db\""));
    free(total);
}
END_TEST

START_TEST(test_volumes)
{
    OK("reserve", agent_id, "disk:100", "--role=db");
    OK("volumes", "create", agent_id, "disk(db):100", "--id=pgdata",
       "--container_path=data");
    OK("volumes");
    ck_assert_ptr_nonnull(strstr(R.out, "pgdata"));
    ck_assert_ptr_nonnull(strstr(R.out, "100MB"));
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/volumes/roles/db", agent.work_dir);
    /* The agent makes the directory once it has checkpointed. */
    int64_t deadline = e2e_now_ms() + 10000;
    while (!e2e_file_exists(dir, "pgdata") && e2e_now_ms() < deadline)
        e2e_sleep_ms(E2E_POLL_MS);
    ck_assert(e2e_file_exists(dir, "pgdata"));
    OK("volumes", "destroy", agent_id, "pgdata");
    OK("volumes");
    ck_assert_int_eq(lines(R.out), 1);
    OCTL("volumes", "destroy", agent_id, "pgdata");
    assert_refused(1, "has no volume 'pgdata'");
}
END_TEST

START_TEST(test_volume_resize)
{
    OK("reserve", agent_id, "disk:150", "--role=db");
    OK("volumes", "create", agent_id, "disk(db):100", "--id=pg",
       "--container_path=data");
    OK("volumes", "grow", agent_id, "pg", "50");
    OK("volumes");
    ck_assert_msg(strstr(R.out, "  150MB ") != NULL, "%s", R.out);
    OK("volumes", "shrink", agent_id, "pg", "30");
    OK("volumes");
    ck_assert_msg(strstr(R.out, "  120MB ") != NULL, "%s", R.out);
    /* More than is reserved beside it: the master refuses, exit 1. */
    OCTL("volumes", "grow", agent_id, "pg", "1000");
    assert_refused(1, "");
    OK("volumes");
    ck_assert_ptr_nonnull(strstr(R.out, "  120MB "));
}
END_TEST

START_TEST(test_maintenance)
{
    char sched[512];
    snprintf(sched, sizeof(sched),
             "{\"windows\":[{\"machine_ids\":[{\"hostname\":\"node1\","
             "\"ip\":\"127.0.0.1\"}],\"unavailability\":{\"start\":{"
             "\"nanoseconds\":1796053022000000000},\"duration\":{"
             "\"nanoseconds\":7200000000000}}}]}");
    OK("maintenance", "schedule", sched);
    OK("maintenance", "schedule");
    ck_assert_ptr_nonnull(strstr(R.out, "node1/127.0.0.1"));
    ck_assert_ptr_nonnull(strstr(R.out, "2hrs"));
    OK("maintenance", "status");
    ck_assert_ptr_nonnull(strstr(R.out, "DRAINING"));
    OK("maintenance", "down", "node1"); /* IP completed from the schedule */
    OK("maintenance", "status");
    ck_assert_ptr_nonnull(strstr(R.out, "node1/127.0.0.1  DOWN"));
    ck_assert_int_eq(e2e_wait_agents(&master, 0, 10000), 0);
    OK("maintenance", "up", "node1/127.0.0.1");
    OK("maintenance", "status");
    ck_assert_int_eq(lines(R.out), 1);
    /* Up again: a machine that is not down is refused by the master. */
    OCTL("maintenance", "up", "node1/127.0.0.1");
    assert_refused(1, "");
}
END_TEST

/* The agent's state as `agents` prints it, polled until it is `want`. */
static bool agent_state_is(void *arg)
{
    OCTL("agents");
    return R.code == 0 && strstr(R.out, (const char *)arg) != NULL;
}

START_TEST(test_drain_and_reactivate)
{
    start_task("web", "sleep 600");
    OK("drain", agent_id, "--max_grace_period=1secs");
    ck_assert(e2e_poll_until(agent_state_is, " drained ", 20000));
    OCTL("tasks");
    ck_assert_ptr_null(strstr(R.out, "TASK_RUNNING"));
    OK("reactivate", agent_id);
    ck_assert(e2e_poll_until(agent_state_is, " active ", 10000));
    OCTL("drain", "no-such-agent");
    assert_refused(1, "");
}
END_TEST

START_TEST(test_deactivate)
{
    OK("deactivate", agent_id);
    OK("agents");
    ck_assert_ptr_nonnull(strstr(R.out, "deactivated"));
    OK("reactivate", agent_id);
    OK("agents");
    ck_assert_ptr_nonnull(strstr(R.out, " active "));
}
END_TEST

START_TEST(test_logs)
{
    start_task("talker", "echo line-from-the-task; echo to-stderr >&2; "
                         "sleep 600");
    int64_t deadline = e2e_now_ms() + 10000;
    while (e2e_now_ms() < deadline) {
        OCTL("logs", "talker-0");
        if (R.code == 0 && strstr(R.out, "line-from-the-task\n") != NULL)
            break;
        e2e_sleep_ms(E2E_POLL_MS * 5);
    }
    ck_assert_msg(strstr(R.out, "line-from-the-task\n") != NULL,
                  "exit %d: %s%s", R.code, R.out, R.err);
    OK("logs", "talker-0", "--file=stderr");
    ck_assert_ptr_nonnull(strstr(R.out, "to-stderr\n"));
    OCTL("logs", "no-such-task");
    assert_refused(1, "no task 'no-such-task'");
    OCTL("logs", "talker-0", "--file=nope");
    assert_refused(1, "");
}
END_TEST

START_TEST(test_logs_follow)
{
    start_task("slow", "echo first; sleep 1; echo second; sleep 600");
    struct e2e_proc tail;
    memset(&tail, 0, sizeof(tail));
    const char *args[] = {master_arg,        "logs", "slow-0", "--follow",
                          "--interval=50ms", NULL};
    ck_assert_int_eq(e2e_spawn(&tail, OFFERCTL_BIN, args), 0);
    /* Both lines arrive through one follow, the second after it started. */
    ck_assert(e2e_wait_log(&tail, "second\n", 1, 15000));
    ck_assert_int_eq(e2e_log_count(&tail, "first\n"), 1);
    ck_assert_int_eq(e2e_proc_stop(&tail, SIGINT, 5000), 0);
    e2e_proc_cleanup(&tail);
}
END_TEST

START_TEST(test_state)
{
    OK("state");
    ck_assert_ptr_nonnull(strstr(R.out, "agents      1 (1 active"));
    json_t *j = JSON("state");
    ck_assert_ptr_nonnull(json_object_get(j, "get_state"));
    json_decref(j);
}
END_TEST

START_TEST(test_health_version_flags_metrics)
{
    OK("health");
    ck_assert_str_eq(R.out, "healthy\n");
    OK("version");
    ck_assert_ptr_nonnull(strstr(R.out, "master   " OFFERD_VERSION));
    OK("flags");
    ck_assert_ptr_nonnull(strstr(R.out, "work_dir"));
    OK("metrics", "master/slaves_active");
    ck_assert_ptr_nonnull(strstr(R.out, "master/slaves_active  1\n"));
}
END_TEST

/* ---- Exit statuses ---- */

START_TEST(test_unreachable_master)
{
    e2e_proc_stop(&master, SIGTERM, 5000);
    OCTL("agents");
    assert_refused(3, "cannot reach the master");
}
END_TEST

START_TEST(test_usage_errors)
{
    OCTL("bogus");
    assert_refused(2, "unknown command 'bogus'");
    OCTL("reserve", agent_id, "cpus:1");
    assert_refused(2, "no role to reserve to");
    /* Nothing answers at that ZooKeeper address: no leader in time. */
    OCTL_BARE("agents", "--timeout=1secs", "--master=zk://127.0.0.1:1/mesos");
    assert_refused(3, "no leading master found in ZooKeeper within 1 s");
    OCTL_BARE("agents", "--master=file:///nonexistent/offerd-master");
    assert_refused(2, "--master: ");
    /* OFFERD_MASTER is read when --master is not given. */
    setenv("OFFERD_MASTER", master_arg + strlen("--master="), 1);
    int rc = OCTL_BARE("health");
    unsetenv("OFFERD_MASTER");
    ck_assert_msg(rc == 0, "exit %d: %s", rc, R.err);
    ck_assert_str_eq(R.out, "healthy\n");
    OK("reserve", "--help");
    ck_assert_ptr_nonnull(strstr(R.out, "Usage: offerctl reserve"));
}
END_TEST

static Suite *offerctl_e2e_suite(void)
{
    Suite *s = suite_create("e2e_offerctl");
    TCase *tc = tcase_create("commands");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, cluster_up, cluster_down);
    tcase_add_test(tc, test_agents);
    tcase_add_test(tc, test_frameworks_and_teardown);
    tcase_add_test(tc, test_tasks);
    tcase_add_test(tc, test_roles_and_weights);
    tcase_add_test(tc, test_quota);
    tcase_add_test(tc, test_reserve_and_unreserve);
    tcase_add_test(tc, test_volumes);
    tcase_add_test(tc, test_volume_resize);
    tcase_add_test(tc, test_maintenance);
    tcase_add_test(tc, test_drain_and_reactivate);
    tcase_add_test(tc, test_deactivate);
    tcase_add_test(tc, test_logs);
    tcase_add_test(tc, test_logs_follow);
    tcase_add_test(tc, test_state);
    tcase_add_test(tc, test_health_version_flags_metrics);
    tcase_add_test(tc, test_unreachable_master);
    tcase_add_test(tc, test_usage_errors);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(offerctl_e2e_suite)
