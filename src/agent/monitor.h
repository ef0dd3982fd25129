/*
 * The agent's /monitor/statistics endpoint (also /monitor/statistics.json
 * and under "/slave(1)"), as Mesos's: a JSON array with one entry per live
 * task,
 *   {"executor_id": <task id>, "executor_name": "Command Executor (Task:
 *    <id>)", "framework_id": ..., "source": <task id>,
 *    "statistics": <ResourceStatistics as JSON>}
 * with the figures of the task's cgroup (isolator.h) where it has one, else
 * what /proc says of its processes (usage.h).
 */
#ifndef OFFERD_AGENT_MONITOR_H
#define OFFERD_AGENT_MONITOR_H

#include "agent/endpoints.h"
#include "agent/state_json.h"

#include <jansson.h>

struct http_server;
struct agent_auth;

/* The document for view v at wall time now, reading /proc under
 * proc_root for tasks without a cgroup. New reference. */
json_t *agent_monitor_json(const struct agent_state_view *v,
                           const char *proc_root, double now);

/* Route the endpoint on srv, reading the agent through view(arg) on each
 * request (arg borrowed), showing each reader the containers whose
 * executor auth's --acls let it see (viewer.h; auth borrowed, NULL: all).
 * Returns 0, or -1 if a path is already routed. */
int agent_monitor_register(struct http_server *srv, agent_view_fn view,
                           void *arg, const struct agent_auth *auth);

#endif
