/*
 * Tests for common/ids: UUID v4 text form and uniqueness, Mesos-style
 * derived ids and their parsing.
 */
#include "common/ids.h"

#include "check_main.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static int is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

START_TEST(test_uuid_format)
{
    char u[ID_UUID_SIZE];
    for (int i = 0; i < 1000; i++) {
        id_uuid_v4(u);
        ck_assert_uint_eq(strlen(u), ID_UUID_LEN);
        for (size_t k = 0; k < ID_UUID_LEN; k++) {
            if (k == 8 || k == 13 || k == 18 || k == 23)
                ck_assert_int_eq(u[k], '-');
            else
                ck_assert_msg(is_lower_hex(u[k]), "%s", u);
        }
        ck_assert_int_eq(u[14], '4'); /* version */
        ck_assert_msg(strchr("89ab", u[19]) != NULL, "variant in %s", u);
    }
}
END_TEST

static int cmp_uuid(const void *a, const void *b)
{
    return memcmp(a, b, ID_UUID_SIZE);
}

START_TEST(test_uuid_unique_100k)
{
    enum { N = 100000 };
    char(*all)[ID_UUID_SIZE] = calloc(N, ID_UUID_SIZE);
    ck_assert_ptr_nonnull(all);
    for (size_t i = 0; i < N; i++)
        id_uuid_v4(all[i]);
    qsort(all, N, ID_UUID_SIZE, cmp_uuid);
    for (size_t i = 1; i < N; i++)
        ck_assert_msg(memcmp(all[i - 1], all[i], ID_UUID_SIZE) != 0,
                      "duplicate %s", all[i]);
    free(all);
}
END_TEST

START_TEST(test_uuid_format_known)
{
    static const uint8_t b[16] = {0x1b, 0x4e, 0x28, 0xba, 0x2f, 0xa1,
                                  0x41, 0xd2, 0x88, 0x3f, 0x00, 0x16,
                                  0xd3, 0xcc, 0xa4, 0x27};
    char u[ID_UUID_SIZE];
    id_uuid_format(b, u);
    ck_assert_str_eq(u, "1b4e28ba-2fa1-41d2-883f-0016d3cca427");
    uint8_t back[16];
    ck_assert_int_eq(id_uuid_parse(u, back), 0);
    ck_assert(memcmp(back, b, 16) == 0);
    ck_assert_int_eq(
        id_uuid_parse("1B4E28BA-2FA1-41D2-883F-0016D3CCA427", back), 0);
    ck_assert(memcmp(back, b, 16) == 0);
}
END_TEST

START_TEST(test_uuid_parse_bad)
{
    static const char *const bad[] = {
        "",
        "1b4e28ba-2fa1-41d2-883f-0016d3cca42",
        "1b4e28ba-2fa1-41d2-883f-0016d3cca4270",
        "1b4e28ba2fa1-41d2-883f-0016d3cca427-",
        "1b4e28ba-2fa1-41d2-883f-0016d3cca42g",
        "1b4e28ba 2fa1-41d2-883f-0016d3cca427",
        "-b4e28ba-2fa1-41d2-883f-0016d3cca427",
    };
    uint8_t out[16] = {0};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(id_uuid_parse(bad[i], out) == -1, "accepted %s", bad[i]);
}
END_TEST

START_TEST(test_derive)
{
    static const struct {
        enum id_kind kind;
        uint64_t n;
        const char *want;
    } cases[] = {
        {ID_FRAMEWORK, 0, "B-0000"},      {ID_FRAMEWORK, 7, "B-0007"},
        {ID_FRAMEWORK, 12345, "B-12345"}, {ID_AGENT, 0, "B-S0"},
        {ID_AGENT, 12, "B-S12"},          {ID_OFFER, 345, "B-O345"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[ID_DERIVED_SIZE];
        ck_assert_int_eq(
            id_derive(cases[i].kind, "B", cases[i].n, out, sizeof(out)), 0);
        ck_assert_str_eq(out, cases[i].want);
        uint64_t n = 999;
        ck_assert_int_eq(id_counter_of(cases[i].kind, "B", out, &n), 0);
        ck_assert_uint_eq(n, cases[i].n);
    }
}
END_TEST

START_TEST(test_derive_uuid_base_fits)
{
    char base[ID_UUID_SIZE], out[ID_DERIVED_SIZE];
    id_uuid_v4(base);
    ck_assert_int_eq(id_derive(ID_OFFER, base, UINT64_MAX, out, sizeof(out)),
                     0);
    ck_assert_uint_eq(strlen(out), ID_UUID_LEN + 2 + 20);
    ck_assert_int_eq(
        id_derive(ID_FRAMEWORK, base, UINT64_MAX, out, sizeof(out)), 0);
}
END_TEST

START_TEST(test_derive_too_small)
{
    char out[6];
    ck_assert_int_eq(id_derive(ID_FRAMEWORK, "B", 1, out, sizeof(out)), -1);
    ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_counter_of_rejects)
{
    static const struct {
        enum id_kind kind;
        const char *id;
    } cases[] = {
        {ID_FRAMEWORK, "B-001"},
        {ID_FRAMEWORK, "C-0001"},
        {ID_FRAMEWORK, "B0001"},
        {ID_FRAMEWORK, "B-00x1"},
        {ID_AGENT, "B-O1"},
        {ID_AGENT, "B-S"},
        {ID_OFFER, "B-S1"},
        {ID_OFFER, "B-O-1"},
        {ID_OFFER, "B-O18446744073709551616"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t n = 42;
        ck_assert_msg(id_counter_of(cases[i].kind, "B", cases[i].id, &n) == -1,
                      "accepted %s", cases[i].id);
        ck_assert_uint_eq(n, 42);
    }
}
END_TEST

static int cmp_derived(const void *a, const void *b)
{
    return strcmp(a, b);
}

START_TEST(test_derived_unique_100k)
{
    enum { N = 100000 };
    char base[ID_UUID_SIZE];
    id_uuid_v4(base);
    char(*all)[ID_DERIVED_SIZE] = calloc(N, ID_DERIVED_SIZE);
    ck_assert_ptr_nonnull(all);
    for (uint64_t i = 0; i < N; i++)
        ck_assert_int_eq(id_derive(ID_OFFER, base, i, all[i], ID_DERIVED_SIZE),
                         0);
    qsort(all, N, ID_DERIVED_SIZE, cmp_derived);
    for (size_t i = 1; i < N; i++)
        ck_assert_str_ne(all[i - 1], all[i]);
    free(all);
}
END_TEST

static Suite *ids_suite(void)
{
    Suite *s = suite_create("ids");
    TCase *tc = tcase_create("uuid");
    tcase_add_test(tc, test_uuid_format);
    tcase_add_test(tc, test_uuid_unique_100k);
    tcase_add_test(tc, test_uuid_format_known);
    tcase_add_test(tc, test_uuid_parse_bad);
    suite_add_tcase(s, tc);
    tc = tcase_create("derived");
    tcase_add_test(tc, test_derive);
    tcase_add_test(tc, test_derive_uuid_base_fits);
    tcase_add_test(tc, test_derive_too_small);
    tcase_add_test(tc, test_counter_of_rejects);
    tcase_add_test(tc, test_derived_unique_100k);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(ids_suite)
