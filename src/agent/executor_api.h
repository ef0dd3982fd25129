/*
 * Mesos's v1 Executor HTTP API on the agent: POST /api/v1/executor (also
 * under "/slave(1)"), bodies mesos.v1.executor.Call in JSON or protobuf.
 *
 *   SUBSCRIBE  200, a RecordIO stream of Events in the Accept encoding
 *   UPDATE     202; the status goes through the agent's reliable updates
 *   MESSAGE    202; the data goes to the framework (unreliable)
 *   HEARTBEAT  202
 *
 * Refused: 415 / 406 for other media types; 400 for a body that does not
 * decode or a call that fails Mesos's validation (type, ids, update uuid
 * and source, TASK_STAGING), "Framework cannot be found", "Executor cannot
 * be found"; 403 "Executor is not subscribed" for UPDATE and MESSAGE
 * before SUBSCRIBE; 401 and 403 for a missing, bad or another executor's
 * token when the agent hands tokens out (executor_auth.h). Each with a
 * one-line reason; nothing changes.
 */
#ifndef OFFERD_AGENT_EXECUTOR_API_H
#define OFFERD_AGENT_EXECUTOR_API_H

struct http_request;
struct http_server;
struct agent_execs;

/* The handler; arg is the struct agent_execs. */
void agent_exec_api_handle(struct http_request *req, void *arg);

/* Route both paths on srv to x (borrowed; must outlive srv's use).
 * Returns 0, or -1 if a path is already routed. */
int agent_exec_api_register(struct http_server *srv, struct agent_execs *x);

#endif
