/*
 * The agent's own HTTP endpoints besides /files (files.h), as Mesos's agent
 * serves them (each also under Mesos's "/slave(1)" prefix):
 *   GET /health   200 with an empty body
 *   GET /flags    {"flags": {"name": "value", ...}}
 *   GET /state    the agent's state (state_json.h)
 * and, once agent_endpoints_metrics added them:
 *   GET /metrics/snapshot  {"slave/tasks_running": 1, ...} (Mesos's names)
 *   GET /metrics           the same keys and the HTTP request latency per
 *                          endpoint, in Prometheus text (docs/metrics.md)
 */
#ifndef OFFERD_AGENT_ENDPOINTS_H
#define OFFERD_AGENT_ENDPOINTS_H

#include <jansson.h>

#include "agent/state_json.h"

struct http_server;
struct flags;
struct agent_endpoints;

/* Builds the /state document (new reference). */
typedef json_t *(*agent_state_fn)(void *arg);

/* Register the routes on srv. flags and arg are borrowed and must outlive
 * srv's use. Returns the routes' state, freed with agent_endpoints_free
 * after srv, or NULL if a path is already routed. */
struct agent_endpoints *agent_endpoints_register(struct http_server *srv,
                                                 const struct flags *flags,
                                                 agent_state_fn state,
                                                 void *arg);
void agent_endpoints_free(struct agent_endpoints *e);

struct agent_auth;
/* Filter /state under auth's --acls for each reader (viewer.h); needs the
 * view of agent_endpoints_metrics. auth is borrowed. */
void agent_endpoints_set_auth(struct agent_endpoints *e,
                              const struct agent_auth *auth);

/* Fill *out with the agent's state as of now (as agent_opapi_config's). */
typedef void (*agent_view_fn)(void *arg, struct agent_state_view *out);

/* Register /metrics/snapshot and /metrics (each also under "/slave(1)")
 * on srv, reading the agent through view(arg) on each request; arg is
 * borrowed. Returns 0, or -1 if a path is already routed. */
int agent_endpoints_metrics(struct agent_endpoints *e, struct http_server *srv,
                            agent_view_fn view, void *arg);

/* The /metrics text of view v and srv's request latencies into a new
 * writer (common/prom.h; free with prom_writer_free). */
struct prom_writer *agent_metrics_prometheus(const struct agent_state_view *v,
                                             const struct http_server *srv);

#endif
