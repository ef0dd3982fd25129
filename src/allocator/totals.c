/*
 * An index over an agent's total resources, so that a reservation update
 * (alloc_agent_update_allocation) finds the entries it changes without
 * scanning the whole list: an agent can hold thousands of reservations
 * (Mesos's MESOS-10015 shape: 6,400 entries of 1,600 roles), and a scan
 * compares strings of most entries several times per operation.
 *
 * The index maps a hash of a resource's identity (what res_same_identity
 * compares, less the disk's details) to the entry's position. The list
 * keeps its order (the master renders it), so a removal shifts the entries
 * after it down by one without touching the index; instead the index
 * counts removals since it was built (`shift`), and an entry indexed at p
 * is found at p - shift .. p. Past a bound the index is dropped and built
 * again on next use. It is only an accelerator: every match is checked
 * with the list's own predicates, and anything it does not cover (shared
 * resources, resources with a disk, small lists) goes through the list
 * functions, after which the index is dropped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc_private.h"
#include "common/mem.h"

/* Lists shorter than this are scanned: the index would not pay. */
#define TIX_MIN_ENTRIES 64
/* Removals tolerated before a rebuild (each widens every lookup by one). */
#define TIX_MAX_SHIFT 256

struct tindex {
    uint32_t *pos;  /* position + 1 in ag->total; 0: empty slot */
    uint64_t *hash; /* identity hash of what was indexed in the slot */
    uint32_t cap;   /* slots, a power of two */
    uint32_t used;  /* slots filled (live or stale) */
    uint32_t shift; /* removals since the index was built */
};

void alloc_total_index_drop(struct alloc_agent *ag)
{
    struct tindex *t = ag->tix;
    if (t == NULL)
        return;
    free(t->pos);
    free(t->hash);
    free(t);
    ag->tix = NULL;
}

/* A keyed FNV-1a over the identity's fields, finished with a 64-bit mix.
 * Colliding identities cost probes, never a wrong answer. */
static uint64_t mix_bytes(uint64_t h, const char *s)
{
    if (s == NULL)
        return (h ^ 0xff) * 0x100000001b3ULL;
    for (; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
    return (h ^ 0xfe) * 0x100000001b3ULL;
}

static uint64_t mix_int(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ULL;
}

static uint64_t identity_hash(const struct alloc *a, const struct resource *r)
{
    uint64_t h = a->names.key.k0 ^ 0xcbf29ce484222325ULL;
    h = mix_bytes(h, r->name);
    h = mix_int(h, (uint64_t)r->type | (uint64_t)r->revocable << 8 |
                       (uint64_t)r->shared << 9 |
                       (uint64_t)(r->disk != NULL) << 10 |
                       (uint64_t)r->nresv << 16);
    for (uint32_t i = 0; i < r->nresv; i++) {
        const struct res_reservation *v = &r->resv[i];
        h = mix_int(h, (uint64_t)v->type);
        h = mix_bytes(h, v->role);
        h = mix_bytes(h, v->principal);
        for (uint32_t j = 0; j < v->nlabels; j++) {
            h = mix_bytes(h, v->labels[j].key);
            h = mix_bytes(h, v->labels[j].value);
        }
    }
    h = mix_bytes(h, r->alloc_role);
    h = mix_bytes(h, r->provider_id);
    h ^= a->names.key.k1;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static void slot_put(struct tindex *t, uint64_t h, uint32_t p)
{
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)h & mask;
    while (t->pos[i] != 0)
        i = (i + 1) & mask;
    t->pos[i] = p + 1;
    t->hash[i] = h;
    t->used++;
}

static struct tindex *index_get(struct alloc *a, struct alloc_agent *ag)
{
    if (ag->tix != NULL)
        return ag->tix;
    struct tindex *t = xcalloc(1, sizeof(*t));
    uint32_t cap = 64;
    while (cap < 4 * ag->total.n)
        cap *= 2;
    t->cap = cap;
    t->pos = xcalloc(cap, sizeof(*t->pos));
    t->hash = xcalloc(cap, sizeof(*t->hash));
    for (uint32_t i = 0; i < ag->total.n; i++)
        slot_put(t, identity_hash(a, &ag->total.v[i]), i);
    ag->tix = t;
    return t;
}

/* Position in ag->total of the entry with r's identity, or UINT32_MAX. */
static uint32_t index_find(struct alloc *a, struct alloc_agent *ag,
                           const struct resource *r, uint64_t h)
{
    struct tindex *t = index_get(a, ag);
    const res_list *l = &ag->total;
    uint32_t mask = t->cap - 1;
    for (uint32_t i = (uint32_t)h & mask; t->pos[i] != 0; i = (i + 1) & mask) {
        if (t->hash[i] != h)
            continue;
        uint32_t p = t->pos[i] - 1;
        uint32_t lo = p >= t->shift ? p - t->shift : 0;
        if (l->n == 0 || lo >= l->n)
            continue;
        if (p >= l->n)
            p = l->n - 1;
        for (uint32_t q = p + 1; q-- > lo;)
            if (res_same_identity(&l->v[q], r))
                return q;
    }
    return UINT32_MAX;
}

static bool indexable(const struct alloc_agent *ag, const struct resource *r)
{
    return ag->total.n >= TIX_MIN_ENTRIES && !r->shared && r->disk == NULL;
}

void alloc_total_sub(struct alloc *a, struct alloc_agent *ag,
                     const struct resource *r)
{
    if (!indexable(ag, r)) {
        res_list_sub(&ag->total, r);
        alloc_total_index_drop(ag);
        return;
    }
    if (res_is_empty(r))
        return;
    uint32_t q = index_find(a, ag, r, identity_hash(a, r));
    if (q == UINT32_MAX)
        return; /* res_list_sub would find nothing either */
    res_list *l = &ag->total;
    res_list one = {&l->v[q], 1, 1}; /* a view of the entry */
    res_list_sub(&one, r);
    if (one.n == 1)
        return;
    /* The entry was used up (and cleared): close the gap in order. */
    memmove(&l->v[q], &l->v[q + 1], (size_t)(l->n - q - 1) * sizeof(*l->v));
    l->n--;
    if (++ag->tix->shift > TIX_MAX_SHIFT)
        alloc_total_index_drop(ag);
}

void alloc_total_add(struct alloc *a, struct alloc_agent *ag,
                     const struct resource *r)
{
    if (!indexable(ag, r)) {
        res_list_add(&ag->total, r);
        alloc_total_index_drop(ag);
        return;
    }
    if (res_is_empty(r))
        return;
    uint64_t h = identity_hash(a, r);
    uint32_t q = index_find(a, ag, r, h);
    res_list *l = &ag->total;
    if (q != UINT32_MAX) {
        res_list one = {&l->v[q], 1, 1};
        res_list_add(&one, r); /* merges: same identity, not atomic */
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
    }
    res_copy(&l->v[l->n], r);
    struct tindex *t = ag->tix;
    if (2 * (t->used + 1) > t->cap) {
        l->n++;
        alloc_total_index_drop(ag);
        return;
    }
    slot_put(t, h, l->n);
    l->n++;
}
