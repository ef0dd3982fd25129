/*
 * Agents: the agent API (registration, pings, status updates), removal and
 * re-registration. The owner of struct agent: agents.c creates and frees it.
 */
#ifndef OFFERD_MASTER_AGENTS_H
#define OFFERD_MASTER_AGENTS_H

#include "master/master_types.h"

struct agent *master_agent_find(struct master *m, const char *id);
/* Most updates an UPDATES call may carry. */
#define MASTER_AGENT_MAX_UPDATES 1024
/* POST /api/v1/agent. */
void master_agent_api(struct http_request *req, void *arg);
/* Why an agent is removed. */
enum agent_removal {
    AGENT_REMOVED_UNREACHABLE, /* missed pings: tasks UNREACHABLE or LOST,
                                  recorded unreachable in the registry */
    AGENT_REMOVED_SHUTDOWN,    /* it unregistered: tasks LOST */
    AGENT_REMOVED_BY_OPERATOR, /* machine down, marked gone: tasks
                                  GONE_BY_OPERATOR or LOST */
};
/* Remove an agent: its tasks are reported as `why` decides, its offers and
 * inverse offers are rescinded, the allocator forgets it. */
void master_agent_remove(struct master *m, struct agent *ag,
                         enum agent_removal how, const char *why);
/* MARK_AGENT_GONE (in its turn among the operator changes): record the
 * agent gone in the registry, then remove it as an operator does (its
 * tasks TASK_GONE_BY_OPERATOR or TASK_LOST, offers rescinded, SHUTDOWN
 * sent) or forget it if it is unreachable or not back since a restart.
 * Answers req 200 (also when already gone), 404 for an agent the master
 * does not know, 503 when the registry write fails. The agent may never
 * register again with that id. */
void master_agent_mark_gone(struct master *m, struct http_request *req,
                            const char *id);
/* The unreachable tasks frameworks hold of agent_id (task id -> agent id
 * in each framework's unreachable_tasks) are forgotten: the agent came
 * back without them (gone false), was marked gone (gone true: each is
 * reported TASK_GONE_BY_OPERATOR), or the registry's collection forgot it
 * (gone false: reconciliation then answers TASK_UNKNOWN). */
void master_agent_forget_unreachable_tasks(struct master *m,
                                           const char *agent_id, bool gone);

/* ag, recorded gone (in m->gone_agents, durably), goes as Mesos's
 * markGone does: SHUTDOWN "Agent has been marked gone", its operations'
 * frameworks told OPERATION_GONE_BY_OPERATOR, then master_agent_remove
 * (tasks GONE_BY_OPERATOR or LOST). ag is freed. */
void master_agent_remove_gone(struct master *m, struct agent *ag);
/* After --agent_reregister_timeout: agents from the registry that did not
 * come back are marked unreachable. */
void master_agents_reregister_timeout(struct master *m);
/* A snapshot of ag's tasks (callers may remove tasks while they walk it):
 * a malloc'd array (caller frees) of *n tasks. */
struct task **master_agent_tasks(const struct agent *ag, size_t *n);
/* What ag's live tasks use and its offers hold (both added to, with
 * allocation roles). */
void master_agent_usage(const struct agent *ag, res_list *used,
                        res_list *offered);
/* Send ag a SHUTDOWN event (it kills its tasks and exits), with message
 * (borrowed; may be NULL) for its log. */
void master_agent_shutdown(struct master *m, struct agent *ag,
                           const char *message);
/* The periodic ping: count misses, remove agents past the limit, ping the
 * rest. */
void master_agents_ping(struct master *m);

/* Ping one agent (its missed pings counted, removed after
 * --max_agent_ping_timeouts misses); the master's timer pings every agent
 * once per interval through ping_spread.c. */
void master_agent_ping(struct master *m, struct agent *ag);
void master_agent_free(struct agent *ag);

#endif
