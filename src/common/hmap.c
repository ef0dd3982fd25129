/*
 * hmap: string-keyed hash map with open addressing and backward-shift
 * deletion. The table keeps each key's hash, so growing never rehashes
 * strings and a probe compares strings only when the hashes match.
 */
#include "common/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

struct slot {
    char *key; /* NULL: empty */
    void *val;
    uint64_t hash;
};

struct hmap {
    struct slot *slots;
    size_t cap; /* power of two */
    size_t n;
};

/* FNV-1a 64, then a finalizer so that low bits spread for the mask. */
static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

struct hmap *hmap_new(void)
{
    struct hmap *m = xcalloc(1, sizeof(*m));
    m->cap = 16;
    m->slots = xcalloc(m->cap, sizeof(*m->slots));
    return m;
}

void hmap_free(struct hmap *m, void (*free_val)(void *val))
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == NULL)
            continue;
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
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        const struct slot *s = &m->slots[i];
        if (s->key == NULL || (s->hash == h && strcmp(s->key, key) == 0))
            return i;
    }
}

void *hmap_get(const struct hmap *m, const char *key)
{
    const struct slot *s = &m->slots[find(m, key, hash_key(key))];
    return s->key != NULL ? s->val : NULL;
}

static void grow(struct hmap *m)
{
    size_t cap = m->cap * 2;
    struct slot *slots = xcalloc(cap, sizeof(*slots));
    for (size_t i = 0; i < m->cap; i++) {
        struct slot *s = &m->slots[i];
        if (s->key == NULL)
            continue;
        size_t j = (size_t)s->hash & (cap - 1);
        while (slots[j].key != NULL)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

void *hmap_put(struct hmap *m, const char *key, void *val)
{
    uint64_t h = hash_key(key);
    struct slot *s = &m->slots[find(m, key, h)];
    if (s->key != NULL) {
        void *old = s->val;
        s->val = val;
        return old;
    }
    if (2 * (m->n + 1) > m->cap) {
        grow(m);
        s = &m->slots[find(m, key, h)];
    }
    s->key = xstrdup(key);
    s->val = val;
    s->hash = h;
    m->n++;
    return NULL;
}

void *hmap_del(struct hmap *m, const char *key)
{
    size_t mask = m->cap - 1;
    size_t i = find(m, key, hash_key(key));
    if (m->slots[i].key == NULL)
        return NULL;
    void *val = m->slots[i].val;
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
