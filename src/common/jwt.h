/*
 * JSON Web Tokens (RFC 7519) signed with HMAC-SHA256 ("alg": "HS256"), as
 * Mesos's agent gives its executors (libprocess jwt.cpp, the executor
 * secret generator): header {"alg":"HS256","typ":"JWT"}, a payload of
 * string claims, each part base64url-encoded without padding, and the
 * signature the HMAC of "<header>.<payload>" under the agent's key.
 *
 * Verification accepts HS256 only (a token saying "none" or another
 * algorithm is refused, so it cannot be forged by dropping the
 * signature), compares signatures in constant time and bounds the token's
 * length before decoding anything.
 */
#ifndef OFFERD_COMMON_JWT_H
#define OFFERD_COMMON_JWT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Longest token verified, in bytes. */
#define JWT_MAX_TOKEN 4096

/* A token carrying claims (a JSON object of strings, borrowed) signed
 * with key (keylen bytes). Returns a new NUL-terminated string (caller
 * frees), or NULL when claims is not an object. */
char *jwt_hs256_sign(const json_t *claims, const uint8_t *key, size_t keylen);

/* Verify token (len bytes) against key. Returns its claims (a new
 * reference), or NULL with a one-line reason in err: malformed, not
 * HS256, or a signature that does not match. */
json_t *jwt_hs256_verify(const char *token, size_t len, const uint8_t *key,
                         size_t keylen, char *err, size_t errlen);

#endif
