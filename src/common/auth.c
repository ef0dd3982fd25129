/*
 * Credentials files, HTTP Basic and secret comparison; see auth.h.
 */
#include "common/auth.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/errbuf.h"
#include "common/fs.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/mem.h"

struct auth_credentials {
    struct hmap *secrets; /* principal -> secret (char *, owned) */
};

bool auth_secret_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t n = la > lb ? la : lb;
    volatile unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = i < la ? (unsigned char)a[i] : 0;
        unsigned char y = i < lb ? (unsigned char)b[i] : 0;
        diff |= (unsigned char)(x ^ y);
    }
    return diff == 0;
}

/* Read path (with an optional "file://" prefix) into a new NUL-terminated
 * buffer. */
static char *read_path(const char *path, size_t *len, char *err, size_t errlen)
{
    if (strncmp(path, "file://", 7) == 0)
        path += 7;
    uint8_t *data = NULL;
    int rc = fs_read(path, AUTH_MAX_FILE, &data, len);
    if (rc != 1) {
        errbuf_set(err, errlen, "%s: %s", path,
                   rc == 0          ? "no such file"
                   : errno == EFBIG ? "file too large"
                                    : strerror(errno));
        return NULL;
    }
    return (char *)data;
}

/* Check and copy one principal/secret pair into *out. */
static int set_pair(struct auth_credential *out, const char *p, size_t plen,
                    const char *s, size_t slen, char *err, size_t errlen)
{
    if (plen == 0) {
        errbuf_set(err, errlen, "empty principal");
        return -1;
    }
    if (plen > AUTH_MAX_PRINCIPAL || slen > AUTH_MAX_SECRET) {
        errbuf_set(err, errlen, "principal or secret too long");
        return -1;
    }
    if (memchr(p, '\0', plen) != NULL || memchr(s, '\0', slen) != NULL) {
        errbuf_set(err, errlen, "NUL byte in a principal or secret");
        return -1;
    }
    memcpy(out->principal, p, plen);
    out->principal[plen] = '\0';
    memcpy(out->secret, s, slen);
    out->secret[slen] = '\0';
    return 0;
}

/* One {"principal": .., "secret": ..} object. */
static int pair_from_json(const json_t *o, struct auth_credential *out,
                          char *err, size_t errlen)
{
    const json_t *p = json_object_get(o, "principal");
    const json_t *s = json_object_get(o, "secret");
    if (!json_is_object(o) || !json_is_string(p) ||
        (s != NULL && !json_is_string(s))) {
        errbuf_set(err, errlen,
                   "expected {\"principal\": \"...\", \"secret\": \"...\"}");
        return -1;
    }
    return set_pair(out, json_string_value(p), json_string_length(p),
                    s ? json_string_value(s) : "",
                    s ? json_string_length(s) : 0, err, errlen);
}

/* One "principal secret" line (len bytes, no newline). */
static int pair_from_line(const char *line, size_t len,
                          struct auth_credential *out, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)line[i]))
        i++;
    size_t p0 = i;
    while (i < len && !isspace((unsigned char)line[i]))
        i++;
    size_t p1 = i;
    while (i < len && isspace((unsigned char)line[i]))
        i++;
    size_t s0 = i;
    while (i < len && !isspace((unsigned char)line[i]))
        i++;
    size_t s1 = i;
    while (i < len && isspace((unsigned char)line[i]))
        i++;
    if (s0 == s1 || i != len) {
        errbuf_set(err, errlen, "expected 'principal secret'");
        return -1;
    }
    return set_pair(out, line + p0, p1 - p0, line + s0, s1 - s0, err, errlen);
}

static bool is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

static int add_credential(struct auth_credentials *c,
                          const struct auth_credential *one, char *err,
                          size_t errlen)
{
    if (hmap_get(c->secrets, one->principal) != NULL) {
        errbuf_set(err, errlen, "principal '%s' given twice", one->principal);
        return -1;
    }
    if (hmap_count(c->secrets) >= AUTH_MAX_CREDENTIALS) {
        errbuf_set(err, errlen, "more than %d credentials",
                   AUTH_MAX_CREDENTIALS);
        return -1;
    }
    hmap_put(c->secrets, one->principal, xstrdup(one->secret));
    return 0;
}

struct auth_credentials *auth_credentials_parse(const char *text, size_t len,
                                                char *err, size_t errlen)
{
    struct auth_credentials *c = xcalloc(1, sizeof(*c));
    c->secrets = hmap_new();
    struct auth_credential one;
    char why[256];
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    if (i < len && text[i] == '{') {
        json_error_t je;
        json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
        const json_t *list = json_object_get(root, "credentials");
        if (!json_is_array(list)) {
            errbuf_set(err, errlen,
                       root == NULL
                           ? "credentials: invalid JSON (line %d: %s)"
                           : "credentials: expected {\"credentials\": [...]}",
                       je.line, je.text);
            json_decref(root);
            goto fail;
        }
        size_t k;
        const json_t *o;
        json_array_foreach(list, k, o)
        {
            if (pair_from_json(o, &one, why, sizeof(why)) != 0 ||
                add_credential(c, &one, why, sizeof(why)) != 0) {
                errbuf_set(err, errlen, "credentials[%zu]: %s", k, why);
                json_decref(root);
                goto fail;
            }
        }
        json_decref(root);
    } else {
        size_t lineno = 0;
        for (size_t at = 0; at < len;) {
            const char *nl = memchr(text + at, '\n', len - at);
            size_t end = nl != NULL ? (size_t)(nl - text) : len;
            lineno++;
            if (!is_blank(text + at, end - at) &&
                (pair_from_line(text + at, end - at, &one, why, sizeof(why)) !=
                     0 ||
                 add_credential(c, &one, why, sizeof(why)) != 0)) {
                errbuf_set(err, errlen, "credentials line %zu: %s", lineno,
                           why);
                goto fail;
            }
            at = end + 1;
        }
    }
    explicit_bzero(&one, sizeof(one));
    if (hmap_count(c->secrets) == 0) {
        errbuf_set(err, errlen, "credentials: no credential given");
        auth_credentials_free(c);
        return NULL;
    }
    return c;
fail:
    explicit_bzero(&one, sizeof(one));
    auth_credentials_free(c);
    return NULL;
}

struct auth_credentials *auth_credentials_load(const char *path, char *err,
                                               size_t errlen)
{
    size_t len;
    char *text = read_path(path, &len, err, errlen);
    if (text == NULL)
        return NULL;
    char why[512];
    struct auth_credentials *c =
        auth_credentials_parse(text, len, why, sizeof(why));
    if (c == NULL)
        errbuf_set(err, errlen, "%s: %s", path, why);
    explicit_bzero(text, len);
    free(text);
    return c;
}

static void free_secret(void *v)
{
    char *s = v;
    explicit_bzero(s, strlen(s));
    free(s);
}

void auth_credentials_free(struct auth_credentials *c)
{
    if (c == NULL)
        return;
    hmap_free(c->secrets, free_secret);
    free(c);
}

size_t auth_credentials_count(const struct auth_credentials *c)
{
    return c != NULL ? hmap_count(c->secrets) : 0;
}

bool auth_credentials_check(const struct auth_credentials *c,
                            const char *principal, const char *secret)
{
    const char *want = c != NULL ? hmap_get(c->secrets, principal) : NULL;
    /* An unknown principal still costs one comparison. */
    bool ok = auth_secret_equal(want != NULL ? want : "", secret);
    return want != NULL && ok;
}

int auth_credential_load(const char *path, struct auth_credential *out,
                         char *err, size_t errlen)
{
    size_t len;
    char *text = read_path(path, &len, err, errlen);
    if (text == NULL)
        return -1;
    char why[256];
    int rc;
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i]))
        i++;
    if (i < len && text[i] == '{') {
        json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
        rc = root != NULL ? pair_from_json(root, out, why, sizeof(why)) : -1;
        if (root == NULL)
            errbuf_set(why, sizeof(why), "invalid JSON");
        json_decref(root);
    } else {
        while (len > 0 && isspace((unsigned char)text[len - 1]))
            len--;
        rc = memchr(text, '\n', len) != NULL
                 ? (errbuf_set(why, sizeof(why),
                               "expected one 'principal secret' line"),
                    -1)
                 : pair_from_line(text, len, out, why, sizeof(why));
    }
    if (rc != 0)
        errbuf_set(err, errlen, "%s: %s", path, why);
    explicit_bzero(text, len);
    free(text);
    return rc;
}

int auth_basic_parse(const char *header, struct auth_credential *out, char *err,
                     size_t errlen)
{
    if (strncasecmp(header, "Basic", 5) != 0 || header[5] != ' ') {
        errbuf_set(err, errlen, "expected the Basic authentication scheme");
        return -1;
    }
    const char *b = header + 6;
    while (*b == ' ')
        b++;
    size_t n = strlen(b);
    if (n > 4 * (AUTH_MAX_PRINCIPAL + AUTH_MAX_SECRET) / 3 + 8) {
        errbuf_set(err, errlen, "credentials too long");
        return -1;
    }
    uint8_t *raw = NULL;
    size_t rawlen = 0;
    if (jpb_base64_decode(b, n, &raw, &rawlen) != 0) {
        errbuf_set(err, errlen, "malformed base64 in the Authorization header");
        return -1;
    }
    const uint8_t *colon = raw != NULL ? memchr(raw, ':', rawlen) : NULL;
    int rc;
    if (colon == NULL) {
        errbuf_set(err, errlen, "expected 'principal:secret' credentials");
        rc = -1;
    } else {
        size_t plen = (size_t)(colon - raw);
        rc = set_pair(out, (const char *)raw, plen, (const char *)colon + 1,
                      rawlen - plen - 1, err, errlen);
    }
    if (raw != NULL)
        explicit_bzero(raw, rawlen);
    free(raw);
    return rc;
}

char *auth_basic_header(const char *principal, const char *secret)
{
    size_t pl = strlen(principal), sl = strlen(secret);
    char *pair = xmalloc(pl + sl + 2);
    memcpy(pair, principal, pl);
    pair[pl] = ':';
    memcpy(pair + pl + 1, secret, sl + 1);
    char *b = jpb_base64_encode((const uint8_t *)pair, pl + sl + 1);
    explicit_bzero(pair, pl + sl + 1);
    free(pair);
    size_t bl = strlen(b);
    char *out = xmalloc(bl + 7);
    memcpy(out, "Basic ", 6);
    memcpy(out + 6, b, bl + 1);
    explicit_bzero(b, bl);
    free(b);
    return out;
}

enum auth_result auth_request(const struct auth_credentials *creds,
                              const struct http_request *req, char *principal,
                              char *err, size_t errlen)
{
    const char *h = http_request_header(req, "Authorization");
    if (h == NULL)
        return AUTH_ANONYMOUS;
    struct auth_credential c;
    if (auth_basic_parse(h, &c, err, errlen) != 0)
        return AUTH_FAILED;
    bool ok = auth_credentials_check(creds, c.principal, c.secret);
    explicit_bzero(c.secret, sizeof(c.secret));
    if (!ok) {
        errbuf_set(err, errlen, "invalid credentials");
        return AUTH_FAILED;
    }
    memcpy(principal, c.principal, sizeof(c.principal));
    return AUTH_OK;
}

void auth_reply_unauthorized(struct http_request *req, const char *reason)
{
    http_reply_header(req, "WWW-Authenticate",
                      "Basic realm=\"" AUTH_REALM "\"");
    http_reply_error(req, 401, "%s", reason);
}
