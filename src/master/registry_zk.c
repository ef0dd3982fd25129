/*
 * The registry's ZooKeeper backend. Layout under the URL's path P:
 *
 *     P/registry/version              "offerd registry format 1; <token>"
 *     P/registry/<kind>/<key escaped> 'I' + value, or 'C' + a chunk reference
 *     P/registry/chunks/<id>.<n>      part n of a value stored in chunks
 *
 * The version node is the guard. open sets it (any version), which bumps
 * its ZooKeeper version to V, and remembers V; each apply is one multi of
 * check(version, V), set(version, token), then the entity operations, and
 * remembers V + 1 once it committed. A master whose claim another master
 * replaced fails its check: ZBADVERSION, nothing written.
 *
 * Creates and sets: the handle keeps the name of every stored entity (read
 * at load, updated after each committed multi). No other master writes
 * while the claim holds, so that map is exact, and each put becomes a create
 * or a set, each delete of an absent key no operation at all.
 *
 * Sizes: ZooKeeper refuses a request above jute.maxbuffer (1 MiB - 1 by
 * default), a multi included. A value above REGISTRY_ZK_CHUNK_BYTES, or
 * whose bytes would take the multi past REGISTRY_ZK_MULTI_BYTES (largest
 * first), is written beforehand as chunk znodes under a name no one else
 * uses; the entity's znode, written in the multi, holds only the reference.
 * Chunks no entity refers to (a multi that failed, a master that died
 * between the two steps) are invisible to load and deleted by the next
 * open. The front groups at most group_bytes of batches, so most multis
 * need no chunk at all.
 *
 * A lost connection hides the outcome of a multi. The token the multi sets
 * on the version node tells: reading the node again shows our token (it
 * committed), the remembered version (it did not), or neither (another
 * master claimed the registry). The backend asks until the session timeout
 * passes, then fails closed: the apply fails and so does every later one.
 */
#include "master/registry_zk.h"

#include "common/hmap.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/zk_url.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* The synchronous API exists only in the multi-threaded client. */
#define THREADED 1
#include <zookeeper/zookeeper.h>

#define FORMAT_PREFIX      "offerd registry format "
#define DEFAULT_TIMEOUT_MS 10000
/* Room for an escaped key (3 bytes per byte) and the path before it. */
#define MAX_NAME (3 * REGISTRY_MAX_KEY_BYTES + 8)
/* What a multi operation costs beyond its path and data (ZooKeeper's
 * header, version, ACL, flags), rounded up. */
#define OP_OVERHEAD 96
/* An entity znode that refers to chunks: 'C', id (8), count (4), len (4). */
#define REF_BYTES 17

static atomic_int session_timeout_ms = DEFAULT_TIMEOUT_MS;

void registry_zk_set_session_timeout_ms(int ms)
{
    atomic_store(&session_timeout_ms, ms < 1000 ? 1000 : ms);
}

/* What the handle knows of one stored entity. */
struct entry {
    uint64_t chunk_id; /* 0: the value is inline */
    uint32_t nchunks;
};

struct zstore {
    zhandle_t *zh;
    char *hosts;
    char *auth; /* "user:pass" or NULL */
    char *base; /* P/registry */
    char *version_path;
    char *chunks_path;
    int timeout_ms;
    const struct ACL_vector *acl;

    pthread_mutex_t mu; /* the watcher's state, from the client's thread */
    pthread_cond_t cv;
    int state; /* last session state seen by the watcher */

    int32_t version;     /* the version node's, as we last set it */
    uint64_t claim;      /* the version open claimed: names our chunks */
    uint32_t seq;        /* chunk groups and tokens written since */
    struct hmap *stored; /* "<kind>/<name>" -> struct entry * */
    struct hmap *kinds;  /* kind nodes that exist -> (void *)1 */
    char broken[256];    /* non-empty: every apply fails with this */
    char *buf;           /* a znode's data, up to a chunk or an entity */
    size_t buflen;
};

/* ---- Names ---- */

static bool plain_byte(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

int registry_zk_escape(const char *key, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    if (key[0] == '\0') {
        if (outlen < 2)
            return -1;
        memcpy(out, "%", 2);
        return 0;
    }
    bool all_dots = strspn(key, ".") == strlen(key);
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        if (plain_byte(*p) && !(all_dots && *p == '.')) {
            if (n + 1 >= outlen)
                return -1;
            out[n++] = (char)*p;
        } else {
            if (n + 3 >= outlen)
                return -1;
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int registry_zk_unescape(const char *name, char *out, size_t outlen)
{
    if (strcmp(name, "%") == 0) {
        if (outlen < 1)
            return -1;
        out[0] = '\0';
        return 0;
    }
    size_t n = 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (hi < 0 || lo < 0)
                return -1;
            c = (char)(hi << 4 | lo);
            if (c == '\0')
                return -1;
            p += 2;
        } else if (!plain_byte((unsigned char)c)) {
            return -1;
        }
        if (n + 1 >= outlen)
            return -1;
        out[n++] = c;
    }
    out[n] = '\0';
    return n == 0 ? -1 : 0;
}

/* ---- The session ---- */

static void watcher(zhandle_t *zh, int type, int state, const char *path,
                    void *ctx)
{
    (void)zh;
    (void)path;
    struct zstore *st = ctx;
    if (type != ZOO_SESSION_EVENT)
        return;
    pthread_mutex_lock(&st->mu);
    st->state = state;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void deadline_ts(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

struct auth_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int rc;
};

static void auth_done(int rc, const void *data)
{
    struct auth_wait *w = (struct auth_wait *)data;
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Start a session and wait (up to the timeout) until it is connected and
 * the credentials, if any, are accepted. */
static int session_start(struct zstore *st, char *err, size_t errlen)
{
    pthread_mutex_lock(&st->mu);
    st->state = 0;
    pthread_mutex_unlock(&st->mu);
    st->zh = zookeeper_init(st->hosts, watcher, st->timeout_ms, NULL, st, 0);
    if (st->zh == NULL) {
        snprintf(err, errlen,
                 "registry: cannot start a ZooKeeper session "
                 "with %.200s: %s",
                 st->hosts, strerror(errno));
        return -1;
    }
    struct timespec ts;
    deadline_ts(&ts, st->timeout_ms);
    pthread_mutex_lock(&st->mu);
    int rc = 0;
    while (st->state != ZOO_CONNECTED_STATE && rc != ETIMEDOUT &&
           st->state != ZOO_EXPIRED_SESSION_STATE &&
           st->state != ZOO_AUTH_FAILED_STATE)
        rc = pthread_cond_timedwait(&st->cv, &st->mu, &ts);
    bool connected = st->state == ZOO_CONNECTED_STATE;
    pthread_mutex_unlock(&st->mu);
    if (!connected) {
        snprintf(err, errlen,
                 "registry: cannot reach ZooKeeper at %.200s within %d ms",
                 st->hosts, st->timeout_ms);
        return -1;
    }
    if (st->auth == NULL)
        return 0;
    struct auth_wait w = {.done = false, .rc = 0};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    rc = zoo_add_auth(st->zh, "digest", st->auth, (int)strlen(st->auth),
                      auth_done, &w);
    if (rc == ZOK) {
        deadline_ts(&ts, st->timeout_ms);
        pthread_mutex_lock(&w.mu);
        int wrc = 0;
        while (!w.done && wrc != ETIMEDOUT)
            wrc = pthread_cond_timedwait(&w.cv, &w.mu, &ts);
        rc = w.done ? w.rc : ZOPERATIONTIMEOUT;
        pthread_mutex_unlock(&w.mu);
    }
    if (rc != ZOK) {
        /* A completion still to come would use w: wait for it by closing
         * the session, which completes every pending request. */
        zookeeper_close(st->zh);
        st->zh = NULL;
    }
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    if (rc != ZOK) {
        snprintf(err, errlen,
                 "registry: ZooKeeper refused the zk URL's credentials (%s)",
                 zerror(rc));
        return -1;
    }
    return 0;
}

/* After ZSESSIONEXPIRED or ZINVALIDSTATE the handle is dead: start a new
 * session. Nothing of the registry depends on the session itself. */
static int session_renew(struct zstore *st, char *err, size_t errlen)
{
    if (st->zh != NULL)
        zookeeper_close(st->zh);
    st->zh = NULL;
    return session_start(st, err, errlen);
}

static bool session_dead(int rc)
{
    return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZAUTHFAILED;
}

/* Before a write: wait (up to the session timeout) for the session to be
 * connected, renewing it if it expired. A batch refused here was never
 * sent, so the store stays usable. */
static int wait_connected(struct zstore *st, char *err, size_t errlen)
{
    int state = 0;
    if (st->zh != NULL) {
        struct timespec ts;
        deadline_ts(&ts, st->timeout_ms);
        pthread_mutex_lock(&st->mu);
        int rc = 0;
        while (st->state != ZOO_CONNECTED_STATE &&
               st->state != ZOO_EXPIRED_SESSION_STATE &&
               st->state != ZOO_AUTH_FAILED_STATE && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        state = st->state;
        pthread_mutex_unlock(&st->mu);
        if (state == ZOO_CONNECTED_STATE)
            return 0;
    }
    char why[256];
    if (st->zh == NULL || state == ZOO_EXPIRED_SESSION_STATE) {
        if (session_renew(st, why, sizeof(why)) == 0)
            return 0;
    } else {
        snprintf(why, sizeof(why), "not connected to ZooKeeper for %d ms",
                 st->timeout_ms);
    }
    snprintf(err, errlen,
             "registry write failed: %s; the batch was not written", why);
    return -1;
}

/* ---- Opening ---- */

/* Create path if it is missing (its parent must exist). */
static int ensure_node(struct zstore *st, const char *path, char *err,
                       size_t errlen)
{
    int rc =
        zoo_create(st->zh, path, NULL, -1, st->acl, ZOO_PERSISTENT, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) {
        snprintf(err, errlen, "registry: cannot create %.300s in ZooKeeper: %s",
                 path, zerror(rc));
        return -1;
    }
    return 0;
}

/* Create every ancestor of path and path itself. */
static int ensure_path(struct zstore *st, const char *path, char *err,
                       size_t errlen)
{
    char *copy = xstrdup(path);
    int ret = 0;
    for (char *p = copy + 1; ret == 0 && *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        ret = ensure_node(st, copy, err, errlen);
        *p = '/';
    }
    if (ret == 0)
        ret = ensure_node(st, copy, err, errlen);
    free(copy);
    return ret;
}

static void free_entry(void *e)
{
    free(e);
}

static void store_close(void *handle)
{
    struct zstore *st = handle;
    if (st == NULL)
        return;
    if (st->zh != NULL)
        zookeeper_close(st->zh);
    hmap_free(st->stored, free_entry);
    hmap_free(st->kinds, NULL);
    pthread_cond_destroy(&st->cv);
    pthread_mutex_destroy(&st->mu);
    free(st->hosts);
    free(st->auth);
    free(st->base);
    free(st->version_path);
    free(st->chunks_path);
    free(st->buf);
    free(st);
}

/* The version node's data for a claim or an apply. */
static void version_text(const struct zstore *st, const char *what, char *out,
                         size_t outlen)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(out, outlen, FORMAT_PREFIX "%d; %s %llu.%u by pid %ld on %s",
             REGISTRY_ZK_FORMAT, what, (unsigned long long)st->claim, st->seq,
             (long)getpid(), host);
}

/* Check the version node's format, then claim it. */
static int claim(struct zstore *st, char *err, size_t errlen)
{
    int len = (int)st->buflen;
    struct Stat stat;
    int rc = zoo_get(st->zh, st->version_path, 0, st->buf, &len, &stat);
    if (rc == ZNONODE) {
        char text[512];
        version_text(st, "created", text, sizeof(text));
        rc = zoo_create(st->zh, st->version_path, text, (int)strlen(text),
                        st->acl, ZOO_PERSISTENT, NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS) {
            snprintf(err, errlen, "registry: cannot create %.300s: %s",
                     st->version_path, zerror(rc));
            return -1;
        }
        len = (int)st->buflen;
        rc = zoo_get(st->zh, st->version_path, 0, st->buf, &len, &stat);
    }
    if (rc != ZOK) {
        snprintf(err, errlen, "registry: cannot read %.300s: %s",
                 st->version_path, zerror(rc));
        return -1;
    }
    size_t pl = strlen(FORMAT_PREFIX);
    if (len < (int)pl || memcmp(st->buf, FORMAT_PREFIX, pl) != 0) {
        snprintf(err, errlen,
                 "registry: %.300s is not an offerd registry's version node; "
                 "refusing to start",
                 st->version_path);
        return -1;
    }
    char num[16] = "";
    size_t nl =
        (size_t)len - pl < sizeof(num) - 1 ? (size_t)len - pl : sizeof(num) - 1;
    memcpy(num, st->buf + pl, nl);
    long format = strtol(num, NULL, 10);
    if (format < 1 || format > REGISTRY_ZK_FORMAT) {
        snprintf(err, errlen,
                 "registry in ZooKeeper at %.300s has format %ld, this offerd "
                 "reads up to %d (written by a newer offerd?); refusing to "
                 "start",
                 st->base, format, REGISTRY_ZK_FORMAT);
        return -1;
    }
    char text[512];
    version_text(st, "claimed", text, sizeof(text));
    rc = zoo_set2(st->zh, st->version_path, text, (int)strlen(text), -1, &stat);
    if (rc != ZOK) {
        snprintf(err, errlen, "registry: cannot claim %.300s: %s",
                 st->version_path, zerror(rc));
        return -1;
    }
    st->version = stat.version;
    st->claim = (uint64_t)(uint32_t)stat.version;
    return 0;
}

static void *store_open(const char *where, char *err, size_t errlen)
{
    struct zstore *st = xcalloc(1, sizeof(*st));
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    st->stored = hmap_new();
    st->kinds = hmap_new();
    st->timeout_ms = atomic_load(&session_timeout_ms);
    st->buflen = REGISTRY_MAX_ENTITY_BYTES + 64;
    st->buf = xmalloc(st->buflen);
    struct zk_url *u = xmalloc(sizeof(*u));
    if (where == NULL || !zk_url_is_zk(where)) {
        snprintf(err, errlen,
                 "registry: '%.200s' is not a zk:// URL "
                 "(zk://host:port[,host:port]/path)",
                 where ? where : "");
        free(u);
        goto fail;
    }
    if (zk_url_parse(where, u, err, errlen) != 0) {
        free(u);
        goto fail;
    }
    st->hosts = xstrdup(u->hosts);
    st->auth = u->auth[0] ? xstrdup(u->auth) : NULL;
    st->acl = st->auth ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
    st->base = strcmp(u->path, "/") == 0 ? xstrdup("/registry")
                                         : xasprintf("%s/registry", u->path);
    free(u);
    st->version_path = xasprintf("%s/version", st->base);
    st->chunks_path = xasprintf("%s/chunks", st->base);
    if (session_start(st, err, errlen) != 0 ||
        ensure_path(st, st->base, err, errlen) != 0 ||
        ensure_node(st, st->chunks_path, err, errlen) != 0 ||
        claim(st, err, errlen) != 0)
        goto fail;
    log_info("registry: claimed %s in ZooKeeper (version %d)", st->base,
             (int)st->version);
    return st;

fail:
    store_close(st);
    return NULL;
}

/* ---- Loading ---- */

static void be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static void chunk_path(const struct zstore *st, uint64_t id, uint32_t n,
                       char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/%016llx.%u", st->chunks_path,
             (unsigned long long)id, n);
}

/* Read the chunks of a value of len bytes into out. */
static int read_chunks(struct zstore *st, uint64_t id, uint32_t nchunks,
                       uint8_t *out, size_t len, const char *what, char *err,
                       size_t errlen)
{
    size_t at = 0;
    for (uint32_t i = 0; i < nchunks; i++) {
        char p[512];
        chunk_path(st, id, i, p, sizeof(p));
        int got = (int)(len - at);
        int rc = zoo_get(st->zh, p, 0, (char *)out + at, &got, NULL);
        if (rc != ZOK || got < 0 || (size_t)got > len - at ||
            (got == 0 && i + 1 < nchunks)) {
            snprintf(err, errlen,
                     "registry in ZooKeeper is corrupt (%s: chunk %u of %u: "
                     "%s); refusing to start",
                     what, i, nchunks, rc != ZOK ? zerror(rc) : "bad size");
            return -1;
        }
        at += (size_t)got;
    }
    if (at != len) {
        snprintf(err, errlen,
                 "registry in ZooKeeper is corrupt (%s: chunks hold %zu bytes, "
                 "not %zu); refusing to start",
                 what, at, len);
        return -1;
    }
    return 0;
}

/* Reads in flight at once while loading: one round trip per window
 * instead of one per entity. */
#define LOAD_WINDOW 512

/* One entity znode being read; filled by the client's completion thread. */
struct get_slot {
    struct get_wait *wait;
    uint8_t *data; /* a copy of the znode's data */
    int len;
    int rc;
};

struct get_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int outstanding;
};

static void get_done(int rc, const char *value, int value_len,
                     const struct Stat *stat, const void *data)
{
    (void)stat;
    struct get_slot *slot = (struct get_slot *)data;
    struct get_wait *w = slot->wait;
    uint8_t *copy = NULL;
    if (rc == ZOK && value_len > 0) {
        copy = xmalloc((size_t)value_len);
        memcpy(copy, value, (size_t)value_len);
    }
    pthread_mutex_lock(&w->mu);
    slot->rc = rc;
    slot->data = copy;
    slot->len = rc == ZOK && value_len > 0 ? value_len : 0;
    if (--w->outstanding == 0)
        pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Hand one entity znode's data (d, len) to each(). */
static int load_one(struct zstore *st, const char *kind, const char *ename,
                    const uint8_t *d, int len, registry_load_fn each, void *arg,
                    struct hmap *live_chunks, char *err, size_t errlen)
{
    char key[REGISTRY_MAX_KEY_BYTES + 1];
    char what[REGISTRY_MAX_KEY_BYTES + 128];
    snprintf(what, sizeof(what), "%s '%.64s'", kind, ename);
    if (registry_zk_unescape(ename, key, sizeof(key)) != 0) {
        snprintf(err, errlen,
                 "registry in ZooKeeper is corrupt (%s is not an escaped "
                 "key); refusing to start",
                 what);
        return -1;
    }
    struct entry *e = xcalloc(1, sizeof(*e));
    uint8_t *big = NULL;
    const uint8_t *value;
    size_t vlen;
    if (len >= 1 && d[0] == 'I' &&
        (size_t)len - 1 <= REGISTRY_MAX_ENTITY_BYTES) {
        value = d + 1;
        vlen = (size_t)len - 1;
    } else if (len == REF_BYTES && d[0] == 'C') {
        e->chunk_id = get_be(d + 1, 8);
        e->nchunks = (uint32_t)get_be(d + 9, 4);
        vlen = (size_t)get_be(d + 13, 4);
        if (vlen > REGISTRY_MAX_ENTITY_BYTES || e->nchunks == 0 ||
            e->chunk_id == 0) {
            snprintf(err, errlen,
                     "registry in ZooKeeper is corrupt (%s: bad chunk "
                     "reference); refusing to start",
                     what);
            free(e);
            return -1;
        }
        big = xmalloc(vlen + 1);
        if (read_chunks(st, e->chunk_id, e->nchunks, big, vlen, what, err,
                        errlen) != 0) {
            free(big);
            free(e);
            return -1;
        }
        value = big;
        char id[32];
        snprintf(id, sizeof(id), "%016llx", (unsigned long long)e->chunk_id);
        hmap_put(live_chunks, id, (void *)1);
    } else {
        snprintf(err, errlen,
                 "registry in ZooKeeper is corrupt (%s: unknown value "
                 "format); refusing to start",
                 what);
        free(e);
        return -1;
    }
    char name[MAX_NAME + 64];
    snprintf(name, sizeof(name), "%s/%s", kind, ename);
    free(hmap_put(st->stored, name, e));
    int rc = each(arg, kind, key, value, vlen, err, errlen);
    free(big);
    return rc;
}

static int load_kind(struct zstore *st, const char *kind, registry_load_fn each,
                     void *arg, struct hmap *live_chunks, char *err,
                     size_t errlen)
{
    char *kpath = xasprintf("%s/%s", st->base, kind);
    struct String_vector names = {0, NULL};
    struct get_slot *slots = xcalloc(LOAD_WINDOW, sizeof(*slots));
    struct get_wait w = {.outstanding = 0};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    int ret = -1;
    int rc = zoo_get_children(st->zh, kpath, 0, &names);
    if (rc != ZOK) {
        snprintf(err, errlen, "registry: cannot list %.300s: %s", kpath,
                 zerror(rc));
        goto out;
    }
    hmap_put(st->kinds, kind, (void *)1);
    for (int at = 0; at < names.count; at += LOAD_WINDOW) {
        int n = names.count - at < LOAD_WINDOW ? names.count - at : LOAD_WINDOW;
        pthread_mutex_lock(&w.mu);
        w.outstanding = n;
        pthread_mutex_unlock(&w.mu);
        for (int i = 0; i < n; i++) {
            slots[i] = (struct get_slot){.wait = &w};
            char *p = xasprintf("%s/%s", kpath, names.data[at + i]);
            rc = zoo_aget(st->zh, p, 0, get_done, &slots[i]);
            free(p);
            if (rc != ZOK) /* no completion will come */
                get_done(rc, NULL, 0, NULL, &slots[i]);
        }
        /* Every request completes, with an error if the connection goes. */
        pthread_mutex_lock(&w.mu);
        while (w.outstanding > 0)
            pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
        int failed = 0;
        for (int i = 0; i < n && failed == 0; i++) {
            if (slots[i].rc != ZOK) {
                snprintf(err, errlen, "registry: cannot read %s '%.64s': %s",
                         kind, names.data[at + i], zerror(slots[i].rc));
                failed = 1;
            } else if (load_one(st, kind, names.data[at + i], slots[i].data,
                                slots[i].len, each, arg, live_chunks, err,
                                errlen) != 0) {
                failed = 1;
            }
        }
        for (int i = 0; i < n; i++)
            free(slots[i].data);
        if (failed)
            goto out;
    }
    ret = 0;
out:
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    free(slots);
    deallocate_String_vector(&names);
    free(kpath);
    return ret;
}

/* Delete chunks that no entity refers to (left by failed writes). */
static void drop_dead_chunks(struct zstore *st, const struct hmap *live)
{
    struct String_vector names = {0, NULL};
    if (zoo_get_children(st->zh, st->chunks_path, 0, &names) != ZOK)
        return;
    int dropped = 0;
    for (int i = 0; i < names.count; i++) {
        char id[32];
        snprintf(id, sizeof(id), "%.16s", names.data[i]);
        if (hmap_get(live, id) != NULL)
            continue;
        char *p = xasprintf("%s/%s", st->chunks_path, names.data[i]);
        if (zoo_delete(st->zh, p, -1) == ZOK)
            dropped++;
        free(p);
    }
    if (dropped > 0)
        log_info("registry: deleted %d chunks of unfinished writes", dropped);
    deallocate_String_vector(&names);
}

static int store_load(void *handle, registry_load_fn each, void *arg, char *err,
                      size_t errlen)
{
    struct zstore *st = handle;
    struct String_vector kinds = {0, NULL};
    int rc = zoo_get_children(st->zh, st->base, 0, &kinds);
    if (rc != ZOK) {
        snprintf(err, errlen, "registry: cannot list %.300s: %s", st->base,
                 zerror(rc));
        return -1;
    }
    struct hmap *live = hmap_new();
    int ret = 0;
    for (int i = 0; ret == 0 && i < kinds.count; i++) {
        if (strcmp(kinds.data[i], "version") == 0 ||
            strcmp(kinds.data[i], "chunks") == 0)
            continue;
        ret = load_kind(st, kinds.data[i], each, arg, live, err, errlen);
    }
    if (ret == 0)
        drop_dead_chunks(st, live);
    hmap_free(live, NULL);
    deallocate_String_vector(&kinds);
    return ret;
}

/* ---- Writing ---- */

/* One entity operation of a multi, planned. */
struct plan {
    const struct registry_op *op;
    char *path;     /* the entity's znode */
    char *name;     /* "<kind>/<escaped key>", the key of st->stored */
    bool exists;    /* the znode exists before this operation */
    bool chunked;   /* PUT: the value goes to chunks */
    uint64_t chunk; /* its chunk id once written */
    uint32_t nchunks;
    uint8_t ref[REF_BYTES];  /* PUT with chunks: the znode's data */
    const struct entry *old; /* what was stored before (may be NULL) */
    bool old_is_batch;       /* old was written earlier in this batch */
};

struct apply_ctx {
    struct zstore *st;
    struct plan *plans;
    size_t nplans;
    /* "<kind>/<name>" -> struct plan * of the last op on it in the batch. */
    struct hmap *last;
    /* Kinds whose node the multi creates. */
    char **new_kinds;
    size_t nnew_kinds;
    /* Chunk ids written for this batch (to delete if it fails). */
    uint64_t *written;
    uint32_t *written_n;
    size_t nwritten;
};

static size_t chunks_for(size_t len)
{
    return len == 0
               ? 1
               : (len + REGISTRY_ZK_CHUNK_BYTES - 1) / REGISTRY_ZK_CHUNK_BYTES;
}

/* Write a value's chunks under a fresh id; nothing refers to them yet. */
static int write_chunks(struct zstore *st, struct plan *pl, int *zrc)
{
    const struct registry_op *op = pl->op;
    st->seq++;
    pl->chunk = st->claim << 32 | st->seq;
    pl->nchunks = (uint32_t)chunks_for(op->len);
    for (uint32_t i = 0; i < pl->nchunks; i++) {
        char p[512];
        chunk_path(st, pl->chunk, i, p, sizeof(p));
        size_t at = (size_t)i * REGISTRY_ZK_CHUNK_BYTES;
        size_t n = op->len - at < REGISTRY_ZK_CHUNK_BYTES
                       ? op->len - at
                       : REGISTRY_ZK_CHUNK_BYTES;
        int rc = zoo_create(st->zh, p, (const char *)op->value + at, (int)n,
                            st->acl, ZOO_PERSISTENT, NULL, 0);
        if (rc != ZOK) {
            *zrc = rc;
            return -1;
        }
    }
    pl->ref[0] = 'C';
    be64(pl->ref + 1, pl->chunk);
    be32(pl->ref + 9, pl->nchunks);
    be32(pl->ref + 13, (uint32_t)op->len);
    return 0;
}

static void delete_chunks(struct zstore *st, uint64_t id, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        char p[512];
        chunk_path(st, id, i, p, sizeof(p));
        zoo_delete(st->zh, p, -1);
    }
}

struct sync_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    int rc;
};

static void sync_done(int rc, const char *value, const void *data)
{
    (void)value;
    struct sync_wait *w = (struct sync_wait *)data;
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    w->done = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* zoo_async (ZooKeeper's "sync"): after it, a read on this session sees
 * every write the ensemble committed before it, not a lagging server's
 * view. Every request completes (with an error when the connection goes),
 * so the wait ends. */
static int sync_version(struct zstore *st)
{
    struct sync_wait w = {.done = false, .rc = ZOK};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    int rc = zoo_async(st->zh, st->version_path, sync_done, &w);
    if (rc == ZOK) {
        pthread_mutex_lock(&w.mu);
        while (!w.done)
            pthread_cond_wait(&w.cv, &w.mu);
        rc = w.rc;
        pthread_mutex_unlock(&w.mu);
    }
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    return rc;
}

/* Outcome of asking the version node after a lost answer. */
enum outcome { COMMITTED, NOT_COMMITTED, CLAIMED, UNKNOWN };

static enum outcome resolve(struct zstore *st, const char *token, int32_t want)
{
    int64_t deadline = now_ms() + st->timeout_ms;
    char why[256];
    for (;;) {
        if (st->zh == NULL || zoo_state(st->zh) == ZOO_EXPIRED_SESSION_STATE)
            session_renew(st, why, sizeof(why));
        if (st->zh != NULL) {
            int len = (int)st->buflen;
            struct Stat stat;
            int rc = sync_version(st);
            if (rc == ZOK)
                rc = zoo_get(st->zh, st->version_path, 0, st->buf, &len, &stat);
            if (rc == ZOK) {
                if (len == (int)strlen(token) &&
                    memcmp(st->buf, token, (size_t)len) == 0)
                    return stat.version == want ? COMMITTED : CLAIMED;
                if (stat.version == st->version)
                    return NOT_COMMITTED;
                return CLAIMED;
            }
            if (session_dead(rc))
                session_renew(st, why, sizeof(why));
        }
        if (now_ms() >= deadline)
            return UNKNOWN;
        usleep(200 * 1000);
    }
}

static void ctx_free(struct apply_ctx *c)
{
    for (size_t i = 0; i < c->nplans; i++) {
        free(c->plans[i].path);
        free(c->plans[i].name);
    }
    free(c->plans);
    for (size_t i = 0; i < c->nnew_kinds; i++)
        free(c->new_kinds[i]);
    free(c->new_kinds);
    free(c->written);
    free(c->written_n);
    hmap_free(c->last, NULL);
}

/* The state of name before plan i: the last plan on it in the batch, or
 * what is stored. */
static void plan_prior(struct apply_ctx *c, struct plan *pl)
{
    struct plan *prev = hmap_get(c->last, pl->name);
    if (prev != NULL) {
        pl->exists = prev->op->type == REGISTRY_OP_PUT;
        pl->old = NULL;
        pl->old_is_batch = pl->exists;
    } else {
        const struct entry *e = hmap_get(c->st->stored, pl->name);
        pl->exists = e != NULL;
        pl->old = e;
    }
    hmap_put(c->last, pl->name, pl);
}

static size_t multi_bytes(const struct apply_ctx *c, size_t version_bytes)
{
    size_t total =
        2 * (strlen(c->st->version_path) + OP_OVERHEAD) + version_bytes;
    for (size_t i = 0; i < c->nnew_kinds; i++)
        total += strlen(c->st->base) + strlen(c->new_kinds[i]) + OP_OVERHEAD;
    for (size_t i = 0; i < c->nplans; i++) {
        const struct plan *pl = &c->plans[i];
        total += strlen(pl->path) + OP_OVERHEAD;
        if (pl->op->type == REGISTRY_OP_PUT)
            total += pl->chunked ? REF_BYTES : pl->op->len + 1;
        /* Old chunks deleted in the multi. */
        if (pl->old != NULL && pl->old->nchunks > 0)
            total += pl->old->nchunks * (strlen(c->st->chunks_path) + 48);
    }
    return total;
}

static void fail_closed(struct zstore *st, const char *why)
{
    snprintf(st->broken, sizeof(st->broken), "%s", why);
    log_error("registry: %s", why);
}

#define CLAIMED_MSG "registry claimed by another master"

static int store_apply(void *handle, const struct registry_op *ops, size_t nops,
                       enum registry_fault fault, char *err, size_t errlen)
{
    struct zstore *st = handle;
    if (st->broken[0] != '\0') {
        snprintf(err, errlen, "%s", st->broken);
        return -1;
    }
    if (wait_connected(st, err, errlen) != 0)
        return -1;
    struct apply_ctx c = {.st = st, .last = hmap_new()};
    c.plans = xcalloc(nops ? nops : 1, sizeof(*c.plans));
    int ret = -1;
    zoo_op_t *zops = NULL;
    zoo_op_result_t *results = NULL;
    char **extra = NULL; /* paths of old chunks deleted in the multi */
    size_t nextra = 0;

    /* Plan each operation against what is stored. */
    for (size_t i = 0; i < nops; i++) {
        struct plan *pl = &c.plans[c.nplans++];
        char esc[MAX_NAME];
        pl->op = &ops[i];
        if (registry_zk_escape(ops[i].key, esc, sizeof(esc)) != 0) {
            snprintf(err, errlen, "registry: %s key '%.64s' is too long",
                     ops[i].kind, ops[i].key);
            goto out;
        }
        pl->path = xasprintf("%s/%s/%s", st->base, ops[i].kind, esc);
        pl->name = xasprintf("%s/%s", ops[i].kind, esc);
        plan_prior(&c, pl);
        if (ops[i].type == REGISTRY_OP_PUT &&
            hmap_get(st->kinds, ops[i].kind) == NULL) {
            bool listed = false;
            for (size_t k = 0; k < c.nnew_kinds; k++)
                listed = listed || strcmp(c.new_kinds[k], ops[i].kind) == 0;
            if (!listed) {
                c.new_kinds = xreallocarray(c.new_kinds, c.nnew_kinds + 1,
                                            sizeof(char *));
                c.new_kinds[c.nnew_kinds++] = xstrdup(ops[i].kind);
            }
        }
        if (ops[i].type == REGISTRY_OP_PUT &&
            ops[i].len > REGISTRY_ZK_CHUNK_BYTES)
            pl->chunked = true;
    }

    char token[512];
    st->seq++;
    version_text(st, "applied", token, sizeof(token));
    size_t tlen = strlen(token);

    /* Move the largest values to chunks until the multi fits. */
    while (multi_bytes(&c, tlen) > REGISTRY_ZK_MULTI_BYTES) {
        struct plan *big = NULL;
        for (size_t i = 0; i < c.nplans; i++) {
            struct plan *pl = &c.plans[i];
            if (pl->op->type == REGISTRY_OP_PUT && !pl->chunked &&
                pl->op->len + 1 > REF_BYTES &&
                (big == NULL || pl->op->len > big->op->len))
                big = pl;
        }
        if (big == NULL) {
            snprintf(err, errlen,
                     "registry: a batch of %zu operations is too large for "
                     "one ZooKeeper request",
                     nops);
            goto out;
        }
        big->chunked = true;
    }

    /* Chunks first: invisible until the multi links them. */
    for (size_t i = 0; i < c.nplans; i++) {
        struct plan *pl = &c.plans[i];
        if (!pl->chunked)
            continue;
        int zrc = ZOK;
        int wrc = write_chunks(st, pl, &zrc);
        c.written = xreallocarray(c.written, c.nwritten + 1, sizeof(uint64_t));
        c.written_n =
            xreallocarray(c.written_n, c.nwritten + 1, sizeof(uint32_t));
        c.written[c.nwritten] = pl->chunk;
        c.written_n[c.nwritten++] = pl->nchunks;
        if (wrc != 0) {
            snprintf(err, errlen,
                     "registry write failed (chunk of %s '%.64s'): %s",
                     pl->op->kind, pl->op->key, zerror(zrc));
            goto out;
        }
    }

    /* The multi: guard, kinds, operations, old chunks. */
    size_t cap = 2 + c.nnew_kinds + c.nplans + 1;
    for (size_t i = 0; i < c.nplans; i++)
        if (c.plans[i].old != NULL)
            cap += c.plans[i].old->nchunks;
    zops = xcalloc(cap, sizeof(*zops));
    results = xcalloc(cap, sizeof(*results));
    extra = xcalloc(cap, sizeof(char *));
    size_t n = 0;
    zoo_check_op_init(&zops[n++], st->version_path, st->version);
    zoo_set_op_init(&zops[n++], st->version_path, token, (int)tlen, st->version,
                    NULL);
    char **kind_paths =
        xcalloc(c.nnew_kinds ? c.nnew_kinds : 1, sizeof(char *));
    for (size_t k = 0; k < c.nnew_kinds; k++) {
        kind_paths[k] = xasprintf("%s/%s", st->base, c.new_kinds[k]);
        zoo_create_op_init(&zops[n++], kind_paths[k], NULL, -1, st->acl,
                           ZOO_PERSISTENT, NULL, 0);
    }
    uint8_t **inline_bufs = xcalloc(c.nplans ? c.nplans : 1, sizeof(uint8_t *));
    for (size_t i = 0; i < c.nplans; i++) {
        struct plan *pl = &c.plans[i];
        if (pl->op->type == REGISTRY_OP_DELETE) {
            if (pl->exists)
                zoo_delete_op_init(&zops[n++], pl->path, -1);
        } else {
            const char *data;
            int dlen;
            if (pl->chunked) {
                data = (const char *)pl->ref;
                dlen = REF_BYTES;
            } else {
                inline_bufs[i] = xmalloc(pl->op->len + 1);
                inline_bufs[i][0] = 'I';
                if (pl->op->len > 0)
                    memcpy(inline_bufs[i] + 1, pl->op->value, pl->op->len);
                data = (const char *)inline_bufs[i];
                dlen = (int)pl->op->len + 1;
            }
            if (pl->exists)
                zoo_set_op_init(&zops[n++], pl->path, data, dlen, -1, NULL);
            else
                zoo_create_op_init(&zops[n++], pl->path, data, dlen, st->acl,
                                   ZOO_PERSISTENT, NULL, 0);
        }
        /* The stored value this operation replaces or removes: its chunks
         * go in the same multi. */
        if (pl->old != NULL && pl->old->nchunks > 0) {
            for (uint32_t k = 0; k < pl->old->nchunks; k++) {
                char p[512];
                chunk_path(st, pl->old->chunk_id, k, p, sizeof(p));
                extra[nextra] = xstrdup(p);
                zoo_delete_op_init(&zops[n++], extra[nextra++], -1);
            }
        }
    }
    /* A value chunked earlier in this batch and replaced later in it: its
     * chunks are never linked; they are deleted after the multi. */

    if (fault == REGISTRY_FAULT_EXIT)
        _exit(REGISTRY_FAULT_EXIT_CODE);
    if (fault == REGISTRY_FAULT_FAIL) {
        /* Every operation goes to ZooKeeper, and a check that cannot hold
         * makes it refuse the whole multi. */
        zoo_check_op_init(&zops[n++], st->version_path, INT32_MAX);
    }

    int rc = zoo_multi(st->zh, (int)n, zops, results);
    enum outcome outcome;
    if (rc == ZOK) {
        outcome = COMMITTED;
    } else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ||
               session_dead(rc)) {
        outcome = resolve(st, token, st->version + 1);
    } else {
        outcome = NOT_COMMITTED;
    }

    switch (outcome) {
    case COMMITTED:
        st->version++;
        for (size_t k = 0; k < c.nnew_kinds; k++)
            hmap_put(st->kinds, c.new_kinds[k], (void *)1);
        for (size_t i = 0; i < c.nplans; i++) {
            struct plan *pl = &c.plans[i];
            if (pl->op->type == REGISTRY_OP_DELETE) {
                free(hmap_del(st->stored, pl->name));
                continue;
            }
            struct entry *e = xcalloc(1, sizeof(*e));
            if (pl->chunked) {
                e->chunk_id = pl->chunk;
                e->nchunks = pl->nchunks;
            }
            free(hmap_put(st->stored, pl->name, e));
        }
        /* Chunks written for a value the batch itself replaced. */
        for (size_t w = 0; w < c.nwritten; w++) {
            bool linked = false;
            for (size_t i = 0; i < c.nplans && !linked; i++) {
                const struct entry *e = hmap_get(st->stored, c.plans[i].name);
                linked = e != NULL && e->chunk_id == c.written[w];
            }
            if (!linked)
                delete_chunks(st, c.written[w], c.written_n[w]);
        }
        c.nwritten = 0;
        ret = 0;
        break;
    case NOT_COMMITTED:
        if (fault == REGISTRY_FAULT_FAIL && rc != ZCONNECTIONLOSS &&
            results[n - 1].err == ZBADVERSION && results[0].err == ZOK) {
            snprintf(err, errlen, "injected failure");
        } else if (rc == ZBADVERSION && results[0].err == ZBADVERSION) {
            snprintf(err, errlen, CLAIMED_MSG);
            fail_closed(st, CLAIMED_MSG);
        } else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ||
                   session_dead(rc)) {
            snprintf(err, errlen,
                     "registry write failed: connection to ZooKeeper lost "
                     "(%s); the batch was not written",
                     zerror(rc));
        } else if (rc == ZNODEEXISTS || rc == ZNONODE) {
            /* The map of stored entities is wrong: only another writer
             * ignoring the guard could have done that. */
            snprintf(err, errlen,
                     "registry in ZooKeeper changed under this master (%s); "
                     "refusing further writes",
                     zerror(rc));
            fail_closed(st, err);
        } else {
            snprintf(err, errlen, "registry write failed: %s", zerror(rc));
        }
        break;
    case CLAIMED:
        snprintf(err, errlen, CLAIMED_MSG);
        fail_closed(st, CLAIMED_MSG);
        break;
    case UNKNOWN:
        snprintf(err, errlen,
                 "registry write failed: ZooKeeper unreachable for %d ms, "
                 "the batch's outcome is unknown; refusing further writes "
                 "(restart the master)",
                 st->timeout_ms);
        fail_closed(st, err);
        break;
    }
    for (size_t k = 0; k < c.nnew_kinds; k++)
        free(kind_paths[k]);
    free(kind_paths);
    for (size_t i = 0; i < c.nplans; i++)
        free(inline_bufs[i]);
    free(inline_bufs);

out:
    /* A failed batch's chunks (best effort: the next open drops what is
     * left). Not after an unknown outcome: they may be linked. */
    if (ret != 0 && st->broken[0] == '\0')
        for (size_t w = 0; w < c.nwritten; w++)
            delete_chunks(st, c.written[w], c.written_n[w]);
    for (size_t i = 0; i < nextra; i++)
        free(extra[i]);
    free(extra);
    free(zops);
    free(results);
    ctx_free(&c);
    return ret;
}

const struct registry_backend registry_zk_backend = {
    .name = "zk",
    .open = store_open,
    .load = store_load,
    .apply = store_apply,
    .close = store_close,
    .max_group_bytes = 256 * 1024,
};
