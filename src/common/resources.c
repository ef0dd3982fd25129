/*
 * Resources: the arithmetic, parsing, validation and rendering of offerd's
 * native resource model (see resources.h for the contract).
 *
 * The rules follow Mesos's Resources class (src/common/resources.cpp and
 * src/common/values.cpp in apache/mesos):
 *  - identity compares name, type, reservation stack, disk (source and
 *    persistence id; the volume and the persistence principal describe how a
 *    disk is used, not what it is, and are ignored as Mesos ignores them),
 *    revocable, shared, allocation role and provider;
 *  - persistent volumes, MOUNT and BLOCK disks and RAW disks with a source id
 *    are atomic: never merged, only taken away whole;
 *  - shared resources merge only with an equal resource, by count.
 *
 * Every list keeps ranges sorted and coalesced and set items sorted, so that
 * union, difference and subset are linear merges. The hot paths (add into an
 * existing entry, subtract, contains, equal, identity) allocate nothing for
 * scalars and nothing for ranges unless the number of ranges changes.
 */
#include "common/resources.h"

#include "common/errbuf.h"
#include "common/mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranges merged on the stack before being copied back into a resource; more
 * than this many take a heap buffer. */
#define RANGES_STACK 32

/* How much of a user's token to quote in an error reason. */
#define QUOTE_MAX 64

static bool str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return a == b || strcmp(a, b) == 0;
}

/* ---- Lifetime ------------------------------------------------------- */

void res_list_init(res_list *l)
{
    l->v = NULL;
    l->n = 0;
    l->cap = 0;
}

void res_list_clear(res_list *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        res_clear(&l->v[i]);
    free(l->v);
    res_list_init(l);
}

static void list_reserve(res_list *l, uint32_t want)
{
    if (want <= l->cap)
        return;
    uint32_t cap = l->cap ? l->cap : 4;
    while (cap < want)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    l->v = xreallocarray(l->v, cap, sizeof(*l->v));
    l->cap = cap;
}

/* Append *r by value: the list takes over what r owns. */
static void list_push_move(res_list *l, struct resource *r)
{
    list_reserve(l, l->n + 1);
    l->v[l->n++] = *r;
    memset(r, 0, sizeof(*r));
}

static void list_remove_at(res_list *l, uint32_t i)
{
    res_clear(&l->v[i]);
    memmove(&l->v[i], &l->v[i + 1], (size_t)(l->n - i - 1) * sizeof(*l->v));
    l->n--;
}

void res_list_copy(res_list *dst, const res_list *src)
{
    if (dst == src)
        return;
    res_list_clear(dst);
    if (src->n == 0)
        return;
    /* Exactly src->n: most copies are never added to (an agent's totals,
     * a task's resources), and list_reserve's minimum of 4 entries would
     * double a two-resource list. A copy that grows doubles from n. */
    dst->v = xreallocarray(NULL, src->n, sizeof(*dst->v));
    dst->cap = src->n;
    for (uint32_t i = 0; i < src->n; i++)
        res_copy(&dst->v[i], &src->v[i]);
    dst->n = src->n;
}

void res_list_copy_allocated(res_list *dst, const res_list *src,
                             const char *role)
{
    bool plain = true;
    for (uint32_t i = 0; i < src->n && plain; i++)
        plain = src->v[i].alloc_role == NULL;
    if (!plain || role == NULL) {
        res_list_copy(dst, src);
        res_list_allocate(dst, role);
        return;
    }
    /* A res_list keeps addable entries merged, and entries that all lack
     * an allocation role differ in something else: giving them all the
     * same role merges none. */
    res_list_clear(dst);
    if (src->n == 0)
        return;
    list_reserve(dst, src->n);
    for (uint32_t i = 0; i < src->n; i++) {
        res_copy(&dst->v[i], &src->v[i]);
        dst->v[i].alloc_role = xstrdup(role);
    }
    dst->n = src->n;
}

/* ---- Packed copies: one block holds the array and every string ------- */

/* Sizes are rounded up to 8 so that every piece stays aligned for the
 * structs that follow it in the block. */
static size_t pk_round(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t pk_str_size(const char *s)
{
    return s != NULL ? pk_round(strlen(s) + 1) : 0;
}

struct pk_bump {
    char *p; /* next free byte of the block */
};

static void *pk_take(struct pk_bump *b, size_t n)
{
    void *r = b->p;
    b->p += pk_round(n);
    return r;
}

static char *pk_str(struct pk_bump *b, const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = pk_take(b, n);
    memcpy(d, s, n);
    return d;
}

/* s (strlen(s) + 1 == n) into the block. */
static char *pk_strn(struct pk_bump *b, const char *s, size_t n)
{
    char *d = pk_take(b, n);
    memcpy(d, s, n);
    return d;
}

/* Bytes entry r needs in a block, its allocation role and its name left
 * out. */
static size_t pk_entry_size(const struct resource *r)
{
    size_t n = pk_str_size(r->provider_id) +
               pk_round((size_t)r->nranges * sizeof(*r->ranges)) +
               pk_round((size_t)r->nitems * sizeof(*r->items)) +
               pk_round((size_t)r->nresv * sizeof(*r->resv));
    for (uint32_t i = 0; i < r->nitems; i++)
        n += pk_str_size(r->items[i]);
    for (uint32_t i = 0; i < r->nresv; i++) {
        const struct res_reservation *v = &r->resv[i];
        n += pk_str_size(v->role) + pk_str_size(v->principal) +
             pk_round((size_t)v->nlabels * sizeof(*v->labels));
        for (uint32_t j = 0; j < v->nlabels; j++)
            n +=
                pk_str_size(v->labels[j].key) + pk_str_size(v->labels[j].value);
    }
    if (r->disk != NULL) {
        const struct res_disk *d = r->disk;
        n += pk_round(sizeof(*d)) + pk_str_size(d->persistence_id) +
             pk_str_size(d->persistence_principal) +
             pk_str_size(d->container_path) + pk_str_size(d->host_path) +
             pk_str_size(d->source_root) + pk_str_size(d->source_id) +
             pk_str_size(d->source_profile);
    }
    return n;
}

/* Copy *s into *d with every pointer into the block; alloc_role is set by
 * the caller. namelen: strlen(s->name) + 1. */
static void pk_entry(struct pk_bump *b, struct resource *d,
                     const struct resource *s, size_t namelen)
{
    *d = *s;
    d->name = pk_strn(b, s->name, namelen);
    d->provider_id = pk_str(b, s->provider_id);
    d->ranges = NULL;
    if (s->nranges > 0) {
        d->ranges = pk_take(b, (size_t)s->nranges * sizeof(*s->ranges));
        memcpy(d->ranges, s->ranges, (size_t)s->nranges * sizeof(*s->ranges));
    }
    d->items = NULL;
    if (s->nitems > 0) {
        d->items = pk_take(b, (size_t)s->nitems * sizeof(*s->items));
        for (uint32_t i = 0; i < s->nitems; i++)
            d->items[i] = pk_str(b, s->items[i]);
    }
    d->resv = NULL;
    if (s->nresv > 0) {
        d->resv = pk_take(b, (size_t)s->nresv * sizeof(*s->resv));
        for (uint32_t i = 0; i < s->nresv; i++) {
            const struct res_reservation *sv = &s->resv[i];
            struct res_reservation *dv = &d->resv[i];
            *dv = *sv;
            dv->role = pk_str(b, sv->role);
            dv->principal = pk_str(b, sv->principal);
            dv->labels = NULL;
            if (sv->nlabels > 0) {
                dv->labels =
                    pk_take(b, (size_t)sv->nlabels * sizeof(*sv->labels));
                for (uint32_t j = 0; j < sv->nlabels; j++) {
                    dv->labels[j].key = pk_str(b, sv->labels[j].key);
                    dv->labels[j].value = pk_str(b, sv->labels[j].value);
                }
            }
        }
    }
    d->disk = NULL;
    if (s->disk != NULL) {
        const struct res_disk *sd = s->disk;
        struct res_disk *dd = pk_take(b, sizeof(*dd));
        *dd = *sd;
        dd->persistence_id = pk_str(b, sd->persistence_id);
        dd->persistence_principal = pk_str(b, sd->persistence_principal);
        dd->container_path = pk_str(b, sd->container_path);
        dd->host_path = pk_str(b, sd->host_path);
        dd->source_root = pk_str(b, sd->source_root);
        dd->source_id = pk_str(b, sd->source_id);
        dd->source_profile = pk_str(b, sd->source_profile);
        d->disk = dd;
    }
}

/* Pack l's entries into one block, each with allocation role `role` (one
 * copy in the block, shared). */
static void pk_pack(res_list *dst, const res_list *l, const char *role)
{
    res_list_init(dst);
    if (l->n == 0)
        return;
    /* The names' lengths, measured once for the size and the copy (an
     * offer's list is short: longer ones measure the rest twice). */
    enum { PK_LENS = 16 };
    size_t lens[PK_LENS];
    size_t size = pk_round((size_t)l->n * sizeof(*l->v)) + pk_str_size(role);
    for (uint32_t i = 0; i < l->n; i++) {
        size_t nl = strlen(l->v[i].name) + 1;
        if (i < PK_LENS)
            lens[i] = nl;
        size += pk_round(nl) + pk_entry_size(&l->v[i]);
    }
    struct pk_bump b = {xmalloc(size)};
    dst->v = pk_take(&b, (size_t)l->n * sizeof(*l->v));
    char *r = pk_str(&b, role);
    for (uint32_t i = 0; i < l->n; i++) {
        pk_entry(&b, &dst->v[i], &l->v[i],
                 i < PK_LENS ? lens[i] : strlen(l->v[i].name) + 1);
        dst->v[i].alloc_role = r;
    }
    dst->n = dst->cap = l->n;
}

void res_list_copy_packed(res_list *dst, const res_list *src, const char *role)
{
    bool plain = true;
    for (uint32_t i = 0; i < src->n && plain; i++)
        plain = src->v[i].alloc_role == NULL;
    if (plain) {
        /* Entries without allocation roles that all get the same one merge
         * with none (see res_list_copy_allocated). */
        pk_pack(dst, src, role);
        return;
    }
    /* Entries may merge under the new role: merge first, then pack. */
    res_list merged = RES_LIST_INIT;
    res_list_copy_allocated(&merged, src, role);
    pk_pack(dst, &merged, role);
    res_list_clear(&merged);
}

void res_list_free_packed(res_list *l)
{
    free(l->v);
    res_list_init(l);
}

static void labels_free(struct res_label *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

static struct res_label *labels_dup(const struct res_label *v, uint32_t n)
{
    if (n == 0)
        return NULL;
    struct res_label *out = xcalloc(n, sizeof(*out));
    for (uint32_t i = 0; i < n; i++) {
        out[i].key = xstrdup(v[i].key);
        out[i].value = xstrdup(v[i].value);
    }
    return out;
}

static void disk_free(struct res_disk *d)
{
    if (d == NULL)
        return;
    free(d->persistence_id);
    free(d->persistence_principal);
    free(d->container_path);
    free(d->host_path);
    free(d->source_root);
    free(d->source_id);
    free(d->source_profile);
    free(d);
}

static struct res_disk *disk_dup(const struct res_disk *d)
{
    if (d == NULL)
        return NULL;
    struct res_disk *out = xmalloc(sizeof(*out));
    *out = *d;
    out->persistence_id = xstrdup(d->persistence_id);
    out->persistence_principal = xstrdup(d->persistence_principal);
    out->container_path = xstrdup(d->container_path);
    out->host_path = xstrdup(d->host_path);
    out->source_root = xstrdup(d->source_root);
    out->source_id = xstrdup(d->source_id);
    out->source_profile = xstrdup(d->source_profile);
    return out;
}

static void items_free(char **items, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

static void resv_free(struct res_reservation *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(v[i].role);
        free(v[i].principal);
        labels_free(v[i].labels, v[i].nlabels);
    }
    free(v);
}

void res_clear(struct resource *r)
{
    free(r->name);
    free(r->ranges);
    items_free(r->items, r->nitems);
    resv_free(r->resv, r->nresv);
    disk_free(r->disk);
    free(r->alloc_role);
    free(r->provider_id);
    memset(r, 0, sizeof(*r));
}

void res_copy(struct resource *dst, const struct resource *src)
{
    *dst = *src;
    dst->name = xstrdup(src->name);
    dst->ranges =
        src->nranges ? xmemdup(src->ranges, src->nranges * sizeof(*src->ranges))
                     : NULL;
    dst->items = NULL;
    if (src->nitems) {
        dst->items = xcalloc(src->nitems, sizeof(*dst->items));
        for (uint32_t i = 0; i < src->nitems; i++)
            dst->items[i] = xstrdup(src->items[i]);
    }
    dst->resv = NULL;
    if (src->nresv) {
        dst->resv = xcalloc(src->nresv, sizeof(*dst->resv));
        for (uint32_t i = 0; i < src->nresv; i++) {
            const struct res_reservation *s = &src->resv[i];
            dst->resv[i].type = s->type;
            dst->resv[i].role = xstrdup(s->role);
            dst->resv[i].principal = xstrdup(s->principal);
            dst->resv[i].labels = labels_dup(s->labels, s->nlabels);
            dst->resv[i].nlabels = s->nlabels;
        }
    }
    dst->disk = disk_dup(src->disk);
    dst->alloc_role = xstrdup(src->alloc_role);
    dst->provider_id = xstrdup(src->provider_id);
}

/* ---- Ranges helpers -------------------------------------------------- */

static int range_cmp(const void *pa, const void *pb)
{
    const struct res_range *a = pa, *b = pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return 0;
}

/* True when `next` (begin >= last.begin) overlaps or touches `last`. */
static bool range_joins(const struct res_range *last,
                        const struct res_range *next)
{
    return last->end == UINT64_MAX || next->begin <= last->end + 1;
}

uint32_t res_ranges_normalize(struct res_range *v, uint32_t n)
{
    /* Inverted ranges cover nothing; drop them rather than let one swallow
     * its neighbours when coalescing. Validation reports them as errors
     * before anything reaches here from outside. */
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (v[i].begin <= v[i].end)
            v[m++] = v[i];
    if (m < 2)
        return m;
    qsort(v, m, sizeof(*v), range_cmp);
    uint32_t out = 0;
    for (uint32_t i = 1; i < m; i++) {
        if (range_joins(&v[out], &v[i])) {
            if (v[i].end > v[out].end)
                v[out].end = v[i].end;
        } else {
            v[++out] = v[i];
        }
    }
    return out + 1;
}

bool res_ranges_contains(const struct res_range *a, uint32_t na,
                         const struct res_range *b, uint32_t nb)
{
    uint32_t i = 0;
    for (uint32_t j = 0; j < nb; j++) {
        while (i < na && a[i].end < b[j].begin)
            i++;
        if (i == na || a[i].begin > b[j].begin || a[i].end < b[j].end)
            return false;
    }
    return true;
}

uint64_t res_ranges_count(const struct res_range *v, uint32_t n)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].begin > v[i].end)
            continue;
        uint64_t span = v[i].end - v[i].begin;
        /* span + 1 and the sum both saturate: [0, UINT64_MAX] has 2^64
         * values, one more than a uint64_t holds. */
        if (span == UINT64_MAX || total > UINT64_MAX - (span + 1))
            return UINT64_MAX;
        total += span + 1;
    }
    return total;
}

/* out (room for na + nb) = a ∪ b; a and b sorted and coalesced. */
static uint32_t ranges_union(const struct res_range *a, uint32_t na,
                             const struct res_range *b, uint32_t nb,
                             struct res_range *out)
{
    uint32_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        struct res_range next;
        if (j >= nb || (i < na && a[i].begin <= b[j].begin))
            next = a[i++];
        else
            next = b[j++];
        if (n > 0 && range_joins(&out[n - 1], &next)) {
            if (next.end > out[n - 1].end)
                out[n - 1].end = next.end;
        } else {
            out[n++] = next;
        }
    }
    return n;
}

/* out (room for na + nb) = a \ b; a and b sorted and coalesced. */
static uint32_t ranges_diff(const struct res_range *a, uint32_t na,
                            const struct res_range *b, uint32_t nb,
                            struct res_range *out)
{
    uint32_t n = 0, j = 0;
    for (uint32_t i = 0; i < na; i++) {
        uint64_t lo = a[i].begin, hi = a[i].end;
        bool alive = true;
        while (j < nb && b[j].end < lo)
            j++;
        for (uint32_t k = j; alive && k < nb && b[k].begin <= hi; k++) {
            if (b[k].begin > lo)
                out[n++] = (struct res_range){lo, b[k].begin - 1};
            if (b[k].end >= hi)
                alive = false;
            else
                lo = b[k].end + 1;
        }
        if (alive)
            out[n++] = (struct res_range){lo, hi};
    }
    return n;
}

static void ranges_assign(struct resource *e, const struct res_range *v,
                          uint32_t n)
{
    if (n == 0) {
        free(e->ranges);
        e->ranges = NULL;
    } else {
        if (n != e->nranges)
            e->ranges = xreallocarray(e->ranges, n, sizeof(*e->ranges));
        memcpy(e->ranges, v, n * sizeof(*v));
    }
    e->nranges = n;
}

/* e's ranges op= b, op being union (add) or difference. */
static void ranges_apply(struct resource *e, const struct res_range *b,
                         uint32_t nb, bool add)
{
    if (nb == 0 || (!add && e->nranges == 0))
        return;
    if (add && res_ranges_contains(e->ranges, e->nranges, b, nb))
        return;
    size_t total = (size_t)e->nranges + nb;
    struct res_range stack[RANGES_STACK];
    struct res_range *buf =
        total <= RANGES_STACK ? stack : xcalloc(total, sizeof(*buf));
    uint32_t n = add ? ranges_union(e->ranges, e->nranges, b, nb, buf)
                     : ranges_diff(e->ranges, e->nranges, b, nb, buf);
    ranges_assign(e, buf, n);
    if (buf != stack)
        free(buf);
}

/* ---- Set helpers (sorted, unique) ------------------------------------- */

static bool items_subset(char *const *a, uint32_t na, char *const *b,
                         uint32_t nb)
{
    /* true when every item of b is in a */
    uint32_t i = 0;
    for (uint32_t j = 0; j < nb; j++) {
        int c = 1;
        while (i < na && (c = strcmp(a[i], b[j])) < 0)
            i++;
        if (i == na || c != 0)
            return false;
        i++;
    }
    return true;
}

static void items_add(struct resource *e, char *const *b, uint32_t nb)
{
    uint32_t na = e->nitems, fresh = 0;
    for (uint32_t i = 0, j = 0; j < nb;) {
        int c = i < na ? strcmp(e->items[i], b[j]) : 1;
        if (c < 0) {
            i++;
        } else if (c == 0) {
            i++;
            j++;
        } else {
            fresh++;
            j++;
        }
    }
    if (fresh == 0)
        return;
    char **out = xcalloc((size_t)na + fresh, sizeof(*out));
    uint32_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        int c = i >= na ? 1 : j >= nb ? -1 : strcmp(e->items[i], b[j]);
        if (c <= 0) {
            out[n++] = e->items[i++];
            if (c == 0)
                j++;
        } else {
            out[n++] = xstrdup(b[j++]);
        }
    }
    free(e->items);
    e->items = out;
    e->nitems = n;
}

static void items_sub(struct resource *e, char *const *b, uint32_t nb)
{
    uint32_t n = 0, j = 0;
    for (uint32_t i = 0; i < e->nitems; i++) {
        int c = 1;
        while (j < nb && (c = strcmp(b[j], e->items[i])) < 0)
            j++;
        if (j < nb && c == 0)
            free(e->items[i]);
        else
            e->items[n++] = e->items[i];
    }
    e->nitems = n;
    if (n == 0) {
        free(e->items);
        e->items = NULL;
    }
}

static int item_cmp(const void *pa, const void *pb)
{
    return strcmp(*(char *const *)pa, *(char *const *)pb);
}

/* ---- Building -------------------------------------------------------- */

static void init_common(struct resource *r, const char *name,
                        enum res_type type)
{
    memset(r, 0, sizeof(*r));
    r->name = xstrdup(name ? name : "");
    r->type = type;
}

void res_init_scalar(struct resource *r, const char *name, int64_t milli)
{
    init_common(r, name, RES_SCALAR);
    r->scalar = milli;
}

void res_init_ranges(struct resource *r, const char *name,
                     const struct res_range *ranges, uint32_t n)
{
    init_common(r, name, RES_RANGES);
    if (n == 0)
        return;
    struct res_range *v = xmemdup(ranges, n * sizeof(*ranges));
    uint32_t m = res_ranges_normalize(v, n);
    if (m == 0) {
        free(v);
        return;
    }
    r->ranges = m < n ? xreallocarray(v, m, sizeof(*v)) : v;
    r->nranges = m;
}

void res_init_set(struct resource *r, const char *name,
                  const char *const *items, uint32_t n)
{
    init_common(r, name, RES_SET);
    if (n == 0)
        return;
    char **v = xcalloc(n, sizeof(*v));
    for (uint32_t i = 0; i < n; i++)
        v[i] = xstrdup(items[i] ? items[i] : "");
    qsort(v, n, sizeof(*v), item_cmp);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (m > 0 && strcmp(v[m - 1], v[i]) == 0)
            free(v[i]);
        else
            v[m++] = v[i];
    }
    r->items = v;
    r->nitems = m;
}

void res_push_reservation(struct resource *r, enum res_resv_type type,
                          const char *role, const char *principal,
                          const struct res_label *labels, uint32_t nlabels)
{
    r->resv = xreallocarray(r->resv, (size_t)r->nresv + 1, sizeof(*r->resv));
    struct res_reservation *t = &r->resv[r->nresv++];
    t->type = type;
    t->role = xstrdup(role ? role : "");
    t->principal = xstrdup(principal);
    t->labels = labels_dup(labels, nlabels);
    t->nlabels = nlabels;
}

int res_scalar_from_double(double d, int64_t *out)
{
    if (isnan(d) || isinf(d) || d < 0 || d > (double)RES_SCALAR_MAX_UNITS)
        return -1;
    *out = llround(d * RES_SCALE);
    return 0;
}

double res_scalar_to_double(int64_t milli)
{
    return (double)milli / RES_SCALE;
}

/* ---- Identity and values ---------------------------------------------- */

static bool label_in(const struct res_label *l, const struct res_label *v,
                     uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (str_eq(l->key, v[i].key) && str_eq(l->value, v[i].value))
            return true;
    return false;
}

/* Labels compare as Mesos's do: the same count, order ignored. */
static bool labels_eq(const struct res_label *a, uint32_t na,
                      const struct res_label *b, uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++) {
        if (i < nb && str_eq(a[i].key, b[i].key) &&
            str_eq(a[i].value, b[i].value))
            continue; /* the usual case: same order */
        if (!label_in(&a[i], b, nb) || !label_in(&b[i], a, na))
            return false;
    }
    return true;
}

static bool resv_eq(const struct res_reservation *a,
                    const struct res_reservation *b)
{
    return a->type == b->type && str_eq(a->role, b->role) &&
           str_eq(a->principal, b->principal) &&
           labels_eq(a->labels, a->nlabels, b->labels, b->nlabels);
}

static bool disk_same(const struct res_disk *a, const struct res_disk *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    if (a->source != b->source)
        return false;
    if (a->source != RES_DISK_SOURCE_NONE &&
        (!str_eq(a->source_root, b->source_root) ||
         !str_eq(a->source_id, b->source_id) ||
         !str_eq(a->source_profile, b->source_profile)))
        return false;
    return str_eq(a->persistence_id, b->persistence_id);
}

bool res_same_identity(const struct resource *a, const struct resource *b)
{
    if (a == b)
        return true;
    /* The integer fields and the names' first letters first: a lookup in a
     * long list (an agent's total with thousands of reservations) then
     * rejects most entries without a string comparison. */
    if (a->type != b->type || a->revocable != b->revocable ||
        a->shared != b->shared || a->nresv != b->nresv ||
        (a->disk == NULL) != (b->disk == NULL) ||
        (a->alloc_role == NULL) != (b->alloc_role == NULL) ||
        (a->name != NULL && b->name != NULL && a->name[0] != b->name[0]))
        return false;
    if (!str_eq(a->name, b->name) || !str_eq(a->alloc_role, b->alloc_role) ||
        !str_eq(a->provider_id, b->provider_id))
        return false;
    for (uint32_t i = 0; i < a->nresv; i++)
        if (!resv_eq(&a->resv[i], &b->resv[i]))
            return false;
    return disk_same(a->disk, b->disk);
}

bool res_is_empty(const struct resource *r)
{
    switch (r->type) {
    case RES_SCALAR:
        return r->scalar == 0;
    case RES_RANGES:
        return r->nranges == 0;
    case RES_SET:
        return r->nitems == 0;
    }
    return true;
}

/* Empty as a list entry: no value, or a shared resource with no copies. */
static bool entry_is_empty(const struct resource *r)
{
    return res_is_empty(r) || (r->shared && r->shared_count == 0);
}

/* Values of two resources of the same type. */
static bool value_eq(const struct resource *a, const struct resource *b)
{
    switch (a->type) {
    case RES_SCALAR:
        return a->scalar == b->scalar;
    case RES_RANGES:
        return a->nranges == b->nranges &&
               (a->nranges == 0 ||
                memcmp(a->ranges, b->ranges, a->nranges * sizeof(*a->ranges)) ==
                    0);
    case RES_SET:
        if (a->nitems != b->nitems)
            return false;
        for (uint32_t i = 0; i < a->nitems; i++)
            if (strcmp(a->items[i], b->items[i]) != 0)
                return false;
        return true;
    }
    return false;
}

/* True when value(small) <= value(big). */
static bool value_leq(const struct resource *small, const struct resource *big)
{
    switch (small->type) {
    case RES_SCALAR:
        return small->scalar <= big->scalar;
    case RES_RANGES:
        return res_ranges_contains(big->ranges, big->nranges, small->ranges,
                                   small->nranges);
    case RES_SET:
        return items_subset(big->items, big->nitems, small->items,
                            small->nitems);
    }
    return false;
}

/* Resources that are never merged with another and only taken away whole. */
static bool is_atomic(const struct resource *r)
{
    const struct res_disk *d = r->disk;
    if (d == NULL)
        return false;
    if (d->persistence_id != NULL)
        return true;
    if (d->source == RES_DISK_SOURCE_MOUNT ||
        d->source == RES_DISK_SOURCE_BLOCK)
        return true;
    return d->source == RES_DISK_SOURCE_RAW && d->source_id != NULL;
}

static bool addable(const struct resource *e, const struct resource *r)
{
    if (!res_same_identity(e, r))
        return false;
    if (e->shared)
        return value_eq(e, r);
    return !is_atomic(e);
}

static bool subtractable(const struct resource *e, const struct resource *r)
{
    if (!res_same_identity(e, r))
        return false;
    if (e->shared || is_atomic(e))
        return value_eq(e, r);
    return true;
}

static bool entry_contains(const struct resource *e, const struct resource *r)
{
    if (!subtractable(e, r))
        return false;
    if (e->shared)
        return e->shared_count >= r->shared_count;
    return value_leq(r, e);
}

/* e += r; the two are addable. */
static void merge_into(struct resource *e, const struct resource *r)
{
    if (e->shared) {
        e->shared_count = r->shared_count > UINT32_MAX - e->shared_count
                              ? UINT32_MAX
                              : e->shared_count + r->shared_count;
        return;
    }
    switch (e->type) {
    case RES_SCALAR:
        e->scalar = r->scalar > INT64_MAX - e->scalar ? INT64_MAX
                                                      : e->scalar + r->scalar;
        break;
    case RES_RANGES:
        ranges_apply(e, r->ranges, r->nranges, true);
        break;
    case RES_SET:
        items_add(e, r->items, r->nitems);
        break;
    }
}

/* e -= r; the two are subtractable. Returns true when e is left empty or
 * would go negative, i.e. must be removed. */
static bool take_from(struct resource *e, const struct resource *r)
{
    if (e->shared) {
        if (r->shared_count >= e->shared_count)
            return true;
        e->shared_count -= r->shared_count;
        return false;
    }
    switch (e->type) {
    case RES_SCALAR:
        if (r->scalar >= e->scalar)
            return true;
        e->scalar -= r->scalar;
        return false;
    case RES_RANGES:
        ranges_apply(e, r->ranges, r->nranges, false);
        return e->nranges == 0;
    case RES_SET:
        items_sub(e, r->items, r->nitems);
        return e->nitems == 0;
    }
    return true;
}

/* ---- Arithmetic -------------------------------------------------------- */

/* l += *r; when `take`, the list may take over what *r owns (and *r is
 * cleared either way). */
static void list_add(res_list *l, struct resource *r, bool take)
{
    if (!entry_is_empty(r)) {
        for (uint32_t i = 0; i < l->n; i++) {
            if (addable(&l->v[i], r)) {
                merge_into(&l->v[i], r);
                if (take)
                    res_clear(r);
                return;
            }
        }
        if (take) {
            list_push_move(l, r);
        } else {
            struct resource c;
            res_copy(&c, r);
            list_push_move(l, &c);
        }
        return;
    }
    if (take)
        res_clear(r);
}

void res_list_add(res_list *l, const struct resource *r)
{
    list_add(l, (struct resource *)r, false);
}

void res_list_add_move(res_list *l, struct resource *r)
{
    list_add(l, r, true);
}

void res_list_add_all(res_list *l, const res_list *other)
{
    if (l == other) {
        res_list tmp = RES_LIST_INIT;
        res_list_copy(&tmp, other);
        res_list_add_all(l, &tmp);
        res_list_clear(&tmp);
        return;
    }
    for (uint32_t i = 0; i < other->n; i++)
        list_add(l, (struct resource *)&other->v[i], false);
}

void res_list_sub(res_list *l, const struct resource *r)
{
    if (entry_is_empty(r))
        return;
    for (uint32_t i = 0; i < l->n; i++) {
        if (subtractable(&l->v[i], r)) {
            if (take_from(&l->v[i], r))
                list_remove_at(l, i);
            return;
        }
    }
}

void res_list_sub_all(res_list *l, const res_list *other)
{
    if (l == other) {
        res_list_clear(l);
        return;
    }
    for (uint32_t i = 0; i < other->n; i++)
        res_list_sub(l, &other->v[i]);
}

bool res_list_contains_one(const res_list *l, const struct resource *r)
{
    if (r->type == RES_SCALAR && r->scalar < 0)
        return false;
    if (entry_is_empty(r))
        return true;
    for (uint32_t i = 0; i < l->n; i++)
        if (entry_contains(&l->v[i], r))
            return true;
    return false;
}

/* Entries of l equal to r as a whole (identity and value). */
static uint32_t count_equal(const struct resource *v, uint32_t n,
                            const struct resource *r)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        if (res_same_identity(&v[i], r) && value_eq(&v[i], r))
            c++;
    return c;
}

bool res_list_contains(const res_list *a, const res_list *b)
{
    for (uint32_t j = 0; j < b->n; j++) {
        const struct resource *r = &b->v[j];
        if (!res_list_contains_one(a, r))
            return false;
        /* Mesos takes each persistent volume of b away from a copy of a as
         * it goes, so b's identical volumes each need their own in a.
         * Counting gives the same answer without the copy. */
        if (!r->shared && res_is_persistent_volume(r)) {
            uint32_t need = count_equal(b->v, j, r) + 1;
            if (need > 1 && count_equal(a->v, a->n, r) < need)
                return false;
        }
    }
    return true;
}

bool res_list_equal(const res_list *a, const res_list *b)
{
    return res_list_contains(a, b) && res_list_contains(b, a);
}

bool res_list_is_empty(const res_list *l)
{
    return l->n == 0;
}

int64_t res_list_scalar(const res_list *l, const char *name)
{
    int64_t total = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        if (r->type != RES_SCALAR || !str_eq(r->name, name) || r->scalar <= 0)
            continue;
        total = r->scalar > INT64_MAX - total ? INT64_MAX : total + r->scalar;
    }
    return total;
}

/* ---- Predicates and filters ------------------------------------------- */

const char *res_reservation_role(const struct resource *r)
{
    return r->nresv ? r->resv[r->nresv - 1].role : "*";
}

bool res_is_unreserved(const struct resource *r)
{
    return r->nresv == 0;
}

bool res_is_reserved(const struct resource *r, const char *role)
{
    return r->nresv > 0 &&
           (role == NULL || str_eq(r->resv[r->nresv - 1].role, role));
}

bool res_is_allocatable_to(const struct resource *r, const char *role)
{
    if (r->nresv == 0)
        return true;
    return role != NULL && res_role_is_subrole(role, res_reservation_role(r));
}

bool res_is_dynamically_reserved(const struct resource *r)
{
    return r->nresv > 0 && r->resv[r->nresv - 1].type == RES_RESV_DYNAMIC;
}

bool res_is_revocable(const struct resource *r)
{
    return r->revocable;
}

bool res_is_persistent_volume(const struct resource *r)
{
    return r->disk != NULL && r->disk->persistence_id != NULL;
}

bool res_is_shared(const struct resource *r)
{
    return r->shared;
}

void res_list_filter(const res_list *in, res_pred_fn pred, const void *arg,
                     res_list *out)
{
    for (uint32_t i = 0; i < in->n; i++)
        if (pred(&in->v[i], arg))
            res_list_add(out, &in->v[i]);
}

void res_list_flatten(const res_list *in, const char *role, res_list *out)
{
    bool reserve = role != NULL && strcmp(role, "*") != 0;
    for (uint32_t i = 0; i < in->n; i++) {
        struct resource c;
        res_copy(&c, &in->v[i]);
        resv_free(c.resv, c.nresv);
        c.resv = NULL;
        c.nresv = 0;
        disk_free(c.disk);
        c.disk = NULL;
        free(c.alloc_role);
        c.alloc_role = NULL;
        if (reserve)
            res_push_reservation(&c, RES_RESV_STATIC, role, NULL, NULL, 0);
        list_add(out, &c, true);
    }
}

void res_list_allocate(res_list *l, const char *role)
{
    for (uint32_t i = 0; i < l->n; i++) {
        struct resource *r = &l->v[i];
        if (str_eq(r->alloc_role, role))
            continue;
        free(r->alloc_role);
        r->alloc_role = xstrdup(role);
    }
    /* Entries that differed only in allocation role now merge. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        bool merged = false;
        for (uint32_t j = 0; j < kept && !merged; j++) {
            if (addable(&l->v[j], &l->v[i])) {
                merge_into(&l->v[j], &l->v[i]);
                res_clear(&l->v[i]);
                merged = true;
            }
        }
        if (!merged) {
            if (kept != i)
                l->v[kept] = l->v[i];
            kept++;
        }
    }
    l->n = kept;
}

/* ---- Reservations, volumes and an agent's total ----------------------- */

void res_drop_volume(struct resource *r)
{
    struct res_disk *d = r->disk;
    if (d != NULL && d->source == RES_DISK_SOURCE_NONE) {
        disk_free(d);
        r->disk = NULL;
    } else if (d != NULL) {
        free(d->persistence_id);
        free(d->persistence_principal);
        free(d->container_path);
        free(d->host_path);
        d->persistence_id = d->persistence_principal = NULL;
        d->container_path = d->host_path = NULL;
        d->has_volume = false;
    }
    r->shared = false;
    r->shared_count = 0;
}

void res_pop_reservation(struct resource *r)
{
    if (r->nresv == 0)
        return;
    struct res_reservation *top = &r->resv[r->nresv - 1];
    free(top->role);
    free(top->principal);
    labels_free(top->labels, top->nlabels);
    memset(top, 0, sizeof(*top));
    r->nresv--;
}

int res_agent_total(const res_list *static_res, const res_list *ckpt,
                    res_list *out, char *err, size_t errlen)
{
    /* The bases: what each checkpointed resource was made from. */
    res_list base = RES_LIST_INIT;
    for (uint32_t i = 0; i < ckpt->n; i++) {
        struct resource r;
        res_copy(&r, &ckpt->v[i]);
        res_drop_volume(&r);
        while (res_is_dynamically_reserved(&r))
            res_pop_reservation(&r);
        free(r.alloc_role);
        r.alloc_role = NULL;
        res_list_add(&base, &r);
        res_clear(&r);
    }
    res_list_copy(out, static_res);
    int rc = 0;
    if (!res_list_contains(static_res, &base)) {
        errbuf_set(err, errlen,
                   "the checkpointed resources do not fit the agent's "
                   "resources");
        rc = -1;
    } else {
        res_list_sub_all(out, &base);
        res_list_add_all(out, ckpt);
    }
    res_list_clear(&base);
    return rc;
}

/* ---- Roles ------------------------------------------------------------ */

static bool role_bad_char(unsigned char c)
{
    return c <= 0x20 || c == 0x7f || c == '\\';
}

int res_role_validate(const char *role, char *err, size_t errlen)
{
    if (role == NULL || role[0] == '\0') {
        errbuf_set(err, errlen, "empty role name");
        return -1;
    }
    if (strcmp(role, "*") == 0)
        return 0;
    size_t len = strlen(role);
    int q = len > QUOTE_MAX ? QUOTE_MAX : (int)len;
    if (role[0] == '/') {
        errbuf_set(err, errlen, "role '%.*s' starts with a slash", q, role);
        return -1;
    }
    if (role[len - 1] == '/') {
        errbuf_set(err, errlen, "role '%.*s' ends with a slash", q, role);
        return -1;
    }
    if (strstr(role, "//") != NULL) {
        errbuf_set(err, errlen, "role '%.*s' contains two adjacent slashes", q,
                   role);
        return -1;
    }
    for (const char *c = role; *c; c++) {
        if (role_bad_char((unsigned char)*c)) {
            errbuf_set(err, errlen,
                       "role '%.*s' contains whitespace, a control character "
                       "or a backslash",
                       q, role);
            return -1;
        }
    }
    for (const char *p = role; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
            (n == 1 && p[0] == '*')) {
            errbuf_set(err, errlen,
                       "role '%.*s' has '%.*s' as a path component", q, role,
                       (int)n, p);
            return -1;
        }
        if (p[0] == '-') {
            errbuf_set(err, errlen,
                       "role '%.*s' has a path component starting with '-'", q,
                       role);
            return -1;
        }
        p += n;
        if (*p == '/')
            p++;
    }
    return 0;
}

bool res_role_is_subrole(const char *role, const char *ancestor)
{
    if (role == NULL || ancestor == NULL)
        return false;
    if (strcmp(ancestor, "*") == 0)
        return true;
    size_t n = strlen(ancestor);
    return strncmp(role, ancestor, n) == 0 &&
           (role[n] == '\0' || role[n] == '/');
}

static bool role_is_strict_subrole(const char *role, const char *ancestor)
{
    size_t n = strlen(ancestor);
    return strncmp(role, ancestor, n) == 0 && role[n] == '/';
}

/* ---- Validation -------------------------------------------------------- */

static int validate_value(const struct resource *r, const char *name, char *err,
                          size_t errlen)
{
    switch (r->type) {
    case RES_SCALAR:
        if (r->scalar < 0) {
            errbuf_set(err, errlen, "%s: negative scalar value", name);
            return -1;
        }
        if (r->scalar > RES_SCALAR_MAX_UNITS * RES_SCALE) {
            errbuf_set(err, errlen, "%s: scalar value above %lld", name,
                       (long long)RES_SCALAR_MAX_UNITS);
            return -1;
        }
        return 0;
    case RES_RANGES: {
        if (r->nranges > 0 && r->ranges == NULL) {
            errbuf_set(err, errlen, "%s: ranges missing", name);
            return -1;
        }
        bool sorted = true;
        for (uint32_t i = 0; i < r->nranges; i++) {
            if (r->ranges[i].begin > r->ranges[i].end) {
                errbuf_set(err, errlen, "%s: range [%llu-%llu] has begin > end",
                           name, (unsigned long long)r->ranges[i].begin,
                           (unsigned long long)r->ranges[i].end);
                return -1;
            }
            if (i > 0 && r->ranges[i].begin <= r->ranges[i - 1].begin)
                sorted = false;
        }
        for (uint32_t i = 0; i < r->nranges; i++) {
            const struct res_range *a = &r->ranges[i];
            /* sorted: only the next one can overlap; else check them all */
            uint32_t stop = sorted && i + 1 < r->nranges ? i + 2 : r->nranges;
            for (uint32_t j = i + 1; j < stop; j++) {
                const struct res_range *b = &r->ranges[j];
                if (a->begin <= b->end && b->begin <= a->end) {
                    errbuf_set(err, errlen, "%s: overlapping ranges", name);
                    return -1;
                }
            }
        }
        for (uint32_t i = 1; i < r->nranges; i++) {
            if (!sorted || range_joins(&r->ranges[i - 1], &r->ranges[i])) {
                errbuf_set(err, errlen, "%s: ranges not sorted and coalesced",
                           name);
                return -1;
            }
        }
        return 0;
    }
    case RES_SET: {
        if (r->nitems > 0 && r->items == NULL) {
            errbuf_set(err, errlen, "%s: set items missing", name);
            return -1;
        }
        for (uint32_t i = 0; i < r->nitems; i++) {
            if (r->items[i] == NULL) {
                errbuf_set(err, errlen, "%s: set item %u missing", name, i);
                return -1;
            }
        }
        bool sorted = true;
        for (uint32_t i = 1; i < r->nitems && sorted; i++)
            if (strcmp(r->items[i - 1], r->items[i]) >= 0)
                sorted = false;
        if (sorted)
            return 0;
        for (uint32_t i = 0; i < r->nitems; i++) {
            for (uint32_t j = i + 1; j < r->nitems; j++) {
                if (strcmp(r->items[i], r->items[j]) == 0) {
                    errbuf_set(err, errlen, "%s: duplicate set item '%.*s'",
                               name, QUOTE_MAX, r->items[i]);
                    return -1;
                }
            }
        }
        errbuf_set(err, errlen, "%s: set items not sorted", name);
        return -1;
    }
    }
    errbuf_set(err, errlen, "%s: unknown value type %d", name, (int)r->type);
    return -1;
}

static int validate_reservations(const struct resource *r, const char *name,
                                 char *err, size_t errlen)
{
    char why[256];
    if (r->nresv > 0 && r->resv == NULL) {
        errbuf_set(err, errlen, "%s: reservations missing", name);
        return -1;
    }
    for (uint32_t i = 0; i < r->nresv; i++) {
        const struct res_reservation *v = &r->resv[i];
        if (v->type != RES_RESV_STATIC && v->type != RES_RESV_DYNAMIC) {
            errbuf_set(err, errlen, "%s: reservation %u has unknown type %d",
                       name, i, (int)v->type);
            return -1;
        }
        if (res_role_validate(v->role, why, sizeof(why)) < 0) {
            errbuf_set(err, errlen, "%s: reservation %u: %s", name, i, why);
            return -1;
        }
        if (strcmp(v->role, "*") == 0) {
            errbuf_set(err, errlen, "%s: role \"*\" cannot be reserved", name);
            return -1;
        }
        for (uint32_t k = 0; k < v->nlabels; k++) {
            if (v->labels == NULL || v->labels[k].key == NULL) {
                errbuf_set(err, errlen,
                           "%s: reservation %u label %u has no key", name, i,
                           k);
                return -1;
            }
        }
        if (i == 0)
            continue;
        if (v->type == RES_RESV_STATIC) {
            errbuf_set(err, errlen,
                       "%s: refined reservation %u cannot be STATIC", name, i);
            return -1;
        }
        const char *below = r->resv[i - 1].role;
        if (!role_is_strict_subrole(v->role, below)) {
            errbuf_set(err, errlen,
                       "%s: reservation role '%.*s' is not a refinement of "
                       "'%.*s'",
                       name, QUOTE_MAX, v->role, QUOTE_MAX, below);
            return -1;
        }
    }
    return 0;
}

static int validate_disk(const struct resource *r, const char *name, char *err,
                         size_t errlen)
{
    const struct res_disk *d = r->disk;
    if (d == NULL)
        return 0;
    if (strcmp(r->name, "disk") != 0) {
        errbuf_set(err, errlen, "%s: disk info on a resource not named disk",
                   name);
        return -1;
    }
    if ((int)d->source < RES_DISK_SOURCE_NONE ||
        (int)d->source > RES_DISK_SOURCE_RAW) {
        errbuf_set(err, errlen, "%s: unknown disk source type %d", name,
                   (int)d->source);
        return -1;
    }
    if ((d->source == RES_DISK_SOURCE_BLOCK ||
         d->source == RES_DISK_SOURCE_RAW) &&
        d->source_root != NULL) {
        errbuf_set(err, errlen, "%s: %s disk source cannot have a root", name,
                   d->source == RES_DISK_SOURCE_BLOCK ? "BLOCK" : "RAW");
        return -1;
    }
    if (d->has_volume) {
        if (d->volume_mode != RES_VOLUME_RW &&
            d->volume_mode != RES_VOLUME_RO) {
            errbuf_set(err, errlen, "%s: unknown volume mode %d", name,
                       (int)d->volume_mode);
            return -1;
        }
        if (d->container_path == NULL || d->container_path[0] == '\0') {
            errbuf_set(err, errlen, "%s: volume without container_path", name);
            return -1;
        }
    }
    if (d->persistence_id != NULL) {
        if (d->persistence_id[0] == '\0') {
            errbuf_set(err, errlen, "%s: empty persistence id", name);
            return -1;
        }
        if (r->nresv == 0) {
            errbuf_set(err, errlen,
                       "%s: persistent volume %.*s is not reserved", name,
                       QUOTE_MAX, d->persistence_id);
            return -1;
        }
        if (!d->has_volume) {
            errbuf_set(err, errlen,
                       "%s: persistent volume %.*s without a volume", name,
                       QUOTE_MAX, d->persistence_id);
            return -1;
        }
    }
    return 0;
}

int res_validate(const struct resource *r, char *err, size_t errlen)
{
    if (r->name == NULL || r->name[0] == '\0') {
        errbuf_set(err, errlen, "empty resource name");
        return -1;
    }
    char name[QUOTE_MAX + 1];
    int w = snprintf(name, sizeof(name), "%s", r->name);
    if (w < 0)
        name[0] = '\0';
    char why[256];

    if (validate_value(r, name, err, errlen) < 0)
        return -1;
    if (validate_reservations(r, name, err, errlen) < 0)
        return -1;
    if (validate_disk(r, name, err, errlen) < 0)
        return -1;
    if (r->revocable && r->nresv > 0) {
        errbuf_set(err, errlen, "%s: revocable resources cannot be reserved",
                   name);
        return -1;
    }
    if (r->revocable && r->disk != NULL) {
        errbuf_set(err, errlen, "%s: revocable resources cannot have disk info",
                   name);
        return -1;
    }
    if (r->shared) {
        if (!res_is_persistent_volume(r)) {
            errbuf_set(err, errlen, "%s: only persistent volumes can be shared",
                       name);
            return -1;
        }
        if (r->shared_count == 0) {
            errbuf_set(err, errlen, "%s: shared resource with no copies", name);
            return -1;
        }
    }
    if (r->alloc_role != NULL &&
        res_role_validate(r->alloc_role, why, sizeof(why)) < 0) {
        errbuf_set(err, errlen, "%s: allocation role: %s", name, why);
        return -1;
    }
    return 0;
}

int res_list_validate(const res_list *l, char *err, size_t errlen)
{
    char why[512];
    for (uint32_t i = 0; i < l->n; i++) {
        if (res_validate(&l->v[i], why, sizeof(why)) < 0) {
            errbuf_set(err, errlen, "resource %u: %s", i, why);
            return -1;
        }
    }
    return 0;
}

/* ---- Text parsing ------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
           c == '\f';
}

/* A span of the input text. */
struct span {
    const char *p;
    size_t n;
};

static struct span trim(const char *p, size_t n)
{
    while (n > 0 && is_space(p[0])) {
        p++;
        n--;
    }
    while (n > 0 && is_space(p[n - 1]))
        n--;
    return (struct span){p, n};
}

static int quote_len(size_t n)
{
    return n > QUOTE_MAX ? QUOTE_MAX : (int)n;
}

static const char *span_find(struct span s, char c)
{
    return s.n ? memchr(s.p, c, s.n) : NULL;
}

static bool span_has_any(struct span s, const char *set)
{
    for (size_t i = 0; i < s.n; i++)
        if (strchr(set, s.p[i]) != NULL)
            return true;
    return false;
}

/* Parse a decimal uint64 (digits only). */
static int parse_u64(struct span s, uint64_t *out)
{
    if (s.n == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        unsigned d = (unsigned)(s.p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Split s on ',' calling fn on each trimmed piece; an all-blank s has no
 * pieces. */
typedef int (*piece_fn)(struct span piece, void *ctx, char *err, size_t errlen);

static int split_commas(struct span s, piece_fn fn, void *ctx, char *err,
                        size_t errlen)
{
    if (trim(s.p, s.n).n == 0)
        return 0;
    const char *p = s.p, *end = s.p + s.n;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (fn(trim(p, (size_t)(stop - p)), ctx, err, errlen) < 0)
            return -1;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

struct range_acc {
    const char *name;
    struct res_range *v;
    uint32_t n, cap;
};

static int range_piece(struct span s, void *ctx, char *err, size_t errlen)
{
    struct range_acc *a = ctx;
    if (s.n == 0) {
        errbuf_set(err, errlen, "%s: empty range", a->name);
        return -1;
    }
    const char *dash = span_find(s, '-');
    if (dash == NULL) {
        errbuf_set(err, errlen, "%s: expected begin-end, got '%.*s'", a->name,
                   quote_len(s.n), s.p);
        return -1;
    }
    struct span lo = trim(s.p, (size_t)(dash - s.p));
    struct span hi = trim(dash + 1, (size_t)(s.p + s.n - dash - 1));
    struct res_range r;
    if (parse_u64(lo, &r.begin) < 0 || parse_u64(hi, &r.end) < 0) {
        errbuf_set(err, errlen, "%s: bad number in range '%.*s'", a->name,
                   quote_len(s.n), s.p);
        return -1;
    }
    if (r.begin > r.end) {
        errbuf_set(err, errlen, "%s: bad range '%.*s': begin > end", a->name,
                   quote_len(s.n), s.p);
        return -1;
    }
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    a->v[a->n++] = r;
    return 0;
}

struct item_acc {
    const char *name;
    char **v;
    uint32_t n, cap;
};

static int item_piece(struct span s, void *ctx, char *err, size_t errlen)
{
    struct item_acc *a = ctx;
    if (s.n == 0) {
        errbuf_set(err, errlen, "%s: empty set item", a->name);
        return -1;
    }
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 8;
        a->v = xreallocarray(a->v, a->cap, sizeof(*a->v));
    }
    a->v[a->n++] = xstrndup(s.p, s.n);
    return 0;
}

/* The text inside v, which opens with a bracket ('[' or '{') that must be
 * closed by close at its end, with no other bracket inside (OUT: *in).
 * Returns 0, or -1 with a reason naming the resource. */
static int bracket_inside(struct span v, char close, const char *name,
                          struct span *in, char *err, size_t errlen)
{
    if (v.n < 2 || v.p[v.n - 1] != close) {
        errbuf_set(err, errlen, "%s: unclosed '%c' in '%.*s'", name, v.p[0],
                   quote_len(v.n), v.p);
        return -1;
    }
    struct span inside = {v.p + 1, v.n - 2};
    if (span_has_any(inside, "[]{}()")) {
        errbuf_set(err, errlen, "%s: unexpected bracket in '%.*s'", name,
                   quote_len(v.n), v.p);
        return -1;
    }
    *in = inside;
    return 0;
}

/* Parse the value text v of resource `name` into r (name and type set by
 * the caller's init; r is scalar-initialised on entry). */
static int parse_value(struct span v, const char *name, struct resource *r,
                       char *err, size_t errlen)
{
    if (v.n == 0) {
        errbuf_set(err, errlen, "%s: empty value", name);
        return -1;
    }
    struct span in;
    if (v.p[0] == '[') {
        if (bracket_inside(v, ']', name, &in, err, errlen) != 0)
            return -1;
        struct range_acc acc = {name, NULL, 0, 0};
        if (split_commas(in, range_piece, &acc, err, errlen) < 0) {
            free(acc.v);
            return -1;
        }
        if (acc.n > 1) {
            qsort(acc.v, acc.n, sizeof(*acc.v), range_cmp);
            for (uint32_t i = 1; i < acc.n; i++) {
                if (acc.v[i].begin <= acc.v[i - 1].end) {
                    errbuf_set(err, errlen, "%s: overlapping ranges in '%.*s'",
                               name, quote_len(v.n), v.p);
                    free(acc.v);
                    return -1;
                }
            }
        }
        r->type = RES_RANGES;
        r->nranges = res_ranges_normalize(acc.v, acc.n);
        r->ranges = acc.v;
        if (r->nranges == 0) {
            free(acc.v);
            r->ranges = NULL;
        }
        return 0;
    }
    if (v.p[0] == '{') {
        if (bracket_inside(v, '}', name, &in, err, errlen) != 0)
            return -1;
        struct item_acc acc = {name, NULL, 0, 0};
        if (split_commas(in, item_piece, &acc, err, errlen) < 0) {
            items_free(acc.v, acc.n);
            return -1;
        }
        if (acc.n > 1)
            qsort(acc.v, acc.n, sizeof(*acc.v), item_cmp);
        for (uint32_t i = 1; i < acc.n; i++) {
            if (strcmp(acc.v[i - 1], acc.v[i]) == 0) {
                errbuf_set(err, errlen, "%s: duplicate set item '%.*s'", name,
                           QUOTE_MAX, acc.v[i]);
                items_free(acc.v, acc.n);
                return -1;
            }
        }
        r->type = RES_SET;
        r->items = acc.v;
        r->nitems = acc.n;
        if (acc.n == 0) {
            free(acc.v);
            r->items = NULL;
        }
        return 0;
    }
    if (span_has_any(v, "[]{}")) {
        errbuf_set(err, errlen, "%s: unexpected bracket in '%.*s'", name,
                   quote_len(v.n), v.p);
        return -1;
    }
    /* A scalar: plain decimal notation only (no hex, inf or nan, which
     * strtod would take). */
    char buf[64];
    bool ok = v.n < sizeof(buf);
    for (size_t i = 0; ok && i < v.n; i++)
        ok = strchr("0123456789.eE+-", v.p[i]) != NULL;
    double d = 0;
    if (ok) {
        memcpy(buf, v.p, v.n);
        buf[v.n] = '\0';
        char *end = NULL;
        d = strtod(buf, &end);
        ok = end == buf + v.n;
    }
    if (!ok) {
        errbuf_set(err, errlen, "%s: bad number '%.*s'", name, quote_len(v.n),
                   v.p);
        return -1;
    }
    int64_t milli;
    if (res_scalar_from_double(d, &milli) < 0) {
        errbuf_set(err, errlen, "%s: %s value '%.*s'", name,
                   d < 0 ? "negative" : "too large", quote_len(v.n), v.p);
        return -1;
    }
    if (milli == 0 && d != 0) {
        errbuf_set(err, errlen, "%s: value '%.*s' rounds to zero", name,
                   quote_len(v.n), v.p);
        return -1;
    }
    r->type = RES_SCALAR;
    r->scalar = milli;
    return 0;
}

/* Parse one ';'-separated entry into *acc. */
static int parse_entry(struct span tok, const char *default_role, res_list *acc,
                       char *err, size_t errlen)
{
    tok = trim(tok.p, tok.n);
    if (tok.n == 0)
        return 0;
    int q = quote_len(tok.n);
    const char *colon = span_find(tok, ':');
    if (colon == NULL) {
        errbuf_set(err, errlen, "missing ':' in '%.*s'", q, tok.p);
        return -1;
    }
    struct span key = {tok.p, (size_t)(colon - tok.p)};
    struct span val = trim(colon + 1, (size_t)(tok.p + tok.n - colon - 1));
    if (span_find(val, ':') != NULL) {
        errbuf_set(err, errlen, "extra ':' in '%.*s'", q, tok.p);
        return -1;
    }
    const char *open = span_find(key, '(');
    const char *close = span_find(key, ')');
    struct span name = key, role = {NULL, 0};
    if (open != NULL || close != NULL) {
        if (open == NULL || close == NULL || close < open) {
            errbuf_set(err, errlen, "mismatched parentheses in '%.*s'", q,
                       tok.p);
            return -1;
        }
        struct span after =
            trim(close + 1, (size_t)(key.p + key.n - close - 1));
        if (after.n != 0 || memchr(open + 1, '(', (size_t)(close - open - 1))) {
            errbuf_set(err, errlen, "unexpected text around '(role)' in '%.*s'",
                       q, tok.p);
            return -1;
        }
        name = (struct span){key.p, (size_t)(open - key.p)};
        role = trim(open + 1, (size_t)(close - open - 1));
    }
    name = trim(name.p, name.n);
    if (name.n == 0) {
        errbuf_set(err, errlen, "empty resource name in '%.*s'", q, tok.p);
        return -1;
    }

    char *name_s = xstrndup(name.p, name.n);
    char *role_s = role.p ? xstrndup(role.p, role.n) : NULL;
    const char *eff = role_s ? role_s : default_role ? default_role : "*";
    struct resource r;
    int rc = -1;
    char why[256];
    res_init_scalar(&r, name_s, 0);
    if (role_s != NULL && res_role_validate(role_s, why, sizeof(why)) < 0) {
        errbuf_set(err, errlen, "%s: %s", name_s, why);
        goto out;
    }
    if (parse_value(val, name_s, &r, err, errlen) < 0)
        goto out;
    if (strcmp(eff, "*") != 0)
        res_push_reservation(&r, RES_RESV_STATIC, eff, NULL, NULL, 0);
    if (res_validate(&r, err, errlen) < 0)
        goto out;
    list_add(acc, &r, true);
    rc = 0;
out:
    res_clear(&r);
    free(name_s);
    free(role_s);
    return rc;
}

int res_parse_text(const char *text, const char *default_role, res_list *out,
                   char *err, size_t errlen)
{
    char why[256];
    if (text == NULL) {
        errbuf_set(err, errlen, "no resources text");
        return -1;
    }
    if (default_role != NULL &&
        res_role_validate(default_role, why, sizeof(why)) < 0) {
        errbuf_set(err, errlen, "default role: %s", why);
        return -1;
    }
    res_list acc = RES_LIST_INIT;
    const char *p = text;
    for (;;) {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        if (parse_entry((struct span){p, n}, default_role, &acc, err, errlen) <
            0) {
            res_list_clear(&acc);
            return -1;
        }
        if (semi == NULL)
            break;
        p = semi + 1;
    }
    /* As Mesos's Resources::parse: one type per name. */
    for (uint32_t i = 0; i < acc.n; i++) {
        for (uint32_t j = 0; j < i; j++) {
            if (strcmp(acc.v[i].name, acc.v[j].name) == 0 &&
                acc.v[i].type != acc.v[j].type) {
                errbuf_set(err, errlen,
                           "%.*s: resources with the same name but different "
                           "types",
                           QUOTE_MAX, acc.v[i].name);
                res_list_clear(&acc);
                return -1;
            }
        }
    }
    for (uint32_t i = 0; i < acc.n; i++)
        list_add(out, &acc.v[i], true);
    free(acc.v);
    return 0;
}

/* ---- Rendering ---------------------------------------------------------- */

struct buf {
    char *p;
    size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static void buf_fmt(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void buf_fmt(struct buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        buf_add(b, small, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    int m = vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (m == n)
        buf_add(b, big, (size_t)n);
    free(big);
}

static void render_scalar(struct buf *b, int64_t milli)
{
    uint64_t mag = milli < 0 ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    unsigned frac = (unsigned)(mag % RES_SCALE);
    buf_fmt(b, "%s%llu", milli < 0 ? "-" : "",
            (unsigned long long)(mag / RES_SCALE));
    if (frac == 0)
        return;
    char digits[8];
    int n = snprintf(digits, sizeof(digits), "%03u", frac);
    if (n < 0 || (size_t)n >= sizeof(digits))
        return;
    while (n > 0 && digits[n - 1] == '0')
        n--;
    buf_add(b, ".", 1);
    buf_add(b, digits, (size_t)n);
}

static void render_labels(struct buf *b, const struct res_label *v, uint32_t n)
{
    buf_str(b, "{");
    for (uint32_t i = 0; i < n; i++) {
        if (i > 0)
            buf_str(b, ", ");
        buf_str(b, v[i].key ? v[i].key : "");
        if (v[i].value != NULL)
            buf_fmt(b, ": %s", v[i].value);
    }
    buf_str(b, "}");
}

static const char *source_name(enum res_disk_source s)
{
    switch (s) {
    case RES_DISK_SOURCE_PATH:
        return "PATH";
    case RES_DISK_SOURCE_MOUNT:
        return "MOUNT";
    case RES_DISK_SOURCE_BLOCK:
        return "BLOCK";
    case RES_DISK_SOURCE_RAW:
        return "RAW";
    case RES_DISK_SOURCE_NONE:
        break;
    }
    return "UNKNOWN";
}

static void render_disk(struct buf *b, const struct res_disk *d)
{
    bool first = true;
    buf_str(b, "{");
    if (d->source != RES_DISK_SOURCE_NONE) {
        buf_fmt(b, "source:%s", source_name(d->source));
        if (d->source_root)
            buf_fmt(b, ":%s", d->source_root);
        if (d->source_id || d->source_profile)
            buf_fmt(b, "(%s,%s)", d->source_id ? d->source_id : "",
                    d->source_profile ? d->source_profile : "");
        first = false;
    }
    if (d->persistence_id) {
        buf_fmt(b, "%spersistence:%s", first ? "" : ",", d->persistence_id);
        first = false;
    }
    if (d->has_volume) {
        buf_fmt(b, "%svolume:", first ? "" : ",");
        if (d->host_path)
            buf_fmt(b, "%s:", d->host_path);
        buf_fmt(b, "%s:%s", d->container_path ? d->container_path : "",
                d->volume_mode == RES_VOLUME_RO ? "ro" : "rw");
    }
    buf_str(b, "}");
}

/* A single STATIC reservation without principal or labels reads back. */
static bool simple_reservation(const struct resource *r)
{
    return r->nresv == 1 && r->resv[0].type == RES_RESV_STATIC &&
           r->resv[0].principal == NULL && r->resv[0].nlabels == 0;
}

static void render_into(struct buf *b, const struct resource *r)
{
    buf_str(b, r->name ? r->name : "");
    if (r->alloc_role)
        buf_fmt(b, "(allocated: %s)", r->alloc_role);
    if (simple_reservation(r)) {
        buf_fmt(b, "(%s)", r->resv[0].role);
    } else if (r->nresv > 0) {
        buf_str(b, "(reservations: [");
        for (uint32_t i = 0; i < r->nresv; i++) {
            const struct res_reservation *v = &r->resv[i];
            buf_fmt(b, "%s(%s,%s", i ? "," : "",
                    v->type == RES_RESV_STATIC ? "STATIC" : "DYNAMIC",
                    v->role ? v->role : "");
            if (v->principal)
                buf_fmt(b, ",%s", v->principal);
            if (v->nlabels) {
                buf_str(b, ",");
                render_labels(b, v->labels, v->nlabels);
            }
            buf_str(b, ")");
        }
        buf_str(b, "])");
    }
    if (r->provider_id)
        buf_fmt(b, "(provider: %s)", r->provider_id);
    if (r->disk)
        render_disk(b, r->disk);
    if (r->revocable)
        buf_str(b, "{REV}");
    if (r->shared)
        buf_str(b, "<SHARED>");
    buf_str(b, ":");
    switch (r->type) {
    case RES_SCALAR:
        render_scalar(b, r->scalar);
        break;
    case RES_RANGES:
        buf_str(b, "[");
        for (uint32_t i = 0; i < r->nranges; i++)
            buf_fmt(b, "%s%llu-%llu", i ? "," : "",
                    (unsigned long long)r->ranges[i].begin,
                    (unsigned long long)r->ranges[i].end);
        buf_str(b, "]");
        break;
    case RES_SET:
        buf_str(b, "{");
        for (uint32_t i = 0; i < r->nitems; i++) {
            if (i > 0)
                buf_str(b, ",");
            buf_str(b, r->items[i]);
        }
        buf_str(b, "}");
        break;
    }
    if (r->shared)
        buf_fmt(b, "<%u>", r->shared_count);
}

char *res_render(const struct resource *r)
{
    struct buf b = {NULL, 0, 0};
    render_into(&b, r);
    return b.p ? b.p : xstrdup("");
}

char *res_list_render(const res_list *l)
{
    struct buf b = {NULL, 0, 0};
    for (uint32_t i = 0; i < l->n; i++) {
        if (i > 0)
            buf_str(&b, ";");
        render_into(&b, &l->v[i]);
    }
    return b.p ? b.p : xstrdup("");
}
