/*
 * What the agent keeps, in memory, of executors and frameworks that have
 * ended, for /state's "completed_tasks", "completed_executors" and
 * "completed_frameworks", as Mesos's agent keeps them:
 *
 * - a task the agent forgets (terminal, its last update acknowledged, its
 *   processes gone) becomes a completed task of its executor: at most
 *   AGENT_COMPLETED_TASKS_PER_EXECUTOR per executor (Mesos's
 *   MAX_COMPLETED_TASKS_PER_EXECUTOR), the oldest dropped first;
 * - an executor is completed once none of its tasks is held any more and
 *   it does not run (a command task's executor: when its task is
 *   forgotten; a custom executor: when it exited and its tasks are
 *   forgotten): it moves, with its completed tasks, to its framework's
 *   completed executors, at most --max_completed_executors_per_framework;
 * - a framework is completed once the agent holds none of its tasks and
 *   runs none of its executors: it moves, with its completed executors, to
 *   the completed frameworks, at most --max_completed_frameworks (a
 *   framework that launches a task again is taken back, with them, as
 *   Mesos's agent does).
 *
 * Each record is kept as its /state text (a JSON object, built when it is
 * recorded) plus the users the view_* rules are asked about (viewer.h), so
 * that /state filters it for each reader. Nothing is checkpointed: an
 * agent restart starts with none.
 */
#ifndef OFFERD_AGENT_COMPLETED_H
#define OFFERD_AGENT_COMPLETED_H

#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stddef.h>

struct agent_completed;
struct agent_execs;
struct agent_task;
struct agent_tasks;
struct agent_state_view;

/* Mesos's MAX_COMPLETED_TASKS_PER_EXECUTOR. */
#define AGENT_COMPLETED_TASKS_PER_EXECUTOR 200

/* Keep at most max_executors completed executors per framework and
 * max_frameworks completed frameworks (0: none). */
struct agent_completed *agent_completed_new(size_t max_executors,
                                            size_t max_frameworks);
/* Free everything. NULL is ignored. */
void agent_completed_free(struct agent_completed *c);

/* Keep t, which the agent is about to forget, as a completed task of its
 * executor. fi is its framework (may be NULL), x the custom executors
 * (for the executor's ExecutorInfo and sandbox; may be NULL), agent_id
 * the agent's id (may be NULL); all borrowed. */
void agent_completed_task(struct agent_completed *c, const struct agent_task *t,
                          const Mesos__V1__FrameworkInfo *fi,
                          const struct agent_execs *x, const char *agent_id);

/* The custom executor ex of framework fw (fi: may be NULL) exited; info
 * and sandbox (may be NULL) are what it ran with, all borrowed. It is
 * completed once its tasks are forgotten (agent_completed_settle). */
void agent_completed_executor_exited(struct agent_completed *c, const char *fw,
                                     const Mesos__V1__FrameworkInfo *fi,
                                     const Mesos__V1__ExecutorInfo *info,
                                     const char *sandbox);

/* Complete what of framework fw is idle now (see the top): its executors
 * of which tasks holds no task and x runs no process, and fw itself when
 * tasks and x hold nothing of it. Call after a task was forgotten or an
 * executor exited. */
void agent_completed_settle(struct agent_completed *c, const char *fw,
                            const struct agent_tasks *tasks,
                            const struct agent_execs *x);

/* Framework fw launches a task: if it is completed, it is active again
 * (with its completed executors). */
void agent_completed_framework_back(struct agent_completed *c, const char *fw);

/* The FrameworkInfo kept for fw (active with completed executors or tasks,
 * or completed), or NULL; borrowed. c may be NULL. */
const Mesos__V1__FrameworkInfo *
agent_completed_framework_info(const struct agent_completed *c, const char *fw);

/* Counts, for tests and metrics: completed tasks of fw's executor ex not
 * completed yet, fw's completed executors, completed frameworks. */
size_t agent_completed_tasks_of(const struct agent_completed *c, const char *fw,
                                const char *ex);
size_t agent_completed_executors_of(const struct agent_completed *c,
                                    const char *fw);
size_t agent_completed_frameworks(const struct agent_completed *c);

/* For /state (state_json.c), each filtered for v's reader (viewer.h):
 * put the completed tasks of fw's executor ex (not completed itself) at
 * the front of the array tasks, oldest first; fw's completed executors as a new
 * array; the completed frameworks as a new array. v->completed may be NULL. */
void agent_completed_tasks_json(const struct agent_state_view *v,
                                const char *fw, const char *ex, json_t *tasks);
json_t *agent_completed_executors_json(const struct agent_state_view *v,
                                       const char *fw);
json_t *agent_completed_frameworks_json(const struct agent_state_view *v);

#endif
