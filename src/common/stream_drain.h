/*
 * When to cut a slow event stream (docs/performance.md, "A framework is
 * cut only for not reading"). A stream whose queued bytes pass the soft
 * cap is cut only if its reader makes no progress (nothing of the queue
 * written out) for a grace period, or at once past the hard cap. A reader
 * that drains steadily keeps its stream however large one burst of events
 * is, up to the hard cap. Pure: the caller passes the byte counts and the
 * time.
 */
#ifndef OFFERD_COMMON_STREAM_DRAIN_H
#define OFFERD_COMMON_STREAM_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stream_drain {
    uint64_t queued;    /* bytes ever queued on the connection */
    uint64_t written;   /* bytes known written out at the last check */
    int64_t over_since; /* when the queue was last seen over the soft cap
                           with no progress since; 0: not over */
};

struct stream_drain_policy {
    size_t soft_cap;  /* past it, the reader must make progress */
    size_t hard_cap;  /* past it, the stream is cut at once */
    int64_t grace_ns; /* how long the reader may make none */
};

/* After queueing `added` bytes, with `pending` bytes still waiting to be
 * written out at time now (monotonic ns): record it in *d and return
 * true when the stream must be cut. */
bool stream_drain_check(struct stream_drain *d,
                        const struct stream_drain_policy *p, size_t added,
                        size_t pending, int64_t now);

#endif
