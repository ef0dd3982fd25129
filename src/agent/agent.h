/*
 * The agent itself: owns the master connection, the task table, the status
 * update manager and the checkpoint, and turns the master's events into
 * task launches, kills and status updates (docs/agent-protocol.md).
 *
 * Everything runs on the caller's event loop. The agent stops the loop
 * (event_base_loopexit) only after agent_shutdown has killed every task;
 * on SIGTERM the program simply stops the loop and frees the agent, which
 * leaves the tasks running for a later agent to find.
 */
#ifndef OFFERD_AGENT_AGENT_H
#define OFFERD_AGENT_AGENT_H

#include "agent/attributes.h"
#include "agent/flags_agent.h"
#include "common/resources.h"
#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct agent;
struct agent_state_view;
struct http_server;
struct agent_exec_auth;

/* What the program hands the agent. Everything is borrowed and must
 * outlive the agent. */
struct agent_config {
    const struct agent_flags *flags;
    const char *work_dir;      /* absolute, existing */
    uint16_t port;             /* the port the HTTP server bound */
    const res_list *resources; /* the agent's total resources */
    const struct agent_attrs *attributes;
    const Mesos__V1__DomainInfo *domain; /* --domain; NULL: none */
    /* The Authorization header of its calls to the master, or NULL
     * (--credential; auth_agent.h). */
    const char *master_authorization;
    /* The executors' tokens (executor_auth.h), or NULL. */
    const struct agent_exec_auth *exec_auth;
};

/* Create the agent on base: open the checkpoint under work_dir/meta (and
 * read the agent id saved there; an unreadable one is logged and the agent
 * registers as a new one), make the sandboxes root, watch SIGCHLD.
 * Returns NULL with a one-line reason in err. */
struct agent *agent_new(struct event_base *base, const struct agent_config *cfg,
                        char *err, size_t errlen);

/* Recover what the checkpoint holds (recovery.h: re-attach to the tasks
 * that still run, report those that ended meanwhile, queue the pending
 * updates), then start subscribing to the master. With --recover=cleanup,
 * kill the recovered tasks instead, remove the checkpoint and stop the
 * loop (as agent_shutdown) without subscribing. */
void agent_start(struct agent *a);

/* Kill every task (SIGTERM, SIGKILL after each one's grace period) and stop
 * the loop once they are gone and their last updates had a chance to go
 * out (or after --shutdown_timeout). why is logged. Idempotent. */
void agent_shutdown(struct agent *a, const char *why);

/* Fill *out (OUT) with the agent's state: everything it points to is
 * borrowed from the agent and valid until the loop runs again. */
void agent_state_view_of(const struct agent *a, struct agent_state_view *out);

/* The /state document (new reference). */
json_t *agent_state(const struct agent *a);

/* Route the agent's own API on srv: the executor API (executor_api.h).
 * Returns 0, or -1 if a path is already routed. */
int agent_routes(struct agent *a, struct http_server *srv);

/* Free the agent. Tasks that still run are left running. NULL is ignored. */
void agent_free(struct agent *a);

#endif
