/*
 * Tests of the per-task supervisor (agent/supervisor.h): report lines, and
 * real launches in a temporary sandbox (the test process stands in for the
 * agent and reaps the supervisor itself).
 */
#include "agent/supervisor.h"
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

static int run(const char *file, char *const *argv, char *report, size_t rlen)
{
    char *envp[] = {"FOO=bar", "PATH=/usr/bin:/bin", NULL};
    struct agent_launch l = {sandbox, file, argv, envp, NULL, 0};
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
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_supervisor_suite)
