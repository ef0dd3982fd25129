/*
 * Revocable resources at the master: an agent's oversubscription estimate
 * (UPDATE_OVERSUBSCRIBED, from its resource estimator) and, with
 * --offer_allocation_slack, the allocation slack: cpus and mem reserved to
 * a role that no task of that role uses, offered as revocable resources to
 * frameworks with REVOCABLE_RESOURCES. The allocator's revocable total of
 * an agent is the estimate plus the slack.
 *
 * When the role starts using its reservation (a framework of the role is
 * offered it and launches tasks), the slack shrinks; if revocable tasks
 * then hold more than the agent's revocable total, the master evicts them,
 * newest first, only as many as the shrink needs, each with its kill
 * policy's grace period, reported TASK_KILLED with reason
 * REASON_CONTAINER_PREEMPTED. Shrinks of the agent's own estimate are the
 * agent's QoS controller's business, not the master's; and since that
 * controller counts every revocable task against the estimate, agents that
 * report an estimate get no slack.
 */
#include "master/slack.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/task_state.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/master.h"
#include "master/offers.h"
#include "master/tasks.h"

/* The scalar resources that make slack. */
static const char *const SLACK_NAMES[] = {"cpus", "mem"};
#define NSLACK (sizeof(SLACK_NAMES) / sizeof(SLACK_NAMES[0]))

static void push_allocator(struct master *m, struct agent *ag)
{
    res_list rev = RES_LIST_INIT;
    res_list_add_all(&rev, &ag->estimate);
    res_list_add_all(&rev, &ag->slack);
    if (ag->alloc != NULL &&
        alloc_agent_update_oversubscribed(m->alloc, ag->alloc, &rev) != 0)
        log_error("agent %s: revocable total refused by the allocator", ag->id);
    res_list_clear(&rev);
    master_allocate_soon(m);
}

int master_agent_set_estimate(struct master *m, struct agent *ag,
                              const res_list *estimate)
{
    for (uint32_t i = 0; i < estimate->n; i++)
        if (!estimate->v[i].revocable)
            return -1;
    if (alloc_admit_names(m->alloc, estimate) != 0)
        return -2;
    res_list_clear(&ag->estimate);
    res_list_copy(&ag->estimate, estimate);
    push_allocator(m, ag);
    return 0;
}

/* The slack of ag now, per SLACK_NAMES entry, in milli-units: reserved
 * amounts minus what live tasks use of reservations. */
static void slack_of(const struct agent *ag, int64_t *out)
{
    const res_list *total =
        ag->alloc != NULL ? alloc_agent_total(ag->alloc) : &ag->total;
    for (size_t k = 0; k < NSLACK; k++)
        out[k] = 0;
    for (uint32_t i = 0; i < total->n; i++) {
        const struct resource *r = &total->v[i];
        if (r->nresv == 0 || r->revocable || r->type != RES_SCALAR)
            continue;
        for (size_t k = 0; k < NSLACK; k++)
            if (strcmp(r->name, SLACK_NAMES[k]) == 0)
                out[k] += r->scalar;
    }
    size_t pos = 0;
    void *val;
    while (hmap_next(ag->tasks, &pos, NULL, &val)) {
        const struct task *t = val;
        if (task_state_is_terminal(t->state))
            continue;
        for (uint32_t i = 0; i < t->resources.n; i++) {
            const struct resource *r = &t->resources.v[i];
            if (r->nresv == 0 || r->revocable || r->type != RES_SCALAR)
                continue;
            for (size_t k = 0; k < NSLACK; k++)
                if (strcmp(r->name, SLACK_NAMES[k]) == 0)
                    out[k] -= r->scalar;
        }
    }
    for (size_t k = 0; k < NSLACK; k++)
        if (out[k] < 0)
            out[k] = 0;
}

static int64_t revocable_amount(const res_list *l, const char *name)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if (l->v[i].revocable && l->v[i].type == RES_SCALAR &&
            strcmp(l->v[i].name, name) == 0)
            sum += l->v[i].scalar;
    return sum;
}

static int newest_first(const void *a, const void *b)
{
    const struct task *x = *(const struct task *const *)a;
    const struct task *y = *(const struct task *const *)b;
    return (x->launched < y->launched) - (x->launched > y->launched);
}

/* Evict revocable tasks of ag, newest first, until each need[k] (milli) is
 * covered. */
static void evict(struct master *m, struct agent *ag, int64_t *need)
{
    size_t n, k = 0;
    struct task **v = master_agent_tasks(ag, &n);
    for (size_t i = 0; i < n; i++) {
        struct task *t = v[i];
        if (!task_state_is_terminal(t->state) && !t->preempted &&
            (revocable_amount(&t->resources, "cpus") > 0 ||
             revocable_amount(&t->resources, "mem") > 0))
            v[k++] = t;
    }
    qsort(v, k, sizeof(*v), newest_first);
    for (size_t i = 0; i < k; i++) {
        bool needed = false;
        for (size_t j = 0; j < NSLACK; j++)
            needed = needed || need[j] > 0;
        if (!needed)
            break;
        struct task *t = v[i];
        bool helps = false;
        for (size_t j = 0; j < NSLACK; j++)
            helps =
                helps || (need[j] > 0 &&
                          revocable_amount(&t->resources, SLACK_NAMES[j]) > 0);
        if (!helps)
            continue;
        for (size_t j = 0; j < NSLACK; j++)
            need[j] -= revocable_amount(&t->resources, SLACK_NAMES[j]);
        t->preempted = true;
        m->metrics.slack_evictions++;
        log_info("agent %s: evicting revocable task %s of framework %s: its "
                 "role's reservation is wanted back",
                 ag->id, t->info->task_id->value, t->fw->id);
        master_task_evict(
            m, t, MESOS__V1__TASK_STATUS__REASON__REASON_CONTAINER_PREEMPTED);
    }
    free(v);
}

void master_slack_update(struct master *m)
{
    if (!m->flags->offer_allocation_slack)
        return;
    size_t pos = 0;
    void *val;
    while (hmap_next(m->agents, &pos, NULL, &val)) {
        struct agent *ag = val;
        if (ag->alloc == NULL)
            continue;
        int64_t now[NSLACK], before[NSLACK];
        slack_of(ag, now);
        /* An agent with its own estimate evicts revocable tasks by it (its
         * QoS controller cannot tell slack from its estimate): no slack
         * there. */
        if (ag->estimate.n > 0)
            for (size_t k = 0; k < NSLACK; k++)
                now[k] = 0;
        bool changed = false;
        for (size_t k = 0; k < NSLACK; k++) {
            before[k] = res_list_scalar(&ag->slack, SLACK_NAMES[k]);
            changed = changed || before[k] != now[k];
        }
        if (!changed)
            continue;
        /* What revocable tasks hold beyond the new total, up to the
         * shrink of the slack: the master's to free. */
        int64_t need[NSLACK];
        bool evicting = false;
        for (size_t k = 0; k < NSLACK; k++) {
            int64_t held = 0;
            size_t tp = 0;
            void *tv;
            while (hmap_next(ag->tasks, &tp, NULL, &tv)) {
                const struct task *t = tv;
                if (!task_state_is_terminal(t->state) && !t->preempted)
                    held += revocable_amount(&t->resources, SLACK_NAMES[k]);
            }
            int64_t total =
                res_list_scalar(&ag->estimate, SLACK_NAMES[k]) + now[k];
            int64_t over = held - total;
            int64_t shrink = before[k] - now[k];
            need[k] = over < shrink ? over : shrink;
            evicting = evicting || need[k] > 0;
        }
        res_list_clear(&ag->slack);
        for (size_t k = 0; k < NSLACK; k++) {
            if (now[k] <= 0)
                continue;
            struct resource r;
            res_init_scalar(&r, SLACK_NAMES[k], now[k]);
            r.revocable = true;
            res_list_add(&ag->slack, &r);
            res_clear(&r);
        }
        if (evicting) {
            /* Offers of revocable resources no longer there go first. */
            master_offers_on_agent(m, ag, true);
            evict(m, ag, need);
        }
        push_allocator(m, ag);
    }
}
