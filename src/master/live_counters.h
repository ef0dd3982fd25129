/*
 * Counters behind /metrics/snapshot kept current as state changes, so that
 * a snapshot reads them instead of scanning every task
 * (docs/performance.md). tasks.c and agents.c call these whenever a task
 * appears, changes state or goes; nothing else writes m->live, nor the
 * live_* fields of struct framework and struct agent (the same counts per
 * framework and per agent, for /state and /state-summary).
 */
#ifndef OFFERD_MASTER_LIVE_COUNTERS_H
#define OFFERD_MASTER_LIVE_COUNTERS_H

#include "master/master_types.h"

/* The scalar names the snapshot shows, in the order of m->live's arrays. */
#define MASTER_LIVE_NAMES 4
extern const char *const master_live_names[MASTER_LIVE_NAMES];

/* Index of name in master_live_names, or -1. */
int master_live_name_index(const char *name);

/* Add t (just created, in its state) to the counters. */
void master_live_task_add(struct master *m, struct task *t);

/* Move t to state, keeping the counters (per state, resources used by
 * non-terminal tasks) right. */
void master_live_task_state(struct master *m, struct task *t,
                            Mesos__V1__TaskState state);

/* Take t (about to be freed) out of the counters; no-op for a task never
 * added. */
void master_live_task_forget(struct task *t);

/* Recount m->live from the tasks themselves (what the counters must equal;
 * for tests). */
void master_live_recount(const struct master *m, struct master_live *out);

/* What an agent's live tasks use when all of it is plain scalars: one
 * entry per name and allocation role, in the order res_list_add_all would
 * make the list master_agent_usage returns. Strings borrowed. */
#define MASTER_USE_ENTRIES 16
struct master_use {
    const char *name[MASTER_USE_ENTRIES];
    const char *role[MASTER_USE_ENTRIES]; /* NULL: no allocation role */
    int64_t v[MASTER_USE_ENTRIES];        /* milli-units */
    uint32_t n;
};

/* Whether r is a plain scalar: no reservation, disk, revocability,
 * sharing or provider, and names /state can copy as they are. */
bool master_live_plain_scalar(const struct resource *r);

/* Fill *u with ag's live tasks' use from what is kept (struct agent's
 * live_use), without touching a task; false when that is not usable (a
 * task holds something else, or tasks list different names: then
 * master_live_agent_use_recount). ag's executors are not counted. */
bool master_live_agent_use(const struct agent *ag, struct master_use *u);

/* The same by walking ag's tasks; false when it is not all plain scalars
 * or has more than MASTER_USE_ENTRIES entries. */
bool master_live_agent_use_recount(const struct agent *ag,
                                   struct master_use *u);

/* Free what is kept for ag (it is being freed). */
void master_live_agent_clear(struct agent *ag);

#endif
