/*
 * The registry's in-memory backend, for tests: the same (kind, key) -> value
 * store as SQLite's, with the same atomic batches and fault injection, kept
 * in this process's memory. Nothing is durable, but a store outlives the
 * registry that used it, so a test can stop a master and start another on
 * the same store (a "restart") and find every committed batch.
 *
 * Stores are named. `where` in registry_open (with
 * registry_options.backend = &registry_mem_backend) is the name, any
 * non-empty string (a test's temporary work_dir path is a handy unique
 * one); the first open of a name creates an empty store, later opens find
 * what it holds. A store is open by one registry at a time: a second open
 * of the same name fails with "in use", as the SQLite store's lock does.
 * Stores live until registry_mem_drop or registry_mem_drop_all.
 *
 * The functions below let a test look into a store, seed it and make it
 * fail. They are safe to call at any time from any thread (one mutex guards
 * every store; the registry's worker takes it for each commit), including
 * while a registry has the store open.
 */
#ifndef OFFERD_MASTER_REGISTRY_MEM_H
#define OFFERD_MASTER_REGISTRY_MEM_H

#include "master/registry_backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The backend table (open, load, apply, close). load visits entities in
 * (kind, key) order, as the SQLite backend does. */
extern const struct registry_backend registry_mem_backend;

/* Forget the store name and its entities. Returns 0, or -1 when it does not
 * exist or is open. */
int registry_mem_drop(const char *name);

/* Forget every store that is not open (for a test's teardown). */
void registry_mem_drop_all(void);

/* Entities stored under name: of kind (e.g. "agent", see
 * registry_kind_name), or of every kind when kind is NULL. -1 when there is
 * no such store. */
long registry_mem_count(const char *name, const char *kind);

/* A copy of the value of (kind, key) in store name, *len (OUT) bytes,
 * followed by a NUL not counted; the caller frees it. NULL when the store
 * or the entity is absent. */
uint8_t *registry_mem_get(const char *name, const char *kind, const char *key,
                          size_t *len);

/* Store len bytes of value (copied) under (kind, key) in store name,
 * creating the store when missing, bypassing the registry's checks: for
 * seeding a store before a registry opens it, including with entities the
 * registry must refuse at load (unknown kind, a value that does not
 * decode). */
void registry_mem_set(const char *name, const char *kind, const char *key,
                      const uint8_t *value, size_t len);

/* While failing is true, every commit to store name (created when missing)
 * fails with "registry write failed (memory store unavailable)" and changes
 * nothing, as a full disk would; the registry's own retry and ordering
 * rules apply as for any failed write. */
void registry_mem_set_failing(const char *name, bool failing);

#endif
