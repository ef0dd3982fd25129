/*
 * The registry's storage backends (types only): what src/master/registry.c
 * needs from a store, so that SQLite in --work_dir (registry_sqlite.c) and a
 * later ZooKeeper backend can sit behind the same front without callers
 * noticing. A backend stores opaque values keyed by (kind, key); it knows
 * nothing about protobuf.
 *
 * Threads: open and load run on the thread that calls registry_open, apply
 * runs on the registry's worker thread, close runs after that thread has
 * been joined. A store is never used by two threads at once, so a backend
 * needs no locking of its own.
 */
#ifndef OFFERD_MASTER_REGISTRY_BACKEND_H
#define OFFERD_MASTER_REGISTRY_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* Largest encoded entity the registry stores (1 MiB); bigger ones are
 * refused when added to a batch, and a stored one this big is corruption. */
#define REGISTRY_MAX_ENTITY_BYTES (1024 * 1024)

/* Longest key, in bytes without the NUL. */
#define REGISTRY_MAX_KEY_BYTES 1024

/* What one operation of a batch does. */
enum registry_op_type {
    REGISTRY_OP_PUT = 1,    /* insert or replace (kind, key) with value */
    REGISTRY_OP_DELETE = 2, /* remove (kind, key); absent is not an error */
};

/* One change, as the backend sees it. All pointers are borrowed for the
 * duration of the apply call. */
struct registry_op {
    enum registry_op_type type;
    const char *kind;     /* e.g. "agent"; a static string of the front */
    const char *key;      /* NUL-terminated, at most REGISTRY_MAX_KEY_BYTES */
    const uint8_t *value; /* PUT only: the encoded entity */
    size_t len;           /* PUT only: bytes at value */
};

/* Test seam for failure paths; REGISTRY_FAULT_NONE in production. */
enum registry_fault {
    REGISTRY_FAULT_NONE = 0,
    /* Do every operation, then roll back instead of committing and fail
     * with the reason "injected failure". */
    REGISTRY_FAULT_FAIL = 1,
    /* Do every operation, then end the process with _exit(
     * REGISTRY_FAULT_EXIT_CODE) before committing: a crash mid-transaction
     * (for tests that fork a child to be killed). */
    REGISTRY_FAULT_EXIT = 2,
};

#define REGISTRY_FAULT_EXIT_CODE 86

/* Called by load once per stored entity; the pointers are valid only during
 * the call. Return 0 to go on, -1 to stop the load (which then fails with
 * the reason the callback wrote into err). */
typedef int (*registry_load_fn)(void *arg, const char *kind, const char *key,
                                const uint8_t *value, size_t len, char *err,
                                size_t errlen);

/* A backend: a table of functions, each reporting failure with a one-line
 * reason in the caller's err buffer. */
struct registry_backend {
    const char *name; /* for logs, e.g. "sqlite" */

    /* Open or create the store at `where` (for SQLite, the work_dir), check
     * that it is intact, and return a handle; NULL with a reason on
     * failure. May block. */
    void *(*open)(const char *where, char *err, size_t errlen);

    /* Call each() for every stored entity, in any order; 0 or -1. */
    int (*load)(void *store, registry_load_fn each, void *arg, char *err,
                size_t errlen);

    /* Apply nops operations, in order, as one atomic and durable change:
     * when it returns 0 all of them are on stable storage; when it returns
     * -1 none of them are and the store is as it was. The store must stay
     * usable after a failure. */
    int (*apply)(void *store, const struct registry_op *ops, size_t nops,
                 enum registry_fault fault, char *err, size_t errlen);

    /* Close the store and free the handle; NULL is ignored. */
    void (*close)(void *store);

    /* Most bytes (keys and values) of batches the front commits together
     * in one apply; 0 for the front's default (16 MiB). A store whose
     * requests are bounded (ZooKeeper's) keeps its groups small. */
    size_t max_group_bytes;
};

#endif
