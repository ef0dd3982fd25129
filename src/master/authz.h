/*
 * The master's gate: authentication (HTTP Basic against --credentials)
 * and authorization (--acls, Mesos's local authorizer) for every API call
 * (through the call table, calls.c) and every HTTP endpoint (through the
 * HTTP server's gate, one table here naming each endpoint's realm and
 * action). docs/security.md is the operator's view.
 *
 * Authentication: a request with an Authorization header is checked when
 * --credentials is set (401 when wrong, whether or not its realm requires
 * credentials); a request without one is anonymous, refused with 401 and
 * WWW-Authenticate: Basic realm="mesos" when its realm's --authenticate_*
 * flag is on.
 *
 * Authorization: the principal (NULL when anonymous) against the ACLs for
 * the action and each object the call names; 403 with a reason naming the
 * action. On top, for the scheduler API: a framework's calls must come from
 * the principal in its FrameworkInfo (and SUBSCRIBE's FrameworkInfo must
 * name the authenticated principal); for the agent API: an agent id held
 * by a connected agent of another principal is refused.
 */
#ifndef OFFERD_MASTER_AUTHZ_H
#define OFFERD_MASTER_AUTHZ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/acl.h"
#include "master/calls.h"
#include "mesos/v1/mesos.pb-c.h"

struct http_request;

/* Load --credentials and --acls of m->flags. Returns 0, or -1 with a
 * one-line reason in err. */
int master_authz_init(struct master *m, char *err, size_t errlen);
void master_authz_free(struct master *m);

/* The HTTP server's gate (http_server_set_gate, arg: the master). */
bool master_authz_gate(struct http_request *req, void *arg);

/* Authenticate an API request of realm: returns 0 with *authenticated and,
 * when true, the principal in principal (AUTH_MAX_PRINCIPAL + 1 bytes), or
 * -1 after replying 401. */
int master_authz_authenticate(struct master *m, enum master_realm realm,
                              struct http_request *req, char *principal,
                              bool *authenticated);

/* Authorize a decoded, bound call for action (see the top comment).
 * Returns 0, or -1 after replying 403. */
int master_authz_call(struct master_call_ctx *c, enum master_realm realm,
                      enum acl_action action);

/* Whether principal may do action on object (NULL: ANY). */
bool master_authz_allowed(const struct master *m, const char *principal,
                          enum acl_action action, const char *object);

/* The --acls in force (NULL: none), for approvers (common/acl.h) that
 * must not outlive the master. */
const struct acls *master_authz_acls(const struct master *m);

/* True when --acls is set (readers filter only then). */
bool master_authz_has_acls(const struct master *m);

/* The principal a request authenticated as (the gate or the call table
 * checked it already), copied into buf (AUTH_MAX_PRINCIPAL + 1 bytes), or
 * NULL when anonymous. */
const char *master_authz_principal(const struct master *m,
                                   const struct http_request *req, char *buf);

/* Filter a read endpoint's JSON answer (/state, /frameworks, /tasks,
 * /roles) in place for the request's principal, as Mesos does: frameworks
 * by view_frameworks (their user), their tasks and /tasks' by view_tasks
 * (the task's user, else its framework's), their executors by
 * view_executors (the executor's command user, else the framework's),
 * roles by view_roles, /state's
 * flags by view_flags. Nothing without --acls. (Agents' resources are
 * filtered by view_roles as they are modelled: role_view.h.) */
void master_authz_filter_json(const struct master *m,
                              const struct http_request *req, json_t *o);
/* The same for principal who (NULL: anonymous), for a reader whose
 * request is gone (a body written in slices filters each piece). */
void master_authz_filter_json_as(const struct master *m, const char *who,
                                 json_t *o);

/* The user a task runs as, which view_tasks names: its command's user,
 * else its executor's command's, else fw_user. */
const char *master_authz_task_user(const Mesos__V1__TaskInfo *t,
                                   const char *fw_user);

struct ProtobufCMessage;
/* The same for an operator API answer (GET_STATE, GET_FRAMEWORKS,
 * GET_TASKS, GET_EXECUTORS, GET_ROLES; a mesos.v1.master.Response), for
 * principal (NULL: anonymous); and, through role_view.h, agents'
 * resources (GET_STATE, GET_AGENTS), GET_OPERATIONS and GET_WEIGHTS by
 * view_roles, GET_QUOTA by get_quotas. */
void master_authz_filter_response(const struct master *m, const char *principal,
                                  struct ProtobufCMessage *response);

#endif
