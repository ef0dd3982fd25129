/*
 * Executors: the custom (and default) executors frameworks launch tasks
 * with, tracked per framework and agent as Mesos's master does. The owner
 * of struct executor: executors.c creates and frees it; it lives in its
 * framework's map (fw->executors) and is indexed by its agent's
 * (ag->executors). Its resources are allocated once, when a launch first
 * names it on an agent, and given back to the allocator when the agent
 * reports it exited.
 */
#ifndef OFFERD_MASTER_EXECUTORS_H
#define OFFERD_MASTER_EXECUTORS_H

#include "master/master_types.h"

/* fw's executor executor_id on ag, or NULL. */
struct executor *master_executor_find(const struct agent *ag,
                                      const char *framework_id,
                                      const char *executor_id);

/* Validate ei, the executor of a task of fw on ag (group: the executor of
 * a LAUNCH_GROUP, else a TaskInfo's of a LAUNCH), as Mesos's master does,
 * and return the ExecutorInfo as the master keeps and sends it: a copy of
 * ei with framework_id set to fw's and its resources allocated to role
 * (those without an allocation role) in the post-refinement format; *res
 * (OUT) holds those resources. An executor of the same id already on ag
 * must be the same ExecutorInfo. Returns the copy (the caller frees it
 * with protobuf_c_message_free_unpacked, or hands it to
 * master_executor_add), or NULL with a one-line reason in err. Changes
 * nothing. */
Mesos__V1__ExecutorInfo *
master_executor_prepare(const struct framework *fw, const struct agent *ag,
                        const Mesos__V1__ExecutorInfo *ei, bool group,
                        const char *role, res_list *res, char *err,
                        size_t errlen);

/* Whether a and b are the same ExecutorInfo (their encodings are equal:
 * compare copies from master_executor_prepare, which normalizes them). */
bool master_executor_info_equal(const Mesos__V1__ExecutorInfo *a,
                                const Mesos__V1__ExecutorInfo *b);

/* Track a new executor of fw on ag: info (taken, from
 * master_executor_prepare or an agent's report) and res (copied, with
 * allocation role). The caller has checked that none of that id is on ag
 * and accounted res with the allocator. */
struct executor *master_executor_add(struct master *m, struct framework *fw,
                                     struct agent *ag,
                                     Mesos__V1__ExecutorInfo *info,
                                     const res_list *res);

/* Forget e and free it; with recover, its resources go back to the
 * allocator first. */
void master_executor_remove(struct master *m, struct executor *e, bool recover);

/* Forget every executor on ag (it is being removed: the allocator forgets
 * the agent, so nothing is recovered). */
void master_executors_forget_agent(struct master *m, struct agent *ag);

/* Forget every executor of fw (it is being removed: the allocator frees
 * what the framework holds). */
void master_executors_forget_framework(struct master *m, struct framework *fw);

/* Add to used the resources of every executor in executors (a framework's
 * or an agent's map). */
void master_executors_usage(const struct hmap *executors, res_list *used);

/* Free e (for hmap_free of a framework's map at shutdown). */
void master_executor_free(void *e);

/* EXECUTOR_EXITED from ag: forget the executor, give its resources back
 * and send its framework, when connected, Mesos's FAILURE event with
 * agent_id, executor_id and status. An executor the master does not know
 * is logged and ignored. */
void master_executor_exited(struct master *m, struct agent *ag,
                            const Offerd__Agent__Call__ExecutorExited *ee);

/* An executor a (re-)registering agent reports (ei, its framework fw):
 * taken in when the master does not know it, with its resources as
 * reported (allocated to their role, else fw's first). Returns the new
 * executor (whose resources the caller accounts with the allocator when
 * the agent is new to it), or NULL when it was known or is malformed. */
struct executor *master_executor_adopt(struct master *m, struct framework *fw,
                                       struct agent *ag,
                                       const Mesos__V1__ExecutorInfo *ei);

/* A known agent re-registered reporting the executors of sub: executors
 * the master holds on ag that the agent does not report are gone, their
 * resources recovered, as Mesos's reconciliation of a known agent. */
void master_executors_reconcile(struct master *m, struct agent *ag,
                                Mesos__V1__ExecutorInfo *const *reported,
                                size_t n);

#endif
