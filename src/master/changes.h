/*
 * Operator changes, one at a time: the maintenance schedule, machines down
 * and up, agent draining and deactivation, weights and quota. Each change
 * validates against the state as the changes before it left it, writes the
 * registry, applies itself and answers; the next starts only then, so
 * changes are applied in the order they arrived (as Mesos's registrar
 * serializes its operations).
 *
 * A change embeds struct master_change as its first member and gives its
 * run and free functions. run starts the change: it ends it, at once (a
 * refusal) or from its registry write's completion, with
 * master_change_end, which answers the request, frees the change and
 * starts the next. Refusals answered inside run do not recurse: a long
 * queue of them is answered in one loop.
 */
#ifndef OFFERD_MASTER_CHANGES_H
#define OFFERD_MASTER_CHANGES_H

#include "master/master_types.h"

struct master_change {
    struct master_change *next;
    struct http_request *req; /* answered by master_change_end */
    void (*run)(struct master *m, struct master_change *c);
    void (*free)(struct master_change *c);
    /* Set by master_change_write. */
    void (*applied)(struct master *m, struct master_change *c);
    const char *what;
};

/* Queue c (taken) and start it if no change runs. After
 * master_changes_stop, c is answered 503 and freed at once. */
void master_change_submit(struct master *m, struct master_change *c);

/* The running change c ends: answer its request (status 200 with an empty
 * body, or status with the one-line reason), free it, start the next. */
void master_change_end(struct master *m, struct master_change *c, int status,
                       const char *reason);

/* Called once c's registry write is durable: apply the change and end c. */
typedef void (*master_change_applied_fn)(struct master *m,
                                         struct master_change *c);

/* Write b (taken) to the registry for the running change c. When it is
 * durable applied(m, c) runs; when it fails c ends 503 with the registry's
 * reason, logged as "<what> not recorded: <reason>" (nothing changed). */
struct registry_batch;
void master_change_write(struct master *m, struct master_change *c,
                         struct registry_batch *b,
                         master_change_applied_fn applied, const char *what);

/* Shutting down: answer the queued changes 503 and take no more; the one
 * running (in the registry) ends when the registry closes. */
void master_changes_stop(struct master *m);

#endif
