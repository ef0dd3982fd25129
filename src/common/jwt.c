/*
 * HS256 JSON Web Tokens; see jwt.h.
 */
#include "common/jwt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/mem.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* n bytes of in as unpadded base64url, a new string. */
static char *b64url_encode(const uint8_t *in, size_t n)
{
    char *out = xmalloc((n + 2) / 3 * 4 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = b64url[(v >> 18) & 63];
        out[o++] = b64url[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = b64url[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = b64url[v & 63];
    }
    out[o] = '\0';
    return out;
}

static int b64url_value(char c)
{
    const char *p = c != '\0' ? strchr(b64url, c) : NULL;
    return p != NULL ? (int)(p - b64url) : -1;
}

/* Decode n chars of unpadded base64url into *out (xmalloc'd, *outlen
 * bytes). Returns 0, or -1 for a character outside the alphabet or a
 * length no encoding has. */
static int b64url_decode(const char *s, size_t n, uint8_t **out, size_t *outlen)
{
    if (n % 4 == 1)
        return -1;
    uint8_t *buf = xmalloc(n / 4 * 3 + 3);
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_value(s[i]);
        if (v < 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (uint8_t)(acc >> bits);
        }
    }
    *out = buf;
    *outlen = o;
    return 0;
}

/* HMAC-SHA256 of msg under key into mac (32 bytes). */
static bool hmac_sha256(const uint8_t *key, size_t keylen, const char *msg,
                        size_t len, uint8_t mac[32])
{
    unsigned int maclen = 0;
    return HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, len,
                mac, &maclen) != NULL &&
           maclen == 32;
}

char *jwt_hs256_sign(const json_t *claims, const uint8_t *key, size_t keylen)
{
    if (!json_is_object(claims))
        return NULL;
    static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    char *payload = json_dumps(claims, JSON_COMPACT | JSON_SORT_KEYS);
    if (payload == NULL)
        return NULL;
    char *h = b64url_encode((const uint8_t *)header, sizeof(header) - 1);
    char *p = b64url_encode((const uint8_t *)payload, strlen(payload));
    free(payload);
    char *signing = xasprintf("%s.%s", h, p);
    free(h);
    free(p);
    uint8_t mac[32];
    char *token = NULL;
    if (hmac_sha256(key, keylen, signing, strlen(signing), mac)) {
        char *s = b64url_encode(mac, sizeof(mac));
        token = xasprintf("%s.%s", signing, s);
        free(s);
    }
    free(signing);
    return token;
}

/* A base64url-encoded JSON object, or NULL. */
static json_t *decode_part(const char *s, size_t n)
{
    uint8_t *raw;
    size_t rawlen;
    if (b64url_decode(s, n, &raw, &rawlen) != 0)
        return NULL;
    json_t *j =
        json_loadb((const char *)raw, rawlen, JSON_REJECT_DUPLICATES, NULL);
    free(raw);
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

json_t *jwt_hs256_verify(const char *token, size_t len, const uint8_t *key,
                         size_t keylen, char *err, size_t errlen)
{
    if (len == 0 || len > JWT_MAX_TOKEN) {
        errbuf_set(err, errlen, "token is empty or longer than %d bytes",
                   JWT_MAX_TOKEN);
        return NULL;
    }
    const char *dot1 = memchr(token, '.', len);
    const char *dot2 =
        dot1 != NULL ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token))
                     : NULL;
    if (dot2 == NULL ||
        memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)) != NULL) {
        errbuf_set(err, errlen, "expected 3 components in token");
        return NULL;
    }
    json_t *header = decode_part(token, (size_t)(dot1 - token));
    const char *alg =
        json_string_value(json_object_get(header, "alg")); /* NULL-safe */
    bool hs256 = alg != NULL && strcmp(alg, "HS256") == 0;
    json_decref(header);
    if (!hs256) {
        errbuf_set(err, errlen, "token header is not an HS256 JWT header");
        return NULL;
    }
    uint8_t *sig;
    size_t siglen;
    const char *s = dot2 + 1;
    if (b64url_decode(s, len - (size_t)(s - token), &sig, &siglen) != 0) {
        errbuf_set(err, errlen, "token signature is not base64url");
        return NULL;
    }
    uint8_t mac[32];
    bool ok = siglen == sizeof(mac) &&
              hmac_sha256(key, keylen, token, (size_t)(dot2 - token), mac) &&
              CRYPTO_memcmp(mac, sig, sizeof(mac)) == 0;
    free(sig);
    if (!ok) {
        errbuf_set(err, errlen, "token signature does not match");
        return NULL;
    }
    json_t *claims = decode_part(dot1 + 1, (size_t)(dot2 - dot1 - 1));
    if (claims == NULL)
        errbuf_set(err, errlen, "token payload is not a JSON object");
    return claims;
}
