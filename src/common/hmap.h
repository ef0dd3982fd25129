/*
 * hmap: a hash map from NUL-terminated string keys to pointers (open
 * addressing, linear probing, backward-shift deletion; no tombstones). The
 * master keys its frameworks, agents, tasks and offers by id with it.
 *
 * Keys are copied (borrowed by a map made with hmap_new_borrowing); values
 * are borrowed (the map never frees them unless hmap_free is given a free
 * function). Lookups cost one hash and, almost
 * always, one string compare, whatever keys a peer picks: keys are hashed
 * with SipHash-1-3 under the process's secret key (common/siphash.h), so
 * nobody outside can choose keys that collide. Not thread-safe: one owner.
 *
 * Iteration (hmap_next) visits every entry once in an unspecified order.
 * Adding or deleting entries during an iteration is not allowed: collect
 * the keys first, then change the map.
 */
#ifndef OFFERD_COMMON_HMAP_H
#define OFFERD_COMMON_HMAP_H

#include <stdbool.h>
#include <stddef.h>

struct hmap;

/* A new, empty map. Never fails. */
struct hmap *hmap_new(void);

/* A new, empty map that borrows its keys instead of copying them: the key
 * given to hmap_put must stay valid and unchanged until its entry is
 * deleted or replaced, or the map is freed (a string the value owns, such
 * as a task's id: one copy fewer per entry). The map never frees a key. */
struct hmap *hmap_new_borrowing(void);

/* Free the map and its key copies; when free_val is non-NULL, call it on
 * every value. NULL is ignored. */
void hmap_free(struct hmap *m, void (*free_val)(void *val));

/* The value stored under key, or NULL. */
void *hmap_get(const struct hmap *m, const char *key);

/* Store val (non-NULL) under key (copied, or borrowed: see
 * hmap_new_borrowing; a borrowing map keeps this key when it replaces a
 * value). Returns the value it replaced, or NULL when key was new. */
void *hmap_put(struct hmap *m, const char *key, void *val);

/* Remove key. Returns its value, or NULL when absent. */
void *hmap_del(struct hmap *m, const char *key);

/* Number of entries. */
size_t hmap_count(const struct hmap *m);

/* Iterate: start with *pos = 0; each call that returns true sets *key
 * (borrowed, valid until the entry is deleted) and *val (both OUT, either
 * may be NULL) and advances *pos. Returns false when done. */
bool hmap_next(const struct hmap *m, size_t *pos, const char **key, void **val);

#endif
