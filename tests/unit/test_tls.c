/*
 * common/tls: the LIBPROCESS_SSL_* configuration, refusals of a bad one,
 * and TLS round trips on loopback between common/http's server and
 * common/http_client in one process. Certificates are made once per run
 * by tests/tls/gen-certs.sh (in the parent, before Check forks a test).
 *
 * A server reads its environment when it binds and the process's client
 * on its first request, so a test sets the server's variables, binds, then
 * sets the client's.
 */
#include "common/flags.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/tls.h"

#include "check_main.h"

#include <check.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char certs[256];

static void make_certs(void)
{
    snprintf(certs, sizeof(certs), "/tmp/offerd-tls-unit-%d", (int)getpid());
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "bash %s/tests/tls/gen-certs.sh %s",
             OFFERD_SOURCE_DIR, certs);
    ck_assert_int_eq(system(cmd), 0);
}

static void remove_certs(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", certs);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", certs);
}

static const char *cert(const char *name)
{
    static char buf[8][320];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof(buf[0]), "%s/%s", certs, name);
    return b;
}

static const char *const all_vars[] = {
    "ENABLED",      "SUPPORT_DOWNGRADE",
    "VERIFY_CERT",  "VERIFY_SERVER_CERT",
    "REQUIRE_CERT", "REQUIRE_CLIENT_CERT",
    "CERT_FILE",    "KEY_FILE",
    "CA_FILE",      "CA_DIR",
    "CIPHERS",      "ENABLE_TLS_V1_3",
};

static void env_reset(void)
{
    char name[64];
    for (size_t i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++) {
        snprintf(name, sizeof(name), "LIBPROCESS_SSL_%s", all_vars[i]);
        unsetenv(name);
        snprintf(name, sizeof(name), "SSL_%s", all_vars[i]);
        unsetenv(name);
    }
}

static void env(const char *var, const char *value)
{
    char name[64];
    snprintf(name, sizeof(name), "LIBPROCESS_SSL_%s", var);
    setenv(name, value, 1);
}

/* ---- Configuration ---- */

static int parse(char *const *e, struct tls_config *c, char *err)
{
    return tls_config_from_env(e, c, err, 256);
}

START_TEST(test_config_defaults)
{
    char *e[] = {NULL};
    struct tls_config c;
    char err[256];
    ck_assert_int_eq(parse(e, &c, err), 0);
    ck_assert(!c.enabled);
    ck_assert(!c.support_downgrade);
    ck_assert(!c.verify_server_cert);
    ck_assert(!c.require_client_cert);
    ck_assert(c.tls_v1_2);
    ck_assert(!c.tls_v1_3 && !c.tls_v1_1 && !c.tls_v1_0);
    ck_assert_int_eq(c.verify_depth, 4);
    ck_assert_ptr_null(c.cert_file);
    tls_config_clear(&c);
}
END_TEST

START_TEST(test_config_values)
{
    static const struct {
        const char *var;
        bool want_enabled, want_verify, want_require, want_downgrade;
    } rows[] = {
        {"LIBPROCESS_SSL_ENABLED=true", true, false, false, false},
        {"LIBPROCESS_SSL_ENABLED=1", true, false, false, false},
        {"LIBPROCESS_SSL_ENABLED=FALSE", false, false, false, false},
        {"SSL_ENABLED=true", true, false, false, false}, /* Mesos < 1.0 */
        {"LIBPROCESS_SSL_VERIFY_CERT=1", false, true, false, false},
        {"LIBPROCESS_SSL_VERIFY_SERVER_CERT=true", false, true, false, false},
        /* requiring client certificates implies verifying servers */
        {"LIBPROCESS_SSL_REQUIRE_CERT=true", false, true, true, false},
        {"LIBPROCESS_SSL_REQUIRE_CLIENT_CERT=1", false, true, true, false},
        {"LIBPROCESS_SSL_SUPPORT_DOWNGRADE=true", false, false, false, true},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *e[] = {(char *)rows[i].var, NULL};
        struct tls_config c;
        char err[256];
        ck_assert_msg(parse(e, &c, err) == 0, "%s: %s", rows[i].var, err);
        ck_assert_msg(c.enabled == rows[i].want_enabled, "%s", rows[i].var);
        ck_assert_msg(c.verify_server_cert == rows[i].want_verify, "%s",
                      rows[i].var);
        ck_assert_msg(c.require_client_cert == rows[i].want_require, "%s",
                      rows[i].var);
        ck_assert_msg(c.support_downgrade == rows[i].want_downgrade, "%s",
                      rows[i].var);
        tls_config_clear(&c);
    }
    char *e[] = {
        "LIBPROCESS_SSL_CERT_FILE=/a.crt",     "LIBPROCESS_SSL_KEY_FILE=/a.key",
        "LIBPROCESS_SSL_CA_DIR=/cas",          "LIBPROCESS_SSL_VERIFY_DEPTH=2",
        "LIBPROCESS_SSL_ENABLE_TLS_V1_3=true", NULL};
    struct tls_config c;
    char err[256];
    ck_assert_int_eq(parse(e, &c, err), 0);
    ck_assert_str_eq(c.cert_file, "/a.crt");
    ck_assert_str_eq(c.key_file, "/a.key");
    ck_assert_str_eq(c.ca_dir, "/cas");
    ck_assert_int_eq(c.verify_depth, 2);
    ck_assert(c.tls_v1_3 && c.tls_v1_2);
    tls_config_clear(&c);
}
END_TEST

START_TEST(test_config_bad_values)
{
    static const struct {
        const char *var;
        const char *reason; /* in the error */
    } rows[] = {
        {"LIBPROCESS_SSL_ENABLED=yes", "LIBPROCESS_SSL_ENABLED: expected"},
        {"SSL_REQUIRE_CERT=2", "SSL_REQUIRE_CERT: expected"},
        {"LIBPROCESS_SSL_VERIFY_DEPTH=deep", "LIBPROCESS_SSL_VERIFY_DEPTH"},
        {"LIBPROCESS_SSL_ENABLE_TLS_V1_2=false", "every protocol version"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *e[] = {(char *)rows[i].var, NULL};
        struct tls_config c;
        char err[256] = "";
        ck_assert_int_eq(parse(e, &c, err), -1);
        ck_assert_msg(strstr(err, rows[i].reason) != NULL, "%s: '%s'",
                      rows[i].var, err);
        ck_assert_ptr_null(strchr(err, '\n'));
        ck_assert_ptr_null(c.cert_file);
    }
}
END_TEST

START_TEST(test_flags_set_the_environment)
{
    env_reset();
    env("CA_FILE", "/from/env.crt");
    env("VERIFY_CERT", "true");
    struct tls_flags v;
    memset(&v, 0, sizeof(v));
    struct flag_def defs[TLS_FLAG_ROWS];
    tls_flag_defs(&v, defs);
    struct flags *f = flags_new("t", "test", defs, TLS_FLAG_ROWS);
    char *argv[] = {"t",
                    "--ssl_enabled",
                    "--ssl_cert_file=/a.crt",
                    "--ssl_key_file=/a.key",
                    "--ssl_verify_cert=false",
                    NULL};
    char *no_env[] = {NULL};
    char err[256];
    ck_assert_int_eq(flags_parse(f, 5, argv, no_env, err, sizeof(err)),
                     FLAGS_OK);
    tls_flags_export(f, &v);
    ck_assert_str_eq(getenv("LIBPROCESS_SSL_ENABLED"), "true");
    ck_assert_str_eq(getenv("LIBPROCESS_SSL_CERT_FILE"), "/a.crt");
    ck_assert_str_eq(getenv("LIBPROCESS_SSL_KEY_FILE"), "/a.key");
    ck_assert_str_eq(getenv("LIBPROCESS_SSL_VERIFY_CERT"), "false");
    /* Flags not given leave the environment alone. */
    ck_assert_str_eq(getenv("LIBPROCESS_SSL_CA_FILE"), "/from/env.crt");
    ck_assert_ptr_null(getenv("LIBPROCESS_SSL_REQUIRE_CERT"));
    flags_free(f);
}
END_TEST

/* ---- Refusals to start ---- */

static void server_refused(const char *cert_file, const char *key_file,
                           const char *reason)
{
    struct tls_config c = {
        .enabled = true, .verify_depth = 4, .tls_v1_2 = true};
    c.cert_file = cert_file ? strdup(cert_file) : NULL;
    c.key_file = key_file ? strdup(key_file) : NULL;
    char err[512] = "";
    struct tls_server *s = tls_server_new(&c, err, sizeof(err));
    ck_assert_ptr_null(s);
    ck_assert_msg(strstr(err, reason) != NULL, "want '%s' in '%s'", reason,
                  err);
    ck_assert_ptr_null(strchr(err, '\n'));
    tls_config_clear(&c);
}

START_TEST(test_server_refuses_bad_files)
{
    server_refused(cert("server.crt"), NULL,
                   "LIBPROCESS_SSL_KEY_FILE is required");
    server_refused(NULL, cert("server.key"),
                   "LIBPROCESS_SSL_CERT_FILE is required");
    server_refused(cert("nonexistent.crt"), cert("server.key"),
                   "LIBPROCESS_SSL_CERT_FILE: cannot load");
    server_refused(cert("server.crt"), cert("nonexistent.key"),
                   "LIBPROCESS_SSL_KEY_FILE: cannot load");
    server_refused(cert("server.crt"), cert("unrelated.key"),
                   "does not match the certificate");
    /* a key is no certificate */
    server_refused(cert("server.key"), cert("server.key"),
                   "LIBPROCESS_SSL_CERT_FILE: cannot load");
}
END_TEST

START_TEST(test_bind_refused_by_bad_environment)
{
    env_reset();
    env("ENABLED", "true");
    env("CERT_FILE", cert("server.crt"));
    env("KEY_FILE", cert("other.key"));
    struct event_base *b = event_base_new();
    struct http_server *s = http_server_new(b, NULL);
    char err[512] = "";
    uint16_t p = 0;
    ck_assert_int_eq(http_server_bind(s, "127.0.0.1", 0, &p, err, sizeof(err)),
                     -1);
    ck_assert_msg(strstr(err, "does not match") != NULL, "%s", err);
    env("ENABLED", "maybe");
    ck_assert_int_eq(http_server_bind(s, "127.0.0.1", 0, &p, err, sizeof(err)),
                     -1);
    ck_assert_msg(strstr(err, "LIBPROCESS_SSL_ENABLED") != NULL, "%s", err);
    http_server_free(s);
    event_base_free(b);
}
END_TEST

/* ---- Round trips ---- */

static struct event_base *base;
static struct http_server *srv;
static uint16_t port;
static char big[3 << 20]; /* a reply larger than a socket's buffers */

static void h_hello(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, "text/plain", "hello", 5);
}

static void h_big(struct http_request *req, void *arg)
{
    (void)arg;
    http_reply(req, 200, "application/octet-stream", big, sizeof(big));
}

/* Start a server with the environment as it is now, and opts (NULL:
 * defaults; borrowed, must outlive the server). */
static void server_start_with(const struct http_server_options *opts)
{
    base = event_base_new();
    srv = http_server_new(base, opts);
    char err[512] = "";
    ck_assert_msg(
        http_server_bind(srv, "127.0.0.1", 0, &port, err, sizeof(err)) == 0,
        "%s", err);
    ck_assert_int_eq(http_server_route(srv, "/hello", HTTP_GET, h_hello, NULL),
                     0);
    ck_assert_int_eq(http_server_route(srv, "/big", HTTP_GET, h_big, NULL), 0);
}

static void server_start(void)
{
    server_start_with(NULL);
}

static void teardown(void)
{
    http_server_free(srv);
    srv = NULL;
    if (base != NULL)
        event_base_free(base);
    base = NULL;
}

/* Server: TLS with the test CA's certificate. */
static void server_env(void)
{
    env_reset();
    env("ENABLED", "true");
    env("CERT_FILE", cert("server.crt"));
    env("KEY_FILE", cert("server.key"));
    env("CA_FILE", cert("ca.crt"));
}

/* Client: TLS, verifying with ca_file (NULL: no verification), presenting
 * name.crt/.key when name is set. */
static void client_env(const char *ca_file, const char *name)
{
    env_reset();
    env("ENABLED", "true");
    if (ca_file != NULL) {
        env("VERIFY_CERT", "true");
        env("CA_FILE", cert(ca_file));
    }
    if (name != NULL) {
        char f[64];
        snprintf(f, sizeof(f), "%s.crt", name);
        env("CERT_FILE", cert(f));
        snprintf(f, sizeof(f), "%s.key", name);
        env("KEY_FILE", cert(f));
    }
}

struct result {
    int done;
    int status;
    char error[256];
    size_t body_len;
    char head[16];
};

static void on_done(const struct http_client_response *r, void *arg)
{
    struct result *res = arg;
    res->status = http_client_status(r);
    const char *e = http_client_error(r);
    snprintf(res->error, sizeof(res->error), "%s", e ? e : "");
    size_t len;
    const uint8_t *b = http_client_body(r, &len);
    res->body_len = len;
    snprintf(res->head, sizeof(res->head), "%.*s", len < 8 ? (int)len : 8,
             (const char *)b);
    res->done = 1;
}

static void run_until(const int *flag, int ms)
{
    struct timeval tv = {0, 10000};
    for (int i = 0; i < ms / 10 && !*flag; i++) {
        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
    }
}

static void run_for(int ms)
{
    int never = 0;
    run_until(&never, ms);
}

static struct result get(const char *path, enum http_client_tls tls)
{
    struct result res;
    memset(&res, 0, sizeof(res));
    struct http_client_options o = {.host = "127.0.0.1",
                                    .port = port,
                                    .method = HTTP_GET,
                                    .path = path,
                                    .timeout_ms = 10000,
                                    .tls = tls};
    http_client_request(base, &o, on_done, &res);
    run_until(&res.done, 15000);
    ck_assert_msg(res.done, "no outcome for %s", path);
    return res;
}

static struct http_server_stats stats(void)
{
    struct http_server_stats st;
    http_server_stats(srv, &st);
    return st;
}

/* The server counts a refused handshake once the client's alert or close
 * reached it. */
static void wait_failures(uint64_t n)
{
    for (int i = 0; i < 300 && stats().tls_handshake_failures < n; i++)
        run_for(10);
    ck_assert_uint_eq(stats().tls_handshake_failures, n);
}

START_TEST(test_round_trip_verified)
{
    server_env();
    server_start();
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
    ck_assert_str_eq(r.head, "hello");
    r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(stats().tls_handshakes, 2);
    ck_assert_uint_eq(stats().tls_handshake_failures, 0);
}
END_TEST

START_TEST(test_round_trip_big_reply)
{
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('a' + i % 26);
    server_env();
    server_start();
    client_env("ca.crt", NULL);
    for (int i = 0; i < 3; i++) {
        struct result r = get("/big", HTTP_CLIENT_TLS_DEFAULT);
        ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
        ck_assert_uint_eq(r.body_len, sizeof(big));
        ck_assert_str_eq(r.head, "abcdefgh");
    }
}
END_TEST

START_TEST(test_client_refuses_other_ca)
{
    server_env();
    server_start();
    client_env("other-ca.crt", NULL); /* trusts another CA only */
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.error, "certificate verify failed") != NULL, "%s",
                  r.error);
    wait_failures(1);
    ck_assert_uint_eq(stats().tls_handshakes, 0);
}
END_TEST

START_TEST(test_client_refuses_wrong_name)
{
    env_reset();
    env("ENABLED", "true");
    env("CERT_FILE", cert("wrongname.crt"));
    env("KEY_FILE", cert("wrongname.key"));
    server_start();
    client_env("ca.crt", NULL); /* right CA, but not for 127.0.0.1 */
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.error, "IP address mismatch") != NULL, "%s",
                  r.error);
}
END_TEST

START_TEST(test_client_without_verification)
{
    env_reset();
    env("ENABLED", "true");
    env("CERT_FILE", cert("other.crt"));
    env("KEY_FILE", cert("other.key"));
    server_start();
    client_env(NULL, NULL); /* VERIFY_CERT off: any certificate */
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
}
END_TEST

START_TEST(test_require_cert_refuses_client_without_one)
{
    server_env();
    env("REQUIRE_CERT", "true");
    server_start();
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strncmp(r.error, "127.0.0.1:", 10) == 0, "%s", r.error);
    wait_failures(1);
    ck_assert_uint_eq(stats().tls_handshakes, 0);
}
END_TEST

START_TEST(test_require_cert_refuses_other_ca_client)
{
    server_env();
    env("REQUIRE_CERT", "true");
    server_start();
    env_reset();
    env("ENABLED", "true");
    env("CERT_FILE", cert("other.crt")); /* signed by another CA */
    env("KEY_FILE", cert("other.key"));
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 0);
    wait_failures(1);
}
END_TEST

START_TEST(test_require_cert_accepts_client_cert)
{
    server_env();
    env("REQUIRE_CERT", "true");
    server_start();
    client_env("ca.crt", "client");
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
    ck_assert_uint_eq(stats().tls_handshakes, 1);
}
END_TEST

START_TEST(test_plain_client_refused_without_downgrade)
{
    server_env();
    server_start();
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_OFF);
    ck_assert_int_eq(r.status, 0);
    wait_failures(1);
    ck_assert_uint_eq(stats().tls_plain, 0);
}
END_TEST

START_TEST(test_downgrade_accepts_plain_and_tls)
{
    server_env();
    env("SUPPORT_DOWNGRADE", "true");
    server_start();
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_OFF);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
    ck_assert_str_eq(r.head, "hello");
    r = get("/big", HTTP_CLIENT_TLS_OFF);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(r.body_len, sizeof(big));
    r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
    ck_assert_uint_eq(stats().tls_plain, 2);
    ck_assert_uint_eq(stats().tls_handshakes, 1);
}
END_TEST

START_TEST(test_https_requested_without_enabled)
{
    server_env();
    server_start();
    env_reset(); /* the client's TLS is off ... */
    env("VERIFY_CERT", "true");
    env("CA_FILE", cert("ca.crt"));
    struct result r = get("/hello", HTTP_CLIENT_TLS_ON); /* ... but asked */
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
}
END_TEST

START_TEST(test_handshake_garbage_closes_quietly)
{
    server_env();
    server_start();
    /* A record header announcing a handshake, then garbage. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    static const char junk[] = "\x16\x03\x01\x00\x05garbagegarbage";
    ck_assert_int_eq(send(fd, junk, sizeof(junk) - 1, 0),
                     (ssize_t)sizeof(junk) - 1);
    wait_failures(1);
    /* The server closed it and still serves others. */
    char buf[64];
    run_for(50);
    ck_assert_int_le(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), 64);
    close(fd);
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_int_eq(r.status, 200);
}
END_TEST

/* ---- The server's transport ---- */

/* A bufferevent from tls_server_bev of a server made from the environment
 * as it is now: whether it is a bufferevent_openssl. */
static bool server_bev_is_openssl(void)
{
    struct tls_config c;
    char err[256] = "";
    extern char **environ;
    ck_assert_int_eq(tls_config_from_env(environ, &c, err, sizeof(err)), 0);
    struct tls_server *ts = tls_server_new(&c, err, sizeof(err));
    ck_assert_msg(ts != NULL, "%s", err);
    struct event_base *b = event_base_new();
    struct bufferevent *bev = tls_server_bev(ts, b);
    ck_assert_ptr_nonnull(bev);
    bool openssl = bufferevent_openssl_get_ssl(bev) != NULL;
    bufferevent_free(bev);
    event_base_free(b);
    tls_server_free(ts);
    tls_config_clear(&c);
    return openssl;
}

/* Without downgrade OpenSSL runs on the socket itself; the filter (which
 * holds output back for a loop turn) is only for downgrade. */
START_TEST(test_tls_only_server_uses_openssl_bufferevent)
{
    server_env();
    ck_assert(server_bev_is_openssl());
    env("SUPPORT_DOWNGRADE", "true");
    ck_assert(!server_bev_is_openssl());
}
END_TEST

/* A TCP connection to 127.0.0.1:port that sends nothing. */
static int connect_silent(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Whether the server closed fd (end of file or reset) within ms, running
 * the server's loop meanwhile. */
static bool closed_within(int fd, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 0) == 1) {
            char c;
            if (recv(fd, &c, 1, MSG_DONTWAIT) <= 0)
                return true;
        }
        run_for(10);
    }
    return false;
}

/* The plain path's idle timeout holds under TLS: a client that never
 * starts its handshake is closed, and the server serves others. */
START_TEST(test_silent_client_times_out)
{
    static const struct http_server_options o = {
        .timeout_secs = 30, .idle_timeout_ns = 300 * INT64_C(1000000)};
    server_env();
    env("REQUIRE_CERT", "true");
    server_start_with(&o);
    int fd = connect_silent();
    ck_assert_msg(closed_within(fd, 5000), "the silent client is still open");
    close(fd);
    ck_assert_uint_eq(stats().timed_out, 1);
    client_env("ca.crt", "client");
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
}
END_TEST

/* The connection cap holds under TLS: past it, a new connection closes
 * one that never sent anything, and a TLS client is served. */
START_TEST(test_cap_sheds_idle_tls_connection)
{
    static const struct http_server_options o = {.timeout_secs = 30,
                                                 .max_conns = 2};
    server_env();
    server_start_with(&o);
    int a = connect_silent(), b = connect_silent();
    for (int i = 0; i < 100 && stats().conns < 2; i++)
        run_for(10);
    ck_assert_uint_eq(stats().conns, 2);
    client_env("ca.crt", NULL);
    struct result r = get("/hello", HTTP_CLIENT_TLS_DEFAULT);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.error);
    ck_assert_uint_ge(stats().shed, 1);
    ck_assert(closed_within(a, 2000));
    close(a);
    close(b);
}
END_TEST

static Suite *tls_suite(void)
{
    Suite *s = suite_create("tls");
    TCase *cfg = tcase_create("config");
    tcase_add_test(cfg, test_config_defaults);
    tcase_add_test(cfg, test_config_values);
    tcase_add_test(cfg, test_config_bad_values);
    tcase_add_test(cfg, test_flags_set_the_environment);
    suite_add_tcase(s, cfg);

    TCase *rt = tcase_create("round_trip");
    tcase_add_unchecked_fixture(rt, make_certs, remove_certs);
    tcase_add_checked_fixture(rt, NULL, teardown);
    tcase_set_timeout(rt, 60);
    tcase_add_test(rt, test_server_refuses_bad_files);
    tcase_add_test(rt, test_bind_refused_by_bad_environment);
    tcase_add_test(rt, test_round_trip_verified);
    tcase_add_test(rt, test_round_trip_big_reply);
    tcase_add_test(rt, test_client_refuses_other_ca);
    tcase_add_test(rt, test_client_refuses_wrong_name);
    tcase_add_test(rt, test_client_without_verification);
    tcase_add_test(rt, test_require_cert_refuses_client_without_one);
    tcase_add_test(rt, test_require_cert_refuses_other_ca_client);
    tcase_add_test(rt, test_require_cert_accepts_client_cert);
    tcase_add_test(rt, test_plain_client_refused_without_downgrade);
    tcase_add_test(rt, test_downgrade_accepts_plain_and_tls);
    tcase_add_test(rt, test_https_requested_without_enabled);
    tcase_add_test(rt, test_handshake_garbage_closes_quietly);
    tcase_add_test(rt, test_tls_only_server_uses_openssl_bufferevent);
    tcase_add_test(rt, test_silent_client_times_out);
    tcase_add_test(rt, test_cap_sheds_idle_tls_connection);
    suite_add_tcase(s, rt);
    return s;
}

OFFERD_CHECK_MAIN(tls_suite)
