/*
 * Identifiers: random UUIDs (version 4, RFC 4122) and the Mesos-style ids the
 * master derives from its own UUID plus a counter, as Mesos's master does:
 *
 *     framework  "<base>-0007"   (counter zero-padded to 4 digits, wider
 *                                 when it grows past 9999)
 *     agent      "<base>-S12"
 *     offer      "<base>-O345"
 *
 * The counters are the caller's (master state owns them and decides what
 * must survive a restart); this module only formats and parses.
 */
#ifndef OFFERD_COMMON_IDS_H
#define OFFERD_COMMON_IDS_H

#include <stddef.h>
#include <stdint.h>

/* Characters of a UUID in text form, e.g.
 * "1b4e28ba-2fa1-41d2-883f-0016d3cca427"; and the buffer size with the NUL. */
#define ID_UUID_LEN  36
#define ID_UUID_SIZE 37

/* Buffer size that holds any derived id whose base is a UUID. */
#define ID_DERIVED_SIZE 64

/* Fill out with n random bytes from getrandom(2). Aborts if the kernel
 * cannot supply randomness (the process's own failure, like running out of
 * memory). */
void id_random_bytes(void *out, size_t n);

/* Fill out with 16 random bytes from getrandom(2), with the version (4) and
 * variant (10xx) bits set. Aborts as id_random_bytes does. */
void id_uuid_v4_bytes(uint8_t out[16]);

/* Write the lower-case text form of uuid (36 characters and a NUL). */
void id_uuid_format(const uint8_t uuid[16], char out[ID_UUID_SIZE]);

/* Write a new random UUID in text form. */
void id_uuid_v4(char out[ID_UUID_SIZE]);

/* Parse the 36-character text form (either case). Returns 0 and fills out
 * (OUT), or -1 on anything else (wrong length, misplaced dashes, non-hex). */
int id_uuid_parse(const char *text, uint8_t out[16]);

/* Kinds of derived ids and the text they put after "<base>-". */
enum id_kind {
    ID_FRAMEWORK, /* "%04" counter */
    ID_AGENT,     /* "S" counter */
    ID_OFFER,     /* "O" counter */
};

/* Write the id of kind for counter n derived from base into out (outlen
 * bytes, ID_DERIVED_SIZE suffices for a UUID base). Returns 0, or -1 when
 * it does not fit (out is then an empty string if outlen > 0). */
int id_derive(enum id_kind kind, const char *base, uint64_t n, char *out,
              size_t outlen);

/* If id was derived from base with this kind, store its counter in *n (OUT)
 * and return 0; otherwise return -1. Inverse of id_derive, for recovering
 * counters from stored ids. */
int id_counter_of(enum id_kind kind, const char *base, const char *id,
                  uint64_t *n);

#endif
