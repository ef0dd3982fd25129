/*
 * The agent's own HTTP endpoints besides /files (files.h), as Mesos's agent
 * serves them (each also under Mesos's "/slave(1)" prefix):
 *   GET /health   200 with an empty body
 *   GET /flags    {"flags": {"name": "value", ...}}
 *   GET /state    the agent's state (state_json.h)
 */
#ifndef OFFERD_AGENT_ENDPOINTS_H
#define OFFERD_AGENT_ENDPOINTS_H

#include <jansson.h>

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

#endif
