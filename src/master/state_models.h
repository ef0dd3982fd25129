/*
 * The JSON models of /state's pieces, built by state_endpoints.c with the
 * same code its other endpoints use, one entity at a time, so that
 * state_stream.c can write /state in slices. Each returns a new reference.
 */
#ifndef OFFERD_MASTER_STATE_MODELS_H
#define OFFERD_MASTER_STATE_MODELS_H

#include <jansson.h>
#include <stdbool.h>

#include "master/master_types.h"

/* /state's fields before "slaves": the master's own (version, id, pid,
 * leader_info ...), the agent counts, flags and log_dir, in /state's
 * order. */
json_t *master_state_head_json(struct master *m);

/* One element of /state's "slaves", as principal who (NULL: anonymous)
 * may see it under --acls (view_roles: master/role_view.h). */
json_t *master_state_agent_json(const struct master *m, const struct agent *ag,
                                const char *who);

/* One element of "frameworks" (with_tasks: its tasks, completed tasks,
 * offers and executors too, as "completed_frameworks" shows them; without,
 * the fields before "tasks" and "labels"). */
json_t *master_state_framework_json(const struct framework *fw,
                                    bool with_tasks);

/* One element of a framework's "tasks", "completed_tasks", "offers",
 * "executors". */
json_t *master_state_task_json(const struct task *t);
json_t *master_state_record_json(const struct framework *fw,
                                 const struct task_record *r);
json_t *master_state_offer_json(const struct offer *of);
json_t *master_state_executor_json(const struct executor *e);

/* The pieces state_write.c takes from the models for the shapes it does
 * not write itself: Mesos's summary of l's regular (revocable) resources,
 * of its reserved ones by role (as summaries, as mesos.v1.Resource
 * arrays), and an agent's attributes. */
json_t *master_state_resources_json(const res_list *l);
json_t *master_state_revocable_json(const res_list *l);
json_t *master_state_reserved_json(const res_list *l);
json_t *master_state_reserved_full_json(const res_list *l);
json_t *master_state_attributes_json(const Mesos__V1__AgentInfo *ai);

#endif
