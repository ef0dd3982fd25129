/*
 * Role weights and quota (quota.h): the master's copy of what operators set,
 * its validation with Mesos's rules and messages (src/master/quota_handler.cpp,
 * weights_handler.cpp and quota.cpp in apache/mesos), its registry records,
 * and the allocator calls that enforce it (alloc_role_set_weight,
 * alloc_role_set_quota).
 *
 * Changes are queued and run one at a time, so each is validated against
 * the state the previous one left (the capacity check sums every quota).
 * A change is applied only once its registry batch is durable; a failed
 * write answers 503 and changes nothing.
 *
 * Quantities are fixed-point milli-units (common/resources.h), as the
 * allocator keeps them. Quota on nested roles ("a/b") is refused, as in
 * Mesos 1.11, so the quota tree is flat and the total guarantee is a plain
 * sum.
 */
#include "master/quota.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/changes.h"
#include "master/master.h"
#include "master/offers.h"
#include "master/persist.h"
#include "master/registry.h"
#include "master/role_view.h"
#include "mesos/v1/quota.pb-c.h"

/* Mesos's bounds on quota values (quota.cpp): 1 exabyte in megabytes for
 * mem and disk, 1 trillion for everything else. */
#define MAX_MEM_MB  (1024.0 * 1024.0 * 1024.0 * 1024.0)
#define MAX_OTHER   1e12
#define MAX_ENTRIES 64 /* resource names in one guarantee or limit */

/* A set of scalar quantities by name; names owned. */
struct qtys {
    struct alloc_quantity *v;
    uint32_t n;
};

/* A role's quota. An absent limit name means no limit for it. */
struct role_quota {
    struct qtys guarantees;
    struct qtys limits;
};

enum qop_kind {
    QOP_WEIGHTS,
    QOP_UPDATE, /* UPDATE_QUOTA */
    QOP_SET,    /* SET_QUOTA, POST /quota */
    QOP_REMOVE, /* REMOVE_QUOTA, DELETE /quota/<role> */
};

/* A queued change. */
/* An operator change of weights or quota (changes.c runs them one at a
 * time, with the maintenance changes). */
struct quota_op {
    struct master_change base; /* first: the queue's view of it */
    struct master *m;
    enum qop_kind kind;
    bool force;
    size_t n;
    char **roles;              /* n roles */
    double *weights;           /* QOP_WEIGHTS: n weights */
    struct role_quota *quotas; /* QOP_UPDATE, QOP_SET: n quotas */
    char *path;                /* QOP_REMOVE over HTTP: the path, for
                                  Mesos's messages; NULL for the call */
};

struct master_quota {
    struct hmap *weights;   /* role -> double (malloc'd) */
    struct hmap *quotas;    /* role -> struct role_quota */
    bool recovered_weights; /* the registry held weights at start */
};

/* ---- Quantities -------------------------------------------------------- */

static void qtys_free(struct qtys *q)
{
    for (uint32_t i = 0; i < q->n; i++)
        free((char *)q->v[i].name);
    free(q->v);
    q->v = NULL;
    q->n = 0;
}

static int64_t *qtys_find(const struct qtys *q, const char *name)
{
    for (uint32_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].name, name) == 0)
            return &q->v[i].milli;
    return NULL;
}

static int64_t qtys_get(const struct qtys *q, const char *name)
{
    const int64_t *v = qtys_find(q, name);
    return v != NULL ? *v : 0;
}

/* Set name to milli (the last setting of a name wins). */
static void qtys_set(struct qtys *q, const char *name, int64_t milli)
{
    int64_t *v = qtys_find(q, name);
    if (v != NULL) {
        *v = milli;
        return;
    }
    q->v = xreallocarray(q->v, q->n + 1, sizeof(*q->v));
    q->v[q->n].name = xstrdup(name);
    q->v[q->n].milli = milli;
    q->n++;
}

static void qtys_add(struct qtys *q, const char *name, int64_t milli)
{
    int64_t cur = qtys_get(q, name);
    qtys_set(q, name, cur > INT64_MAX - milli ? INT64_MAX : cur + milli);
}

static void qtys_copy(struct qtys *dst, const struct qtys *src)
{
    for (uint32_t i = 0; i < src->n; i++)
        qtys_set(dst, src->v[i].name, src->v[i].milli);
}

/* Take d from q, not below 0. */
static void qtys_sub(struct qtys *q, const struct qtys *d)
{
    for (uint32_t i = 0; i < d->n; i++) {
        int64_t *v = qtys_find(q, d->v[i].name);
        if (v != NULL)
            *v = *v > d->v[i].milli ? *v - d->v[i].milli : 0;
    }
}

/* Every quantity of b is at most a's (absent counts as 0). */
static bool qtys_contains(const struct qtys *a, const struct qtys *b)
{
    for (uint32_t i = 0; i < b->n; i++)
        if (b->v[i].milli > qtys_get(a, b->v[i].name))
            return false;
    return true;
}

/* Limits (absent: unlimited) allow every quantity of q. */
static bool limits_contain(const struct qtys *limits, const struct qtys *q)
{
    for (uint32_t i = 0; i < q->n; i++) {
        const int64_t *l = qtys_find(limits, q->v[i].name);
        if (l != NULL && q->v[i].milli > *l)
            return false;
    }
    return true;
}

/* "{cpus:1; mem:512}" into buf. */
static const char *qtys_fmt(const struct qtys *q, char *buf, size_t len)
{
    size_t used = 0;
    int w = snprintf(buf, len, "{");
    used = w > 0 ? (size_t)w : 0;
    for (uint32_t i = 0; i < q->n && used < len; i++) {
        w = snprintf(buf + used, len - used, "%s%s:%g", i ? "; " : "",
                     q->v[i].name, res_scalar_to_double(q->v[i].milli));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used < len)
        snprintf(buf + used, len - used, "}");
    return buf;
}

static void role_quota_free(struct role_quota *rq)
{
    qtys_free(&rq->guarantees);
    qtys_free(&rq->limits);
}

static void role_quota_free_ptr(void *p)
{
    role_quota_free(p);
    free(p);
}

static bool role_quota_is_default(const struct role_quota *rq)
{
    return rq->guarantees.n == 0 && rq->limits.n == 0;
}

/* ---- Validation ---------------------------------------------------------- */

/* Check one quantity as Mesos's quota validation does (too large, then
 * common::validation::validateInputScalarValue) and convert it. */
static int quantity_check(const char *name, double v, int64_t *milli, char *err,
                          size_t errlen)
{
    if (name == NULL || name[0] == '\0') {
        snprintf(err, errlen, "empty resource name");
        return -1;
    }
    if (isinf(v)) {
        snprintf(err, errlen, "{'%s': %g}: Infinite values not supported", name,
                 v);
        return -1;
    }
    if (isnan(v)) {
        snprintf(err, errlen, "{'%s': nan}: NaN not supported", name);
        return -1;
    }
    if (v < 0) {
        snprintf(err, errlen, "{'%s': %g}: Negative values not supported", name,
                 v);
        return -1;
    }
    bool mem = strcmp(name, "mem") == 0 || strcmp(name, "disk") == 0;
    if (v > (mem ? MAX_MEM_MB : MAX_OTHER) ||
        res_scalar_from_double(v, milli) != 0) {
        snprintf(err, errlen,
                 "{'%s': %g} is invalid: values greater than %s are not "
                 "supported",
                 name, v, mem ? "1 exabyte (1099511627776)" : "1 trillion");
        return -1;
    }
    return 0;
}

/* One entry of a map<string, Value.Scalar> (QuotaConfig's guarantees or
 * limits) into out. */
static int entry_parse(const char *key, const Mesos__V1__Value__Scalar *value,
                       bool drop_zero, struct qtys *out, const char *what,
                       char *err, size_t errlen)
{
    char why[256];
    int64_t milli;
    if (value == NULL) {
        snprintf(err, errlen, "Invalid 'QuotaConfig.%s': '%s' has no value",
                 what, key != NULL ? key : "");
        return -1;
    }
    if (quantity_check(key, value->value, &milli, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "Invalid %s configuration %s",
                 strcmp(what, "guarantees") == 0 ? "guarantee" : "limit", why);
        return -1;
    }
    if (milli != 0 || !drop_zero)
        qtys_set(out, key, milli);
    return 0;
}

/* A role quota can be set on: valid, and not nested (Mesos 1.11). */
static int quota_role_check(const char *role, const char *prefix, char *err,
                            size_t errlen)
{
    char why[256];
    if (role == NULL) {
        snprintf(err, errlen, "%s must be set", prefix);
        return -1;
    }
    if (res_role_validate(role, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "Invalid %s: %s", prefix, why);
        return -1;
    }
    if (strchr(role, '/') != NULL) {
        snprintf(err, errlen,
                 "Updating quota on nested role '%s' is not supported yet",
                 role);
        return -1;
    }
    return 0;
}

/* UPDATE_QUOTA's checks of one config that need no state. */
static int config_parse(const Mesos__V1__Quota__QuotaConfig *c,
                        struct role_quota *out, char *err, size_t errlen)
{
    if (quota_role_check(c->role, "'QuotaConfig.role'", err, errlen) != 0)
        return -1;
    if (c->n_guarantees > MAX_ENTRIES || c->n_limits > MAX_ENTRIES) {
        snprintf(err, errlen,
                 "Invalid QuotaConfig: more than %d resource names",
                 MAX_ENTRIES);
        return -1;
    }
    /* Guarantees of 0 are no guarantee; a limit of 0 is a limit. */
    for (size_t i = 0; i < c->n_guarantees; i++)
        if (entry_parse(c->guarantees[i]->key, c->guarantees[i]->value, true,
                        &out->guarantees, "guarantees", err, errlen) != 0)
            return -1;
    for (size_t i = 0; i < c->n_limits; i++)
        if (entry_parse(c->limits[i]->key, c->limits[i]->value, false,
                        &out->limits, "limits", err, errlen) != 0)
            return -1;
    if (!limits_contain(&out->limits, &out->guarantees)) {
        char g[256], l[256];
        snprintf(err, errlen,
                 "Invalid QuotaConfig: 'QuotaConfig.guarantees' %s is not "
                 "contained within the 'QuotaConfig.limits' %s",
                 qtys_fmt(&out->guarantees, g, sizeof(g)),
                 qtys_fmt(&out->limits, l, sizeof(l)));
        return -1;
    }
    return 0;
}

/* SET_QUOTA's checks of the request (quota::validation::quotaInfo). */
static int request_parse(const Mesos__V1__Quota__QuotaRequest *qr,
                         struct role_quota *out, char *err, size_t errlen)
{
    const char *pre = "Failed to validate set quota request: ";
    if (qr->role == NULL) {
        snprintf(err, errlen, "%sQuotaInfo must specify a role", pre);
        return -1;
    }
    char why[256];
    if (res_role_validate(qr->role, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%sQuotaInfo with invalid role: %s", pre, why);
        return -1;
    }
    if (qr->n_guarantee == 0) {
        snprintf(err, errlen, "%sQuotaInfo with empty 'guarantee'", pre);
        return -1;
    }
    if (qr->n_guarantee > MAX_ENTRIES) {
        snprintf(err, errlen, "%sQuotaInfo with more than %d resources", pre,
                 MAX_ENTRIES);
        return -1;
    }
    for (size_t i = 0; i < qr->n_guarantee; i++) {
        const Mesos__V1__Resource *r = qr->guarantee[i];
        const char *bad = NULL;
        if (r->n_reservations > 0 || r->reservation != NULL ||
            (r->role != NULL && strcmp(r->role, "*") != 0))
            bad = "QuotaInfo must not contain any ReservationInfo";
        else if (r->disk != NULL)
            bad = "QuotaInfo must not contain DiskInfo";
        else if (r->revocable != NULL)
            bad = "QuotaInfo must not contain RevocableInfo";
        else if (r->type != MESOS__V1__VALUE__TYPE__SCALAR || r->scalar == NULL)
            bad = "QuotaInfo must not include non-scalar resources";
        else if (qtys_find(&out->guarantees, r->name) != NULL) {
            snprintf(err, errlen,
                     "%sQuotaInfo contains duplicate resource name '%s'", pre,
                     r->name);
            return -1;
        }
        if (bad != NULL) {
            snprintf(err, errlen, "%s%s", pre, bad);
            return -1;
        }
        int64_t milli;
        if (quantity_check(r->name, r->scalar->value, &milli, why,
                           sizeof(why)) != 0) {
            snprintf(err, errlen,
                     "Failed to validate set quota request: QuotaInfo with "
                     "invalid resource: %s",
                     why);
            return -1;
        }
        qtys_set(&out->guarantees, r->name, milli);
    }
    if (strchr(qr->role, '/') != NULL) {
        snprintf(err, errlen,
                 "Setting quota on nested role '%s' is not supported yet",
                 qr->role);
        return -1;
    }
    /* Mesos 1.9+: a legacy quota limits the role to its guarantee. */
    qtys_copy(&out->limits, &out->guarantees);
    return 0;
}

/* ---- State --------------------------------------------------------------- */

/* Non-revocable scalars of every registered agent, connected or not (as
 * Mesos counts them). */
static void cluster_capacity(const struct master *m, struct qtys *out)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        const struct agent *ag = val;
        for (uint32_t i = 0; i < ag->total.n; i++) {
            const struct resource *r = &ag->total.v[i];
            if (r->type == RES_SCALAR && !r->revocable)
                qtys_add(out, r->name, r->scalar);
        }
    }
}

/* The sum of every quota's guarantees, with op's quotas in place of the
 * roles' current ones. */
static void total_guarantees(const struct master *m, const struct quota_op *op,
                             struct qtys *out)
{
    size_t pos = 0;
    const char *role;
    void *val;
    while (hmap_next(m->quota->quotas, &pos, &role, &val)) {
        bool replaced = false;
        for (size_t i = 0; i < op->n && !replaced; i++)
            replaced = strcmp(op->roles[i], role) == 0;
        if (!replaced) {
            const struct role_quota *rq = val;
            for (uint32_t i = 0; i < rq->guarantees.n; i++)
                qtys_add(out, rq->guarantees.v[i].name,
                         rq->guarantees.v[i].milli);
        }
    }
    for (size_t i = 0; i < op->n; i++)
        for (uint32_t j = 0; j < op->quotas[i].guarantees.n; j++)
            qtys_add(out, op->quotas[i].guarantees.v[j].name,
                     op->quotas[i].guarantees.v[j].milli);
}

struct consumed_ctx {
    const char *role;
    struct qtys *out;
};

static void consumed_cb(void *arg, const struct alloc_role_info *info)
{
    struct consumed_ctx *c = arg;
    if (strcmp(info->role, c->role) != 0)
        return;
    for (uint32_t i = 0; i < info->consumed.n; i++)
        qtys_set(c->out, info->consumed.v[i].name, info->consumed.v[i].milli);
}

/* What role's subtree consumes of its quota as Mesos counts it: its
 * reservations and the unreserved non-revocable resources its tasks use.
 * The allocator's consumption also counts what is offered; offers are
 * taken back out. */
static void consumed_quota(const struct master *m, const char *role,
                           struct qtys *out)
{
    struct consumed_ctx c = {role, out};
    alloc_foreach_role(m->alloc, consumed_cb, &c);
    struct qtys offered = {0};
    size_t pos = 0;
    void *val;
    while (hmap_next(m->offers, &pos, NULL, &val)) {
        const struct offer *o = val;
        if (!res_role_is_subrole(o->role, role))
            continue;
        for (uint32_t i = 0; i < o->resources.n; i++) {
            const struct resource *r = &o->resources.v[i];
            if (r->type == RES_SCALAR && !r->revocable && res_is_unreserved(r))
                qtys_add(&offered, r->name, r->scalar);
        }
    }
    qtys_sub(out, &offered);
    qtys_free(&offered);
}

static void apply_quota(struct master *m, const char *role,
                        const struct role_quota *rq)
{
    struct alloc_quantities g = {rq->guarantees.v, rq->guarantees.n};
    struct alloc_quantities l = {rq->limits.v, rq->limits.n};
    if (alloc_role_set_quota(m->alloc, role, &g, &l) != 0) {
        /* op_check admitted the names; a recovered quota may not fit. */
        log_error("allocator refused the quota of role %s: more than %d "
                  "distinct scalar resource names",
                  role, ALLOC_MAX_NAMES);
        return;
    }
    struct role_quota *old = hmap_del(m->quota->quotas, role);
    if (old != NULL)
        role_quota_free_ptr(old);
    if (!role_quota_is_default(rq)) {
        struct role_quota *copy = xcalloc(1, sizeof(*copy));
        qtys_copy(&copy->guarantees, &rq->guarantees);
        qtys_copy(&copy->limits, &rq->limits);
        hmap_put(m->quota->quotas, role, copy);
    }
}

static void apply_weight(struct master *m, const char *role, double w)
{
    if (alloc_role_set_weight(m->alloc, role, w) != 0) {
        log_error("allocator refused weight %g of role %s", w, role);
        return;
    }
    double *v = hmap_get(m->quota->weights, role);
    if (v == NULL) {
        v = xmalloc(sizeof(*v));
        hmap_put(m->quota->weights, role, v);
    }
    *v = w;
}

/* ---- Messages -------------------------------------------------------------
 */

static Mesos__V1__Value__Scalar *scalar_new(int64_t milli)
{
    Mesos__V1__Value__Scalar *s = xmalloc(sizeof(*s));
    mesos__v1__value__scalar__init(s);
    s->value = res_scalar_to_double(milli);
    return s;
}

/* A new QuotaConfig of role (free with jpb_free). */
static Mesos__V1__Quota__QuotaConfig *config_new(const char *role,
                                                 const struct role_quota *rq)
{
    Mesos__V1__Quota__QuotaConfig *c = xmalloc(sizeof(*c));
    mesos__v1__quota__quota_config__init(c);
    c->role = xstrdup(role);
    c->guarantees = xcalloc(rq->guarantees.n ? rq->guarantees.n : 1,
                            sizeof(*c->guarantees));
    for (uint32_t i = 0; i < rq->guarantees.n; i++) {
        Mesos__V1__Quota__QuotaConfig__GuaranteesEntry *e = xmalloc(sizeof(*e));
        mesos__v1__quota__quota_config__guarantees_entry__init(e);
        e->key = xstrdup(rq->guarantees.v[i].name);
        e->value = scalar_new(rq->guarantees.v[i].milli);
        c->guarantees[c->n_guarantees++] = e;
    }
    c->limits = xcalloc(rq->limits.n ? rq->limits.n : 1, sizeof(*c->limits));
    for (uint32_t i = 0; i < rq->limits.n; i++) {
        Mesos__V1__Quota__QuotaConfig__LimitsEntry *e = xmalloc(sizeof(*e));
        mesos__v1__quota__quota_config__limits_entry__init(e);
        e->key = xstrdup(rq->limits.v[i].name);
        e->value = scalar_new(rq->limits.v[i].milli);
        c->limits[c->n_limits++] = e;
    }
    return c;
}

/* The legacy QuotaInfo of role: its guarantees as scalar resources. */
static Mesos__V1__Quota__QuotaInfo *info_new(const char *role,
                                             const struct role_quota *rq)
{
    Mesos__V1__Quota__QuotaInfo *qi = xmalloc(sizeof(*qi));
    mesos__v1__quota__quota_info__init(qi);
    qi->role = xstrdup(role);
    qi->guarantee = xcalloc(rq->guarantees.n ? rq->guarantees.n : 1,
                            sizeof(*qi->guarantee));
    for (uint32_t i = 0; i < rq->guarantees.n; i++) {
        Mesos__V1__Resource *r = xmalloc(sizeof(*r));
        mesos__v1__resource__init(r);
        r->name = xstrdup(rq->guarantees.v[i].name);
        r->type = MESOS__V1__VALUE__TYPE__SCALAR;
        r->scalar = scalar_new(rq->guarantees.v[i].milli);
        qi->guarantee[qi->n_guarantee++] = r;
    }
    return qi;
}

Mesos__V1__Quota__QuotaStatus *master_quota_status(const struct master *m)
{
    Mesos__V1__Quota__QuotaStatus *s = xmalloc(sizeof(*s));
    mesos__v1__quota__quota_status__init(s);
    size_t n = hmap_count(m->quota->quotas);
    s->infos = xcalloc(n ? n : 1, sizeof(*s->infos));
    s->configs = xcalloc(n ? n : 1, sizeof(*s->configs));
    size_t pos = 0;
    const char *role;
    void *val;
    while (hmap_next(m->quota->quotas, &pos, &role, &val)) {
        s->infos[s->n_infos++] = info_new(role, val);
        s->configs[s->n_configs++] = config_new(role, val);
    }
    return s;
}

static Mesos__V1__WeightInfo *weight_new(const char *role, double w)
{
    Mesos__V1__WeightInfo *wi = xmalloc(sizeof(*wi));
    mesos__v1__weight_info__init(wi);
    wi->role = xstrdup(role);
    wi->weight = w;
    return wi;
}

Mesos__V1__Master__Response__GetWeights *
master_quota_get_weights(const struct master *m)
{
    Mesos__V1__Master__Response__GetWeights *gw = xmalloc(sizeof(*gw));
    mesos__v1__master__response__get_weights__init(gw);
    size_t n = hmap_count(m->quota->weights);
    gw->weight_infos = xcalloc(n ? n : 1, sizeof(*gw->weight_infos));
    size_t pos = 0;
    const char *role;
    void *val;
    while (hmap_next(m->quota->weights, &pos, &role, &val))
        gw->weight_infos[gw->n_weight_infos++] =
            weight_new(role, *(const double *)val);
    return gw;
}

/* ---- Metrics ------------------------------------------------------------- */

struct metrics_ctx {
    const struct master *m;
    void (*fn)(void *arg, const char *name, double v);
    void *arg;
};

static void metric_qlist(const struct metrics_ctx *c, const char *role,
                         const struct alloc_qlist *q, const char *suffix)
{
    for (uint32_t i = 0; i < q->n; i++) {
        char name[512];
        int w = snprintf(name, sizeof(name),
                         "allocator/mesos/quota/roles/%s/resources/%s/%s", role,
                         q->v[i].name, suffix);
        if (w > 0 && (size_t)w < sizeof(name))
            c->fn(c->arg, name, res_scalar_to_double(q->v[i].milli));
    }
}

static int64_t qlist_get(const struct alloc_qlist *q, const char *name)
{
    for (uint32_t i = 0; i < q->n; i++)
        if (strcmp(q->v[i].name, name) == 0)
            return q->v[i].milli;
    return 0;
}

static void metrics_cb(void *arg, const struct alloc_role_info *info)
{
    struct metrics_ctx *c = arg;
    if (hmap_get(c->m->quota->quotas, info->role) == NULL)
        return;
    metric_qlist(c, info->role, &info->guarantee, "guarantee");
    metric_qlist(c, info->role, &info->limit, "limit");
    metric_qlist(c, info->role, &info->consumed, "consumed");
    /* offered_or_allocated, for each name the quota names (as Mesos). */
    const struct alloc_qlist *lists[] = {&info->guarantee, &info->limit};
    for (size_t l = 0; l < 2; l++) {
        for (uint32_t i = 0; i < lists[l]->n; i++) {
            const char *rn = lists[l]->v[i].name;
            struct alloc_quantity q = {rn, qlist_get(&info->allocated, rn)};
            struct alloc_qlist one = {&q, 1};
            metric_qlist(c, info->role, &one, "offered_or_allocated");
        }
    }
}

void master_quota_metrics(const struct master *m,
                          void (*fn)(void *arg, const char *name, double v),
                          void *arg)
{
    if (hmap_count(m->quota->quotas) == 0)
        return;
    struct metrics_ctx c = {m, fn, arg};
    alloc_foreach_role(m->alloc, metrics_cb, &c);
}

/* ---- Rescinding ---------------------------------------------------------- */

/* Every outstanding offer, copied out so that rescinding cannot disturb the
 * walk. Caller frees the array. */
static struct offer **offers_snapshot(struct master *m, size_t *n)
{
    *n = hmap_count(m->offers);
    struct offer **v = xcalloc(*n ? *n : 1, sizeof(*v));
    size_t pos = 0, k = 0;
    void *val;
    while (k < *n && hmap_next(m->offers, &pos, NULL, &val))
        v[k++] = val;
    *n = k;
    return v;
}

static void offer_qtys(const struct offer *o, struct qtys *q)
{
    for (uint32_t i = 0; i < o->resources.n; i++) {
        const struct resource *r = &o->resources.v[i];
        if (r->type == RES_SCALAR)
            qtys_add(q, r->name, r->scalar);
    }
}

/* Mesos's best-effort rescind after a quota change (quota_handler.cpp
 * _update): offers to the role's subtree while consumed and offered exceed
 * its limits, then offers to other roles until what they free, with what
 * the role has, covers its guarantees. */
static void rescind_for_quota(struct master *m, const char *role,
                              const struct role_quota *rq)
{
    size_t n;
    struct offer **offers = offers_snapshot(m, &n);
    bool *gone = xcalloc(n ? n : 1, sizeof(*gone));
    struct qtys have = {0};
    consumed_quota(m, role, &have);
    for (size_t i = 0; i < n; i++)
        if (res_role_is_subrole(offers[i]->role, role))
            offer_qtys(offers[i], &have);
    for (size_t i = 0; i < n && !limits_contain(&rq->limits, &have); i++) {
        if (!res_role_is_subrole(offers[i]->role, role))
            continue;
        struct qtys q = {0};
        offer_qtys(offers[i], &q);
        qtys_sub(&have, &q);
        qtys_free(&q);
        gone[i] = true;
        master_offer_remove(m, offers[i], true, -1);
    }
    for (size_t i = 0; i < n && !qtys_contains(&have, &rq->guarantees); i++) {
        if (gone[i] || res_role_is_subrole(offers[i]->role, role))
            continue;
        offer_qtys(offers[i], &have);
        master_offer_remove(m, offers[i], true, -1);
    }
    qtys_free(&have);
    free(gone);
    free(offers);
}

/* Mesos rescinds every outstanding offer when a role whose weight changed
 * has frameworks. */
static void rescind_for_weights(struct master *m, char *const *roles,
                                size_t nroles)
{
    bool active = false;
    size_t pos = 0;
    void *val;
    while (!active && hmap_next(m->frameworks, &pos, NULL, &val)) {
        const struct framework *fw = val;
        for (uint32_t i = 0; i < fw->nroles && !active; i++)
            for (size_t j = 0; j < nroles && !active; j++)
                active = strcmp(fw->roles[i], roles[j]) == 0;
    }
    if (!active)
        return;
    size_t n;
    struct offer **offers = offers_snapshot(m, &n);
    for (size_t i = 0; i < n; i++)
        master_offer_remove(m, offers[i], true, -1);
    free(offers);
}

/* ---- The queue ------------------------------------------------------------
 */

static void op_free(struct quota_op *op)
{
    for (size_t i = 0; i < op->n; i++) {
        free(op->roles[i]);
        if (op->quotas != NULL)
            role_quota_free(&op->quotas[i]);
    }
    free(op->roles);
    free(op->weights);
    free(op->quotas);
    free(op->path);
    free(op);
}

static struct quota_op *op_new(enum qop_kind kind, struct http_request *req,
                               size_t n)
{
    struct quota_op *op = xcalloc(1, sizeof(*op));
    op->kind = kind;
    op->base.req = req;
    op->n = n;
    op->roles = xcalloc(n ? n : 1, sizeof(*op->roles));
    if (kind == QOP_WEIGHTS)
        op->weights = xcalloc(n ? n : 1, sizeof(*op->weights));
    else
        op->quotas = xcalloc(n ? n : 1, sizeof(*op->quotas));
    return op;
}

static void run(struct master *m, struct master_change *c);

static void change_free(struct master_change *c)
{
    op_free((struct quota_op *)c);
}

/* An op ends: answer it, run the next. */
static void op_end(struct quota_op *op, int status, const char *reason)
{
    master_change_end(op->m, &op->base, status, reason);
}

static void submit(struct master *m, struct quota_op *op)
{
    op->m = m;
    op->base.run = run;
    op->base.free = change_free;
    master_change_submit(m, &op->base);
}

static void op_applied(struct master *m, struct master_change *c)
{
    struct quota_op *op = (struct quota_op *)c;
    for (size_t i = 0; i < op->n; i++) {
        if (op->kind == QOP_WEIGHTS) {
            apply_weight(m, op->roles[i], op->weights[i]);
            log_info("role %s: weight %g", op->roles[i], op->weights[i]);
        } else {
            char g[256], l[256];
            apply_quota(m, op->roles[i], &op->quotas[i]);
            log_info("role %s: quota guarantees %s, limits %s", op->roles[i],
                     qtys_fmt(&op->quotas[i].guarantees, g, sizeof(g)),
                     qtys_fmt(&op->quotas[i].limits, l, sizeof(l)));
        }
    }
    if (op->kind == QOP_WEIGHTS)
        rescind_for_weights(m, op->roles, op->n);
    else
        for (size_t i = 0; i < op->n; i++)
            rescind_for_quota(m, op->roles[i], &op->quotas[i]);
    alloc_candidates_all(m->alloc);
    master_allocate_soon(m);
    op_end(op, 200, NULL);
}

/* The last check of a quota change: the allocator admits its names (at
 * most ALLOC_MAX_NAMES in the cluster); 0, or 400 with a reason. */
static int names_check(struct master *m, const struct quota_op *op, char *err,
                       size_t errlen)
{
    struct alloc_quantities *q = xcalloc(2 * op->n + 1, sizeof(*q));
    for (size_t i = 0; i < op->n; i++) {
        q[2 * i].v = op->quotas[i].guarantees.v;
        q[2 * i].n = op->quotas[i].guarantees.n;
        q[2 * i + 1].v = op->quotas[i].limits.v;
        q[2 * i + 1].n = op->quotas[i].limits.n;
    }
    int rc = alloc_admit_quantity_names(m->alloc, q, (uint32_t)(2 * op->n));
    free(q);
    if (rc == 0)
        return 0;
    snprintf(err, errlen,
             "%s: the cluster would have more than %d distinct scalar "
             "resource names",
             op->kind == QOP_SET ? "Failed to validate set quota request"
                                 : "Invalid QuotaConfig",
             ALLOC_MAX_NAMES);
    return 400;
}

/* The checks against the master's state; 0, or the status with a reason. */
static int op_check(struct master *m, const struct quota_op *op, char *err,
                    size_t errlen)
{
    struct master_quota *q = m->quota;
    size_t fresh = 0;
    for (size_t i = 0; i < op->n && op->kind != QOP_REMOVE; i++)
        if (hmap_get(op->kind == QOP_WEIGHTS ? q->weights : q->quotas,
                     op->roles[i]) == NULL)
            fresh++;
    if (hmap_count(op->kind == QOP_WEIGHTS ? q->weights : q->quotas) + fresh >
        MASTER_MAX_QUOTA_ROLES) {
        snprintf(err, errlen, "more than %d roles with a %s",
                 MASTER_MAX_QUOTA_ROLES,
                 op->kind == QOP_WEIGHTS ? "weight" : "quota");
        return 400;
    }
    if (op->kind == QOP_WEIGHTS)
        return 0;
    if (op->kind == QOP_REMOVE) {
        if (hmap_get(q->quotas, op->roles[0]) != NULL)
            return 0;
        if (op->path != NULL)
            snprintf(err, errlen,
                     "Failed to remove quota for path '%s': Role '%s' has "
                     "no quota set",
                     op->path, op->roles[0]);
        else
            snprintf(err, errlen,
                     "Failed to remove quota: Role '%s' has no quota set",
                     op->roles[0]);
        return 400;
    }
    if (op->kind == QOP_SET && hmap_get(q->quotas, op->roles[0]) != NULL) {
        snprintf(err, errlen,
                 "Failed to validate set quota request: Cannot set quota for "
                 "role '%s' which already has quota",
                 op->roles[0]);
        return 400;
    }
    if (op->kind == QOP_UPDATE) {
        for (size_t i = 0; i < op->n; i++) {
            struct qtys used = {0};
            consumed_quota(m, op->roles[i], &used);
            bool fits = limits_contain(&op->quotas[i].limits, &used);
            if (!fits && op->force)
                log_info("role %s: quota limit below its consumption; forced",
                         op->roles[i]);
            if (!fits && !op->force) {
                char c[256], l[256];
                snprintf(err, errlen,
                         "Invalid QuotaConfig: Role '%s' is already consuming "
                         "'%s'; this is more than the requested limits '%s' "
                         "(use 'force' flag to bypass this check)",
                         op->roles[i], qtys_fmt(&used, c, sizeof(c)),
                         qtys_fmt(&op->quotas[i].limits, l, sizeof(l)));
            }
            qtys_free(&used);
            if (!fits && !op->force)
                return 400;
        }
    }
    if (op->force)
        return names_check(m, op, err, errlen);
    struct qtys cap = {0}, total = {0};
    cluster_capacity(m, &cap);
    total_guarantees(m, op, &total);
    int status = 0;
    if (!qtys_contains(&cap, &total)) {
        char t[256], c[256];
        qtys_fmt(&total, t, sizeof(t));
        qtys_fmt(&cap, c, sizeof(c));
        if (op->kind == QOP_SET) {
            snprintf(err, errlen,
                     "Quota guarantees overcommit the cluster (use 'force' to "
                     "bypass this check): Total quota guarantees '%s' exceed "
                     "cluster capacity '%s'",
                     t, c);
            status = 409;
        } else {
            snprintf(err, errlen,
                     "Invalid QuotaConfig: total quota guarantees '%s' exceed "
                     "cluster capacity '%s' (use 'force' flag to bypass this "
                     "check)",
                     t, c);
            status = 400;
        }
    }
    qtys_free(&cap);
    qtys_free(&total);
    return status != 0 ? status : names_check(m, op, err, errlen);
}

/* The registry batch of op; NULL with a reason. */
static struct registry_batch *op_batch(const struct quota_op *op, char *err,
                                       size_t errlen)
{
    struct registry_batch *b = registry_batch_new();
    for (size_t i = 0; i < op->n; i++) {
        int rc;
        if (op->kind == QOP_WEIGHTS) {
            Mesos__V1__WeightInfo wi = MESOS__V1__WEIGHT_INFO__INIT;
            wi.role = op->roles[i];
            wi.weight = op->weights[i];
            rc = registry_batch_put(b, REGISTRY_KIND_WEIGHT, &wi.base, err,
                                    errlen);
        } else if (role_quota_is_default(&op->quotas[i])) {
            rc = registry_batch_delete(b, REGISTRY_KIND_QUOTA, op->roles[i],
                                       err, errlen);
        } else {
            Mesos__V1__Quota__QuotaConfig *c =
                config_new(op->roles[i], &op->quotas[i]);
            rc = registry_batch_put(b, REGISTRY_KIND_QUOTA, &c->base, err,
                                    errlen);
            jpb_free(&c->base);
        }
        if (rc != 0) {
            registry_batch_free(b);
            return NULL;
        }
    }
    return b;
}

/* Start a change (changes.c calls it when its turn comes): check it
 * against the state the changes before it left, then write it. */
static void run(struct master *m, struct master_change *c)
{
    struct quota_op *op = (struct quota_op *)c;
    char err[1024];
    int status = op_check(m, op, err, sizeof(err));
    if (status != 0) {
        op_end(op, status, err);
        return;
    }
    struct registry_batch *b = op_batch(op, err, sizeof(err));
    if (b == NULL) {
        op_end(op, 400, err);
        return;
    }
    master_change_write(m, &op->base, b, op_applied, "weights/quota change");
}

/* ---- The changes --------------------------------------------------------- */

void master_quota_update_weights(struct master *m, struct http_request *req,
                                 Mesos__V1__WeightInfo *const *infos, size_t n)
{
    if (n > MASTER_MAX_QUOTA_ROLES) {
        http_reply_error(req, 400, "more than %d weights in one request",
                         MASTER_MAX_QUOTA_ROLES);
        return;
    }
    struct quota_op *op = op_new(QOP_WEIGHTS, req, n);
    for (size_t i = 0; i < n; i++) {
        /* Mesos trims the role's surrounding whitespace. */
        const char *r = infos[i]->role != NULL ? infos[i]->role : "";
        while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r')
            r++;
        size_t len = strlen(r);
        while (len > 0 && (r[len - 1] == ' ' || r[len - 1] == '\t' ||
                           r[len - 1] == '\n' || r[len - 1] == '\r'))
            len--;
        op->roles[i] = xstrndup(r, len);
        char why[256];
        if (res_role_validate(op->roles[i], why, sizeof(why)) != 0) {
            http_reply_error(req, 400,
                             "Failed to validate update weights request JSON: "
                             "Invalid role '%s': %s",
                             op->roles[i], why);
            op->n = i + 1;
            op_free(op);
            return;
        }
        double w = infos[i]->weight;
        if (!(w > 0) || isinf(w)) {
            http_reply_error(req, 400,
                             "Failed to validate update weights request JSON "
                             "for role '%s': Invalid weight '%g': Weights must "
                             "be positive",
                             op->roles[i], w);
            op->n = i + 1;
            op_free(op);
            return;
        }
        op->weights[i] = w;
    }
    submit(m, op);
}

void master_quota_update(struct master *m, struct http_request *req, bool force,
                         Mesos__V1__Quota__QuotaConfig *const *configs,
                         size_t n)
{
    if (n > MASTER_MAX_QUOTA_ROLES) {
        http_reply_error(req, 400, "more than %d quota configs in one request",
                         MASTER_MAX_QUOTA_ROLES);
        return;
    }
    struct quota_op *op = op_new(QOP_UPDATE, req, n);
    op->force = force;
    for (size_t i = 0; i < n; i++) {
        char err[1024];
        op->roles[i] =
            xstrdup(configs[i]->role != NULL ? configs[i]->role : "");
        if (config_parse(configs[i], &op->quotas[i], err, sizeof(err)) != 0) {
            http_reply_error(req, 400, "%s", err);
            op->n = i + 1;
            op_free(op);
            return;
        }
    }
    /* A role named twice: the last config wins, as in Mesos; the earlier
     * ones go, so that each role counts once. */
    size_t kept = 0;
    for (size_t i = 0; i < op->n; i++) {
        bool later = false;
        for (size_t j = i + 1; j < op->n && !later; j++)
            later = strcmp(op->roles[i], op->roles[j]) == 0;
        if (later) {
            free(op->roles[i]);
            role_quota_free(&op->quotas[i]);
            continue;
        }
        op->roles[kept] = op->roles[i];
        op->quotas[kept++] = op->quotas[i];
    }
    op->n = kept;
    submit(m, op);
}

void master_quota_set(struct master *m, struct http_request *req,
                      const Mesos__V1__Quota__QuotaRequest *qr)
{
    struct quota_op *op = op_new(QOP_SET, req, 1);
    op->force = qr->has_force && qr->force;
    op->roles[0] = xstrdup(qr->role != NULL ? qr->role : "");
    char err[1024];
    if (request_parse(qr, &op->quotas[0], err, sizeof(err)) != 0) {
        http_reply_error(req, 400, "%s", err);
        op_free(op);
        return;
    }
    submit(m, op);
}

/* REMOVE_QUOTA of role; path is the HTTP path or NULL for the call. */
static void remove_quota(struct master *m, struct http_request *req,
                         const char *role, const char *path)
{
    char why[256];
    if (res_role_validate(role, why, sizeof(why)) != 0) {
        if (path != NULL)
            http_reply_error(req, 400,
                             "Failed to validate remove quota request for "
                             "path '%s': Invalid role '%s': %s",
                             path, role, why);
        else
            http_reply_error(req, 400, "Invalid role '%s': %s", role, why);
        return;
    }
    struct quota_op *op = op_new(QOP_REMOVE, req, 1);
    op->roles[0] = xstrdup(role);
    op->path = path != NULL ? xstrdup(path) : NULL;
    submit(m, op);
}

void master_quota_remove(struct master *m, struct http_request *req,
                         const char *role)
{
    remove_quota(m, req, role, NULL);
}

/* ---- Lifecycle ----------------------------------------------------------- */

void master_quota_init(struct master *m)
{
    m->quota = xcalloc(1, sizeof(*m->quota));
    m->quota->weights = hmap_new();
    m->quota->quotas = hmap_new();
}

void master_quota_recover(struct master *m,
                          const Offerd__Registry__Registry *state)
{
    char err[1024];
    m->quota->recovered_weights = state->n_weights > 0;
    for (size_t i = 0; i < state->n_weights; i++) {
        const Mesos__V1__WeightInfo *wi = state->weights[i];
        if (wi->role == NULL ||
            res_role_validate(wi->role, err, sizeof(err)) != 0 ||
            !(wi->weight > 0) || isinf(wi->weight)) {
            log_warn("registry: skipping an invalid weight of role %s",
                     wi->role != NULL ? wi->role : "(none)");
            continue;
        }
        apply_weight(m, wi->role, wi->weight);
    }
    for (size_t i = 0; i < state->n_quota_configs; i++) {
        struct role_quota rq = {0};
        const Mesos__V1__Quota__QuotaConfig *c = state->quota_configs[i];
        if (config_parse(c, &rq, err, sizeof(err)) != 0)
            log_warn("registry: skipping the quota of role %s: %s",
                     c->role != NULL ? c->role : "(none)", err);
        else
            apply_quota(m, c->role, &rq);
        role_quota_free(&rq);
    }
    if (state->n_weights > 0 || state->n_quota_configs > 0)
        log_info("registry: recovered %zu weights and %zu quotas",
                 hmap_count(m->quota->weights), hmap_count(m->quota->quotas));
}

/* Each "role=weight" of --weights in turn: fn(arg, role, weight) for a valid
 * one; -1 with Mesos's reason at the first invalid one. */
static int weights_flag_each(const char *text, char *err, size_t errlen,
                             void (*fn)(void *, const char *, double),
                             void *arg)
{
    const char *p = text;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        if (len == 0) { /* tokenize skips empty tokens */
            p++;
            continue;
        }
        char *token = xstrndup(p, len);
        p += len;
        char *eq = strchr(token, '=');
        char why[256];
        int rc = -1;
        if (eq == NULL || eq == token || eq[1] == '\0' ||
            strchr(eq + 1, '=') != NULL) {
            snprintf(err, errlen,
                     "Invalid weight: '%s'. --weights should be of the form "
                     "'role=weight,role=weight'",
                     token);
        } else {
            *eq = '\0';
            char *end;
            double w = strtod(eq + 1, &end);
            if (res_role_validate(token, why, sizeof(why)) != 0) {
                *eq = '=';
                snprintf(err, errlen,
                         "Invalid weight: '%s'. %.*s is not a "
                         "valid role",
                         token, (int)(eq - token), token);
            } else if (*end != '\0' || !(w > 0) || isinf(w)) {
                *eq = '=';
                snprintf(err, errlen,
                         "Invalid weight: '%s'. Weights must be positive",
                         token);
            } else {
                if (fn != NULL)
                    fn(arg, token, w);
                rc = 0;
            }
        }
        free(token);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int master_quota_weights_flag_check(const char *text, char *err, size_t errlen)
{
    return text == NULL ? 0 : weights_flag_each(text, err, errlen, NULL, NULL);
}

static void flag_weight(void *arg, const char *role, double w)
{
    struct quota_op *op = arg;
    for (size_t i = 0; i < op->n; i++)
        if (strcmp(op->roles[i], role) == 0) {
            op->weights[i] = w;
            return;
        }
    op->roles = xreallocarray(op->roles, op->n + 1, sizeof(*op->roles));
    op->weights = xreallocarray(op->weights, op->n + 1, sizeof(*op->weights));
    op->roles[op->n] = xstrdup(role);
    op->weights[op->n++] = w;
}

static void flag_weights_done(struct master *m, bool ok, const char *err,
                              void *arg)
{
    (void)m;
    (void)arg;
    if (!ok)
        log_warn("registry: the --weights weights were not recorded: %s", err);
}

void master_quota_weights_flag(struct master *m)
{
    const char *text = m->flags->weights;
    if (text == NULL || text[0] == '\0')
        return;
    if (m->quota->recovered_weights) {
        log_warn("ignoring --weights '%s': recovering the weights from the "
                 "registry",
                 text);
        return;
    }
    struct quota_op *op = op_new(QOP_WEIGHTS, NULL, 0);
    char err[512];
    if (weights_flag_each(text, err, sizeof(err), flag_weight, op) != 0) {
        log_error("--weights: %s", err); /* checked with the flags */
        op_free(op);
        return;
    }
    for (size_t i = 0; i < op->n; i++)
        apply_weight(m, op->roles[i], op->weights[i]);
    struct registry_batch *b = op_batch(op, err, sizeof(err));
    if (b != NULL)
        master_persist_batch(m, b, flag_weights_done, NULL);
    else
        log_warn("the --weights weights cannot be recorded: %s", err);
    op_free(op);
}

static void free_double(void *p)
{
    free(p);
}

void master_quota_free(struct master *m)
{
    if (m->quota == NULL)
        return;
    hmap_free(m->quota->weights, free_double);
    hmap_free(m->quota->quotas, role_quota_free_ptr);
    free(m->quota);
    m->quota = NULL;
}

/* ---- Endpoints ------------------------------------------------------------
 */

static void reply_json_pb(struct http_request *req, const ProtobufCMessage *msg)
{
    json_t *j = jpb_to_json(msg);
    http_reply_json(req, 200, j);
    json_decref(j);
}

/* GET /weights: a JSON array of WeightInfo; PUT /weights: set them. */
static void handle_weights(struct http_request *req, void *arg)
{
    struct master *m = arg;
    if (http_request_method(req) != HTTP_PUT) {
        Mesos__V1__Master__Response__GetWeights *gw =
            master_quota_get_weights(m);
        master_role_view_weights(m, req, gw);
        json_t *arr = json_array();
        for (size_t i = 0; i < gw->n_weight_infos; i++)
            json_array_append_new(arr, jpb_to_json(&gw->weight_infos[i]->base));
        http_reply_json(req, 200, arr);
        json_decref(arr);
        jpb_free(&gw->base);
        return;
    }
    size_t len, n;
    const char *body = (const char *)http_request_body(req, &len);
    ProtobufCMessage **infos;
    char err[512];
    if (jpb_array_from_json_text(&mesos__v1__weight_info__descriptor, body, len,
                                 MASTER_MAX_QUOTA_ROLES, &infos, &n, err,
                                 sizeof(err)) != 0) {
        http_reply_error(
            req, 400, "Failed to parse update weights request JSON: %s", err);
        return;
    }
    master_quota_update_weights(m, req, (Mesos__V1__WeightInfo **)infos, n);
    jpb_array_free(infos, n);
}

/* "/quota/<role>" or "/master/quota/<role>": the role, or NULL. */
static const char *role_of_path(const char *path)
{
    const char *p = path;
    if (strncmp(p, "/master", 7) == 0)
        p += 7;
    if (strncmp(p, "/quota/", 7) != 0)
        return NULL;
    return p + 7;
}

/* GET /quota: the QuotaStatus; POST /quota: SET_QUOTA from a QuotaRequest;
 * DELETE /quota/<role>: REMOVE_QUOTA. */
static void handle_quota(struct http_request *req, void *arg)
{
    struct master *m = arg;
    enum http_method method = http_request_method(req);
    const char *path = http_request_path(req);
    if (method == HTTP_DELETE) {
        const char *role = role_of_path(path);
        if (role == NULL || role[0] == '\0') {
            http_reply_error(req, 400,
                             "Failed to parse remove quota request for path "
                             "'%s': expected 3 tokens, found 2 tokens",
                             path);
            return;
        }
        remove_quota(m, req, role, path);
        return;
    }
    if (method != HTTP_POST) {
        Mesos__V1__Quota__QuotaStatus *s = master_quota_status(m);
        master_role_view_quota(m, req, s);
        reply_json_pb(req, &s->base);
        jpb_free(&s->base);
        return;
    }
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    char err[512];
    Mesos__V1__Quota__QuotaRequest *qr =
        (Mesos__V1__Quota__QuotaRequest *)jpb_from_json_text(
            &mesos__v1__quota__quota_request__descriptor, body, len, err,
            sizeof(err));
    if (qr == NULL) {
        http_reply_error(req, 400,
                         "Failed to validate set quota request JSON: %s", err);
        return;
    }
    master_quota_set(m, req, qr);
    jpb_free(&qr->base);
}

int master_quota_endpoints_register(struct master *m)
{
    static const struct {
        const char *path;
        unsigned methods;
        http_handler_fn fn;
    } routes[] = {
        {"/weights", HTTP_GET | HTTP_PUT, handle_weights},
        {"/quota", HTTP_GET | HTTP_POST | HTTP_DELETE, handle_quota},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        char alias[128];
        snprintf(alias, sizeof(alias), "/master%s", routes[i].path);
        if (http_server_route(m->http, routes[i].path, routes[i].methods,
                              routes[i].fn, m) != 0 ||
            http_server_route(m->http, alias, routes[i].methods, routes[i].fn,
                              m) != 0)
            return -1;
    }
    /* DELETE /quota/<role>: the role is the rest of the path. */
    if (http_server_route_prefix(m->http, "/quota/", HTTP_DELETE, handle_quota,
                                 m) != 0 ||
        http_server_route_prefix(m->http, "/master/quota/", HTTP_DELETE,
                                 handle_quota, m) != 0)
        return -1;
    return 0;
}
