/*
 * hmap: string-keyed hash map with open addressing and backward-shift
 * deletion. The table keeps each key's hash, so growing never rehashes
 * strings and a probe compares strings only when the hashes match.
 *
 * Keys come from peers (task ids, framework-chosen names), so the hash is
 * SipHash-1-3 under the process's secret key: with an unkeyed hash a peer
 * can make ids that share one home slot, and linear probing then turns n
 * inserts into n^2/2 probes (tests/unit/test_hmap.c builds 100,000 such ids
 * for the FNV-1a this file used before).
 */
#include "common/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hmap_private.h"
#include "common/mem.h"
#include "common/siphash.h"

struct slot {
    char *key; /* NULL: empty */
    void *val;
    uint64_t hash;
};

struct hmap {
    struct slot *slots; /* NULL while the map is empty */
    size_t cap;         /* power of two, or 0 with no slots */
    size_t n;
    struct siphash_key key; /* the process's, copied at hmap_new */
    bool borrows;           /* keys are the caller's (hmap_new_borrowing) */
};

/* Slots examined by this thread's maps (see hmap_private.h). */
static _Thread_local uint64_t probes;

uint64_t hmap_probes(void)
{
    return probes;
}

size_t hmap_slot_bytes(const struct hmap *m)
{
    return m->cap * sizeof(struct slot);
}

static uint64_t hash_key(const struct hmap *m, const char *s)
{
    return siphash13(&m->key, s, strlen(s));
}

struct hmap *hmap_new(void)
{
    struct hmap *m = xcalloc(1, sizeof(*m));
    m->key = *siphash_process_key();
    /* No slots yet: most maps of an agent or a framework (its offers, its
     * executors, a framework's unreachable tasks) stay empty, and 16 slots
     * are 384 bytes; the first hmap_put makes them. */
    return m;
}

struct hmap *hmap_new_borrowing(void)
{
    struct hmap *m = hmap_new();
    m->borrows = true;
    return m;
}

void hmap_free(struct hmap *m, void (*free_val)(void *val))
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == NULL)
            continue;
        if (!m->borrows)
            free(m->slots[i].key);
        if (free_val != NULL)
            free_val(m->slots[i].val);
    }
    free(m->slots);
    free(m);
}

/* Index of key's slot, or of the empty slot where it would go. */
static size_t find(const struct hmap *m, const char *key, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)h & mask, n = 1;; i = (i + 1) & mask, n++) {
        const struct slot *s = &m->slots[i];
        if (s->key == NULL || (s->hash == h && strcmp(s->key, key) == 0)) {
            probes += n;
            return i;
        }
    }
}

void *hmap_get(const struct hmap *m, const char *key)
{
    if (m->n == 0)
        return NULL;
    const struct slot *s = &m->slots[find(m, key, hash_key(m, key))];
    return s->key != NULL ? s->val : NULL;
}

static void grow(struct hmap *m)
{
    size_t cap = m->cap > 0 ? m->cap * 2 : 16;
    struct slot *slots = xcalloc(cap, sizeof(*slots));
    for (size_t i = 0; i < m->cap; i++) {
        struct slot *s = &m->slots[i];
        if (s->key == NULL)
            continue;
        size_t j = (size_t)s->hash & (cap - 1);
        probes++;
        while (slots[j].key != NULL) {
            j = (j + 1) & (cap - 1);
            probes++;
        }
        slots[j] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

void *hmap_put(struct hmap *m, const char *key, void *val)
{
    uint64_t h = hash_key(m, key);
    if (m->cap == 0)
        grow(m);
    struct slot *s = &m->slots[find(m, key, h)];
    if (s->key != NULL) {
        void *old = s->val;
        s->val = val;
        if (m->borrows)
            s->key = (char *)key; /* the old one may go with old */
        return old;
    }
    if (2 * (m->n + 1) > m->cap) {
        grow(m);
        s = &m->slots[find(m, key, h)];
    }
    s->key = m->borrows ? (char *)key : xstrdup(key);
    s->val = val;
    s->hash = h;
    m->n++;
    return NULL;
}

void *hmap_del(struct hmap *m, const char *key)
{
    if (m->n == 0)
        return NULL;
    size_t mask = m->cap - 1;
    size_t i = find(m, key, hash_key(m, key));
    if (m->slots[i].key == NULL)
        return NULL;
    void *val = m->slots[i].val;
    if (!m->borrows)
        free(m->slots[i].key);
    /* Backward shift: pull later members of the probe chain into the hole
     * when their home slot is not in (hole, j]. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        struct slot *s = &m->slots[j];
        if (s->key == NULL)
            break;
        size_t home = (size_t)s->hash & mask;
        bool between =
            i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->slots[i] = *s;
            i = j;
        }
    }
    m->slots[i].key = NULL;
    m->slots[i].val = NULL;
    m->n--;
    if (m->n == 0) {
        /* Empty again (an agent's offers between cycles): no slots. */
        free(m->slots);
        m->slots = NULL;
        m->cap = 0;
    }
    return val;
}

size_t hmap_count(const struct hmap *m)
{
    return m->n;
}

bool hmap_next(const struct hmap *m, size_t *pos, const char **key, void **val)
{
    for (size_t i = *pos; i < m->cap; i++) {
        if (m->slots[i].key == NULL)
            continue;
        if (key != NULL)
            *key = m->slots[i].key;
        if (val != NULL)
            *val = m->slots[i].val;
        *pos = i + 1;
        return true;
    }
    *pos = m->cap;
    return false;
}
