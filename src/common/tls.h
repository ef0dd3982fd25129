/*
 * TLS for offerd's HTTP ports and HTTP clients, configured as Mesos's
 * libprocess is: LIBPROCESS_SSL_* environment variables (docs/security.md,
 * "TLS"). OpenSSL does the work; libevent carries it:
 *  - servers (common/http_conn.c): every accepted socket gets a bufferevent
 *    from tls_server_bev: a bufferevent_openssl, or with downgrade allowed
 *    a filter that speaks TLS, or plain HTTP when the first byte is not a
 *    TLS handshake;
 *  - clients (common/http_client.c): a bufferevent_openssl per connection
 *    from tls_client_bev, verifying the server's certificate (hostname or
 *    IP address) when asked to.
 * The configuration is read once per process (tls_client_process) or per
 * server (http_server_bind); a bad one is refused with a one-line reason.
 */
#ifndef OFFERD_COMMON_TLS_H
#define OFFERD_COMMON_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bufferevent;
struct event_base;
struct tls_server;
struct tls_client;

/* The settings, as LIBPROCESS_SSL_<NAME> (or Mesos's older SSL_<NAME>)
 * give them. Strings are owned (tls_config_clear frees them); NULL: unset. */
struct tls_config {
    bool enabled;             /* ENABLED: servers speak TLS, clients too */
    bool support_downgrade;   /* SUPPORT_DOWNGRADE: servers also accept
                                 plain HTTP on the same port */
    bool verify_server_cert;  /* VERIFY_CERT / VERIFY_SERVER_CERT: clients
                                 verify the server's chain and name */
    bool require_client_cert; /* REQUIRE_CERT / REQUIRE_CLIENT_CERT: servers
                                 refuse clients without a valid certificate;
                                 implies verify_server_cert */
    char *cert_file;          /* CERT_FILE: PEM chain presented */
    char *key_file;           /* KEY_FILE: its PEM private key */
    char *ca_file;            /* CA_FILE: PEM CAs trusted */
    char *ca_dir;             /* CA_DIR: hashed directory of CAs trusted */
    char *ciphers;            /* CIPHERS: OpenSSL list for TLS <= 1.2 */
    int verify_depth;         /* VERIFICATION_DEPTH (VERIFY_DEPTH): 4 */
    bool tls_v1_0, tls_v1_1;  /* ENABLE_TLS_V1_0/1_1: off */
    bool tls_v1_2, tls_v1_3;  /* ENABLE_TLS_V1_2: on; ENABLE_TLS_V1_3: off */
};

/* Read the configuration from env (NULL-terminated "NAME=value" array,
 * e.g. environ) into *out (OUT, cleared first). Booleans are true/1 or
 * false/0. Returns 0, or -1 with a one-line reason in err (and *out
 * cleared) for a value that is not understood. Files are not read here. */
int tls_config_from_env(char *const *env, struct tls_config *out, char *err,
                        size_t errlen);

/* Free the strings of c and zero it. */
void tls_config_clear(struct tls_config *c);

/* ---- Flags ----
 * Mesos has only the environment; offerd's master and agent also take
 * --ssl_<name> flags (or OFFERD_SSL_<NAME>), which override the
 * LIBPROCESS_SSL_<NAME> variables of the process and of everything it
 * starts (executors inherit them, as Mesos's executors need them). */

struct flags;
struct flag_def;

#define TLS_FLAG_ROWS 8

/* Values of the --ssl_* flags (strings borrowed from the flags object). */
struct tls_flags {
    bool enabled, support_downgrade, verify_cert, require_cert;
    const char *cert_file, *key_file, *ca_file, *ca_dir;
};

/* Write the TLS_FLAG_ROWS rows of the --ssl_* flags into out, storing
 * into v (both borrowed; they outlive the flags object). */
void tls_flag_defs(struct tls_flags *v, struct flag_def *out);

/* After flags_parse: set LIBPROCESS_SSL_<NAME> for every --ssl_<name>
 * that was given. Call before any server binds or thread starts. */
void tls_flags_export(const struct flags *f, const struct tls_flags *v);

/* ---- Servers ---- */

/* Build a server's TLS context from c (borrowed): certificate and key
 * (required, and must match), CAs when client certificates are required.
 * Returns NULL with a one-line reason in err when c is not enabled or
 * something cannot be loaded. */
struct tls_server *tls_server_new(const struct tls_config *c, char *err,
                                  size_t errlen);

void tls_server_free(struct tls_server *s);

/* A bufferevent for one accepted socket of s (its fd is set later, by
 * evhttp, through bufferevent_setfd), closing the socket when freed:
 * without downgrade a bufferevent_openssl on the socket, accepting; with
 * downgrade a filter over a socket bufferevent that speaks TLS, or plain
 * HTTP when the client's first byte is not 0x16. A failed handshake
 * reports an error event (evhttp then closes the connection), logs one
 * debug line and counts in s. NULL when out of memory. */
struct bufferevent *tls_server_bev(struct tls_server *s,
                                   struct event_base *base);

/* Counters since tls_server_new. */
struct tls_server_stats {
    uint64_t handshakes;         /* completed */
    uint64_t handshake_failures; /* refused or broken handshakes */
    uint64_t plain;              /* connections downgraded to plain HTTP */
};
void tls_server_stats(const struct tls_server *s, struct tls_server_stats *out);

/* ---- Clients ---- */

/* Build a client's TLS context from c (borrowed): the CAs to verify
 * servers with when c->verify_server_cert (else OpenSSL's defaults), and
 * the certificate and key to present when both are set. Returns NULL with
 * a reason in err on failure. c need not be enabled (an https:// URL asks
 * for TLS on its own). */
struct tls_client *tls_client_new(const struct tls_config *c, char *err,
                                  size_t errlen);

void tls_client_free(struct tls_client *t);

/* The process's client configuration, read from the environment on first
 * use (thread-safe, kept until exit). Returns 1 with *out set when
 * LIBPROCESS_SSL_ENABLED is on; 0 when it is off, with *out the context
 * for requests that ask for TLS themselves (NULL, and *reason, when the
 * other settings cannot be loaded); -1 with *out NULL and *reason (static,
 * one line) when TLS is on and its configuration is bad. */
int tls_client_process(struct tls_client **out, const char **reason);

/* A process-wide client that verifies nothing and presents no
 * certificate (TLS 1.2 and 1.3), for HTTPS health checks of a task's own
 * server (Mesos runs those as curl -k). NULL if it cannot be built. */
struct tls_client *tls_client_insecure(void);

/* A bufferevent_openssl connecting to host (numeric address or name: the
 * name or address its certificate must carry when verifying), for
 * evhttp_connection_base_bufferevent_new; closes its socket when freed.
 * NULL with a reason in err on failure. */
struct bufferevent *tls_client_bev(struct tls_client *t,
                                   struct event_base *base, const char *host,
                                   char *err, size_t errlen);

/* After a failure on bev (from tls_client_bev): the TLS reason in out
 * (e.g. "certificate verify failed: unable to get local issuer
 * certificate"). Returns false when TLS reported nothing. */
bool tls_client_bev_error(struct bufferevent *bev, char *out, size_t outlen);

#endif
