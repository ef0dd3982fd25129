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

struct jout;

/* Another body written by the same machinery (slices, budget, pauses for
 * slow readers, batching of identical reads): the operator API's GET_STATE
 * and its parts (operator_stream.h). A production calls start once, then
 * step until it returns true, then free; free is also called when every
 * reader left mid-body. */
struct master_body_ops {
    const char *name; /* for logs: "GET_STATE" */
    /* A cursor over m's state for reader who (NULL: anonymous; borrowed
     * for the production's life), variant as master_state_stream_serve
     * was given it. */
    void *(*start)(struct master *m, const char *who, int variant);
    /* Append about one entity's bytes to w (they go to the readers as
     * they are); true when the body is complete. */
    bool (*step)(void *cur, struct jout *w);
    void (*free)(void *cur);
};

/* Answer req (200, chunked, content_type) with the body of ops for
 * principal who (copied): readers of one (ops, variant, who) arriving while
 * a body is produced share the next one. */
void master_state_stream_serve(struct master *m, struct http_request *req,
                               const char *who, const char *content_type,
                               const struct master_body_ops *ops, int variant);

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
