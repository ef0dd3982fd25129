/*
 * Tests of the per-task supervisor (agent/supervisor.h): report lines, and
 * real launches in a temporary sandbox (the test process stands in for the
 * agent and reaps the supervisor itself).
 */
#include "agent/supervisor.h"
#include "agent/fetcher.h"
#include "agent/flags_launch.h"
#include "agent/run_as.h"
#include "check_main.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char sandbox[PATH_MAX];

static void setup(void)
{
    snprintf(sandbox, sizeof(sandbox), "/tmp/offerd-sup-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sandbox));
}

static void teardown(void)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sandbox);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_parse_report)
{
    struct agent_sup_report r;
    ck_assert_int_eq(agent_supervisor_parse_report("R 1234", &r), 0);
    ck_assert(r.running);
    ck_assert_int_eq(r.pid, 1234);
    ck_assert_int_eq(agent_supervisor_parse_report("E 2", &r), 0);
    ck_assert(!r.running);
    ck_assert_int_eq(r.exec_errno, 2);
    static const char *const bad[] = {"",    "R",     "R 0",  "R -5",
                                      "X 1", "R 12x", "E -1", "R 99999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(agent_supervisor_parse_report(bad[i], &r) == -1, "'%s'",
                      bad[i]);
}
END_TEST

/* Read the supervisor's report lines until EOF (blocking, bounded). */
static void read_report(int fd, char *out, size_t outlen)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    size_t have = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t n = read(fd, out + have, outlen - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    out[have] = '\0';
}

/* Launch l, read its report until EOF, reap the supervisor; its exit
 * code. */
static int run_launch(const struct agent_launch *lp, char *report, size_t rlen)
{
    struct agent_launch l = *lp;
    pid_t sup;
    int fd;
    char err[256];
    ck_assert_msg(agent_supervisor_start(&l, &sup, &fd, err, sizeof(err)) == 0,
                  "%s", err);
    read_report(fd, report, rlen);
    close(fd);
    int st;
    ck_assert_int_eq(waitpid(sup, &st, 0), sup);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

static int run(const char *file, char *const *argv, char *report, size_t rlen)
{
    char *envp[] = {"FOO=bar", "PATH=/usr/bin:/bin", NULL};
    struct agent_launch l = {
        .sandbox = sandbox, .file = file, .argv = argv, .envp = envp};
    return run_launch(&l, report, rlen);
}

START_TEST(test_exit_status_recorded)
{
    char *argv[] = {"sh", "-c", "echo $FOO; echo e >&2; exit 3", NULL};
    char report[256];
    ck_assert_int_eq(run("/bin/sh", argv, report, sizeof(report)), 0);
    ck_assert_int_eq(report[0], 'R');
    int ws = 0;
    ck_assert_int_eq(agent_supervisor_read_exit(sandbox, &ws), 1);
    ck_assert(WIFEXITED(ws));
    ck_assert_int_eq(WEXITSTATUS(ws), 3);
    pid_t sp = 0, tp = 0;
    ck_assert_int_eq(
        agent_supervisor_read_pid(sandbox, AGENT_SUP_PID_FILE, &sp), 1);
    ck_assert_int_eq(
        agent_supervisor_read_pid(sandbox, AGENT_TASK_PID_FILE, &tp), 1);
    ck_assert_int_ne(sp, tp);
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/stdout", sandbox);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    char line[64] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    fclose(f);
    ck_assert_str_eq(line, "bar\n");
}
END_TEST

START_TEST(test_exec_failure_reported)
{
    char *argv[] = {"nope", NULL};
    char report[256];
    run("/nonexistent/nope", argv, report, sizeof(report));
    struct agent_sup_report r;
    char *nl = strchr(report, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = '\0';
    ck_assert_int_eq(agent_supervisor_parse_report(report, &r), 0);
    ck_assert(!r.running);
    ck_assert_int_eq(r.exec_errno, ENOENT);
    pid_t tp;
    ck_assert_int_eq(
        agent_supervisor_read_pid(sandbox, AGENT_TASK_PID_FILE, &tp), 0);
}
END_TEST

START_TEST(test_task_in_own_session_and_group_cleaned)
{
    /* The task leaves a background child; the supervisor kills the group
     * when the task exits. */
    char *argv[] = {
        "sh", "-c",
        "sleep 60 & echo $! > bg.pid; cut -d' ' -f6 /proc/$$/stat > sid; "
        "exit 0",
        NULL};
    char report[256];
    ck_assert_int_eq(run("/bin/sh", argv, report, sizeof(report)), 0);
    pid_t tp = 0;
    ck_assert_int_eq(
        agent_supervisor_read_pid(sandbox, AGENT_TASK_PID_FILE, &tp), 1);
    pid_t bg = 0;
    ck_assert_int_eq(agent_supervisor_read_pid(sandbox, "bg.pid", &bg), 1);
    /* Killed (maybe still a zombie of init for a moment). */
    for (int i = 0; i < 200 && kill(bg, 0) == 0; i++) {
        char stat[64], buf[256];
        snprintf(stat, sizeof(stat), "/proc/%d/stat", (int)bg);
        FILE *f = fopen(stat, "r");
        if (f == NULL)
            break;
        int zombie =
            fgets(buf, sizeof(buf), f) != NULL && strstr(buf, ") Z") != NULL;
        fclose(f);
        if (zombie)
            break;
        usleep(10000);
    }
    char stat[64], buf[256] = "";
    snprintf(stat, sizeof(stat), "/proc/%d/stat", (int)bg);
    FILE *f = fopen(stat, "r");
    if (f != NULL) {
        ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
        fclose(f);
        ck_assert_msg(strstr(buf, ") Z") != NULL, "background child alive");
    }
    /* The task led its own session. */
    pid_t sid = 0;
    if (agent_supervisor_read_pid(sandbox, "sid", &sid) == 1)
        ck_assert_int_eq(sid, tp);
}
END_TEST

START_TEST(test_reads_reject_garbage)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/%s", sandbox, AGENT_EXIT_STATUS_FILE);
    FILE *f = fopen(p, "w");
    fputs("12abc\n", f);
    fclose(f);
    int ws;
    ck_assert_int_eq(agent_supervisor_read_exit(sandbox, &ws), -1);
    snprintf(p, sizeof(p), "%s/%s", sandbox, AGENT_TASK_PID_FILE);
    f = fopen(p, "w");
    fputs("0\n", f);
    fclose(f);
    pid_t pid;
    ck_assert_int_eq(
        agent_supervisor_read_pid(sandbox, AGENT_TASK_PID_FILE, &pid), -1);
}
END_TEST

/* A plan fetching one local file into the sandbox. */
static struct agent_fetch_plan *plan_of(const char *uri)
{
    static struct agent_launch_flags lf;
    lf.fetcher_cache_size = 1 << 20;
    lf.fetcher_stall_timeout_ns = 1000000000;
    Mesos__V1__CommandInfo__URI u = MESOS__V1__COMMAND_INFO__URI__INIT;
    u.value = (char *)uri;
    Mesos__V1__CommandInfo__URI *uv[] = {&u};
    Mesos__V1__CommandInfo cmd = MESOS__V1__COMMAND_INFO__INIT;
    cmd.n_uris = 1;
    cmd.uris = uv;
    struct agent_fetch_plan *p = NULL;
    char err[256];
    ck_assert_int_eq(agent_fetch_plan_build(&cmd, &lf, "/tmp/offerd-sup-cache",
                                            NULL, &p, err, sizeof(err)),
                     0);
    return p;
}

START_TEST(test_fetch_failure_recorded)
{
    char *argv[] = {"sh", "-c", "touch ran", NULL};
    char *envp[] = {NULL};
    struct agent_fetch_plan *plan = plan_of("/nonexistent/offerd/app.tgz");
    struct agent_launch l = {.sandbox = sandbox,
                             .file = "/bin/sh",
                             .argv = argv,
                             .envp = envp,
                             .fetch = plan};
    char report[256];
    ck_assert_int_eq(run_launch(&l, report, sizeof(report)), 1);
    ck_assert_int_eq(report[0], 'E');
    char why[512];
    ck_assert_int_eq(
        agent_supervisor_read_launch_error(sandbox, why, sizeof(why)), 1);
    ck_assert_msg(
        strstr(why, "Failed to fetch '/nonexistent/offerd/app.tgz'") == why,
        "%s", why);
    /* The task never ran; the fetcher's log is in the sandbox's stderr. */
    char p[PATH_MAX + 16];
    snprintf(p, sizeof(p), "%s/ran", sandbox);
    ck_assert_int_ne(access(p, F_OK), 0);
    snprintf(p, sizeof(p), "%s/stderr", sandbox);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    char buf[2048] = "";
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, why));
    agent_fetch_plan_free(plan);
    ck_assert_int_eq(
        agent_supervisor_read_launch_error("/nonexistent", why, sizeof(why)),
        0);
}
END_TEST

START_TEST(test_runs_as_user_and_owns_sandbox)
{
    struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || pw == NULL) {
        fprintf(stderr, "skipped: needs root and a 'nobody' user\n");
        return;
    }
    struct agent_run_as u;
    char err[256];
    ck_assert_int_eq(agent_run_as_lookup("nobody", &u, err, sizeof(err)), 0);
    char src[PATH_MAX + 16];
    snprintf(src, sizeof(src), "%s.src", sandbox);
    FILE *f = fopen(src, "w");
    ck_assert_ptr_nonnull(f);
    fputs("data\n", f);
    fclose(f);
    struct agent_fetch_plan *plan = plan_of(src);
    /* As agent_sandbox_create leaves a sandbox. */
    char p[PATH_MAX + 32];
    snprintf(p, sizeof(p), "%s/stdout", sandbox);
    fclose(fopen(p, "w"));
    snprintf(p, sizeof(p), "%s/stderr", sandbox);
    fclose(fopen(p, "w"));
    char *argv[] = {"sh", "-c", "id -u > uid.txt; id -G > groups.txt", NULL};
    char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    struct agent_launch l = {.sandbox = sandbox,
                             .file = "/bin/sh",
                             .argv = argv,
                             .envp = envp,
                             .run_as = &u,
                             .fetch = plan};
    char report[256];
    ck_assert_int_eq(run_launch(&l, report, sizeof(report)), 0);
    ck_assert_msg(report[0] == 'R', "%s", report);
    int ws = 0;
    ck_assert_int_eq(agent_supervisor_read_exit(sandbox, &ws), 1);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    snprintf(p, sizeof(p), "%s/uid.txt", sandbox);
    f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    unsigned long uid = 0;
    ck_assert_int_eq(fscanf(f, "%lu", &uid), 1);
    fclose(f);
    ck_assert_uint_eq(uid, pw->pw_uid);
    /* The sandbox, the task's files and the fetched file are nobody's. */
    const char *names[] = {"", "/uid.txt", "/stdout", "/stderr"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof(p), "%s%s", sandbox, names[i]);
        struct stat st;
        ck_assert_int_eq(stat(p, &st), 0);
        ck_assert_msg(st.st_uid == pw->pw_uid, "%s", p);
    }
    const char *base = strrchr(src, '/') + 1;
    snprintf(p, sizeof(p), "%s/%s", sandbox, base);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_uint_eq(st.st_uid, pw->pw_uid);
    unlink(src);
    agent_fetch_plan_free(plan);
}
END_TEST

static Suite *agent_supervisor_suite(void)
{
    Suite *s = suite_create("agent_supervisor");
    TCase *tc = tcase_create("supervisor");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_parse_report);
    tcase_add_test(tc, test_exit_status_recorded);
    tcase_add_test(tc, test_exec_failure_reported);
    tcase_add_test(tc, test_task_in_own_session_and_group_cleaned);
    tcase_add_test(tc, test_reads_reject_garbage);
    tcase_add_test(tc, test_fetch_failure_recorded);
    tcase_add_test(tc, test_runs_as_user_and_owns_sandbox);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_supervisor_suite)
