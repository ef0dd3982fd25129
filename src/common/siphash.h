/*
 * SipHash-1-3: a keyed hash for hash tables whose keys a peer chooses (task
 * ids, framework-chosen names, role paths). With an unkeyed hash such as
 * FNV-1a a peer can compute, offline, many keys that land in one bucket and
 * make every lookup walk them all; with a secret 128-bit key it cannot.
 * redis (src/siphash.c) and tor (src/ext/siphash.c) key their tables the
 * same way, and SipHash-1-3 is what Python and Rust use for theirs: one
 * compression and three finalization rounds, enough for a table's hash
 * though not for a MAC.
 *
 * The algorithm is Aumasson and Bernstein's (https://github.com/veorq/SipHash);
 * tests/unit/test_siphash.c checks this implementation against the reference
 * implementation's test vectors.
 */
#ifndef OFFERD_COMMON_SIPHASH_H
#define OFFERD_COMMON_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit key: the reference's 16 key bytes read as two little-endian
 * 64-bit words (k0 from bytes 0-7, k1 from bytes 8-15). */
struct siphash_key {
    uint64_t k0, k1;
};

/* SipHash-1-3 of the len bytes at data under key. */
uint64_t siphash13(const struct siphash_key *key, const void *data, size_t len);

/* The process's key: 16 bytes from getrandom(2), drawn on the first call
 * (thread-safe) and the same for the life of the process. Tables copy it
 * when they are made. Aborts if the kernel has no randomness to give. */
const struct siphash_key *siphash_process_key(void);

#endif
