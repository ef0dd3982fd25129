/*
 * The allocator's API, its bookkeeping (agents, frameworks, clients, what
 * each client holds where, quota consumption) and the allocation cycle.
 * See alloc.h for the semantics and alloc_private.h for the structures.
 *
 * The cycle (alloc_run) follows Mesos's two stages: stage 1 satisfies quota
 * guarantees, stage 2 shares out the rest by DRF. Per agent it walks the
 * role tree in share order (sorter.c) and offers the agent's leftover to the
 * first client that can take it. What keeps a cycle cheap:
 *  - agents with nothing available, or whose every eligible client has a
 *    filter covering all of it (filters.c bitmaps), cost O(clients / 64);
 *  - orders are kept sorted incrementally, never re-sorted per agent;
 *  - roles at their quota limit sort last and are not visited by agents
 *    that have no reserved or revocable resources to give them;
 *  - offers are built as shallow views into the agent's resources, lent to
 *    the offer callback, then moved (not copied) into the holding: a cycle
 *    allocates only to copy a cut scalar into a holding that lacks it.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "allocator/alloc_private.h"
#include "common/mem.h"

#define NS_PER_SEC    1000000000LL
#define MAX_REFUSE_NS (365LL * 24 * 3600 * NS_PER_SEC)

/* Outcome of offering an agent to one client. */
enum try_result {
    TRY_NO,      /* the client takes nothing here */
    TRY_OFFERED, /* an offer was made: orders may have changed */
};

/* ---- Options ---------------------------------------------------------- */

static const struct alloc_quantity default_min_cpus[] = {{"cpus", 10}};
static const struct alloc_quantity default_min_mem[] = {{"mem", 32000}};
static const struct alloc_quantities default_min_alloc[] = {
    {default_min_cpus, 1},
    {default_min_mem, 1},
};

void alloc_options_default(struct alloc_options *o)
{
    memset(o, 0, sizeof(*o));
    o->allocation_interval_ns = NS_PER_SEC;
    o->filter_gpu_resources = true;
    o->seed = 1;
}

static struct alloc_quantities *
copy_quantities(const struct alloc_quantities *in, uint32_t n)
{
    struct alloc_quantities *out = xcalloc(n ? n : 1, sizeof(*out));
    for (uint32_t i = 0; i < n; i++) {
        struct alloc_quantity *v = xcalloc(in[i].n ? in[i].n : 1, sizeof(*v));
        for (uint32_t j = 0; j < in[i].n; j++) {
            v[j].name = xstrdup(in[i].v[j].name);
            v[j].milli = in[i].v[j].milli;
        }
        out[i].v = v;
        out[i].n = in[i].n;
    }
    return out;
}

void alloc_quantities_free(struct alloc_quantities *v, uint32_t n)
{
    if (v == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < v[i].n; j++)
            free((char *)v[i].v[j].name);
        free((void *)v[i].v);
    }
    free(v);
}

struct alloc *alloc_new(const struct alloc_options *o)
{
    struct alloc *a = xcalloc(1, sizeof(*a));
    a->opt = *o;
    if (a->opt.allocation_interval_ns < 0)
        a->opt.allocation_interval_ns = 0;
    const struct alloc_quantities *min = o->min_allocatable;
    uint32_t nmin = o->n_min_allocatable;
    if (min == NULL) {
        min = default_min_alloc;
        nmin = 2;
    }
    a->min_alloc = copy_quantities(min, nmin);
    a->n_min_alloc = nmin;
    a->opt.min_allocatable = NULL;
    a->opt.region = o->region != NULL ? xstrdup(o->region) : NULL;
    alloc_names_init(&a->names);
    a->min_alloc_q = xcalloc(nmin ? nmin : 1, sizeof(*a->min_alloc_q));
    for (uint32_t i = 0; i < nmin; i++) {
        /* Fails only past ALLOC_MAX_NAMES names, which alloc.h forbids and
         * alloc_parse_min_allocatable refuses; the vector (used by the
         * quota limit check only) would then lack them. */
        (void)alloc_names_admit_quantities(&a->names, &a->min_alloc[i], 1);
        qvec_from_quantities(&a->names, &a->min_alloc_q[i], &a->min_alloc[i]);
    }
    a->root = xcalloc(1, sizeof(*a->root));
    a->root->path = xstrdup("");
    a->root->weight = 1.0;
    a->rng = o->seed ? o->seed : 0x9e3779b97f4a7c15ULL;
    a->elig_epoch = 1;
    a->flat_dirty = true;
    return a;
}

/* ---- Small helpers ---------------------------------------------------- */

static uint64_t rng_next(struct alloc *a)
{
    /* xorshift64*: the cycle's agent shuffle needs spread, not secrecy. */
    uint64_t x = a->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    a->rng = x;
    return x * 0x2545f4914f6cdd1dULL;
}

uint64_t alloc_rng_next(struct alloc *a)
{
    return rng_next(a);
}

static int64_t clamp_refuse(int64_t refuse_ns)
{
    return refuse_ns > MAX_REFUSE_NS ? MAX_REFUSE_NS : refuse_ns;
}

static int64_t add_sat(int64_t x, int64_t y)
{
    return x > INT64_MAX - y ? INT64_MAX : x + y;
}

/* True when l holds at least one of the n alternatives in full. */
static bool alts_hold(const struct alloc_quantities *alts, uint32_t n,
                      const res_list *l)
{
    for (uint32_t k = 0; k < n; k++) {
        const struct alloc_quantities *alt = &alts[k];
        bool ok = true;
        for (uint32_t j = 0; j < alt->n && ok; j++) {
            const char *name = alt->v[j].name;
            int64_t have = 0;
            for (uint32_t i = 0; i < l->n; i++) {
                const struct resource *r = &l->v[i];
                if (r->type == RES_SCALAR && r->name[0] == name[0] &&
                    strcmp(r->name, name) == 0)
                    have += r->scalar;
            }
            ok = have >= alt->v[j].milli;
        }
        if (ok)
            return true;
    }
    return false;
}

/* True when the resources hold at least one min_allocatable alternative in
 * full (Mesos's allocatable()). */
static bool is_allocatable(struct alloc *a, const res_list *l)
{
    if (l->n == 0)
        return false;
    if (a->n_min_alloc == 0)
        return true;
    return alts_hold(a->min_alloc, a->n_min_alloc, l);
}

/* is_allocatable for client c: its framework's min_allocatable for its
 * role, when it set one, replaces the allocator's (Mesos 1.10's
 * FrameworkInfo.offer_filters); an empty one lets anything through. */
static bool client_allocatable(struct alloc *a, const struct client *c,
                               const res_list *l)
{
    if (c->opts == NULL || !c->opts->has_min)
        return is_allocatable(a, l);
    if (l->n == 0)
        return false;
    return c->opts->nmin == 0 || alts_hold(c->opts->min, c->opts->nmin, l);
}

/* Recompute ag->sum after ag->available changed. */
static void avail_changed(struct alloc *a, struct alloc_agent *ag)
{
    struct avail_sum *sum = &ag->sum;
    sum->exact = true;
    sum->special = false;
    sum->nq = 0;
    for (uint32_t i = 0; i < ag->available.n; i++) {
        const struct resource *r = &ag->available.v[i];
        if (r->nresv > 0 || r->revocable || r->shared)
            sum->special = true;
        if (r->type != RES_SCALAR)
            continue;
        int32_t id =
            sum->nq < ALLOC_SUM_MAX ? alloc_name_find(&a->names, r->name) : -1;
        if (id < 0) {
            sum->exact = false;
            continue;
        }
        sum->q[sum->nq].id = (uint32_t)id;
        sum->q[sum->nq].unres = alloc_res_is_unreserved_nonrevocable(r);
        sum->q[sum->nq].milli = r->scalar;
        sum->nq++;
    }
    sum->allocatable = is_allocatable(a, &ag->available);
}

void alloc_agent_touch(struct alloc *a, struct alloc_agent *ag)
{
    a->quiet[ag->index] = 0;
    if (!a->candidate[ag->index]) {
        a->candidate[ag->index] = 1;
        a->ncandidates++;
    }
}

static void mark_candidate(struct alloc *a, struct alloc_agent *ag)
{
    alloc_agent_touch(a, ag);
}

void alloc_candidates_all(struct alloc *a)
{
    a->all_candidates = true;
}

bool alloc_has_candidates(const struct alloc *a)
{
    return a->all_candidates || a->ncandidates > 0;
}

/* ---- Quota bookkeeping ------------------------------------------------- */

static bool role_unsatisfied(const struct role *r)
{
    for (uint32_t i = 0; i < r->guarantee.n; i++)
        if (r->guarantee.v[i] > alloc_role_consumed(r, i))
            return true;
    return false;
}

/* Keep r's membership in a->unsatisfied: roles with an unmet guarantee and
 * an eligible client of their own. */
static void update_unsatisfied(struct alloc *a, struct role *r)
{
    bool want = r->neligible > 0 && role_unsatisfied(r);
    if (want != r->quota_e.in_order)
        alloc_sorter_set_unsatisfied(a, r, want);
}

/* Whether r's limits leave less than every min_allocatable alternative
 * needs of some limited name. */
static bool compute_limit_blocked(const struct alloc *a, const struct role *r)
{
    if (r->nlimits == 0 || a->n_min_alloc == 0)
        return false;
    for (uint32_t k = 0; k < a->n_min_alloc; k++) {
        const struct qvec *alt = &a->min_alloc_q[k];
        bool alt_blocked = false;
        for (uint32_t j = 0; j < r->nlimits && !alt_blocked; j++) {
            uint32_t id = r->limits[j].id;
            int64_t need = qvec_get(alt, id);
            if (need == 0)
                continue;
            int64_t left = r->limits[j].milli - alloc_role_consumed(r, id);
            alt_blocked = left < need;
        }
        if (!alt_blocked)
            return false;
    }
    return true;
}

/* After r's consumption or quota changed. */
static void refresh_quota_state(struct alloc *a, struct role *r)
{
    if (!r->has_quota) {
        if (r->limit_blocked) {
            r->limit_blocked = false;
            alloc_sorter_role_changed(a, r);
        }
        update_unsatisfied(a, r);
        return;
    }
    bool blocked = compute_limit_blocked(a, r);
    if (blocked != r->limit_blocked) {
        r->limit_blocked = blocked;
        alloc_sorter_role_changed(a, r);
    }
    update_unsatisfied(a, r);
}

/* Track reservations in a total being added (sign 1) or removed (-1). */
static void track_reservations(struct alloc *a, const res_list *l, int sign)
{
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        if (r->type != RES_SCALAR || r->nresv == 0)
            continue;
        int32_t id = alloc_name_find(&a->names, r->name);
        if (id < 0)
            continue;
        struct role *role = alloc_role_get(a, res_reservation_role(r));
        for (struct role *x = role; x != NULL && x != a->root; x = x->parent) {
            qvec_add(&x->reserved, (uint32_t)id, sign * r->scalar);
            if (x->has_quota)
                refresh_quota_state(a, x);
        }
        if (sign < 0)
            alloc_role_try_remove(a, role);
    }
}

/* Account resources (with allocation role c->role) held by client c, added
 * (sign 1) or given back (-1). */
static void track_held(struct alloc *a, struct client *c, const res_list *l,
                       int sign)
{
    struct role *r = c->role;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *res = &l->v[i];
        if (res->type != RES_SCALAR)
            continue;
        int32_t found = alloc_name_find(&a->names, res->name);
        if (found < 0)
            continue;
        uint32_t id = (uint32_t)found;
        int64_t d = sign * res->scalar;
        bool unres = alloc_res_is_unreserved_nonrevocable(res);
        qvec_add(&c->held, id, d);
        qvec_add(&r->held_self, id, d);
        for (struct role *x = r; x != NULL && x != a->root; x = x->parent) {
            qvec_add(&x->held, id, d);
            if (unres)
                qvec_add(&x->unres_held, id, d);
        }
    }
    for (struct role *x = r; x != NULL && x != a->root; x = x->parent)
        if (x->has_quota)
            refresh_quota_state(a, x);
    if (sign > 0)
        alloc_sorter_allocated(a, c);
    alloc_sorter_update(a, c);
}

/* track_held for a summary's quantities (an agent's whole leftover). */
static void track_held_sum(struct alloc *a, struct client *c,
                           const struct avail_sum *sum, int sign)
{
    struct role *r = c->role;
    for (uint32_t i = 0; i < sum->nq; i++) {
        uint32_t id = sum->q[i].id;
        int64_t d = sign * sum->q[i].milli;
        qvec_add(&c->held, id, d);
        qvec_add(&r->held_self, id, d);
        for (struct role *x = r; x != NULL && x != a->root; x = x->parent) {
            qvec_add(&x->held, id, d);
            if (sum->q[i].unres)
                qvec_add(&x->unres_held, id, d);
        }
    }
    for (struct role *x = r; x != NULL && x != a->root; x = x->parent)
        if (x->has_quota)
            refresh_quota_state(a, x);
    if (sign > 0)
        alloc_sorter_allocated(a, c);
    alloc_sorter_update(a, c);
}

/* ---- Clients ---------------------------------------------------------- */

static void refresh_eligible(struct alloc *a, struct client *c)
{
    bool want = c->fw->active && c->subscribed && !c->suppressed;
    if (want == c->eligible)
        return;
    c->eligible = want;
    if (++a->elig_epoch == 0)
        a->elig_epoch = 1;
    uint32_t w = c->id / 64;
    uint64_t bit = 1ULL << (c->id % 64);
    if (want) {
        a->eligible_bits[w] |= bit;
        a->n_eligible++;
    } else {
        a->eligible_bits[w] &= ~bit;
        a->n_eligible--;
    }
    alloc_sorter_set_eligible(a, c, want);
    if (c->role->has_quota)
        update_unsatisfied(a, c->role);
    if (want)
        alloc_candidates_all(a);
}

static struct client *client_find(const struct alloc_framework *fw,
                                  const char *role)
{
    for (uint32_t i = 0; i < fw->nclients; i++)
        if (strcmp(fw->clients[i]->role->path, role) == 0)
            return fw->clients[i];
    return NULL;
}

static const struct fw_role_opts *fw_opts_find(const struct alloc_framework *fw,
                                               const char *role)
{
    for (uint32_t i = 0; i < fw->nopts; i++)
        if (strcmp(fw->opts[i].role, role) == 0)
            return &fw->opts[i];
    return NULL;
}

static struct client *client_new(struct alloc *a, struct alloc_framework *fw,
                                 const char *role)
{
    struct client *c = xcalloc(1, sizeof(*c));
    if (a->nfree_ids > 0) {
        c->id = a->free_ids[--a->nfree_ids];
    } else {
        if (a->nclient_ids == a->capclient_ids) {
            a->capclient_ids = a->capclient_ids ? 2 * a->capclient_ids : 64;
            a->clients = xreallocarray(a->clients, a->capclient_ids,
                                       sizeof(*a->clients));
        }
        c->id = a->nclient_ids++;
    }
    a->clients[c->id] = c;
    uint32_t words = c->id / 64 + 1;
    if (words > a->eligible_words) {
        a->eligible_bits =
            xreallocarray(a->eligible_bits, words, sizeof(*a->eligible_bits));
        memset(a->eligible_bits + a->eligible_words, 0,
               (words - a->eligible_words) * sizeof(uint64_t));
        a->eligible_words = words;
    }
    c->fw = fw;
    c->role = alloc_role_get(a, role);
    c->opts = fw_opts_find(fw, role);
    c->e.seq = a->seq++;
    c->e.owner = c->role;
    c->e.client = c;
    struct role *r = c->role;
    if (r->nclients == r->capclients) {
        r->capclients = r->capclients ? 2 * r->capclients : 4;
        r->clients = xreallocarray(r->clients, r->capclients, sizeof(c));
    }
    r->clients[r->nclients++] = c;
    a->flat_dirty = true;
    if (fw->nclients == fw->capclients) {
        fw->capclients = fw->capclients ? 2 * fw->capclients : 4;
        fw->clients = xreallocarray(fw->clients, fw->capclients, sizeof(c));
    }
    fw->clients[fw->nclients++] = c;
    return c;
}

/* Free a client that holds nothing. */
static void client_destroy(struct alloc *a, struct client *c)
{
    c->subscribed = false;
    refresh_eligible(a, c);
    alloc_filter_remove_client(a, c);
    struct role *r = c->role;
    for (uint32_t i = 0; i < r->nclients; i++) {
        if (r->clients[i] == c) {
            r->clients[i] = r->clients[--r->nclients];
            break;
        }
    }
    a->flat_dirty = true;
    struct alloc_framework *fw = c->fw;
    for (uint32_t i = 0; i < fw->nclients; i++) {
        if (fw->clients[i] == c) {
            fw->clients[i] = fw->clients[--fw->nclients];
            break;
        }
    }
    a->clients[c->id] = NULL;
    if (a->nfree_ids == a->capfree_ids) {
        a->capfree_ids = a->capfree_ids ? 2 * a->capfree_ids : 16;
        a->free_ids =
            xreallocarray(a->free_ids, a->capfree_ids, sizeof(*a->free_ids));
    }
    a->free_ids[a->nfree_ids++] = c->id;
    qvec_free(&c->held);
    free(c);
    alloc_role_try_remove(a, r);
}

/* ---- Moving resources between lists ------------------------------------ */

/* Fill view with shallow copies of l's entries, their allocation role
 * replaced by `role` (borrowed; NULL strips it). The view shares l's
 * strings and arrays: never clear it, only reset its n. */
static void role_view(const res_list *l, const char *role, res_list *view)
{
    if (view->cap < l->n) {
        view->cap = l->n;
        view->v = xreallocarray(view->v, view->cap, sizeof(*view->v));
    }
    for (uint32_t i = 0; i < l->n; i++) {
        view->v[i] = l->v[i];
        view->v[i].alloc_role = (char *)role;
    }
    view->n = l->n;
}

/* dst += src, moving src's entries rather than copying them: when dst is
 * empty the two lists trade arrays, else each entry merges into dst or is
 * appended with its storage. src is left empty with its array kept, so a
 * list that empties and fills again every cycle (an agent's available
 * resources, a holding) does not go back to malloc. */
static void move_all(res_list *dst, res_list *src)
{
    if (dst->n == 0) {
        res_list t = *dst;
        *dst = *src;
        *src = t;
        return;
    }
    for (uint32_t i = 0; i < src->n; i++)
        res_list_add_move(dst, &src->v[i]);
    src->n = 0;
}

/* Take `part` (contained in *from) out of *from and add it to *to. When
 * part is all of *from the storage moves without a copy. */
static void transfer(res_list *from, const res_list *part, res_list *to)
{
    if (part->n == from->n && res_list_contains(part, from)) {
        move_all(to, from);
        return;
    }
    res_list_sub_all(from, part);
    res_list_add_all(to, part);
}

/* ---- Holdings ---------------------------------------------------------- */

static struct holding *holding_find(struct alloc_agent *ag,
                                    const struct client *c)
{
    for (uint32_t i = 0; i < ag->nholds; i++)
        if (ag->holds[i].c == c)
            return &ag->holds[i];
    return NULL;
}

static struct holding *holding_get(struct alloc_agent *ag, struct client *c)
{
    struct holding *h = holding_find(ag, c);
    if (h != NULL)
        return h;
    if (ag->nholds == ag->capholds) {
        ag->capholds = ag->capholds ? 2 * ag->capholds : 4;
        ag->holds = xreallocarray(ag->holds, ag->capholds, sizeof(*h));
    }
    h = &ag->holds[ag->nholds++];
    h->c = c;
    res_list_init(&h->res);
    return h;
}

static void holding_drop_if_empty(struct alloc_agent *ag, struct holding *h)
{
    if (h->res.n > 0)
        return;
    res_list_clear(&h->res);
    *h = ag->holds[--ag->nholds];
}

/* A client whose framework left the role and which holds nothing anywhere
 * is removed. */
static void client_gc(struct alloc *a, struct client *c)
{
    if (!c->subscribed && qvec_is_zero(&c->held) && c->fw != NULL)
        client_destroy(a, c);
}

/* Give back everything c holds on ag. */
static void release_holding(struct alloc *a, struct alloc_agent *ag,
                            struct holding *h)
{
    struct client *c = h->c;
    track_held(a, c, &h->res, -1);
    move_all(&ag->available, &h->res);
    avail_changed(a, ag);
    alloc_filter_available_grew(ag);
    res_list_clear(&h->res);
    *h = ag->holds[--ag->nholds];
}

/* ---- Frameworks -------------------------------------------------------- */

static void set_roles(struct alloc *a, struct alloc_framework *fw,
                      const char *const *roles, uint32_t n)
{
    for (uint32_t i = 0; i < fw->nclients; i++)
        fw->clients[i]->subscribed = false;
    for (uint32_t i = 0; i < n; i++) {
        struct client *c = client_find(fw, roles[i]);
        if (c == NULL)
            c = client_new(a, fw, roles[i]);
        c->subscribed = true;
    }
    /* Refresh and collect clients of roles the framework left. */
    for (uint32_t i = fw->nclients; i-- > 0;) {
        struct client *c = fw->clients[i];
        refresh_eligible(a, c);
        if (!c->subscribed)
            client_gc(a, c);
    }
}

struct alloc_framework *alloc_framework_add(struct alloc *a, void *udata,
                                            const char *const *roles,
                                            uint32_t n, uint32_t caps,
                                            bool active)
{
    struct alloc_framework *fw = xcalloc(1, sizeof(*fw));
    fw->udata = udata;
    fw->caps = caps;
    fw->active = active;
    a->nframeworks++;
    set_roles(a, fw, roles, n);
    return fw;
}

/* ---- Per-role options ------------------------------------------------- */

/* Bounds on what one framework's constraints may cost a cycle: each is
 * evaluated for every agent the framework could be offered. */
#define ALLOC_MAX_GROUPS      64   /* groups per role */
#define ALLOC_MAX_CONSTRAINTS 64   /* constraints per group */
#define ALLOC_MAX_REGEX_LEN   1024 /* bytes of one regex */

static void opts_free(struct fw_role_opts *o, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(o[i].role);
        alloc_quantities_free(o[i].min, o[i].nmin);
        for (uint32_t g = 0; g < o[i].ngroups; g++) {
            for (uint32_t k = 0; k < o[i].groups[g].n; k++) {
                struct cconstraint *c = &o[i].groups[g].v[k];
                free(c->attribute);
                free(c->value);
                if (c->has_re)
                    regfree(&c->re);
            }
            free(o[i].groups[g].v);
        }
        free(o[i].groups);
    }
    free(o);
}

static void fw_free(struct alloc_framework *fw)
{
    opts_free(fw->opts, fw->nopts);
    free(fw->id);
    free(fw->clients);
    free(fw);
}

/* Compile one constraint into *out (zeroed by the caller). Returns 0, or -1
 * with a reason (*out then holds nothing to free). */
static int constraint_compile(const char *role,
                              const struct alloc_constraint *in,
                              struct cconstraint *out, char *err, size_t errlen)
{
    switch (in->selector) {
    case ALLOC_SEL_HOSTNAME:
    case ALLOC_SEL_REGION:
    case ALLOC_SEL_ZONE:
        break;
    case ALLOC_SEL_ATTRIBUTE:
        if (in->attribute == NULL) {
            snprintf(err, errlen,
                     "offer_constraints: role '%s': a selector needs an "
                     "attribute_name or a known pseudoattribute_type",
                     role);
            return -1;
        }
        break;
    default:
        snprintf(err, errlen,
                 "offer_constraints: role '%s': unknown pseudoattribute type",
                 role);
        return -1;
    }
    bool text = in->predicate == ALLOC_PRED_TEXT_EQUALS ||
                in->predicate == ALLOC_PRED_TEXT_NOT_EQUALS;
    bool re = in->predicate == ALLOC_PRED_TEXT_MATCHES ||
              in->predicate == ALLOC_PRED_TEXT_NOT_MATCHES;
    if (!text && !re && in->predicate != ALLOC_PRED_EXISTS &&
        in->predicate != ALLOC_PRED_NOT_EXISTS) {
        snprintf(err, errlen,
                 "offer_constraints: role '%s': unknown predicate type", role);
        return -1;
    }
    if ((text || re) && in->value == NULL) {
        snprintf(err, errlen,
                 "offer_constraints: role '%s': a text predicate needs its "
                 "value",
                 role);
        return -1;
    }
    if (re) {
        if (strlen(in->value) > ALLOC_MAX_REGEX_LEN) {
            snprintf(err, errlen,
                     "offer_constraints: role '%s': regex longer than %d "
                     "bytes",
                     role, ALLOC_MAX_REGEX_LEN);
            return -1;
        }
        int rc = regcomp(&out->re, in->value, REG_EXTENDED);
        if (rc != 0) {
            char why[128];
            regerror(rc, &out->re, why, sizeof(why));
            snprintf(err, errlen,
                     "offer_constraints: role '%s': bad regex '%.64s': %s",
                     role, in->value, why);
            return -1;
        }
        out->has_re = true;
    }
    out->selector = in->selector;
    out->predicate = in->predicate;
    out->attribute =
        in->selector == ALLOC_SEL_ATTRIBUTE ? xstrdup(in->attribute) : NULL;
    out->value = text ? xstrdup(in->value) : NULL;
    return 0;
}

/* Build fw_role_opts from o (n entries). Returns the array, or NULL with a
 * reason (nothing left allocated). */
static struct fw_role_opts *opts_build(struct alloc *a,
                                       const struct alloc_role_options *o,
                                       uint32_t n, char *err, size_t errlen)
{
    struct fw_role_opts *v = xcalloc(n ? n : 1, sizeof(*v));
    uint32_t built = 0;
    for (; built < n; built++) {
        const struct alloc_role_options *in = &o[built];
        struct fw_role_opts *out = &v[built];
        out->role = xstrdup(in->role);
        for (uint32_t j = 0; j < built; j++) {
            if (strcmp(v[j].role, in->role) == 0) {
                snprintf(err, errlen, "role '%s' has options twice", in->role);
                goto fail;
            }
        }
        if (in->has_min_allocatable) {
            if (alloc_names_admit_quantities(&a->names, in->min_allocatable,
                                             in->n_min_allocatable) != 0) {
                snprintf(err, errlen,
                         "offer_filters: role '%s': more than %d distinct "
                         "resource names",
                         in->role, ALLOC_MAX_NAMES);
                goto fail;
            }
            out->has_min = true;
            out->min =
                copy_quantities(in->min_allocatable, in->n_min_allocatable);
            out->nmin = in->n_min_allocatable;
        }
        if (in->ngroups > ALLOC_MAX_GROUPS) {
            snprintf(err, errlen,
                     "offer_constraints: role '%s': more than %d groups",
                     in->role, ALLOC_MAX_GROUPS);
            goto fail;
        }
        if (in->ngroups > 0)
            out->groups = xcalloc(in->ngroups, sizeof(*out->groups));
        for (uint32_t g = 0; g < in->ngroups; g++) {
            const struct alloc_constraint_group *ig = &in->groups[g];
            if (ig->n == 0) {
                snprintf(err, errlen,
                         "offer_constraints: role '%s': an empty group",
                         in->role);
                goto fail;
            }
            if (ig->n > ALLOC_MAX_CONSTRAINTS) {
                snprintf(err, errlen,
                         "offer_constraints: role '%s': more than %d "
                         "constraints in a group",
                         in->role, ALLOC_MAX_CONSTRAINTS);
                goto fail;
            }
            out->groups[g].v = xcalloc(ig->n, sizeof(*out->groups[g].v));
            out->ngroups = g + 1;
            for (uint32_t k = 0; k < ig->n; k++) {
                if (constraint_compile(in->role, &ig->v[k],
                                       &out->groups[g].v[k], err, errlen) != 0)
                    goto fail;
                out->groups[g].n = k + 1;
            }
        }
    }
    return v;
fail:
    opts_free(v, built + 1);
    return NULL;
}

int alloc_role_options_check(struct alloc *a,
                             const struct alloc_role_options *o, uint32_t n,
                             char *err, size_t errlen)
{
    struct fw_role_opts *v = opts_build(a, o, n, err, errlen);
    if (v == NULL)
        return -1;
    opts_free(v, n);
    return 0;
}

int alloc_framework_set_options(struct alloc *a, struct alloc_framework *fw,
                                const struct alloc_role_options *o, uint32_t n,
                                char *err, size_t errlen)
{
    struct fw_role_opts *v = opts_build(a, o, n, err, errlen);
    if (v == NULL)
        return -1;
    opts_free(fw->opts, fw->nopts);
    fw->opts = v;
    fw->nopts = n;
    for (uint32_t i = 0; i < fw->nclients; i++)
        fw->clients[i]->opts = fw_opts_find(fw, fw->clients[i]->role->path);
    /* Agents left quiet under the old options may pass the new ones. */
    if (++a->elig_epoch == 0)
        a->elig_epoch = 1;
    alloc_candidates_all(a);
    return 0;
}

void alloc_framework_set_id(struct alloc *a, struct alloc_framework *fw,
                            const char *id)
{
    char *old = fw->id;
    fw->id = id != NULL ? xstrdup(id) : NULL;
    /* The name is part of the entries' keys: re-place eligible ones. */
    for (uint32_t i = 0; i < fw->nclients; i++) {
        struct client *c = fw->clients[i];
        if (c->eligible) {
            c->e.name = old;
            alloc_sorter_set_eligible(a, c, false);
            alloc_sorter_set_eligible(a, c, true);
        }
        c->e.name = fw->id;
    }
    free(old);
}

void alloc_framework_remove(struct alloc *a, struct alloc_framework *fw)
{
    for (uint32_t i = 0; i < a->nagents; i++) {
        struct alloc_agent *ag = a->agents[i];
        for (uint32_t j = ag->nholds; j-- > 0;)
            if (ag->holds[j].c->fw == fw)
                release_holding(a, ag, &ag->holds[j]);
        for (uint32_t j = 0; j < ag->nio; j++) {
            if (ag->io[j].fw == fw) {
                ag->io[j] = ag->io[--ag->nio];
                break;
            }
        }
        if (ag->available.n > 0)
            mark_candidate(a, ag);
    }
    while (fw->nclients > 0)
        client_destroy(a, fw->clients[fw->nclients - 1]);
    fw_free(fw);
    a->nframeworks--;
}

void alloc_framework_set_active(struct alloc *a, struct alloc_framework *fw,
                                bool active)
{
    fw->active = active;
    for (uint32_t i = 0; i < fw->nclients; i++)
        refresh_eligible(a, fw->clients[i]);
}

void alloc_framework_update(struct alloc *a, struct alloc_framework *fw,
                            const char *const *roles, uint32_t n, uint32_t caps)
{
    if (fw->caps != caps) {
        fw->caps = caps;
        alloc_candidates_all(a);
    }
    set_roles(a, fw, roles, n);
}

static bool role_listed(const char *role, const char *const *roles, uint32_t n)
{
    if (n == 0)
        return true;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(roles[i], role) == 0)
            return true;
    return false;
}

void alloc_framework_suppress(struct alloc *a, struct alloc_framework *fw,
                              const char *const *roles, uint32_t n)
{
    for (uint32_t i = 0; i < fw->nclients; i++) {
        struct client *c = fw->clients[i];
        if (c->subscribed && role_listed(c->role->path, roles, n)) {
            c->suppressed = true;
            refresh_eligible(a, c);
        }
    }
}

void alloc_framework_revive(struct alloc *a, struct alloc_framework *fw,
                            const char *const *roles, uint32_t n)
{
    for (uint32_t i = 0; i < fw->nclients; i++) {
        struct client *c = fw->clients[i];
        if (!role_listed(c->role->path, roles, n))
            continue;
        alloc_filter_remove_client(a, c);
        c->suppressed = false;
        refresh_eligible(a, c);
    }
    /* Mesos clears all inverse offer filters of the framework. */
    for (uint32_t i = 0; i < a->nagents; i++) {
        struct alloc_agent *ag = a->agents[i];
        for (uint32_t j = 0; j < ag->nio; j++)
            if (ag->io[j].fw == fw)
                ag->io[j].filter_expires = 0;
    }
    alloc_candidates_all(a);
}

bool alloc_framework_is_suppressed(const struct alloc *a,
                                   const struct alloc_framework *fw,
                                   const char *role)
{
    (void)a;
    const struct client *c = client_find(fw, role);
    return c != NULL && c->suppressed;
}

/* ---- Agent structs --------------------------------------------------------
 */

/* Slabs are 2 MiB, aligned and advised for a transparent huge page where
 * the kernel allows it: a cycle visits agents in random order, and with
 * agents spread over ordinary pages each visit would miss the TLB. */
#define SLAB_BYTES (2u << 20)

static struct alloc_agent *agent_new(struct alloc *a)
{
    struct alloc_agent *ag = a->free_agents;
    if (ag != NULL) {
        a->free_agents = ag->udata;
    } else {
        uint32_t per_slab = SLAB_BYTES / sizeof(*ag);
        if (a->nslabs == 0 || a->slab_used == per_slab) {
            void *slab = aligned_alloc(SLAB_BYTES, SLAB_BYTES);
            if (slab == NULL)
                slab = xmalloc(SLAB_BYTES);
#ifdef MADV_HUGEPAGE
            madvise(slab, SLAB_BYTES, MADV_HUGEPAGE);
#endif
            a->slabs =
                xreallocarray(a->slabs, a->nslabs + 1, sizeof(*a->slabs));
            a->slabs[a->nslabs++] = slab;
            a->slab_used = 0;
        }
        ag = (struct alloc_agent *)a->slabs[a->nslabs - 1] + a->slab_used++;
    }
    memset(ag, 0, sizeof(*ag));
    return ag;
}

static void agent_info_free(struct agent_info *in)
{
    if (in == NULL)
        return;
    free(in->hostname);
    free(in->region);
    free(in->zone);
    for (uint32_t i = 0; i < in->nattrs; i++) {
        free(in->attrs[i].name);
        free(in->attrs[i].text);
    }
    free(in->attrs);
    free(in);
}

/* Free what an agent struct owns and put it on the free list. */
static void agent_release(struct alloc *a, struct alloc_agent *ag)
{
    for (uint32_t j = 0; j < ag->nholds; j++)
        res_list_clear(&ag->holds[j].res);
    for (uint32_t j = 0; j < ag->nrsets; j++)
        res_list_clear(&ag->rsets[j].res);
    alloc_total_index_drop(ag);
    res_list_clear(&ag->total);
    res_list_clear(&ag->available);
    res_list_clear(&ag->cover_snap);
    res_list_clear(&ag->shared_offered);
    free(ag->holds);
    free(ag->filters);
    free(ag->rsets);
    if (ag->fbits != ag->bits_inline) {
        free(ag->fbits);
        free(ag->cbits);
    }
    free(ag->io);
    agent_info_free(ag->info);
    memset(ag, 0, sizeof(*ag));
    ag->udata = a->free_agents;
    a->free_agents = ag;
}

/* ---- Agents ------------------------------------------------------------ */

/* True when l has a resource agent_scan_total looks at (gpus, shared). */
static bool mentions_gpus_or_shared(const res_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].shared || strcmp(l->v[i].name, "gpus") == 0)
            return true;
    return false;
}

static void agent_scan_total(struct alloc_agent *ag)
{
    ag->has_gpus = res_list_scalar(&ag->total, "gpus") > 0;
    ag->has_shared = false;
    for (uint32_t i = 0; i < ag->total.n; i++)
        if (ag->total.v[i].shared)
            ag->has_shared = true;
}

static void total_changed(struct alloc *a, const res_list *l, int sign)
{
    qvec_add_res(&a->names, &a->total, l, sign, NULL);
    qvec_add_res(&a->names, &a->total_revocable, l, sign, res_is_revocable);
    track_reservations(a, l, sign);
    a->shares_dirty = true;
}

/* Split `l` by allocation role and hand each group to fn. */
static bool same_alloc_role(const struct resource *r, const void *role)
{
    return r->alloc_role != NULL && strcmp(r->alloc_role, role) == 0;
}

static int add_used(struct alloc *a, struct alloc_agent *ag,
                    struct alloc_framework *fw, const res_list *used)
{
    int rc = 0;
    for (uint32_t i = 0; i < used->n; i++) {
        const char *role = used->v[i].alloc_role;
        if (role == NULL) {
            rc = -1;
            continue;
        }
        /* Handle each role once: at its first entry. */
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = used->v[j].alloc_role != NULL &&
                   strcmp(used->v[j].alloc_role, role) == 0;
        if (seen)
            continue;
        /* Usually every entry is in this one role: then a view of `used`
         * without its roles serves, with no copy (agents join by the
         * hundred in a churning cluster). */
        bool one_role = i == 0;
        for (uint32_t j = i + 1; j < used->n && one_role; j++)
            one_role = same_alloc_role(&used->v[j], role);
        res_list owned = RES_LIST_INIT;
        res_list *unalloc = &owned;
        if (one_role) {
            unalloc = &a->scratch_unrole;
            role_view(used, NULL, unalloc);
        } else {
            res_list_filter(used, same_alloc_role, role, &owned);
            res_list_allocate(&owned, NULL);
        }
        if (!res_list_contains(&ag->available, unalloc)) {
            rc = -1;
        } else {
            struct client *c = client_find(fw, role);
            if (c == NULL)
                c = client_new(a, fw, role); /* not subscribed: held only */
            struct holding *h = holding_get(ag, c);
            transfer(&ag->available, unalloc, &h->res);
            avail_changed(a, ag);
            track_held(a, c, unalloc, 1);
        }
        res_list_clear(&owned);
    }
    return rc;
}

int alloc_admit_names(struct alloc *a, const res_list *l)
{
    return alloc_names_admit(&a->names, l);
}

int alloc_admit_quantity_names(struct alloc *a,
                               const struct alloc_quantities *q, uint32_t n)
{
    return alloc_names_admit_quantities(&a->names, q, n);
}

int alloc_agent_add(struct alloc *a, void *udata, const res_list *total,
                    uint32_t caps, const struct alloc_unavailability *unav,
                    const struct alloc_used *used, uint32_t nused,
                    struct alloc_agent **out)
{
    if (alloc_names_admit(&a->names, total) != 0)
        return -2;
    struct alloc_agent *ag = agent_new(a);
    ag->udata = udata;
    ag->caps = caps;
    ag->active = true;
    ag->min_expires = INT64_MAX;
    ag->cover_valid = true;
    res_list_copy(&ag->total, total);
    res_list_copy(&ag->available, total);
    avail_changed(a, ag);
    agent_scan_total(ag);
    if (unav != NULL) {
        ag->has_unav = true;
        ag->unav = *unav;
        a->n_unav++;
    }
    if (a->nagents == a->capagents) {
        a->capagents = a->capagents ? 2 * a->capagents : 64;
        a->agents = xreallocarray(a->agents, a->capagents, sizeof(ag));
        a->candidate = xreallocarray(a->candidate, a->capagents, 1);
        a->quiet = xreallocarray(a->quiet, a->capagents, sizeof(uint32_t));
        a->wake = xreallocarray(a->wake, a->capagents, sizeof(int64_t));
    }
    ag->index = a->nagents;
    a->agents[a->nagents++] = ag;
    a->candidate[ag->index] = 0;
    a->quiet[ag->index] = 0;
    a->wake[ag->index] = INT64_MAX;
    total_changed(a, total, 1);
    int rc = 0;
    for (uint32_t i = 0; i < nused; i++)
        if (add_used(a, ag, used[i].fw, used[i].resources) != 0)
            rc = -1;
    mark_candidate(a, ag);
    *out = ag;
    return rc;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? xstrdup(s) : NULL;
}

void alloc_agent_set_info(struct alloc *a, struct alloc_agent *ag,
                          const char *hostname, const char *region,
                          const char *zone, const struct alloc_attribute *attrs,
                          uint32_t n)
{
    struct agent_info *in = xcalloc(1, sizeof(*in));
    in->hostname = dup_or_null(hostname);
    in->region = dup_or_null(region);
    in->zone = dup_or_null(zone);
    if (n > 0)
        in->attrs = xcalloc(n, sizeof(*in->attrs));
    for (uint32_t i = 0; i < n; i++) {
        in->attrs[i].name = xstrdup(attrs[i].name);
        in->attrs[i].text = dup_or_null(attrs[i].text);
    }
    in->nattrs = n;
    agent_info_free(ag->info);
    ag->info = in;
    alloc_agent_touch(a, ag);
}

void alloc_agent_remove(struct alloc *a, struct alloc_agent *ag)
{
    while (ag->nholds > 0) {
        struct holding *h = &ag->holds[ag->nholds - 1];
        struct client *c = h->c;
        track_held(a, c, &h->res, -1);
        res_list_clear(&h->res);
        ag->nholds--;
        client_gc(a, c);
    }
    alloc_filter_remove_agent(a, ag);
    total_changed(a, &ag->total, -1);
    if (a->candidate[ag->index])
        a->ncandidates--;
    if (ag->has_unav)
        a->n_unav--;
    uint32_t last = --a->nagents;
    a->agents[ag->index] = a->agents[last];
    a->candidate[ag->index] = a->candidate[last];
    a->quiet[ag->index] = a->quiet[last];
    a->wake[ag->index] = a->wake[last];
    a->agents[ag->index]->index = ag->index;
    agent_release(a, ag);
}

void alloc_agent_set_active(struct alloc *a, struct alloc_agent *ag,
                            bool active)
{
    ag->active = active;
    if (active)
        mark_candidate(a, ag);
}

void alloc_agent_set_unavailability(struct alloc *a, struct alloc_agent *ag,
                                    const struct alloc_unavailability *unav)
{
    if (ag->has_unav != (unav != NULL))
        a->n_unav += unav != NULL ? 1 : -1;
    ag->has_unav = unav != NULL;
    if (unav != NULL)
        ag->unav = *unav;
    ag->nio = 0;
    mark_candidate(a, ag);
}

static bool is_revocable(const struct resource *r, const void *arg)
{
    (void)arg;
    return r->revocable;
}

int alloc_agent_update_oversubscribed(struct alloc *a, struct alloc_agent *ag,
                                      const res_list *revocable)
{
    for (uint32_t i = 0; i < revocable->n; i++)
        if (!revocable->v[i].revocable)
            return -1;
    if (alloc_names_admit(&a->names, revocable) != 0)
        return -1;
    res_list old = RES_LIST_INIT;
    res_list_filter(&ag->total, is_revocable, NULL, &old);
    /* Revocable resources held by clients stay held: the new available
     * revocable part is the estimate minus what is held, floored at 0. */
    res_list held = RES_LIST_INIT;
    for (uint32_t i = 0; i < ag->nholds; i++) {
        res_list part = RES_LIST_INIT;
        res_list_filter(&ag->holds[i].res, is_revocable, NULL, &part);
        res_list_allocate(&part, NULL);
        res_list_add_all(&held, &part);
        res_list_clear(&part);
    }
    total_changed(a, &old, -1);
    res_list_sub_all(&ag->total, &old);
    res_list_add_all(&ag->total, revocable);
    alloc_total_index_drop(ag);
    total_changed(a, revocable, 1);

    res_list avail_rev = RES_LIST_INIT;
    res_list_filter(&ag->available, is_revocable, NULL, &avail_rev);
    res_list_sub_all(&ag->available, &avail_rev);
    res_list fresh = RES_LIST_INIT;
    res_list_copy(&fresh, revocable);
    res_list_sub_all(&fresh, &held);
    res_list_add_all(&ag->available, &fresh);
    avail_changed(a, ag);
    /* Any growth invalidates the covered bits unless still within them. */
    alloc_filter_available_grew(ag);
    res_list_clear(&fresh);
    res_list_clear(&avail_rev);
    res_list_clear(&held);
    res_list_clear(&old);
    agent_scan_total(ag);
    mark_candidate(a, ag);
    return 0;
}

int alloc_agent_update_available(struct alloc *a, struct alloc_agent *ag,
                                 const res_list *from, const res_list *to)
{
    if (!res_list_contains(&ag->available, from) ||
        alloc_names_admit(&a->names, to) != 0)
        return -1;
    res_list_sub_all(&ag->available, from);
    res_list_add_all(&ag->available, to);
    avail_changed(a, ag);
    alloc_filter_available_grew(ag);
    total_changed(a, from, -1);
    res_list_sub_all(&ag->total, from);
    res_list_add_all(&ag->total, to);
    alloc_total_index_drop(ag);
    total_changed(a, to, 1);
    agent_scan_total(ag);
    mark_candidate(a, ag);
    return 0;
}

int alloc_agent_update_allocation(struct alloc *a, struct alloc_agent *ag,
                                  struct alloc_framework *fw,
                                  const res_list *from, const res_list *to)
{
    if (from->n == 0 || from->v[0].alloc_role == NULL)
        return -1;
    struct client *c = client_find(fw, from->v[0].alloc_role);
    struct holding *h = c ? holding_find(ag, c) : NULL;
    res_list ufrom = RES_LIST_INIT, uto = RES_LIST_INIT;
    res_list_copy(&ufrom, from);
    res_list_allocate(&ufrom, NULL);
    if (h == NULL || !res_list_contains(&h->res, &ufrom) ||
        alloc_names_admit(&a->names, to) != 0) {
        res_list_clear(&ufrom);
        return -1;
    }
    res_list_copy(&uto, to);
    res_list_allocate(&uto, NULL);
    res_list_sub_all(&h->res, &ufrom);
    track_held(a, c, &ufrom, -1);
    res_list_add_all(&h->res, &uto);
    track_held(a, c, &uto, 1);
    total_changed(a, &ufrom, -1);
    for (uint32_t i = 0; i < ufrom.n; i++)
        alloc_total_sub(a, ag, &ufrom.v[i]);
    for (uint32_t i = 0; i < uto.n; i++)
        alloc_total_add(a, ag, &uto.v[i]);
    total_changed(a, &uto, 1);
    /* A conversion that involves neither gpus nor shared resources leaves
     * what the scan finds as it was (and an agent's total may hold
     * thousands of reservations). */
    if (mentions_gpus_or_shared(&ufrom) || mentions_gpus_or_shared(&uto))
        agent_scan_total(ag);
    res_list_clear(&ufrom);
    res_list_clear(&uto);
    holding_drop_if_empty(ag, h);
    return 0;
}

/* ---- Recovery --------------------------------------------------------- */

int alloc_recover(struct alloc *a, struct alloc_agent *ag,
                  struct alloc_framework *fw, const res_list *resources,
                  int64_t refuse_ns, int64_t now)
{
    if (resources->n == 0)
        return 0;
    const char *role = resources->v[0].alloc_role;
    if (role == NULL)
        return -1;
    for (uint32_t i = 1; i < resources->n; i++)
        if (resources->v[i].alloc_role == NULL ||
            strcmp(resources->v[i].alloc_role, role) != 0)
            return -1;
    struct client *c = client_find(fw, role);
    struct holding *h = c ? holding_find(ag, c) : NULL;
    res_list *unalloc = &a->scratch_unrole;
    role_view(resources, NULL, unalloc);
    if (h == NULL || !res_list_contains(&h->res, unalloc))
        return -1;

    track_held(a, c, unalloc, -1);
    /* The view still points into the caller's list after the transfer. */
    transfer(&h->res, unalloc, &ag->available);
    avail_changed(a, ag);
    alloc_filter_available_grew(ag);
    if (refuse_ns > 0) {
        int64_t d = clamp_refuse(refuse_ns);
        if (d < a->opt.allocation_interval_ns)
            d = a->opt.allocation_interval_ns;
        alloc_filter_add(a, ag, c, unalloc, add_sat(now, d));
    }
    holding_drop_if_empty(ag, h);
    mark_candidate(a, ag);
    client_gc(a, c);
    return 0;
}

void alloc_inverse_offer_respond(struct alloc *a, struct alloc_agent *ag,
                                 struct alloc_framework *fw,
                                 enum alloc_io_status status, int64_t refuse_ns,
                                 int64_t now)
{
    (void)a;
    struct io_state *io = NULL;
    for (uint32_t i = 0; i < ag->nio; i++)
        if (ag->io[i].fw == fw)
            io = &ag->io[i];
    if (io == NULL) {
        if (ag->nio == ag->capio) {
            ag->capio = ag->capio ? 2 * ag->capio : 4;
            ag->io = xreallocarray(ag->io, ag->capio, sizeof(*ag->io));
        }
        io = &ag->io[ag->nio++];
        memset(io, 0, sizeof(*io));
        io->fw = fw;
    }
    io->outstanding = false;
    if (status != ALLOC_IO_UNKNOWN) {
        io->answered = true;
        io->status = status;
    }
    if (refuse_ns > 0)
        io->filter_expires = add_sat(now, clamp_refuse(refuse_ns));
}

bool alloc_inverse_offer_status(const struct alloc_agent *ag,
                                const struct alloc_framework *fw,
                                enum alloc_io_status *status)
{
    for (uint32_t i = 0; i < ag->nio; i++) {
        const struct io_state *io = &ag->io[i];
        if (io->fw != fw)
            continue;
        if (io->outstanding || !io->answered) {
            *status = ALLOC_IO_UNKNOWN;
            return io->outstanding || io->answered;
        }
        *status = io->status;
        return true;
    }
    return false;
}

/* ---- Roles ------------------------------------------------------------- */

int alloc_role_set_weight(struct alloc *a, const char *role, double weight)
{
    if (!(weight > 0.0) || isinf(weight))
        return -1;
    struct role *r = alloc_role_get(a, role);
    r->weight = weight;
    r->has_weight = weight != 1.0;
    a->flat_dirty = true;
    alloc_sorter_role_changed(a, r);
    alloc_role_try_remove(a, r);
    return 0;
}

int alloc_role_set_quota(struct alloc *a, const char *role,
                         const struct alloc_quantities *guarantee,
                         const struct alloc_quantities *limit)
{
    const struct alloc_quantities none = {NULL, 0};
    const struct alloc_quantities both[2] = {
        guarantee != NULL ? *guarantee : none,
        limit != NULL ? *limit : none,
    };
    if (alloc_names_admit_quantities(&a->names, both, 2) != 0)
        return -1;
    struct role *r = alloc_role_get(a, role);
    bool had = r->has_quota;
    qvec_from_quantities(&a->names, &r->guarantee, guarantee);
    free(r->limits);
    r->limits = NULL;
    r->nlimits = 0;
    if (limit != NULL && limit->n > 0) {
        r->limits = xcalloc(limit->n, sizeof(*r->limits));
        for (uint32_t i = 0; i < limit->n; i++) {
            int32_t id = alloc_name_find(&a->names, limit->v[i].name);
            if (id < 0)
                continue;
            r->limits[r->nlimits].id = (uint32_t)id;
            r->limits[r->nlimits].milli = limit->v[i].milli;
            r->nlimits++;
        }
    }
    r->has_quota = !qvec_is_zero(&r->guarantee) || r->nlimits > 0;
    if (r->has_quota != had)
        a->n_quota_roles += r->has_quota ? 1 : -1;
    refresh_quota_state(a, r);
    alloc_candidates_all(a);
    alloc_role_try_remove(a, r);
    return 0;
}

/* ---- The cycle ---------------------------------------------------------- */

/* Per-cycle quota state: Mesos's requiredHeadroom and availableHeadroom. */
struct cycle {
    struct alloc *a;
    struct alloc_agent *ag;
    uint64_t stamp;         /* visit stamp of this (cycle, agent) */
    bool quota;             /* any quota exists */
    struct qvec req_head;   /* unreserved needed for unmet guarantees */
    struct qvec avail_head; /* unallocated unreserved non-revocable */
    bool agent_has_special; /* ag has reserved or revocable resources */
    uint32_t offers;
};

static bool view_push(res_list *v, const struct resource *r)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 16;
        v->v = xreallocarray(v->v, v->cap, sizeof(*v->v));
    }
    v->v[v->n++] = *r; /* shallow: shares the agent's strings and arrays */
    return true;
}

/* Whether constraint k holds on ag (Mesos's AttributeConstraintEvaluator:
 * a missing value passes only the negative predicates; an existing
 * non-TEXT attribute passes every text test). */
static bool constraint_holds(const struct cconstraint *k,
                             const struct alloc_agent *ag)
{
    const struct agent_info *in = ag->info;
    const char *text = NULL;
    bool exists = false;
    switch (k->selector) {
    case ALLOC_SEL_HOSTNAME:
        text = in != NULL ? in->hostname : NULL;
        exists = text != NULL;
        break;
    case ALLOC_SEL_REGION:
        text = in != NULL ? in->region : NULL;
        exists = text != NULL;
        break;
    case ALLOC_SEL_ZONE:
        text = in != NULL ? in->zone : NULL;
        exists = text != NULL;
        break;
    case ALLOC_SEL_ATTRIBUTE:
        for (uint32_t i = 0; in != NULL && i < in->nattrs; i++) {
            if (strcmp(in->attrs[i].name, k->attribute) == 0) {
                exists = true;
                text = in->attrs[i].text;
                break;
            }
        }
        break;
    }
    if (!exists)
        return k->predicate == ALLOC_PRED_NOT_EXISTS ||
               k->predicate == ALLOC_PRED_TEXT_NOT_EQUALS ||
               k->predicate == ALLOC_PRED_TEXT_NOT_MATCHES;
    if (k->predicate == ALLOC_PRED_EXISTS)
        return true;
    if (k->predicate == ALLOC_PRED_NOT_EXISTS)
        return false;
    if (text == NULL)
        return true; /* an attribute that is not TEXT */
    switch (k->predicate) {
    case ALLOC_PRED_TEXT_EQUALS:
        return strcmp(text, k->value) == 0;
    case ALLOC_PRED_TEXT_NOT_EQUALS:
        return strcmp(text, k->value) != 0;
    case ALLOC_PRED_TEXT_MATCHES:
    case ALLOC_PRED_TEXT_NOT_MATCHES: {
        /* A whole-value match, as RE2::FullMatch: POSIX finds the longest
         * match at the leftmost position, so a full match exists exactly
         * when that one starts at 0 and ends at the end. */
        regmatch_t m;
        bool full = regexec(&k->re, text, 1, &m, 0) == 0 && m.rm_so == 0 &&
                    (size_t)m.rm_eo == strlen(text);
        return k->predicate == ALLOC_PRED_TEXT_MATCHES ? full : !full;
    }
    default:
        return false;
    }
}

/* Whether one of the groups of o holds on ag (all its constraints do). */
static bool constraints_admit(const struct fw_role_opts *o,
                              const struct alloc_agent *ag)
{
    for (uint32_t g = 0; g < o->ngroups; g++) {
        bool all = true;
        for (uint32_t i = 0; i < o->groups[g].n && all; i++)
            all = constraint_holds(&o->groups[g].v[i], ag);
        if (all)
            return true;
    }
    return false;
}

/* Is client c allowed to see agent ag at all (Mesos's capability rules,
 * then the framework's offer constraints for c's role)? */
static bool capable_of_agent(struct alloc *a, const struct client *c,
                             const struct alloc_agent *ag)
{
    uint32_t caps = c->fw->caps;
    if (a->opt.filter_gpu_resources && ag->has_gpus && !(caps & ALLOC_FW_GPU))
        return false;
    if ((caps & ALLOC_FW_MULTI_ROLE) && !(ag->caps & ALLOC_AGENT_MULTI_ROLE))
        return false;
    if (!(ag->caps & ALLOC_AGENT_HIERARCHICAL_ROLE) &&
        strchr(c->role->path, '/') != NULL)
        return false;
    /* Remote agents only to REGION_AWARE frameworks; an agent without a
     * domain is local. */
    if (a->opt.region != NULL && !(caps & ALLOC_FW_REGION_AWARE) &&
        ag->info != NULL && ag->info->region != NULL &&
        strcmp(ag->info->region, a->opt.region) != 0)
        return false;
    if (c->opts != NULL && c->opts->ngroups > 0 &&
        !constraints_admit(c->opts, ag))
        return false;
    return true;
}

/* Fill view with ag's available resources that client c may be offered:
 * allocatable to its role, minus what its capabilities exclude, minus
 * shared resources already offered this cycle. */
static void build_available_view(struct alloc *a, const struct client *c,
                                 struct alloc_agent *ag, res_list *view)
{
    uint32_t caps = c->fw->caps;
    const char *role = c->role->path;
    bool check_shared = ag->has_shared && ag->shared_cycle == a->cycle;
    view->n = 0;
    for (uint32_t i = 0; i < ag->available.n; i++) {
        const struct resource *r = &ag->available.v[i];
        if (r->nresv > 0 && !res_is_allocatable_to(r, role))
            continue;
        if (r->revocable && !(caps & ALLOC_FW_REVOCABLE))
            continue;
        if (r->shared && !(caps & ALLOC_FW_SHARED))
            continue;
        if (r->nresv > 1 && !(caps & ALLOC_FW_REFINEMENT))
            continue;
        if (r->shared && check_shared &&
            res_list_contains_one(&ag->shared_offered, r))
            continue;
        view_push(view, r);
    }
}

/* Shrink the unreserved non-revocable scalars of view so that, per name,
 * their sum stays within room (per name id; when `absent_is_zero`, names
 * without room are dropped, else kept whole). Entries that reach zero are
 * removed. */
static void shrink_view(struct alloc *a, res_list *view, const int64_t *room,
                        const bool *has_room, uint32_t nroom)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < view->n; i++) {
        struct resource r = view->v[i];
        if (r.type == RES_SCALAR && alloc_res_is_unreserved_nonrevocable(&r)) {
            int32_t id = alloc_name_find(&a->names, r.name);
            if (id >= 0 && (uint32_t)id < nroom && has_room[id]) {
                int64_t left = room[id];
                if (r.scalar > left)
                    r.scalar = left < 0 ? 0 : left;
                ((int64_t *)room)[id] -= r.scalar;
                if (r.scalar == 0)
                    continue;
            }
        }
        view->v[out++] = r;
    }
    view->n = out;
}

/* Room left under r's limits and its ancestors' (min over the path), for
 * names any of them limits. Returns false when no limit applies. */
static bool limit_room(struct alloc *a, const struct role *r, int64_t *room,
                       bool *has_room, uint32_t nroom)
{
    bool any = false;
    for (uint32_t i = 0; i < nroom; i++)
        has_room[i] = false;
    for (const struct role *x = r; x != NULL && x != a->root; x = x->parent) {
        for (uint32_t j = 0; j < x->nlimits; j++) {
            uint32_t id = x->limits[j].id;
            if (id >= nroom)
                continue;
            int64_t left = x->limits[j].milli - alloc_role_consumed(x, id);
            if (left < 0)
                left = 0;
            if (!has_room[id] || left < room[id])
                room[id] = left;
            has_room[id] = true;
            any = true;
        }
    }
    return any;
}

/* True when view (shallow entries of distinct entries of avail, in any
 * order, scalars possibly cut) is all of avail, uncut. */
static bool view_is_all(const res_list *view, const res_list *avail)
{
    if (view->n != avail->n)
        return false;
    for (uint32_t i = 0; i < view->n; i++) {
        const struct resource *x = &view->v[i];
        uint32_t j = i < avail->n && avail->v[i].name == x->name ? i : 0;
        while (j < avail->n && avail->v[j].name != x->name)
            j++;
        if (j == avail->n ||
            (x->type == RES_SCALAR && x->scalar != avail->v[j].scalar))
            return false;
    }
    return true;
}

/* Move the offered view out of ag->available into h->res. The view's
 * entries are shallow copies of distinct entries of available (same name
 * pointer), scalars possibly cut down. An entry taken whole moves with its
 * storage; a cut scalar is merged into the holding's entry of the same
 * identity, or copied when the holding has none: the one allocation left
 * on the offer path, what the list's ownership of its strings costs. */
static void take_view(struct alloc_agent *ag, struct holding *h,
                      const res_list *view)
{
    res_list *av = &ag->available;
    for (uint32_t i = 0; i < view->n; i++) {
        const struct resource *x = &view->v[i];
        uint32_t j = 0;
        while (j < av->n && av->v[j].name != x->name)
            j++;
        if (j == av->n) {
            /* Not a view of available: only a bug gets here. Copy. */
            res_list_add(&h->res, x);
            res_list_sub(av, x);
            continue;
        }
        struct resource *e = &av->v[j];
        if (x->type != RES_SCALAR || x->scalar >= e->scalar) {
            struct resource moved = *e;
            memmove(e, e + 1, (size_t)(av->n - j - 1) * sizeof(*e));
            av->n--;
            res_list_add_move(&h->res, &moved);
        } else {
            res_list_add(&h->res, x); /* x's strings are e's: still alive */
            e->scalar -= x->scalar;
        }
    }
}

/* Make the offer: account the view to c, hand it to the caller (borrowed:
 * the view still points into the agent's resources), then move it from
 * the agent into c's holding. When the offer is everything the agent has
 * left and c held nothing there, the two lists trade arrays. */
static void make_offer(struct cycle *cy, struct client *c, const res_list *view)
{
    struct alloc *a = cy->a;
    struct alloc_agent *ag = cy->ag;
    struct holding *h = holding_get(ag, c);
    if (ag->has_shared) {
        if (ag->shared_cycle != a->cycle) {
            res_list_clear(&ag->shared_offered);
            ag->shared_cycle = a->cycle;
        }
        for (uint32_t i = 0; i < view->n; i++)
            if (view->v[i].shared)
                res_list_add(&ag->shared_offered, &view->v[i]);
    }
    if (cy->quota) {
        for (uint32_t i = 0; i < view->n; i++) {
            const struct resource *r = &view->v[i];
            int32_t id = -1;
            if (r->type == RES_SCALAR &&
                alloc_res_is_unreserved_nonrevocable(r))
                id = alloc_name_find(&a->names, r->name);
            if (id >= 0)
                qvec_add(&cy->avail_head, (uint32_t)id, -r->scalar);
        }
    }
    track_held(a, c, view, 1);
    a->opt.on_offer(a->opt.cb_arg, c->fw->udata, ag->udata, c->role->path, view,
                    ag->has_unav ? &ag->unav : NULL);
    if (h->res.n == 0 && view_is_all(view, &ag->available))
        move_all(&h->res, &ag->available);
    else
        take_view(ag, h, view);
    avail_changed(a, ag);
    cy->offers++;
    a->stat_offers++;
}

/* After an offer to a client of role r, the next agent's walk most likely
 * starts at the first entries of r's order (the offered client moved
 * back): ask for their client structs while the callback copies this
 * offer. Between two offers to the same client the cycle streams about a
 * thousand other agents through the cache, so they would otherwise be
 * waited for. The entries are the clients' own `e`, so finding the
 * structs follows no pointer. The first client's struct was asked for
 * after the previous offer (it was second then, in DRF's usual rotation),
 * so its held quantities and framework are asked for too. A macro for the
 * reason given at PREFETCH_AGENTS. */
#define PREFETCH_NEXT_CLIENTS(r)                                               \
    do {                                                                       \
        for (uint32_t k_ = 0; k_ < 3 && k_ < (r)->neligible; k_++) {           \
            const char *c_ =                                                   \
                (const char *)(r)->eligible[k_] - offsetof(struct client, e);  \
            for (size_t off_ = 0; off_ < sizeof(struct client); off_ += 64)    \
                __builtin_prefetch(c_ + off_);                                 \
        }                                                                      \
        if ((r)->neligible > 0) {                                              \
            const struct client *c0_ = (r)->eligible[0]->client;               \
            __builtin_prefetch(c0_->held.v);                                   \
            __builtin_prefetch(c0_->fw);                                       \
        }                                                                      \
    } while (0)

/* make_offer for the common case: all of the agent's leftover, plain
 * unreserved resources (ag->sum exact and not special). The callback
 * borrows the agent's list itself. */
static void make_offer_all(struct cycle *cy, struct client *c)
{
    struct alloc *a = cy->a;
    struct alloc_agent *ag = cy->ag;
    struct holding *h = holding_get(ag, c);
    if (cy->quota)
        for (uint32_t i = 0; i < ag->sum.nq; i++)
            if (ag->sum.q[i].unres)
                qvec_add(&cy->avail_head, ag->sum.q[i].id, -ag->sum.q[i].milli);
    track_held_sum(a, c, &ag->sum, 1);
    PREFETCH_NEXT_CLIENTS(c->role);
    a->opt.on_offer(a->opt.cb_arg, c->fw->udata, ag->udata, c->role->path,
                    &ag->available, ag->has_unav ? &ag->unav : NULL);
    move_all(&h->res, &ag->available);
    memset(&ag->sum, 0, sizeof(ag->sum));
    ag->sum.exact = true;
    cy->offers++;
    a->stat_offers++;
}

/* True when r or an ancestor has a quota limit. */
static bool role_limited(const struct alloc *a, const struct role *r)
{
    for (; r != NULL && r != a->root; r = r->parent)
        if (r->nlimits > 0)
            return true;
    return false;
}

/* Whether ag may be offered to c at all: c is not refused all of it by a
 * filter, and the capability rules allow it. */
static bool may_offer(struct alloc *a, const struct alloc_agent *ag,
                      const struct client *c)
{
    return !alloc_bit_get(ag->cbits, ag->nwords, c->id) &&
           capable_of_agent(a, c, ag);
}

/* What of ag c may be offered (a scratch view), or NULL when that is not
 * allocatable. */
static res_list *allocatable_view(struct alloc *a, const struct client *c,
                                  struct alloc_agent *ag)
{
    res_list *view = &a->scratch_view;
    build_available_view(a, c, ag, view);
    return client_allocatable(a, c, view) ? view : NULL;
}

/* Whether offer, cut to size, may go to c: still allocatable and not
 * refused by one of c's filters on ag. */
static bool offer_passes(struct alloc *a, const struct alloc_agent *ag,
                         const struct client *c, const res_list *offer)
{
    return client_allocatable(a, c, offer) &&
           !(alloc_bit_get(ag->fbits, ag->nwords, c->id) &&
             alloc_filter_blocks(ag, c, offer));
}

/* Room for the surplus headroom, per name: available - required, floored
 * at 0 (names with none are dropped: Mesos shrinks to quantities). */
static void surplus_room(const struct cycle *cy, int64_t *room, bool *has_room,
                         uint32_t nroom)
{
    for (uint32_t i = 0; i < nroom; i++) {
        int64_t s = qvec_get(&cy->avail_head, i) - qvec_get(&cy->req_head, i);
        room[i] = s < 0 ? 0 : s;
        has_room[i] = true;
    }
}

/* Stage 2: offer ag's leftover to client c under limits and headroom. */
static enum try_result try_fair(struct cycle *cy, struct client *c)
{
    struct alloc *a = cy->a;
    struct alloc_agent *ag = cy->ag;
    if (!may_offer(a, ag, c))
        return TRY_NO;
    /* Common path: plain unreserved leftovers, no limit, no headroom to
     * keep: the offer is the whole leftover, decided from the summary. */
    if (ag->sum.exact && !ag->sum.special && !role_limited(a, c->role) &&
        !(cy->quota && !qvec_is_zero(&cy->req_head))) {
        if (!(c->opts == NULL || !c->opts->has_min
                  ? ag->sum.allocatable
                  : client_allocatable(a, c, &ag->available)))
            return TRY_NO;
        if (alloc_bit_get(ag->fbits, ag->nwords, c->id) &&
            alloc_filter_blocks(ag, c, &ag->available))
            return TRY_NO;
        make_offer_all(cy, c);
        return TRY_OFFERED;
    }
    res_list *view = allocatable_view(a, c, ag);
    if (view == NULL)
        return TRY_NO;

    uint32_t nroom = a->names.n;
    int64_t room[ALLOC_MAX_NAMES];
    bool has_room[ALLOC_MAX_NAMES];
    if (limit_room(a, c->role, room, has_room, nroom))
        shrink_view(a, view, room, has_room, nroom);
    if (cy->quota && !qvec_is_zero(&cy->req_head)) {
        surplus_room(cy, room, has_room, nroom);
        shrink_view(a, view, room, has_room, nroom);
    }
    if (!offer_passes(a, ag, c, view))
        return TRY_NO;
    make_offer(cy, c, view);
    return TRY_OFFERED;
}

/* Stage 1: offer ag to client c of a role with unmet guarantees. */
static enum try_result try_quota(struct cycle *cy, struct client *c)
{
    struct alloc *a = cy->a;
    struct alloc_agent *ag = cy->ag;
    struct role *r = c->role;
    if (!may_offer(a, ag, c))
        return TRY_NO;
    res_list *view = allocatable_view(a, c, ag);
    if (view == NULL)
        return TRY_NO;

    uint32_t nroom = a->names.n;
    int64_t unmet[ALLOC_MAX_NAMES];
    bool has_unmet[ALLOC_MAX_NAMES];
    for (uint32_t i = 0; i < nroom; i++) {
        int64_t u = qvec_get(&r->guarantee, i) - alloc_role_consumed(r, i);
        unmet[i] = u < 0 ? 0 : u;
        has_unmet[i] = true; /* names without a guarantee get nothing */
    }
    /* guarantees offering: unreserved non-revocable scalars within unmet */
    res_list *g = &a->scratch_view2;
    g->n = 0;
    res_list *rest = &a->scratch_view4;
    rest->n = 0;
    for (uint32_t i = 0; i < view->n; i++) {
        const struct resource *x = &view->v[i];
        if (x->type == RES_SCALAR && alloc_res_is_unreserved_nonrevocable(x))
            view_push(g, x);
    }
    shrink_view(a, g, unmet, has_unmet, nroom);
    if (g->n == 0)
        return TRY_NO;
    /* additional: the unreserved scalars beyond what g takes. */
    for (uint32_t i = 0; i < view->n; i++) {
        struct resource x = view->v[i];
        if (x.type != RES_SCALAR || !alloc_res_is_unreserved_nonrevocable(&x))
            continue;
        for (uint32_t j = 0; j < g->n; j++)
            if (res_same_identity(&g->v[j], &x))
                x.scalar -= g->v[j].scalar;
        if (x.scalar > 0)
            view_push(rest, &x);
    }
    int64_t room[ALLOC_MAX_NAMES];
    bool has_room[ALLOC_MAX_NAMES];
    if (limit_room(a, r, room, has_room, nroom)) {
        for (uint32_t j = 0; j < g->n; j++) {
            int32_t id = alloc_name_find(&a->names, g->v[j].name);
            if (id >= 0 && has_room[id])
                room[id] -= g->v[j].scalar;
        }
        shrink_view(a, rest, room, has_room, nroom);
    }
    if (!qvec_is_zero(&cy->req_head)) {
        surplus_room(cy, room, has_room, nroom);
        shrink_view(a, rest, room, has_room, nroom);
    }
    /* toOffer = g + rest + (reserved to exactly this role | non-scalar |
     * revocable). g and rest are cut from the same entries of the view:
     * an entry in both becomes one, its scalars summed (same name pointer:
     * the same entry of the agent). */
    res_list *offer = &a->scratch_view3;
    offer->n = 0;
    for (uint32_t i = 0; i < view->n; i++) {
        const struct resource *x = &view->v[i];
        if (x->type != RES_SCALAR || x->revocable ||
            res_is_reserved(x, r->path))
            view_push(offer, x);
    }
    uint32_t first_g = offer->n;
    for (uint32_t i = 0; i < g->n; i++)
        view_push(offer, &g->v[i]);
    for (uint32_t i = 0; i < rest->n; i++) {
        uint32_t j = first_g;
        while (j < offer->n && offer->v[j].name != rest->v[i].name)
            j++;
        if (j < offer->n)
            offer->v[j].scalar += rest->v[i].scalar;
        else
            view_push(offer, &rest->v[i]);
    }

    if (!offer_passes(a, ag, c, offer))
        return TRY_NO;
    /* Required headroom shrinks by what goes to guarantees. */
    for (uint32_t i = 0; i < g->n; i++) {
        int32_t id = alloc_name_find(&a->names, g->v[i].name);
        if (id >= 0)
            qvec_add(&cy->req_head, (uint32_t)id, -g->v[i].scalar);
    }
    make_offer(cy, c, offer);
    return TRY_OFFERED;
}

/* True when every eligible client has a filter covering all of ag. Stops
 * at the first word holding an eligible client without one (usually the
 * first word: an agent is rarely covered), instead of counting bits. */
static bool all_covered(const struct alloc *a, const struct alloc_agent *ag)
{
    if (ag->nfilters == 0)
        return false;
    uint32_t words =
        ag->nwords < a->eligible_words ? ag->nwords : a->eligible_words;
    for (uint32_t w = 0; w < words; w++)
        if (a->eligible_bits[w] & ~ag->cbits[w])
            return false;
    for (uint32_t w = words; w < a->eligible_words; w++)
        if (a->eligible_bits[w] != 0)
            return false; /* no filter can cover clients past ag's words */
    return true;
}

static bool agent_has_special(const struct alloc_agent *ag)
{
    if (ag->sum.exact)
        return ag->sum.special;
    for (uint32_t i = 0; i < ag->available.n; i++)
        if (ag->available.v[i].nresv > 0 || ag->available.v[i].revocable)
            return true;
    return false;
}

/* The walks over an agent follow Mesos's: the role sorter's order is taken
 * once per agent and walked to its end (or until the agent has nothing
 * left), each role's frameworks likewise; an offer does not restart the
 * walk. offerd's orders are kept sorted in place, and an offer moves only
 * the entries on the offered client's path, each of them later (its share
 * and its allocation count grew; a role reaching its limit sorts last). So
 * "the order as it was when the walk began, from position i on" is the
 * live array from position i on, less the entries already visited: a walk
 * stays at its index after a visit and passes over entries stamped with
 * this (cycle, agent, stage) visit. */

/* Offer ag to r's own eligible clients, lowest share first. Returns
 * TRY_OFFERED when the agent has nothing left. */
static enum try_result walk_clients(struct cycle *cy, struct role *r,
                                    enum try_result (*try)(struct cycle *,
                                                           struct client *))
{
    bool rnd = cy->a->opt.framework_sorter == ALLOC_SORTER_RANDOM;
    if (rnd)
        alloc_rnd_begin(cy->a, &r->rnd_clients, r->eligible, r->neligible);
    uint32_t i = 0;
    for (;;) {
        struct sentry *e;
        if (rnd) {
            if ((e = alloc_rnd_next(&r->rnd_clients)) == NULL)
                return TRY_NO;
        } else {
            if (i >= r->neligible)
                return TRY_NO;
            e = r->eligible[i];
        }
        struct client *c = e->client;
        if (c->visit == cy->stamp) {
            i++;
            continue;
        }
        c->visit = cy->stamp;
        if (try(cy, c) == TRY_OFFERED) {
            if (cy->ag->available.n == 0)
                return TRY_OFFERED;
            cy->agent_has_special = agent_has_special(cy->ag);
        }
    }
}

/* Walk r's order (stage 1: only subtrees holding a role with an unmet
 * guarantee, and those roles' own clients). Returns TRY_OFFERED when the
 * agent has nothing left. */
static enum try_result walk_roles(struct cycle *cy, struct role *r, bool stage1)
{
    for (uint32_t i = 0;;) {
        if (i >= r->norder)
            return TRY_NO;
        struct sentry *e = r->order[i];
        if (e->visit == cy->stamp) {
            i++;
            continue;
        }
        e->visit = cy->stamp;
        enum try_result res;
        if (stage1) {
            if (e->is_self ? !r->quota_e.in_order : e->owner->unsat_below == 0)
                continue;
            res = e->is_self ? walk_clients(cy, r, try_quota)
                             : walk_roles(cy, e->owner, true);
        } else {
            /* Blocked entries sort last: from here on every entry is at
             * its limit, and only reserved or revocable resources could
             * still go to one. */
            if (e->blocked && !cy->agent_has_special)
                return TRY_NO;
            res = e->is_self ? walk_clients(cy, r, try_fair)
                             : walk_roles(cy, e->owner, false);
        }
        if (res == TRY_OFFERED)
            return TRY_OFFERED;
    }
}

/* --role_sorter=random: Mesos's order, every role with eligible clients
 * drawn from the whole tree at once by its relative weight (sorter.c),
 * taken anew for each agent and walked to its end. */
static enum try_result walk_roles_random(struct cycle *cy, bool stage1)
{
    struct alloc *a = cy->a;
    alloc_rnd_roles_begin(a, stage1, !stage1 && !cy->agent_has_special);
    struct sentry *e;
    while ((e = alloc_rnd_next(&a->flat_walk)) != NULL) {
        struct role *r = e->owner;
        if (!stage1 && !cy->agent_has_special && alloc_role_path_blocked(a, r))
            return TRY_NO; /* blocked roles are drawn last */
        if (walk_clients(cy, r, stage1 ? try_quota : try_fair) == TRY_OFFERED)
            return TRY_OFFERED;
    }
    return TRY_NO;
}

static enum try_result walk_all_roles(struct cycle *cy, bool stage1)
{
    if (cy->a->opt.role_sorter == ALLOC_SORTER_RANDOM)
        return walk_roles_random(cy, stage1);
    return walk_roles(cy, cy->a->root, stage1);
}

static void stage_fair(struct cycle *cy, struct alloc_agent *ag)
{
    struct alloc *a = cy->a;
    cy->ag = ag;
    cy->stamp = ++a->visit_stamp;
    if (!ag->cover_valid)
        alloc_filter_refresh_cover(a, ag);
    if (all_covered(a, ag)) {
        /* Only filters and eligibility can change that: quiet until the
         * agent is touched or eligibility changes. */
        a->quiet[ag->index] = a->elig_epoch;
        return;
    }
    cy->agent_has_special = agent_has_special(ag);
    walk_all_roles(cy, false);
    if (ag->available.n == 0)
        a->quiet[ag->index] = a->elig_epoch; /* nothing left */
}

/* Stage 1 walks the same role orders as stage 2 (Mesos walks its role
 * sorter's order for each agent in both stages, under either sorter),
 * visiting only the roles with unmet guarantees. */
static void stage_quota(struct cycle *cy, struct alloc_agent *ag)
{
    struct alloc *a = cy->a;
    if (a->root->unsat_below == 0)
        return;
    cy->ag = ag;
    cy->stamp = ++a->visit_stamp;
    if (!ag->cover_valid)
        alloc_filter_refresh_cover(a, ag);
    if (all_covered(a, ag))
        return;
    cy->agent_has_special = agent_has_special(ag);
    walk_all_roles(cy, true);
}

/* Mesos's headroom: required = sum over the outermost roles with a
 * guarantee of (guarantee - consumed); available = unallocated unreserved
 * non-revocable resources of all agents. */
static void compute_headroom(struct cycle *cy)
{
    struct alloc *a = cy->a;
    for (uint32_t i = 0; i < a->nroles; i++) {
        struct role *r = a->roles[i];
        if (qvec_is_zero(&r->guarantee))
            continue;
        bool outer = true;
        for (struct role *p = r->parent; p != NULL && p != a->root;
             p = p->parent)
            if (!qvec_is_zero(&p->guarantee))
                outer = false;
        if (!outer)
            continue;
        for (uint32_t id = 0; id < r->guarantee.n; id++) {
            int64_t u = r->guarantee.v[id] - alloc_role_consumed(r, id);
            if (u > 0)
                qvec_add(&cy->req_head, id, u);
        }
    }
    for (uint32_t i = 0; i < a->nagents; i++)
        qvec_add_res(&a->names, &cy->avail_head, &a->agents[i]->available, 1,
                     alloc_res_is_unreserved_nonrevocable);
}

static void make_inverse_offers(struct alloc *a, struct alloc_agent **ags,
                                uint32_t n, int64_t now)
{
    for (uint32_t k = 0; k < n; k++) {
        struct alloc_agent *ag = ags[k];
        if (!ag->has_unav)
            continue;
        for (uint32_t i = 0; i < ag->nholds; i++) {
            struct alloc_framework *fw = ag->holds[i].c->fw;
            if (!fw->active)
                continue;
            struct io_state *io = NULL;
            for (uint32_t j = 0; j < ag->nio; j++)
                if (ag->io[j].fw == fw)
                    io = &ag->io[j];
            if (io == NULL) {
                if (ag->nio == ag->capio) {
                    ag->capio = ag->capio ? 2 * ag->capio : 4;
                    ag->io = xreallocarray(ag->io, ag->capio, sizeof(*io));
                }
                io = &ag->io[ag->nio++];
                memset(io, 0, sizeof(*io));
                io->fw = fw;
            }
            if (io->outstanding || io->filter_expires > now)
                continue;
            io->outstanding = true;
            a->opt.on_inverse_offer(a->opt.cb_arg, fw->udata, ag->udata,
                                    &ag->unav);
            a->stat_inverse_offers++;
        }
    }
}

/* The cycle visits agents in random order, so each visit would wait on
 * memory for the agent, its resources and its bitmaps, and the offer
 * callback (which copies the offer) for the resources' entries and their
 * strings. Ask for them ahead, in three steps, each reading only what an
 * earlier step asked for: the agent struct's hot part (alloc_private.h)
 * PREFETCH_FAR visits ahead; what it points to (every line of its
 * available entries, its holdings, its bitmaps) PREFETCH_MID visits ahead; what
 * the entries point to (names, ranges) PREFETCH_NEAR visits ahead. These are
 * macros on purpose: GCC deems a function holding only prefetches free of side
 * effects and deletes the call. */
#define PREFETCH_FAR  16
#define PREFETCH_MID  8
#define PREFETCH_NEAR 3
#define PREFETCH_BYTES(p, size)                                                \
    do {                                                                       \
        const char *b_ = (const char *)(p);                                    \
        for (size_t off_ = 0; off_ < (size); off_ += 64)                       \
            __builtin_prefetch(b_ + off_);                                     \
    } while (0)
#define PREFETCH_AGENTS(a, i, n)                                               \
    do {                                                                       \
        if ((i) + PREFETCH_FAR < (n))                                          \
            PREFETCH_BYTES((a)->cands[(i) + PREFETCH_FAR],                     \
                           offsetof(struct alloc_agent, bits_inline));         \
        if ((i) + PREFETCH_MID < (n)) {                                        \
            const struct alloc_agent *ag_ = (a)->cands[(i) + PREFETCH_MID];    \
            __builtin_prefetch(ag_->holds);                                    \
            PREFETCH_BYTES(ag_->available.v,                                   \
                           ag_->available.n * sizeof(struct resource));        \
            PREFETCH_BYTES(ag_->fbits, ag_->nwords * sizeof(uint64_t));        \
            PREFETCH_BYTES(ag_->cbits, ag_->nwords * sizeof(uint64_t));        \
        }                                                                      \
        if ((i) + PREFETCH_NEAR < (n)) {                                       \
            const struct alloc_agent *ag_ = (a)->cands[(i) + PREFETCH_NEAR];   \
            for (uint32_t k_ = 0; k_ < ag_->available.n; k_++) {               \
                __builtin_prefetch(ag_->available.v[k_].name);                 \
                if (ag_->available.v[k_].ranges != NULL)                       \
                    __builtin_prefetch(ag_->available.v[k_].ranges);           \
            }                                                                  \
        }                                                                      \
    } while (0)

/* For an agent with filters due, the filters and refused sets that
 * expiring them reads (their struct is in cache by then). */
#define PREFETCH_DUE_FILTERS(a, i, n, now)                                     \
    do {                                                                       \
        if ((i) + PREFETCH_NEAR < (n)) {                                       \
            const struct alloc_agent *ag_ = (a)->cands[(i) + PREFETCH_NEAR];   \
            if (alloc_filter_due(ag_, (now))) {                                \
                __builtin_prefetch(ag_->filters);                              \
                __builtin_prefetch(ag_->rsets);                                \
            }                                                                  \
        }                                                                      \
    } while (0)

uint32_t alloc_run(struct alloc *a, int64_t now)
{
    a->cycle++;
    if (a->shares_dirty)
        alloc_sorter_rebuild(a);

    /* This cycle's agents: all, or those events made candidates, and
     * those with a filter due (quiet or not: expiry may wake them). Their
     * filters expire as the loops below reach them. */
    if (a->capcands < a->nagents) {
        a->capcands = a->nagents;
        a->cands = xreallocarray(a->cands, a->capcands, sizeof(*a->cands));
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->nagents; i++) {
        if (((a->all_candidates || a->candidate[i]) &&
             a->quiet[i] != a->elig_epoch) ||
            a->wake[i] <= now)
            a->cands[n++] = a->agents[i];
    }
    if (a->nagents > 0)
        memset(a->candidate, 0, a->nagents);
    a->all_candidates = false;
    a->ncandidates = 0;
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)(rng_next(a) % i);
        struct alloc_agent *t = a->cands[i - 1];
        a->cands[i - 1] = a->cands[j];
        a->cands[j] = t;
    }

    /* The headroom vectors keep their storage from cycle to cycle. */
    struct cycle cy = {.a = a,
                       .quota = a->n_quota_roles > 0,
                       .req_head = a->head_req,
                       .avail_head = a->head_avail};
    if (cy.req_head.n > 0)
        memset(cy.req_head.v, 0, cy.req_head.n * sizeof(*cy.req_head.v));
    if (cy.avail_head.n > 0)
        memset(cy.avail_head.v, 0, cy.avail_head.n * sizeof(*cy.avail_head.v));
    if (a->n_eligible > 0 && a->opt.on_offer != NULL) {
        if (cy.quota)
            compute_headroom(&cy);
        if (a->nunsatisfied > 0)
            for (uint32_t i = 0; i < n; i++) {
                alloc_filter_expire_agent(a, a->cands[i], now);
                if (a->cands[i]->active && a->cands[i]->available.n > 0)
                    stage_quota(&cy, a->cands[i]);
            }
        for (uint32_t i = 0; i < n; i++) {
            PREFETCH_AGENTS(a, i, n);
            PREFETCH_DUE_FILTERS(a, i, n, now);
            alloc_filter_expire_agent(a, a->cands[i], now);
            if (a->cands[i]->active && a->cands[i]->available.n > 0)
                stage_fair(&cy, a->cands[i]);
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            alloc_filter_expire_agent(a, a->cands[i], now);
    }
    alloc_filter_expire_flush(a);
    /* Inverse offers look at every agent with an unavailability, quiet
     * or not. */
    if (a->opt.on_inverse_offer != NULL && a->n_unav > 0)
        make_inverse_offers(a, a->agents, a->nagents, now);
    a->head_req = cy.req_head;
    a->head_avail = cy.avail_head;
    return cy.offers;
}

/* ---- Queries ----------------------------------------------------------- */

static int role_path_cmp(const void *x, const void *y)
{
    return strcmp((*(struct role *const *)x)->path,
                  (*(struct role *const *)y)->path);
}

void alloc_foreach_role(const struct alloc *a,
                        void (*fn)(void *arg, const struct alloc_role_info *),
                        void *arg)
{
    if (a->nroles == 0)
        return;
    struct role **sorted = xmemdup(a->roles, a->nroles * sizeof(*sorted));
    qsort(sorted, a->nroles, sizeof(*sorted), role_path_cmp);
    for (uint32_t i = 0; i < a->nroles; i++) {
        struct role *r = sorted[i];
        struct alloc_role_info info = {.role = r->path, .weight = r->weight};
        info.n_frameworks = r->nclients;
        qvec_to_qlist(&a->names, &r->held, &info.allocated);
        qvec_to_qlist(&a->names, &r->reserved, &info.reserved);
        struct qvec consumed = {0};
        for (uint32_t id = 0; id < a->names.n; id++)
            qvec_add(&consumed, id, alloc_role_consumed(r, id));
        qvec_to_qlist(&a->names, &consumed, &info.consumed);
        qvec_free(&consumed);
        qvec_to_qlist(&a->names, &r->guarantee, &info.guarantee);
        info.limit.n = 0;
        info.limit.v =
            r->nlimits ? xcalloc(r->nlimits, sizeof(*info.limit.v)) : NULL;
        for (uint32_t j = 0; j < r->nlimits; j++) {
            info.limit.v[j].name = a->names.v[r->limits[j].id];
            info.limit.v[j].milli = r->limits[j].milli;
            info.limit.n++;
        }
        fn(arg, &info);
        free(info.allocated.v);
        free(info.reserved.v);
        free(info.consumed.v);
        free(info.guarantee.v);
        free(info.limit.v);
    }
    free(sorted);
}

static size_t res_list_bytes(const res_list *l)
{
    size_t b = l->cap * sizeof(struct resource);
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        b += strlen(r->name) + 1 + r->nranges * sizeof(struct res_range) +
             r->nresv * sizeof(struct res_reservation) + r->nitems * 16;
        if (r->alloc_role)
            b += strlen(r->alloc_role) + 1;
    }
    return b;
}

void alloc_get_stats(const struct alloc *a, struct alloc_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->cycles = a->cycle;
    out->offers = a->stat_offers;
    out->inverse_offers = a->stat_inverse_offers;
    out->agents = a->nagents;
    out->frameworks = a->nframeworks;
    out->filters_active = a->filters_alive;
    out->roles = a->nroles;
}

void alloc_total_scalar(const struct alloc *a, const char *name,
                        int64_t *regular, int64_t *revocable)
{
    int32_t id = alloc_name_find(&a->names, name);
    int64_t all = id >= 0 ? qvec_get(&a->total, (uint32_t)id) : 0;
    int64_t rev = id >= 0 ? qvec_get(&a->total_revocable, (uint32_t)id) : 0;
    *regular = all - rev;
    *revocable = rev;
}

size_t alloc_memory_bytes(const struct alloc *a)
{
    size_t b = sizeof(*a) + a->capagents * sizeof(void *) +
               a->capclient_ids * sizeof(void *);
    for (uint32_t i = 0; i < a->nagents; i++) {
        const struct alloc_agent *ag = a->agents[i];
        b += sizeof(*ag) + res_list_bytes(&ag->total) +
             res_list_bytes(&ag->available) + res_list_bytes(&ag->cover_snap) +
             ag->capfilters * sizeof(struct ofilter) +
             2 * ag->nwords * sizeof(uint64_t) +
             ag->capholds * sizeof(struct holding);
        for (uint32_t j = 0; j < ag->nholds; j++)
            b += res_list_bytes(&ag->holds[j].res);
        for (uint32_t j = 0; j < ag->nrsets; j++)
            b += sizeof(struct rset) + res_list_bytes(&ag->rsets[j].res);
    }
    for (uint32_t i = 0; i < a->nclient_ids; i++) {
        const struct client *c = a->clients[i];
        if (c != NULL)
            b += sizeof(*c) + c->fagents.cap * sizeof(void *) +
                 c->held.n * sizeof(int64_t);
    }
    for (uint32_t i = 0; i < a->nroles; i++)
        b += sizeof(struct role) + a->roles[i]->caporder * sizeof(void *) +
             a->roles[i]->capeligible * sizeof(void *);
    return b;
}

void alloc_framework_allocated(
    const struct alloc *a, const struct alloc_framework *fw,
    void (*fn)(void *arg, const char *name, int64_t milli), void *arg)
{
    for (uint32_t id = 0; id < a->names.n; id++) {
        int64_t sum = 0;
        for (uint32_t i = 0; i < fw->nclients; i++)
            sum += qvec_get(&fw->clients[i]->held, id);
        if (sum != 0)
            fn(arg, a->names.v[id], sum);
    }
}

const res_list *alloc_agent_available(const struct alloc_agent *ag)
{
    return &ag->available;
}

const res_list *alloc_agent_total(const struct alloc_agent *ag)
{
    return &ag->total;
}

/* ---- Teardown ----------------------------------------------------------- */

void alloc_free(struct alloc *a)
{
    if (a == NULL)
        return;
    for (uint32_t i = 0; i < a->nagents; i++)
        agent_release(a, a->agents[i]);
    for (uint32_t i = 0; i < a->nslabs; i++)
        free(a->slabs[i]);
    free(a->slabs);
    /* Frameworks are found through their clients. */
    for (uint32_t i = 0; i < a->nclient_ids; i++) {
        struct client *c = a->clients[i];
        if (c == NULL)
            continue;
        struct alloc_framework *fw = c->fw;
        for (uint32_t j = 0; j < fw->nclients; j++) {
            struct client *x = fw->clients[j];
            a->clients[x->id] = NULL;
            pset_free(&x->fagents);
            qvec_free(&x->held);
            free(x);
        }
        fw_free(fw);
    }
    alloc_role_tree_free(a->root);
    free(a->flat);
    free(a->flat_walk.v);
    free(a->flat_walk.key);
    free(a->roles);
    free(a->rtab);
    free(a->unsatisfied_buf);
    free(a->clients);
    free(a->free_ids);
    free(a->eligible_bits);
    free(a->agents);
    free(a->candidate);
    free(a->quiet);
    free(a->cands);
    free(a->wake);
    free(a->scratch_view.v);
    free(a->scratch_view2.v);
    free(a->scratch_view3.v);
    free(a->scratch_view4.v);
    free(a->scratch_unrole.v);
    qvec_free(&a->total);
    qvec_free(&a->total_revocable);
    qvec_free(&a->head_req);
    qvec_free(&a->head_avail);
    for (uint32_t i = 0; i < a->n_min_alloc; i++)
        qvec_free(&a->min_alloc_q[i]);
    free(a->min_alloc_q);
    alloc_quantities_free(a->min_alloc, a->n_min_alloc);
    alloc_names_free(&a->names);
    free((char *)a->opt.region);
    free(a);
}

/* ---- Parsing ------------------------------------------------------------ */

int alloc_parse_min_allocatable(const char *text, struct alloc_quantities **out,
                                uint32_t *n, char *err, size_t errlen)
{
    uint32_t nalt = 1;
    for (const char *p = text; *p; p++)
        nalt += *p == '|';
    struct alloc_quantities *alts = xcalloc(nalt, sizeof(*alts));
    uint32_t got = 0;
    const char *p = text;
    for (;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char *part = xstrndup(p, len);
        res_list l = RES_LIST_INIT;
        char rerr[256];
        if (res_parse_text(part, NULL, &l, rerr, sizeof(rerr)) != 0) {
            snprintf(err, errlen, "min_allocatable_resources: %s", rerr);
            free(part);
            alloc_quantities_free(alts, got);
            return -1;
        }
        free(part);
        struct alloc_quantity *v = xcalloc(l.n ? l.n : 1, sizeof(*v));
        uint32_t k = 0;
        for (uint32_t i = 0; i < l.n; i++) {
            if (l.v[i].type != RES_SCALAR || l.v[i].nresv > 0) {
                snprintf(err, errlen,
                         "min_allocatable_resources: '%s' is not an "
                         "unreserved scalar",
                         l.v[i].name);
                for (uint32_t j = 0; j < k; j++)
                    free((char *)v[j].name);
                free(v);
                res_list_clear(&l);
                alloc_quantities_free(alts, got);
                return -1;
            }
            v[k].name = xstrdup(l.v[i].name);
            v[k].milli = l.v[i].scalar;
            k++;
        }
        res_list_clear(&l);
        if (k > 0) {
            alts[got].v = v;
            alts[got].n = k;
            got++;
        } else {
            free(v);
        }
        if (bar == NULL)
            break;
        p = bar + 1;
    }
    struct alloc_names names;
    alloc_names_init(&names);
    int fits = alloc_names_admit_quantities(&names, alts, got);
    alloc_names_free(&names);
    if (fits != 0) {
        snprintf(err, errlen,
                 "min_allocatable_resources: more than %d distinct names",
                 ALLOC_MAX_NAMES);
        alloc_quantities_free(alts, got);
        return -1;
    }
    *out = alts;
    *n = got;
    return 0;
}
