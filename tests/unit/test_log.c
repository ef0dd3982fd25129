/*
 * Tests of common/log's log file (--log_dir): every line written to stderr
 * is appended to the file too, whole; a file that cannot be opened is
 * refused with a reason and logging goes on to stderr alone.
 */
#include "check_main.h"
#include "common/log.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[PATH_MAX];
static char path[PATH_MAX + 32];

static void setup(void)
{
    char tmpl[] = "/tmp/offerd-log-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    snprintf(dir, sizeof(dir), "%s", tmpl);
    snprintf(path, sizeof(path), "%s/offerd-master.log", dir);
    log_set_level(LOG_LEVEL_INFO);
}

static void teardown(void)
{
    log_close_file();
    unlink(path);
    rmdir(dir);
}

/* The file's content (at most 4 KiB) into out. */
static void slurp(char *out, size_t n)
{
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    size_t got = fread(out, 1, n - 1, fp);
    out[got] = '\0';
    fclose(fp);
}

START_TEST(test_lines_appended)
{
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("earlier\n", fp);
    fclose(fp);
    char err[256];
    ck_assert_int_eq(log_open_file(path, err, sizeof(err)), 0);
    log_info("hello %d", 42);
    log_debug("not at INFO");
    log_warn("second");
    char buf[4096];
    slurp(buf, sizeof(buf));
    ck_assert(strncmp(buf, "earlier\n", 8) == 0);
    ck_assert_ptr_nonnull(strstr(buf, " I test_log.c:"));
    ck_assert_ptr_nonnull(strstr(buf, "] hello 42\n"));
    ck_assert_ptr_nonnull(strstr(buf, "] second\n"));
    ck_assert_ptr_null(strstr(buf, "not at INFO"));
    /* Closed: nothing more reaches it. */
    log_close_file();
    log_info("after close");
    slurp(buf, sizeof(buf));
    ck_assert_ptr_null(strstr(buf, "after close"));
}
END_TEST

START_TEST(test_open_refused)
{
    char err[256] = "";
    char bad[PATH_MAX + 64];
    snprintf(bad, sizeof(bad), "%s/missing/offerd-master.log", dir);
    ck_assert_int_eq(log_open_file(bad, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, bad));
    log_info("still logging to stderr");
}
END_TEST

static Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("file");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_lines_appended);
    tcase_add_test(tc, test_open_refused);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(log_suite)
