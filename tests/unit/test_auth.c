/*
 * Tests of common/auth.h (credentials files, HTTP Basic, secret
 * comparison) and common/acl.h (Mesos's ACL JSON and the local
 * authorizer's matching).
 */
#include "common/acl.h"
#include "common/auth.h"
#include "common/http_fake.h"

#include "check_main.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write text to a new temporary file; its path in path (64 bytes). */
static void temp_file(char *path, const char *text)
{
    snprintf(path, 64, "/tmp/offerd-auth-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t n = strlen(text);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

START_TEST(test_credentials_json_and_text)
{
    /* One literal split over two lines: outside the array, where clang's
     * -Wstring-concatenation does not take it for a missing comma. */
    static const char json_form[] =
        "{\"credentials\": [{\"principal\": \"fw\", \"secret\": \"s1\"}, "
        "{\"principal\": \"ops\", \"secret\": \"s2\"}]}";
    static const char *const forms[] = {
        json_form,
        "fw s1\n\nops   s2\n",
        "  fw\ts1\r\nops s2",
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        char path[64], err[256] = "";
        temp_file(path, forms[i]);
        struct auth_credentials *c =
            auth_credentials_load(path, err, sizeof(err));
        ck_assert_msg(c != NULL, "form %zu: %s", i, err);
        ck_assert_uint_eq(auth_credentials_count(c), 2);
        ck_assert(auth_credentials_check(c, "fw", "s1"));
        ck_assert(auth_credentials_check(c, "ops", "s2"));
        ck_assert(!auth_credentials_check(c, "fw", "s2"));
        ck_assert(!auth_credentials_check(c, "fw", "s"));
        ck_assert(!auth_credentials_check(c, "fw", "s1x"));
        ck_assert(!auth_credentials_check(c, "nobody", "s1"));
        auth_credentials_free(c);
        /* Mesos's file:// form of the path. */
        char url[80];
        snprintf(url, sizeof(url), "file://%s", path);
        c = auth_credentials_load(url, err, sizeof(err));
        ck_assert_ptr_nonnull(c);
        auth_credentials_free(c);
        unlink(path);
    }
}
END_TEST

START_TEST(test_credentials_refused)
{
    static const struct {
        const char *text, *reason;
    } cases[] = {
        {"", "no credential given"},
        {"fw\n", "line 1: expected 'principal secret'"},
        {"fw s1 extra\n", "line 1: expected 'principal secret'"},
        {"fw s1\nfw s2\n", "line 2: principal 'fw' given twice"},
        {"{\"credentials\": 3}", "expected {\"credentials\": [...]}"},
        {"{\"credentials\": [{\"secret\": \"x\"}]}",
         "credentials[0]: expected"},
        {"{\"credentials\": [{\"principal\": \"\", \"secret\": \"x\"}]}",
         "credentials[0]: empty principal"},
        {"{\"credentials\": [", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        struct auth_credentials *c = auth_credentials_parse(
            cases[i].text, strlen(cases[i].text), err, sizeof(err));
        ck_assert_msg(c == NULL, "case %zu accepted", i);
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "case %zu: '%s' lacks '%s'", i, err, cases[i].reason);
        ck_assert_ptr_null(strchr(err, '\n'));
    }
    char err[256];
    ck_assert_ptr_null(
        auth_credentials_load("/nonexistent/creds", err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "no such file"));
}
END_TEST

START_TEST(test_client_credential)
{
    char path[64], err[256] = "";
    struct auth_credential c;
    temp_file(path, "{\"principal\": \"agent\", \"secret\": \"pw\"}\n");
    ck_assert_int_eq(auth_credential_load(path, &c, err, sizeof(err)), 0);
    ck_assert_str_eq(c.principal, "agent");
    ck_assert_str_eq(c.secret, "pw");
    unlink(path);
    temp_file(path, "agent pw\n");
    ck_assert_int_eq(auth_credential_load(path, &c, err, sizeof(err)), 0);
    ck_assert_str_eq(c.principal, "agent");
    ck_assert_str_eq(c.secret, "pw");
    unlink(path);
    temp_file(path, "a b\nc d\n");
    ck_assert_int_eq(auth_credential_load(path, &c, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "one 'principal secret' line"));
    unlink(path);
}
END_TEST

START_TEST(test_secret_equal)
{
    ck_assert(auth_secret_equal("", ""));
    ck_assert(auth_secret_equal("abc", "abc"));
    ck_assert(!auth_secret_equal("abc", "abd"));
    ck_assert(!auth_secret_equal("abc", "ab"));
    ck_assert(!auth_secret_equal("ab", "abc"));
    ck_assert(!auth_secret_equal("", "a"));
}
END_TEST

START_TEST(test_basic_round_trip)
{
    char *h = auth_basic_header("fw", "pa:ss");
    ck_assert_str_eq(h, "Basic Znc6cGE6c3M=");
    struct auth_credential c;
    char err[128];
    ck_assert_int_eq(auth_basic_parse(h, &c, err, sizeof(err)), 0);
    ck_assert_str_eq(c.principal, "fw");
    ck_assert_str_eq(c.secret, "pa:ss"); /* split at the first ':' */
    free(h);
    ck_assert_int_eq(auth_basic_parse("basic Znc6cw==", &c, err, sizeof(err)),
                     0);
    ck_assert_str_eq(c.principal, "fw");
    static const char *const bad[] = {
        "Bearer abc", "Basic", "Basic !!!!", "Basic Znc=", /* "fw", no ':' */
        "Basic OnM=",                                      /* ":s" */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(auth_basic_parse(bad[i], &c, err, sizeof(err)) == -1,
                      "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(test_auth_request)
{
    struct auth_credentials *creds =
        auth_credentials_parse("fw s1\n", 6, NULL, 0);
    ck_assert_ptr_nonnull(creds);
    static const struct {
        const char *header;
        enum auth_result want;
    } cases[] = {
        {NULL, AUTH_ANONYMOUS},
        {"Basic Znc6czE=", AUTH_OK},     /* fw:s1 */
        {"Basic Znc6czI=", AUTH_FAILED}, /* fw:s2 */
        {"Basic eDpzMQ==", AUTH_FAILED}, /* x:s1 */
        {"Digest x", AUTH_FAILED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/state");
        if (cases[i].header != NULL)
            http_fake_add_header(x, "Authorization", cases[i].header);
        char principal[AUTH_MAX_PRINCIPAL + 1] = "", err[128] = "";
        struct http_request *req = http_fake_request(x);
        enum auth_result r =
            auth_request(creds, req, principal, err, sizeof(err));
        http_reply(req, 204, NULL, NULL, 0); /* frees the request */
        ck_assert_int_eq(r, cases[i].want);
        if (r == AUTH_OK)
            ck_assert_str_eq(principal, "fw");
        http_fake_free(x);
    }
    auth_credentials_free(creds);
}
END_TEST

START_TEST(test_reply_unauthorized)
{
    struct http_fake *x = http_fake_new(NULL, HTTP_GET, "/state");
    auth_reply_unauthorized(http_fake_request(x), "authentication required");
    ck_assert_int_eq(http_fake_status(x), 401);
    ck_assert_str_eq(http_fake_reply_header(x, "WWW-Authenticate"),
                     "Basic realm=\"mesos\"");
    size_t len;
    ck_assert_str_eq((const char *)http_fake_body(x, &len),
                     "authentication required\n");
    http_fake_free(x);
}
END_TEST

/* ---- ACLs ---- */

static struct acls *acls_of(const char *json)
{
    char err[256] = "";
    struct acls *a = acls_parse(json, strlen(json), err, sizeof(err));
    ck_assert_msg(a != NULL, "%s", err);
    return a;
}

START_TEST(test_acl_first_match_wins)
{
    struct acls *a = acls_of("{\"run_tasks\": ["
                             " {\"principals\": {\"values\": [\"fw\"]},"
                             "  \"users\": {\"values\": [\"nobody\"]}},"
                             " {\"principals\": {\"type\": \"ANY\"},"
                             "  \"users\": {\"type\": \"NONE\"}}]}");
    ck_assert(acls_authorized(a, "fw", ACL_RUN_TASKS, "nobody"));
    ck_assert(!acls_authorized(a, "fw", ACL_RUN_TASKS, "root"));
    ck_assert(!acls_authorized(a, "eve", ACL_RUN_TASKS, "nobody"));
    ck_assert(!acls_authorized(a, NULL, ACL_RUN_TASKS, "nobody"));
    /* Other actions: no rule, permissive by default. */
    ck_assert(acls_authorized(a, "eve", ACL_RESERVE_RESOURCES, "r"));
    acls_free(a);
}
END_TEST

START_TEST(test_acl_permissive_false)
{
    struct acls *a = acls_of(
        "{\"permissive\": false,"
        " \"reserve_resources\": [{\"principals\": {\"values\": [\"ops\"]},"
        "                          \"roles\": {\"type\": \"ANY\"}}],"
        " \"register_frameworks\": [{\"principals\": {\"values\": [\"fw\"]},"
        "                           \"roles\": {\"values\": [\"web\"]}}]}");
    ck_assert(acls_authorized(a, "ops", ACL_RESERVE_RESOURCES, "any-role"));
    ck_assert(acls_authorized(a, "ops", ACL_RESERVE_RESOURCES, NULL));
    ck_assert(!acls_authorized(a, "fw", ACL_RESERVE_RESOURCES, "web"));
    ck_assert(acls_authorized(a, "fw", ACL_REGISTER_FRAMEWORKS, "web"));
    ck_assert(!acls_authorized(a, "fw", ACL_REGISTER_FRAMEWORKS, "db"));
    /* An object not given (ANY) is not matched by a rule listing values. */
    ck_assert(!acls_authorized(a, "fw", ACL_REGISTER_FRAMEWORKS, NULL));
    ck_assert(!acls_authorized(a, "ops", ACL_DRAIN_AGENTS, NULL));
    acls_free(a);
}
END_TEST

/* An approver answers as acls_authorized for every principal and object,
 * and knows when its answer does not depend on the object. */
START_TEST(test_acl_approver_agrees)
{
    /* Each concatenation in parentheses: one element each (clang's
     * -Wstring-concatenation). */
    static const char *const files[] = {
        ("{\"view_tasks\": ["
         " {\"principals\": {\"values\": [\"ops\"]}, \"users\": {\"type\": "
         "\"ANY\"}},"
         " {\"principals\": {\"values\": [\"fw\"]}, \"users\": {\"values\": "
         "[\"nobody\", \"www\"]}},"
         " {\"principals\": {\"values\": [\"fw\"]}, \"users\": {\"values\": "
         "[\"root\"]}},"
         " {\"principals\": {\"type\": \"ANY\"}, \"users\": {\"type\": "
         "\"NONE\"}}]}"),
        ("{\"permissive\": false, \"view_tasks\": ["
         " {\"principals\": {\"values\": [\"fw\"]}, \"users\": {\"values\": "
         "[\"nobody\"]}}]}"),
        "{\"permissive\": true}",
        ("{\"view_tasks\": [{\"principals\": {\"type\": \"NONE\"},"
         " \"users\": {\"type\": \"ANY\"}}]}"),
    };
    static const char *const principals[] = {"ops", "fw", "eve", NULL};
    static const char *const users[] = {"nobody", "www", "root", "x", NULL};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        struct acls *a = acls_of(files[f]);
        for (size_t p = 0; p < 4; p++) {
            struct acl_approver *ap =
                acl_approver_new(a, principals[p], ACL_VIEW_TASKS);
            bool verdict = false;
            bool constant = acl_approver_constant(ap, &verdict);
            for (size_t u = 0; u < 5; u++) {
                bool want =
                    acls_authorized(a, principals[p], ACL_VIEW_TASKS, users[u]);
                ck_assert_msg(acl_approver_allows(ap, users[u]) == want,
                              "acls %zu principal %s user %s", f,
                              principals[p] ? principals[p] : "(anonymous)",
                              users[u] ? users[u] : "(any)");
                if (constant)
                    ck_assert(verdict == want);
            }
            acl_approver_free(ap);
        }
        acls_free(a);
    }
    /* ops under the first file: ANY object first, so constant. */
    struct acls *a = acls_of(files[0]);
    struct acl_approver *ap = acl_approver_new(a, "ops", ACL_VIEW_TASKS);
    bool verdict = false;
    ck_assert(acl_approver_constant(ap, &verdict) && verdict);
    acl_approver_free(ap);
    ap = acl_approver_new(a, "fw", ACL_VIEW_TASKS);
    ck_assert(!acl_approver_constant(ap, &verdict));
    acl_approver_free(ap);
    ap = acl_approver_new(a, "eve", ACL_VIEW_TASKS);
    ck_assert(acl_approver_constant(ap, &verdict) && !verdict);
    acl_approver_free(ap);
    acls_free(a);
    /* Without ACLs everything is allowed. */
    ap = acl_approver_new(NULL, "eve", ACL_VIEW_TASKS);
    ck_assert(acl_approver_constant(ap, &verdict) && verdict);
    acl_approver_free(ap);
}
END_TEST

/* Mesos's match and allow matrices, request by entity. */
START_TEST(test_acl_matrix)
{
    static const struct {
        const char *subject; /* the rule's principals */
        const char *principal;
        bool want;
    } cases[] = {
        {"{\"type\": \"ANY\"}", "p", true},
        {"{\"type\": \"ANY\"}", NULL, true},
        {"{\"type\": \"NONE\"}", "p", false},
        {"{\"type\": \"NONE\"}", NULL, false},
        {"{\"values\": [\"p\"]}", "p", true},
        {"{\"values\": [\"p\"]}", "q", true},  /* no match: permissive */
        {"{\"values\": [\"p\"]}", NULL, true}, /* no match: permissive */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char json[256];
        snprintf(json, sizeof(json),
                 "{\"view_flags\": [{\"principals\": %s, \"flags\": "
                 "{\"type\": \"ANY\"}}]}",
                 cases[i].subject);
        struct acls *a = acls_of(json);
        ck_assert_msg(acls_authorized(a, cases[i].principal, ACL_VIEW_FLAGS,
                                      NULL) == cases[i].want,
                      "case %zu", i);
        acls_free(a);
    }
    ck_assert(acls_authorized(NULL, NULL, ACL_RUN_TASKS, "root"));
}
END_TEST

START_TEST(test_acl_refused)
{
    static const struct {
        const char *json, *reason;
    } cases[] = {
        {"[]", "expected a JSON object"},
        {"{\"run_task\": []}", "unknown field 'run_task'"},
        {"{\"run_tasks\": {}}", "run_tasks: expected an array"},
        {"{\"run_tasks\": [{\"principals\": {\"type\": \"ANY\"}}]}",
         "run_tasks[0]: requires 'principals' and 'users'"},
        {"{\"run_tasks\": [{\"principals\": {\"type\": \"ALL\"},"
         " \"users\": {}}]}",
         "run_tasks[0].principals.type"},
        {"{\"run_tasks\": [{\"principals\": {\"values\": [1]},"
         " \"users\": {}}]}",
         "run_tasks[0].principals.values[0]: expected a string"},
        {"{\"permissive\": \"no\"}", "permissive: expected a bool"},
        {"{", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        ck_assert_ptr_null(
            acls_parse(cases[i].json, strlen(cases[i].json), err, sizeof(err)));
        ck_assert_msg(strstr(err, cases[i].reason) != NULL,
                      "case %zu: '%s' lacks '%s'", i, err, cases[i].reason);
    }
}
END_TEST

START_TEST(test_acl_load_file_and_ignored_actions)
{
    char path[64], err[256] = "";
    temp_file(path, "{\"launch_nested_containers_as_user\": [{\"principals\":"
                    " {\"type\": \"ANY\"}, \"users\": {\"type\": \"ANY\"}}],"
                    " \"permissive\": false}");
    struct acls *a = acls_load(path, err, sizeof(err));
    ck_assert_msg(a != NULL, "%s", err);
    ck_assert(!acls_authorized(a, "x", ACL_VIEW_FLAGS, NULL));
    acls_free(a);
    a = acls_load("  {\"permissive\": true}", err, sizeof(err));
    ck_assert_ptr_nonnull(a);
    acls_free(a);
    ck_assert_ptr_null(acls_load("/nonexistent/acls", err, sizeof(err)));
    unlink(path);
    ck_assert_str_eq(acl_action_name(ACL_RUN_TASKS), "run_tasks");
    ck_assert_str_eq(acl_action_name(ACL_DRAIN_AGENTS), "drain_agents");
}
END_TEST

static Suite *auth_suite(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("auth");
    tcase_add_test(tc, test_credentials_json_and_text);
    tcase_add_test(tc, test_credentials_refused);
    tcase_add_test(tc, test_client_credential);
    tcase_add_test(tc, test_secret_equal);
    tcase_add_test(tc, test_basic_round_trip);
    tcase_add_test(tc, test_auth_request);
    tcase_add_test(tc, test_reply_unauthorized);
    suite_add_tcase(s, tc);
    TCase *acl = tcase_create("acl");
    tcase_add_test(acl, test_acl_first_match_wins);
    tcase_add_test(acl, test_acl_permissive_false);
    tcase_add_test(acl, test_acl_matrix);
    tcase_add_test(acl, test_acl_approver_agrees);
    tcase_add_test(acl, test_acl_refused);
    tcase_add_test(acl, test_acl_load_file_and_ignored_actions);
    suite_add_tcase(s, acl);
    return s;
}

OFFERD_CHECK_MAIN(auth_suite)
