/*
 * Tests of --attributes parsing (agent/attributes.h): the value kinds Mesos
 * reads, the rejections, and the protobuf and /state conversions.
 */
#include "agent/attributes.h"
#include "check_main.h"
#include "common/json_pb.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

START_TEST(test_kinds)
{
    struct agent_attrs a;
    char err[256];
    ck_assert_int_eq(agent_attrs_parse("rack:r1;zone:z1;cores:8;load:0.5;"
                                       "slots:[4-6, 1-2,3-3];url:http://x:1",
                                       &a, err, sizeof(err)),
                     0);
    ck_assert_uint_eq(a.n, 6);
    ck_assert_str_eq(a.v[0].name, "rack");
    ck_assert_int_eq(a.v[0].type, AGENT_ATTR_TEXT);
    ck_assert_str_eq(a.v[0].text, "r1");
    ck_assert_int_eq(a.v[2].type, AGENT_ATTR_SCALAR);
    ck_assert(a.v[2].scalar == 8.0);
    ck_assert(a.v[3].scalar == 0.5);
    ck_assert_int_eq(a.v[4].type, AGENT_ATTR_RANGES);
    /* Sorted and coalesced: [1-6]. */
    ck_assert_uint_eq(a.v[4].nranges, 1);
    ck_assert_uint_eq(a.v[4].ranges[0].begin, 1);
    ck_assert_uint_eq(a.v[4].ranges[0].end, 6);
    /* Split at the first ':' only. */
    ck_assert_str_eq(a.v[5].text, "http://x:1");
    agent_attrs_clear(&a);
}
END_TEST

START_TEST(test_text_not_numbers)
{
    static const char *const texts[] = {"1.2.3", "0x10", "inf", "nan",
                                        "12a",   "-",    "e5x"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char in[64], err[256];
        snprintf(in, sizeof(in), "k:%s", texts[i]);
        struct agent_attrs a;
        ck_assert_int_eq(agent_attrs_parse(in, &a, err, sizeof(err)), 0);
        ck_assert_msg(a.v[0].type == AGENT_ATTR_TEXT, "%s", texts[i]);
        agent_attrs_clear(&a);
    }
}
END_TEST

START_TEST(test_spaces_and_empty_entries)
{
    struct agent_attrs a;
    char err[256];
    ck_assert_int_eq(
        agent_attrs_parse(" rack : r 1 ;;\n zone:z1;  ", &a, err, sizeof(err)),
        0);
    ck_assert_uint_eq(a.n, 2);
    ck_assert_str_eq(a.v[0].name, "rack");
    ck_assert_str_eq(a.v[0].text, "r1");
    ck_assert_str_eq(a.v[1].name, "zone");
    agent_attrs_clear(&a);
    ck_assert_int_eq(agent_attrs_parse(NULL, &a, err, sizeof(err)), 0);
    ck_assert_uint_eq(a.n, 0);
    ck_assert_int_eq(agent_attrs_parse("", &a, err, sizeof(err)), 0);
    ck_assert_uint_eq(a.n, 0);
}
END_TEST

START_TEST(test_rejections)
{
    static const struct {
        const char *in, *why;
    } cases[] = {
        {"rack", "NAME:VALUE"},
        {":r1", "empty"},
        {"rack:", "empty"},
        {"rack:  ", "empty"},
        {"s:{a,b}", "sets are not supported"},
        {"r:[1-2", "mismatched"},
        {"r:[1-2,3]", "ranges"},
        {"r:[a-b]", "non-negative"},
        {"r:[5-1]", "ends before"},
        {"r:x[1-2]", "unexpected '['"},
        {"r:x{a}", "unexpected '{'"},
        {"r:(a", "mismatched"},
        {"ok:1;bad", "bad"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct agent_attrs a;
        char err[256] = "";
        ck_assert_msg(agent_attrs_parse(cases[i].in, &a, err, sizeof(err)) ==
                          -1,
                      "accepted %s", cases[i].in);
        ck_assert_msg(strstr(err, cases[i].why) != NULL, "%s: %s", cases[i].in,
                      err);
        ck_assert_uint_eq(a.n, 0);
        ck_assert_ptr_null(a.v);
    }
}
END_TEST

START_TEST(test_to_pb)
{
    struct agent_attrs a;
    char err[256];
    ck_assert_int_eq(agent_attrs_parse("rack:r1;cores:8;slots:[1-2,5-6]", &a,
                                       err, sizeof(err)),
                     0);
    size_t n;
    Mesos__V1__Attribute **v = agent_attrs_to_pb(&a, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(v[0]->type, MESOS__V1__VALUE__TYPE__TEXT);
    ck_assert_str_eq(v[0]->text->value, "r1");
    ck_assert_int_eq(v[1]->type, MESOS__V1__VALUE__TYPE__SCALAR);
    ck_assert(v[1]->scalar->value == 8.0);
    ck_assert_int_eq(v[2]->type, MESOS__V1__VALUE__TYPE__RANGES);
    ck_assert_uint_eq(v[2]->ranges->n_range, 2);
    ck_assert_uint_eq(v[2]->ranges->range[1]->begin, 5);
    /* Each encodes as a valid message. */
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *buf = jpb_to_pb(&v[i]->base, &len);
        ProtobufCMessage *back = jpb_from_pb(&mesos__v1__attribute__descriptor,
                                             buf, len, err, sizeof(err));
        ck_assert_msg(back != NULL, "%s", err);
        jpb_free(back);
        free(buf);
    }
    agent_attrs_pb_free(v, n);
    agent_attrs_clear(&a);
}
END_TEST

START_TEST(test_to_json)
{
    struct agent_attrs a;
    char err[256];
    ck_assert_int_eq(agent_attrs_parse("rack:r1;cores:8;slots:[1-2,5-6]", &a,
                                       err, sizeof(err)),
                     0);
    json_t *j = agent_attrs_to_json(&a);
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_str_eq(
        s, "{\"cores\":8.0,\"rack\":\"r1\",\"slots\":\"[1-2, 5-6]\"}");
    free(s);
    json_decref(j);
    agent_attrs_clear(&a);
}
END_TEST

static Suite *agent_attributes_suite(void)
{
    Suite *s = suite_create("agent_attributes");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_kinds);
    tcase_add_test(tc, test_text_not_numbers);
    tcase_add_test(tc, test_spaces_and_empty_entries);
    tcase_add_test(tc, test_rejections);
    tcase_add_test(tc, test_to_pb);
    tcase_add_test(tc, test_to_json);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(agent_attributes_suite)
