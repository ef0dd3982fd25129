/*
 * Counters behind /metrics/snapshot kept current as tasks change (see
 * live_counters.h). A task counts in m->live.tasks under its state, and
 * its scalar resources count in m->live.used while it is not terminal.
 */
#include "master/live_counters.h"

#include "common/json_out.h"
#include "common/mem.h"
#include "common/task_state.h"

#include <stdlib.h>
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

bool master_live_plain_scalar(const struct resource *r)
{
    return r->type == RES_SCALAR && r->nresv == 0 && r->disk == NULL &&
           !r->revocable && !r->shared && r->provider_id == NULL &&
           jout_utf8_valid(r->name, strlen(r->name)) &&
           (r->alloc_role == NULL ||
            jout_utf8_valid(r->alloc_role, strlen(r->alloc_role)));
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Add t's resources to u as res_list_add_all merges them (an empty entry
 * adds no pair); false when one is not a plain scalar or there are too
 * many pairs. */
static bool use_add(struct master_use *u, const struct task *t)
{
    for (uint32_t i = 0; i < t->resources.n; i++) {
        const struct resource *r = &t->resources.v[i];
        if (!master_live_plain_scalar(r))
            return false;
        if (r->scalar == 0)
            continue;
        uint32_t k = 0;
        while (k < u->n && !(strcmp(u->name[k], r->name) == 0 &&
                             same_str(u->role[k], r->alloc_role)))
            k++;
        if (k == u->n) {
            if (u->n == MASTER_USE_ENTRIES)
                return false;
            u->name[k] = r->name;
            u->role[k] = r->alloc_role;
            u->v[k] = 0;
            u->n++;
        }
        u->v[k] += r->scalar;
    }
    return true;
}

bool master_live_agent_use_recount(const struct agent *ag, struct master_use *u)
{
    u->n = 0;
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (!task_state_is_terminal(t->state) && !use_add(u, t))
            return false;
    }
    return true;
}

bool master_live_agent_use(const struct agent *ag, struct master_use *u)
{
    if (ag->live_use_slow > 0 || ag->live_use_odd > 0)
        return false;
    u->n = ag->live_nuse;
    for (uint32_t k = 0; k < ag->live_nuse; k++) {
        u->name[k] = ag->live_use[k].name;
        u->role[k] = ag->live_use[k].role;
        u->v[k] = ag->live_use[k].v;
    }
    return true;
}

void master_live_agent_clear(struct agent *ag)
{
    for (uint32_t k = 0; k < ag->live_nuse; k++) {
        free(ag->live_use[k].name);
        free(ag->live_use[k].role);
    }
    free(ag->live_use);
    ag->live_use = NULL;
    ag->live_nuse = 0;
}

/* Whether u lists ag's kept pairs, in the same order. */
static bool use_matches(const struct agent *ag, const struct master_use *u)
{
    if (u->n != ag->live_nuse)
        return false;
    for (uint32_t k = 0; k < u->n; k++)
        if (strcmp(u->name[k], ag->live_use[k].name) != 0 ||
            !same_str(u->role[k], ag->live_use[k].role))
            return false;
    return true;
}

/* Add (sign 1) or take out (sign -1) what t counts in its agent's live_use
 * in its current state. The kept pairs are set by the first task with any
 * while no other is judged against them, so a task is judged the same way
 * when it goes as when it came. */
static void account_agent_use(const struct task *t, int sign)
{
    struct agent *ag = t->agent;
    if (ag == NULL || t->fw == NULL || task_state_is_terminal(t->state))
        return;
    struct master_use u;
    u.n = 0;
    if (!use_add(&u, t)) {
        ag->live_use_slow += (uint32_t)sign;
        return;
    }
    if (u.n == 0)
        return; /* adds nothing, whatever the order */
    if (sign > 0 && ag->live_use_same + ag->live_use_odd == 0) {
        master_live_agent_clear(ag);
        ag->live_use = xreallocarray(NULL, u.n, sizeof(*ag->live_use));
        for (uint32_t k = 0; k < u.n; k++) {
            ag->live_use[k].name = xstrdup(u.name[k]);
            ag->live_use[k].role =
                u.role[k] != NULL ? xstrdup(u.role[k]) : NULL;
            ag->live_use[k].v = 0;
        }
        ag->live_nuse = u.n;
    }
    if (use_matches(ag, &u)) {
        for (uint32_t k = 0; k < u.n; k++)
            ag->live_use[k].v += sign * u.v[k];
        ag->live_use_same += (uint32_t)sign;
    } else {
        ag->live_use_odd += (uint32_t)sign;
    }
    if (ag->live_use_same + ag->live_use_odd == 0)
        master_live_agent_clear(ag);
}

void master_live_task_add(struct master *m, struct task *t)
{
    if (t->live_counted)
        return;
    account(&m->live, t, 1);
    account_framework(t, 1);
    account_agent_use(t, 1);
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
    /* Between two live states the agent's use does not change: no need
     * to take it out and put it back. */
    bool moves =
        task_state_is_terminal(t->state) != task_state_is_terminal(state);
    account(&m->live, t, -1);
    account_framework(t, -1);
    if (moves)
        account_agent_use(t, -1);
    t->state = state;
    account(&m->live, t, 1);
    account_framework(t, 1);
    if (moves)
        account_agent_use(t, 1);
}

void master_live_task_forget(struct task *t)
{
    if (!t->live_counted || t->fw == NULL)
        return;
    struct master_live *l = &t->fw->m->live;
    account(l, t, -1);
    account_framework(t, -1);
    account_agent_use(t, -1);
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
