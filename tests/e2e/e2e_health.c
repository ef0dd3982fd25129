/*
 * Health checks and checks end to end: the real master and agent, a
 * libofferd framework (harness_fw.h) launching shell tasks that carry a
 * HealthCheck or a CheckInfo with short intervals, and the things probed:
 * a tiny HTTP server forked by this test, a TCP listener in this process,
 * files in the task's sandbox. Each case asserts the updates the framework
 * gets (healthy, check_status, the kill after consecutive_failures) and
 * what the master's /state shows.
 */
#include <arpa/inet.h>
#include <check.h>
#include <event2/event.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "harness_fw.h"

static struct e2e_proc master;
static struct e2e_proc agent;
static struct event_base *base;
static struct hfw fw;

static const char *const AGENT_FLAGS[] = {
    "--resources=cpus:2;mem:512;disk:1024", NULL};

static void cluster_start(void)
{
    const char *margs[] = {"--allocation_interval=50ms", NULL};
    const char *const *lists[] = {AGENT_FLAGS};
    base = e2e_cluster_start(&master, margs, &agent, 1, lists);
    hfw_start(&fw, base, master.port, OFFERD_ENCODING_JSON);
}

static void cluster_stop(void)
{
    hfw_free(&fw);
    /* A clean exit: nothing of the monitors leaks (sanitizer builds). */
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGTERM, 10000), 0);
    e2e_cluster_stop(&master, &agent, 1, &base);
}

/* ---- Things to probe ---- */

/* A listening socket on 127.0.0.1 (its port in *port); -1 on failure. */
static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Fork a tiny HTTP server answering every request "200 OK"; returns its
 * pid with its port in *port. It dies with this process. */
static pid_t http_server_start(uint16_t *port)
{
    int fd = listen_loopback(port);
    ck_assert_int_ge(fd, 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            if (c < 0)
                continue;
            char buf[4096];
            ssize_t n = read(c, buf, sizeof(buf));
            if (n > 0) {
                static const char resp[] =
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                    "Connection: close\r\n\r\nok";
                ssize_t w = write(c, resp, sizeof(resp) - 1);
                (void)w;
            }
            close(c);
        }
    }
    close(fd);
    return pid;
}

static void http_server_stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* ---- Health checks and checks ---- */

static void health_defaults(Mesos__V1__HealthCheck *hc)
{
    hc->has_delay_seconds = 1;
    hc->delay_seconds = 0;
    hc->has_interval_seconds = 1;
    hc->interval_seconds = 0.2;
    hc->has_timeout_seconds = 1;
    hc->timeout_seconds = 5; /* no spurious failure on a busy machine */
    hc->has_grace_period_seconds = 1;
    hc->grace_period_seconds = 0;
    hc->has_consecutive_failures = 1;
    hc->consecutive_failures = 3;
}

/* ---- Waiting ---- */

static const int HEALTH_REASON =
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_HEALTH_CHECK_STATUS_UPDATED;
static const int CHECK_REASON =
    MESOS__V1__TASK_STATUS__REASON__REASON_TASK_CHECK_STATUS_UPDATED;

/* Updates of t1 with the health reason and healthy == want. */
static int health_updates(int want)
{
    const struct hfw_update *u[HFW_MAX_UPDATES];
    size_t n = hfw_distinct_updates_of(&fw, "t1", u, HFW_MAX_UPDATES);
    int k = 0;
    for (size_t i = 0; i < n && i < HFW_MAX_UPDATES; i++)
        if (u[i]->reason == HEALTH_REASON && u[i]->healthy == want &&
            u[i]->state == MESOS__V1__TASK_STATE__TASK_RUNNING)
            k++;
    return k;
}

static bool became_healthy(void *arg)
{
    (void)arg;
    return health_updates(1) >= 1;
}

static bool was_killed(void *arg)
{
    (void)arg;
    return hfw_state(&fw, "t1") == MESOS__V1__TASK_STATE__TASK_KILLED;
}

/* The latest update of t1. */
static const struct hfw_update *last_update(void)
{
    const struct hfw_update *u[HFW_MAX_UPDATES];
    size_t n = hfw_updates_of(&fw, "t1", u, HFW_MAX_UPDATES);
    ck_assert_uint_gt(n, 0);
    return u[n < HFW_MAX_UPDATES ? n - 1 : HFW_MAX_UPDATES - 1];
}

/* The latest entry of t1's statuses in the master's /state (new ref). */
static json_t *state_last_status(void)
{
    json_t *st = e2e_get_json(master.port, "/state");
    ck_assert_ptr_nonnull(st);
    json_t *fws = json_object_get(st, "frameworks");
    json_t *found = NULL;
    for (size_t i = 0; i < json_array_size(fws) && found == NULL; i++) {
        json_t *tasks = json_object_get(json_array_get(fws, i), "tasks");
        for (size_t k = 0; k < json_array_size(tasks); k++) {
            json_t *t = json_array_get(tasks, k);
            if (strcmp(json_string_value(json_object_get(t, "id")), "t1") != 0)
                continue;
            json_t *sts = json_object_get(t, "statuses");
            found = json_array_get(sts, json_array_size(sts) - 1);
            json_incref(found);
            break;
        }
    }
    json_decref(st);
    return found;
}

static bool state_shows_healthy(void *arg)
{
    (void)arg;
    json_t *s = state_last_status();
    bool ok = s != NULL && json_is_true(json_object_get(s, "healthy"));
    json_decref(s);
    return ok;
}

/* The whole course of a health check: healthy, then unhealthy once the
 * probed thing goes away, then killed after consecutive_failures (3)
 * failures, the TASK_KILLED saying healthy=false. */
static void assert_health_course(void (*break_it)(void *), void *arg)
{
    ck_assert_msg(e2e_loop_until(base, became_healthy, NULL, 20000),
                  "no healthy update");
    ck_assert_int_eq(health_updates(1), 1);
    ck_assert_msg(e2e_loop_until(base, state_shows_healthy, NULL, 10000),
                  "/state does not show healthy: true");
    break_it(arg);
    ck_assert_msg(e2e_loop_until(base, was_killed, NULL, 20000),
                  "the unhealthy task was not killed");
    ck_assert_int_eq(health_updates(0), 3);
    const struct hfw_update *u = last_update();
    ck_assert_int_eq(u->state, MESOS__V1__TASK_STATE__TASK_KILLED);
    ck_assert_int_eq(u->healthy, 0);
}

static void kill_server(void *arg)
{
    http_server_stop(*(pid_t *)arg);
}

START_TEST(test_http_health_check)
{
    uint16_t port = 0;
    pid_t srv = http_server_start(&port);
    cluster_start();
    Mesos__V1__HealthCheck__HTTPCheckInfo http =
        MESOS__V1__HEALTH_CHECK__HTTPCHECK_INFO__INIT;
    http.port = port;
    http.path = "/health";
    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    health_defaults(&hc);
    hc.has_type = 1;
    hc.type = MESOS__V1__HEALTH_CHECK__TYPE__HTTP;
    hc.http = &http;
    fw.health_check = &hc;
    hfw_launch(&fw, "t1", "sleep 1000");
    assert_health_course(kill_server, &srv);
    cluster_stop();
}
END_TEST

START_TEST(test_tcp_health_check)
{
    uint16_t port = 0;
    pid_t srv = http_server_start(&port); /* accepts, and closes */
    cluster_start();
    Mesos__V1__HealthCheck__TCPCheckInfo tcp =
        MESOS__V1__HEALTH_CHECK__TCPCHECK_INFO__INIT;
    tcp.port = port;
    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    health_defaults(&hc);
    hc.has_type = 1;
    hc.type = MESOS__V1__HEALTH_CHECK__TYPE__TCP;
    hc.tcp = &tcp;
    fw.health_check = &hc;
    hfw_launch(&fw, "t1", "sleep 1000");
    assert_health_course(kill_server, &srv);
    cluster_stop();
}
END_TEST

/* path/name of t1's sandbox (agent's /state). */
static void sandbox_path(const char *name, char *out, size_t outlen)
{
    char sb[4096];
    ck_assert(e2e_agent_sandbox(agent.port, "t1", sb, sizeof(sb)));
    snprintf(out, outlen, "%s/%s", sb, name);
}

static void remove_ok(void *arg)
{
    (void)arg;
    char p[4200];
    sandbox_path("ok", p, sizeof(p));
    ck_assert_int_eq(unlink(p), 0);
}

START_TEST(test_command_health_check)
{
    /* Healthy while the file "ok" the task makes exists in its sandbox;
     * the test removes it. */
    cluster_start();
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "test -f ok";
    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    health_defaults(&hc);
    hc.has_type = 1;
    hc.type = MESOS__V1__HEALTH_CHECK__TYPE__COMMAND;
    hc.command = &cmd;
    /* A probe may run before the task made the file: the grace period
     * ignores that failure (it ends with the first success). */
    hc.grace_period_seconds = 10;
    fw.health_check = &hc;
    hfw_launch(&fw, "t1", "touch ok; sleep 1000");
    assert_health_course(remove_ok, NULL);
    cluster_stop();
}
END_TEST

static bool cond_connected(void *arg)
{
    return e2e_metric(master.port, "master/slaves_connected") ==
           *(const int *)arg;
}

/* A task found healthy before an agent crash is still watched by the
 * restarted agent: no second healthy update, and the kill after three
 * failures once the server is gone. */
START_TEST(test_health_check_resumes_after_agent_restart)
{
    uint16_t port = 0;
    pid_t srv = http_server_start(&port);
    cluster_start();
    Mesos__V1__HealthCheck__HTTPCheckInfo http =
        MESOS__V1__HEALTH_CHECK__HTTPCHECK_INFO__INIT;
    http.port = port;
    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    health_defaults(&hc);
    hc.has_type = 1;
    hc.type = MESOS__V1__HEALTH_CHECK__TYPE__HTTP;
    hc.http = &http;
    fw.health_check = &hc;
    hfw_launch(&fw, "t1", "sleep 1000");
    ck_assert_msg(e2e_loop_until(base, became_healthy, NULL, 20000),
                  "no healthy update");
    ck_assert_int_eq(e2e_proc_stop(&agent, SIGKILL, 5000), -1);
    int zero = 0, one = 1;
    ck_assert(e2e_loop_until(base, cond_connected, &zero, 10000));
    ck_assert_int_eq(e2e_restart_agent(&agent, master.port, AGENT_FLAGS), 0);
    ck_assert(e2e_loop_until(base, cond_connected, &one, 20000));
    /* Probes go on and pass: a window proving no new healthy update. */
    e2e_loop_for(base, 1000);
    ck_assert_int_eq(health_updates(1), 1);
    ck_assert_int_eq(hfw_state(&fw, "t1"), MESOS__V1__TASK_STATE__TASK_RUNNING);
    http_server_stop(srv);
    ck_assert_msg(e2e_loop_until(base, was_killed, NULL, 20000),
                  "the unhealthy task was not killed after the restart");
    ck_assert_int_eq(health_updates(0), 3);
    ck_assert_int_eq(last_update()->healthy, 0);
    cluster_stop();
}
END_TEST

static bool check_reported(void *arg)
{
    int want = *(int *)arg;
    const struct hfw_update *u[HFW_MAX_UPDATES];
    size_t n = hfw_distinct_updates_of(&fw, "t1", u, HFW_MAX_UPDATES);
    for (size_t i = 0; i < n && i < HFW_MAX_UPDATES; i++)
        if (u[i]->reason == CHECK_REASON && u[i]->check_value == want)
            return true;
    return false;
}

static bool state_shows_exit_code(void *arg)
{
    int want = *(int *)arg;
    json_t *s = state_last_status();
    json_t *cs = s != NULL ? json_object_get(s, "check_status") : NULL;
    bool ok =
        cs != NULL &&
        json_integer_value(json_object_get(json_object_get(cs, "command"),
                                           "exit_code")) == want &&
        strcmp(json_string_value(json_object_get(cs, "type")), "COMMAND") == 0;
    json_decref(s);
    return ok;
}

START_TEST(test_command_check_status)
{
    /* The check's exit code follows the file "code" in the sandbox. */
    cluster_start();
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.value = "exit $(cat code 2>/dev/null || echo 0)";
    Mesos__V1__CheckInfo__Command ccmd = MESOS__V1__CHECK_INFO__COMMAND__INIT;
    ccmd.command = &cmd;
    Mesos__V1__CheckInfo ci = MESOS__V1__CHECK_INFO__INIT;
    ci.has_type = 1;
    ci.type = MESOS__V1__CHECK_INFO__TYPE__COMMAND;
    ci.command = &ccmd;
    ci.has_delay_seconds = 1;
    ci.delay_seconds = 0;
    ci.has_interval_seconds = 1;
    ci.interval_seconds = 0.2;
    fw.check = &ci;
    hfw_launch(&fw, "t1", "echo 3 > code; sleep 1000");
    int three = 3, seven = 7;
    ck_assert_msg(e2e_loop_until(base, check_reported, &three, 20000),
                  "no check_status with exit code 3");
    char p[4200];
    sandbox_path("code", p, sizeof(p));
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("7\n", f);
    fclose(f);
    ck_assert_msg(e2e_loop_until(base, check_reported, &seven, 20000),
                  "no check_status with exit code 7");
    ck_assert_msg(e2e_loop_until(base, state_shows_exit_code, &seven, 10000),
                  "/state does not show the check_status");
    /* Every update of the task carries a check_status (the first ones an
     * empty one); a check never kills. */
    const struct hfw_update *u[HFW_MAX_UPDATES];
    size_t n = hfw_updates_of(&fw, "t1", u, HFW_MAX_UPDATES);
    for (size_t i = 0; i < n && i < HFW_MAX_UPDATES; i++)
        ck_assert_msg(u[i]->has_check_status, "update %zu has none", i);
    ck_assert_int_eq(hfw_state(&fw, "t1"), MESOS__V1__TASK_STATE__TASK_RUNNING);
    hfw_kill(&fw, "t1");
    ck_assert(e2e_loop_until(base, was_killed, NULL, 20000));
    /* The terminal update: an empty check_status, no healthy. */
    const struct hfw_update *last = last_update();
    ck_assert(last->has_check_status);
    ck_assert_int_eq(last->check_value, -1);
    ck_assert_int_eq(last->healthy, -1);
    cluster_stop();
}
END_TEST

static bool has_state(void *arg)
{
    (void)arg;
    return hfw_state(&fw, "t1") >= 0;
}

START_TEST(test_invalid_health_check_refused)
{
    cluster_start();
    Mesos__V1__HealthCheck hc = MESOS__V1__HEALTH_CHECK__INIT;
    hc.has_type = 1;
    hc.type = MESOS__V1__HEALTH_CHECK__TYPE__HTTP;
    fw.health_check = &hc;
    hfw_launch(&fw, "t1", "sleep 1000");
    ck_assert(e2e_loop_until(base, has_state, NULL, 10000));
    ck_assert_int_eq(hfw_state(&fw, "t1"), MESOS__V1__TASK_STATE__TASK_ERROR);
    ck_assert_str_eq(last_update()->message,
                     "Task uses invalid health check: Expecting 'http' to be "
                     "set for HTTP health check");
    cluster_stop();
}
END_TEST

static Suite *health_suite(void)
{
    Suite *s = suite_create("e2e_health");
    TCase *tc = tcase_create("health");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_http_health_check);
    tcase_add_test(tc, test_tcp_health_check);
    tcase_add_test(tc, test_command_health_check);
    tcase_add_test(tc, test_command_check_status);
    tcase_add_test(tc, test_invalid_health_check_refused);
    tcase_add_test(tc, test_health_check_resumes_after_agent_restart);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(health_suite)
