/*
 * The registry's in-memory backend (registry_mem.h): a process-wide list of
 * named stores, each a hash map from "<kind>\x1f<key>" to a copy of the
 * value. Kind names never hold the separator, so the composite key is
 * unique.
 *
 * One mutex guards the list and every store. The registry already uses a
 * store from one thread at a time; the mutex is for the test hooks, which
 * may look at a store while a worker commits to it. Commits are a few
 * memcpy, so holding it throughout is cheap.
 *
 * Atomicity: nothing in an apply can fail half-way (allocation failure
 * aborts the process), so the outcome is decided before any change: a
 * failing store, or an injected fault, changes nothing; otherwise every
 * operation is applied in order.
 */
#include "master/registry_mem.h"

#include "common/hmap.h"
#include "common/mem.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEP '\x1f'

struct entity {
    char *kind;
    char *key;
    uint8_t *value; /* NUL-terminated past len */
    size_t len;
};

struct mem_store {
    char *name;
    struct hmap *entities; /* "<kind>\x1f<key>" -> struct entity */
    bool open;             /* a registry holds it */
    bool failing;          /* commits fail (registry_mem_set_failing) */
    struct mem_store *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct mem_store *stores; /* under mu */

static char *composite(const char *kind, const char *key)
{
    return xasprintf("%s%c%s", kind, SEP, key);
}

static void entity_free(void *p)
{
    struct entity *e = p;
    if (e == NULL)
        return;
    free(e->kind);
    free(e->key);
    free(e->value);
    free(e);
}

/* Under mu. */
static struct mem_store *find(const char *name)
{
    for (struct mem_store *s = stores; s != NULL; s = s->next)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

/* Under mu. */
static struct mem_store *find_or_create(const char *name)
{
    struct mem_store *s = find(name);
    if (s == NULL) {
        s = xcalloc(1, sizeof(*s));
        s->name = xstrdup(name);
        s->entities = hmap_new();
        s->next = stores;
        stores = s;
    }
    return s;
}

/* Under mu. */
static void store_put(struct mem_store *s, const char *kind, const char *key,
                      const uint8_t *value, size_t len)
{
    struct entity *e = xcalloc(1, sizeof(*e));
    e->kind = xstrdup(kind);
    e->key = xstrdup(key);
    e->value = xmalloc(len + 1);
    if (len > 0)
        memcpy(e->value, value, len);
    e->value[len] = '\0';
    e->len = len;
    char *ck = composite(kind, key);
    entity_free(hmap_put(s->entities, ck, e));
    free(ck);
}

/* Under mu. */
static void store_del(struct mem_store *s, const char *kind, const char *key)
{
    char *ck = composite(kind, key);
    entity_free(hmap_del(s->entities, ck));
    free(ck);
}

/* Under mu: unlink and free s. */
static void store_destroy(struct mem_store *s)
{
    for (struct mem_store **p = &stores; *p != NULL; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            break;
        }
    }
    hmap_free(s->entities, entity_free);
    free(s->name);
    free(s);
}

/* ---- The backend ---- */

static void *mem_open(const char *where, char *err, size_t errlen)
{
    if (where == NULL || where[0] == '\0') {
        snprintf(err, errlen, "registry needs a memory store name");
        return NULL;
    }
    pthread_mutex_lock(&mu);
    struct mem_store *s = find_or_create(where);
    if (s->open) {
        snprintf(err, errlen,
                 "registry memory store '%s' is in use by another registry",
                 where);
        s = NULL;
    } else {
        s->open = true;
    }
    pthread_mutex_unlock(&mu);
    return s;
}

static int by_kind_key(const void *a, const void *b)
{
    const struct entity *x = *(struct entity *const *)a;
    const struct entity *y = *(struct entity *const *)b;
    int c = strcmp(x->kind, y->kind);
    return c != 0 ? c : strcmp(x->key, y->key);
}

static int mem_load(void *store, registry_load_fn each, void *arg, char *err,
                    size_t errlen)
{
    struct mem_store *s = store;
    int ret = 0;
    pthread_mutex_lock(&mu);
    size_t n = hmap_count(s->entities), i = 0, pos = 0;
    struct entity **all = xcalloc(n ? n : 1, sizeof(*all));
    void *val;
    while (hmap_next(s->entities, &pos, NULL, &val))
        all[i++] = val;
    qsort(all, n, sizeof(*all), by_kind_key);
    /* each() is the registry's decoder: it never calls back in here. */
    for (i = 0; i < n && ret == 0; i++)
        ret = each(arg, all[i]->kind, all[i]->key, all[i]->value, all[i]->len,
                   err, errlen);
    pthread_mutex_unlock(&mu);
    free(all);
    return ret;
}

static int mem_apply(void *store, const struct registry_op *ops, size_t nops,
                     enum registry_fault fault, char *err, size_t errlen)
{
    struct mem_store *s = store;
    int ret = 0;
    pthread_mutex_lock(&mu);
    if (s->failing) {
        snprintf(err, errlen,
                 "registry write failed (memory store unavailable)");
        ret = -1;
    } else if (fault == REGISTRY_FAULT_FAIL) {
        snprintf(err, errlen, "injected failure");
        ret = -1;
    } else if (fault == REGISTRY_FAULT_EXIT) {
        /* A crash before the commit: the process, and the store, go. */
        _exit(REGISTRY_FAULT_EXIT_CODE);
    } else {
        for (size_t i = 0; i < nops; i++) {
            if (ops[i].type == REGISTRY_OP_PUT)
                store_put(s, ops[i].kind, ops[i].key, ops[i].value, ops[i].len);
            else
                store_del(s, ops[i].kind, ops[i].key);
        }
    }
    pthread_mutex_unlock(&mu);
    return ret;
}

static void mem_close(void *store)
{
    struct mem_store *s = store;
    if (s == NULL)
        return;
    pthread_mutex_lock(&mu);
    s->open = false;
    pthread_mutex_unlock(&mu);
}

const struct registry_backend registry_mem_backend = {
    .name = "memory",
    .open = mem_open,
    .load = mem_load,
    .apply = mem_apply,
    .close = mem_close,
};

/* ---- Test hooks ---- */

int registry_mem_drop(const char *name)
{
    int ret = -1;
    pthread_mutex_lock(&mu);
    struct mem_store *s = find(name);
    if (s != NULL && !s->open) {
        store_destroy(s);
        ret = 0;
    }
    pthread_mutex_unlock(&mu);
    return ret;
}

void registry_mem_drop_all(void)
{
    pthread_mutex_lock(&mu);
    for (struct mem_store *s = stores, *next; s != NULL; s = next) {
        next = s->next;
        if (!s->open)
            store_destroy(s);
    }
    pthread_mutex_unlock(&mu);
}

long registry_mem_count(const char *name, const char *kind)
{
    long n = -1;
    pthread_mutex_lock(&mu);
    struct mem_store *s = find(name);
    if (s != NULL && kind == NULL) {
        n = (long)hmap_count(s->entities);
    } else if (s != NULL) {
        n = 0;
        size_t pos = 0;
        void *val;
        while (hmap_next(s->entities, &pos, NULL, &val))
            if (strcmp(((struct entity *)val)->kind, kind) == 0)
                n++;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

uint8_t *registry_mem_get(const char *name, const char *kind, const char *key,
                          size_t *len)
{
    uint8_t *copy = NULL;
    pthread_mutex_lock(&mu);
    struct mem_store *s = find(name);
    if (s != NULL) {
        char *ck = composite(kind, key);
        struct entity *e = hmap_get(s->entities, ck);
        free(ck);
        if (e != NULL) {
            copy = xmemdup(e->value, e->len + 1);
            *len = e->len;
        }
    }
    pthread_mutex_unlock(&mu);
    return copy;
}

void registry_mem_set(const char *name, const char *kind, const char *key,
                      const uint8_t *value, size_t len)
{
    pthread_mutex_lock(&mu);
    store_put(find_or_create(name), kind, key, value, len);
    pthread_mutex_unlock(&mu);
}

void registry_mem_set_failing(const char *name, bool failing)
{
    pthread_mutex_lock(&mu);
    find_or_create(name)->failing = failing;
    pthread_mutex_unlock(&mu);
}
