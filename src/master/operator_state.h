/*
 * The master's state as mesos.v1.master messages: the Responses of the
 * operator API's read calls (GET_STATE, GET_FRAMEWORKS, GET_TASKS, ...) and
 * the pieces its event stream sends (a Task, a Framework, an Agent). They
 * show what the JSON endpoints show (/state, /frameworks, /tasks, /roles,
 * /flags, /metrics/snapshot), in Mesos's protobuf shapes.
 *
 * Every message returned here is built on the heap, strings and
 * sub-messages included, and is the caller's: release it with
 * protobuf_c_message_free_unpacked(&msg->base, NULL). Nothing is borrowed
 * from the master, so a message outlives any later change of state.
 */
#ifndef OFFERD_MASTER_OPERATOR_STATE_H
#define OFFERD_MASTER_OPERATOR_STATE_H

#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"

/* t as a mesos.v1.Task: its info, latest state, resources (with allocation
 * role), statuses (the states it went through; the latest with the whole
 * status the master holds). */
Mesos__V1__Task *master_opst_task(const struct task *t);

/* r, a completed task of fw, as a mesos.v1.Task: what the master remembers
 * of it. */
Mesos__V1__Task *master_opst_completed_task(const struct framework *fw,
                                            const struct task_record *r);

/* e as a GetExecutors.Executor (its info and agent). */
Mesos__V1__Master__Response__GetExecutors__Executor *
master_opst_executor(const struct executor *e);

/* fw (live or completed) as a GetFrameworks.Framework. */
Mesos__V1__Master__Response__GetFrameworks__Framework *
master_opst_framework(const struct framework *fw);

/* ag (registered: ag->info set) as a GetAgents.Agent. */
Mesos__V1__Master__Response__GetAgents__Agent *
master_opst_agent(const struct agent *ag);

/* The whole GET_STATE at once: the operator event stream's SUBSCRIBED, and
 * the reference the sliced writer (operator_stream.h) is tested against. */
Mesos__V1__Master__Response__GetState *master_opst_get_state(struct master *m);

/* This build's VersionInfo (GET_VERSION): /version's facts. Caller frees
 * with protobuf_c_message_free_unpacked. */
Mesos__V1__VersionInfo *master_opst_version(void);

/* The Response to a read call of the operator API (GET_STATE, GET_AGENTS,
 * GET_FRAMEWORKS, GET_TASKS, GET_EXECUTORS, GET_OPERATIONS, GET_ROLES,
 * GET_FLAGS, GET_METRICS, GET_MASTER), or NULL for any other type
 * (GET_LOGGING_LEVEL is operator_api.c's: it reads the log toggle). */
Mesos__V1__Master__Response *
master_opst_response(struct master *m, Mesos__V1__Master__Call__Type type);

#endif
