/*
 * Offer filters: "client c refuses these resources on agent ag until t".
 *
 * Filters live with their agent, in an array sorted by client id, so the
 * filters of one client on one agent are adjacent and found by binary search.
 * Refused resource sets are shared between the filters of an agent that
 * refused the same thing (in Mesos's DeclineOffers benchmark every framework
 * ends up refusing the same leftover of every agent: one copy per agent, not
 * one per filter). Each client keeps the set of agents it has filters on, so
 * a revive touches only those agents.
 *
 * The per-agent bitmaps let the cycle skip a refusing client with one bit
 * test: fbits marks clients with any filter on the agent, cbits those with a
 * filter containing the agent's whole available resources (as of the cover
 * snapshot). When every eligible client is covered the whole agent is
 * skipped in O(clients / 64).
 *
 * Expiry: a->wake holds each agent's earliest filter expiry by agent
 * index; the cycle scans it for due agents and, as its walk reaches each
 * of them, alloc_filter_expire_agent() drops the due filters.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc_private.h"
#include "common/mem.h"

/* ---- Pointer sets ------------------------------------------------------- */

static uint32_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static void pset_grow(struct pset *s)
{
    uint32_t cap = s->cap ? 2 * s->cap : 8;
    void **slots = xcalloc(cap, sizeof(*slots));
    for (uint32_t i = 0; i < s->cap; i++) {
        void *p = s->slots[i];
        if (p == NULL)
            continue;
        uint32_t j = ptr_hash(p) & (cap - 1);
        while (slots[j] != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = p;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
}

void pset_add(struct pset *s, void *p)
{
    if (2 * (s->n + 1) > s->cap)
        pset_grow(s);
    uint32_t mask = s->cap - 1;
    uint32_t i = ptr_hash(p) & mask;
    while (s->slots[i] != NULL) {
        if (s->slots[i] == p)
            return;
        i = (i + 1) & mask;
    }
    s->slots[i] = p;
    s->n++;
}

void pset_del(struct pset *s, void *p)
{
    if (s->cap == 0)
        return;
    uint32_t mask = s->cap - 1;
    uint32_t i = ptr_hash(p) & mask;
    while (s->slots[i] != p) {
        if (s->slots[i] == NULL)
            return;
        i = (i + 1) & mask;
    }
    /* Backward-shift deletion keeps probe chains intact without tombstones. */
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        void *q = s->slots[j];
        if (q == NULL)
            break;
        uint32_t home = ptr_hash(q) & mask;
        /* q may move into the hole at i if its home is not in (i, j]. */
        bool between =
            i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            s->slots[i] = q;
            i = j;
        }
    }
    s->slots[i] = NULL;
    s->n--;
}

/* Ask for the slot where p's probe in s starts (a later pset_del of p
 * then finds it in cache). A macro, not a function: GCC deems a function
 * holding only a prefetch free of side effects and deletes its calls (as
 * a static function this one was gone from the binary, and each deletion
 * waited for its slot; see PREFETCH_AGENTS in alloc.c). */
#define PSET_PREFETCH(s, p)                                                    \
    do {                                                                       \
        const struct pset *s_ = (s);                                           \
        if (s_->cap > 0)                                                       \
            __builtin_prefetch(&s_->slots[ptr_hash(p) & (s_->cap - 1)]);       \
    } while (0)

void pset_free(struct pset *s)
{
    free(s->slots);
    memset(s, 0, sizeof(*s));
}

/* ---- Bitmaps ------------------------------------------------------------ */

static void bits_ensure(struct alloc_agent *ag, uint32_t id)
{
    uint32_t need = id / 64 + 1;
    if (need <= ag->nwords)
        return;
    if (ag->fbits == NULL) {
        /* First use: the words inside the struct. */
        ag->fbits = ag->bits_inline;
        ag->cbits = ag->bits_inline + ALLOC_INLINE_WORDS;
        memset(ag->bits_inline, 0, sizeof(ag->bits_inline));
        ag->nwords = ALLOC_INLINE_WORDS;
        if (need <= ag->nwords)
            return;
    }
    uint32_t n = need < 2 * ag->nwords ? 2 * ag->nwords : need;
    uint64_t *f = xcalloc(n, sizeof(*f)), *c = xcalloc(n, sizeof(*c));
    memcpy(f, ag->fbits, ag->nwords * sizeof(uint64_t));
    memcpy(c, ag->cbits, ag->nwords * sizeof(uint64_t));
    if (ag->fbits != ag->bits_inline) {
        free(ag->fbits);
        free(ag->cbits);
    }
    ag->fbits = f;
    ag->cbits = c;
    ag->nwords = n;
}

static void bit_set(uint64_t *bits, uint32_t id)
{
    bits[id / 64] |= 1ULL << (id % 64);
}

static void bit_clear(uint64_t *bits, uint32_t nwords, uint32_t id)
{
    if (id / 64 < nwords)
        bits[id / 64] &= ~(1ULL << (id % 64));
}

/* ---- Expiry ----------------------------------------------------------- */

/* Record ag's earliest expiry where the cycle looks for due agents: one
 * contiguous array by agent index, so that finding them touches no agent
 * struct. (A min-heap of agents did the same job; the cycle popped 10,000
 * entries and then loaded each agent's struct, filters and refused sets in
 * a pass of its own, where now the walk over the agent pays those loads
 * once for both jobs.) */
static void wake_update(struct alloc *a, const struct alloc_agent *ag)
{
    a->wake[ag->index] = ag->nfilters == 0 ? INT64_MAX : ag->min_expires;
}

static void recompute_min_expires(struct alloc_agent *ag)
{
    int64_t m = INT64_MAX;
    for (uint32_t i = 0; i < ag->nfilters; i++)
        if (ag->filters[i].expires < m)
            m = ag->filters[i].expires;
    ag->min_expires = m;
}

/* ---- Refused sets ------------------------------------------------------- */

static uint32_t rset_get(struct alloc_agent *ag, const res_list *refused)
{
    uint32_t free_slot = UINT32_MAX;
    for (uint32_t i = 0; i < ag->nrsets; i++) {
        struct rset *rs = &ag->rsets[i];
        if (rs->refs == 0) {
            if (free_slot == UINT32_MAX)
                free_slot = i;
            continue;
        }
        if (res_list_equal(&rs->res, refused)) {
            rs->refs++;
            return i;
        }
    }
    if (free_slot == UINT32_MAX) {
        ag->rsets =
            xreallocarray(ag->rsets, ag->nrsets + 1, sizeof(*ag->rsets));
        free_slot = ag->nrsets++;
        memset(&ag->rsets[free_slot], 0, sizeof(ag->rsets[free_slot]));
    }
    struct rset *rs = &ag->rsets[free_slot];
    res_list_copy(&rs->res, refused);
    rs->refs = 1;
    return free_slot;
}

static void rset_put(struct alloc_agent *ag, uint32_t i)
{
    struct rset *rs = &ag->rsets[i];
    if (--rs->refs == 0)
        res_list_clear(&rs->res);
}

/* ---- Filters ------------------------------------------------------------ */

/* First index in ag->filters whose client id is >= id. */
static uint32_t filters_lower(const struct alloc_agent *ag, uint32_t id)
{
    uint32_t lo = 0, hi = ag->nfilters;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ag->filters[mid].client < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void alloc_filter_add(struct alloc *a, struct alloc_agent *ag, struct client *c,
                      const res_list *refused, int64_t expires)
{
    /* The first filter of an agent starts its cover snapshot. */
    if (ag->nfilters == 0 && ag->cover_valid)
        res_list_copy(&ag->cover_snap, &ag->available);

    uint32_t i = filters_lower(ag, c->id + 1); /* after c's other filters */
    if (ag->nfilters == ag->capfilters) {
        ag->capfilters = ag->capfilters ? 2 * ag->capfilters : 4;
        ag->filters =
            xreallocarray(ag->filters, ag->capfilters, sizeof(*ag->filters));
    }
    memmove(ag->filters + i + 1, ag->filters + i,
            (ag->nfilters - i) * sizeof(*ag->filters));
    ag->filters[i].client = c->id;
    ag->filters[i].rset = rset_get(ag, refused);
    ag->filters[i].expires = expires;
    ag->nfilters++;

    bits_ensure(ag, c->id);
    bit_set(ag->fbits, c->id);
    if (ag->cover_valid &&
        res_list_contains(&ag->rsets[ag->filters[i].rset].res, &ag->cover_snap))
        bit_set(ag->cbits, c->id);

    pset_add(&c->fagents, ag);
    c->nfilters++;
    a->filters_alive++;
    if (expires < ag->min_expires)
        ag->min_expires = expires;
    wake_update(a, ag);
}

/* Recompute client id's bits on ag from its remaining filters. */
static void refresh_client_bits(struct alloc_agent *ag, uint32_t id)
{
    uint32_t i = filters_lower(ag, id);
    bool any = i < ag->nfilters && ag->filters[i].client == id;
    if (!any) {
        bit_clear(ag->fbits, ag->nwords, id);
        bit_clear(ag->cbits, ag->nwords, id);
        return;
    }
    bit_clear(ag->cbits, ag->nwords, id);
    if (!ag->cover_valid)
        return;
    for (; i < ag->nfilters && ag->filters[i].client == id; i++) {
        if (res_list_contains(&ag->rsets[ag->filters[i].rset].res,
                              &ag->cover_snap)) {
            bit_set(ag->cbits, id);
            return;
        }
    }
}

/* Remove every filter of client c on ag. */
static void remove_client_on_agent(struct alloc *a, struct alloc_agent *ag,
                                   struct client *c)
{
    uint32_t i = filters_lower(ag, c->id), j = i;
    while (j < ag->nfilters && ag->filters[j].client == c->id) {
        rset_put(ag, ag->filters[j].rset);
        j++;
    }
    if (j == i)
        return;
    memmove(ag->filters + i, ag->filters + j,
            (ag->nfilters - j) * sizeof(*ag->filters));
    ag->nfilters -= j - i;
    c->nfilters -= j - i;
    a->filters_alive -= j - i;
    bit_clear(ag->fbits, ag->nwords, c->id);
    bit_clear(ag->cbits, ag->nwords, c->id);
    recompute_min_expires(ag);
    wake_update(a, ag);
    alloc_agent_touch(a, ag);
}

void alloc_filter_remove_client(struct alloc *a, struct client *c)
{
    for (uint32_t i = 0; i < c->fagents.cap; i++) {
        struct alloc_agent *ag = c->fagents.slots[i];
        if (ag != NULL)
            remove_client_on_agent(a, ag, c);
    }
    pset_free(&c->fagents);
}

void alloc_filter_remove_agent(struct alloc *a, struct alloc_agent *ag)
{
    for (uint32_t i = 0; i < ag->nfilters; i++) {
        struct client *c = a->clients[ag->filters[i].client];
        c->nfilters--;
        a->filters_alive--;
        if (i + 1 == ag->nfilters || ag->filters[i + 1].client != c->id)
            pset_del(&c->fagents, ag);
    }
    for (uint32_t i = 0; i < ag->nrsets; i++)
        res_list_clear(&ag->rsets[i].res);
    free(ag->rsets);
    ag->rsets = NULL;
    ag->nrsets = 0;
    ag->nfilters = 0;
    if (ag->nwords > 0) {
        memset(ag->fbits, 0, ag->nwords * sizeof(uint64_t));
        memset(ag->cbits, 0, ag->nwords * sizeof(uint64_t));
    }
    ag->min_expires = INT64_MAX;
    wake_update(a, ag);
}

/* Expiry takes agents out of their clients' sets a few deletions late:
 * each deletion's slot is prefetched when it is queued, so the cache
 * misses of a cycle's thousands of deletions overlap. Until
 * alloc_filter_expire_flush the sets may still name an agent a client no
 * longer has filters on, which only a revive or a client's removal reads,
 * and neither happens inside a cycle. */
static void fagents_del_later(struct alloc *a, struct client *c,
                              struct alloc_agent *ag)
{
    struct fdel *q = a->fdel;
    uint32_t k = a->nfdel % ALLOC_FDEL_LAG;
    if (a->nfdel >= ALLOC_FDEL_LAG)
        pset_del(&a->clients[q[k].client]->fagents, q[k].ag);
    PSET_PREFETCH(&c->fagents, ag);
    q[k].client = c->id;
    q[k].ag = ag;
    a->nfdel++;
}

void alloc_filter_expire_flush(struct alloc *a)
{
    uint32_t n = a->nfdel < ALLOC_FDEL_LAG ? a->nfdel : ALLOC_FDEL_LAG;
    for (uint32_t i = 0; i < n; i++)
        pset_del(&a->clients[a->fdel[i].client]->fagents, a->fdel[i].ag);
    a->nfdel = 0;
}

void alloc_filter_expire_agent(struct alloc *a, struct alloc_agent *ag,
                               int64_t now)
{
    if (!alloc_filter_due(ag, now))
        return;
    /* Clients that lost a filter (filters are sorted by client id, so
     * repeats are adjacent); past the buffer, every client is refreshed. */
    uint32_t lost[32], nlost = 0;
    bool all = false;
    uint32_t out = 0;
    int64_t next = INT64_MAX;
    for (uint32_t i = 0; i < ag->nfilters; i++) {
        struct ofilter f = ag->filters[i];
        if (f.expires > now) {
            ag->filters[out++] = f;
            if (f.expires < next)
                next = f.expires;
            continue;
        }
        struct client *c = a->clients[f.client];
        rset_put(ag, f.rset);
        c->nfilters--;
        a->filters_alive--;
        if (nlost > 0 && lost[nlost - 1] == f.client)
            continue;
        if (nlost < sizeof(lost) / sizeof(lost[0]))
            lost[nlost++] = f.client;
        else
            all = true;
    }
    uint32_t before = ag->nfilters;
    ag->nfilters = out;
    if (out != before) {
        if (all) {
            for (uint32_t w = 0; w < ag->nwords; w++) {
                uint64_t bits = ag->fbits[w];
                while (bits != 0) {
                    uint32_t id = w * 64 + (uint32_t)__builtin_ctzll(bits);
                    bits &= bits - 1;
                    refresh_client_bits(ag, id);
                    if (!alloc_bit_get(ag->fbits, ag->nwords, id))
                        fagents_del_later(a, a->clients[id], ag);
                }
            }
        } else {
            for (uint32_t k = 0; k < nlost; k++) {
                refresh_client_bits(ag, lost[k]);
                if (!alloc_bit_get(ag->fbits, ag->nwords, lost[k]))
                    fagents_del_later(a, a->clients[lost[k]], ag);
            }
        }
        a->quiet[ag->index] = 0; /* may no longer be all covered */
    }
    ag->min_expires = next;
    wake_update(a, ag);
}

void alloc_filter_refresh_cover(struct alloc *a, struct alloc_agent *ag)
{
    (void)a;
    ag->cover_valid = true;
    if (ag->nwords > 0)
        memset(ag->cbits, 0, ag->nwords * sizeof(uint64_t));
    if (ag->nfilters == 0) {
        res_list_clear(&ag->cover_snap);
        return;
    }
    res_list_copy(&ag->cover_snap, &ag->available);
    /* One containment test per distinct refused set, not per filter. */
    bool stack_covers[64];
    bool *covers =
        ag->nrsets <= 64 ? stack_covers : xcalloc(ag->nrsets, sizeof(bool));
    for (uint32_t i = 0; i < ag->nrsets; i++)
        covers[i] = ag->rsets[i].refs > 0 &&
                    res_list_contains(&ag->rsets[i].res, &ag->cover_snap);
    for (uint32_t i = 0; i < ag->nfilters; i++)
        if (covers[ag->filters[i].rset])
            bit_set(ag->cbits, ag->filters[i].client);
    if (covers != stack_covers)
        free(covers);
}

bool alloc_filter_blocks(const struct alloc_agent *ag, const struct client *c,
                         const res_list *offer)
{
    for (uint32_t i = filters_lower(ag, c->id);
         i < ag->nfilters && ag->filters[i].client == c->id; i++)
        if (res_list_contains(&ag->rsets[ag->filters[i].rset].res, offer))
            return true;
    return false;
}

void alloc_filter_available_grew(struct alloc_agent *ag)
{
    if (!ag->cover_valid || ag->nfilters == 0)
        return;
    if (!res_list_contains(&ag->cover_snap, &ag->available))
        ag->cover_valid = false;
}
