/*
 * The read endpoints: /state, /state-summary, /frameworks, /slaves, /tasks,
 * /roles, /metrics/snapshot.
 */
#ifndef OFFERD_MASTER_STATE_ENDPOINTS_H
#define OFFERD_MASTER_STATE_ENDPOINTS_H

#include "master/master_types.h"

/* Register /state, /state-summary, /frameworks, /slaves, /tasks, /roles,
 * /metrics/snapshot (and their /master/ aliases). */
int master_state_endpoints_register(struct master *m);

#endif
