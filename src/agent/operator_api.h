/*
 * The agent's v1 operator API: POST /api/v1 (and /slave(1)/api/v1) with a
 * mesos.v1.agent.Call in JSON or protobuf, answered 200 with a
 * mesos.v1.agent.Response in the encoding Accept asks for (docs/agent.md,
 * "Operator API"). Served: GET_HEALTH, GET_FLAGS, GET_VERSION, GET_METRICS,
 * GET_LOGGING_LEVEL, LIST_FILES, READ_FILE, GET_STATE, GET_CONTAINERS,
 * GET_FRAMEWORKS, GET_EXECUTORS, GET_TASKS, GET_AGENT. Every other call type is
 * a 501 naming it; a body that does not decode, a missing or UNKNOWN type, or a
 * call without its payload is a 400 with a one-line reason; content types
 * are negotiated as Mesos does (415, 406).
 *
 * The module reads the agent through a view (state_json.h) it asks for on
 * each call, so it holds no agent state of its own and unit tests drive it
 * with a hand-built view and no master. Files come from the sandboxes root
 * through files.h, the same code as /files/browse and /files/read.
 */
#ifndef OFFERD_AGENT_OPERATOR_API_H
#define OFFERD_AGENT_OPERATOR_API_H

#include "agent/state_json.h"

struct http_server;
struct http_request;
struct agent_opapi;
struct log_toggle;
struct files;
struct agent_auth;

/* Where the API reads from. Strings are copied; files, arg and toggle are
 * borrowed. */
struct agent_opapi_config {
    /* The sandboxes as /files serves them (common/files.h), borrowed. */
    const struct files *files;
    const char *proc_root; /* "/proc" (tests: a crafted tree, usage.h) */
    /* Fill *out with the agent's state as of now; what it points to stays
     * valid until the handler returns. */
    void (*view)(void *arg, struct agent_state_view *out);
    void *arg;
    /* The agent's log verbosity toggle (common/log_toggle.h), borrowed,
     * for SET_LOGGING_LEVEL and GET_LOGGING_LEVEL; NULL: SET_LOGGING_LEVEL
     * is not served (501). */
    struct log_toggle *toggle;
    /* The agent's gate (auth_agent.h), borrowed: under its --acls what
     * GET_STATE, GET_FRAMEWORKS, GET_EXECUTORS, GET_TASKS and
     * GET_CONTAINERS show is filtered for the caller (viewer.h). NULL:
     * everything is shown. */
    const struct agent_auth *auth;
};

/* A new API over cfg. Free with agent_opapi_free. */
struct agent_opapi *agent_opapi_new(const struct agent_opapi_config *cfg);

/* Route POST /api/v1 and /slave(1)/api/v1 on srv to agent_opapi_handle.
 * Returns 0, or -1 when a path is already routed. o must outlive srv's use. */
int agent_opapi_register(struct agent_opapi *o, struct http_server *srv);

/* The handler (an http_handler_fn; arg is the struct agent_opapi). It
 * always replies before returning. */
void agent_opapi_handle(struct http_request *req, void *arg);

/* Called once per metric with its name and value. */
typedef void (*agent_metric_fn)(void *arg, const char *name, double value);
/* Call fn(arg, name, value) for every metric of the agent's view v, under
 * Mesos's agent names ("slave/tasks_running"): the one list GET_METRICS,
 * /metrics/snapshot and /metrics show. */
void agent_metrics_collect(const struct agent_state_view *v, agent_metric_fn fn,
                           void *arg);

/* Free o; NULL is ignored. */
void agent_opapi_free(struct agent_opapi *o);

#endif
