/*
 * /state written in slices (state_stream.c): the body is produced a piece
 * at a time, each piece within a time budget, and sent as HTTP chunks; the
 * loop serves other clients between pieces. Identical concurrent reads share
 * one production. See docs/master-internals.md, "Large reads".
 */
#ifndef OFFERD_MASTER_STATE_STREAM_H
#define OFFERD_MASTER_STATE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "master/master_types.h"

struct http_request;

/* The handler of GET /state (and /state.json, /master/state ...); arg is
 * the struct master. Answers 400 for a bad ?jsonp= callback, otherwise 200
 * with a chunked body: the JSON of Mesos's /state, filtered by the caller's
 * view_* ACLs. */
void master_state_stream_handle(struct http_request *req, void *arg);

/* Whether reader who (a principal; NULL: anonymous) may see framework fw,
 * as the view_frameworks ACLs decide for /state (true without --acls). */
bool master_state_framework_visible(struct master *m, const char *who,
                                    const struct framework *fw);

/* Release every reader and free what the productions hold. master_free
 * calls it after freeing the HTTP server, whose connections (and so the
 * unfinished bodies) are dropped, not ended. */
void master_state_streams_free(struct master *m);

/* Counters, for tests and benchmarks. */
struct master_state_stream_stats {
    uint64_t productions; /* bodies produced (finished or abandoned) */
    uint64_t readers;     /* readers served a whole body */
    uint64_t slices;      /* slices run */
    uint64_t pauses;      /* slices put off because a reader was behind */
    uint64_t cut;         /* readers closed for not reading */
    size_t active;        /* productions under way now */
    size_t max_buffered;  /* most bytes a production held before sending */
};
void master_state_stream_stats(const struct master *m,
                               struct master_state_stream_stats *out);

/* Tuning (tests, benchmarks): budget_ns per slice (0: one entity per
 * slice), the most bytes a slice produces before it sends them, and the
 * bytes a reader may have waiting in its connection before production
 * pauses. Zero in the latter two keeps the current value. Once tuned,
 * even a small state is written in slices (by default one of at most 100
 * agents, frameworks and tasks is written whole by the handler). */
void master_state_stream_tune(struct master *m, int64_t budget_ns,
                              size_t slice_bytes, size_t max_pending);

#endif
