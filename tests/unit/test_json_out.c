/*
 * common/json_out: the text it writes is the text jansson dumps for the
 * same values (strings, reals, nesting, commas), and what jansson refuses
 * (NULL or invalid UTF-8 strings, non-finite reals) is left out.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/json_out.h"

/* w's text as a new string; w reset. */
static char *take(struct jout *w)
{
    char *s = malloc(w->len + 1);
    memcpy(s, w->buf, w->len);
    s[w->len] = '\0';
    jout_reset(w);
    return s;
}

/* jansson's compact text of j (taken). */
static char *jansson(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    return s;
}

static void check_real(struct jout *w, double v)
{
    ck_assert(jout_real(w, v));
    char *got = take(w), *want = jansson(json_real(v));
    ck_assert_msg(strcmp(got, want) == 0, "%.17g: got %s, jansson %s", v, got,
                  want);
    free(got);
    free(want);
}

START_TEST(test_reals_as_jansson)
{
    struct jout w;
    jout_init(&w);
    const double table[] = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0.1,
                            0.5,
                            64.0,
                            32.5,
                            0.001,
                            1e-4,
                            1.5e-4,
                            9.9999e-5,
                            1e-5,
                            1e16,
                            1e17,
                            1e20,
                            123456789012345678.0,
                            9007199254740992.0,
                            9007199254740993.0,
                            4503599627370495.5,
                            999999.99999999999,
                            0.30000000000000004,
                            1764633696.123456,
                            1796170899.7298903,
                            DBL_MAX,
                            DBL_MIN,
                            -1764633696.5,
                            2.5e-300};
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        check_real(&w, table[i]);
    /* Every milli-unit quantity a resource can have up to 100,000. */
    for (int64_t k = 0; k <= 100000000; k += 9973)
        check_real(&w, (double)k / 1000.0);
    /* Wall-clock timestamps with microseconds, and random bit patterns. */
    srand(17);
    for (int i = 0; i < 30000; i++) {
        double ts = 1.7e9 + (double)rand() / RAND_MAX * 1e8;
        check_real(&w, ts);
        uint64_t bits = ((uint64_t)rand() << 42) ^ ((uint64_t)rand() << 21) ^
                        (uint64_t)rand();
        double v;
        memcpy(&v, &bits, sizeof(v));
        if (isfinite(v))
            check_real(&w, v);
        check_real(&w, ldexp((double)rand(), (rand() % 120) - 80));
    }
    /* Not finite: nothing, as jansson makes no value of it. */
    ck_assert(!jout_real(&w, NAN));
    ck_assert(!jout_real(&w, INFINITY));
    ck_assert_uint_eq(w.len, 0);
    jout_free(&w);
}
END_TEST

START_TEST(test_strings_as_jansson)
{
    const char *table[] = {
        "",
        "plain",
        "quote\" backslash\\ slash/",
        "\b\f\n\r\t\x01\x1f\x7f",
        "\xc3\xa9t\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80",
    };
    struct jout w;
    jout_init(&w);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        ck_assert(jout_str(&w, table[i]));
        char *got = take(&w), *want = jansson(json_string(table[i]));
        ck_assert_str_eq(got, want);
        free(got);
        free(want);
    }
    /* What json_string refuses is not written. */
    const char *bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "a\xe2\x80",
                         "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_ptr_null(json_string(bad[i]));
        ck_assert(!jout_str(&w, bad[i]));
    }
    ck_assert(!jout_str(&w, NULL));
    ck_assert_uint_eq(w.len, 0);
    jout_free(&w);
}
END_TEST

START_TEST(test_nesting_and_members_as_jansson)
{
    struct jout w;
    jout_init(&w);
    jout_obj_begin(&w);
    jout_kstr(&w, "a", "x");
    jout_kstr(&w, "skipped", NULL);
    jout_kstr(&w, "bad", "\xff");
    jout_kreal(&w, "nan", NAN);
    jout_kint(&w, "n", -42);
    jout_kbool(&w, "t", true);
    jout_key(&w, "arr");
    jout_arr_begin(&w);
    jout_int(&w, 1);
    jout_obj_begin(&w);
    jout_obj_end(&w);
    jout_arr_begin(&w);
    jout_arr_end(&w);
    jout_real(&w, 2.5);
    jout_arr_end(&w);
    json_t *sub = json_pack("{s:[i,s]}", "k", 1, "v");
    jout_kjson_new(&w, "sub", sub);
    jout_kjson(&w, "none", NULL);
    jout_kbool(&w, "f", false);
    jout_obj_end(&w);
    char *got = take(&w);
    json_t *o = json_object();
    json_object_set_new(o, "a", json_string("x"));
    json_object_set_new(o, "n", json_integer(-42));
    json_object_set_new(o, "t", json_true());
    json_object_set_new(o, "arr", json_pack("[i,{},[],f]", 1, 2.5));
    json_object_set_new(o, "sub", json_pack("{s:[i,s]}", "k", 1, "v"));
    json_object_set_new(o, "f", json_false());
    char *want = jansson(o);
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    jout_free(&w);
}
END_TEST

/* Strings on both paths: plain ASCII is copied as it is, and anything
 * else (an escape anywhere, a control character, non-ASCII UTF-8) is
 * validated and escaped; the text is jansson's either way, as a value, as
 * a key, and as a member (jout_kstr). */
START_TEST(test_plain_and_escaped_strings)
{
    char long_plain[300], long_quote[300];
    memset(long_plain, 'x', sizeof(long_plain) - 1);
    long_plain[sizeof(long_plain) - 1] = '\0';
    memcpy(long_quote, long_plain, sizeof(long_quote));
    long_quote[sizeof(long_quote) - 2] = '"'; /* the last byte */
    const char *table[] = {
        "a",
        "~ !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}",
        "\"starts",
        "ends\\",
        "mid\"dle",
        "\x1f",
        "tab\there",
        "\x7f del",
        "caf\xc3\xa9",
        "\xe6\x97\xa5\xe6\x9c\xac",
        "\xf0\x9f\x98\x80 emoji",
        "line\xe2\x80\xa8"
        "sep", /* U+2028: left as it is, as jansson does */
        long_plain,
        long_quote,
        /* Each kind of byte inside a whole word of eight. */
        "abcdefg\"hijklmnop",
        "abcdefgh\x01ijklmnop",
        "abcdefghij\\klmnop",
        "abcdefghi\xc3\xa9jklmnopq",
        "abcdefghijklmno\x1f",
        "0123456789abcdef!",
    };
    struct jout w;
    jout_init(&w);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        /* In an array, so that the comma path runs too. */
        jout_arr_begin(&w);
        ck_assert(jout_str(&w, "first"));
        ck_assert(jout_str(&w, table[i]));
        jout_arr_end(&w);
        char *got = take(&w);
        char *want = jansson(json_pack("[s,s]", "first", table[i]));
        ck_assert_str_eq(got, want);
        free(got);
        free(want);
        /* As a key and as a member's value. */
        jout_obj_begin(&w);
        jout_kint(&w, "n", 1);
        jout_kstr(&w, table[i], table[i]);
        jout_obj_end(&w);
        got = take(&w);
        json_t *o = json_object();
        json_object_set_new(o, "n", json_integer(1));
        json_object_set_new(o, table[i], json_string(table[i]));
        want = jansson(o);
        ck_assert_str_eq(got, want);
        free(got);
        free(want);
    }
    /* A member whose value jansson refuses goes whole, key included, and
     * the next member's comma is right. */
    jout_obj_begin(&w);
    jout_kint(&w, "a", 1);
    jout_kstr(&w, "gone", "ok\xff");
    jout_kint(&w, "b", 2);
    jout_obj_end(&w);
    char *got = take(&w);
    ck_assert_str_eq(got, "{\"a\":1,\"b\":2}");
    free(got);
    jout_free(&w);
}
END_TEST

/* Integers by hand and the reals the brief names, as jansson. */
START_TEST(test_numbers_at_the_edges)
{
    struct jout w;
    jout_init(&w);
    const int64_t ints[] = {0,         1,         -1,           9,
                            10,        -10,       123456789,    -987654321,
                            INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        jout_int(&w, ints[i]);
        char *got = take(&w), *want = jansson(json_integer(ints[i]));
        ck_assert_str_eq(got, want);
        free(got);
        free(want);
    }
    const double reals[] = {0.1,   -0.1,  1e-7,      -1e-7,   1e20,
                            -1e20, 1e21,  1e-300,    123.456, 0.2 + 0.1,
                            64.0,  0.001, 1048576.0, -2.5};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        check_real(&w, reals[i]);
    /* The same real twice (the second from the cache) reads the same. */
    check_real(&w, 1e-7);
    check_real(&w, 0.1);
    jout_free(&w);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("json_out");
    TCase *tc = tcase_create("json_out");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_reals_as_jansson);
    tcase_add_test(tc, test_strings_as_jansson);
    tcase_add_test(tc, test_nesting_and_members_as_jansson);
    tcase_add_test(tc, test_plain_and_escaped_strings);
    tcase_add_test(tc, test_numbers_at_the_edges);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
