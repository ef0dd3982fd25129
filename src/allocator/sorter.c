/*
 * The role tree and the DRF orderings the cycle walks.
 *
 * Every role keeps two sorted arrays: `order` (its child roles and its own
 * "self" leaf, by weighted dominant share) and `eligible` (its own eligible
 * clients, by dominant share). Orders are kept sorted incrementally: after
 * one client's allocation changes, the client and each entry on its path to
 * the root move to their new place by binary search and the shorter of two
 * shifts (struct ord), so an allocation costs O(depth * log n) comparisons
 * and usually few moves instead of a re-sort. Only
 * when the cluster total changes (every share changes at once) is the whole
 * tree re-sorted, lazily, before the next use.
 *
 * Entries sort by (blocked, share, count, name, seq): `blocked` entries
 * (roles at their quota limit, see alloc_private.h) go last so that agents
 * without reserved or revocable resources can stop at the first of them;
 * equal shares go to the entry allocated to fewer times, then to the lower
 * name, as Mesos's DRF sorter does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc_private.h"
#include "common/mem.h"

/* ---- Shares ------------------------------------------------------------ */

double alloc_share(const struct alloc *a, const struct qvec *q, double w)
{
    double share = 0.0;
    uint32_t n = q->n < a->total.n ? q->n : a->total.n;
    for (uint32_t i = 0; i < n; i++) {
        int64_t t = a->total.v[i];
        if (t <= 0 || q->v[i] == 0)
            continue;
        double s = (double)q->v[i] / (double)t;
        if (s > share)
            share = s;
    }
    return share / w;
}

/* ---- Sorted arrays of entries ------------------------------------------ */

/* Entries do not store their index: moving one entry from the front of a
 * 1,000-entry order to its back would otherwise rewrite 1,000 indices
 * scattered over memory. An entry is found by binary search on its key
 * (blocked, share, count, name, seq), which is unique because seq is.
 *
 * Ties of share break as in Mesos's DRF sorter (compareDRF in
 * src/master/allocator/mesos/sorter/drf/sorter.hpp): fewer allocations
 * first, then the lower name; seq only separates entries Mesos would
 * also find equal (unnamed frameworks). */

/* A key: the fields of a sentry that order it. */
struct skey {
    bool blocked;
    double share;
    uint64_t count;
    const char *name;
    uint64_t seq;
};

static struct skey key_of(const struct sentry *e)
{
    return (struct skey){e->blocked, e->share, e->count, e->name, e->seq};
}

static int key_cmp(const struct skey *x, const struct sentry *y)
{
    if (x->blocked != y->blocked)
        return x->blocked ? 1 : -1;
    if (x->share < y->share)
        return -1;
    if (x->share > y->share)
        return 1;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    if (x->name != y->name) {
        if (x->name == NULL || y->name == NULL)
            return x->name == NULL ? 1 : -1;
        int c = strcmp(x->name, y->name);
        if (c != 0)
            return c < 0 ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

static int entry_cmp(const struct sentry *x, const struct sentry *y)
{
    struct skey k = key_of(x);
    return key_cmp(&k, y);
}

static int entry_qsort_cmp(const void *x, const void *y)
{
    return entry_cmp(*(struct sentry *const *)x, *(struct sentry *const *)y);
}

/* First index in arr[lo..hi) whose entry is not below the key. */
static uint32_t lower_bound(struct sentry **arr, uint32_t lo, uint32_t hi,
                            const struct skey *k)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_cmp(k, arr[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of e in arr (e must be in it under its current key). */
static uint32_t order_find(struct sentry **arr, uint32_t n,
                           const struct sentry *e)
{
    /* DRF offers to the lowest share: the entry is usually the first. */
    if (n > 0 && arr[0] == e)
        return 0;
    struct skey k = key_of(e);
    uint32_t i = lower_bound(arr, 0, n, &k);
    /* An entry missing from its order is an allocator bug. */
    if (i >= n || arr[i] != e)
        abort();
    return i;
}

/* An order's storage: the live entries (*v, *n) sit inside a buffer of
 * *cap slots with room on both sides, so that moving an entry costs the
 * shorter of two shifts: the entries between its old and new place, or
 * those outside them (the entries before the old place move up one slot
 * into the room behind the front, those after the new place down one into
 * the room past the end). DRF's usual move, the first entry to the back
 * after its offer, then shifts nothing, where one memmove of the whole
 * order (8 KiB for 1,000 frameworks, every offer) was the sorter's main
 * cost. When the side a move needs is full, the entries are re-centred
 * (n moves); the buffer keeps at least n + 2 free slots, so that happens
 * at most once per n / 2 moves. */
struct ord {
    struct sentry ***v;
    uint32_t *n;
    struct sentry ***buf;
    uint32_t *cap;
};

#define ORD(obj, f)                                                            \
    ((struct ord){&(obj)->f, &(obj)->n##f, &(obj)->f##_buf, &(obj)->cap##f})

static uint32_t ord_front_room(struct ord o)
{
    return (uint32_t)(*o.v - *o.buf);
}

static uint32_t ord_back_room(struct ord o)
{
    return *o.cap - ord_front_room(o) - *o.n;
}

/* Put the live entries in the middle of the buffer. */
static void ord_center(struct ord o)
{
    struct sentry **to = *o.buf + (*o.cap - *o.n) / 2;
    memmove(to, *o.v, *o.n * sizeof(**o.v));
    *o.v = to;
}

/* Make sure the buffer has room for one more entry and keeps at least
 * n + 2 free slots. */
static void ord_reserve(struct ord o)
{
    uint32_t n = *o.n;
    if (*o.cap >= 2 * n + 4)
        return;
    uint32_t cap = 4 * n + 8;
    struct sentry **b = xreallocarray(NULL, cap, sizeof(*b));
    uint32_t off = (cap - n) / 2;
    if (n > 0)
        memcpy(b + off, *o.v, n * sizeof(*b));
    free(*o.buf);
    *o.buf = b;
    *o.cap = cap;
    *o.v = b + off;
}

/* Insert e so that it has index i. */
static void ord_insert_at(struct ord o, uint32_t i, struct sentry *e)
{
    ord_reserve(o);
    uint32_t n = *o.n;
    if (i < n - i) {
        if (ord_front_room(o) == 0)
            ord_center(o);
        memmove(*o.v - 1, *o.v, i * sizeof(**o.v));
        (*o.v)--;
    } else {
        if (ord_back_room(o) == 0)
            ord_center(o);
        memmove(*o.v + i + 1, *o.v + i, (n - i) * sizeof(**o.v));
    }
    (*o.v)[i] = e;
    (*o.n)++;
}

/* Remove the entry at index i. */
static void ord_remove_at(struct ord o, uint32_t i)
{
    uint32_t n = *o.n;
    if (i < n - 1 - i) {
        memmove(*o.v + 1, *o.v, i * sizeof(**o.v));
        (*o.v)++;
    } else {
        memmove(*o.v + i, *o.v + i + 1, (n - 1 - i) * sizeof(**o.v));
    }
    (*o.n)--;
}

/* Move the entry at index p so that it has index q, the others keeping
 * their relative order. */
static void ord_move(struct ord o, uint32_t p, uint32_t q)
{
    uint32_t n = *o.n;
    struct sentry *e = (*o.v)[p];
    if (p == q)
        return;
    if (p < q) {
        /* Inside: (p, q] down one. Outside: [0, p) up one, then [q, n - 1)
         * of the shortened order up one, into a slot past the end. */
        if (q - p <= p + (n - 1 - q)) {
            memmove(*o.v + p, *o.v + p + 1, (q - p) * sizeof(**o.v));
        } else {
            if (ord_back_room(o) == 0)
                ord_center(o);
            memmove(*o.v + 1, *o.v, p * sizeof(**o.v));
            (*o.v)++;
            memmove(*o.v + q + 1, *o.v + q, (n - 1 - q) * sizeof(**o.v));
        }
    } else {
        /* Inside: [q, p) up one. Outside: (p, n) down one, then [0, q)
         * down one, into a slot before the front. */
        if (p - q <= q + (n - 1 - p)) {
            memmove(*o.v + q + 1, *o.v + q, (p - q) * sizeof(**o.v));
        } else {
            if (ord_front_room(o) == 0)
                ord_center(o);
            memmove(*o.v + p, *o.v + p + 1, (n - 1 - p) * sizeof(**o.v));
            memmove(*o.v - 1, *o.v, q * sizeof(**o.v));
            (*o.v)--;
        }
    }
    (*o.v)[q] = e;
}

static void order_insert(struct ord o, struct sentry *e)
{
    struct skey k = key_of(e);
    ord_insert_at(o, lower_bound(*o.v, 0, *o.n, &k), e);
    e->in_order = true;
}

static void order_remove(struct ord o, struct sentry *e)
{
    ord_remove_at(o, order_find(*o.v, *o.n, e));
    e->in_order = false;
}

/* Give e (in o) a new key (blocked, share, count) and move it to its
 * place. */
static void order_rekey(struct ord o, struct sentry *e, bool blocked,
                        double share, uint64_t count)
{
    if (e->blocked == blocked && e->share == share && e->count == count)
        return;
    struct sentry **arr = *o.v;
    uint32_t n = *o.n;
    uint32_t p = order_find(arr, n, e);
    struct skey k = {blocked, share, count, e->name, e->seq};
    int dir = key_cmp(&k, e);
    e->blocked = blocked;
    e->share = share;
    e->count = count;
    if (dir < 0) {
        ord_move(o, p, lower_bound(arr, 0, p, &k));
    } else {
        /* The last index in (p, n) whose entry is below the new key; often
         * the end, when the offer lifted it above everyone. */
        uint32_t j = key_cmp(&k, arr[n - 1]) > 0
                         ? n - 1
                         : lower_bound(arr, p + 1, n, &k) - 1;
        ord_move(o, p, j);
    }
}

/* Re-key e in arr when it is there, else just store the key. */
static void rekey(struct ord o, struct sentry *e, bool blocked, double share,
                  uint64_t count)
{
    if (e->in_order) {
        order_rekey(o, e, blocked, share, count);
    } else {
        e->blocked = blocked;
        e->share = share;
        e->count = count;
    }
}

/* Refresh the keys of r's three entries (in its parent's order, its self
 * leaf in its own order, its place among unsatisfied roles). */
static void rekey_role(struct alloc *a, struct role *r)
{
    bool b = r->limit_blocked;
    double child = alloc_share(a, &r->held, r->weight);
    if (r->parent != NULL)
        rekey(ORD(r->parent, order), &r->as_child, b, child, r->nalloc);
    rekey(ORD(r, order), &r->self, b, alloc_share(a, &r->held_self, r->weight),
          r->nalloc_self);
    rekey(ORD(a, unsatisfied), &r->quota_e, false, child, r->nalloc);
}

/* ---- Role tree ---------------------------------------------------------- */

static void rtab_put(struct alloc *a, struct role *r)
{
    uint32_t mask = a->nrtab - 1;
    uint32_t i = alloc_str_hash(&a->names.key, r->path) & mask;
    while (a->rtab[i] != NULL)
        i = (i + 1) & mask;
    a->rtab[i] = r;
}

static void rtab_rebuild(struct alloc *a, uint32_t nrtab)
{
    free(a->rtab);
    a->nrtab = nrtab;
    a->rtab = xcalloc(nrtab, sizeof(*a->rtab));
    for (uint32_t i = 0; i < a->nroles; i++)
        rtab_put(a, a->roles[i]);
}

struct role *alloc_role_find(struct alloc *a, const char *path)
{
    if (path[0] == '\0')
        return a->root;
    if (a->nrtab == 0)
        return NULL;
    uint32_t mask = a->nrtab - 1;
    for (uint32_t i = alloc_str_hash(&a->names.key, path) & mask;;
         i = (i + 1) & mask) {
        struct role *r = a->rtab[i];
        if (r == NULL)
            return NULL;
        if (strcmp(r->path, path) == 0)
            return r;
    }
}

static struct role *role_new(struct alloc *a, const char *path,
                             struct role *parent)
{
    struct role *r = xcalloc(1, sizeof(*r));
    r->path = xstrdup(path);
    r->self_name = xasprintf("%s/.", path);
    r->parent = parent;
    r->quota_e.name = r->path;
    r->as_child.name = r->path;
    r->self.name = r->self_name;
    r->weight = 1.0;
    r->quota_e.owner = r;
    r->quota_e.seq = a->seq++;
    r->as_child.owner = r;
    r->as_child.seq = a->seq++;
    r->self.owner = r;
    r->self.is_self = true;
    r->self.seq = a->seq++;
    if (parent != NULL) {
        if (parent->nchildren == parent->capchildren) {
            parent->capchildren =
                parent->capchildren ? 2 * parent->capchildren : 4;
            parent->children = xreallocarray(parent->children,
                                             parent->capchildren, sizeof(*r));
        }
        parent->children[parent->nchildren++] = r;
        if (a->nroles == a->caproles) {
            a->caproles = a->caproles ? 2 * a->caproles : 16;
            a->roles = xreallocarray(a->roles, a->caproles, sizeof(*r));
        }
        a->roles[a->nroles++] = r;
        if (2 * a->nroles >= a->nrtab)
            rtab_rebuild(a, a->nrtab ? 2 * a->nrtab : 64);
        else
            rtab_put(a, r);
    }
    return r;
}

struct role *alloc_role_get(struct alloc *a, const char *path)
{
    struct role *r = alloc_role_find(a, path);
    if (r != NULL)
        return r;
    /* Create the parent first ("a/b/c" needs "a/b"). */
    const char *slash = strrchr(path, '/');
    struct role *parent = a->root;
    if (slash != NULL) {
        char *ppath = xstrndup(path, (size_t)(slash - path));
        parent = alloc_role_get(a, ppath);
        free(ppath);
    }
    return role_new(a, path, parent);
}

int64_t alloc_role_consumed(const struct role *r, uint32_t id)
{
    return qvec_get(&r->reserved, id) + qvec_get(&r->unres_held, id);
}

static bool role_is_unused(const struct role *r)
{
    return r->nchildren == 0 && r->nclients == 0 && !r->has_weight &&
           !r->has_quota && qvec_is_zero(&r->held) &&
           qvec_is_zero(&r->reserved);
}

static void role_destroy(struct alloc *a, struct role *r)
{
    a->flat_dirty = true;
    struct role *p = r->parent;
    for (uint32_t i = 0; i < p->nchildren; i++) {
        if (p->children[i] == r) {
            p->children[i] = p->children[--p->nchildren];
            break;
        }
    }
    for (uint32_t i = 0; i < a->nroles; i++) {
        if (a->roles[i] == r) {
            a->roles[i] = a->roles[--a->nroles];
            break;
        }
    }
    rtab_rebuild(a, a->nrtab);
    alloc_role_tree_free(r);
}

void alloc_role_tree_free(struct role *r)
{
    for (uint32_t i = 0; i < r->nchildren; i++)
        alloc_role_tree_free(r->children[i]);
    free(r->path);
    free(r->self_name);
    free(r->children);
    free(r->order_buf);
    free(r->clients);
    free(r->eligible_buf);
    free(r->limits);
    free(r->rnd_clients.v);
    free(r->rnd_clients.key);
    qvec_free(&r->guarantee);
    qvec_free(&r->held_self);
    qvec_free(&r->held);
    qvec_free(&r->reserved);
    qvec_free(&r->unres_held);
    free(r);
}

void alloc_role_try_remove(struct alloc *a, struct role *r)
{
    while (r != NULL && r != a->root && role_is_unused(r)) {
        struct role *parent = r->parent;
        role_destroy(a, r);
        r = parent;
    }
}

/* ---- Keeping the orders ------------------------------------------------- */

void alloc_sorter_allocated(struct alloc *a, struct client *c)
{
    c->nalloc++;
    c->role->nalloc_self++;
    for (struct role *x = c->role; x != NULL && x != a->root; x = x->parent)
        x->nalloc++;
}

void alloc_sorter_update(struct alloc *a, struct client *c)
{
    if (a->shares_dirty)
        return;
    struct role *r = c->role;
    rekey(ORD(r, eligible), &c->e, false, alloc_share(a, &c->held, 1.0),
          c->nalloc);
    for (struct role *x = r; x != NULL && x != a->root; x = x->parent)
        rekey_role(a, x);
}

void alloc_sorter_role_changed(struct alloc *a, struct role *r)
{
    if (a->shares_dirty)
        return;
    rekey_role(a, r);
}

void alloc_sorter_set_unsatisfied(struct alloc *a, struct role *r, bool in)
{
    if (in == r->quota_e.in_order)
        return;
    if (in) {
        r->quota_e.share = alloc_share(a, &r->held, r->weight);
        r->quota_e.count = r->nalloc;
        order_insert(ORD(a, unsatisfied), &r->quota_e);
    } else {
        order_remove(ORD(a, unsatisfied), &r->quota_e);
    }
    for (struct role *x = r; x != NULL; x = x->parent)
        x->unsat_below += in ? 1 : (uint32_t)-1;
}

void alloc_sorter_set_eligible(struct alloc *a, struct client *c, bool eligible)
{
    struct role *r = c->role;
    if (eligible) {
        c->e.share = alloc_share(a, &c->held, 1.0);
        c->e.count = c->nalloc;
        c->e.name = c->fw->id;
        order_insert(ORD(r, eligible), &c->e);
        if (r->neligible == 1) {
            r->self.share = alloc_share(a, &r->held_self, r->weight);
            r->self.blocked = r->limit_blocked;
            r->self.count = r->nalloc_self;
            order_insert(ORD(r, order), &r->self);
        }
        for (struct role *x = r; x->parent != NULL; x = x->parent) {
            if (x->eligible_below++ > 0)
                continue;
            x->as_child.share = alloc_share(a, &x->held, x->weight);
            x->as_child.blocked = x->limit_blocked;
            x->as_child.count = x->nalloc;
            order_insert(ORD(x->parent, order), &x->as_child);
        }
    } else {
        order_remove(ORD(r, eligible), &c->e);
        if (r->neligible == 0)
            order_remove(ORD(r, order), &r->self);
        for (struct role *x = r; x->parent != NULL; x = x->parent) {
            if (--x->eligible_below > 0)
                continue;
            order_remove(ORD(x->parent, order), &x->as_child);
        }
    }
}

/* Recompute every key below r and sort every order there. */
static void rebuild_role(struct alloc *a, struct role *r)
{
    for (uint32_t i = 0; i < r->neligible; i++) {
        struct client *c = r->eligible[i]->client;
        c->e.share = alloc_share(a, &c->held, 1.0);
        c->e.count = c->nalloc;
    }
    if (r->neligible > 1)
        qsort(r->eligible, r->neligible, sizeof(*r->eligible), entry_qsort_cmp);
    for (uint32_t i = 0; i < r->nchildren; i++)
        rebuild_role(a, r->children[i]);
    r->as_child.share = alloc_share(a, &r->held, r->weight);
    r->as_child.blocked = r->limit_blocked;
    r->self.share = alloc_share(a, &r->held_self, r->weight);
    r->self.blocked = r->limit_blocked;
    r->as_child.count = r->nalloc;
    r->self.count = r->nalloc_self;
    r->quota_e.share = r->as_child.share;
    r->quota_e.count = r->nalloc;
    if (r->norder > 1)
        qsort(r->order, r->norder, sizeof(*r->order), entry_qsort_cmp);
}

void alloc_sorter_rebuild(struct alloc *a)
{
    a->shares_dirty = false;
    rebuild_role(a, a->root);
    if (a->nunsatisfied > 1)
        qsort(a->unsatisfied, a->nunsatisfied, sizeof(*a->unsatisfied),
              entry_qsort_cmp);
}

/* ---- Random sorter --------------------------------------------------------
 */

/* Mesos's RandomSorter (src/master/allocator/mesos/sorter/random) shuffles
 * with keys U^(1/w), largest first (Efraimidis and Spirakis): the same keys
 * here, as log(U)/w, but kept in a heap and drawn one at a time, since a
 * walk usually stops at the first entry that takes the agent. */

static void heap_swap(struct rnd_walk *w, uint32_t i, uint32_t j)
{
    struct sentry *e = w->v[i];
    w->v[i] = w->v[j];
    w->v[j] = e;
    double k = w->key[i];
    w->key[i] = w->key[j];
    w->key[j] = k;
}

static void heap_down(struct rnd_walk *w, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < w->n && w->key[l] > w->key[m])
            m = l;
        if (r < w->n && w->key[r] > w->key[m])
            m = r;
        if (m == i)
            return;
        heap_swap(w, i, m);
        i = m;
    }
}

/* Room for n entries in w. */
static void rnd_reserve(struct rnd_walk *w, uint32_t n)
{
    if (n > w->cap) {
        w->cap = n;
        w->v = xreallocarray(w->v, n, sizeof(*w->v));
        w->key = xreallocarray(w->key, n, sizeof(*w->key));
    }
}

/* Entry e into slot w->n with a fresh key for weight (> 0). */
static void rnd_put(struct alloc *a, struct rnd_walk *w, struct sentry *e,
                    double weight, bool blocked)
{
    /* U in (0, 1): 53 random bits, never 0. */
    double u = ((double)(alloc_rng_next(a) >> 11) + 0.5) * 0x1p-53;
    double key = log(u) / weight; /* (-inf, 0) */
    /* Entries at their quota limit come after every other. */
    w->key[w->n] = blocked ? key - 1e300 : key;
    w->v[w->n++] = e;
}

static void rnd_heapify(struct rnd_walk *w)
{
    for (uint32_t i = w->n / 2; i-- > 0;)
        heap_down(w, i);
}

void alloc_rnd_begin(struct alloc *a, struct rnd_walk *w, struct sentry **arr,
                     uint32_t n)
{
    rnd_reserve(w, n);
    w->n = 0;
    for (uint32_t i = 0; i < n; i++)
        rnd_put(a, w, arr[i], 1.0, arr[i]->blocked);
    rnd_heapify(w);
}

/* ---- The random role sorter's flattened tree ------------------------------
 * Mesos's RandomSorter does not shuffle level by level: it gives every
 * active leaf (a role with a framework; a role with frameworks and child
 * roles has a virtual "." leaf weighing 1 beside its children) a weight
 * relative to the whole tree,
 *
 *   Rw(node) = Rw(parent) * weight(node) / (sum of the weights of node and
 *                                            its active siblings),
 *
 * and shuffles all leaves together by those weights, so one subtree's
 * leaves may come between another's. An internal node is active when a
 * leaf below it is. The relative weights change only with the tree, so
 * they are kept (a->flat) and recomputed when a client, a role or a weight
 * changed (a->flat_dirty), as Mesos's SortInfo caches them. */

static bool subtree_has_clients(const struct role *r)
{
    if (r->nclients > 0)
        return true;
    for (uint32_t i = 0; i < r->nchildren; i++)
        if (subtree_has_clients(r->children[i]))
            return true;
    return false;
}

static void flat_push(struct alloc *a, struct role *r, double rel)
{
    if (a->nflat == a->capflat) {
        a->capflat = a->capflat ? 2 * a->capflat : 16;
        a->flat = xreallocarray(a->flat, a->capflat, sizeof(*a->flat));
    }
    a->flat[a->nflat].role = r;
    a->flat[a->nflat].rel_weight = rel;
    a->nflat++;
    r->flat_weight = rel;
}

/* Push r's leaves; rel is r's relative weight. */
static void flat_build(struct alloc *a, struct role *r, double rel)
{
    double total = r->nclients > 0 ? 1.0 : 0.0; /* the "." leaf */
    uint32_t active = 0;
    for (uint32_t i = 0; i < r->nchildren; i++) {
        if (subtree_has_clients(r->children[i])) {
            total += r->children[i]->weight;
            active++;
        }
    }
    if (active == 0) {
        /* A leaf: r itself, weighing what its parent gave it. */
        if (r->nclients > 0 && r != a->root)
            flat_push(a, r, rel);
        return;
    }
    if (r->nclients > 0 && r != a->root)
        flat_push(a, r, rel / total);
    for (uint32_t i = 0; i < r->nchildren; i++) {
        struct role *c = r->children[i];
        if (subtree_has_clients(c))
            flat_build(a, c, rel * c->weight / total);
    }
}

bool alloc_role_path_blocked(const struct alloc *a, const struct role *r)
{
    for (; r != NULL && r != a->root; r = r->parent)
        if (r->limit_blocked)
            return true;
    return false;
}

void alloc_rnd_roles_begin(struct alloc *a, bool stage1, bool skip_blocked)
{
    if (a->flat_dirty) {
        a->nflat = 0;
        flat_build(a, a->root, 1.0);
        a->flat_dirty = false;
    }
    struct rnd_walk *w = &a->flat_walk;
    rnd_reserve(w, a->nflat);
    w->n = 0;
    if (stage1) {
        /* Only roles with an unmet guarantee and eligible clients: those
         * in a->unsatisfied, usually far fewer than all leaves. Every one
         * has a client, so it is a leaf with its weight set. */
        for (uint32_t i = 0; i < a->nunsatisfied; i++) {
            struct role *r = a->unsatisfied[i]->owner;
            rnd_put(a, w, &r->self, r->flat_weight,
                    alloc_role_path_blocked(a, r));
        }
    } else {
        for (uint32_t i = 0; i < a->nflat; i++) {
            struct role *r = a->flat[i].role;
            if (r->neligible == 0)
                continue;
            bool blocked = alloc_role_path_blocked(a, r);
            if (!blocked || !skip_blocked)
                rnd_put(a, w, &r->self, a->flat[i].rel_weight, blocked);
        }
    }
    rnd_heapify(w);
}

struct sentry *alloc_rnd_next(struct rnd_walk *w)
{
    if (w->n == 0)
        return NULL;
    struct sentry *top = w->v[0];
    w->n--;
    if (w->n > 0) {
        w->v[0] = w->v[w->n];
        w->key[0] = w->key[w->n];
        heap_down(w, 0);
    }
    return top;
}
