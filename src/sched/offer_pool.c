/*
 * The offer pool; the contract is include/offerd/offer_pool.h.
 *
 * How it is put together:
 *  - One mutex guards everything. Each offer is an entry that sits on two
 *    lists: the order list (by score, then arrival), which iteration
 *    walks, and the arrival list, which expiry walks from its oldest end,
 *    so expiring costs only the offers that expire. A hash map finds
 *    entries by offer id for RESCIND.
 *  - An entry leaves the pool (used, declined, expired, rescinded) by
 *    changing state, leaving the map and the arrival list at once. It stays
 *    on the order list while handles to it are held, so that next() can
 *    continue from it; the last release unlinks and frees it. Iteration
 *    skips entries that are not available.
 *  - What a handle points to (the offer copy, its ids, its resources) is
 *    written before the entry is published and never changed, so handle
 *    readers need no lock.
 *  - Declines are queued with their filter and sent by offerd_pool_flush
 *    outside the lock, because the scheduler client that sends them belongs
 *    to one thread (its event loop) and may not be called from the others.
 */
#include "offerd/offer_pool.h"

#include "common/clock.h"
#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/resources.h"
#include "common/resources_pb.h"
#include "mesos/v1/mesos.pb-c.h"
#include "sched/fit.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack when comparing cpus, mem and disk held as doubles. */
#define EPS 1e-9

enum entry_state {
    E_POOLED,    /* in the pool (available unless expired or held) */
    E_USED,      /* won by offerd_pool_use / take */
    E_DECLINED,  /* declined (queued) */
    E_EXPIRED,   /* older than the life period (declined, queued) */
    E_RESCINDED, /* rescinded, agent lost, or cleared */
};

struct offerd_pool_offer {
    /* Immutable once published: */
    Mesos__V1__Offer *offer;      /* deep copy, released with jpb_free */
    const char *id;               /* offer->id->value */
    const char *agent_id;         /* offer->agent_id->value */
    const char *hostname;         /* offer->hostname, or "" */
    res_list res;                 /* offer->resources, parsed */
    double cpus, mem, disk, gpus; /* offered amounts */
    int64_t received_ns;
    int64_t held_until_ns; /* not handed out before (agent grace) */
    double score;

    /* Guarded by the pool's mutex: */
    enum entry_state state;
    int refs;                                /* handles held */
    struct offerd_pool_offer *prev, *next;   /* order list */
    struct offerd_pool_offer *aprev, *anext; /* arrival list (E_POOLED) */
};

struct adjustment {
    double cpus, mem, disk;
};

struct pending_decline {
    char *id;
    double refuse_secs; /* < 0: no filter */
};

struct offerd_pool {
    pthread_mutex_t mu;
    int64_t life_ns;    /* < 0: never */
    int64_t grace_ns;   /* 0: none */
    double min_cpus;    /* < 0: none */
    double refuse_secs; /* < 0: none */
    offerd_pool_clock_fn clock;
    void *clock_arg;
    offerd_pool_score_fn score;
    void *score_arg;

    struct offerd_pool_offer *head, *tail;   /* order list */
    struct offerd_pool_offer *ahead, *atail; /* arrival list, oldest first */
    struct hmap *by_id;                      /* offer id -> entry (E_POOLED) */
    struct hmap *grace;  /* agent id -> int64_t end of grace (malloc'd) */
    struct hmap *adjust; /* agent id or hostname -> struct adjustment */

    struct pending_decline *q;
    size_t nq, capq;

    size_t size;
    uint64_t added, used, declined, expired, rescinded;
};

struct offerd_request {
    res_list want;
    char *role;             /* NULL: unreserved only */
    double cpus, mem, disk; /* asked for */
};

struct offerd_fit {
    res_list avail;
    double cpus, mem, disk; /* budget left */
};

static int64_t default_clock(void *arg)
{
    (void)arg;
    return clock_monotonic_ns();
}

/* ---- Lifetime ---- */

struct offerd_pool *offerd_pool_new(const struct offerd_pool_options *o,
                                    char *err, size_t errlen)
{
    struct offerd_pool_options def;
    memset(&def, 0, sizeof(def));
    if (o == NULL)
        o = &def;
    if (!isfinite(o->min_cpus) || !isfinite(o->refuse_secs)) {
        snprintf(err, errlen, "min_cpus and refuse_secs must be finite");
        return NULL;
    }
    struct offerd_pool *p = xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->mu, NULL);
    p->life_ns = o->life_ns == 0  ? OFFERD_POOL_DEFAULT_LIFE_NS
                 : o->life_ns < 0 ? -1
                                  : o->life_ns;
    p->grace_ns = o->grace_ns == 0  ? OFFERD_POOL_DEFAULT_GRACE_NS
                  : o->grace_ns < 0 ? 0
                                    : o->grace_ns;
    p->min_cpus = o->min_cpus == 0 ? OFFERD_POOL_DEFAULT_MIN_CPUS : o->min_cpus;
    p->refuse_secs =
        o->refuse_secs == 0 ? OFFERD_POOL_DEFAULT_REFUSE_SECS : o->refuse_secs;
    if (p->refuse_secs < 0)
        p->refuse_secs = -1;
    p->clock = o->clock != NULL ? o->clock : default_clock;
    p->clock_arg = o->clock_arg;
    p->score = o->score;
    p->score_arg = o->score_arg;
    p->by_id = hmap_new();
    p->grace = hmap_new();
    p->adjust = hmap_new();
    return p;
}

static void entry_free(struct offerd_pool_offer *e)
{
    if (e == NULL)
        return;
    if (e->offer != NULL)
        jpb_free(&e->offer->base);
    res_list_clear(&e->res);
    free(e);
}

void offerd_pool_free(struct offerd_pool *p)
{
    if (p == NULL)
        return;
    struct offerd_pool_offer *e = p->head;
    while (e != NULL) {
        struct offerd_pool_offer *next = e->next;
        entry_free(e);
        e = next;
    }
    for (size_t i = 0; i < p->nq; i++)
        free(p->q[i].id);
    free(p->q);
    hmap_free(p->by_id, NULL);
    hmap_free(p->grace, free);
    hmap_free(p->adjust, free);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* ---- Entries (lock held) ---- */

static void order_unlink(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        p->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        p->tail = e->prev;
    e->prev = e->next = NULL;
}

static void arrival_unlink(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    if (e->aprev != NULL)
        e->aprev->anext = e->anext;
    else
        p->ahead = e->anext;
    if (e->anext != NULL)
        e->anext->aprev = e->aprev;
    else
        p->atail = e->aprev;
    e->aprev = e->anext = NULL;
}

/* Insert after every entry whose score is not higher: arrival order among
 * equal scores. */
static void order_insert(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    struct offerd_pool_offer *after = p->tail;
    while (after != NULL && after->score > e->score)
        after = after->prev;
    e->prev = after;
    e->next = after != NULL ? after->next : p->head;
    if (e->next != NULL)
        e->next->prev = e;
    else
        p->tail = e;
    if (after != NULL)
        after->next = e;
    else
        p->head = e;
}

static void arrival_append(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    e->aprev = p->atail;
    e->anext = NULL;
    if (p->atail != NULL)
        p->atail->anext = e;
    else
        p->ahead = e;
    p->atail = e;
}

/* Drop an entry that left the pool once no handle refers to it. */
static void maybe_reap(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    if (e->refs == 0 && e->state != E_POOLED) {
        order_unlink(p, e);
        entry_free(e);
    }
}

/* An entry leaves the pool in state st (the caller counts it). */
static void leave_pool(struct offerd_pool *p, struct offerd_pool_offer *e,
                       enum entry_state st)
{
    e->state = st;
    hmap_del(p->by_id, e->id);
    arrival_unlink(p, e);
    p->size--;
    maybe_reap(p, e);
}

static void queue_decline(struct offerd_pool *p, const char *id, double secs)
{
    if (p->nq == p->capq) {
        p->capq = p->capq ? 2 * p->capq : 16;
        p->q = xreallocarray(p->q, p->capq, sizeof(*p->q));
    }
    p->q[p->nq].id = xstrdup(id);
    p->q[p->nq].refuse_secs = secs;
    p->nq++;
}

static bool is_expired(const struct offerd_pool *p,
                       const struct offerd_pool_offer *e, int64_t now)
{
    return p->life_ns >= 0 && now - e->received_ns >= p->life_ns;
}

static bool is_available(const struct offerd_pool *p,
                         const struct offerd_pool_offer *e, int64_t now)
{
    return e->state == E_POOLED && !is_expired(p, e, now) &&
           now >= e->held_until_ns;
}

static size_t expire_locked(struct offerd_pool *p, int64_t now)
{
    size_t n = 0;
    while (p->ahead != NULL && is_expired(p, p->ahead, now)) {
        struct offerd_pool_offer *e = p->ahead;
        queue_decline(p, e->id, p->refuse_secs);
        p->expired++;
        leave_pool(p, e, E_EXPIRED);
        n++;
    }
    return n;
}

static const struct adjustment *adjustment_for(const struct offerd_pool *p,
                                               const char *agent_id,
                                               const char *hostname)
{
    const struct adjustment *a = hmap_get(p->adjust, agent_id);
    if (a == NULL && hostname != NULL && hostname[0] != '\0')
        a = hmap_get(p->adjust, hostname);
    return a;
}

static double clamp0(double v)
{
    return v > 0 ? v : 0;
}

static void usable_locked(const struct offerd_pool *p,
                          const struct offerd_pool_offer *e,
                          struct offerd_usable *u)
{
    const struct adjustment *a = adjustment_for(p, e->agent_id, e->hostname);
    u->cpus = clamp0(e->cpus + (a != NULL ? a->cpus : 0));
    u->mem = clamp0(e->mem + (a != NULL ? a->mem : 0));
    u->disk = clamp0(e->disk + (a != NULL ? a->disk : 0));
    u->gpus = e->gpus;
}

/* ---- Feeding ---- */

/* A new entry for offer, or NULL when its resources (or the offer itself)
 * cannot be read. Done without the lock. */
static struct offerd_pool_offer *entry_new(const Mesos__V1__Offer *offer)
{
    struct offerd_pool_offer *e = xcalloc(1, sizeof(*e));
    char err[256];
    size_t len;
    uint8_t *buf = jpb_to_pb(&offer->base, &len);
    e->offer = (Mesos__V1__Offer *)jpb_from_pb(&mesos__v1__offer__descriptor,
                                               buf, len, err, sizeof(err));
    free(buf);
    if (e->offer == NULL ||
        res_list_from_pb(e->offer->resources, e->offer->n_resources, &e->res,
                         err, sizeof(err)) != 0) {
        entry_free(e);
        return NULL;
    }
    e->id = e->offer->id->value;
    e->agent_id = e->offer->agent_id->value;
    e->hostname = e->offer->hostname != NULL ? e->offer->hostname : "";
    e->cpus = res_scalar_to_double(res_list_scalar(&e->res, "cpus"));
    e->mem = res_scalar_to_double(res_list_scalar(&e->res, "mem"));
    e->disk = res_scalar_to_double(res_list_scalar(&e->res, "disk"));
    e->gpus = res_scalar_to_double(res_list_scalar(&e->res, "gpus"));
    return e;
}

enum offerd_pool_add_result offerd_pool_add(struct offerd_pool *p,
                                            const Mesos__V1__Offer *offer)
{
    if (p == NULL || offer == NULL || offer->id == NULL ||
        offer->id->value == NULL || offer->id->value[0] == '\0' ||
        offer->agent_id == NULL || offer->agent_id->value == NULL)
        return OFFERD_POOL_REJECTED;
    struct offerd_pool_offer *e = entry_new(offer);

    pthread_mutex_lock(&p->mu);
    if (hmap_get(p->by_id, offer->id->value) != NULL) {
        pthread_mutex_unlock(&p->mu);
        entry_free(e);
        return OFFERD_POOL_REJECTED;
    }
    int64_t now = p->clock(p->clock_arg);
    p->added++;
    struct offerd_usable u;
    if (e != NULL)
        usable_locked(p, e, &u);
    if (e == NULL || (p->min_cpus >= 0 && u.cpus + EPS < p->min_cpus)) {
        queue_decline(p, offer->id->value, p->refuse_secs);
        p->declined++;
        pthread_mutex_unlock(&p->mu);
        entry_free(e);
        return OFFERD_POOL_DECLINED;
    }
    e->received_ns = now;
    const int64_t *until = hmap_get(p->grace, e->agent_id);
    e->held_until_ns = until != NULL ? *until : INT64_MIN;
    e->score = p->score != NULL ? p->score(e->offer, &u, p->score_arg) : 0;
    e->state = E_POOLED;
    order_insert(p, e);
    arrival_append(p, e);
    hmap_put(p->by_id, e->id, e);
    p->size++;
    pthread_mutex_unlock(&p->mu);
    return OFFERD_POOL_ADDED;
}

int offerd_pool_rescind(struct offerd_pool *p, const char *offer_id)
{
    if (p == NULL || offer_id == NULL)
        return -1;
    pthread_mutex_lock(&p->mu);
    struct offerd_pool_offer *e = hmap_get(p->by_id, offer_id);
    if (e != NULL) {
        p->rescinded++;
        leave_pool(p, e, E_RESCINDED);
    }
    pthread_mutex_unlock(&p->mu);
    return e != NULL ? 0 : -1;
}

size_t offerd_pool_agent_lost(struct offerd_pool *p, const char *agent_id)
{
    if (p == NULL || agent_id == NULL)
        return 0;
    size_t n = 0;
    pthread_mutex_lock(&p->mu);
    int64_t now = p->clock(p->clock_arg);
    struct offerd_pool_offer *e = p->ahead;
    while (e != NULL) {
        struct offerd_pool_offer *next = e->anext;
        if (strcmp(e->agent_id, agent_id) == 0) {
            p->rescinded++;
            leave_pool(p, e, E_RESCINDED);
            n++;
        }
        e = next;
    }
    if (p->grace_ns > 0) {
        int64_t *until = hmap_get(p->grace, agent_id);
        if (until == NULL) {
            until = xmalloc(sizeof(*until));
            hmap_put(p->grace, agent_id, until);
        }
        *until = now > INT64_MAX - p->grace_ns ? INT64_MAX : now + p->grace_ns;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void offerd_pool_clear(struct offerd_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    while (p->ahead != NULL) {
        p->rescinded++;
        leave_pool(p, p->ahead, E_RESCINDED);
    }
    for (size_t i = 0; i < p->nq; i++)
        free(p->q[i].id);
    p->nq = 0;
    pthread_mutex_unlock(&p->mu);
}

size_t offerd_pool_expire(struct offerd_pool *p)
{
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&p->mu);
    size_t n = expire_locked(p, p->clock(p->clock_arg));
    pthread_mutex_unlock(&p->mu);
    return n;
}

static bool same_secs(double a, double b)
{
    return a == b || (a < 0 && b < 0);
}

size_t offerd_pool_flush(struct offerd_pool *p, offerd_pool_decline_fn fn,
                         void *arg)
{
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&p->mu);
    struct pending_decline *q = p->q;
    size_t n = p->nq;
    p->q = NULL;
    p->nq = p->capq = 0;
    pthread_mutex_unlock(&p->mu);

    /* One call per filter value, in the order values first appear. */
    const char **ids = xcalloc(n > 0 ? n : 1, sizeof(*ids));
    bool *sent = xcalloc(n > 0 ? n : 1, sizeof(*sent));
    for (size_t i = 0; i < n; i++) {
        if (sent[i])
            continue;
        size_t k = 0;
        for (size_t j = i; j < n; j++) {
            if (!sent[j] && same_secs(q[j].refuse_secs, q[i].refuse_secs)) {
                ids[k++] = q[j].id;
                sent[j] = true;
            }
        }
        if (fn != NULL)
            fn(ids, k, q[i].refuse_secs, arg);
    }
    for (size_t i = 0; i < n; i++)
        free(q[i].id);
    free(q);
    free(ids);
    free(sent);
    return n;
}

/* ---- Iteration and use ---- */

/* The first available entry from e on (inclusive), referenced, or NULL. */
static struct offerd_pool_offer *
available_from(struct offerd_pool *p, struct offerd_pool_offer *e, int64_t now)
{
    while (e != NULL && !is_available(p, e, now))
        e = e->next;
    if (e != NULL)
        e->refs++;
    return e;
}

static void unref(struct offerd_pool *p, struct offerd_pool_offer *e)
{
    e->refs--;
    maybe_reap(p, e);
}

struct offerd_pool_offer *offerd_pool_first(struct offerd_pool *p)
{
    if (p == NULL)
        return NULL;
    pthread_mutex_lock(&p->mu);
    int64_t now = p->clock(p->clock_arg);
    expire_locked(p, now);
    struct offerd_pool_offer *e = available_from(p, p->head, now);
    pthread_mutex_unlock(&p->mu);
    return e;
}

struct offerd_pool_offer *offerd_pool_next(struct offerd_pool *p,
                                           struct offerd_pool_offer *cur)
{
    if (p == NULL || cur == NULL)
        return NULL;
    pthread_mutex_lock(&p->mu);
    int64_t now = p->clock(p->clock_arg);
    struct offerd_pool_offer *e = available_from(p, cur->next, now);
    unref(p, cur);
    pthread_mutex_unlock(&p->mu);
    return e;
}

void offerd_pool_release(struct offerd_pool *p, struct offerd_pool_offer *o)
{
    if (p == NULL || o == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    unref(p, o);
    pthread_mutex_unlock(&p->mu);
}

int offerd_pool_use(struct offerd_pool *p, struct offerd_pool_offer *o)
{
    if (p == NULL || o == NULL)
        return -1;
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    if (is_available(p, o, p->clock(p->clock_arg))) {
        p->used++;
        leave_pool(p, o, E_USED);
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int offerd_pool_decline(struct offerd_pool *p, struct offerd_pool_offer *o,
                        double refuse_seconds)
{
    if (p == NULL || o == NULL)
        return -1;
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    if (is_available(p, o, p->clock(p->clock_arg))) {
        bool own = refuse_seconds >= 0 && isfinite(refuse_seconds);
        queue_decline(p, o->id, own ? refuse_seconds : p->refuse_secs);
        p->declined++;
        leave_pool(p, o, E_DECLINED);
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* ---- Handles ---- */

const Mesos__V1__Offer *offerd_pool_offer_get(const struct offerd_pool_offer *o)
{
    return o->offer;
}

const char *offerd_pool_offer_id(const struct offerd_pool_offer *o)
{
    return o->id;
}

const char *offerd_pool_offer_agent_id(const struct offerd_pool_offer *o)
{
    return o->agent_id;
}

const char *offerd_pool_offer_hostname(const struct offerd_pool_offer *o)
{
    return o->hostname;
}

int64_t offerd_pool_offer_received_ns(const struct offerd_pool_offer *o)
{
    return o->received_ns;
}

double offerd_pool_offer_score(const struct offerd_pool_offer *o)
{
    return o->score;
}

void offerd_pool_usable(struct offerd_pool *p,
                        const struct offerd_pool_offer *o,
                        struct offerd_usable *out)
{
    pthread_mutex_lock(&p->mu);
    usable_locked(p, o, out);
    pthread_mutex_unlock(&p->mu);
}

/* ---- Adjustments ---- */

int offerd_pool_set_adjustment(struct offerd_pool *p, const char *agent,
                               double cpus, double mem, double disk)
{
    if (p == NULL || agent == NULL || agent[0] == '\0' || !isfinite(cpus) ||
        !isfinite(mem) || !isfinite(disk))
        return -1;
    struct adjustment *a = xmalloc(sizeof(*a));
    a->cpus = cpus;
    a->mem = mem;
    a->disk = disk;
    pthread_mutex_lock(&p->mu);
    free(hmap_put(p->adjust, agent, a));
    pthread_mutex_unlock(&p->mu);
    return 0;
}

int offerd_pool_clear_adjustment(struct offerd_pool *p, const char *agent)
{
    if (p == NULL || agent == NULL)
        return -1;
    pthread_mutex_lock(&p->mu);
    struct adjustment *a = hmap_del(p->adjust, agent);
    pthread_mutex_unlock(&p->mu);
    free(a);
    return a != NULL ? 0 : -1;
}

/* ---- Metrics ---- */

void offerd_pool_get_metrics(struct offerd_pool *p,
                             struct offerd_pool_metrics *out)
{
    memset(out, 0, sizeof(*out));
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    int64_t now = p->clock(p->clock_arg);
    out->size = p->size;
    for (const struct offerd_pool_offer *e = p->ahead; e != NULL; e = e->anext)
        out->held += now < e->held_until_ns;
    out->added = p->added;
    out->used = p->used;
    out->declined = p->declined;
    out->expired = p->expired;
    out->rescinded = p->rescinded;
    out->pending_declines = p->nq;
    pthread_mutex_unlock(&p->mu);
}

/* ---- Placement ---- */

struct offerd_request *offerd_request_new(const char *resources,
                                          const char *role, char *err,
                                          size_t errlen)
{
    if (resources == NULL) {
        snprintf(err, errlen, "no resources given");
        return NULL;
    }
    if (role != NULL && res_role_validate(role, err, errlen) != 0)
        return NULL;
    struct offerd_request *r = xcalloc(1, sizeof(*r));
    if (res_list_parse(resources, NULL, &r->want, err, errlen) != 0) {
        free(r);
        return NULL;
    }
    if (res_list_is_empty(&r->want)) {
        snprintf(err, errlen, "no resources given");
        res_list_clear(&r->want);
        free(r);
        return NULL;
    }
    r->role = role != NULL && strcmp(role, "*") != 0 ? xstrdup(role) : NULL;
    r->cpus = res_scalar_to_double(res_list_scalar(&r->want, "cpus"));
    r->mem = res_scalar_to_double(res_list_scalar(&r->want, "mem"));
    r->disk = res_scalar_to_double(res_list_scalar(&r->want, "disk"));
    return r;
}

void offerd_request_free(struct offerd_request *r)
{
    if (r == NULL)
        return;
    res_list_clear(&r->want);
    free(r->role);
    free(r);
}

void offerd_request_amounts(const struct offerd_request *r,
                            struct offerd_usable *out)
{
    out->cpus = r->cpus;
    out->mem = r->mem;
    out->disk = r->disk;
    out->gpus = res_scalar_to_double(res_list_scalar(&r->want, "gpus"));
}

static bool within_budget(const struct offerd_request *r, double cpus,
                          double mem, double disk)
{
    return r->cpus <= cpus + EPS && r->mem <= mem + EPS &&
           r->disk <= disk + EPS;
}

/* Does r fit e's resources and usable amounts? (lock held) */
static bool fits(const struct offerd_pool *p, const struct offerd_pool_offer *e,
                 const struct offerd_request *r)
{
    struct offerd_usable u;
    usable_locked(p, e, &u);
    if (!within_budget(r, u.cpus, u.mem, u.disk))
        return false;
    res_list avail = RES_LIST_INIT, taken = RES_LIST_INIT;
    res_list_copy(&avail, &e->res);
    bool ok = sched_fit_take(&avail, &r->want, r->role, &taken) == 0;
    res_list_clear(&avail);
    res_list_clear(&taken);
    return ok;
}

static struct offerd_pool_offer *
find_locked(struct offerd_pool *p, const struct offerd_request *r,
            const struct offerd_constraints *c,
            const struct offerd_placements *pl,
            struct offerd_pool_find_report *rep, int64_t now)
{
    for (struct offerd_pool_offer *e = p->head; e != NULL; e = e->next) {
        if (!is_available(p, e, now))
            continue;
        rep->considered++;
        if (!fits(p, e, r)) {
            rep->no_room++;
            continue;
        }
        if (!offerd_constraints_match(c, e->offer, pl)) {
            rep->constrained++;
            continue;
        }
        return e;
    }
    return NULL;
}

static struct offerd_pool_offer *
find_common(struct offerd_pool *p, const struct offerd_request *r,
            const struct offerd_constraints *c,
            const struct offerd_placements *pl,
            struct offerd_pool_find_report *report, bool use)
{
    struct offerd_pool_find_report rep;
    memset(&rep, 0, sizeof(rep));
    struct offerd_pool_offer *e = NULL;
    if (p != NULL && r != NULL) {
        pthread_mutex_lock(&p->mu);
        int64_t now = p->clock(p->clock_arg);
        expire_locked(p, now);
        e = find_locked(p, r, c, pl, &rep, now);
        if (e != NULL) {
            e->refs++;
            if (use) {
                p->used++;
                leave_pool(p, e, E_USED);
            }
        }
        pthread_mutex_unlock(&p->mu);
    }
    if (report != NULL)
        *report = rep;
    return e;
}

struct offerd_pool_offer *
offerd_pool_find(struct offerd_pool *p, const struct offerd_request *r,
                 const struct offerd_constraints *c,
                 const struct offerd_placements *pl,
                 struct offerd_pool_find_report *report)
{
    return find_common(p, r, c, pl, report, false);
}

struct offerd_pool_offer *
offerd_pool_take(struct offerd_pool *p, const struct offerd_request *r,
                 const struct offerd_constraints *c,
                 const struct offerd_placements *pl,
                 struct offerd_pool_find_report *report)
{
    return find_common(p, r, c, pl, report, true);
}

struct offerd_fit *offerd_pool_fit_new(struct offerd_pool *p,
                                       const struct offerd_pool_offer *o)
{
    struct offerd_fit *f = xcalloc(1, sizeof(*f));
    struct offerd_usable u;
    offerd_pool_usable(p, o, &u);
    res_list_copy(&f->avail, &o->res);
    f->cpus = u.cpus;
    f->mem = u.mem;
    f->disk = u.disk;
    return f;
}

int offerd_fit_take(struct offerd_fit *f, const struct offerd_request *r,
                    Mesos__V1__Resource ***res, size_t *n)
{
    if (f == NULL || r == NULL || !within_budget(r, f->cpus, f->mem, f->disk))
        return -1;
    res_list taken = RES_LIST_INIT;
    if (sched_fit_take(&f->avail, &r->want, r->role, &taken) != 0)
        return -1;
    f->cpus -= r->cpus;
    f->mem -= r->mem;
    f->disk -= r->disk;
    *res = res_list_to_pb(&taken, false, n);
    res_list_clear(&taken);
    return 0;
}

void offerd_fit_free(struct offerd_fit *f)
{
    if (f == NULL)
        return;
    res_list_clear(&f->avail);
    free(f);
}

void offerd_resources_free(Mesos__V1__Resource **res, size_t n)
{
    res_pb_array_free(res, n);
}
