/*
 * Oversubscription at the master: agents' revocable estimates and the
 * allocation slack (--offer_allocation_slack).
 */
#ifndef OFFERD_MASTER_SLACK_H
#define OFFERD_MASTER_SLACK_H

#include "master/master_types.h"

/* Set ag's oversubscription estimate (revocable resources; copied) and
 * update the allocator's revocable total. Returns -1 when an entry is not
 * revocable, -2 when its names would take the allocator past
 * ALLOC_MAX_NAMES (nothing changed either way). */
int master_agent_set_estimate(struct master *m, struct agent *ag,
                              const res_list *estimate);
/* With --offer_allocation_slack: recompute every agent's slack (reserved
 * cpus and mem no task uses, offered to others as revocable) and, where it
 * shrank below what revocable tasks hold, evict them, newest first. */
void master_slack_update(struct master *m);

#endif
