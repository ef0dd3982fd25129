/*
 * Interned scalar resource names and dense quantity vectors. Shares, quota
 * and headroom are sums over scalar names; interning turns each sum into an
 * array indexed by a small integer, so the cycle never compares strings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/alloc_private.h"
#include "common/mem.h"
#include "common/siphash.h"

uint32_t alloc_str_hash(const struct siphash_key *key, const char *s)
{
    return (uint32_t)siphash13(key, s, strlen(s));
}

void alloc_names_init(struct alloc_names *t)
{
    memset(t, 0, sizeof(*t));
    t->key = *siphash_process_key();
}

void alloc_names_free(struct alloc_names *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->v[i]);
    memset(t, 0, sizeof(*t));
}

int32_t alloc_name_find(const struct alloc_names *t, const char *name)
{
    uint32_t mask = ALLOC_NAME_SLOTS - 1;
    for (uint32_t i = alloc_str_hash(&t->key, name) & mask;;
         i = (i + 1) & mask) {
        uint32_t s = t->slots[i];
        if (s == 0)
            return -1;
        if (strcmp(t->v[s - 1], name) == 0)
            return (int32_t)(s - 1);
    }
}

/* Put id in its slot (the table is at most half full: there is a free one). */
static void names_place(struct alloc_names *t, uint32_t id)
{
    uint32_t mask = ALLOC_NAME_SLOTS - 1;
    uint32_t i = alloc_str_hash(&t->key, t->v[id]) & mask;
    while (t->slots[i] != 0)
        i = (i + 1) & mask;
    t->slots[i] = (uint8_t)(id + 1);
}

int32_t alloc_name_intern(struct alloc_names *t, const char *name)
{
    int32_t found = alloc_name_find(t, name);
    if (found >= 0)
        return found;
    if (t->n == ALLOC_MAX_NAMES)
        return -1;
    uint32_t id = t->n++;
    t->v[id] = xstrdup(name);
    names_place(t, id);
    return (int32_t)id;
}

/* Forget the names interned after the first n. */
static void names_truncate(struct alloc_names *t, uint32_t n)
{
    if (t->n == n)
        return;
    for (uint32_t id = n; id < t->n; id++)
        free(t->v[id]);
    t->n = n;
    memset(t->slots, 0, sizeof(t->slots));
    for (uint32_t id = 0; id < n; id++)
        names_place(t, id);
}

int alloc_names_admit(struct alloc_names *t, const res_list *l)
{
    uint32_t n0 = t->n;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].type == RES_SCALAR &&
            alloc_name_intern(t, l->v[i].name) < 0) {
            names_truncate(t, n0);
            return -1;
        }
    }
    return 0;
}

int alloc_names_admit_quantities(struct alloc_names *t,
                                 const struct alloc_quantities *q, uint32_t nq)
{
    uint32_t n0 = t->n;
    for (uint32_t k = 0; k < nq; k++) {
        for (uint32_t i = 0; i < q[k].n; i++) {
            if (alloc_name_intern(t, q[k].v[i].name) < 0) {
                names_truncate(t, n0);
                return -1;
            }
        }
    }
    return 0;
}

void qvec_free(struct qvec *q)
{
    free(q->v);
    q->v = NULL;
    q->n = 0;
}

void qvec_add_slow(struct qvec *q, uint32_t id, int64_t delta)
{
    if (id >= q->n) {
        if (delta == 0)
            return;
        uint32_t n = id + 1 < 4 ? 4 : id + 1;
        q->v = xreallocarray(q->v, n, sizeof(*q->v));
        memset(q->v + q->n, 0, (n - q->n) * sizeof(*q->v));
        q->n = n;
    }
    q->v[id] = qvec_sat_add(q->v[id], delta);
}

bool qvec_is_zero(const struct qvec *q)
{
    for (uint32_t i = 0; i < q->n; i++)
        if (q->v[i] != 0)
            return false;
    return true;
}

void qvec_copy(struct qvec *dst, const struct qvec *src)
{
    if (dst->n < src->n) {
        dst->v = xreallocarray(dst->v, src->n, sizeof(*dst->v));
        dst->n = src->n;
    }
    if (src->n > 0)
        memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
    for (uint32_t i = src->n; i < dst->n; i++)
        dst->v[i] = 0;
}

void qvec_add_res(const struct alloc_names *t, struct qvec *q,
                  const res_list *l, int sign,
                  bool (*pred)(const struct resource *))
{
    for (uint32_t i = 0; i < l->n; i++) {
        const struct resource *r = &l->v[i];
        if (r->type != RES_SCALAR || (pred != NULL && !pred(r)))
            continue;
        int64_t amount = r->scalar;
        int32_t id = alloc_name_find(t, r->name);
        /* A shared resource counts once, however many copies are held. */
        if (id >= 0)
            qvec_add(q, (uint32_t)id, sign * amount);
    }
}

void qvec_to_qlist(const struct alloc_names *t, const struct qvec *q,
                   struct alloc_qlist *out)
{
    out->n = 0;
    out->v = NULL;
    uint32_t n = 0;
    for (uint32_t i = 0; i < q->n; i++)
        n += q->v[i] != 0;
    if (n == 0)
        return;
    out->v = xcalloc(n, sizeof(*out->v));
    for (uint32_t i = 0; i < q->n && i < t->n; i++) {
        if (q->v[i] == 0)
            continue;
        out->v[out->n].name = t->v[i];
        out->v[out->n].milli = q->v[i];
        out->n++;
    }
}

void qvec_from_quantities(const struct alloc_names *t, struct qvec *q,
                          const struct alloc_quantities *in)
{
    for (uint32_t i = 0; i < q->n; i++)
        q->v[i] = 0;
    if (in == NULL)
        return;
    for (uint32_t i = 0; i < in->n; i++) {
        int32_t id = alloc_name_find(t, in->v[i].name);
        if (id >= 0)
            qvec_add(q, (uint32_t)id, in->v[i].milli);
    }
}

bool alloc_res_is_unreserved_nonrevocable(const struct resource *r)
{
    return r->nresv == 0 && !r->revocable;
}

bool alloc_res_is_reserved(const struct resource *r)
{
    return r->nresv > 0;
}
