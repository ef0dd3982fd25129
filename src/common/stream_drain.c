/*
 * The slow-reader policy of event streams (see stream_drain.h).
 */
#include "common/stream_drain.h"

bool stream_drain_check(struct stream_drain *d,
                        const struct stream_drain_policy *p, size_t added,
                        size_t pending, int64_t now)
{
    d->queued += added;
    uint64_t written = d->queued > pending ? d->queued - pending : 0;
    bool progress = written > d->written;
    d->written = written;
    if (pending > p->hard_cap)
        return true;
    if (pending <= p->soft_cap || progress) {
        /* Under the cap, or the reader took bytes since the last check:
         * the grace period starts again. */
        d->over_since = pending > p->soft_cap ? now : 0;
        return false;
    }
    if (d->over_since == 0) {
        d->over_since = now;
        return false;
    }
    return now - d->over_since > p->grace_ns;
}
