/*
 * The offerd master: owns the cluster's state (frameworks, agents, tasks,
 * offers), serves the Mesos v1 scheduler API, offerd's agent API and the
 * read endpoints, and drives the allocator. One instance per process, on
 * the caller's event loop; everything runs in loop callbacks.
 */
#ifndef OFFERD_MASTER_MASTER_H
#define OFFERD_MASTER_MASTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct master;
struct master_flags;

/*
 * Create the master: open the registry in flags->work_dir (recovering what
 * it holds), create the allocator, bind the HTTP server to flags->ip and
 * flags->port, register every endpoint and start the timers. flags is
 * borrowed and must outlive the master. Returns the master, or NULL with a
 * one-line reason in err (nothing is left behind).
 */
struct master *master_new(struct event_base *base,
                          const struct master_flags *flags, char *err,
                          size_t errlen);

/* What a caller other than main() may change; the zero value is what
 * master_new does. */
struct registry_backend;
struct master_options {
    /* The registry's store: NULL takes flags->registry (SQLite in
     * flags->work_dir, or none for "in_memory"); else this backend, opened
     * at registry_where (NULL: flags->work_dir). Tests pass the memory
     * backend (master/registry_mem.h). */
    const struct registry_backend *registry_backend;
    const char *registry_where;
    /* Bind no socket: the handlers are driven directly (unit tests). */
    bool no_listen;
    /* Bytes an operator event stream may have waiting before its
     * subscriber is dropped (0: the HTTP default); tests make it small. */
    size_t operator_stream_cap;
    /* This master's id (copied; NULL: a new one): a master elected
     * through ZooKeeper keeps the id it contended with (master/ha.c). */
    const char *id;
};

/* master_new with options (borrowed; NULL: the defaults). */
struct master *master_new_with(struct event_base *base,
                               const struct master_flags *flags,
                               const struct master_options *opts, char *err,
                               size_t errlen);

/* The port the master listens on (useful with --port=0). */
uint16_t master_port(const struct master *m);

/* Close every stream, stop the timers, close the registry (waiting for
 * writes in flight) and free everything. NULL is ignored. */
void master_free(struct master *m);

/* ---- Inside src/master ----------------------------------------------------
 * What master.c offers the master's other files. */

/* Ask for an allocation cycle soon (after the current callback chain). */
void master_allocate_soon(struct master *m);

/* The loop's backlog, as Mesos's master/event_queue_* metrics count its
 * actor's queue (OUT, all three): *messages, events whose callbacks are due
 * and not yet run (ready sockets, expired timers); *dispatches, work the
 * master handed itself (an allocation cycle asked for, registry writes
 * whose completion has not run); *http_requests, requests taken in and not
 * answered yet. */
void master_event_queue_counts(const struct master *m, double *messages,
                               double *dispatches, double *http_requests);

#endif
