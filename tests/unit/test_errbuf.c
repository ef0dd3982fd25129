/*
 * Tests of common/errbuf.h: reasons written into caller buffers.
 */
#include "common/errbuf.h"

#include "check_main.h"

#include <check.h>
#include <stdarg.h>
#include <string.h>

START_TEST(test_formats_the_reason)
{
    char err[64];
    errbuf_set(err, sizeof(err), "invalid port '%s' (%d)", "x", 7);
    ck_assert_str_eq(err, "invalid port 'x' (7)");
}
END_TEST

START_TEST(test_long_reason_is_cut)
{
    char err[8];
    memset(err, 'z', sizeof(err));
    errbuf_set(err, sizeof(err), "%s", "0123456789");
    ck_assert_str_eq(err, "0123456");
    errbuf_set(err, 1, "%s", "0123456789");
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_no_buffer_writes_nothing)
{
    char err[4] = "abc";
    errbuf_set(NULL, 0, "%s", "x");
    errbuf_set(NULL, 16, "%s", "x");
    errbuf_set(err, 0, "%s", "x");
    ck_assert_str_eq(err, "abc");
}
END_TEST

/* What a peer sent may hold line breaks and other control bytes: the
 * reason stays on one line. Bytes above 0x7f (UTF-8) are kept. ("\?"
 * keeps "??" from reading as a trigraph.) */
START_TEST(test_control_bytes_become_question_marks)
{
    static const struct {
        const char *quoted;
        const char *want;
    } cases[] = {
        {"a\nb", "bad 'a?b'"},
        {"a\r\nb", "bad 'a\?\?b'"},
        {"\t\x01\x1f\x7f", "bad '\?\?\?\?'"},
        {"caf\xc3\xa9", "bad 'caf\xc3\xa9'"},
        {"", "bad ''"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[64];
        errbuf_set(err, sizeof(err), "bad '%s'", cases[i].quoted);
        ck_assert_str_eq(err, cases[i].want);
    }
}
END_TEST

static void vset(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void vset(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errbuf_vset(err, errlen, fmt, ap);
    va_end(ap);
}

START_TEST(test_vset_as_set)
{
    char err[16];
    vset(err, sizeof(err), "%s:%u\n", "field", 3u);
    ck_assert_str_eq(err, "field:3?");
    vset(err, 4, "%s", "field");
    ck_assert_str_eq(err, "fie");
}
END_TEST

static Suite *errbuf_suite(void)
{
    Suite *s = suite_create("errbuf");
    TCase *tc = tcase_create("errbuf");
    tcase_add_test(tc, test_formats_the_reason);
    tcase_add_test(tc, test_long_reason_is_cut);
    tcase_add_test(tc, test_no_buffer_writes_nothing);
    tcase_add_test(tc, test_control_bytes_become_question_marks);
    tcase_add_test(tc, test_vset_as_set);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(errbuf_suite)
