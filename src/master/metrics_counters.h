/*
 * Counts behind /metrics/snapshot (and GET_METRICS) that would otherwise
 * take a walk over every agent, framework and offer at each read: agents
 * connected, frameworks active and connected, and the scalars outstanding
 * offers hold. They live in m->mc and change only through the calls below,
 * made where agents.c, frameworks.c and offers.c change that state; the
 * agents' totals are the allocator's (alloc_total_scalar), and task counts
 * and used resources are live_counters.c's. A read is then O(keys), not
 * O(state) (docs/performance.md).
 */
#ifndef OFFERD_MASTER_METRICS_COUNTERS_H
#define OFFERD_MASTER_METRICS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "master/live_counters.h"
#include "master/master_types.h"

/* Set ag->connected, counting the change when ag is in m->agents. */
void master_mc_agent_set_connected(struct master *m, struct agent *ag,
                                   bool connected);
/* ag has just left m->agents (hmap_del): take it out of the counts. */
void master_mc_agent_unindexed(struct master *m, const struct agent *ag);

/* Set fw->active, counting the change when fw is in m->frameworks. */
void master_mc_framework_set_active(struct master *m, struct framework *fw,
                                    bool active);
/* Set fw->stream (NULL: none; closing the old one is the caller's),
 * counting a change of connectedness when fw is in m->frameworks. */
void master_mc_framework_set_stream(struct master *m, struct framework *fw,
                                    struct http_stream *stream);
/* fw has just left m->frameworks (hmap_del): take it out of the counts. */
void master_mc_framework_unindexed(struct master *m,
                                   const struct framework *fw);

/* o has just entered m->offers / is about to leave it. */
void master_mc_offer_added(struct master *m, const struct offer *o);
void master_mc_offer_removed(struct master *m, const struct offer *o);

/* What the snapshot shows of agents, frameworks, offers and the agents'
 * totals. */
struct master_mc_view {
    uint32_t agents, agents_connected;
    uint32_t frameworks, frameworks_active, frameworks_connected;
    uint32_t offers;
    /* Milli-units of master_live_names summed over the agents' totals
     * (alloc_agent_total): [0] regular resources, [1] revocable ones. */
    int64_t total[2][MASTER_LIVE_NAMES];
    /* Milli-units of master_live_names in outstanding offers, both
     * kinds. */
    int64_t offered[MASTER_LIVE_NAMES];
};

/* Fill out from the kept counts: O(1). */
void master_mc_view(const struct master *m, struct master_mc_view *out);

/* Fill out by visiting every agent, framework and offer (what the view
 * must equal; for tests). */
void master_mc_recount(const struct master *m, struct master_mc_view *out);

#endif
