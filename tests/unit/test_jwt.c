/*
 * HS256 JSON Web Tokens (common/jwt.h): a token made elsewhere verifies,
 * ours round-trip, and every tampering is refused.
 */
#include "check_main.h"
#include "common/jwt.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char KEY[] = "your-256-bit-secret";

/* jwt.io's example token, signed with KEY. */
static const char JWT_IO[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                             "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lI"
                             "iwiaWF0IjoxNTE2MjM5MDIyfQ."
                             "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

static json_t *verify(const char *token, const char *key, char *err)
{
    return jwt_hs256_verify(token, strlen(token), (const uint8_t *)key,
                            strlen(key), err, 256);
}

START_TEST(test_verifies_a_foreign_token)
{
    char err[256] = "";
    json_t *c = verify(JWT_IO, KEY, err);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert_str_eq(json_string_value(json_object_get(c, "name")), "John Doe");
    json_decref(c);
    /* Another key: refused. */
    ck_assert_ptr_null(verify(JWT_IO, "another-secret", err));
    ck_assert_str_eq(err, "token signature does not match");
}
END_TEST

START_TEST(test_round_trip)
{
    json_t *claims =
        json_pack("{s:s, s:s, s:s}", "fid", "fw-1", "eid", "ex", "cid", "c1");
    char *t = jwt_hs256_sign(claims, (const uint8_t *)KEY, strlen(KEY));
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_null(strchr(t, '='));
    ck_assert_ptr_null(strchr(t, '+'));
    char err[256];
    json_t *c = verify(t, KEY, err);
    ck_assert_msg(c != NULL, "%s", err);
    ck_assert(json_equal(c, claims));
    json_decref(c);
    free(t);
    json_decref(claims);
    json_t *arr = json_array();
    ck_assert_ptr_null(jwt_hs256_sign(arr, (const uint8_t *)KEY, strlen(KEY)));
    json_decref(arr);
}
END_TEST

START_TEST(test_tampering_refused)
{
    static const struct {
        const char *token, *why;
    } cases[] = {
        {"", "token is empty or longer than 4096 bytes"},
        {"abc", "expected 3 components in token"},
        {"a.b.c.d", "expected 3 components in token"},
        /* {"alg":"none","typ":"JWT"}, no signature: never accepted. */
        {"eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."
         "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2Mj"
         "M5MDIyfQ.",
         "token header is not an HS256 JWT header"},
        /* The payload changed ("John Doe" -> "John Doa"). */
        {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
         "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9hIiwiaWF0IjoxNTE2Mj"
         "M5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
         "token signature does not match"},
        /* A signature cut short. */
        {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
         "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2Mj"
         "M5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQ",
         "token signature does not match"},
        /* Not base64url. */
        {"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.Sfl*",
         "token signature is not base64url"},
        {"!!!.e30.abc", "token header is not an HS256 JWT header"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        ck_assert_ptr_null(verify(cases[i].token, KEY, err));
        ck_assert_msg(strcmp(err, cases[i].why) == 0, "case %zu: '%s'", i, err);
    }
    /* Too long to look at. */
    char *big = malloc(JWT_MAX_TOKEN + 2);
    memset(big, 'a', JWT_MAX_TOKEN + 1);
    big[JWT_MAX_TOKEN + 1] = '\0';
    char err[256];
    ck_assert_ptr_null(verify(big, KEY, err));
    free(big);
}
END_TEST

static Suite *jwt_suite(void)
{
    Suite *s = suite_create("jwt");
    TCase *tc = tcase_create("hs256");
    tcase_add_test(tc, test_verifies_a_foreign_token);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_tampering_refused);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(jwt_suite)
