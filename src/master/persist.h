/*
 * Durable changes: the master's side of the registry (recovery at start,
 * records of agents and frameworks, batches).
 */
#ifndef OFFERD_MASTER_PERSIST_H
#define OFFERD_MASTER_PERSIST_H

#include "master/master_types.h"

/* Open the registry (flags->registry, in flags->work_dir) and recover what it
 * holds into m: frameworks (inactive, awaiting re-subscription) and
 * admitted agents (awaiting re-registration). Returns 0, or -1 with a
 * reason in err. */
int master_persist_open(struct master *m, char *err, size_t errlen);
/* Close the registry, waiting for writes in flight. */
void master_persist_close(struct master *m);
/* Free a value of m->recovered_agents. */
void master_persist_free_recovered(void *p);

/* Done callback of a durable change: ok, or a one-line reason. */
typedef void (*master_persist_fn)(struct master *m, bool ok, const char *err,
                                  void *arg);
struct registry_batch;
/* Apply batch (taken) durably, then call done on the loop. */
void master_persist_batch(struct master *m, struct registry_batch *batch,
                          master_persist_fn done, void *arg);
/* Record (put) or forget (del) an admitted agent / a framework durably, then
 * call done on the loop. The agent's operator state (deactivated, drain;
 * drain may be NULL) is recorded with it. */
void master_persist_agent_info(struct master *m,
                               const Mesos__V1__AgentInfo *info,
                               bool deactivated,
                               const Mesos__V1__DrainInfo *drain,
                               const res_list *ckpt, uint64_t ckpt_version,
                               master_persist_fn done, void *arg);
/* A batch putting ag's registry record with the given operator state (and
 * its checkpointed resources). NULL with a reason when it cannot be
 * encoded. */
struct registry_batch *
master_agent_record_batch(const struct agent *ag, bool deactivated,
                          const Mesos__V1__DrainInfo *drain, char *err,
                          size_t errlen);
/* Record ag as it is now. */
void master_persist_agent(struct master *m, const struct agent *ag,
                          master_persist_fn done, void *arg);
void master_persist_framework(struct master *m,
                              const Mesos__V1__FrameworkInfo *info,
                              double registered_time, master_persist_fn done,
                              void *arg);
void master_persist_framework_removed(struct master *m, const char *id,
                                      master_persist_fn done, void *arg);
void master_persist_agent_unreachable(struct master *m, const char *id,
                                      master_persist_fn done, void *arg);

#endif
