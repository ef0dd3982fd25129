/*
 * Authorization as Mesos's local authorizer does it, over Mesos's ACL JSON
 * (the --acls flag of master and agent; field names from
 * include/mesos/authorizer/acls.proto):
 *
 *   {"permissive": false,
 *    "run_tasks": [{"principals": {"values": ["marathon"]},
 *                   "users": {"values": ["nobody"]}},
 *                  {"principals": {"type": "ANY"},
 *                   "users": {"type": "NONE"}}]}
 *
 * Each action holds an ordered list of rules, each a subject entity
 * ("principals") and an object entity (named per action: "roles", "users",
 * "machines", "agents" ...). An entity is {"values": [...]} (SOME), or
 * {"type": "ANY"} or {"type": "NONE"}.
 *
 * A request is a principal (NULL: unauthenticated, which is ANY) and an
 * object (NULL: none given, which is ANY). The first rule whose subject and
 * object both *match* the request decides: allowed when both also *allow*
 * it. When no rule matches, "permissive" (default true) decides.
 *   matches: a SOME request matches ANY and NONE entities, and a SOME
 *            entity that lists it; an ANY request matches ANY and NONE.
 *   allows:  a SOME request is allowed by ANY, or by a SOME entity that
 *            lists it; an ANY request only by ANY. NONE allows nothing.
 * So {"principals": {"type": "ANY"}, "users": {"type": "NONE"}} denies
 * everyone, and an unauthenticated request is denied by any rule that names
 * principals.
 *
 * Actions Mesos knows and offerd does not enforce (nested containers ...)
 * are accepted and ignored, so existing files load; an unknown field is
 * refused (a typo must not leave the cluster open).
 */
#ifndef OFFERD_COMMON_ACL_H
#define OFFERD_COMMON_ACL_H

#include <stdbool.h>
#include <stddef.h>

/* The actions offerd enforces. */
enum acl_action {
    ACL_NONE = 0, /* nothing to authorize */
    ACL_REGISTER_FRAMEWORKS,
    ACL_RUN_TASKS,
    ACL_TEARDOWN_FRAMEWORKS,
    ACL_RESERVE_RESOURCES,
    ACL_UNRESERVE_RESOURCES,
    ACL_CREATE_VOLUMES,
    ACL_DESTROY_VOLUMES,
    ACL_RESIZE_VOLUME,
    ACL_GET_QUOTAS,
    ACL_UPDATE_QUOTAS,
    ACL_VIEW_ROLES,
    ACL_UPDATE_WEIGHTS,
    ACL_GET_ENDPOINTS,
    ACL_VIEW_FRAMEWORKS,
    ACL_VIEW_TASKS,
    ACL_VIEW_EXECUTORS,
    ACL_ACCESS_SANDBOXES,
    ACL_ACCESS_MESOS_LOGS,
    ACL_VIEW_FLAGS,
    ACL_SET_LOG_LEVEL,
    ACL_REGISTER_AGENTS,
    ACL_UPDATE_MAINTENANCE_SCHEDULES,
    ACL_GET_MAINTENANCE_SCHEDULES,
    ACL_START_MAINTENANCES,
    ACL_STOP_MAINTENANCES,
    ACL_GET_MAINTENANCE_STATUSES,
    ACL_MARK_AGENTS_GONE,
    ACL_DRAIN_AGENTS,
    ACL_DEACTIVATE_AGENTS,
    ACL_REACTIVATE_AGENTS,
    ACL_NACTIONS
};

struct acls;

/* Parse the --acls value: inline JSON (starting with '{'), or the path of
 * a file holding it (Mesos's "file://" prefix allowed). Returns the ACLs,
 * or NULL with a one-line reason in err. */
struct acls *acls_load(const char *flag_value, char *err, size_t errlen);
/* Parse JSON text of len bytes. */
struct acls *acls_parse(const char *text, size_t len, char *err, size_t errlen);
void acls_free(struct acls *a);

/* Whether principal may do action on object (see the top comment). With
 * a == NULL (no --acls) everything is allowed, as in Mesos without an
 * authorizer. */
bool acls_authorized(const struct acls *a, const char *principal,
                     enum acl_action action, const char *object);

/* A principal's rules for one action, picked once so that deciding an
 * object costs a walk of the few rules that can apply (Mesos's cached
 * ObjectApprover): the rules whose subject matches the principal, up to
 * the first whose object is ANY or NONE (it decides every object after
 * it). When that one is the first, the verdict is the same for every
 * object and acl_approver_allows is one branch. Borrows the ACLs: free the
 * approver before them. */
struct acl_approver;

/* The approver of principal (NULL: anonymous) for action under a (NULL:
 * everything allowed). Never NULL; free with acl_approver_free. */
struct acl_approver *acl_approver_new(const struct acls *a,
                                      const char *principal,
                                      enum acl_action action);
void acl_approver_free(struct acl_approver *ap);

/* Whether the approver's principal may do its action on object (NULL:
 * ANY), as acls_authorized would answer. */
bool acl_approver_allows(const struct acl_approver *ap, const char *object);

/* True when the answer is the same for every object: *verdict is it. */
bool acl_approver_constant(const struct acl_approver *ap, bool *verdict);

/* Mesos's name of action ("run_tasks"). */
const char *acl_action_name(enum acl_action action);

#endif
