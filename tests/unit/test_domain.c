/*
 * --domain values (common/domain.h): inline JSON, a file, file://, and
 * each refusal with its reason.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "common/domain.h"
#include "common/json_pb.h"

#define EU                                                                     \
    "{\"fault_domain\":{\"region\":{\"name\":\"eu\"},\"zone\":{\"name\":"      \
    "\"a\"}}}"

START_TEST(test_domain_inline_json)
{
    char err[256];
    Mesos__V1__DomainInfo *d = domain_load("  " EU, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    ck_assert_str_eq(domain_region(d), "eu");
    ck_assert_str_eq(domain_zone(d), "a");
    jpb_free(&d->base);
    ck_assert_ptr_null(domain_region(NULL));
}
END_TEST

START_TEST(test_domain_file_and_file_url)
{
    char path[] = "/tmp/offerd-domain-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, EU, strlen(EU)), (ssize_t)strlen(EU));
    close(fd);
    char err[256], url[64];
    Mesos__V1__DomainInfo *d = domain_load(path, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    ck_assert_str_eq(domain_region(d), "eu");
    jpb_free(&d->base);
    snprintf(url, sizeof(url), "file://%s", path);
    d = domain_load(url, err, sizeof(err));
    ck_assert_msg(d != NULL, "%s", err);
    jpb_free(&d->base);
    unlink(path);
    ck_assert_ptr_null(domain_load(path, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "no such file"));
}
END_TEST

/* Refusals: each value and a piece of its reason. */
START_TEST(test_domain_refusals)
{
    static const struct {
        const char *spec, *reason;
    } cases[] = {
        {"", "empty value"},
        {"{", "line"},
        {"{}", "fault_domain: required"},
        {"{\"fault_domain\":{\"region\":{\"name\":\"eu\"}}}", "zone"},
        {"{\"fault_domain\":{\"region\":{\"name\":\"\"},\"zone\":{\"name\":"
         "\"a\"}}}",
         "must be non-empty"},
        {"{\"fault_domain\":{\"region\":\"eu\",\"zone\":\"a\"}}", "region"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        Mesos__V1__DomainInfo *d = domain_load(cases[i].spec, err, sizeof(err));
        ck_assert_msg(d == NULL, "accepted %s", cases[i].spec);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "%s: reason '%s' lacks '%s'", cases[i].spec, err,
                      cases[i].reason);
    }
}
END_TEST

static Suite *domain_suite(void)
{
    Suite *s = suite_create("domain");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_domain_inline_json);
    tcase_add_test(tc, test_domain_file_and_file_url);
    tcase_add_test(tc, test_domain_refusals);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(domain_suite)
