/*
 * Registry copy: load the source whole into memory (a registry is at most
 * tens of MB), check the destination, then write it in bounded batches.
 */
#include "master/registry_copy.h"

#include "common/hmap.h"
#include "common/mem.h"
#include "master/registry_sqlite.h"
#include "master/registry_zk.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int registry_spec_parse(const char *spec, const struct registry_backend **be,
                        const char **where, char *err, size_t errlen)
{
    if (strncmp(spec, "sqlite:", 7) == 0 && spec[7] != '\0') {
        *be = &registry_sqlite_backend;
        *where = spec + 7;
        return 0;
    }
    if (strncmp(spec, "zk://", 5) == 0) {
        *be = &registry_zk_backend;
        *where = spec;
        return 0;
    }
    snprintf(err, errlen,
             "'%.200s' names no registry (expected sqlite:<work_dir> or "
             "zk://host:port/path)",
             spec);
    return -1;
}

struct item {
    char *kind;
    char *key;
    uint8_t *value;
    size_t len;
};

struct items {
    struct item *v;
    size_t n, cap;
};

static int collect(void *arg, const char *kind, const char *key,
                   const uint8_t *value, size_t len, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    struct items *it = arg;
    if (it->n == it->cap) {
        it->cap = it->cap ? 2 * it->cap : 64;
        it->v = xreallocarray(it->v, it->cap, sizeof(*it->v));
    }
    struct item *x = &it->v[it->n++];
    x->kind = xstrdup(kind);
    x->key = xstrdup(key);
    x->value = xmalloc(len ? len : 1);
    if (len > 0)
        memcpy(x->value, value, len);
    x->len = len;
    return 0;
}

static void items_free(struct items *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->v[i].kind);
        free(it->v[i].key);
        free(it->v[i].value);
    }
    free(it->v);
}

static char *item_name(const struct item *x)
{
    return xasprintf("%s\n%s", x->kind, x->key);
}

/* Apply ops[0..n) in writes of bounded size. */
static int write_all(const struct registry_backend *be, void *store,
                     const struct registry_op *ops, size_t n, char *err,
                     size_t errlen)
{
    size_t at = 0;
    while (at < n) {
        size_t k = 0, bytes = 0;
        while (at + k < n && k < REGISTRY_COPY_BATCH_OPS &&
               (k == 0 || bytes + ops[at + k].len + strlen(ops[at + k].key) <=
                              REGISTRY_COPY_BATCH_BYTES)) {
            bytes += ops[at + k].len + strlen(ops[at + k].key);
            k++;
        }
        if (be->apply(store, ops + at, k, REGISTRY_FAULT_NONE, err, errlen) !=
            0)
            return -1;
        at += k;
    }
    return 0;
}

int registry_copy(const struct registry_backend *from_be,
                  const char *from_where, const struct registry_backend *to_be,
                  const char *to_where, bool force, size_t *copied, char *err,
                  size_t errlen)
{
    struct items src = {0}, dst = {0};
    struct registry_op *ops = NULL;
    struct hmap *wanted = hmap_new();
    void *to = NULL;
    int ret = -1;
    char why[512];
    *copied = 0;

    void *from = from_be->open(from_where, why, sizeof(why));
    if (from == NULL) {
        snprintf(err, errlen, "source: %s", why);
        goto out;
    }
    int rc = from_be->load(from, collect, &src, why, sizeof(why));
    from_be->close(from);
    if (rc != 0) {
        snprintf(err, errlen, "source: %s", why);
        goto out;
    }
    to = to_be->open(to_where, why, sizeof(why));
    if (to == NULL || to_be->load(to, collect, &dst, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "destination: %s", why);
        goto out;
    }
    if (dst.n > 0 && !force) {
        snprintf(err, errlen,
                 "destination %.200s already holds %zu entities; refusing to "
                 "overwrite it (--force replaces its content)",
                 to_where, dst.n);
        goto out;
    }

    ops = xcalloc(src.n + dst.n + 1, sizeof(*ops));
    size_t n = 0;
    for (size_t i = 0; i < src.n; i++) {
        char *name = item_name(&src.v[i]);
        hmap_put(wanted, name, (void *)1);
        free(name);
    }
    for (size_t i = 0; i < dst.n; i++) {
        char *name = item_name(&dst.v[i]);
        if (hmap_get(wanted, name) == NULL)
            ops[n++] = (struct registry_op){.type = REGISTRY_OP_DELETE,
                                            .kind = dst.v[i].kind,
                                            .key = dst.v[i].key};
        free(name);
    }
    for (size_t i = 0; i < src.n; i++)
        ops[n++] = (struct registry_op){.type = REGISTRY_OP_PUT,
                                        .kind = src.v[i].kind,
                                        .key = src.v[i].key,
                                        .value = src.v[i].value,
                                        .len = src.v[i].len};
    if (write_all(to_be, to, ops, n, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "destination: %s", why);
        goto out;
    }
    *copied = src.n;
    ret = 0;
out:
    if (to != NULL)
        to_be->close(to);
    free(ops);
    hmap_free(wanted, NULL);
    items_free(&src);
    items_free(&dst);
    return ret;
}
