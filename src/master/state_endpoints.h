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

/* Called once per metric with its name and value. */
typedef void (*master_metric_fn)(void *arg, const char *name, double value);
/* Call fn(arg, name, value) for every metric /metrics/snapshot shows, in
 * its order: the one list of the master's metrics, shared by the endpoint
 * and the operator API's GET_METRICS. */
void master_metrics_collect(struct master *m, master_metric_fn fn, void *arg);

#endif
