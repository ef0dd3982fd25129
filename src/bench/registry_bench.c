/*
 * offerd-registry-bench: how fast the master's registry makes changes
 * durable. Every batch holds one agent entity (the commonest registry write:
 * an agent admitted or updated); each run applies N of them through the
 * real front and SQLite backend in a fresh directory and reports batches
 * and commits (fsynced transactions) per second and the latency from
 * registry_apply() to the done callback on the loop:
 *
 *  - serial: one batch in flight, the next applied from the previous one's
 *    done callback (a lone client; no group commit is possible);
 *  - no group commit: W batches in flight, max_group = 1 (one fsync each);
 *  - group commit: W batches in flight, the default max_group.
 *
 * Last, it times registry_open() of a store of M agents (integrity_check,
 * checksums, decoding): the master's start-up cost.
 *
 * The figures depend on the disk's fsync; the file system of the directory
 * is printed with them (tmpfs makes fsync free and the figures meaningless).
 *
 * With --zk the same runs go to the ZooKeeper backend instead (each run in
 * a fresh znode path, removed afterwards): --zk=URL uses a running
 * ensemble, --zk=start launches one server and --zk=start3 an ensemble of
 * three on this machine through the tests' harness (tests/zk).
 *
 * Usage: offerd-registry-bench [--quick] [--n=N] [--entity=BYTES]
 *                              [--dir=PATH] [--zk=URL|start|start3]
 *                              [--open=M]
 */
#include "common/clock.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/registry.h"
#include "master/registry_sqlite.h"
#include "common/zk_url.h"
#include "master/registry_zk.h"
#include "mesos/v1/mesos.pb-c.h"
#include "zk_harness.h"

#include <event2/event.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#define THREADED 1
#include <zookeeper/zookeeper.h>

struct run {
    struct event_base *base;
    struct registry *reg;
    const char *host;  /* the entity's payload */
    int total;         /* batches to apply */
    int window;        /* batches in flight at most */
    int submitted;     /* applied so far */
    int completed;     /* done callbacks run */
    int failed;        /* ... with !ok */
    int64_t *start_ns; /* per batch: when applied */
    int64_t *lat_ns;   /* per batch: apply to done */
};

struct slot {
    struct run *run;
    int index;
};

static struct slot *slots;

static void submit(struct run *r);

static void on_done(bool ok, const char *err, void *arg)
{
    struct slot *s = arg;
    struct run *r = s->run;
    r->lat_ns[s->index] = clock_monotonic_ns() - r->start_ns[s->index];
    if (!ok) {
        r->failed++;
        fprintf(stderr, "batch %d failed: %s\n", s->index, err);
    }
    r->completed++;
    if (r->completed == r->total)
        event_base_loopbreak(r->base);
    else
        submit(r);
}

/* Apply batches until the window is full or all are applied. */
static void submit(struct run *r)
{
    while (r->submitted < r->total && r->submitted - r->completed < r->window) {
        int i = r->submitted++;
        char id[32], err[256];
        snprintf(id, sizeof(id), "agent-%d", i % 1000);
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
        Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
        aid.value = id;
        info.hostname = (char *)r->host;
        info.id = &aid;
        a.info = &info;
        struct registry_batch *b = registry_batch_new();
        if (registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, err,
                               sizeof(err)) != 0) {
            fprintf(stderr, "put: %s\n", err);
            exit(1);
        }
        slots[i] = (struct slot){r, i};
        r->start_ns[i] = clock_monotonic_ns();
        registry_apply(r->reg, b, on_done, &slots[i]);
    }
}

/* The ZooKeeper URL runs go to ("zk://hosts/path"), or NULL for SQLite. */
static const char *zk_base;
static int zk_runs;

/* A fresh store: a directory under parent, or a znode path under zk_base.
 * where (OUT) is what registry_open takes. */
static int store_new(const char *parent, char *where, size_t len)
{
    if (zk_base != NULL) {
        int n = snprintf(where, len, "%s/offerd-registry-bench-%d-%d", zk_base,
                         (int)getpid(), ++zk_runs);
        return n > 0 && (size_t)n < len ? 0 : -1;
    }
    int n = snprintf(where, len, "%s/offerd-registry-bench-XXXXXX", parent);
    if (n < 0 || (size_t)n >= len || mkdtemp(where) == NULL) {
        fprintf(stderr, "cannot create a directory under %s\n", parent);
        return -1;
    }
    return 0;
}

/* Remove the znode at path and everything under it. */
static void zk_remove(zhandle_t *zh, const char *path)
{
    struct String_vector v = {0, NULL};
    if (zoo_get_children(zh, path, 0, &v) == ZOK) {
        for (int i = 0; i < v.count; i++) {
            char *child = xasprintf("%s/%s", path, v.data[i]);
            zk_remove(zh, child);
            free(child);
        }
        deallocate_String_vector(&v);
    }
    zoo_delete(zh, path, -1);
}

static void store_remove(const char *where);

static void options_for_store(struct registry_options *o)
{
    if (zk_base != NULL)
        o->backend = &registry_zk_backend;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static const char *fs_name(const char *path)
{
    static char buf[32];
    struct statfs sf;
    if (statfs(path, &sf) != 0)
        return "unknown";
    switch ((unsigned long)sf.f_type) {
    case 0xEF53:
        return "ext4";
    case 0x58465342:
        return "xfs";
    case 0x9123683E:
        return "btrfs";
    case 0x01021994:
        return "tmpfs: fsync is free, figures are not disk figures";
    case 0x794C7630:
        return "overlayfs";
    case 0x2FC12FC1:
        return "zfs";
    default:
        snprintf(buf, sizeof(buf), "f_type 0x%lx", (unsigned long)sf.f_type);
        return buf;
    }
}

static void store_remove(const char *where)
{
    if (zk_base == NULL) {
        nftw(where, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        return;
    }
    struct zk_url *u = xmalloc(sizeof(*u));
    char err[256];
    if (zk_url_parse(where, u, err, sizeof(err)) == 0) {
        zhandle_t *zh = zookeeper_init(u->hosts, NULL, 10000, NULL, NULL, 0);
        for (int i = 0;
             zh != NULL && i < 500 && zoo_state(zh) != ZOO_CONNECTED_STATE; i++)
            usleep(10 * 1000);
        if (zh != NULL && u->auth[0] != '\0')
            zoo_add_auth(zh, "digest", u->auth, (int)strlen(u->auth), NULL,
                         NULL);
        if (zh != NULL) {
            zk_remove(zh, u->path);
            zookeeper_close(zh);
        }
    }
    free(u);
}

/* One run in a fresh store; prints a table row. */
static int bench(const char *parent, const char *label, int n, int window,
                 size_t max_group, const char *host)
{
    char dir[4096];
    if (store_new(parent, dir, sizeof(dir)) != 0)
        return -1;
    struct run r = {
        .base = event_base_new(),
        .host = host,
        .total = n,
        .window = window,
        .start_ns = xcalloc((size_t)n, sizeof(int64_t)),
        .lat_ns = xcalloc((size_t)n, sizeof(int64_t)),
    };
    slots = xcalloc((size_t)n, sizeof(*slots));
    struct registry_options o;
    registry_options_init(&o);
    options_for_store(&o);
    o.max_group = max_group;
    Offerd__Registry__Registry *st = NULL;
    char err[512];
    r.reg = registry_open(r.base, dir, &o, &st, err, sizeof(err));
    if (r.reg == NULL) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    registry_state_free(st);

    int64_t t0 = clock_monotonic_ns();
    submit(&r);
    event_base_dispatch(r.base);
    int64_t elapsed = clock_monotonic_ns() - t0;

    struct registry_stats s;
    registry_get_stats(r.reg, &s);
    registry_close(r.reg);
    event_base_free(r.base);

    qsort(r.lat_ns, (size_t)n, sizeof(int64_t), cmp_i64);
    double secs = (double)elapsed / 1e9;
    double ms = 1e6;
    printf("%-18s %9d %11.0f %10.0f %10.1f %8.3f %8.3f %8.3f%s\n", label,
           window, n / secs, (double)s.commits / secs,
           s.commits ? (double)n / (double)s.commits : 0.0,
           (double)r.lat_ns[n / 2] / ms, (double)r.lat_ns[(n * 99) / 100] / ms,
           (double)r.lat_ns[n - 1] / ms, r.failed ? "  (failures!)" : "");
    free(r.start_ns);
    free(r.lat_ns);
    free(slots);
    store_remove(dir);
    return r.failed ? -1 : 0;
}

static void on_fill_done(bool ok, const char *err, void *arg)
{
    int *state = arg;
    if (!ok) {
        fprintf(stderr, "fill failed: %s\n", err);
        state[1]++;
    }
    state[0]--;
}

/* Store m agents in one batch, then time opening the store. */
static int bench_open(const char *parent, int m, const char *host)
{
    char dir[4096], err[512];
    if (store_new(parent, dir, sizeof(dir)) != 0)
        return -1;
    struct event_base *base = event_base_new();
    Offerd__Registry__Registry *st = NULL;
    struct registry_options o;
    registry_options_init(&o);
    options_for_store(&o);
    struct registry *reg = registry_open(base, dir, &o, &st, err, sizeof(err));
    if (reg == NULL) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    registry_state_free(st);
    /* In batches of 500: one batch of all would be above what one
     * ZooKeeper request may carry. */
    int state[2] = {0, 0}; /* batches in flight, failed */
    struct registry_batch *b = registry_batch_new();
    for (int i = 0; i < m; i++) {
        char id[32];
        snprintf(id, sizeof(id), "agent-%d", i);
        Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
        Mesos__V1__AgentInfo info = MESOS__V1__AGENT_INFO__INIT;
        Offerd__Registry__Agent a = OFFERD__REGISTRY__AGENT__INIT;
        aid.value = id;
        info.hostname = (char *)host;
        info.id = &aid;
        a.info = &info;
        if (registry_batch_put(b, REGISTRY_KIND_AGENT, &a.base, err,
                               sizeof(err)) != 0)
            return -1;
        if (registry_batch_count(b) == 500 || i == m - 1) {
            state[0]++;
            registry_apply(reg, b, on_fill_done, state);
            b = i == m - 1 ? NULL : registry_batch_new();
        }
    }
    registry_batch_free(b);
    while (state[0] > 0)
        event_base_loop(base, EVLOOP_ONCE);
    registry_close(reg);

    int64_t t0 = clock_monotonic_ns();
    reg = registry_open(base, dir, &o, &st, err, sizeof(err));
    int64_t t = clock_monotonic_ns() - t0;
    if (reg == NULL) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    struct registry_stats rs;
    registry_get_stats(reg, &rs);
    printf("\nregistry_open of %zu agents (%.1f MB of entities): %.1f ms\n",
           st->n_agents, (double)rs.size_bytes / 1e6, (double)t / 1e6);
    registry_state_free(st);
    registry_close(reg);
    event_base_free(base);
    store_remove(dir);
    return state[1] == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    bool quick = false;
    int n = 0;
    size_t entity = 256;
    const char *parent = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    const char *zk = NULL;
    int open_agents = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (strncmp(argv[i], "--n=", 4) == 0)
            n = atoi(argv[i] + 4);
        else if (strncmp(argv[i], "--entity=", 9) == 0)
            entity = (size_t)strtoul(argv[i] + 9, NULL, 10);
        else if (strncmp(argv[i], "--dir=", 6) == 0)
            parent = argv[i] + 6;
        else if (strncmp(argv[i], "--zk=", 5) == 0)
            zk = argv[i] + 5;
        else if (strncmp(argv[i], "--open=", 7) == 0)
            open_agents = atoi(argv[i] + 7);
        else {
            printf("usage: offerd-registry-bench [--quick] [--n=N] "
                   "[--entity=BYTES] [--dir=PATH]\n"
                   "  --quick        200 batches per run (a smoke test)\n"
                   "  --n=N          batches per run (default 5000)\n"
                   "  --entity=BYTES hostname bytes in each agent (256)\n"
                   "  --dir=PATH     where the stores go ($TMPDIR or /tmp)\n"
                   "  --open=M       agents in the store whose opening is "
                   "timed (50000; 10000 with --zk)\n"
                   "  --zk=URL       the ZooKeeper backend, at URL "
                   "(zk://host:port/path)\n"
                   "  --zk=start     ... on a ZooKeeper server started here "
                   "(start3: an ensemble of 3)\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (n <= 0)
        n = quick ? 200 : 5000;
    if (entity == 0 || entity > REGISTRY_MAX_ENTITY_BYTES / 2) {
        fprintf(stderr, "--entity must be 1..%d\n",
                REGISTRY_MAX_ENTITY_BYTES / 2);
        return 2;
    }
    log_set_level(LOG_LEVEL_WARNING);
    char *host = xmalloc(entity + 1);
    memset(host, 'h', entity);
    host[entity] = '\0';

    struct zk_ensemble *ens = NULL;
    char url[4096];
    if (zk != NULL && strncmp(zk, "start", 5) == 0) {
        int servers = strcmp(zk, "start3") == 0 ? 3 : 1;
        char err[512];
        zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
        ens = zk_ensemble_start(servers, 120000, err, sizeof(err));
        if (ens == NULL) {
            fprintf(stderr, "cannot start ZooKeeper: %s\n", err);
            return 1;
        }
        zk_ensemble_url(ens, "/bench", url, sizeof(url));
        zk = url;
    }
    zk_base = zk;
    if (zk_base != NULL)
        printf("offerd-registry-bench: %d single-entity batches per run "
               "(agent, %zu-byte hostname), ZooKeeper at %s%s (data in %s, "
               "%s)\n\n",
               n, entity, zk_base, ens ? " (started here)" : "",
               ens ? zk_ensemble_dir(ens) : "?",
               ens ? fs_name(zk_ensemble_dir(ens)) : "?");
    else
        printf("offerd-registry-bench: %d single-entity batches per run "
               "(agent, %zu-byte hostname), SQLite WAL synchronous=FULL in "
               "%s (%s)\n\n",
               n, entity, parent, fs_name(parent));
    printf("%-18s %9s %11s %10s %10s %8s %8s %8s\n", "mode", "in flight",
           "batches/s", "commits/s", "per commit", "p50 ms", "p99 ms",
           "max ms");
    int rc = 0;
    rc |= bench(parent, "serial", n, 1, 0, host);
    rc |= bench(parent, "no group commit", n, 64, 1, host);
    rc |= bench(parent, "group commit", n, 64, 0, host);
    rc |= bench(parent, "group commit", n, 1024, 0, host);
    if (open_agents <= 0)
        open_agents = quick ? 1000 : zk_base ? 10000 : 50000;
    rc |= bench_open(parent, open_agents, host);
    free(host);
    zk_ensemble_stop(ens);
    return rc ? 1 : 0;
}
