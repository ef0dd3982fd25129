/*
 * The agent's GET /state document, in the shape of Mesos's agent /state for
 * what offerd's agent has:
 *
 *   {"version", "id", "pid", "hostname", "port", "start_time", "master",
 *    "resources": {"cpus": 4.0, "mem": ..., "ports": "[31000-32000]"},
 *    "reserved_resources": {"<role>": {"cpus": 1.0, ...}},
 *    "unreserved_resources": {"cpus": 3.0, ...},
 *    "reserved_resources_full": {"<role>": [Resource, ...]},
 *    "checkpointed_resources": [Resource, ...],
 *    "checkpointed_resources_version": 3,
 *    "attributes": {"rack": "r1", ...},
 *    "flags": {...},
 *    "frameworks": [{"id", "name", "user", "hostname", "role", "roles",
 *                    "executors": [{"id", "name", "source", "framework_id",
 *                                   "directory", "resources", "tasks": [...],
 *                                   "queued_tasks": [], "completed_tasks":
 *                                   [...]}],
 *                    "completed_executors": [executor, ...]}],
 *    "completed_frameworks": [{framework, "executors": [],
 *                              "completed_executors": [...]}]}
 *
 * "resources" is the agent's total: its static resources (--resources or
 * detected) with the checkpointed resources (dynamic reservations and
 * persistent volumes) applied, as Mesos's agent shows totalResources;
 * "reserved_resources" and "reserved_resources_full" split its reserved
 * part by the role each resource is reserved to (the top of its stack,
 * static reservations included), the latter as Resource objects
 * (post-refinement format: "reservations"); "unreserved_resources" is the
 * rest. "checkpointed_resources" (the list as the master last sent it)
 * and its "checkpointed_resources_version" are offerd's additions.
 *
 * A command task runs under Mesos's command executor convention (executor
 * id = task id), so its executor holds one task, live in "tasks" and
 * terminal (until its terminal update is acknowledged) in
 * "completed_tasks"; its "directory" is the task's sandbox. A custom
 * executor holds its live tasks in "tasks", and in "completed_tasks" its
 * terminal ones, then those the agent forgot (completed.h). Once an
 * executor has ended and its tasks are forgotten it moves to its
 * framework's "completed_executors", and a framework with neither tasks
 * nor executors left to "completed_frameworks" (completed.h). Under
 * --acls each reader sees what viewer.h lets it see: frameworks, tasks,
 * executors, the roles of "reserved_resources(_full)" (view_roles) and
 * "flags" (view_flags). A task is
 * {"id", "name", "framework_id", "executor_id", "slave_id", "state",
 *  "resources", "statuses": [{"state", "timestamp"}]}.
 */
#ifndef OFFERD_AGENT_STATE_JSON_H
#define OFFERD_AGENT_STATE_JSON_H

#include "agent/attributes.h"
#include "agent/tasks.h"
#include "common/resources.h"
#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stdint.h>

struct flags;
struct hmap;
struct agent_iso;
struct agent_execs;
struct agent_viewer;
struct agent_completed;

/* Everything /state shows, borrowed. */
struct agent_state_view {
    const char *agent_id; /* NULL before the first registration */
    const char *hostname;
    const char *ip;
    uint16_t port;
    const char *master; /* "ip:port" */
    double start_time;
    const res_list *resources;
    const struct agent_attrs *attributes;
    const Mesos__V1__DomainInfo *domain; /* NULL: none */
    const struct flags *flags;
    const struct hmap *frameworks; /* id -> Mesos__V1__FrameworkInfo */
    const struct agent_tasks *tasks;
    const struct agent_execs *execs; /* custom executors; may be NULL */
    const res_list *checkpointed;    /* dynamic reservations and volumes */
    uint64_t checkpointed_version;   /* 0: none applied */
    const struct agent_iso *iso;     /* task statistics (isolator.h) */
    /* Completed tasks, executors, frameworks (completed.h); may be NULL. */
    const struct agent_completed *completed;
    /* What the reader may see (viewer.h); NULL: everything. */
    const struct agent_viewer *viewer;
};

/* Resources as Mesos's model(Resources): each name summed over every
 * reservation; scalars as numbers, ranges as "[a-b, c-d]", sets as
 * "{a,b}". New reference. */
json_t *agent_resources_json(const res_list *l);

/* /state's object of task t (agent_id: may be NULL); of the command
 * executor of command task t, and of custom executor ei of framework fw
 * (sandbox: may be NULL), both without their "tasks", "queued_tasks" and
 * "completed_tasks"; of framework id (fi: may be NULL), with empty
 * "executors" and "completed_executors". New references. */
json_t *agent_task_json(const struct agent_task *t, const char *agent_id);
json_t *agent_command_executor_head_json(const struct agent_task *t);
json_t *agent_custom_executor_head_json(const Mesos__V1__ExecutorInfo *ei,
                                        const char *fw, const char *sandbox);
json_t *agent_framework_json(const char *id,
                             const Mesos__V1__FrameworkInfo *fi);

/* The /state document. New reference. */
json_t *agent_state_json(const struct agent_state_view *v);

#endif
