/*
 * The registry's front: batches, the queue to the worker thread, group
 * commit, and delivery of completions back on the loop thread.
 *
 * The shape is memcached's thread.c turned around: the loop thread appends
 * a batch to `pending` under the mutex and signals the condition variable;
 * the worker takes a run of batches off the head, commits them through the
 * backend with the mutex released, appends them to `done` and writes to an
 * eventfd; an event on the master's event_base reads the eventfd and runs
 * the done callbacks in order. The worker touches only the backend handle
 * and the two queues; everything the master owns stays on the loop thread.
 *
 * Group commit: when several batches wait, the worker commits up to
 * max_group of them in one transaction (one fsync). If that transaction
 * fails, it retries each batch of the group alone, so that one batch's
 * outcome is what it would have been on its own and a failure is reported
 * only for a batch whose own commit failed. A batch with an injected fault
 * is always committed alone.
 */
#include "master/registry.h"

#include "common/clock.h"
#include "common/hmap.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/prom.h"
#include "master/registry_private.h"
#include "master/registry_sqlite.h"
#include "mesos/v1/maintenance.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/quota.pb-c.h"

#include <assert.h>
#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define DEFAULT_MAX_GROUP        256
#define DEFAULT_MAX_QUEUED_BYTES ((size_t)64 * 1024 * 1024)
#define DEFAULT_CLOSE_TIMEOUT_NS (10 * CLOCK_NS_PER_SEC)
/* A group stops growing past this many bytes, so one transaction stays
 * reasonable however many batches wait. */
#define MAX_GROUP_BYTES ((size_t)16 * 1024 * 1024)

struct registry_batch {
    struct registry_op *ops; /* keys and values owned by the batch */
    size_t nops, cap;
    size_t bytes;          /* sum of key and value lengths */
    registry_done_fn done; /* may be NULL */
    void *arg;
    enum registry_fault fault;
    bool finished; /* outcome known (set by worker or refusal) */
    bool ok;       /* valid once finished */
    char err[320]; /* reason when finished && !ok */
    struct registry_batch *next;
};

struct registry {
    const struct registry_backend *backend;
    void *store; /* worker thread only, once it runs */
    struct event_base *base;
    struct event *wake_ev; /* EV_READ on wake_fd */
    int wake_fd;           /* eventfd, written by the worker */
    pthread_t thread;

    size_t max_group;
    size_t max_queued_bytes;
    int64_t close_timeout_ns;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t idle_cv; /* the worker finished a round (test hook) */
    /* Under mu. */
    struct registry_batch *pending, **pending_tail; /* for the worker */
    struct registry_batch *done, **done_tail;       /* for the loop */
    bool committing;     /* the worker holds batches taken off pending */
    bool stopping;       /* registry_close() has begun */
    int64_t deadline_ns; /* monotonic; after it, queued batches fail */
    struct registry_stats stats;
    double store_ms[REGISTRY_STORE_SAMPLES]; /* ring of transaction times */
    size_t nstore, store_next;               /* samples kept, next slot */
    struct prom_hist store_hist; /* every successful transaction, seconds */

    /* What each stored entity weighs, "<kind>/<key>" -> bytes + 1 (never
     * NULL): filled while loading, then the worker's alone, which keeps
     * stats.size_bytes in step with each batch it commits. */
    struct hmap *sizes;

    /* Loop thread only. */
    unsigned fail_next; /* test hook: batches left to fail */
    bool exit_next;     /* test hook: crash on the next batch */
    bool closed;        /* the worker has been joined */

    /* Worker only: the ops of a group, concatenated. */
    struct registry_op *scratch;
    size_t scratch_cap;
};

/* ---- Kinds ---- */

static const struct {
    const char *name;
    const ProtobufCMessageDescriptor *desc;
} kinds[REGISTRY_KIND_COUNT] = {
    [REGISTRY_KIND_AGENT] = {"agent", &offerd__registry__agent__descriptor},
    [REGISTRY_KIND_UNREACHABLE] =
        {"unreachable_agent", &offerd__registry__unreachable_agent__descriptor},
    [REGISTRY_KIND_GONE] = {"gone_agent",
                            &offerd__registry__gone_agent__descriptor},
    [REGISTRY_KIND_FRAMEWORK] = {"framework",
                                 &offerd__registry__framework__descriptor},
    [REGISTRY_KIND_MACHINE] = {"machine", &mesos__v1__machine_info__descriptor},
    [REGISTRY_KIND_WEIGHT] = {"weight", &mesos__v1__weight_info__descriptor},
    [REGISTRY_KIND_QUOTA] = {"quota",
                             &mesos__v1__quota__quota_config__descriptor},
    [REGISTRY_KIND_SCHEDULE] = {"schedule",
                                &mesos__v1__maintenance__schedule__descriptor},
};

static bool kind_valid(enum registry_kind kind)
{
    return (int)kind >= 0 && kind < REGISTRY_KIND_COUNT;
}

const char *registry_kind_name(enum registry_kind kind)
{
    return kind_valid(kind) ? kinds[kind].name : NULL;
}

static int kind_by_name(const char *name, enum registry_kind *out)
{
    for (int k = 0; k < REGISTRY_KIND_COUNT; k++) {
        if (strcmp(kinds[k].name, name) == 0) {
            *out = (enum registry_kind)k;
            return 0;
        }
    }
    return -1;
}

static const char *id_value(const Mesos__V1__AgentID *id)
{
    return id ? id->value : NULL;
}

int registry_key_of(enum registry_kind kind, const ProtobufCMessage *entity,
                    char *buf, size_t buflen, char *err, size_t errlen)
{
    if (!kind_valid(kind)) {
        snprintf(err, errlen, "registry: unknown entity kind %d", (int)kind);
        return -1;
    }
    if (entity == NULL || entity->descriptor != kinds[kind].desc) {
        snprintf(err, errlen, "registry: a %s entity must be a %s, not a %s",
                 kinds[kind].name, kinds[kind].desc->name,
                 entity ? entity->descriptor->name : "NULL");
        return -1;
    }
    const char *key = NULL, *key2 = NULL;
    switch (kind) {
    case REGISTRY_KIND_AGENT: {
        const Offerd__Registry__Agent *a = (const void *)entity;
        key = a->info ? id_value(a->info->id) : NULL;
        break;
    }
    case REGISTRY_KIND_UNREACHABLE:
        key =
            id_value(((const Offerd__Registry__UnreachableAgent *)entity)->id);
        break;
    case REGISTRY_KIND_GONE:
        key = id_value(((const Offerd__Registry__GoneAgent *)entity)->id);
        break;
    case REGISTRY_KIND_FRAMEWORK: {
        const Offerd__Registry__Framework *f = (const void *)entity;
        key = f->info && f->info->id ? f->info->id->value : NULL;
        break;
    }
    case REGISTRY_KIND_MACHINE: {
        const Mesos__V1__MachineInfo *m = (const void *)entity;
        if (m->id && ((m->id->hostname && m->id->hostname[0]) ||
                      (m->id->ip && m->id->ip[0]))) {
            key = m->id->hostname ? m->id->hostname : "";
            key2 = m->id->ip ? m->id->ip : "";
        }
        break;
    }
    case REGISTRY_KIND_WEIGHT:
        key = ((const Mesos__V1__WeightInfo *)entity)->role;
        break;
    case REGISTRY_KIND_QUOTA:
        key = ((const Mesos__V1__Quota__QuotaConfig *)entity)->role;
        break;
    case REGISTRY_KIND_SCHEDULE:
        key = "";
        break;
    case REGISTRY_KIND_COUNT:
        break;
    }
    if (key == NULL ||
        (key2 == NULL && key[0] == '\0' && kind != REGISTRY_KIND_SCHEDULE)) {
        snprintf(err, errlen, "registry: %s entity has no id",
                 kinds[kind].name);
        return -1;
    }
    int n = key2 ? snprintf(buf, buflen, "%s/%s", key, key2)
                 : snprintf(buf, buflen, "%s", key);
    if (n < 0 || (size_t)n >= buflen || n > REGISTRY_MAX_KEY_BYTES) {
        snprintf(err, errlen,
                 "registry: %s key is too long (%d bytes, limit %d)",
                 kinds[kind].name, n, REGISTRY_MAX_KEY_BYTES);
        return -1;
    }
    return 0;
}

/* ---- Batches ---- */

struct registry_batch *registry_batch_new(void)
{
    return xcalloc(1, sizeof(struct registry_batch));
}

static void batch_free_ops(struct registry_batch *b)
{
    for (size_t i = 0; i < b->nops; i++) {
        free((void *)b->ops[i].key);
        free((void *)b->ops[i].value);
    }
    free(b->ops);
    b->ops = NULL;
    b->nops = b->cap = 0;
    b->bytes = 0;
}

void registry_batch_free(struct registry_batch *batch)
{
    if (batch == NULL)
        return;
    batch_free_ops(batch);
    free(batch);
}

size_t registry_batch_count(const struct registry_batch *batch)
{
    return batch->nops;
}

static void batch_push(struct registry_batch *b, enum registry_op_type type,
                       enum registry_kind kind, const char *key, uint8_t *value,
                       size_t len)
{
    if (b->nops == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4;
        b->ops = xreallocarray(b->ops, b->cap, sizeof(*b->ops));
    }
    size_t keylen = strlen(key);
    b->ops[b->nops++] = (struct registry_op){
        .type = type,
        .kind = kinds[kind].name,
        .key = xstrndup(key, keylen),
        .value = value,
        .len = len,
    };
    b->bytes += keylen + len;
}

int registry_batch_put(struct registry_batch *batch, enum registry_kind kind,
                       const ProtobufCMessage *entity, char *err, size_t errlen)
{
    char key[REGISTRY_MAX_KEY_BYTES + 1];
    if (registry_key_of(kind, entity, key, sizeof(key), err, errlen) != 0)
        return -1;
    if (!protobuf_c_message_check(entity)) {
        snprintf(err, errlen, "registry: %s '%.64s' lacks required fields",
                 kinds[kind].name, key);
        return -1;
    }
    size_t len = protobuf_c_message_get_packed_size(entity);
    if (len > REGISTRY_MAX_ENTITY_BYTES) {
        snprintf(err, errlen,
                 "registry: %s '%.64s' is %zu bytes encoded, above the limit "
                 "of %d",
                 kinds[kind].name, key, len, REGISTRY_MAX_ENTITY_BYTES);
        return -1;
    }
    uint8_t *value = xmalloc(len);
    size_t packed = protobuf_c_message_pack(entity, value);
    assert(packed == len);
    (void)packed;
    batch_push(batch, REGISTRY_OP_PUT, kind, key, value, len);
    return 0;
}

int registry_batch_delete(struct registry_batch *batch, enum registry_kind kind,
                          const char *key, char *err, size_t errlen)
{
    if (!kind_valid(kind)) {
        snprintf(err, errlen, "registry: unknown entity kind %d", (int)kind);
        return -1;
    }
    if (key == NULL || strlen(key) > REGISTRY_MAX_KEY_BYTES) {
        snprintf(err, errlen, "registry: %s key is missing or too long",
                 kinds[kind].name);
        return -1;
    }
    batch_push(batch, REGISTRY_OP_DELETE, kind, key, NULL, 0);
    return 0;
}

/* ---- Loading ---- */

/* Where load_entity appends; capacities of the repeated fields. */
struct load_ctx {
    Offerd__Registry__Registry *state;
    size_t cap[REGISTRY_KIND_COUNT];
    struct registry *reg;
};

/* Record that the entity kind/key now weighs len bytes (put) or is gone
 * (!put), in reg->sizes and stats.size_bytes. Loop thread while loading,
 * then the worker (with mu held, for the stats). */
static void size_account(struct registry *reg, const char *kind,
                         const char *key, bool put, size_t len)
{
    char name[REGISTRY_MAX_KEY_BYTES + 64];
    snprintf(name, sizeof(name), "%s/%s", kind, key);
    void *old = put ? hmap_put(reg->sizes, name, (void *)(uintptr_t)(len + 1))
                    : hmap_del(reg->sizes, name);
    if (old != NULL)
        reg->stats.size_bytes -= (uintptr_t)old - 1;
    if (put)
        reg->stats.size_bytes += len;
}

/* Append p to the repeated field (*items, *n) with capacity *cap. */
static void append_item(void ***items, size_t *n, size_t *cap, void *p)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *items = xreallocarray(*items, *cap, sizeof(void *));
    }
    (*items)[(*n)++] = p;
}

#define APPEND(field, kind, msg)                                               \
    append_item((void ***)&st->field, &st->n_##field, &ctx->cap[kind], (msg))

static int load_entity(void *arg, const char *kind_name, const char *key,
                       const uint8_t *value, size_t len, char *err,
                       size_t errlen)
{
    struct load_ctx *ctx = arg;
    Offerd__Registry__Registry *st = ctx->state;
    enum registry_kind kind;
    if (kind_by_name(kind_name, &kind) != 0) {
        snprintf(err, errlen,
                 "registry holds an entity of unknown kind '%.64s' (written "
                 "by a newer offerd?); refusing to start",
                 kind_name);
        return -1;
    }
    /* Our own encoding, checked by the backend's checksum, so protobuf-c's
     * plain decoder is enough; the size was bounded by the backend. */
    ProtobufCMessage *msg =
        protobuf_c_message_unpack(kinds[kind].desc, NULL, len, value);
    if (msg == NULL) {
        snprintf(err, errlen,
                 "registry %s '%.64s' does not decode as %s; refusing to start",
                 kind_name, key, kinds[kind].desc->name);
        return -1;
    }
    char derived[REGISTRY_MAX_KEY_BYTES + 1];
    char why[256];
    if (registry_key_of(kind, msg, derived, sizeof(derived), why,
                        sizeof(why)) != 0 ||
        strcmp(derived, key) != 0) {
        snprintf(err, errlen,
                 "registry %s stored under '%.64s' does not carry that key; "
                 "refusing to start",
                 kind_name, key);
        protobuf_c_message_free_unpacked(msg, NULL);
        return -1;
    }
    switch (kind) {
    case REGISTRY_KIND_AGENT:
        APPEND(agents, kind, msg);
        break;
    case REGISTRY_KIND_UNREACHABLE:
        APPEND(unreachable_agents, kind, msg);
        break;
    case REGISTRY_KIND_GONE:
        APPEND(gone_agents, kind, msg);
        break;
    case REGISTRY_KIND_FRAMEWORK:
        APPEND(frameworks, kind, msg);
        break;
    case REGISTRY_KIND_MACHINE:
        APPEND(machines, kind, msg);
        break;
    case REGISTRY_KIND_WEIGHT:
        APPEND(weights, kind, msg);
        break;
    case REGISTRY_KIND_QUOTA:
        APPEND(quota_configs, kind, msg);
        break;
    case REGISTRY_KIND_SCHEDULE:
    case REGISTRY_KIND_COUNT:
        /* (kind, key) is unique in every store, and the key is "". */
        if (st->schedule != NULL)
            protobuf_c_message_free_unpacked(&st->schedule->base, NULL);
        st->schedule = (Mesos__V1__Maintenance__Schedule *)msg;
        break;
    }
    size_account(ctx->reg, kinds[kind].name, key, true, len);
    return 0;
}

void registry_state_free(Offerd__Registry__Registry *state)
{
    /* Every part of the state (the top message from xmalloc, the arrays
     * from xreallocarray, the entities from protobuf-c's default allocator)
     * comes from malloc, which is what protobuf-c's default free expects. */
    if (state != NULL)
        offerd__registry__registry__free_unpacked(state, NULL);
}

/* ---- The worker ---- */

/* Move b to the done queue (under mu). */
static void finish_locked(struct registry *reg, struct registry_batch *b)
{
    b->finished = true;
    b->next = NULL;
    *reg->done_tail = b;
    reg->done_tail = &b->next;
    if (b->ok)
        reg->stats.batches_ok++;
    else
        reg->stats.batches_failed++;
}

static void notify_loop(struct registry *reg)
{
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(reg->wake_fd, &one, sizeof(one));
    } while (n < 0 && errno == EINTR);
    /* EAGAIN means the counter is already non-zero: the loop will wake. */
}

/* Commit one batch alone; returns whether a transaction committed. */
static bool commit_one(struct registry *reg, struct registry_batch *b)
{
    if (b->nops == 0 && b->fault == REGISTRY_FAULT_NONE) {
        b->ok = true;
        return false;
    }
    b->ok = reg->backend->apply(reg->store, b->ops, b->nops, b->fault, b->err,
                                sizeof(b->err)) == 0;
    if (!b->ok)
        log_warn("%s", b->err);
    return b->ok;
}

/* Commit the n batches of group; returns the number of transactions that
 * committed. */
static uint64_t commit_group(struct registry *reg,
                             struct registry_batch *const *group, size_t n)
{
    if (n == 1)
        return commit_one(reg, group[0]) ? 1 : 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += group[i]->nops;
    if (total > reg->scratch_cap) {
        reg->scratch_cap = total;
        reg->scratch = xreallocarray(reg->scratch, reg->scratch_cap,
                                     sizeof(*reg->scratch));
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(reg->scratch + at, group[i]->ops,
               group[i]->nops * sizeof(*reg->scratch));
        at += group[i]->nops;
    }
    char err[320];
    if (reg->backend->apply(reg->store, reg->scratch, total,
                            REGISTRY_FAULT_NONE, err, sizeof(err)) == 0) {
        for (size_t i = 0; i < n; i++)
            group[i]->ok = true;
        return 1;
    }
    log_warn("group commit of %zu batches failed (%s); retrying each alone", n,
             err);
    uint64_t commits = 0;
    for (size_t i = 0; i < n; i++)
        commits += commit_one(reg, group[i]) ? 1 : 0;
    return commits;
}

static void *worker_main(void *arg)
{
    struct registry *reg = arg;
    struct registry_batch **group =
        xcalloc(reg->max_group, sizeof(struct registry_batch *));

    pthread_mutex_lock(&reg->mu);
    for (;;) {
        while (reg->pending == NULL && !reg->stopping)
            pthread_cond_wait(&reg->cv, &reg->mu);
        if (reg->pending == NULL)
            break; /* stopping, and nothing left */

        struct registry_batch *head = reg->pending;
        bool late = reg->stopping && clock_monotonic_ns() >= reg->deadline_ns;
        if (head->finished || late) {
            /* Refused when applied, or out of time at close. */
            reg->pending = head->next;
            if (reg->pending == NULL)
                reg->pending_tail = &reg->pending;
            reg->stats.queued--;
            reg->stats.queued_bytes -= head->bytes;
            if (!head->finished) {
                head->ok = false;
                snprintf(head->err, sizeof(head->err),
                         "registry closed before the batch was written");
            }
            finish_locked(reg, head);
            pthread_cond_broadcast(&reg->idle_cv);
            pthread_mutex_unlock(&reg->mu);
            notify_loop(reg);
            pthread_mutex_lock(&reg->mu);
            continue;
        }

        /* Take a run of ordinary batches (or one faulty batch alone). */
        size_t n = 0, bytes = 0;
        size_t max_bytes = reg->backend->max_group_bytes
                               ? reg->backend->max_group_bytes
                               : MAX_GROUP_BYTES;
        while (reg->pending != NULL && n < reg->max_group) {
            struct registry_batch *b = reg->pending;
            if (n > 0 && (b->finished || b->fault != REGISTRY_FAULT_NONE ||
                          bytes + b->bytes > max_bytes))
                break;
            reg->pending = b->next;
            reg->stats.queued--;
            reg->stats.queued_bytes -= b->bytes;
            group[n++] = b;
            bytes += b->bytes;
            if (b->fault != REGISTRY_FAULT_NONE)
                break;
        }
        if (reg->pending == NULL)
            reg->pending_tail = &reg->pending;
        reg->committing = true;
        pthread_mutex_unlock(&reg->mu);

        int64_t t0 = clock_monotonic_ns();
        uint64_t commits = commit_group(reg, group, n);
        double ms = (double)(clock_monotonic_ns() - t0) / 1e6;

        pthread_mutex_lock(&reg->mu);
        reg->stats.commits += commits;
        if (commits > 0) {
            reg->stats.store_ms = ms;
            reg->store_ms[reg->store_next] = ms;
            reg->store_next = (reg->store_next + 1) % REGISTRY_STORE_SAMPLES;
            if (reg->nstore < REGISTRY_STORE_SAMPLES)
                reg->nstore++;
            prom_hist_observe(&reg->store_hist, ms / 1e3);
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; group[i]->ok && k < group[i]->nops; k++) {
                const struct registry_op *op = &group[i]->ops[k];
                size_account(reg, op->kind, op->key,
                             op->type == REGISTRY_OP_PUT, op->len);
            }
            batch_free_ops(group[i]); /* not needed any more */
            finish_locked(reg, group[i]);
        }
        reg->committing = false;
        pthread_cond_broadcast(&reg->idle_cv);
        pthread_mutex_unlock(&reg->mu);
        notify_loop(reg);
        pthread_mutex_lock(&reg->mu);
    }
    pthread_mutex_unlock(&reg->mu);
    free(group);
    return NULL;
}

/* ---- Delivery on the loop ---- */

/* Run the done callbacks of every finished batch, in order. Returns the
 * number run. */
static size_t deliver(struct registry *reg)
{
    pthread_mutex_lock(&reg->mu);
    struct registry_batch *list = reg->done;
    reg->done = NULL;
    reg->done_tail = &reg->done;
    pthread_mutex_unlock(&reg->mu);

    size_t count = 0;
    while (list != NULL) {
        struct registry_batch *b = list;
        list = b->next;
        if (b->done)
            b->done(b->ok, b->ok ? NULL : b->err, b->arg);
        registry_batch_free(b);
        count++;
    }
    if (count > 0) {
        pthread_mutex_lock(&reg->mu);
        reg->stats.awaiting -= count;
        pthread_mutex_unlock(&reg->mu);
    }
    return count;
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    struct registry *reg = arg;
    uint64_t v;
    (void)what;
    while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
        ;
    deliver(reg);
}

/* ---- Open, apply, close ---- */

void registry_options_init(struct registry_options *opts)
{
    *opts = (struct registry_options){
        .backend = NULL,
        .max_group = DEFAULT_MAX_GROUP,
        .max_queued_bytes = DEFAULT_MAX_QUEUED_BYTES,
        .close_timeout_ns = DEFAULT_CLOSE_TIMEOUT_NS,
    };
}

struct registry *registry_open(struct event_base *base, const char *where,
                               const struct registry_options *opts,
                               Offerd__Registry__Registry **state, char *err,
                               size_t errlen)
{
    struct registry_options defaults;
    registry_options_init(&defaults);
    if (opts == NULL)
        opts = &defaults;

    struct registry *reg = xcalloc(1, sizeof(*reg));
    reg->backend = opts->backend ? opts->backend : &registry_sqlite_backend;
    reg->base = base;
    reg->wake_fd = -1;
    reg->max_group = opts->max_group ? opts->max_group : DEFAULT_MAX_GROUP;
    reg->max_queued_bytes = opts->max_queued_bytes ? opts->max_queued_bytes
                                                   : DEFAULT_MAX_QUEUED_BYTES;
    reg->close_timeout_ns = opts->close_timeout_ns > 0
                                ? opts->close_timeout_ns
                                : DEFAULT_CLOSE_TIMEOUT_NS;
    reg->pending_tail = &reg->pending;
    reg->done_tail = &reg->done;
    pthread_mutex_init(&reg->mu, NULL);
    pthread_cond_init(&reg->cv, NULL);
    pthread_cond_init(&reg->idle_cv, NULL);
    prom_hist_init(&reg->store_hist, PROM_BOUNDS_LATENCY,
                   PROM_BOUNDS_LATENCY_N);

    reg->sizes = hmap_new();
    int64_t fetch_start = clock_monotonic_ns();
    struct load_ctx ctx = {.state = xmalloc(sizeof(*ctx.state)), .reg = reg};
    offerd__registry__registry__init(ctx.state);
    ctx.state->has_format_version = 1;
    ctx.state->format_version = 1;

    reg->store = reg->backend->open(where, err, errlen);
    if (reg->store == NULL)
        goto fail;
    if (reg->backend->load(reg->store, load_entity, &ctx, err, errlen) != 0)
        goto fail;
    reg->stats.fetch_ms = (double)(clock_monotonic_ns() - fetch_start) / 1e6;

    reg->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (reg->wake_fd < 0) {
        snprintf(err, errlen, "registry: eventfd: %s", strerror(errno));
        goto fail;
    }
    reg->wake_ev =
        event_new(base, reg->wake_fd, EV_READ | EV_PERSIST, on_wake, reg);
    if (reg->wake_ev == NULL || event_add(reg->wake_ev, NULL) != 0) {
        snprintf(err, errlen, "registry: cannot watch the wake-up fd");
        goto fail;
    }

    /* The worker blocks every signal: they are the loop's to handle. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&reg->thread, NULL, worker_main, reg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "registry: cannot start its thread: %s",
                 strerror(rc));
        goto fail;
    }
    log_info("registry (%s) open at %s: %zu agents, %zu frameworks",
             reg->backend->name, where, ctx.state->n_agents,
             ctx.state->n_frameworks);
    *state = ctx.state;
    return reg;

fail:
    registry_state_free(ctx.state);
    if (reg->wake_ev)
        event_free(reg->wake_ev);
    if (reg->wake_fd >= 0)
        close(reg->wake_fd);
    if (reg->store)
        reg->backend->close(reg->store);
    hmap_free(reg->sizes, NULL);
    pthread_cond_destroy(&reg->cv);
    pthread_cond_destroy(&reg->idle_cv);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
    return NULL;
}

void registry_apply(struct registry *reg, struct registry_batch *batch,
                    registry_done_fn done, void *arg)
{
    assert(reg != NULL && batch != NULL);
    batch->done = done;
    batch->arg = arg;
    batch->next = NULL;
    if (reg->fail_next > 0) {
        reg->fail_next--;
        batch->fault = REGISTRY_FAULT_FAIL;
    } else if (reg->exit_next) {
        reg->exit_next = false;
        batch->fault = REGISTRY_FAULT_EXIT;
    }

    pthread_mutex_lock(&reg->mu);
    reg->stats.awaiting++;
    if (reg->closed) {
        /* Applied from a done callback run by registry_close(): there is no
         * worker any more; close delivers it after the ones before it. */
        batch_free_ops(batch);
        batch->ok = false;
        snprintf(batch->err, sizeof(batch->err), "registry is closed");
        finish_locked(reg, batch);
        pthread_mutex_unlock(&reg->mu);
        return;
    }
    if (reg->stats.queued_bytes + batch->bytes > reg->max_queued_bytes) {
        /* Keep its place in the order, but not its bytes. */
        size_t bytes = batch->bytes;
        batch_free_ops(batch);
        batch->finished = true;
        batch->ok = false;
        snprintf(batch->err, sizeof(batch->err),
                 "registry backlog full (%llu bytes queued, this batch %zu, "
                 "limit %zu)",
                 (unsigned long long)reg->stats.queued_bytes, bytes,
                 reg->max_queued_bytes);
    }
    *reg->pending_tail = batch;
    reg->pending_tail = &batch->next;
    reg->stats.queued++;
    reg->stats.queued_bytes += batch->bytes;
    pthread_cond_signal(&reg->cv);
    pthread_mutex_unlock(&reg->mu);
}

void registry_close(struct registry *reg)
{
    if (reg == NULL)
        return;
    pthread_mutex_lock(&reg->mu);
    reg->stopping = true;
    reg->deadline_ns = clock_monotonic_ns() + reg->close_timeout_ns;
    pthread_cond_signal(&reg->cv);
    pthread_mutex_unlock(&reg->mu);
    pthread_join(reg->thread, NULL);

    pthread_mutex_lock(&reg->mu);
    reg->closed = true;
    pthread_mutex_unlock(&reg->mu);
    /* Callbacks may apply more batches, which finish at once (closed). */
    while (deliver(reg) > 0)
        ;

    event_free(reg->wake_ev);
    close(reg->wake_fd);
    reg->backend->close(reg->store);
    free(reg->scratch);
    hmap_free(reg->sizes, NULL);
    pthread_cond_destroy(&reg->cv);
    pthread_cond_destroy(&reg->idle_cv);
    pthread_mutex_destroy(&reg->mu);
    free(reg);
}

void registry_get_stats(struct registry *reg, struct registry_stats *out)
{
    pthread_mutex_lock(&reg->mu);
    *out = reg->stats;
    pthread_mutex_unlock(&reg->mu);
}

size_t registry_store_times(struct registry *reg, double *out, size_t cap)
{
    pthread_mutex_lock(&reg->mu);
    size_t n = reg->nstore < cap ? reg->nstore : cap;
    /* The oldest of the n latest sits n slots before the next one. */
    size_t at =
        (reg->store_next + REGISTRY_STORE_SAMPLES - n) % REGISTRY_STORE_SAMPLES;
    for (size_t i = 0; i < n; i++)
        out[i] = reg->store_ms[(at + i) % REGISTRY_STORE_SAMPLES];
    pthread_mutex_unlock(&reg->mu);
    return n;
}

void registry_store_hist(struct registry *reg, struct prom_hist *out)
{
    pthread_mutex_lock(&reg->mu);
    *out = reg->store_hist;
    pthread_mutex_unlock(&reg->mu);
}

/* ---- Test hooks (registry_private.h) ---- */

void registry_test_fail_next(struct registry *reg, unsigned n)
{
    reg->fail_next += n;
}

void registry_test_exit_next(struct registry *reg)
{
    reg->exit_next = true;
}

void registry_test_flush(struct registry *reg)
{
    size_t ran;
    do {
        pthread_mutex_lock(&reg->mu);
        while (reg->pending != NULL || reg->committing)
            pthread_cond_wait(&reg->idle_cv, &reg->mu);
        pthread_mutex_unlock(&reg->mu);
        /* The eventfd stays readable; on_wake then finds nothing. */
        ran = deliver(reg);
    } while (ran > 0);
}
