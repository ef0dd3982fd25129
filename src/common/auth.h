/*
 * Authentication as Mesos's HTTP Basic authenticator does it, for the
 * master, the agent and their clients.
 *
 * Credentials files (the master's --credentials, the agent's
 * --http_credentials) take Mesos's two forms:
 *   JSON  {"credentials": [{"principal": "p", "secret": "s"}, ...]}
 *   text  one "principal secret" per line (blank lines skipped)
 * A client's own credential (the agent's --credential, offerctl's
 * --secret_file) is one of them: JSON {"principal": "p", "secret": "s"} or a
 * text line "principal secret". A path may carry Mesos's "file://" prefix.
 * Anything else (a missing file, bad JSON, a line of one word, an empty
 * principal, a principal given twice) is refused with a one-line reason.
 *
 * Requests carry "Authorization: Basic base64(principal:secret)"; the
 * secret is compared in time independent of where it differs.
 */
#ifndef OFFERD_COMMON_AUTH_H
#define OFFERD_COMMON_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct http_request;

/* Longest principal and secret accepted, in bytes. */
#define AUTH_MAX_PRINCIPAL 256
#define AUTH_MAX_SECRET    1024
/* Largest credentials file read, and most credentials in one. */
#define AUTH_MAX_FILE        ((size_t)4 << 20)
#define AUTH_MAX_CREDENTIALS 100000

/* The realm Mesos names in its WWW-Authenticate challenge. */
#define AUTH_REALM "mesos"

/* One principal and its secret. */
struct auth_credential {
    char principal[AUTH_MAX_PRINCIPAL + 1];
    char secret[AUTH_MAX_SECRET + 1];
};

/* The principals a server accepts. */
struct auth_credentials;

/* Load a credentials file (either form above). Returns the set, or NULL
 * with a one-line reason in err. */
struct auth_credentials *auth_credentials_load(const char *path, char *err,
                                               size_t errlen);
/* The same from text already in memory (len bytes). */
struct auth_credentials *auth_credentials_parse(const char *text, size_t len,
                                                char *err, size_t errlen);
void auth_credentials_free(struct auth_credentials *c);
size_t auth_credentials_count(const struct auth_credentials *c);

/* True when principal is known and secret is its secret. */
bool auth_credentials_check(const struct auth_credentials *c,
                            const char *principal, const char *secret);

/* Load one client credential (either form above) into *out. Returns 0, or
 * -1 with a one-line reason in err. */
int auth_credential_load(const char *path, struct auth_credential *out,
                         char *err, size_t errlen);

/* Equality of two NUL-terminated secrets whose running time depends on
 * their lengths only, not on where they differ. */
bool auth_secret_equal(const char *a, const char *b);

/* Parse an Authorization header value "Basic <base64 principal:secret>"
 * (scheme case-insensitive) into *out. Returns 0, or -1 with a one-line
 * reason in err. */
int auth_basic_parse(const char *header, struct auth_credential *out, char *err,
                     size_t errlen);

/* The Authorization header value for principal and secret, as a new
 * string ("Basic ..."; caller frees). */
char *auth_basic_header(const char *principal, const char *secret);

/* The outcome of authenticating a request. */
enum auth_result {
    AUTH_ANONYMOUS = 0, /* no Authorization header */
    AUTH_OK = 1,        /* valid credentials: the principal is known */
    AUTH_FAILED = -1,   /* a header that is malformed or whose credentials
                           are wrong */
};

/* Authenticate req against creds (NULL: no principal is known, so any
 * header fails). On AUTH_OK the principal is written into principal
 * (AUTH_MAX_PRINCIPAL + 1 bytes); on AUTH_FAILED a reason into err. */
enum auth_result auth_request(const struct auth_credentials *creds,
                              const struct http_request *req, char *principal,
                              char *err, size_t errlen);

/* Reply 401 with the challenge WWW-Authenticate: Basic realm="mesos" and a
 * one-line reason (the request is dead after). */
void auth_reply_unauthorized(struct http_request *req, const char *reason);

#endif
