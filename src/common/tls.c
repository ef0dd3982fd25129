/*
 * TLS: configuration, OpenSSL contexts, the server's connections and the
 * client's bufferevents. The contract is in tls.h.
 *
 * Servers have two transports:
 *  - TLS only (downgrade off, the usual case): libevent's
 *    bufferevent_openssl straight over the socket, made with fd -1 and
 *    BUFFEREVENT_SSL_ACCEPTING; evhttp's bufferevent_setfd gives it the
 *    socket (libevent 2.1 keeps the accepting state across that call and
 *    starts the handshake there). OpenSSL reads and writes the socket
 *    itself: a reply leaves in the callback that wrote it, and an empty
 *    output buffer means the kernel has every byte, so evhttp's close
 *    after a "Connection: close" reply loses nothing.
 *  - TLS or plain (SUPPORT_DOWNGRADE): evhttp 2.1 creates a connection's
 *    bufferevent (evhttp_set_bevcb) before it tells us the socket, so the
 *    kind of bufferevent is chosen before the first byte can be seen, and
 *    downgrade needs to see it. So each accepted socket gets a filter
 *    bufferevent over a socket bufferevent, and the filter runs TLS through
 *    memory BIOs once the first byte said "handshake" (0x16), or passes
 *    bytes through when it said anything else.
 *
 * The filter costs latency: a filter tells evhttp "written" as soon as its
 * output moved to the socket bufferevent, not when the socket took it;
 * evhttp frees a connection after the last byte of a "Connection: close"
 * reply is written, which would drop what the socket bufferevent still
 * holds. So the output filter keeps the reply's last byte back until the
 * socket bufferevent is empty, then writes the rest straight to the
 * socket (non-blocking) after moving it, and every write is run again
 * from the loop (see on_output). Only a send buffer that fills up in the
 * few bytes of the very last record can still lose that record.
 *
 * Both count handshakes and log refusals from OpenSSL's info callback
 * (server_info_cb), so the counters mean the same on either.
 */
#include "common/tls.h"

#include "common/errbuf.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/mem.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define TLS_RECORD_MAX 16384
#define TLS_OUT_HIGH                                                           \
    (256 * 1024) /* bytes queued on a socket before the                        \
                    output filter stops taking more */

/* Mesos's default list (AWS's old policy) keeps peers configured for
 * Mesos working; forward-secret AEAD suites come first. RC4 and DSS are
 * gone from OpenSSL 3 and simply match nothing. */
#define TLS_DEFAULT_CIPHERS                                                    \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"               \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"               \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"               \
    "AES128-SHA:AES256-SHA:RC4-SHA:DHE-RSA-AES128-SHA:DHE-DSS-AES128-SHA:"     \
    "DHE-RSA-AES256-SHA:DHE-DSS-AES256-SHA"

/* ---- Configuration ---- */

static const char *env_get(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (char *const *e = env; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* LIBPROCESS_SSL_<name>, else Mesos's older SSL_<name>. */
static const char *ssl_env(char *const *env, const char *name,
                           const char **used)
{
    static __thread char buf[96];
    snprintf(buf, sizeof(buf), "LIBPROCESS_SSL_%s", name);
    const char *v = env_get(env, buf);
    if (v == NULL) {
        snprintf(buf, sizeof(buf), "SSL_%s", name);
        v = env_get(env, buf);
    }
    *used = buf;
    return v;
}

static int env_bool(char *const *env, const char *name, bool *out, char *err,
                    size_t errlen)
{
    const char *used;
    const char *v = ssl_env(env, name, &used);
    if (v == NULL)
        return 0;
    if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0) {
        *out = true;
    } else if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0) {
        *out = false;
    } else {
        errbuf_set(err, errlen, "%s: expected true/1 or false/0, got '%s'",
                   used, v);
        return -1;
    }
    return 0;
}

static void env_str(char *const *env, const char *name, char **out)
{
    const char *used;
    const char *v = ssl_env(env, name, &used);
    if (v != NULL && v[0] != '\0')
        *out = xstrdup(v);
}

void tls_config_clear(struct tls_config *c)
{
    free(c->cert_file);
    free(c->key_file);
    free(c->ca_file);
    free(c->ca_dir);
    free(c->ciphers);
    memset(c, 0, sizeof(*c));
}

int tls_config_from_env(char *const *env, struct tls_config *out, char *err,
                        size_t errlen)
{
    struct tls_config c = {.verify_depth = 4, .tls_v1_2 = true};
    bool verify_legacy = false, require_legacy = false;
    if (env_bool(env, "ENABLED", &c.enabled, err, errlen) != 0 ||
        env_bool(env, "SUPPORT_DOWNGRADE", &c.support_downgrade, err, errlen) !=
            0 ||
        env_bool(env, "VERIFY_CERT", &verify_legacy, err, errlen) != 0 ||
        env_bool(env, "VERIFY_SERVER_CERT", &c.verify_server_cert, err,
                 errlen) != 0 ||
        env_bool(env, "REQUIRE_CERT", &require_legacy, err, errlen) != 0 ||
        env_bool(env, "REQUIRE_CLIENT_CERT", &c.require_client_cert, err,
                 errlen) != 0 ||
        env_bool(env, "ENABLE_TLS_V1_0", &c.tls_v1_0, err, errlen) != 0 ||
        env_bool(env, "ENABLE_TLS_V1_1", &c.tls_v1_1, err, errlen) != 0 ||
        env_bool(env, "ENABLE_TLS_V1_2", &c.tls_v1_2, err, errlen) != 0 ||
        env_bool(env, "ENABLE_TLS_V1_3", &c.tls_v1_3, err, errlen) != 0)
        goto fail;
    c.verify_server_cert = c.verify_server_cert || verify_legacy;
    c.require_client_cert = c.require_client_cert || require_legacy;
    /* As libprocess: requiring client certificates implies verifying
     * servers' (a cluster that does one does the other). */
    if (c.require_client_cert)
        c.verify_server_cert = true;
    const char *used;
    const char *depth = ssl_env(env, "VERIFICATION_DEPTH", &used);
    if (depth == NULL)
        depth = ssl_env(env, "VERIFY_DEPTH", &used);
    if (depth != NULL) {
        char *end;
        long d = strtol(depth, &end, 10);
        if (end == depth || *end != '\0' || d < 0 || d > 100) {
            errbuf_set(err, errlen,
                       "%s: expected a depth from 0 to 100, got "
                       "'%s'",
                       used, depth);
            goto fail;
        }
        c.verify_depth = (int)d;
    }
    if (!c.tls_v1_0 && !c.tls_v1_1 && !c.tls_v1_2 && !c.tls_v1_3) {
        errbuf_set(err, errlen,
                   "LIBPROCESS_SSL_ENABLE_TLS_V1_*: every "
                   "protocol version is disabled");
        goto fail;
    }
    env_str(env, "CERT_FILE", &c.cert_file);
    env_str(env, "KEY_FILE", &c.key_file);
    env_str(env, "CA_FILE", &c.ca_file);
    env_str(env, "CA_DIR", &c.ca_dir);
    env_str(env, "CIPHERS", &c.ciphers);
    *out = c;
    return 0;
fail:
    tls_config_clear(&c);
    memset(out, 0, sizeof(*out));
    return -1;
}

/* ---- Flags ---- */

void tls_flag_defs(struct tls_flags *v, struct flag_def *out)
{
    const struct flag_def rows[TLS_FLAG_ROWS] = {
        {"ssl_enabled", FLAG_BOOL, NULL,
         "TLS on every HTTP port and every connection this process makes "
         "(LIBPROCESS_SSL_ENABLED; see docs/security.md).",
         &v->enabled},
        {"ssl_support_downgrade", FLAG_BOOL, NULL,
         "Also accept plain HTTP on the TLS ports "
         "(LIBPROCESS_SSL_SUPPORT_DOWNGRADE).",
         &v->support_downgrade},
        {"ssl_verify_cert", FLAG_BOOL, NULL,
         "Verify the certificate and name of the servers this process "
         "connects to (LIBPROCESS_SSL_VERIFY_CERT).",
         &v->verify_cert},
        {"ssl_require_cert", FLAG_BOOL, NULL,
         "Refuse clients without a certificate signed by the CA; implies "
         "--ssl_verify_cert (LIBPROCESS_SSL_REQUIRE_CERT).",
         &v->require_cert},
        {"ssl_cert_file", FLAG_STRING, NULL,
         "PEM certificate (chain) presented (LIBPROCESS_SSL_CERT_FILE).",
         &v->cert_file},
        {"ssl_key_file", FLAG_STRING, NULL,
         "PEM private key of --ssl_cert_file (LIBPROCESS_SSL_KEY_FILE).",
         &v->key_file},
        {"ssl_ca_file", FLAG_STRING, NULL,
         "PEM file of the CAs trusted (LIBPROCESS_SSL_CA_FILE).", &v->ca_file},
        {"ssl_ca_dir", FLAG_STRING, NULL,
         "Hashed directory of the CAs trusted (LIBPROCESS_SSL_CA_DIR).",
         &v->ca_dir},
    };
    memcpy(out, rows, sizeof(rows));
}

void tls_flags_export(const struct flags *f, const struct tls_flags *v)
{
    const struct {
        const char *flag, *var;
        const bool *b;
        const char *const *s;
    } map[TLS_FLAG_ROWS] = {
        {"ssl_enabled", "LIBPROCESS_SSL_ENABLED", &v->enabled, NULL},
        {"ssl_support_downgrade", "LIBPROCESS_SSL_SUPPORT_DOWNGRADE",
         &v->support_downgrade, NULL},
        {"ssl_verify_cert", "LIBPROCESS_SSL_VERIFY_CERT", &v->verify_cert,
         NULL},
        {"ssl_require_cert", "LIBPROCESS_SSL_REQUIRE_CERT", &v->require_cert,
         NULL},
        {"ssl_cert_file", "LIBPROCESS_SSL_CERT_FILE", NULL, &v->cert_file},
        {"ssl_key_file", "LIBPROCESS_SSL_KEY_FILE", NULL, &v->key_file},
        {"ssl_ca_file", "LIBPROCESS_SSL_CA_FILE", NULL, &v->ca_file},
        {"ssl_ca_dir", "LIBPROCESS_SSL_CA_DIR", NULL, &v->ca_dir},
    };
    for (size_t i = 0; i < TLS_FLAG_ROWS; i++) {
        if (!flags_is_set(f, map[i].flag))
            continue;
        if (map[i].b != NULL)
            setenv(map[i].var, *map[i].b ? "true" : "false", 1);
        else if (*map[i].s != NULL)
            setenv(map[i].var, *map[i].s, 1);
    }
}

/* ---- OpenSSL contexts ---- */

/* The last OpenSSL error as text ("" when none), clearing the queue. */
static const char *ssl_reason(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    buf[0] = '\0';
    if (e != 0) {
        const char *r = ERR_reason_error_string(e);
        snprintf(buf, len, "%s", r != NULL ? r : "unknown OpenSSL error");
    }
    ERR_clear_error();
    return buf[0] ? buf : "unknown error";
}

static int set_versions(SSL_CTX *ctx, const struct tls_config *c)
{
    /* The enabled versions form a range in practice; the lowest and the
     * highest enabled bound it, the others between are switched off. */
    static const struct {
        int version;
        long op;
    } v[] = {{TLS1_VERSION, SSL_OP_NO_TLSv1},
             {TLS1_1_VERSION, SSL_OP_NO_TLSv1_1},
             {TLS1_2_VERSION, SSL_OP_NO_TLSv1_2},
             {TLS1_3_VERSION, SSL_OP_NO_TLSv1_3}};
    bool on[4] = {c->tls_v1_0, c->tls_v1_1, c->tls_v1_2, c->tls_v1_3};
    int lo = -1, hi = -1;
    for (int i = 0; i < 4; i++) {
        if (on[i]) {
            if (lo < 0)
                lo = i;
            hi = i;
        } else {
            SSL_CTX_set_options(ctx, (uint64_t)v[i].op);
        }
    }
    if (lo < 0)
        return -1;
    if (lo < 2)
        SSL_CTX_set_security_level(ctx, 0); /* TLS 1.0/1.1 need SHA-1 */
    if (SSL_CTX_set_min_proto_version(ctx, v[lo].version) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, v[hi].version) != 1)
        return -1;
    return 0;
}

/* The parts both sides share: versions, ciphers, CAs when verifying, own
 * certificate and key when given (required: need_cert). */
static SSL_CTX *ctx_new(const struct tls_config *c, bool server, bool verify,
                        bool need_cert, char *err, size_t errlen)
{
    char why[256];
    SSL_CTX *ctx =
        SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
    if (ctx == NULL) {
        errbuf_set(err, errlen, "TLS: cannot create a context: %s",
                   ssl_reason(why, sizeof(why)));
        return NULL;
    }
    if (set_versions(ctx, c) != 0) {
        errbuf_set(err, errlen, "TLS: cannot set the protocol versions");
        goto fail;
    }
    const char *ciphers = c->ciphers != NULL ? c->ciphers : TLS_DEFAULT_CIPHERS;
    if (SSL_CTX_set_cipher_list(ctx, ciphers) != 1) {
        errbuf_set(err, errlen,
                   "LIBPROCESS_SSL_CIPHERS: no usable cipher in "
                   "'%s'",
                   ciphers);
        goto fail;
    }
    if (verify) {
        if (c->ca_file != NULL || c->ca_dir != NULL) {
            if (SSL_CTX_load_verify_locations(ctx, c->ca_file, c->ca_dir) !=
                1) {
                errbuf_set(err, errlen,
                           "LIBPROCESS_SSL_CA_%s: cannot load "
                           "'%s': %s",
                           c->ca_file ? "FILE" : "DIR",
                           c->ca_file ? c->ca_file : c->ca_dir,
                           ssl_reason(why, sizeof(why)));
                goto fail;
            }
        } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
            errbuf_set(err, errlen, "TLS: cannot load the system's CAs: %s",
                       ssl_reason(why, sizeof(why)));
            goto fail;
        }
        SSL_CTX_set_verify_depth(ctx, c->verify_depth);
    }
    bool have_cert = c->cert_file != NULL || c->key_file != NULL;
    if (need_cert || have_cert) {
        if (c->cert_file == NULL || c->key_file == NULL) {
            errbuf_set(err, errlen,
                       "LIBPROCESS_SSL_%s is required with TLS "
                       "enabled",
                       c->cert_file == NULL ? "CERT_FILE" : "KEY_FILE");
            goto fail;
        }
        if (SSL_CTX_use_certificate_chain_file(ctx, c->cert_file) != 1) {
            errbuf_set(err, errlen,
                       "LIBPROCESS_SSL_CERT_FILE: cannot load "
                       "'%s': %s",
                       c->cert_file, ssl_reason(why, sizeof(why)));
            goto fail;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, c->key_file, SSL_FILETYPE_PEM) !=
            1) {
            ssl_reason(why, sizeof(why));
            if (strstr(why, "mismatch") != NULL)
                errbuf_set(err, errlen,
                           "LIBPROCESS_SSL_KEY_FILE: '%s' does "
                           "not match the certificate in '%s'",
                           c->key_file, c->cert_file);
            else
                errbuf_set(err, errlen,
                           "LIBPROCESS_SSL_KEY_FILE: cannot load "
                           "'%s': %s",
                           c->key_file, why);
            goto fail;
        }
        if (SSL_CTX_check_private_key(ctx) != 1) {
            errbuf_set(err, errlen,
                       "LIBPROCESS_SSL_KEY_FILE: '%s' does not "
                       "match the certificate in '%s'",
                       c->key_file, c->cert_file);
            ERR_clear_error();
            goto fail;
        }
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* ---- Servers ---- */

struct tls_server {
    SSL_CTX *ctx;
    bool downgrade;
    struct tls_server_stats st;
};

enum conn_mode {
    MODE_SNIFF, /* nothing read yet */
    MODE_PLAIN, /* downgraded: bytes pass through */
    MODE_TLS,
    MODE_FAILED, /* the handshake or a record failed */
};

/* One filter connection's state (the filter's context; downgrade only). */
struct tls_conn {
    struct tls_server *owner;
    struct bufferevent *under; /* the socket bufferevent */
    struct bufferevent *bev;   /* the filter (evhttp's) */
    struct event *kick;        /* runs the output filter (see on_output) */
    SSL *ssl;                  /* NULL until the mode is TLS */
    BIO *rbio, *wbio;          /* memory BIOs, owned by ssl */
    enum conn_mode mode;
    bool handshaken;
    bool nodelay; /* TCP_NODELAY set on the socket */
};

static void set_nodelay(evutil_socket_t fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        log_debug("tls: cannot set TCP_NODELAY");
}

/* The socket under ssl: its own (bufferevent_openssl), or the filter's
 * socket bufferevent's (memory BIOs; the tls_conn is the app data). -1
 * before evhttp set it. */
static evutil_socket_t ssl_fd(const SSL *ssl)
{
    evutil_socket_t fd = SSL_get_fd(ssl);
    if (fd < 0) {
        const struct tls_conn *t = SSL_get_app_data(ssl);
        if (t != NULL)
            fd = bufferevent_getfd(t->under);
    }
    return fd;
}

/* Count a refused or broken connection of s and log one debug line with
 * the peer's address and OpenSSL's reason (left in OpenSSL's queue, where
 * libevent reads it). */
static void server_failed(struct tls_server *s, const SSL *ssl,
                          evutil_socket_t fd, const char *what)
{
    s->st.handshake_failures++;
    unsigned long e = ERR_peek_last_error();
    const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;
    long vr = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
    char peer[64] = "?";
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (fd >= 0 && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, peer,
                  sizeof(peer));
    log_debug("tls: %s with %s failed: %s%s%s", what, peer,
              reason != NULL ? reason : "connection closed",
              vr != X509_V_OK ? ": " : "",
              vr != X509_V_OK ? X509_verify_cert_error_string(vr) : "");
}

/* OpenSSL's info callback for every server connection of both transports:
 * counts completed handshakes and failed ones, and turns Nagle off when a
 * handshake starts (a reply's head and body are separate records: the
 * second would wait for the peer's delayed ACK). A handshake step that
 * returns without "want read/write" and with an error queued failed;
 * OpenSSL does not run the callback again for a connection in error. */
static void server_info_cb(const SSL *ssl, int where, int ret)
{
    struct tls_server *s = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    if (s == NULL)
        return;
    if (where & SSL_CB_HANDSHAKE_START) {
        evutil_socket_t fd = SSL_get_fd(ssl);
        if (fd >= 0)
            set_nodelay(fd); /* the filter sets it on its first write */
    } else if (where & SSL_CB_HANDSHAKE_DONE) {
        s->st.handshakes++;
    } else if ((where & SSL_CB_EXIT) && ret <= 0 &&
               (ERR_peek_error() != 0 ||
                (!SSL_want_read(ssl) && !SSL_want_write(ssl)))) {
        server_failed(s, ssl, ssl_fd(ssl), "handshake");
    }
}

struct tls_server *tls_server_new(const struct tls_config *c, char *err,
                                  size_t errlen)
{
    if (!c->enabled) {
        errbuf_set(err, errlen, "TLS is not enabled");
        return NULL;
    }
    SSL_CTX *ctx = ctx_new(c, true, c->require_client_cert, true, err, errlen);
    if (ctx == NULL)
        return NULL;
    if (c->require_client_cert)
        SSL_CTX_set_verify(
            ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    else
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    /* No session resumption: tickets would only be extra records that
     * clients must read before anything else. */
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION |
                                 SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    struct tls_server *s = xcalloc(1, sizeof(*s));
    s->ctx = ctx;
    s->downgrade = c->support_downgrade;
    SSL_CTX_set_app_data(ctx, s);
    SSL_CTX_set_info_callback(ctx, server_info_cb);
    return s;
}

void tls_server_free(struct tls_server *s)
{
    if (s == NULL)
        return;
    SSL_CTX_free(s->ctx);
    free(s);
}

void tls_server_stats(const struct tls_server *s, struct tls_server_stats *out)
{
    *out = s->st;
}

/* Write what dst holds straight to the socket, without blocking; what the
 * socket does not take stays for the bufferevent to send. */
static void write_through(struct tls_conn *t, struct evbuffer *dst)
{
    evutil_socket_t fd = bufferevent_getfd(t->under);
    if (fd < 0)
        return;
    if (!t->nodelay) {
        /* A reply goes out as two records (see the top of the file); with
         * Nagle the second would wait for the peer's delayed ACK. */
        set_nodelay(fd);
        t->nodelay = true;
    }
    while (evbuffer_get_length(dst) > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(dst, -1, NULL, &v, 1) < 1 || v.iov_len == 0)
            return;
        ssize_t w =
            send(fd, v.iov_base, v.iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0)
            return;
        evbuffer_drain(dst, (size_t)w);
    }
    /* Drained here, the socket bufferevent will not call back (it calls
     * back after writes of its own): a byte the output filter held back
     * would wait for the next reply. Run the filter again from the loop. */
    if (evbuffer_get_length(bufferevent_get_output(t->bev)) > 0)
        event_active(t->kick, EV_TIMEOUT, 0);
}

/* Move what OpenSSL wrote (handshake, records, alerts) into dst. */
static void drain_wbio(struct tls_conn *t, struct evbuffer *dst)
{
    char buf[TLS_RECORD_MAX];
    int n;
    while ((n = BIO_read(t->wbio, buf, (int)sizeof(buf))) > 0)
        evbuffer_add(dst, buf, (size_t)n);
}

/* The filter's connection failed: count and log it (a failed handshake
 * step was counted by server_info_cb: counted), then clear OpenSSL's
 * queue, which nothing else reads on this transport. */
static void filter_failed(struct tls_conn *t, const char *what, bool counted)
{
    t->mode = MODE_FAILED;
    if (!counted)
        server_failed(t->owner, t->ssl, bufferevent_getfd(t->under), what);
    ERR_clear_error();
}

static bool start_tls(struct tls_conn *t)
{
    t->ssl = SSL_new(t->owner->ctx);
    t->rbio = BIO_new(BIO_s_mem());
    t->wbio = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
        BIO_free(t->rbio);
        BIO_free(t->wbio);
        t->rbio = t->wbio = NULL;
        filter_failed(t, "setup", false);
        return false;
    }
    SSL_set_bio(t->ssl, t->rbio, t->wbio);
    SSL_set_app_data(t->ssl, t); /* for ssl_fd */
    SSL_set_accept_state(t->ssl);
    t->mode = MODE_TLS;
    return true;
}

static enum bufferevent_filter_result
filter_in(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
          enum bufferevent_flush_mode mode, void *arg)
{
    struct tls_conn *t = arg;
    (void)limit;
    (void)mode;
    if (t->mode == MODE_FAILED)
        return BEV_ERROR;
    if (evbuffer_get_length(src) == 0)
        return BEV_NEED_MORE;
    if (t->mode == MODE_SNIFF) {
        uint8_t first;
        evbuffer_copyout(src, &first, 1);
        if (first != 0x16 && t->owner->downgrade) {
            t->mode = MODE_PLAIN;
            t->owner->st.plain++;
        } else if (!start_tls(t)) {
            return BEV_ERROR;
        }
    }
    if (t->mode == MODE_PLAIN) {
        evbuffer_add_buffer(dst, src);
        return BEV_OK;
    }
    struct evbuffer *out = bufferevent_get_output(t->under);
    /* Everything that arrived goes to OpenSSL (a memory BIO takes it
     * all); the socket bufferevent's read watermark bounds each turn. */
    while (evbuffer_get_length(src) > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(src, -1, NULL, &v, 1) < 1)
            break;
        int n = BIO_write(t->rbio, v.iov_base, (int)v.iov_len);
        if (n <= 0)
            break;
        evbuffer_drain(src, (size_t)n);
    }
    if (!t->handshaken) {
        int r = SSL_do_handshake(t->ssl);
        drain_wbio(t, out);
        write_through(t, out);
        if (r != 1) {
            int e = SSL_get_error(t->ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return BEV_NEED_MORE;
            filter_failed(t, "handshake", true);
            return BEV_ERROR;
        }
        t->handshaken = true; /* counted by server_info_cb */
    }
    bool got = false;
    for (;;) {
        struct evbuffer_iovec v;
        if (evbuffer_reserve_space(dst, TLS_RECORD_MAX, &v, 1) < 1)
            break;
        int n = SSL_read(t->ssl, v.iov_base, (int)v.iov_len);
        if (n <= 0) {
            int e = SSL_get_error(t->ssl, n);
            drain_wbio(t, out);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_ZERO_RETURN)
                break; /* close_notify: the TCP close follows */
            filter_failed(t, "record", false);
            return BEV_ERROR;
        }
        v.iov_len = (size_t)n;
        evbuffer_commit_space(dst, &v, 1);
        got = true;
    }
    if (evbuffer_get_length(out) > 0)
        write_through(t, out);
    return got ? BEV_OK : BEV_NEED_MORE;
}

/* Encrypt (or pass) n bytes of src into dst. Returns false on failure. */
static bool move_out(struct tls_conn *t, struct evbuffer *src,
                     struct evbuffer *dst, size_t n)
{
    if (t->mode == MODE_PLAIN) {
        evbuffer_remove_buffer(src, dst, n);
        return true;
    }
    while (n > 0) {
        struct evbuffer_iovec v;
        if (evbuffer_peek(src, (ev_ssize_t)n, NULL, &v, 1) < 1)
            return false;
        size_t take = v.iov_len < n ? v.iov_len : n;
        if (take > TLS_RECORD_MAX)
            take = TLS_RECORD_MAX;
        int w = SSL_write(t->ssl, v.iov_base, (int)take);
        if (w <= 0) {
            filter_failed(t, "write", false);
            return false;
        }
        evbuffer_drain(src, (size_t)w);
        n -= (size_t)w;
        drain_wbio(t, dst);
    }
    return true;
}

static enum bufferevent_filter_result
filter_out(struct evbuffer *src, struct evbuffer *dst, ev_ssize_t limit,
           enum bufferevent_flush_mode mode, void *arg)
{
    struct tls_conn *t = arg;
    (void)limit;
    (void)mode;
    if (t->mode == MODE_FAILED)
        return BEV_ERROR;
    size_t n = evbuffer_get_length(src);
    if (n == 0 || t->mode == MODE_SNIFF ||
        (t->mode == MODE_TLS && !t->handshaken))
        return BEV_NEED_MORE; /* a server writes after it read */
    /* All but the last byte, in slices, while the socket bufferevent holds
     * less than TLS_OUT_HIGH (a slow reader's backlog stays in the
     * filter's output, where the HTTP server's per-stream cap sees it);
     * the last byte once the socket took the rest (see the top of the
     * file). */
    bool moved = false;
    while (evbuffer_get_length(src) > 1 &&
           evbuffer_get_length(dst) < TLS_OUT_HIGH) {
        size_t take = evbuffer_get_length(src) - 1;
        if (take > TLS_OUT_HIGH)
            take = TLS_OUT_HIGH;
        if (!move_out(t, src, dst, take))
            return BEV_ERROR;
        moved = true;
        write_through(t, dst);
    }
    if (evbuffer_get_length(src) == 1 && evbuffer_get_length(dst) == 0) {
        if (!move_out(t, src, dst, 1))
            return BEV_ERROR;
        moved = true;
        write_through(t, dst);
    }
    return moved ? BEV_OK : BEV_NEED_MORE;
}

static void conn_free(void *arg)
{
    struct tls_conn *t = arg;
    SSL_free(t->ssl); /* frees the BIOs */
    event_free(t->kick);
    free(t);
}

static void on_kick(evutil_socket_t fd, short what, void *arg)
{
    struct tls_conn *t = arg;
    (void)fd;
    (void)what;
    bufferevent_flush(t->bev, EV_WRITE, BEV_NORMAL);
}

/* libevent 2.1's filter runs its output filter when bytes are added, but
 * only if writing is enabled, and not again when writing gets enabled;
 * evhttp adds a reply first and enables writing after. So every addition
 * also runs the filter from the loop, once evhttp is done. */
static void on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info,
                      void *arg)
{
    struct tls_conn *t = arg;
    (void)buf;
    if (info->n_added > 0)
        event_active(t->kick, EV_TIMEOUT, 0);
}

/* TLS only: OpenSSL on the socket itself (see the top of the file). */
static struct bufferevent *openssl_bev(struct tls_server *s,
                                       struct event_base *base)
{
    SSL *ssl = SSL_new(s->ctx);
    if (ssl == NULL) {
        ERR_clear_error();
        return NULL;
    }
    /* No deferred callbacks, as evhttp's own bufferevents: http_conn
     * counts what arrives from the input buffer's callback. */
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        SSL_free(ssl);
        return NULL;
    }
    /* A client that closes without close_notify has still sent whole
     * requests (evhttp frames them): an end of file, not an error. */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

struct bufferevent *tls_server_bev(struct tls_server *s,
                                   struct event_base *base)
{
    if (!s->downgrade)
        return openssl_bev(s, base);
    struct bufferevent *under =
        bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (under == NULL)
        return NULL;
    struct tls_conn *t = xcalloc(1, sizeof(*t));
    t->owner = s;
    t->under = under;
    struct bufferevent *bev = bufferevent_filter_new(
        under, filter_in, filter_out, BEV_OPT_CLOSE_ON_FREE, conn_free, t);
    if (bev == NULL) {
        free(t);
        bufferevent_free(under);
        return NULL;
    }
    t->bev = bev;
    t->kick = event_new(base, -1, 0, on_kick, t);
    evbuffer_add_cb(bufferevent_get_output(bev), on_output, t);
    return bev;
}

/* ---- Clients ---- */

struct tls_client {
    SSL_CTX *ctx;
    bool verify;
};

struct tls_client *tls_client_new(const struct tls_config *c, char *err,
                                  size_t errlen)
{
    SSL_CTX *ctx = ctx_new(c, false, c->verify_server_cert, false, err, errlen);
    if (ctx == NULL)
        return NULL;
    SSL_CTX_set_verify(
        ctx, c->verify_server_cert ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    struct tls_client *t = xcalloc(1, sizeof(*t));
    t->ctx = ctx;
    t->verify = c->verify_server_cert;
    return t;
}

void tls_client_free(struct tls_client *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    free(t);
}

static pthread_once_t process_once = PTHREAD_ONCE_INIT;
static struct tls_client *process_client;
static int process_rc;
static char process_err[320];

extern char **environ;

static void process_init(void)
{
    struct tls_config c;
    if (tls_config_from_env(environ, &c, process_err, sizeof(process_err)) !=
        0) {
        process_rc = -1;
        return;
    }
    /* Built even when TLS is off, for requests that ask for https. */
    process_client = tls_client_new(&c, process_err, sizeof(process_err));
    if (c.enabled)
        process_rc = process_client != NULL ? 1 : -1;
    tls_config_clear(&c);
}

int tls_client_process(struct tls_client **out, const char **reason)
{
    pthread_once(&process_once, process_init);
    *out = process_rc < 0 ? NULL : process_client;
    if (reason != NULL)
        *reason = process_client == NULL || process_rc < 0 ? process_err : NULL;
    return process_rc;
}

static pthread_once_t insecure_once = PTHREAD_ONCE_INIT;
static struct tls_client *insecure_client;

static void insecure_init(void)
{
    struct tls_config c = {
        .verify_depth = 4, .tls_v1_2 = true, .tls_v1_3 = true};
    char err[256];
    insecure_client = tls_client_new(&c, err, sizeof(err));
    if (insecure_client == NULL)
        log_error("tls: %s", err);
}

struct tls_client *tls_client_insecure(void)
{
    pthread_once(&insecure_once, insecure_init);
    return insecure_client;
}

/* evhttp writes a request's head and body as separate buffers, which
 * become separate records: without TCP_NODELAY the body would wait for the
 * server's delayed ACK. The socket exists once a request is written. */
static void on_client_output(struct evbuffer *buf,
                             const struct evbuffer_cb_info *info, void *arg)
{
    (void)buf;
    if (info->n_added == 0)
        return;
    evutil_socket_t fd = bufferevent_getfd(arg);
    if (fd >= 0)
        set_nodelay(fd);
}

struct bufferevent *tls_client_bev(struct tls_client *t,
                                   struct event_base *base, const char *host,
                                   char *err, size_t errlen)
{
    char why[256];
    SSL *ssl = SSL_new(t->ctx);
    if (ssl == NULL) {
        errbuf_set(err, errlen, "TLS: %s", ssl_reason(why, sizeof(why)));
        return NULL;
    }
    unsigned char addr[16];
    bool numeric = inet_pton(AF_INET, host, addr) == 1 ||
                   inet_pton(AF_INET6, host, addr) == 1;
    if (!numeric)
        SSL_set_tlsext_host_name(ssl, host);
    if (t->verify) {
        X509_VERIFY_PARAM *p = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(p,
                                        X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = numeric ? X509_VERIFY_PARAM_set1_ip_asc(p, host)
                         : X509_VERIFY_PARAM_set1_host(p, host, 0);
        if (ok != 1) {
            SSL_free(ssl);
            errbuf_set(err, errlen, "TLS: cannot verify against '%s'", host);
            return NULL;
        }
    }
    struct bufferevent *bev = bufferevent_openssl_socket_new(
        base, -1, ssl, BUFFEREVENT_SSL_CONNECTING,
        BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (bev == NULL) {
        SSL_free(ssl);
        errbuf_set(err, errlen, "TLS: cannot create a connection");
        return NULL;
    }
    /* A server that closes without close_notify has still ended its
     * reply (evhttp frames replies itself). */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    evbuffer_add_cb(bufferevent_get_output(bev), on_client_output, bev);
    return bev;
}

bool tls_client_bev_error(struct bufferevent *bev, char *out, size_t outlen)
{
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    long vr = ssl != NULL && (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER)
                  ? SSL_get_verify_result(ssl)
                  : X509_V_OK;
    unsigned long e = bufferevent_get_openssl_error(bev);
    unsigned long last = e;
    while (e != 0) {
        last = e;
        e = bufferevent_get_openssl_error(bev);
    }
    if (last == 0 && vr == X509_V_OK)
        return false;
    const char *r = last != 0 ? ERR_reason_error_string(last) : NULL;
    if (vr != X509_V_OK)
        snprintf(out, outlen, "TLS: %s: %s",
                 r != NULL ? r : "certificate verify failed",
                 X509_verify_cert_error_string(vr));
    else
        snprintf(out, outlen, "TLS: %s", r != NULL ? r : "handshake failed");
    return true;
}
