/*
 * The master's registry: the durable store of what must survive a master
 * restart (proto/offerd/registry.proto): admitted, unreachable and gone
 * agents, frameworks with their failover timeouts, and the maintenance
 * schedule, machine modes, weights and quotas.
 *
 * The master keeps all state in memory and uses the registry in two ways:
 *
 *  - At start-up, registry_open() reads everything synchronously and hands
 *    it over as one decoded Offerd__Registry__Registry.
 *  - Afterwards, each change the master must not forget goes into a batch
 *    of puts and deletes; registry_apply() queues it, a worker thread makes
 *    it durable (committed and fsynced, all or nothing), and the batch's
 *    done callback runs later on the loop thread, in submission order. The
 *    master answers the request that caused the change from that callback.
 *
 * Only the worker thread touches the store; the master's state stays
 * single-threaded. Batches queued while another commits may be committed
 * together in one transaction (group commit); each done still runs only
 * after its own batch is durable. The store itself sits behind a small
 * backend interface (master/registry_backend.h); the default is SQLite in
 * the work_dir (master/registry_sqlite.h). docs/registry.md has the
 * durability argument.
 *
 * Every entity is stored under (kind, key), the key derived from the entity
 * (see enum registry_kind); a put replaces the entity with the same key.
 */
#ifndef OFFERD_MASTER_REGISTRY_H
#define OFFERD_MASTER_REGISTRY_H

#include "master/registry_backend.h"
#include "offerd/registry.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct registry;
struct registry_batch;

/* What an entity is, which message holds it and the key it is stored
 * under. */
enum registry_kind {
    REGISTRY_KIND_AGENT = 0,       /* Offerd__Registry__Agent; info.id */
    REGISTRY_KIND_UNREACHABLE = 1, /* Offerd__Registry__UnreachableAgent; id */
    REGISTRY_KIND_GONE = 2,        /* Offerd__Registry__GoneAgent; id */
    REGISTRY_KIND_FRAMEWORK = 3,   /* Offerd__Registry__Framework; info.id */
    REGISTRY_KIND_MACHINE = 4,     /* Mesos__V1__MachineInfo; "hostname/ip" */
    REGISTRY_KIND_WEIGHT = 5,      /* Mesos__V1__WeightInfo; role */
    REGISTRY_KIND_QUOTA = 6,       /* Mesos__V1__Quota__QuotaConfig; role */
    REGISTRY_KIND_SCHEDULE = 7,    /* Mesos__V1__Maintenance__Schedule; "" */
    REGISTRY_KIND_COUNT = 8,
};

/* Runs once per applied batch, on the loop thread, after the batch is
 * durable (ok) or known not to be stored at all (!ok, with a one-line
 * reason in err, which is valid only during the call). */
typedef void (*registry_done_fn)(bool ok, const char *err, void *arg);

/* Tuning; registry_options_init() fills in the defaults. */
struct registry_options {
    /* The store; NULL means SQLite (registry_sqlite_backend). */
    const struct registry_backend *backend;
    /* Most batches committed in one transaction; 1 turns group commit off.
     * Default 256. */
    size_t max_group;
    /* Most bytes (keys and values) waiting for the worker; a batch that
     * would go over fails with "registry backlog full". Default 64 MiB. */
    size_t max_queued_bytes;
    /* How long registry_close() lets the worker go on committing queued
     * batches before failing the rest. Default 10 s. */
    int64_t close_timeout_ns;
};

/* Counters, for metrics and the benchmark. */
struct registry_stats {
    uint64_t batches_ok;     /* batches whose done ran (or will) with ok */
    uint64_t batches_failed; /* ... with !ok */
    uint64_t commits;        /* successful transactions */
    uint64_t queued;         /* batches waiting for the worker now */
    uint64_t queued_bytes;   /* their keys and values, in bytes */
    uint64_t awaiting;       /* batches applied whose done has not run */
    uint64_t size_bytes;     /* encoded entities stored now (keys not
                                counted), as of the last commit */
    double fetch_ms;         /* how long registry_open took to read it all */
    double store_ms;         /* the last transaction's time; 0: none yet */
};

/* Transactions whose times registry_store_times keeps (the latest). */
#define REGISTRY_STORE_SAMPLES 1024

/* Fill *opts with the defaults. */
void registry_options_init(struct registry_options *opts);

/*
 * Open the registry stored at `where` (for SQLite: the work_dir, which must
 * exist; the file is <where>/registry.db, created when missing), read all
 * of it and start the worker thread. Blocks until the store is read.
 *
 * On success returns the registry and sets *state (OUT) to every stored
 * entity, decoded; the caller owns it and frees it with
 * registry_state_free(). To keep an entity past that, take its pointer and
 * set its slot to NULL (state->agents[i] = NULL, state->schedule = NULL)
 * first; free it later with protobuf_c_message_free_unpacked(e, NULL).
 * A store that is empty or new yields an empty
 * Registry. Completions are delivered through an event on `base` (borrowed;
 * it must outlive the registry). opts may be NULL for the defaults.
 *
 * On failure (corrupt or unreadable store, a store in use by another
 * process, one written by a newer offerd, an entity that does not decode)
 * returns NULL with a one-line reason in err and leaves *state alone; the
 * master must refuse to start rather than run on with an empty registry.
 */
struct registry *registry_open(struct event_base *base, const char *where,
                               const struct registry_options *opts,
                               Offerd__Registry__Registry **state, char *err,
                               size_t errlen);

/*
 * Finish queued batches and free the registry; NULL is ignored. Call it on
 * the loop thread, never from a done callback. It lets the worker go on
 * committing queued batches for up to close_timeout_ns (a commit already
 * running always finishes), fails the ones left, joins the thread, then runs
 * every outstanding done callback on the calling thread, in order, before
 * it returns. A batch applied from one of those callbacks fails with
 * "registry is closed".
 */
void registry_close(struct registry *reg);

/* Free a state from registry_open(); NULL is ignored. */
void registry_state_free(Offerd__Registry__Registry *state);

/* A new, empty batch; the caller owns it until registry_apply() or
 * registry_batch_free(). */
struct registry_batch *registry_batch_new(void);

/* Free a batch that was never applied; NULL is ignored. */
void registry_batch_free(struct registry_batch *batch);

/*
 * Add "store this entity" to the batch. entity must be the message of kind
 * (see enum registry_kind) with its required fields and its key set; it is
 * encoded now, so the caller keeps it and may change or free it at once.
 * Returns 0, or -1 with a reason (wrong message type, missing fields or
 * key, key above REGISTRY_MAX_KEY_BYTES, encoding above
 * REGISTRY_MAX_ENTITY_BYTES) and the batch unchanged.
 */
int registry_batch_put(struct registry_batch *batch, enum registry_kind kind,
                       const ProtobufCMessage *entity, char *err,
                       size_t errlen);

/* Add "remove the entity of kind stored under key" (key copied; the form of
 * enum registry_kind, see also registry_key_of). Removing an absent entity
 * is not an error. Returns 0, or -1 with a reason (bad kind, key too long)
 * and the batch unchanged. */
int registry_batch_delete(struct registry_batch *batch, enum registry_kind kind,
                          const char *key, char *err, size_t errlen);

/* Operations in the batch. */
size_t registry_batch_count(const struct registry_batch *batch);

/*
 * Queue batch to be made durable, taking ownership of it (it is freed after
 * done has run). Operations take effect in the order they were added, and
 * the batch is atomic: after a crash or a failure either all of it is
 * stored or none. done (may be NULL) runs exactly once, always later from
 * the loop (never inside this call), in the order batches were applied:
 * with ok once the batch is on stable storage, or with !ok and a reason
 * when the write failed (the store is as it was; later batches are still
 * tried), the backlog is full, or the registry closed first. Call on the
 * loop thread.
 */
void registry_apply(struct registry *reg, struct registry_batch *batch,
                    registry_done_fn done, void *arg);

/* Copy the counters into *out (OUT). */
void registry_get_stats(struct registry *reg, struct registry_stats *out);

/* Copy the times (ms, oldest first) of the latest successful transactions,
 * at most cap of them (REGISTRY_STORE_SAMPLES is all there are), into out
 * (OUT). Returns how many were copied. */
size_t registry_store_times(struct registry *reg, double *out, size_t cap);

struct prom_hist;
/* Copy the histogram of every successful transaction's time (seconds,
 * since registry_open) into *out (OUT); its bounds stay static. */
void registry_store_hist(struct registry *reg, struct prom_hist *out);

/* The name a kind is stored under ("agent", "framework", ...); NULL for a
 * value out of range. */
const char *registry_kind_name(enum registry_kind kind);

/* Write the key entity (of kind) is stored under into buf (OUT, NUL-
 * terminated). Returns 0, or -1 with a reason when entity is not a message
 * of kind, lacks its key, or the key does not fit in buflen or in
 * REGISTRY_MAX_KEY_BYTES. */
int registry_key_of(enum registry_kind kind, const ProtobufCMessage *entity,
                    char *buf, size_t buflen, char *err, size_t errlen);

#endif
