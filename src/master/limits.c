/*
 * Limits on frameworks: a cap per principal and per peer address, Mesos's
 * --rate_limits applied to SUBSCRIBE, and the failover timeout cap of
 * frameworks that never launched anything. The contract is in limits.h.
 *
 * Every map here is keyed by strings a peer chooses (principals, addresses)
 * and bounded: counts exist only for frameworks in the table (itself capped
 * by MASTER_MAX_FRAMEWORKS), and per-peer rate buckets are at most
 * MAX_BUCKETS (full buckets, which hold nothing, are dropped first).
 */
#include "master/limits.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/hmap.h"
#include "common/http.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/flags_master.h"
#include "master/master_types.h"

#define MAX_BUCKETS 65536

/* A token bucket: qps tokens a second, at most cap held. */
struct bucket {
    double qps; /* 0: unlimited */
    double cap;
    double tokens;
    int64_t last_ns;
};

/* Whose a framework is: the keys it counts against. */
struct owner {
    char *principal; /* "p:<principal>", or NULL */
    char *peer;      /* "a:<address>" */
};

struct master_limits {
    const struct master_flags *flags;
    /* --rate_limits */
    bool rate_limited;       /* the flag was given */
    struct hmap *listed;     /* principal -> struct bucket */
    struct bucket aggregate; /* unlisted principals, shared */
    bool has_aggregate;      /* aggregate_default_qps was given */
    struct hmap *peers;      /* address -> struct bucket */
    struct hmap *counts;     /* "p:.." / "a:.." -> size_t * */
    struct hmap *owners;     /* framework id -> struct owner */
};

/* ---- --rate_limits ---- */

static int bucket_of_json(const json_t *qps, const json_t *capacity,
                          struct bucket *b, const char *what, char *err,
                          size_t errlen)
{
    memset(b, 0, sizeof(*b));
    if (qps != NULL && !json_is_null(qps)) {
        if (!json_is_number(qps) || !(json_number_value(qps) > 0) ||
            json_number_value(qps) > 1e9) {
            snprintf(err, errlen,
                     "--rate_limits: %s: qps must be a positive "
                     "number",
                     what);
            return -1;
        }
        b->qps = json_number_value(qps);
    }
    b->cap = b->qps > 1 ? b->qps : 1;
    if (capacity != NULL && !json_is_null(capacity)) {
        if (!json_is_number(capacity) || json_number_value(capacity) < 1 ||
            json_number_value(capacity) > 1e12) {
            snprintf(err, errlen,
                     "--rate_limits: %s: capacity must be a number of at "
                     "least 1",
                     what);
            return -1;
        }
        b->cap = json_number_value(capacity);
    }
    b->tokens = b->cap;
    b->last_ns = clock_monotonic_ns();
    return 0;
}

static json_t *load_rate_limits(const char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j;
    const char *path = NULL;
    if (strncmp(text, "file://", 7) == 0)
        path = text + 7;
    else if (text[0] == '/')
        path = text;
    if (path != NULL)
        j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    else
        j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (j == NULL)
        snprintf(err, errlen, "--rate_limits: %s (line %d)", je.text, je.line);
    else if (!json_is_object(j)) {
        snprintf(err, errlen, "--rate_limits: must be a JSON object");
        json_decref(j);
        j = NULL;
    }
    return j;
}

static int parse_rate_limits(struct master_limits *l, const char *text,
                             char *err, size_t errlen)
{
    json_t *j = load_rate_limits(text, err, errlen);
    if (j == NULL)
        return -1;
    int rc = -1;
    json_t *limits = json_object_get(j, "limits");
    if (limits != NULL && !json_is_array(limits)) {
        snprintf(err, errlen, "--rate_limits: limits must be an array");
        goto out;
    }
    size_t i;
    json_t *e;
    json_array_foreach(limits, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "principal"));
        if (!json_is_object(e) || p == NULL || p[0] == '\0') {
            snprintf(err, errlen,
                     "--rate_limits: limits[%zu]: principal required", i);
            goto out;
        }
        struct bucket b;
        char what[64];
        snprintf(what, sizeof(what), "limits[%zu]", i);
        if (bucket_of_json(json_object_get(e, "qps"),
                           json_object_get(e, "capacity"), &b, what, err,
                           errlen) != 0)
            goto out;
        if (hmap_get(l->listed, p) != NULL) {
            snprintf(err, errlen,
                     "--rate_limits: principal '%s' is listed twice", p);
            goto out;
        }
        struct bucket *nb = xmalloc(sizeof(*nb));
        *nb = b;
        hmap_put(l->listed, p, nb);
    }
    json_t *aq = json_object_get(j, "aggregate_default_qps");
    json_t *ac = json_object_get(j, "aggregate_default_capacity");
    if (bucket_of_json(aq, ac, &l->aggregate, "aggregate_default", err,
                       errlen) != 0)
        goto out;
    l->has_aggregate = l->aggregate.qps > 0;
    l->rate_limited = true;
    rc = 0;
out:
    json_decref(j);
    return rc;
}

/* ---- Lifecycle ---- */

struct master_limits *master_limits_new(const struct master_flags *flags,
                                        char *err, size_t errlen)
{
    struct master_limits *l = xcalloc(1, sizeof(*l));
    l->flags = flags;
    l->listed = hmap_new();
    l->peers = hmap_new();
    l->counts = hmap_new();
    l->owners = hmap_new();
    if (flags->rate_limits != NULL && flags->rate_limits[0] != '\0' &&
        parse_rate_limits(l, flags->rate_limits, err, errlen) != 0) {
        master_limits_free(l);
        return NULL;
    }
    return l;
}

static void owner_free(void *p)
{
    struct owner *o = p;
    free(o->principal);
    free(o->peer);
    free(o);
}

void master_limits_free(struct master_limits *l)
{
    if (l == NULL)
        return;
    hmap_free(l->listed, free);
    hmap_free(l->peers, free);
    hmap_free(l->counts, free);
    hmap_free(l->owners, owner_free);
    free(l);
}

/* ---- Keys ---- */

/* "a:<address>" of req's peer ("1.2.3.4:5" -> "a:1.2.3.4", "[::1]:5" ->
 * "a:[::1]"), into out. */
static void peer_key(const struct http_request *req, char *out, size_t outlen)
{
    const char *peer = http_request_peer(req);
    const char *colon = strrchr(peer, ':');
    size_t n = colon != NULL && colon[1] != '\0' && strchr(colon, ']') == NULL
                   ? (size_t)(colon - peer)
                   : strlen(peer);
    snprintf(out, outlen, "a:%.*s", (int)n, peer);
}

static const char *principal_of(const Mesos__V1__FrameworkInfo *fi)
{
    return fi->principal != NULL && fi->principal[0] != '\0' ? fi->principal
                                                             : NULL;
}

static size_t count_of(const struct master_limits *l, const char *key)
{
    const size_t *n = hmap_get(l->counts, key);
    return n != NULL ? *n : 0;
}

static void count_add(struct master_limits *l, const char *key, int delta)
{
    size_t *n = hmap_get(l->counts, key);
    if (n == NULL) {
        if (delta < 0)
            return;
        n = xcalloc(1, sizeof(*n));
        hmap_put(l->counts, key, n);
    }
    if (delta < 0 && *n > 0)
        (*n)--;
    else if (delta > 0)
        (*n)++;
    if (*n == 0)
        free(hmap_del(l->counts, key));
}

/* ---- Rates ---- */

static bool bucket_take(struct bucket *b, int64_t now)
{
    if (b->qps <= 0)
        return true;
    double dt = (double)(now - b->last_ns) / 1e9;
    if (dt > 0)
        b->tokens = fmin(b->cap, b->tokens + b->qps * dt);
    b->last_ns = now;
    if (b->tokens >= 1) {
        b->tokens -= 1;
        return true;
    }
    return false;
}

/* Drop the peer buckets that are full again (they remember nothing). */
static void prune_peers(struct master_limits *l, int64_t now)
{
    size_t n = hmap_count(l->peers);
    char **drop = xcalloc(n ? n : 1, sizeof(*drop));
    size_t k = 0, pos = 0;
    const char *key;
    void *val;
    while (hmap_next(l->peers, &pos, &key, &val)) {
        struct bucket *b = val;
        double t = b->tokens + b->qps * (double)(now - b->last_ns) / 1e9;
        if (t >= b->cap)
            drop[k++] = xstrdup(key);
    }
    for (size_t i = 0; i < k; i++) {
        free(hmap_del(l->peers, drop[i]));
        free(drop[i]);
    }
    free(drop);
}

/* The bucket a SUBSCRIBE of principal (NULL: none) from peer counts
 * against, or NULL when it is not limited. */
static struct bucket *bucket_for(struct master_limits *l, const char *principal,
                                 const char *peer, int64_t now)
{
    if (!l->rate_limited)
        return NULL;
    if (principal != NULL) {
        struct bucket *b = hmap_get(l->listed, principal);
        if (b != NULL)
            return b;
        return l->has_aggregate ? &l->aggregate : NULL;
    }
    if (!l->has_aggregate)
        return NULL;
    struct bucket *b = hmap_get(l->peers, peer);
    if (b == NULL) {
        if (hmap_count(l->peers) >= MAX_BUCKETS)
            prune_peers(l, now);
        if (hmap_count(l->peers) >= MAX_BUCKETS)
            return &l->aggregate; /* every peer busy: share one */
        b = xmalloc(sizeof(*b));
        *b = l->aggregate;
        b->tokens = b->cap;
        b->last_ns = now;
        hmap_put(l->peers, peer, b);
    }
    return b;
}

/* ---- The checks ---- */

int master_limits_subscribe(struct master *m, struct http_request *req,
                            const Mesos__V1__FrameworkInfo *fi, bool is_new)
{
    struct master_limits *l = m->limits;
    if (!is_new || l == NULL)
        return 0;
    const char *principal = principal_of(fi);
    char peer[300];
    peer_key(req, peer, sizeof(peer));
    size_t cap = (size_t)l->flags->max_frameworks_per_principal;
    if (cap > 0) {
        char *pkey = principal != NULL ? xasprintf("p:%s", principal) : NULL;
        bool over_p = pkey != NULL && count_of(l, pkey) >= cap;
        bool over_a = count_of(l, peer) >= cap;
        free(pkey);
        if (over_p || over_a) {
            log_info("SUBSCRIBE from %s refused: %zu frameworks of %s %s",
                     http_request_peer(req), cap, over_p ? "principal" : "peer",
                     over_p ? principal : peer + 2);
            if (over_p)
                http_reply_error(req, 503,
                                 "too many frameworks of principal '%s' "
                                 "(--max_frameworks_per_principal=%zu)",
                                 principal, cap);
            else
                http_reply_error(req, 503,
                                 "too many frameworks from %s "
                                 "(--max_frameworks_per_principal=%zu)",
                                 peer + 2, cap);
            return -1;
        }
    }
    int64_t now = clock_monotonic_ns();
    struct bucket *b = bucket_for(l, principal, peer + 2, now);
    if (b != NULL && !bucket_take(b, now)) {
        char retry[32];
        snprintf(retry, sizeof(retry), "%.0f", ceil(1.0 / b->qps));
        http_reply_header(req, "Retry-After", retry);
        if (principal != NULL)
            http_reply_error(req, 429,
                             "SUBSCRIBE rate of principal '%s' over its "
                             "--rate_limits (%g per second); retry later",
                             principal, b->qps);
        else
            http_reply_error(req, 429,
                             "SUBSCRIBE rate from %s over --rate_limits' "
                             "aggregate default (%g per second); retry later",
                             peer + 2, b->qps);
        return -1;
    }
    return 0;
}

void master_limits_framework_added(struct master *m, const char *id,
                                   const struct http_request *req,
                                   const Mesos__V1__FrameworkInfo *fi)
{
    struct master_limits *l = m->limits;
    if (l == NULL || hmap_get(l->owners, id) != NULL)
        return;
    struct owner *o = xcalloc(1, sizeof(*o));
    char peer[300];
    peer_key(req, peer, sizeof(peer));
    o->peer = xstrdup(peer);
    if (principal_of(fi) != NULL)
        o->principal = xasprintf("p:%s", principal_of(fi));
    count_add(l, o->peer, +1);
    if (o->principal != NULL)
        count_add(l, o->principal, +1);
    hmap_put(l->owners, id, o);
}

void master_limits_framework_gone(struct master *m, const char *id)
{
    struct master_limits *l = m->limits;
    if (l == NULL)
        return;
    struct owner *o = hmap_del(l->owners, id);
    if (o == NULL)
        return;
    count_add(l, o->peer, -1);
    if (o->principal != NULL)
        count_add(l, o->principal, -1);
    owner_free(o);
}

double master_limits_failover_secs(const struct framework *fw, double secs)
{
    const struct master_flags *f = fw->m->flags;
    double cap = (double)f->max_failover_timeout / CLOCK_NS_PER_SEC;
    bool launched = hmap_count(fw->tasks) > 0 || fw->ncompleted_tasks > 0 ||
                    hmap_count(fw->unreachable_tasks) > 0;
    if (cap > 0 && !launched && secs > cap)
        return cap;
    return secs;
}
