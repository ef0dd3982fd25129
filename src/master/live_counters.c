/*
 * Counters behind /metrics/snapshot kept current as tasks change (see
 * live_counters.h). A task counts in m->live.tasks under its state, and
 * its scalar resources count in m->live.used while it is not terminal.
 */
#include "master/live_counters.h"

#include "common/task_state.h"

#include <string.h>

const char *const master_live_names[MASTER_LIVE_NAMES] = {"cpus", "mem", "disk",
                                                          "gpus"};

int master_live_name_index(const char *name)
{
    for (int i = 0; i < MASTER_LIVE_NAMES; i++)
        if (strcmp(name, master_live_names[i]) == 0)
            return i;
    return -1;
}

/* Add (sign 1) or take out (sign -1) what t counts in its current state. */
static void account(struct master_live *l, const struct task *t, int sign)
{
    if ((unsigned)t->state < sizeof(l->tasks) / sizeof(l->tasks[0]))
        l->tasks[t->state] += (uint64_t)(int64_t)sign;
    if (task_state_is_terminal(t->state))
        return;
    for (uint32_t i = 0; i < t->resources.n; i++) {
        const struct resource *r = &t->resources.v[i];
        int k = r->type == RES_SCALAR ? master_live_name_index(r->name) : -1;
        if (k >= 0)
            l->used[r->revocable ? 1 : 0][k] += sign * r->scalar;
    }
}

/* Add (sign 1) or take out (sign -1) what t counts in the live_used,
 * live_other and live_tasks (see struct framework) of its framework and of
 * its agent in its current state. */
static void account_framework(const struct task *t, int sign)
{
    struct framework *fw = t->fw;
    struct agent *ag = t->agent;
    if ((unsigned)t->state <
        sizeof(fw->live_tasks) / sizeof(fw->live_tasks[0])) {
        if (fw != NULL)
            fw->live_tasks[t->state] += (uint32_t)sign;
        if (ag != NULL)
            ag->live_tasks[t->state] += (uint32_t)sign;
    }
    if (fw == NULL || task_state_is_terminal(t->state))
        return;
    int64_t add[MASTER_LIVE_NAMES] = {0};
    bool other = false;
    for (uint32_t i = 0; i < t->resources.n; i++) {
        const struct resource *r = &t->resources.v[i];
        if (r->revocable)
            continue;
        int k = r->type == RES_SCALAR && !r->shared && r->provider_id == NULL
                    ? master_live_name_index(r->name)
                    : -1;
        if (k < 0)
            other = true;
        else
            add[k] += r->scalar;
    }
    for (int k = 0; k < MASTER_LIVE_NAMES; k++)
        fw->live_used[k] += sign * add[k];
    if (other)
        fw->live_other += (uint32_t)sign;
    if (ag == NULL)
        return;
    for (int k = 0; k < MASTER_LIVE_NAMES; k++)
        ag->live_used[k] += sign * add[k];
    if (other)
        ag->live_other += (uint32_t)sign;
}

void master_live_task_add(struct master *m, struct task *t)
{
    if (t->live_counted)
        return;
    account(&m->live, t, 1);
    account_framework(t, 1);
    t->live_counted = true;
    t->live_prev = m->live.tail;
    t->live_next = NULL;
    if (m->live.tail != NULL)
        m->live.tail->live_next = t;
    else
        m->live.head = t;
    m->live.tail = t;
}

void master_live_task_state(struct master *m, struct task *t,
                            Mesos__V1__TaskState state)
{
    if (!t->live_counted) {
        t->state = state;
        master_live_task_add(m, t);
        return;
    }
    account(&m->live, t, -1);
    account_framework(t, -1);
    t->state = state;
    account(&m->live, t, 1);
    account_framework(t, 1);
}

void master_live_task_forget(struct task *t)
{
    if (!t->live_counted || t->fw == NULL)
        return;
    struct master_live *l = &t->fw->m->live;
    account(l, t, -1);
    account_framework(t, -1);
    t->live_counted = false;
    if (t->live_prev != NULL)
        t->live_prev->live_next = t->live_next;
    else
        l->head = t->live_next;
    if (t->live_next != NULL)
        t->live_next->live_prev = t->live_prev;
    else
        l->tail = t->live_prev;
    t->live_prev = t->live_next = NULL;
}

static void recount_map(const struct hmap *tasks, struct master_live *out)
{
    size_t pos = 0;
    void *val;
    while (hmap_next(tasks, &pos, NULL, &val))
        account(out, val, 1);
}

void master_live_recount(const struct master *m, struct master_live *out)
{
    memset(out, 0, sizeof(*out)); /* the list is not rebuilt */
    size_t pos = 0;
    void *val;
    while (hmap_next(m->frameworks, &pos, NULL, &val))
        recount_map(((const struct framework *)val)->tasks, out);
    pos = 0;
    while (hmap_next(m->completed, &pos, NULL, &val))
        recount_map(((const struct framework *)val)->tasks, out);
}
