/*
 * Reliable per-task status update queues with exponential resend.
 */
#include "agent/update_manager.h"

#include "common/hmap.h"
#include "common/json_pb.h"
#include "common/mem.h"

#include <stdlib.h>
#include <string.h>

struct um_update {
    Mesos__V1__TaskStatus *status; /* owned */
    uint64_t seq;                  /* global order of arrival */
};

struct um_task {
    char *framework_id;
    char *task_id;
    struct um_update *q; /* FIFO: q[0] is the oldest */
    size_t n, cap;
    int64_t deadline; /* next resend of q[0] (online only) */
    int64_t interval; /* current resend interval */
};

struct agent_um {
    struct hmap *tasks; /* key(framework_id, task_id) -> struct um_task */
    int64_t retry_min, retry_max;
    agent_um_send_fn send;
    void *arg;
    bool online;
    uint64_t next_seq;
};

/* "<len>:<framework_id><task_id>": unambiguous whatever the ids hold. */
static char *task_key(const char *fw, const char *task)
{
    return xasprintf("%zu:%s%s", strlen(fw), fw, task);
}

static struct um_task *find(const struct agent_um *um, const char *fw,
                            const char *task)
{
    char *key = task_key(fw, task);
    struct um_task *t = hmap_get(um->tasks, key);
    free(key);
    return t;
}

static void task_free(void *p)
{
    struct um_task *t = p;
    for (size_t i = 0; i < t->n; i++)
        jpb_free(&t->q[i].status->base);
    free(t->q);
    free(t->framework_id);
    free(t->task_id);
    free(t);
}

struct agent_um *agent_um_new(int64_t retry_min_ns, int64_t retry_max_ns,
                              agent_um_send_fn send, void *arg)
{
    struct agent_um *um = xcalloc(1, sizeof(*um));
    um->tasks = hmap_new();
    um->retry_min = retry_min_ns > 0 ? retry_min_ns : 1;
    um->retry_max =
        retry_max_ns >= um->retry_min ? retry_max_ns : um->retry_min;
    um->send = send;
    um->arg = arg;
    return um;
}

void agent_um_free(struct agent_um *um)
{
    if (um == NULL)
        return;
    hmap_free(um->tasks, task_free);
    free(um);
}

/* Send t's oldest update now and restart its interval. */
static void send_oldest(struct agent_um *um, struct um_task *t, int64_t now)
{
    t->interval = um->retry_min;
    t->deadline = now + t->interval;
    um->send(t->framework_id, t->q[0].status, t->q[t->n - 1].status->state,
             um->arg);
}

void agent_um_add(struct agent_um *um, const char *framework_id,
                  Mesos__V1__TaskStatus *status, int64_t now)
{
    const char *task_id = status->task_id->value;
    struct um_task *t = find(um, framework_id, task_id);
    if (t == NULL) {
        t = xcalloc(1, sizeof(*t));
        t->framework_id = xstrdup(framework_id);
        t->task_id = xstrdup(task_id);
        char *key = task_key(framework_id, task_id);
        hmap_put(um->tasks, key, t);
        free(key);
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 4;
        t->q = xreallocarray(t->q, t->cap, sizeof(*t->q));
    }
    t->q[t->n].status = status;
    t->q[t->n].seq = um->next_seq++;
    t->n++;
    if (t->n == 1 && um->online)
        send_oldest(um, t, now);
}

enum agent_um_ack_result agent_um_ack(struct agent_um *um,
                                      const char *framework_id,
                                      const char *task_id, const uint8_t *uuid,
                                      size_t uuid_len, int64_t now,
                                      Mesos__V1__TaskState *acked_state)
{
    char *key = task_key(framework_id, task_id);
    struct um_task *t = hmap_get(um->tasks, key);
    if (t == NULL || t->n == 0) {
        free(key);
        return AGENT_UM_ACK_UNKNOWN;
    }
    const ProtobufCBinaryData *u = &t->q[0].status->uuid;
    if (uuid_len != u->len || uuid == NULL || memcmp(uuid, u->data, u->len)) {
        free(key);
        return AGENT_UM_ACK_MISMATCH;
    }
    if (acked_state != NULL)
        *acked_state = t->q[0].status->state;
    jpb_free(&t->q[0].status->base);
    memmove(&t->q[0], &t->q[1], (t->n - 1) * sizeof(*t->q));
    t->n--;
    if (t->n == 0) {
        hmap_del(um->tasks, key);
        task_free(t);
    } else if (um->online) {
        send_oldest(um, t, now);
    }
    free(key);
    return AGENT_UM_ACKED;
}

/* Tasks in the order of their oldest update, so that sends after going
 * online follow the order updates were made in. */
static int by_oldest(const void *a, const void *b)
{
    const struct um_task *x = *(struct um_task *const *)a;
    const struct um_task *y = *(struct um_task *const *)b;
    return x->q[0].seq < y->q[0].seq ? -1 : x->q[0].seq > y->q[0].seq;
}

static struct um_task **sorted_tasks(const struct agent_um *um, size_t *n)
{
    size_t count = hmap_count(um->tasks), i = 0, pos = 0;
    struct um_task **v = xcalloc(count ? count : 1, sizeof(*v));
    void *val;
    while (hmap_next(um->tasks, &pos, NULL, &val))
        v[i++] = val;
    qsort(v, i, sizeof(*v), by_oldest);
    *n = i;
    return v;
}

void agent_um_set_online(struct agent_um *um, bool online, int64_t now)
{
    um->online = online;
    if (!online)
        return;
    size_t n;
    struct um_task **v = sorted_tasks(um, &n);
    for (size_t i = 0; i < n; i++)
        send_oldest(um, v[i], now);
    free(v);
}

bool agent_um_is_online(const struct agent_um *um)
{
    return um->online;
}

void agent_um_tick(struct agent_um *um, int64_t now)
{
    if (!um->online)
        return;
    size_t n;
    struct um_task **v = sorted_tasks(um, &n);
    for (size_t i = 0; i < n; i++) {
        struct um_task *t = v[i];
        if (now < t->deadline)
            continue;
        int64_t next =
            t->interval > um->retry_max / 2 ? um->retry_max : t->interval * 2;
        if (next > um->retry_max)
            next = um->retry_max;
        t->interval = next;
        t->deadline = now + next;
        um->send(t->framework_id, t->q[0].status, t->q[t->n - 1].status->state,
                 um->arg);
    }
    free(v);
}

int64_t agent_um_next_deadline(const struct agent_um *um)
{
    if (!um->online)
        return -1;
    int64_t best = -1;
    size_t pos = 0;
    void *val;
    while (hmap_next(um->tasks, &pos, NULL, &val)) {
        const struct um_task *t = val;
        if (best < 0 || t->deadline < best)
            best = t->deadline;
    }
    return best;
}

bool agent_um_resend(struct agent_um *um, const char *framework_id,
                     const char *task_id, int64_t now)
{
    struct um_task *t = find(um, framework_id, task_id);
    if (t == NULL)
        return false;
    if (um->online)
        send_oldest(um, t, now);
    return true;
}

size_t agent_um_count(const struct agent_um *um, const char *framework_id,
                      const char *task_id)
{
    const struct um_task *t = find(um, framework_id, task_id);
    return t != NULL ? t->n : 0;
}

size_t agent_um_task_count(const struct agent_um *um)
{
    return hmap_count(um->tasks);
}

void agent_um_foreach_task(const struct agent_um *um, const char *framework_id,
                           const char *task_id, agent_um_visit_fn fn, void *arg)
{
    const struct um_task *t = find(um, framework_id, task_id);
    for (size_t i = 0; t != NULL && i < t->n; i++)
        fn(t->framework_id, t->q[i].status, arg);
}

struct seq_ref {
    const struct um_task *t;
    size_t i;
};

static int by_seq(const void *a, const void *b)
{
    const struct seq_ref *x = a, *y = b;
    uint64_t sx = x->t->q[x->i].seq, sy = y->t->q[y->i].seq;
    return sx < sy ? -1 : sx > sy;
}

void agent_um_foreach(const struct agent_um *um, agent_um_visit_fn fn,
                      void *arg)
{
    size_t total = 0, pos = 0;
    void *val;
    while (hmap_next(um->tasks, &pos, NULL, &val))
        total += ((const struct um_task *)val)->n;
    struct seq_ref *v = xcalloc(total ? total : 1, sizeof(*v));
    size_t k = 0;
    pos = 0;
    while (hmap_next(um->tasks, &pos, NULL, &val)) {
        const struct um_task *t = val;
        for (size_t i = 0; i < t->n; i++)
            v[k++] = (struct seq_ref){t, i};
    }
    qsort(v, k, sizeof(*v), by_seq);
    for (size_t i = 0; i < k; i++)
        fn(v[i].t->framework_id, v[i].t->q[v[i].i].status, arg);
    free(v);
}

void agent_um_drop_task(struct agent_um *um, const char *framework_id,
                        const char *task_id)
{
    char *key = task_key(framework_id, task_id);
    struct um_task *t = hmap_del(um->tasks, key);
    free(key);
    if (t != NULL)
        task_free(t);
}
