/*
 * The registry's garbage collection of agents that are not connected, as
 * Mesos's master does it: every --registry_gc_interval, agents marked
 * unreachable or gone are forgotten when there are more than
 * --registry_max_agent_count of a kind (the oldest first) or when they were
 * marked more than --registry_max_agent_age ago. The registry forgets them
 * first; then the master does, with the unreachable tasks frameworks still
 * hear of (a reconciliation of such a task answers TASK_UNKNOWN after).
 * A forgotten unreachable agent that comes back registers as any agent the
 * master does not know; a forgotten gone agent may register again.
 *
 * The maps of marked agents (m->unreachable_agents, m->gone_agents) hold a
 * struct agent_mark per agent, put and deleted here.
 */
#ifndef OFFERD_MASTER_REGISTRY_GC_H
#define OFFERD_MASTER_REGISTRY_GC_H

#include <stdbool.h>

#include "master/master_types.h"

/* Record id in marks (m->unreachable_agents or m->gone_agents) as marked at
 * time (wall seconds), replacing an earlier mark. */
void master_agent_mark_put(struct hmap *marks, const char *id, double time);

/* Forget id's mark; whether there was one. */
bool master_agent_mark_del(struct hmap *marks, const char *id);

/* Arm the periodic collection (master_new). */
void master_registry_gc_start(struct master *m);

/* One collection now, at wall time now: writes the registry and, once the
 * write is durable, forgets the agents in memory. Returns how many agents
 * it asked the registry to forget (0: nothing to do, nothing written). */
size_t master_registry_gc(struct master *m, double now);

#endif
