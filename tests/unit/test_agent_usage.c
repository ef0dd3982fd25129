/*
 * Tests of task usage measurement (agent/usage.h): /proc/<pid>/stat and
 * statm parsing on crafted text, and the scan of a crafted proc tree.
 */
#include "agent/usage.h"
#include "check_main.h"
#include "common/fs.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A stat line with the fields the parser reads (everything after cstime
 * is a plausible tail). */
static void stat_line(char *buf, size_t len, int pid, const char *comm,
                      char state, int pgrp, int session, long long utime,
                      long long stime, long long cutime, long long cstime)
{
    int n =
        snprintf(buf, len,
                 "%d (%s) %c 1 %d %d 0 -1 4194560 120 0 0 0 %lld %lld "
                 "%lld %lld 20 0 1 0 12345 2236416 200 "
                 "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 "
                 "0 0 0\n",
                 pid, comm, state, pgrp, session, utime, stime, cutime, cstime);
    ck_assert(n > 0 && (size_t)n < len);
}

START_TEST(test_parse_stat_fields)
{
    char line[512];
    stat_line(line, sizeof(line), 4242, "sleep", 'S', 4240, 4200, 11, 22, 33,
              44);
    struct agent_proc_stat ps;
    ck_assert_int_eq(agent_usage_parse_stat(line, strlen(line), &ps), 0);
    ck_assert_int_eq(ps.pid, 4242);
    ck_assert_int_eq(ps.state, 'S');
    ck_assert_int_eq(ps.pgrp, 4240);
    ck_assert_int_eq(ps.session, 4200);
    ck_assert_uint_eq(ps.utime, 11);
    ck_assert_uint_eq(ps.stime, 22);
    ck_assert_uint_eq(ps.cutime, 33);
    ck_assert_uint_eq(ps.cstime, 44);
}
END_TEST

START_TEST(test_parse_stat_odd_comm)
{
    /* A command name may hold spaces and parentheses: fields come after
     * the last ')'. */
    static const char *const comms[] = {"a b", "x) 9 9 (y", "((", ")", ""};
    for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
        char line[512];
        stat_line(line, sizeof(line), 7, comms[i], 'R', 7, 7, 100, 5, 0, 0);
        struct agent_proc_stat ps;
        ck_assert_msg(agent_usage_parse_stat(line, strlen(line), &ps) == 0,
                      "comm '%s'", comms[i]);
        ck_assert_int_eq(ps.pgrp, 7);
        ck_assert_uint_eq(ps.utime, 100);
        ck_assert_uint_eq(ps.stime, 5);
    }
}
END_TEST

START_TEST(test_parse_stat_negative_children_clamped)
{
    char line[512];
    stat_line(line, sizeof(line), 7, "sh", 'S', 7, 7, 1, 2, -3, -4);
    struct agent_proc_stat ps;
    ck_assert_int_eq(agent_usage_parse_stat(line, strlen(line), &ps), 0);
    ck_assert_uint_eq(ps.cutime, 0);
    ck_assert_uint_eq(ps.cstime, 0);
}
END_TEST

START_TEST(test_parse_stat_rejects)
{
    static const char *const bad[] = {
        "",
        "\n",
        "abc (x) S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4\n", /* pid not a number */
        "0 (x) S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4\n",   /* pid 0 */
        "7 x) S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4\n",    /* no " (" */
        "7 (x S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4\n",    /* no ')' */
        "7 (x) S 1 2 3 0 -1 0 0 0 0 0 1 2 3\n",     /* cstime missing */
        "7 (x) S 1 2 3 0 -1 0 0 0 0\n",             /* cut short */
        "7 (x) S 1 two 3 0 -1 0 0 0 0 0 1 2 3 4\n", /* pgrp not a number */
        "7 (x) S 1 2 3 0 -1 0 0 0 0 0 -1 2 3 4\n",  /* negative utime */
        "7 (x) SS 1 2 3 0 -1 0 0 0 0 0 1 2 3 4\n",  /* state not one char */
        "7 (x) S 1 2 3 0 -1 0 0 0 0 0 1 2 3 4x\n",  /* junk after cstime */
        "7 (x) S 1 2  3 0 -1 0 0 0 0 0 1 2 3 4\n",  /* double space */
        "7 (x) S 1 99999999999 3 0 -1 0 0 0 0 0 1 2 3 4\n", /* pgrp too big */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct agent_proc_stat ps;
        memset(&ps, 0x5a, sizeof(ps));
        ck_assert_msg(agent_usage_parse_stat(bad[i], strlen(bad[i]), &ps) == -1,
                      "accepted: %s", bad[i]);
        ck_assert_int_eq(ps.pgrp, 0x5a5a5a5a); /* untouched */
    }
    /* A NUL inside, and an over-long line. */
    const char nul[] = "7 (x) S 1 2 3 0 -1 0 0 0 0 0 1\0 2 3 4\n";
    struct agent_proc_stat ps;
    ck_assert_int_eq(agent_usage_parse_stat(nul, sizeof(nul) - 1, &ps), -1);
    char *big = malloc(AGENT_USAGE_MAX_FILE + 2);
    memset(big, '1', AGENT_USAGE_MAX_FILE + 1);
    big[AGENT_USAGE_MAX_FILE + 1] = '\0';
    ck_assert_int_eq(agent_usage_parse_stat(big, AGENT_USAGE_MAX_FILE + 1, &ps),
                     -1);
    free(big);
}
END_TEST

START_TEST(test_parse_statm)
{
    static const struct {
        const char *in;
        int rc;
        uint64_t resident;
    } cases[] = {
        {"2236 200 150 10 0 300 0\n", 0, 200},
        {"1 0 0 0 0 0 0", 0, 0},
        {"5 7\n", 0, 7},
        {"5 7", 0, 7},
        {"", -1, 0},
        {"5\n", -1, 0},
        {"5 x 1\n", -1, 0},
        {"-5 7 1\n", -1, 0},
        {"5 -7 1\n", -1, 0},
        {"5 7x 1\n", -1, 0},
        {"99999999999999999999999 7\n", -1, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t r = 12345;
        int rc = agent_usage_parse_statm(cases[i].in, strlen(cases[i].in), &r);
        ck_assert_msg(rc == cases[i].rc, "'%s': %d", cases[i].in, rc);
        ck_assert_uint_eq(r, cases[i].rc == 0 ? cases[i].resident : 12345);
    }
}
END_TEST

/* ---- The scan, on a crafted tree ---- */

static char root[64];

static void make_root(void)
{
    snprintf(root, sizeof(root), "/tmp/offerd-usage-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void put(const char *name, const char *file, const char *text)
{
    char dir[PATH_MAX], path[PATH_MAX + 32], err[256];
    snprintf(dir, sizeof(dir), "%s/%s", root, name);
    ck_assert_int_eq(fs_mkdirs(dir, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void proc(int pid, int pgrp, int session, long long utime,
                 long long stime, long long cutime, long long cstime,
                 const char *statm)
{
    char name[32], line[512];
    snprintf(name, sizeof(name), "%d", pid);
    stat_line(line, sizeof(line), pid, "p", 'S', pgrp, session, utime, stime,
              cutime, cstime);
    put(name, "stat", line);
    if (statm != NULL)
        put(name, "statm", statm);
}

START_TEST(test_scan_sums_groups)
{
    make_root();
    /* Task A leads 100: itself, a child in its group, a grandchild in a
     * group of its own within A's session. */
    proc(100, 100, 100, 10, 5, 3, 2, "900 50 0 0 0 0 0\n");
    proc(101, 100, 100, 7, 1, 0, 0, "900 20 0 0 0 0 0\n");
    proc(102, 102, 100, 1, 1, 0, 0, "900 5 0 0 0 0 0\n");
    /* Task B leads 200; one process without statm. */
    proc(200, 200, 200, 40, 0, 0, 0, "10 8 0 0 0 0 0\n");
    proc(201, 200, 200, 2, 0, 0, 0, NULL);
    /* Unrelated processes, a broken stat, non-process entries. */
    proc(300, 300, 300, 999, 999, 0, 0, "1 999 0 0 0 0 0\n");
    put("301", "stat", "garbage\n");
    put("self", "stat", "nothing to see\n");
    put("loadavg", "x", "0.00 0.00 0.00 1/1 1\n");
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/999", root); /* a dir without stat */
    mkdir(path, 0755);

    pid_t leaders[3] = {200, 100, 400};
    struct agent_usage u[3];
    ck_assert_int_eq(agent_usage_scan(root, leaders, 3, u), 0);
    ck_assert_uint_eq(u[1].nprocs, 3);
    ck_assert_uint_eq(u[1].cpu_ticks, 10 + 5 + 3 + 2 + 7 + 1 + 1 + 1);
    ck_assert_uint_eq(u[1].rss_pages, 50 + 20 + 5);
    ck_assert_uint_eq(u[0].nprocs, 2);
    ck_assert_uint_eq(u[0].cpu_ticks, 42);
    ck_assert_uint_eq(u[0].rss_pages, 8);
    ck_assert_uint_eq(u[2].nprocs, 0); /* gone */
    ck_assert_uint_eq(u[2].cpu_ticks, 0);
    fs_remove_tree(root);
}
END_TEST

START_TEST(test_scan_missing_root)
{
    pid_t leaders[1] = {1};
    struct agent_usage u[1];
    memset(u, 0x5a, sizeof(u));
    ck_assert_int_eq(
        agent_usage_scan("/nonexistent/offerd-proc", leaders, 1, u), -1);
    ck_assert_uint_eq(u[0].nprocs, 0);
}
END_TEST

START_TEST(test_scan_real_proc_sees_self)
{
    /* This process leads no group of its own necessarily: look for its
     * process group, which holds at least this process. */
    pid_t leaders[1] = {getpgrp()};
    struct agent_usage u[1];
    ck_assert_int_eq(agent_usage_scan("/proc", leaders, 1, u), 0);
    ck_assert_uint_ge(u[0].nprocs, 1);
    ck_assert_uint_gt(u[0].rss_pages, 0);
}
END_TEST

static Suite *usage_suite(void)
{
    Suite *s = suite_create("agent_usage");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_parse_stat_fields);
    tcase_add_test(tc, test_parse_stat_odd_comm);
    tcase_add_test(tc, test_parse_stat_negative_children_clamped);
    tcase_add_test(tc, test_parse_stat_rejects);
    tcase_add_test(tc, test_parse_statm);
    tcase_add_test(tc, test_scan_sums_groups);
    tcase_add_test(tc, test_scan_missing_root);
    tcase_add_test(tc, test_scan_real_proc_sees_self);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(usage_suite)
