/*
 * Test hooks of common/siphash. Only tests include this header.
 */
#ifndef OFFERD_COMMON_SIPHASH_PRIVATE_H
#define OFFERD_COMMON_SIPHASH_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/siphash.h"

/* SipHash-c-d: c compression and d finalization rounds (1 and 3 for
 * siphash13; 2 and 4 for the SipHash-2-4 of the paper's test vectors). */
uint64_t siphash_rounds(const struct siphash_key *key, const void *data,
                        size_t len, int c, int d);

/* Replace the process's key, so that a test's table layout (and its probe
 * counts) is the same on every run. Tables made before keep their copy of
 * the old key. */
void siphash_set_process_key(const struct siphash_key *key);

#endif
