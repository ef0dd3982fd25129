/*
 * Test hooks of common/hmap. Only tests include this header; the counter is
 * always kept, at one add per search and per slot visited while growing.
 */
#ifndef OFFERD_COMMON_HMAP_PRIVATE_H
#define OFFERD_COMMON_HMAP_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

/* Slots examined so far by every hmap operation of the calling thread:
 * each get, put and del counts the slots its search visits (at least one),
 * and each growth one per slot visited while placing every entry anew. A
 * test reads it before and after the work it measures. */
uint64_t hmap_probes(void);

struct hmap;

/* Bytes m's slot array holds: 0 while m is empty (before its first
 * hmap_put and after its last entry is deleted). */
size_t hmap_slot_bytes(const struct hmap *m);

#endif
