/*
 * libofferd offer pool: the offers a framework holds, in order, shared by
 * any number of threads, with the bookkeeping every framework needs.
 *
 *  - Order: by arrival (default), or by a score the caller computes when an
 *    offer arrives (lowest first, ties by arrival; e.g. free cpus for
 *    best-fit, minus free cpus for spread).
 *  - Iteration: offerd_pool_first / offerd_pool_next hand out counted
 *    references (handles). A handle stays valid, and next() continues from
 *    it, while other threads add, use, decline or remove offers: next()
 *    returns the next offer still available after it in the order, and
 *    offers added behind it are seen.
 *  - Use: offerd_pool_use is atomic. When several threads race for one
 *    offer exactly one gets 0; the others get -1 and move on. A used offer
 *    leaves the pool's management: the caller now owns the decision (ACCEPT
 *    it, or DECLINE it through the scheduler client itself).
 *  - Declines: offers the pool gives up go into a decline queue; the owner
 *    sends them with offerd_pool_flush from the thread that may call the
 *    scheduler client (offerd_sched_set_pool does this by itself). The pool
 *    declines: offers whose usable cpus are below the minimum (default
 *    0.05) at once when they arrive; offers older than the life period
 *    (default 240 s), counted as expired; offers the caller declines with
 *    offerd_pool_decline. Each decline carries a refusal filter (default
 *    5 s).
 *  - Lost agents: offerd_pool_agent_lost removes the agent's offers (counted
 *    as rescinded) and, for a grace period (default 180 s), offers that
 *    arrive from that agent are kept but not handed out (iteration, find
 *    and use skip them); call it too when you learn an agent re-registered.
 *    They are handed out once the period ends, unless they expire first.
 *  - Adjustments: per agent (by agent id or hostname) deltas of cpus, mem
 *    and disk that the framework takes from its own agent settings; the
 *    usable amounts the pool reports and places against are the offered
 *    ones plus the delta, never below 0. (A positive delta raises what the
 *    pool reports, but a placement never takes more than was offered.)
 *  - Placement: offerd_pool_find / offerd_pool_take return the first
 *    available offer, in the pool's order, that fits a resource request
 *    (struct offerd_request) and satisfies constraints given the framework's
 *    current placements (offerd/placement.h). offerd_pool_fit_new then says
 *    which resources each task takes from a used offer.
 *  - Metrics: size, and counters of offers added, used, declined, expired
 *    and rescinded. Every offer added ends in exactly one of used,
 *    declined, expired or rescinded, or is still in the pool:
 *    added = used + declined + expired + rescinded + size.
 *
 * Time comes from a clock function in the options (default: the monotonic
 * clock), so tests can drive it.
 *
 * Threads: every function may be called from any thread; one mutex guards
 * the pool. Callbacks (clock, score) run with it held and must not call
 * the pool. The decline function of offerd_pool_flush runs without it.
 * Handles are read-only: what they point to (the offer) never changes, so
 * they may be read without locking while held.
 *
 * Ownership: offers are deep-copied in; handles are references that the
 * caller gives back with offerd_pool_release (next() gives back the handle
 * it is passed). Everything else passed in is borrowed for the call.
 */
#ifndef OFFERD_OFFER_POOL_H
#define OFFERD_OFFER_POOL_H

#include "offerd/placement.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Mesos__V1__Offer Mesos__V1__Offer;
typedef struct Mesos__V1__Resource Mesos__V1__Resource;

struct offerd_pool;
struct offerd_pool_offer; /* a handle: a counted reference to one offer */

/* Defaults (a zero option field takes them). */
#define OFFERD_POOL_DEFAULT_LIFE_NS     (INT64_C(240) * 1000000000)
#define OFFERD_POOL_DEFAULT_GRACE_NS    (INT64_C(180) * 1000000000)
#define OFFERD_POOL_DEFAULT_MIN_CPUS    0.05
#define OFFERD_POOL_DEFAULT_REFUSE_SECS 5.0

/* What the pool reports as usable in an offer (adjustments applied):
 * unreserved and reserved scalars of these names, summed. */
struct offerd_usable {
    double cpus;
    double mem;  /* MB */
    double disk; /* MB */
    double gpus; /* not adjusted */
};

/* Monotonic nanoseconds. */
typedef int64_t (*offerd_pool_clock_fn)(void *arg);

/* The score of a new offer (lower is handed out first); usable is what the
 * pool will report for it. Runs with the pool locked. */
typedef double (*offerd_pool_score_fn)(const Mesos__V1__Offer *offer,
                                       const struct offerd_usable *usable,
                                       void *arg);

/* Send a DECLINE of n offer ids (n >= 1, borrowed for the call) with the
 * refusal filter refuse_seconds. */
typedef void (*offerd_pool_decline_fn)(const char *const *offer_ids, size_t n,
                                       double refuse_seconds, void *arg);

/* Everything offerd_pool_new takes; zero-initialise, set what you need. */
struct offerd_pool_options {
    int64_t life_ns;    /* offers older than this are declined (expired);
                           0: default 240 s; < 0: never */
    int64_t grace_ns;   /* lost-agent grace period; 0: default 180 s;
                           < 0: none */
    double min_cpus;    /* offers with fewer usable cpus are declined at
                           once; 0: default 0.05; < 0: no minimum */
    double refuse_secs; /* refusal filter of the pool's declines; 0:
                           default 5 s; < 0: none (the master's default) */
    offerd_pool_clock_fn clock; /* NULL: CLOCK_MONOTONIC */
    void *clock_arg;
    offerd_pool_score_fn score; /* NULL: arrival order */
    void *score_arg;
};

/* Counters (since the pool was created) and the current size. */
struct offerd_pool_metrics {
    size_t size;             /* offers in the pool (available or not) */
    size_t held;             /* ... of which not handed out (agent grace) */
    uint64_t added;          /* offers accepted into management */
    uint64_t used;           /* offerd_pool_use / offerd_pool_take won */
    uint64_t declined;       /* too small, invalid, or offerd_pool_decline */
    uint64_t expired;        /* older than the life period */
    uint64_t rescinded;      /* rescinded, agent lost, or cleared */
    size_t pending_declines; /* queued, not yet flushed */
};

/* What offerd_pool_add did with an offer. */
enum offerd_pool_add_result {
    OFFERD_POOL_ADDED = 0,    /* in the pool */
    OFFERD_POOL_DECLINED = 1, /* counted added and declined at once: usable
                                 cpus below the minimum, or resources that
                                 do not parse */
    OFFERD_POOL_REJECTED = 2, /* ignored and not counted: NULL, no id or
                                 agent id, or an id already in the pool */
};

/* ---- Lifetime ---- */

/* A new, empty pool. Returns NULL with a one-line reason in err (errlen
 * bytes) when an option is not a finite number. */
struct offerd_pool *offerd_pool_new(const struct offerd_pool_options *o,
                                    char *err, size_t errlen);

/* Free the pool and every offer in it; queued declines are dropped (flush
 * first to send them). Handles still held are freed too: give them back
 * before. NULL is ignored. */
void offerd_pool_free(struct offerd_pool *p);

/* ---- Feeding (offerd_sched_set_pool does all of this by itself) ---- */

/* Add a copy of offer (see enum offerd_pool_add_result). */
enum offerd_pool_add_result offerd_pool_add(struct offerd_pool *p,
                                            const Mesos__V1__Offer *offer);

/* The master rescinded offer_id: forget it (counted rescinded) unless it
 * was used or declined already. Returns 0, or -1 when it is not in the
 * pool. */
int offerd_pool_rescind(struct offerd_pool *p, const char *offer_id);

/* The agent was lost or re-registered: forget its offers (counted
 * rescinded) and start its grace period. Returns how many offers were
 * removed. */
size_t offerd_pool_agent_lost(struct offerd_pool *p, const char *agent_id);

/* Forget every offer (counted rescinded) and drop the queued declines: the
 * subscription they belonged to is gone. Grace periods and adjustments are
 * kept. */
void offerd_pool_clear(struct offerd_pool *p);

/* Move the offers older than the life period to the decline queue (counted
 * expired). Returns how many. first(), find() and take() do this too. */
size_t offerd_pool_expire(struct offerd_pool *p);

/* Take the queued declines and call fn for them, one call per refusal
 * filter value, without the lock held (fn may be NULL: they are dropped).
 * Returns how many offers were passed. */
size_t offerd_pool_flush(struct offerd_pool *p, offerd_pool_decline_fn fn,
                         void *arg);

/* ---- Iteration and use ---- */

/* The first available offer (in the pool, not older than the life period,
 * not in an agent's grace period) as a new handle, or NULL. */
struct offerd_pool_offer *offerd_pool_first(struct offerd_pool *p);

/* The next available offer after cur in the pool's order, as a new handle,
 * or NULL; cur's reference is given back (cur may have been used, declined
 * or removed meanwhile). */
struct offerd_pool_offer *offerd_pool_next(struct offerd_pool *p,
                                           struct offerd_pool_offer *cur);

/* Give back a handle; NULL is ignored. The handle is dead afterwards. */
void offerd_pool_release(struct offerd_pool *p, struct offerd_pool_offer *o);

/* Take o out of the pool for the caller: 0 when this call won it (counted
 * used), -1 when it is no longer available (another thread used or
 * declined it, it was rescinded, expired, or its agent is in grace). The
 * handle stays valid until released either way. */
int offerd_pool_use(struct offerd_pool *p, struct offerd_pool_offer *o);

/* Decline o (counted declined) with refuse_seconds (< 0: the pool's
 * filter); it is sent by the next flush. Returns 0, or -1 when it is no
 * longer available (as for use). */
int offerd_pool_decline(struct offerd_pool *p, struct offerd_pool_offer *o,
                        double refuse_seconds);

/* ---- Handles (read-only; valid until released) ---- */

/* The offer as received (a private deep copy). */
const Mesos__V1__Offer *
offerd_pool_offer_get(const struct offerd_pool_offer *o);
const char *offerd_pool_offer_id(const struct offerd_pool_offer *o);
const char *offerd_pool_offer_agent_id(const struct offerd_pool_offer *o);
/* "" when the offer has none. */
const char *offerd_pool_offer_hostname(const struct offerd_pool_offer *o);
/* When the pool received it (clock of the options). */
int64_t offerd_pool_offer_received_ns(const struct offerd_pool_offer *o);
/* Its score (0 without a score function). */
double offerd_pool_offer_score(const struct offerd_pool_offer *o);

/* Fill *out (OUT) with what the pool reports as usable in o, with the
 * agent's current adjustment. */
void offerd_pool_usable(struct offerd_pool *p,
                        const struct offerd_pool_offer *o,
                        struct offerd_usable *out);

/* ---- Adjustments ---- */

/* Set the deltas for an agent, named by agent id or hostname (an agent id
 * match wins over a hostname match); they replace earlier ones and apply to
 * offers already in the pool too (scores are not recomputed). Returns 0,
 * or -1 when agent is NULL or empty or a delta is not finite. */
int offerd_pool_set_adjustment(struct offerd_pool *p, const char *agent,
                               double cpus, double mem, double disk);

/* Remove an agent's adjustment. Returns 0, or -1 when it had none. */
int offerd_pool_clear_adjustment(struct offerd_pool *p, const char *agent);

/* ---- Metrics ---- */

void offerd_pool_get_metrics(struct offerd_pool *p,
                             struct offerd_pool_metrics *out);

/* ---- Placement ---- */

/* A task's resource request. */
struct offerd_request;

/* Parse resources (Mesos's text form "cpus:0.5;mem:64;ports:[31000-31000]"
 * or a JSON array of Resource, as --resources takes) for a framework of
 * role (NULL or "*": unreserved resources only; otherwise the role's
 * reservations are taken first, then unreserved ones). Returns a new
 * request (free with offerd_request_free), or NULL with a one-line reason
 * when the text does not parse or asks for nothing. */
struct offerd_request *offerd_request_new(const char *resources,
                                          const char *role, char *err,
                                          size_t errlen);

/* Free a request; NULL is ignored. */
void offerd_request_free(struct offerd_request *r);

/* Fill *out (OUT) with the cpus, mem, disk and gpus r asks for (0 for what
 * it does not name). */
void offerd_request_amounts(const struct offerd_request *r,
                            struct offerd_usable *out);

/* Why offers were passed over by the last find/take (for diagnostics). */
struct offerd_pool_find_report {
    size_t considered;  /* available offers looked at */
    size_t no_room;     /* ... whose resources do not fit the request */
    size_t constrained; /* ... that fit, but break a constraint */
};

/* The first available offer that fits r (after adjustments) and satisfies
 * c (NULL: none) given the placements pl (NULL: no task placed), as a new
 * handle, or NULL. The offer stays in the pool: use it next (which may
 * lose a race), or call offerd_pool_take. report (OUT, may be NULL) says
 * why the others were passed over. */
struct offerd_pool_offer *
offerd_pool_find(struct offerd_pool *p, const struct offerd_request *r,
                 const struct offerd_constraints *c,
                 const struct offerd_placements *pl,
                 struct offerd_pool_find_report *report);

/* offerd_pool_find and offerd_pool_use in one step under the lock: the
 * offer returned (a new handle) is already used, or NULL. */
struct offerd_pool_offer *
offerd_pool_take(struct offerd_pool *p, const struct offerd_request *r,
                 const struct offerd_constraints *c,
                 const struct offerd_placements *pl,
                 struct offerd_pool_find_report *report);

/* What remains of one used offer while tasks are packed into it. */
struct offerd_fit;

/* Start packing tasks into offer o (normally a used one): its resources,
 * with the usable amounts of cpus, mem and disk (adjustments applied) as
 * budget. Free with offerd_fit_free. */
struct offerd_fit *offerd_pool_fit_new(struct offerd_pool *p,
                                       const struct offerd_pool_offer *o);

/* Take what r asks for out of f: the resources a task must carry (copies
 * of the offer's entries, with the offer's reservations and allocation
 * role, in the amounts asked) in *res, count in *n (both OUT; free with
 * offerd_resources_free). Returns 0, or -1 when r no longer fits (f is
 * unchanged). */
int offerd_fit_take(struct offerd_fit *f, const struct offerd_request *r,
                    Mesos__V1__Resource ***res, size_t *n);

/* Free a packing; NULL is ignored. */
void offerd_fit_free(struct offerd_fit *f);

/* Free an array from offerd_fit_take; NULL is ignored. */
void offerd_resources_free(Mesos__V1__Resource **res, size_t n);

#endif
