/*
 * Tests of jpb_from_json_text's reader without a tree (common/json_pb.c):
 * it takes the calls frameworks send, gives up on everything it is not
 * sure of, and whenever it answers, the message is the one jansson and
 * jpb_from_json build from the same text. Reals are still written with
 * the fewest digits that read back.
 */
#define JPB_PRIVATE
#include "common/json_pb.h"

#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/jpb_test.pb-c.h"

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

#define D_SCALARS  (&offerd__jpbtest__scalars__descriptor)
#define D_REPEATS  (&offerd__jpbtest__repeats__descriptor)
#define D_REQUIRED (&offerd__jpbtest__required__descriptor)
#define D_DEFAULTS (&offerd__jpbtest__defaults__descriptor)
#define D_CHOICE   (&offerd__jpbtest__choice__descriptor)
#define D_NODE     (&offerd__jpbtest__node__descriptor)
#define D_ALL      (&offerd__jpbtest__all__descriptor)
#define D_CALL     (&mesos__v1__scheduler__call__descriptor)

/* The general path: a jansson tree, then jpb_from_json. */
static ProtobufCMessage *slow(const ProtobufCMessageDescriptor *d,
                              const char *text)
{
    json_error_t je;
    json_t *j = json_loadb(text, strlen(text),
                           JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (j == NULL)
        return NULL;
    char err[256];
    ProtobufCMessage *m = jpb_from_json(d, j, err, sizeof(err));
    json_decref(j);
    return m;
}

static void assert_same_message(const ProtobufCMessage *a,
                                const ProtobufCMessage *b, const char *text)
{
    size_t la, lb;
    uint8_t *pa = jpb_to_pb(a, &la);
    uint8_t *pb = jpb_to_pb(b, &lb);
    ck_assert_msg(la == lb && memcmp(pa, pb, la) == 0,
                  "the two readers disagree on %s", text);
    free(pa);
    free(pb);
}

/* Read text both ways: when the reader without a tree answers (as
 * expected by fast), the general path must give the same message; and
 * jpb_from_json_text must give what the general path gives. */
static void check(const ProtobufCMessageDescriptor *d, const char *text,
                  bool fast)
{
    ProtobufCMessage *f = jpb_fast_from_json_text(d, text, strlen(text));
    ProtobufCMessage *s = slow(d, text);
    char err[256];
    ProtobufCMessage *p =
        jpb_from_json_text(d, text, strlen(text), err, sizeof(err));
    ck_assert_msg((f != NULL) == fast, "%s: fast path %s", text,
                  f != NULL ? "answered" : "gave up");
    if (f != NULL) {
        ck_assert_msg(s != NULL, "%s: only the fast path accepts it", text);
        assert_same_message(f, s, text);
    }
    ck_assert_msg((p != NULL) == (s != NULL), "%s: jpb_from_json_text %s", text,
                  p != NULL ? "accepts it" : "refuses it");
    if (p != NULL)
        assert_same_message(p, s, text);
    jpb_free(f);
    jpb_free(s);
    jpb_free(p);
}

struct row {
    const ProtobufCMessageDescriptor *d;
    const char *text;
    bool fast; /* the reader without a tree answers */
};

/* Inputs it reads itself. */
static const struct row taken[] = {
    {D_SCALARS, "{}", true},
    {D_SCALARS, " \t\r\n{ } \n", true},
    {D_SCALARS,
     "{\"i32\":-2147483648,\"s32\":2147483647,\"sf32\":-1,\"i64\":"
     "-999999999999999999,\"s64\":5,\"sf64\":-7,\"u32\":4294967295,\"f32\":0,"
     "\"u64\":999999999999999999,\"f64\":3,\"flt\":1.5,\"dbl\":-0.1,\"b\":true,"
     "\"color\":\"ULTRAVIOLET\",\"str\":\"abc\",\"data\":\"AAEC/w==\","
     "\"inner\":{\"name\":\"n\",\"count\":3}}",
     true},
    {D_SCALARS, "{\"dbl\":1e-400,\"flt\":3.4e38,\"color\":2,\"b\":false}",
     true},
    {D_SCALARS, "{\"dbl\":12,\"flt\":-0,\"i32\":-0}", true},
    {D_SCALARS, "{\"str\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\te\"}", true},
    {D_SCALARS, "{\"str\":\"\"}", true},
    {D_SCALARS, "{\"i32\":null,\"inner\":null,\"str\":null}", true},
    {D_SCALARS,
     "{\"unknown\":{\"a\":[1,2.5e3,\"x\",true,false,null,{}],\"b\":[]},"
     "\"i32\":1,\"more\":\"s\"}",
     true},
    {D_REPEATS,
     "{\"i32\":[1,-2,3,4,5,6,7,8,9],\"str\":[\"a\",\"b\"],\"inner\":[{\"name\":"
     "\"x\"},{\"name\":\"y\",\"count\":2}],\"color\":[\"RED\",1],\"dbl\":[1,"
     "2.5],\"b\":[true,false],\"data\":[\"AA==\",\"\"],\"packed_i32\":[],"
     "\"u64\":[0,1]}",
     true},
    {D_REQUIRED,
     "{\"id\":1,\"name\":\"n\",\"inner\":{\"name\":\"i\"},\"color\":\"RED\"}",
     true},
    {D_DEFAULTS, "{\"str\":\"set\",\"i32\":7}", true},
    {D_DEFAULTS, "{}", true},
    {D_CHOICE, "{\"label\":\"l\",\"inner\":{\"name\":\"x\"}}", true},
    {D_CHOICE, "{\"text\":\"t\"}", true},
    {D_NODE, "{\"value\":\"a\",\"child\":{\"child\":{\"value\":\"c\"}}}", true},
    {D_CALL,
     "{\"framework_id\":{\"value\":\"fw-1\"},\"type\":\"ACKNOWLEDGE\","
     "\"acknowledge\":{\"agent_id\":{\"value\":\"ag-1\"},\"task_id\":"
     "{\"value\":\"t-1\"},\"uuid\":\"AAECAwQFBgcICQoLDA0ODw==\"}}",
     true},
    {D_CALL,
     "{\"framework_id\":{\"value\":\"fw-1\"},\"type\":\"ACCEPT\",\"accept\":"
     "{\"offer_ids\":[{\"value\":\"o-1\"}],\"operations\":[{\"type\":"
     "\"LAUNCH\",\"launch\":{\"task_infos\":[{\"name\":\"t\",\"task_id\":"
     "{\"value\":\"t-1\"},\"agent_id\":{\"value\":\"ag-1\"},\"resources\":[{"
     "\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.1}},"
     "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":32}}],"
     "\"command\":{\"value\":\"sleep 1\",\"shell\":true}}]}}],\"filters\":"
     "{\"refuse_seconds\":5.0}}}",
     true},
    {D_CALL,
     "{\"framework_id\":{\"value\":\"fw-1\"},\"type\":\"DECLINE\",\"decline\":"
     "{\"offer_ids\":[{\"value\":\"o-1\"},{\"value\":\"o-2\"}]}}",
     true},
};

/* Inputs it leaves to jansson and jpb_from_json (which accept some and
 * refuse others). */
static const struct row left[] = {
    {D_SCALARS, "", false},
    {D_SCALARS, "[]", false},
    {D_SCALARS, "{", false},
    {D_SCALARS, "{}x", false},
    {D_SCALARS, "{} {}", false},
    {D_SCALARS, "{\"i32\":1,}", false},
    {D_SCALARS, "{\"i32\" 1}", false},
    {D_SCALARS, "{'i32':1}", false},
    {D_SCALARS, "{\"i32\":01}", false},
    {D_SCALARS, "{\"i32\":1.}", false},
    {D_SCALARS, "{\"i32\":+1}", false},
    {D_SCALARS, "{\"i32\":1.0}", false},        /* accepted, left */
    {D_SCALARS, "{\"i32\":1e2}", false},        /* accepted, left */
    {D_SCALARS, "{\"i32\":2147483648}", false}, /* out of range */
    {D_SCALARS, "{\"u32\":-1}", false},         /* out of range */
    {D_SCALARS, "{\"u64\":-1}", false},         /* out of range */
    {D_SCALARS, "{\"i64\":\"5\"}", false},      /* accepted, left */
    {D_SCALARS, "{\"u64\":18446744073709551615}", false},
    {D_SCALARS, "{\"i64\":1000000000000000000}", false}, /* 19 digits */
    {D_SCALARS, "{\"dbl\":1e400}", false},
    {D_SCALARS, "{\"dbl\":\"NaN\"}", false}, /* accepted, left */
    {D_SCALARS, "{\"flt\":3.5e38}", false},  /* out of range */
    {D_SCALARS, "{\"b\":1}", false},
    {D_SCALARS, "{\"b\":tru}", false},
    {D_SCALARS, "{\"color\":\"PURPLE\"}", false},
    {D_SCALARS, "{\"color\":7}", false},
    {D_SCALARS, "{\"color\":1.0}", false},
    {D_SCALARS, "{\"str\":\"\\u0041\"}", false}, /* accepted, left */
    {D_SCALARS, "{\"str\":\"\\u0000\"}", false},
    {D_SCALARS, "{\"str\":\"caf\xc3\xa9\"}", false}, /* accepted, left */
    {D_SCALARS, "{\"str\":\"\xff\"}", false},
    {D_SCALARS, "{\"str\":\"a\tb\"}", false},
    {D_SCALARS, "{\"str\":\"\\x\"}", false},
    {D_SCALARS, "{\"str\":5}", false},
    {D_SCALARS, "{\"data\":\"A\"}", false},
    {D_SCALARS, "{\"data\":\"AA\\/A\"}", false},
    {D_SCALARS, "{\"inner\":{}}", false}, /* required name missing */
    {D_SCALARS, "{\"inner\":5}", false},
    {D_SCALARS, "{\"i32\":1,\"i32\":2}", false},
    {D_SCALARS, "{\"x\":1,\"x\":2}", false},
    {D_SCALARS, "{\"x\":{\"y\":1,\"y\":2}}", false},
    {D_SCALARS, "{\"i\\u0033\\u0032\":1}", false}, /* accepted, left */
    {D_SCALARS,
     "{\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]"
     "]]]]]]]]]]]]]]]]}",
     false}, /* accepted, left */
    {D_REPEATS, "{\"i32\":[1,null]}", false},
    {D_REPEATS, "{\"i32\":5}", false},
    {D_REPEATS, "{\"i32\":[1 2]}", false},
    {D_REQUIRED, "{\"id\":1}", false},
    {D_CHOICE, "{\"text\":\"t\",\"number\":1}", false},
    {D_ALL, "{\"labels\":{\"a\":\"b\"}}", false}, /* a map: accepted, left */
};

START_TEST(test_fast_path_taken_and_same)
{
    check(taken[_i].d, taken[_i].text, taken[_i].fast);
}
END_TEST

START_TEST(test_fast_path_gives_up)
{
    check(left[_i].d, left[_i].text, left[_i].fast);
}
END_TEST

/* Every prefix of a call is either read the same way or left alone: a
 * body cut anywhere never gets a message of its own. */
START_TEST(test_truncated_calls_left)
{
    const char *text = taken[sizeof(taken) / sizeof(taken[0]) - 2].text;
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_null(jpb_fast_from_json_text(D_CALL, text, i));
    }
}
END_TEST

/* The reader stops at len: bytes after it are never read. */
START_TEST(test_reads_only_len_bytes)
{
    const char text[] = "{\"value\":\"a\"}garbage";
    ProtobufCMessage *m = jpb_fast_from_json_text(D_NODE, text, 13);
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(((Offerd__Jpbtest__Node *)m)->value, "a");
    jpb_free(m);
    ck_assert_ptr_null(jpb_fast_from_json_text(D_NODE, NULL, 0));
}
END_TEST

/* The shortest text that reads back, found digit count by digit count
 * (what format_real did before it bisected). */
static void shortest(double d, bool is_float, char *buf, size_t size)
{
    int p;
    for (p = is_float ? 6 : 15; p <= (is_float ? 9 : 17); p++) {
        snprintf(buf, size, "%.*g", p, d);
        double back = strtod(buf, NULL);
        if (is_float ? (float)back == (float)d : back == d)
            break;
    }
    if (p > (is_float ? 9 : 17))
        snprintf(buf, size, "%.17g", d);
    size_t n = strlen(buf);
    if (strpbrk(buf, ".eE") == NULL && n + 3 <= size)
        memcpy(buf + n, ".0", 3);
}

/* Reals are written with the fewest digits that read back: the same text
 * as a digit-by-digit search, for timestamps and for random bit patterns. */
START_TEST(test_reals_shortest)
{
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        if (i % 2 == 0) {
            d = 1.7e9 + (double)(x % 100000000000ull) / 1e9; /* timestamps */
        } else {
            memcpy(&d, &x, sizeof(d));
            if (!isfinite(d))
                continue;
        }
        bool is_float = i % 3 == 0;
        if (is_float && !(fabs(d) < 3e38))
            continue;
        Offerd__Jpbtest__Scalars m = OFFERD__JPBTEST__SCALARS__INIT;
        char want[80], text[128];
        if (is_float) {
            m.has_flt = true;
            m.flt = (float)d;
            shortest(m.flt, true, want, sizeof(want));
            snprintf(text, sizeof(text), "{\"flt\":%s}", want);
        } else {
            m.has_dbl = true;
            m.dbl = d;
            shortest(d, false, want, sizeof(want));
            snprintf(text, sizeof(text), "{\"dbl\":%s}", want);
        }
        size_t len;
        char *got = jpb_to_json_text(&m.base, &len);
        ck_assert_str_eq(got, text);
        free(got);
    }
}
END_TEST

static Suite *json_pb_fast_suite(void)
{
    Suite *s = suite_create("json_pb_fast");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_fast_path_taken_and_same, 0,
                        (int)(sizeof(taken) / sizeof(taken[0])));
    tcase_add_loop_test(tc, test_fast_path_gives_up, 0,
                        (int)(sizeof(left) / sizeof(left[0])));
    tcase_add_test(tc, test_truncated_calls_left);
    tcase_add_test(tc, test_reads_only_len_bytes);
    tcase_add_test(tc, test_reals_shortest);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(json_pb_fast_suite)
