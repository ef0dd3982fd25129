/*
 * TLS end to end (docs/security.md, "TLS"): the real master started with
 * LIBPROCESS_SSL_* refuses a client without a certificate when
 * REQUIRE_CERT is set, a client that trusts another CA refuses the master,
 * an agent that trusts another CA cannot register, and downgrade lets
 * plain HTTP in only when asked. The cluster suite itself runs over TLS as
 * the *_tls ctest entries (OFFERD_E2E_TLS=1, harness_tls.h).
 */
#include "harness.h"
#include "harness_tls.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static struct e2e_proc master, agent;

static void make_certs(void)
{
    ck_assert_int_eq(e2e_tls_make_certs(), 0);
}

static void teardown(void)
{
    e2e_proc_cleanup(&agent);
    e2e_proc_cleanup(&master);
}

/* Start the master with TLS, client certificates required. */
static void start_master(bool downgrade)
{
    e2e_tls_env_cluster(downgrade);
    e2e_tls_use(true); /* the harness's own client, to see it healthy */
    ck_assert_msg(e2e_start_master(&master, NULL) == 0, "offerd did not start");
}

START_TEST(test_require_cert)
{
    start_master(false);
    /* The cluster's CA and a client certificate: in. */
    ck_assert_int_eq(e2e_tls_get_status(master.port, "/health", "ca.crt",
                                        "client.crt", "client.key", 5000),
                     200);
    /* No certificate: the handshake is refused. */
    ck_assert_int_eq(
        e2e_tls_get_status(master.port, "/health", "ca.crt", NULL, NULL, 5000),
        -1);
    /* A certificate from another CA: refused too. */
    ck_assert_int_eq(e2e_tls_get_status(master.port, "/health", "ca.crt",
                                        "other.crt", "other.key", 5000),
                     -1);
    /* Plain HTTP: refused without downgrade. */
    ck_assert_int_eq(
        e2e_tls_get_status(master.port, "/health", NULL, NULL, NULL, 5000), -1);
    /* Each refusal was one failed handshake, and the master still serves. */
    ck_assert_int_eq(e2e_tls_get_status(master.port, "/health", "ca.crt",
                                        "client.crt", "client.key", 5000),
                     200);
}
END_TEST

START_TEST(test_client_refuses_master_of_other_ca)
{
    start_master(false);
    /* The harness's client trusting only another CA refuses the master's
     * certificate. */
    ck_assert_int_eq(e2e_tls_get_status(master.port, "/health", "other-ca.crt",
                                        "client.crt", "client.key", 5000),
                     -1);
}
END_TEST

START_TEST(test_agent_refuses_master_of_other_ca)
{
    start_master(false);
    /* An agent that trusts another CA never registers (its own port does
     * not require client certificates, so that the harness sees it up). */
    setenv("LIBPROCESS_SSL_CA_FILE", e2e_tls_file("other-ca.crt"), 1);
    setenv("LIBPROCESS_SSL_REQUIRE_CERT", "false", 1);
    ck_assert_int_eq(e2e_start_agent(&agent, master.port, NULL), 0);
    e2e_tls_env_cluster(false);
    ck_assert(e2e_wait_log(&agent, "certificate verify failed", 1, 20000));
    json_t *agents = e2e_get_json(master.port, "/slaves");
    ck_assert_ptr_nonnull(agents);
    ck_assert_uint_eq(json_array_size(json_object_get(agents, "slaves")), 0);
    json_decref(agents);
}
END_TEST

START_TEST(test_downgrade)
{
    start_master(true);
    /* Plain HTTP is served on the same port ... */
    ck_assert_int_eq(
        e2e_tls_get_status(master.port, "/health", NULL, NULL, NULL, 5000),
        200);
    /* ... and TLS too, with its rules: no certificate, no entry. */
    ck_assert_int_eq(e2e_tls_get_status(master.port, "/health", "ca.crt",
                                        "client.crt", "client.key", 5000),
                     200);
    ck_assert_int_eq(
        e2e_tls_get_status(master.port, "/health", "ca.crt", NULL, NULL, 5000),
        -1);
}
END_TEST

START_TEST(test_bad_key_refuses_to_start)
{
    e2e_tls_env_cluster(false);
    setenv("LIBPROCESS_SSL_KEY_FILE", e2e_tls_file("unrelated.key"), 1);
    char out[4096];
    const char *args[] = {"--ip=127.0.0.1", "--port=0", NULL};
    int rc = e2e_run(OFFERD_BIN, args, out, sizeof(out), 20000);
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(out, "does not match the certificate") != NULL, "%s",
                  out);
}
END_TEST

static Suite *tls_suite(void)
{
    Suite *s = suite_create("e2e_tls");
    TCase *tc = tcase_create("tls");
    tcase_add_unchecked_fixture(tc, make_certs, NULL);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_require_cert);
    tcase_add_test(tc, test_client_refuses_master_of_other_ca);
    tcase_add_test(tc, test_agent_refuses_master_of_other_ca);
    tcase_add_test(tc, test_downgrade);
    tcase_add_test(tc, test_bad_key_refuses_to_start);
    suite_add_tcase(s, tc);
    return s;
}

E2E_CHECK_MAIN(tls_suite)
