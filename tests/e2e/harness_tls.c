/*
 * TLS for the e2e harness (harness_tls.h): certificates, the environment
 * of spawned processes, and OpenSSL under the harness's blocking client.
 */
#include "harness_tls.h"

#include "harness.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 4096

static char cert_dir[512];
static bool tls_on;
static SSL_CTX *client_ctx;
static SSL *by_fd[MAX_FDS];

const char *e2e_tls_file(const char *name)
{
    static char buf[8][640];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof(buf[0]), "%s/%s", cert_dir, name);
    return b;
}

static const char *const vars[] = {
    "ENABLED",      "SUPPORT_DOWNGRADE",
    "VERIFY_CERT",  "VERIFY_SERVER_CERT",
    "REQUIRE_CERT", "REQUIRE_CLIENT_CERT",
    "CERT_FILE",    "KEY_FILE",
    "CA_FILE",      "CA_DIR",
};

void e2e_tls_env_cluster(bool downgrade)
{
    char name[64];
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        snprintf(name, sizeof(name), "LIBPROCESS_SSL_%s", vars[i]);
        unsetenv(name);
    }
    setenv("LIBPROCESS_SSL_ENABLED", "true", 1);
    setenv("LIBPROCESS_SSL_CERT_FILE", e2e_tls_file("server.crt"), 1);
    setenv("LIBPROCESS_SSL_KEY_FILE", e2e_tls_file("server.key"), 1);
    setenv("LIBPROCESS_SSL_CA_FILE", e2e_tls_file("ca.crt"), 1);
    setenv("LIBPROCESS_SSL_REQUIRE_CERT", "true", 1);
    setenv("LIBPROCESS_SSL_VERIFY_CERT", "true", 1);
    if (downgrade)
        setenv("LIBPROCESS_SSL_SUPPORT_DOWNGRADE", "true", 1);
}

static SSL_CTX *ctx_for(const char *ca, const char *cert, const char *key)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL)
        return NULL;
    if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1 ||
        (cert != NULL &&
         (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
          SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1))) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

int e2e_tls_make_certs(void)
{
    if (client_ctx != NULL)
        return 0;
    /* SSL_write writes to the socket itself: a closed peer must not kill
     * the test with SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "bash %s/tests/tls/gen-certs.sh %s",
             OFFERD_SOURCE_DIR, cert_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "harness: cannot make TLS certificates\n");
        return -1;
    }
    client_ctx = ctx_for(e2e_tls_file("ca.crt"), e2e_tls_file("client.crt"),
                         e2e_tls_file("client.key"));
    if (client_ctx == NULL) {
        fprintf(stderr, "harness: cannot load TLS certificates\n");
        return -1;
    }
    return 0;
}

int e2e_tls_setup(const char *run_dir)
{
    snprintf(cert_dir, sizeof(cert_dir), "%s/tls", run_dir);
    const char *e = getenv("OFFERD_E2E_TLS");
    if (e == NULL || strcmp(e, "1") != 0)
        return 0;
    if (e2e_tls_make_certs() != 0)
        return -1;
    e2e_tls_env_cluster(false);
    tls_on = true;
    fprintf(stderr, "harness: TLS on (certificates in %s)\n", cert_dir);
    return 0;
}

void e2e_tls_use(bool on)
{
    tls_on = on && client_ctx != NULL;
}

bool e2e_tls_on(void)
{
    return tls_on;
}

/* Run one step of a non-blocking handshake until done or the deadline. */
static int handshake(SSL *ssl, int fd, int64_t deadline)
{
    for (;;) {
        int r = SSL_connect(ssl);
        if (r == 1)
            return 0;
        int e = SSL_get_error(ssl, r);
        short ev = e == SSL_ERROR_WANT_READ    ? POLLIN
                   : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                               : 0;
        if (ev == 0)
            return -1;
        int left = (int)(deadline - e2e_now_ms());
        struct pollfd p = {fd, ev, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
    }
}

static int start_with(SSL_CTX *ctx, int fd, int64_t deadline)
{
    if (fd < 0 || fd >= MAX_FDS)
        return -1;
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL)
        return -1;
    SSL_set_fd(ssl, fd);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), "127.0.0.1");
    if (handshake(ssl, fd, deadline) != 0) {
        SSL_free(ssl);
        ERR_clear_error();
        return -1;
    }
    by_fd[fd] = ssl;
    return 0;
}

int e2e_io_start(int fd, int64_t deadline_ms)
{
    if (!tls_on)
        return 0;
    return start_with(client_ctx, fd, deadline_ms);
}

static SSL *ssl_of(int fd)
{
    return fd >= 0 && fd < MAX_FDS ? by_fd[fd] : NULL;
}

ssize_t e2e_io_recv(int fd, void *buf, size_t len)
{
    SSL *ssl = ssl_of(fd);
    if (ssl == NULL)
        return recv(fd, buf, len, 0);
    int n = SSL_read(ssl, buf, (int)(len > 1 << 30 ? 1 << 30 : len));
    if (n > 0)
        return n;
    int e = SSL_get_error(ssl, n);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    ERR_clear_error();
    if (e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL)
        return 0; /* closed, with or without close_notify */
    errno = EIO;
    return -1;
}

ssize_t e2e_io_send(int fd, const void *buf, size_t len)
{
    SSL *ssl = ssl_of(fd);
    if (ssl == NULL)
        return send(fd, buf, len, MSG_NOSIGNAL);
    int n = SSL_write(ssl, buf, (int)(len > 1 << 30 ? 1 << 30 : len));
    if (n > 0)
        return n;
    int e = SSL_get_error(ssl, n);
    errno =
        e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? EAGAIN : EPIPE;
    ERR_clear_error();
    return -1;
}

void e2e_io_close(int fd)
{
    SSL *ssl = ssl_of(fd);
    if (ssl != NULL) {
        SSL_free(ssl);
        by_fd[fd] = NULL;
    }
    close(fd);
}

int e2e_tls_get_status(uint16_t port, const char *path, const char *ca,
                       const char *cert, const char *key, int timeout_ms)
{
    int64_t deadline = e2e_now_ms() + timeout_ms;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int status = -1;
    SSL_CTX *ctx = NULL;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        goto out;
    if (ca != NULL) {
        ctx = ctx_for(e2e_tls_file(ca), cert ? e2e_tls_file(cert) : NULL,
                      key ? e2e_tls_file(key) : NULL);
        if (ctx == NULL || start_with(ctx, fd, deadline) != 0)
            goto out;
    }
    char req[512];
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Connection: close\r\n\r\n",
                     path);
    if (e2e_io_send(fd, req, (size_t)n) != n)
        goto out;
    char buf[256];
    size_t got = 0;
    while (got < sizeof(buf) - 1) {
        ssize_t r = e2e_io_recv(fd, buf + got, sizeof(buf) - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n") != NULL)
            break;
    }
    buf[got] = '\0';
    int major, minor, code;
    if (sscanf(buf, "HTTP/%d.%d %d", &major, &minor, &code) == 3)
        status = code;
out:
    e2e_io_close(fd);
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return status;
}
