/*
 * view_roles (and get_quotas): what of the roles, and of the resources
 * that name a role, a reader may see, as Mesos's master decides it
 * (ObjectApprovers::approved<VIEW_ROLE> in src/common/http.hpp and its
 * callers). authz.c, state_endpoints.c, quota.c and operator_events.c call
 * it; docs/security.md lists what it hides.
 *
 * A resource is viewable when every role it names is: the role of each
 * reservation of its stack (a refined reservation "eng/web" over "eng"
 * needs both), and its allocation role when it has one. An unreserved,
 * unallocated resource names no role and is always viewable.
 *
 * Hidden from a reader without view_roles for a role:
 *   - the role in /roles and GET_ROLES (authz.c's keep_role_*), and its
 *     weight in /weights and GET_WEIGHTS;
 *   - of each agent in /state, /state-summary and /slaves: the role's key
 *     in "reserved_resources" and "reserved_resources_full", and every
 *     resource naming it in "resources_full", "reserved_resources_full",
 *     "unreserved_resources_full", "used_resources_full" and
 *     "offered_resources_full" (the summaries, "resources",
 *     "used_resources" ..., name no role and are left whole, as Mesos
 *     leaves them);
 *   - of each agent in GET_AGENTS and GET_STATE (and SUBSCRIBED): those
 *     resources in agent_info.resources, total_resources,
 *     allocated_resources and offered_resources, and in each recovered
 *     agent's resources;
 *   - an operation in GET_OPERATIONS whose consumed resources name it;
 *   - on the operator event stream: those resources in AGENT_ADDED's agent
 *     and in FRAMEWORK_ADDED / FRAMEWORK_UPDATED's allocated_resources and
 *     offered_resources.
 * Quota is Mesos's get_quotas action, not view_roles: a role's quota is
 * hidden from /quota and GET_QUOTA without get_quotas for the role.
 *
 * A viewer is an acl_approver (common/acl.h) picked once per reader; NULL
 * stands for "sees every role" (no --acls, or rules that allow the reader
 * ANY role), so that readers who see everything pay one branch and get
 * the unfiltered answer.
 */
#ifndef OFFERD_MASTER_ROLE_VIEW_H
#define OFFERD_MASTER_ROLE_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/acl.h"
#include "common/resources.h"
#include "master/master_types.h"
#include "mesos/v1/master.pb-c.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/quota.pb-c.h"

/* The approver of principal who (NULL: anonymous) for action
 * (ACL_VIEW_ROLES or ACL_GET_QUOTAS) under m's --acls, or NULL when it
 * allows every role. Free with acl_approver_free. */
struct acl_approver *master_role_viewer(const struct master *m, const char *who,
                                        enum acl_action action);

struct http_request;
/* The same for the principal req authenticated as (the HTTP gate checked
 * it already). */
struct acl_approver *master_role_viewer_of(const struct master *m,
                                           const struct http_request *req,
                                           enum acl_action action);

/* Whether v (NULL: everything) lets its reader see role. */
bool master_role_view_role(const struct acl_approver *v, const char *role);

/* Whether v lets its reader see r (see the top comment). */
bool master_role_view_resource(const struct acl_approver *v,
                               const struct resource *r);
bool master_role_view_resource_pb(const struct acl_approver *v,
                                  const Mesos__V1__Resource *r);

/* Append to *out a copy of each resource of in that v lets its reader
 * see. */
void master_role_view_filter(const struct acl_approver *v, const res_list *in,
                             res_list *out);

/* Drop from the agent (in place) the resources v hides; dropped messages
 * are freed. */
void master_role_view_agent_pb(
    const struct acl_approver *v,
    Mesos__V1__Master__Response__GetAgents__Agent *a);

/* Filter a read call's answer in place for principal who (NULL:
 * anonymous): GET_AGENTS and GET_STATE's agents, GET_OPERATIONS,
 * GET_WEIGHTS by view_roles, GET_QUOTA by get_quotas. Dropped messages are
 * freed; the response itself may live on the stack. Nothing without
 * --acls. */
void master_role_view_response(const struct master *m, const char *who,
                               Mesos__V1__Master__Response *r);

/* The same for /weights' (a GetWeights) and /quota's (a QuotaStatus)
 * answers, for the principal of req. */
void master_role_view_weights(const struct master *m,
                              const struct http_request *req,
                              Mesos__V1__Master__Response__GetWeights *gw);
void master_role_view_quota(const struct master *m,
                            const struct http_request *req,
                            Mesos__V1__Quota__QuotaStatus *s);

/* An operator event as v lets its reader see it: a filtered copy (free
 * with jpb_free) when v hides some of its resources, or NULL when the
 * reader sees ev unchanged (so that it shares ev's encoding). */
Mesos__V1__Master__Event *
master_role_view_event(const struct acl_approver *v,
                       const Mesos__V1__Master__Event *ev);

#endif
