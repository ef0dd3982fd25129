/*
 * The master's authentication and authorization; see authz.h.
 */
#include "master/authz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"
#include "common/http.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "master/agents.h"
#include "master/flags_master.h"
#include "master/frameworks.h"
#include "master/role_view.h"
#include "mesos/v1/master.pb-c.h"
#include "mesos/v1/quota.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"
#include "offerd/agent.pb-c.h"

struct master_authz {
    struct auth_credentials *creds; /* NULL: --credentials unset */
    struct acls *acls;              /* NULL: --acls unset */
};

int master_authz_init(struct master *m, char *err, size_t errlen)
{
    const struct master_flags *f = m->flags;
    struct master_authz *z = xcalloc(1, sizeof(*z));
    m->authz = z;
    if (f->credentials != NULL) {
        z->creds = auth_credentials_load(f->credentials, err, errlen);
        if (z->creds == NULL)
            return -1;
        log_info("authentication: %zu principals from --credentials",
                 auth_credentials_count(z->creds));
    }
    if (f->acls != NULL) {
        z->acls = acls_load(f->acls, err, errlen);
        if (z->acls == NULL)
            return -1;
    }
    return 0;
}

void master_authz_free(struct master *m)
{
    if (m->authz == NULL)
        return;
    auth_credentials_free(m->authz->creds);
    acls_free(m->authz->acls);
    free(m->authz);
    m->authz = NULL;
}

const struct acls *master_authz_acls(const struct master *m)
{
    return m->authz != NULL ? m->authz->acls : NULL;
}

bool master_authz_has_acls(const struct master *m)
{
    return m->authz != NULL && m->authz->acls != NULL;
}

bool master_authz_allowed(const struct master *m, const char *principal,
                          enum acl_action action, const char *object)
{
    return acls_authorized(m->authz != NULL ? m->authz->acls : NULL, principal,
                           action, object);
}

/* ---- Authentication
 * ---------------------------------------------------------
 */

enum http_realm {
    REALM_OPEN,      /* never authenticated (/health, /version) */
    REALM_READONLY,  /* --authenticate_http_readonly */
    REALM_READWRITE, /* --authenticate_http_readwrite */
    REALM_API,       /* the call table authenticates (calls.c) */
};

static bool realm_required(const struct master *m, enum master_realm realm)
{
    const struct master_flags *f = m->flags;
    switch (realm) {
    case MASTER_REALM_FRAMEWORKS:
        return f->authenticate_frameworks || f->authenticate_http_frameworks;
    case MASTER_REALM_AGENTS:
        return f->authenticate_agents;
    case MASTER_REALM_READWRITE:
        return f->authenticate_http_readwrite;
    }
    return true;
}

/* Authenticate req: 0 with *authenticated and principal, or -1 after a
 * 401 (required and anonymous, or wrong credentials). */
static int authenticate(const struct master *m, bool required,
                        struct http_request *req, char *principal,
                        bool *authenticated)
{
    *authenticated = false;
    const struct auth_credentials *creds =
        m->authz != NULL ? m->authz->creds : NULL;
    if (creds == NULL && !required)
        return 0; /* no principals known: headers are not looked at */
    char why[256];
    switch (auth_request(creds, req, principal, why, sizeof(why))) {
    case AUTH_OK:
        *authenticated = true;
        return 0;
    case AUTH_ANONYMOUS:
        if (!required)
            return 0;
        auth_reply_unauthorized(req, "authentication required");
        return -1;
    case AUTH_FAILED:
        break;
    }
    auth_reply_unauthorized(req, why);
    return -1;
}

int master_authz_authenticate(struct master *m, enum master_realm realm,
                              struct http_request *req, char *principal,
                              bool *authenticated)
{
    return authenticate(m, realm_required(m, realm), req, principal,
                        authenticated);
}

/* ---- Objects of a call
 * ------------------------------------------------------
 */

static const char *or_null(const char *s)
{
    return s != NULL ? s : "(none)";
}

static int forbid(struct http_request *req, const char *principal,
                  enum acl_action action, const char *object)
{
    http_reply_error(req, 403, "principal '%s' is not authorized to %s%s%s",
                     principal != NULL ? principal : "(anonymous)",
                     acl_action_name(action), object != NULL ? " for " : "",
                     object != NULL ? object : "");
    return -1;
}

/* Check action on object; 0, or -1 after the 403. */
static int check(struct master_call_ctx *c, enum acl_action action,
                 const char *object)
{
    if (master_authz_allowed(c->m, c->principal, action, object))
        return 0;
    return forbid(c->req, c->principal, action, object);
}

/* The role a resource is (or is to be) reserved to. */
static const char *resource_role(const Mesos__V1__Resource *r)
{
    if (r->n_reservations > 0 && r->reservations[r->n_reservations - 1] != NULL)
        return r->reservations[r->n_reservations - 1]->role;
    return r->role != NULL ? r->role : "*";
}

/* The principal that reserved a resource, or NULL. */
static const char *resource_reserver(const Mesos__V1__Resource *r)
{
    if (r->n_reservations > 0 && r->reservations[r->n_reservations - 1] != NULL)
        return r->reservations[r->n_reservations - 1]->principal;
    return r->reservation != NULL ? r->reservation->principal : NULL;
}

/* The principal that created a volume, or NULL. */
static const char *volume_creator(const Mesos__V1__Resource *r)
{
    return r->disk != NULL && r->disk->persistence != NULL
               ? r->disk->persistence->principal
               : NULL;
}

/* Check action for each resource of rs (n), its object as obj gives it. */
static int check_resources(const struct master *m, const char *principal,
                           enum acl_action action,
                           Mesos__V1__Resource *const *rs, size_t n,
                           const char *(*obj)(const Mesos__V1__Resource *),
                           const char **denied)
{
    for (size_t i = 0; i < n; i++) {
        const char *o = obj(rs[i]);
        if (!master_authz_allowed(m, principal, action, o)) {
            *denied = o != NULL ? o : "(none)";
            return -1;
        }
    }
    return 0;
}

static int check_res(struct master_call_ctx *c, enum acl_action action,
                     Mesos__V1__Resource *const *rs, size_t n,
                     const char *(*obj)(const Mesos__V1__Resource *))
{
    const char *denied = NULL;
    if (check_resources(c->m, c->principal, action, rs, n, obj, &denied) == 0)
        return 0;
    return forbid(c->req, c->principal, action, denied);
}

/* The user a task runs as: its command's, its executor's, or the
 * framework's. */
static const char *task_user(const Mesos__V1__TaskInfo *t,
                             const Mesos__V1__ExecutorInfo *ex,
                             const char *fw_user)
{
    if (t != NULL && t->command != NULL && t->command->user != NULL)
        return t->command->user;
    if (t != NULL && t->executor != NULL && t->executor->command != NULL &&
        t->executor->command->user != NULL)
        return t->executor->command->user;
    if (ex != NULL && ex->command != NULL && ex->command->user != NULL)
        return ex->command->user;
    return fw_user;
}

const char *master_authz_task_user(const Mesos__V1__TaskInfo *t,
                                   const char *fw_user)
{
    return task_user(t, NULL, fw_user);
}

/* ACCEPT: every operation's action on its objects. */
static int check_accept(struct master_call_ctx *c)
{
    const Mesos__V1__Scheduler__Call *call =
        (const Mesos__V1__Scheduler__Call *)c->call;
    const Mesos__V1__Scheduler__Call__Accept *a = call->accept;
    const char *fw_user =
        c->fw != NULL && c->fw->info != NULL ? c->fw->info->user : NULL;
    for (size_t i = 0; i < a->n_operations; i++) {
        const Mesos__V1__Offer__Operation *op = a->operations[i];
        switch (op->type) {
        case MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH:
            for (size_t k = 0;
                 op->launch != NULL && k < op->launch->n_task_infos; k++)
                if (check(c, ACL_RUN_TASKS,
                          task_user(op->launch->task_infos[k], NULL,
                                    fw_user)) != 0)
                    return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__LAUNCH_GROUP: {
            const Mesos__V1__Offer__Operation__LaunchGroup *g =
                op->launch_group;
            if (g == NULL)
                break;
            if (check(c, ACL_RUN_TASKS,
                      task_user(NULL, g->executor, fw_user)) != 0)
                return -1;
            for (size_t k = 0;
                 g->task_group != NULL && k < g->task_group->n_tasks; k++)
                if (check(c, ACL_RUN_TASKS,
                          task_user(g->task_group->tasks[k], g->executor,
                                    fw_user)) != 0)
                    return -1;
            break;
        }
        case MESOS__V1__OFFER__OPERATION__TYPE__RESERVE:
            if (op->reserve != NULL &&
                check_res(c, ACL_RESERVE_RESOURCES, op->reserve->resources,
                          op->reserve->n_resources, resource_role) != 0)
                return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__UNRESERVE:
            if (op->unreserve != NULL &&
                check_res(c, ACL_UNRESERVE_RESOURCES, op->unreserve->resources,
                          op->unreserve->n_resources, resource_reserver) != 0)
                return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__CREATE:
            if (op->create != NULL &&
                check_res(c, ACL_CREATE_VOLUMES, op->create->volumes,
                          op->create->n_volumes, resource_role) != 0)
                return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__DESTROY:
            if (op->destroy != NULL &&
                check_res(c, ACL_DESTROY_VOLUMES, op->destroy->volumes,
                          op->destroy->n_volumes, volume_creator) != 0)
                return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__GROW_VOLUME:
            if (op->grow_volume != NULL && op->grow_volume->volume != NULL &&
                check(c, ACL_RESIZE_VOLUME,
                      resource_role(op->grow_volume->volume)) != 0)
                return -1;
            break;
        case MESOS__V1__OFFER__OPERATION__TYPE__SHRINK_VOLUME:
            if (op->shrink_volume != NULL &&
                op->shrink_volume->volume != NULL &&
                check(c, ACL_RESIZE_VOLUME,
                      resource_role(op->shrink_volume->volume)) != 0)
                return -1;
            break;
        default:
            break;
        }
    }
    return 0;
}

/* SUBSCRIBE and UPDATE_FRAMEWORK: the FrameworkInfo names the
 * authenticated principal, keeps another principal's framework id out, and
 * each role is one the principal may register for. */
static int check_framework_info(struct master_call_ctx *c,
                                const Mesos__V1__FrameworkInfo *fi)
{
    if (fi == NULL)
        return 0;
    if (c->principal != NULL &&
        (fi->principal == NULL || strcmp(fi->principal, c->principal) != 0)) {
        http_reply_error(c->req, 403,
                         "authenticated principal '%s' does not match "
                         "principal '%s' set in FrameworkInfo",
                         c->principal, or_null(fi->principal));
        return -1;
    }
    if (c->principal != NULL && fi->id != NULL && fi->id->value != NULL) {
        const struct framework *other =
            master_framework_find(c->m, fi->id->value);
        const char *owner = other != NULL && other->info != NULL
                                ? other->info->principal
                                : NULL;
        if (other != NULL &&
            (owner == NULL || strcmp(owner, c->principal) != 0)) {
            http_reply_error(c->req, 403,
                             "framework %s belongs to principal '%s', not "
                             "'%s'",
                             fi->id->value, or_null(owner), c->principal);
            return -1;
        }
    }
    if (fi->n_roles > 0) {
        for (size_t i = 0; i < fi->n_roles; i++)
            if (check(c, ACL_REGISTER_FRAMEWORKS, fi->roles[i]) != 0)
                return -1;
        return 0;
    }
    return check(c, ACL_REGISTER_FRAMEWORKS, fi->role != NULL ? fi->role : "*");
}

static int authz_scheduler(struct master_call_ctx *c, enum acl_action action)
{
    const Mesos__V1__Scheduler__Call *call =
        (const Mesos__V1__Scheduler__Call *)c->call;
    bool required = realm_required(c->m, MASTER_REALM_FRAMEWORKS);
    /* A bound call comes from the framework's own principal. */
    if (c->fw != NULL && (c->principal != NULL || required)) {
        const char *owner = c->fw->info != NULL ? c->fw->info->principal : NULL;
        if (owner == NULL || c->principal == NULL ||
            strcmp(owner, c->principal) != 0) {
            http_reply_error(c->req, 403,
                             "framework %s belongs to principal '%s', not "
                             "'%s'",
                             c->fw->id, or_null(owner), or_null(c->principal));
            return -1;
        }
    }
    if (call->type == MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE)
        return check_framework_info(c, call->subscribe->framework_info);
    if (call->type == MESOS__V1__SCHEDULER__CALL__TYPE__UPDATE_FRAMEWORK)
        return check_framework_info(c, call->update_framework->framework_info);
    if (action == ACL_RUN_TASKS)
        return check_accept(c);
    return 0;
}

static bool same_principal(const char *a, const char *b)
{
    return (a == NULL && b == NULL) ||
           (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int authz_agent(struct master_call_ctx *c, enum acl_action action)
{
    const Offerd__Agent__Call *call = (const Offerd__Agent__Call *)c->call;
    if (c->ag != NULL && !same_principal(c->ag->principal, c->principal)) {
        http_reply_error(c->req, 403, "agent %s belongs to principal '%s'",
                         c->ag->id, or_null(c->ag->principal));
        return -1;
    }
    if (call->type != OFFERD__AGENT__CALL__TYPE__SUBSCRIBE)
        return 0;
    if (check(c, action, NULL) != 0)
        return -1;
    const Mesos__V1__AgentInfo *ai = call->subscribe->agent_info;
    if (ai != NULL && ai->id != NULL && ai->id->value != NULL) {
        const struct agent *held = master_agent_find(c->m, ai->id->value);
        if (held != NULL && held->stream != NULL &&
            !same_principal(held->principal, c->principal)) {
            http_reply_error(c->req, 403,
                             "agent %s is connected as principal '%s'",
                             held->id, or_null(held->principal));
            return -1;
        }
    }
    return 0;
}

static const char *framework_owner(struct master *m, const char *id)
{
    const struct framework *fw = master_framework_find(m, id);
    return fw != NULL && fw->info != NULL ? fw->info->principal : NULL;
}

static int authz_operator(struct master_call_ctx *c, enum acl_action action)
{
    const Mesos__V1__Master__Call *call =
        (const Mesos__V1__Master__Call *)c->call;
    switch (call->type) {
    case MESOS__V1__MASTER__CALL__TYPE__RESERVE_RESOURCES:
        return check_res(c, action, call->reserve_resources->resources,
                         call->reserve_resources->n_resources, resource_role);
    case MESOS__V1__MASTER__CALL__TYPE__UNRESERVE_RESOURCES:
        return check_res(c, action, call->unreserve_resources->resources,
                         call->unreserve_resources->n_resources,
                         resource_reserver);
    case MESOS__V1__MASTER__CALL__TYPE__CREATE_VOLUMES:
        return check_res(c, action, call->create_volumes->volumes,
                         call->create_volumes->n_volumes, resource_role);
    case MESOS__V1__MASTER__CALL__TYPE__DESTROY_VOLUMES:
        return check_res(c, action, call->destroy_volumes->volumes,
                         call->destroy_volumes->n_volumes, volume_creator);
    case MESOS__V1__MASTER__CALL__TYPE__GROW_VOLUME:
        return call->grow_volume->volume != NULL
                   ? check(c, action, resource_role(call->grow_volume->volume))
                   : 0;
    case MESOS__V1__MASTER__CALL__TYPE__SHRINK_VOLUME:
        return call->shrink_volume->volume != NULL
                   ? check(c, action,
                           resource_role(call->shrink_volume->volume))
                   : 0;
    case MESOS__V1__MASTER__CALL__TYPE__TEARDOWN:
        return check(
            c, action,
            call->teardown->framework_id != NULL
                ? framework_owner(c->m, call->teardown->framework_id->value)
                : NULL);
    case MESOS__V1__MASTER__CALL__TYPE__UPDATE_WEIGHTS:
        for (size_t i = 0; i < call->update_weights->n_weight_infos; i++)
            if (check(c, action, call->update_weights->weight_infos[i]->role) !=
                0)
                return -1;
        return 0;
    case MESOS__V1__MASTER__CALL__TYPE__UPDATE_QUOTA:
        for (size_t i = 0; i < call->update_quota->n_quota_configs; i++)
            if (check(c, action, call->update_quota->quota_configs[i]->role) !=
                0)
                return -1;
        return 0;
    case MESOS__V1__MASTER__CALL__TYPE__SET_QUOTA:
        return check(c, action,
                     call->set_quota->quota_request != NULL
                         ? call->set_quota->quota_request->role
                         : NULL);
    case MESOS__V1__MASTER__CALL__TYPE__REMOVE_QUOTA:
        return check(c, action, call->remove_quota->role);
    default:
        /* Actions whose object is implicit (maintenance, agents, flags,
         * logs): ANY. */
        return check(c, action, NULL);
    }
}

int master_authz_call(struct master_call_ctx *c, enum master_realm realm,
                      enum acl_action action)
{
    switch (realm) {
    case MASTER_REALM_FRAMEWORKS:
        return authz_scheduler(c, action);
    case MASTER_REALM_AGENTS:
        return authz_agent(c, action);
    case MASTER_REALM_READWRITE:
        return action != ACL_NONE ? authz_operator(c, action) : 0;
    }
    return 0;
}

/* ---- The HTTP endpoints
 * -----------------------------------------------------
 */

/* Object extractors of an endpoint's request: each checks action for
 * every object the request names and returns the first denied one, or
 * NULL when all are allowed. A body that does not parse is left to the
 * handler (400): only ANY is checked for it. */
typedef bool (*gate_check_fn)(struct master *m, struct http_request *req,
                              const char *principal, enum acl_action action,
                              const char **denied);

static bool gate_any(struct master *m, struct http_request *req,
                     const char *principal, enum acl_action action,
                     const char **denied)
{
    (void)req;
    *denied = NULL;
    return master_authz_allowed(m, principal, action, NULL);
}

/* /reserve, /unreserve, /create-volumes, /destroy-volumes: the form's
 * resources or volumes. */
static bool gate_resources(struct master *m, struct http_request *req,
                           const char *principal, enum acl_action action,
                           const char **denied)
{
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    bool res =
        action == ACL_RESERVE_RESOURCES || action == ACL_UNRESERVE_RESOURCES;
    char *json = http_form_value(body, len, res ? "resources" : "volumes");
    ProtobufCMessage **v = NULL;
    size_t n = 0;
    char err[256];
    if (json == NULL ||
        jpb_array_from_json_text(&mesos__v1__resource__descriptor, json,
                                 strlen(json), 100000, &v, &n, err,
                                 sizeof(err)) != 0) {
        free(json);
        return gate_any(m, req, principal, action, denied);
    }
    const char *(*obj)(const Mesos__V1__Resource *) =
        action == ACL_UNRESERVE_RESOURCES ? resource_reserver
        : action == ACL_DESTROY_VOLUMES   ? volume_creator
                                          : resource_role;
    static char why[AUTH_MAX_PRINCIPAL + 1];
    const char *d = NULL;
    bool ok = check_resources(m, principal, action,
                              (Mesos__V1__Resource *const *)v, n, obj, &d) == 0;
    if (!ok) {
        /* d points into v: copy it out before freeing. */
        snprintf(why, sizeof(why), "%s", d);
        *denied = why;
    }
    jpb_array_free(v, n);
    free(json);
    return ok;
}

/* /teardown: the framework's principal. */
static bool gate_teardown(struct master *m, struct http_request *req,
                          const char *principal, enum acl_action action,
                          const char **denied)
{
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    char *id = http_form_value(body, len, "frameworkId");
    const char *owner = id != NULL ? framework_owner(m, id) : NULL;
    free(id);
    *denied = owner;
    return master_authz_allowed(m, principal, action, owner);
}

/* PUT /weights: each role. */
static bool gate_weights(struct master *m, struct http_request *req,
                         const char *principal, enum acl_action action,
                         const char **denied)
{
    size_t len;
    const char *body = (const char *)http_request_body(req, &len);
    json_t *arr = json_loadb(body, len, 0, NULL);
    bool ok = true;
    size_t i;
    json_t *w;
    static char why[256];
    *denied = NULL;
    json_array_foreach(arr, i, w)
    {
        const char *role = json_string_value(json_object_get(w, "role"));
        if (role != NULL && !master_authz_allowed(m, principal, action, role)) {
            snprintf(why, sizeof(why), "%s", role);
            *denied = why;
            ok = false;
            break;
        }
    }
    bool is_array = json_is_array(arr);
    json_decref(arr);
    return ok && (is_array || gate_any(m, req, principal, action, denied));
}

/* POST /quota (the request's role) and DELETE /quota/<role>. */
static bool gate_quota(struct master *m, struct http_request *req,
                       const char *principal, enum acl_action action,
                       const char **denied)
{
    static char role[256];
    const char *path = http_request_path(req);
    const char *slash = strstr(path, "/quota/");
    if (http_request_method(req) == HTTP_DELETE && slash != NULL) {
        snprintf(role, sizeof(role), "%s", slash + 7);
    } else {
        size_t len;
        const char *body = (const char *)http_request_body(req, &len);
        json_t *j = json_loadb(body, len, 0, NULL);
        const char *r = json_string_value(json_object_get(j, "role"));
        snprintf(role, sizeof(role), "%s", r != NULL ? r : "");
        json_decref(j);
    }
    if (role[0] == '\0')
        return gate_any(m, req, principal, action, denied);
    *denied = role;
    return master_authz_allowed(m, principal, action, role);
}

/* An endpoint's realm and, per method, its action. */
struct gate_row {
    const char *path; /* without the "/master" alias prefix */
    bool prefix;      /* path is a prefix */
    unsigned methods; /* the methods this row covers */
    enum http_realm realm;
    enum acl_action action;
    gate_check_fn check; /* NULL: gate_any */
};

/* Every endpoint the master serves. A path not listed (none should be) is
 * read-only for GET and HEAD and read-write otherwise, with no action. */
static const struct gate_row gate_rows[] = {
    {"/health", false, ~0u, REALM_OPEN, ACL_NONE, NULL},
    {"/version", false, ~0u, REALM_OPEN, ACL_NONE, NULL},
    {"/redirect", false, ~0u, REALM_OPEN, ACL_NONE, NULL},
    {"/api/v1", false, ~0u, REALM_API, ACL_NONE, NULL},
    {"/api/v1/scheduler", false, ~0u, REALM_API, ACL_NONE, NULL},
    {"/api/v1/agent", false, ~0u, REALM_API, ACL_NONE, NULL},
    {"/state", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/state-summary", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/frameworks", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/slaves", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/tasks", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/roles", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/metrics/snapshot", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/metrics", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/system/stats.json", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/registrar(1)/registry", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/flags", false, ~0u, REALM_READONLY, ACL_VIEW_FLAGS, NULL},
    {"/files/", true, ~0u, REALM_READONLY, ACL_ACCESS_MESOS_LOGS, NULL},
    /* The web UI's proxy of an agent's /files (files_proxy.c); the agent
     * checks the file's owner against its own ACLs. */
    {"/agent/", true, ~0u, REALM_READONLY, ACL_ACCESS_SANDBOXES, NULL},
    {"/", false, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/static/", true, ~0u, REALM_READONLY, ACL_NONE, NULL},
    {"/logging/toggle", false, ~0u, REALM_READWRITE, ACL_SET_LOG_LEVEL, NULL},
    {"/maintenance/schedule", false, HTTP_GET | HTTP_HEAD, REALM_READWRITE,
     ACL_GET_MAINTENANCE_SCHEDULES, NULL},
    {"/maintenance/schedule", false, HTTP_POST, REALM_READWRITE,
     ACL_UPDATE_MAINTENANCE_SCHEDULES, NULL},
    {"/maintenance/status", false, ~0u, REALM_READWRITE,
     ACL_GET_MAINTENANCE_STATUSES, NULL},
    {"/machine/down", false, ~0u, REALM_READWRITE, ACL_START_MAINTENANCES,
     NULL},
    {"/machine/up", false, ~0u, REALM_READWRITE, ACL_STOP_MAINTENANCES, NULL},
    {"/reserve", false, ~0u, REALM_READWRITE, ACL_RESERVE_RESOURCES,
     gate_resources},
    {"/unreserve", false, ~0u, REALM_READWRITE, ACL_UNRESERVE_RESOURCES,
     gate_resources},
    {"/create-volumes", false, ~0u, REALM_READWRITE, ACL_CREATE_VOLUMES,
     gate_resources},
    {"/destroy-volumes", false, ~0u, REALM_READWRITE, ACL_DESTROY_VOLUMES,
     gate_resources},
    {"/teardown", false, ~0u, REALM_READWRITE, ACL_TEARDOWN_FRAMEWORKS,
     gate_teardown},
    {"/weights", false, HTTP_GET | HTTP_HEAD, REALM_READWRITE, ACL_NONE, NULL},
    {"/weights", false, HTTP_PUT, REALM_READWRITE, ACL_UPDATE_WEIGHTS,
     gate_weights},
    {"/quota", false, HTTP_GET | HTTP_HEAD, REALM_READWRITE, ACL_NONE, NULL},
    {"/quota", false, HTTP_POST, REALM_READWRITE, ACL_UPDATE_QUOTAS,
     gate_quota},
    {"/quota/", true, HTTP_DELETE, REALM_READWRITE, ACL_UPDATE_QUOTAS,
     gate_quota},
};

static const struct gate_row *gate_find(const char *path, unsigned method)
{
    if (strncmp(path, "/master/", 8) == 0)
        path += 7;
    for (size_t i = 0; i < sizeof(gate_rows) / sizeof(gate_rows[0]); i++) {
        const struct gate_row *r = &gate_rows[i];
        bool hit = r->prefix ? strncmp(path, r->path, strlen(r->path)) == 0
                             : strcmp(path, r->path) == 0;
        if (hit && (r->methods & method))
            return r;
    }
    return NULL;
}

bool master_authz_gate(struct http_request *req, void *arg)
{
    struct master *m = arg;
    enum http_method method = http_request_method(req);
    const struct gate_row *row = gate_find(http_request_path(req), method);
    enum http_realm realm = row != NULL ? row->realm
                            : (method == HTTP_GET || method == HTTP_HEAD)
                                ? REALM_READONLY
                                : REALM_READWRITE;
    if (realm == REALM_OPEN || realm == REALM_API)
        return true;
    bool required = realm == REALM_READONLY
                        ? m->flags->authenticate_http_readonly
                        : m->flags->authenticate_http_readwrite;
    char principal[AUTH_MAX_PRINCIPAL + 1];
    bool authenticated;
    if (authenticate(m, required, req, principal, &authenticated) != 0)
        return false;
    if (row == NULL || row->action == ACL_NONE)
        return true;
    const char *who = authenticated ? principal : NULL;
    const char *denied = NULL;
    gate_check_fn fn = row->check != NULL ? row->check : gate_any;
    if (fn(m, req, who, row->action, &denied))
        return true;
    forbid(req, who, row->action, denied);
    return false;
}

/* ---- Filtering what readers see
 * -------------------------------------------
 */

const char *master_authz_principal(const struct master *m,
                                   const struct http_request *req, char *buf)
{
    const struct auth_credentials *creds =
        m->authz != NULL ? m->authz->creds : NULL;
    if (creds == NULL)
        return NULL;
    return auth_request(creds, req, buf, NULL, 0) == AUTH_OK ? buf : NULL;
}

/* The user of the framework id (live or completed), or NULL. */
static const char *framework_user(const struct master *m, const char *id)
{
    if (id == NULL)
        return NULL;
    const struct framework *fw = hmap_get(m->frameworks, id);
    if (fw == NULL)
        fw = hmap_get(m->completed, id);
    return fw != NULL && fw->info != NULL ? fw->info->user : NULL;
}

/* Drop the elements of arr that keep(elem) refuses. */
static void json_keep(json_t *arr,
                      bool (*keep)(const struct master *m, const char *who,
                                   const json_t *e, const char *fw_user),
                      const struct master *m, const char *who,
                      const char *fw_user)
{
    for (size_t i = json_array_size(arr); i-- > 0;)
        if (!keep(m, who, json_array_get(arr, i), fw_user))
            json_array_remove(arr, i);
}

static bool keep_task_json(const struct master *m, const char *who,
                           const json_t *t, const char *fw_user)
{
    const char *user = json_string_value(json_object_get(t, "user"));
    if (user == NULL)
        user = fw_user;
    if (user == NULL)
        user = framework_user(
            m, json_string_value(json_object_get(t, "framework_id")));
    return master_authz_allowed(m, who, ACL_VIEW_TASKS, user);
}

static bool keep_executor_json(const struct master *m, const char *who,
                               const json_t *e, const char *fw_user)
{
    const char *user = json_string_value(
        json_object_get(json_object_get(e, "command"), "user"));
    return master_authz_allowed(m, who, ACL_VIEW_EXECUTORS,
                                user != NULL ? user : fw_user);
}

static bool keep_framework_json(const struct master *m, const char *who,
                                const json_t *f, const char *unused)
{
    (void)unused;
    const char *user = json_string_value(json_object_get(f, "user"));
    if (user == NULL)
        user = framework_user(m, json_string_value(json_object_get(f, "id")));
    if (!master_authz_allowed(m, who, ACL_VIEW_FRAMEWORKS, user))
        return false;
    static const char *const lists[] = {"tasks", "completed_tasks",
                                        "unreachable_tasks"};
    for (size_t i = 0; i < 3; i++)
        json_keep(json_object_get(f, lists[i]), keep_task_json, m, who, user);
    json_keep(json_object_get(f, "executors"), keep_executor_json, m, who,
              user);
    json_keep(json_object_get(f, "completed_executors"), keep_executor_json, m,
              who, user);
    return true;
}

static bool keep_role_json(const struct master *m, const char *who,
                           const json_t *r, const char *unused)
{
    (void)unused;
    return master_authz_allowed(m, who, ACL_VIEW_ROLES,
                                json_string_value(json_object_get(r, "name")));
}

void master_authz_filter_json(const struct master *m,
                              const struct http_request *req, json_t *o)
{
    if (!master_authz_has_acls(m))
        return;
    char buf[AUTH_MAX_PRINCIPAL + 1];
    master_authz_filter_json_as(m, master_authz_principal(m, req, buf), o);
}

void master_authz_filter_json_as(const struct master *m, const char *who,
                                 json_t *o)
{
    if (!master_authz_has_acls(m))
        return;
    json_keep(json_object_get(o, "frameworks"), keep_framework_json, m, who,
              NULL);
    json_keep(json_object_get(o, "completed_frameworks"), keep_framework_json,
              m, who, NULL);
    json_t *tasks = json_object_get(o, "tasks");
    if (json_is_array(tasks))
        json_keep(tasks, keep_task_json, m, who, NULL);
    json_t *roles = json_object_get(o, "roles");
    if (json_is_array(roles) && json_is_object(json_array_get(roles, 0)))
        json_keep(roles, keep_role_json, m, who, NULL);
    if (json_object_get(o, "flags") != NULL &&
        !master_authz_allowed(m, who, ACL_VIEW_FLAGS, NULL))
        json_object_del(o, "flags");
}

/* Keep the elements of a repeated message field (n of v) that keep()
 * accepts, freeing the others. */
static void pb_keep(size_t *n, void **v,
                    bool (*keep)(const struct master *m, const char *who,
                                 const void *e),
                    const struct master *m, const char *who)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (keep(m, who, v[i]))
            v[k++] = v[i];
        else
            protobuf_c_message_free_unpacked(v[i], NULL);
    }
    *n = k;
}

static bool keep_task_pb(const struct master *m, const char *who, const void *e)
{
    const Mesos__V1__Task *t = e;
    /* Task.user is the task's command user when it had one (Mesos's
     * VIEW_TASK object), else the framework's. */
    return master_authz_allowed(
        m, who, ACL_VIEW_TASKS,
        t->user != NULL
            ? t->user
            : framework_user(m, t->framework_id != NULL ? t->framework_id->value
                                                        : NULL));
}

static bool keep_framework_pb(const struct master *m, const char *who,
                              const void *e)
{
    const Mesos__V1__Master__Response__GetFrameworks__Framework *f = e;
    return master_authz_allowed(
        m, who, ACL_VIEW_FRAMEWORKS,
        f->framework_info != NULL ? f->framework_info->user : NULL);
}

static bool keep_executor_pb(const struct master *m, const char *who,
                             const void *e)
{
    const Mesos__V1__Master__Response__GetExecutors__Executor *x = e;
    const Mesos__V1__ExecutorInfo *ei = x->executor_info;
    const char *user =
        ei != NULL && ei->command != NULL ? ei->command->user : NULL;
    if (user == NULL && ei != NULL && ei->framework_id != NULL)
        user = framework_user(m, ei->framework_id->value);
    return master_authz_allowed(m, who, ACL_VIEW_EXECUTORS, user);
}

static bool keep_role_pb(const struct master *m, const char *who, const void *e)
{
    const Mesos__V1__Role *r = e;
    return master_authz_allowed(m, who, ACL_VIEW_ROLES, r->name);
}

#define PB_KEEP(msg, field, fn)                                                \
    pb_keep(&(msg)->n_##field, (void **)(msg)->field, fn, m, who)

static void filter_tasks_pb(const struct master *m, const char *who,
                            Mesos__V1__Master__Response__GetTasks *t)
{
    if (t == NULL)
        return;
    PB_KEEP(t, pending_tasks, keep_task_pb);
    PB_KEEP(t, tasks, keep_task_pb);
    PB_KEEP(t, unreachable_tasks, keep_task_pb);
    PB_KEEP(t, completed_tasks, keep_task_pb);
    PB_KEEP(t, orphan_tasks, keep_task_pb);
}

static void filter_frameworks_pb(const struct master *m, const char *who,
                                 Mesos__V1__Master__Response__GetFrameworks *f)
{
    if (f == NULL)
        return;
    PB_KEEP(f, frameworks, keep_framework_pb);
    PB_KEEP(f, completed_frameworks, keep_framework_pb);
}

static void filter_executors_pb(const struct master *m, const char *who,
                                Mesos__V1__Master__Response__GetExecutors *x)
{
    if (x == NULL)
        return;
    PB_KEEP(x, executors, keep_executor_pb);
    PB_KEEP(x, orphan_executors, keep_executor_pb);
}

void master_authz_filter_response(const struct master *m, const char *principal,
                                  struct ProtobufCMessage *response)
{
    if (!master_authz_has_acls(m) || response == NULL)
        return;
    const char *who = principal;
    Mesos__V1__Master__Response *r = (Mesos__V1__Master__Response *)response;
    if (r->get_state != NULL) {
        filter_tasks_pb(m, who, r->get_state->get_tasks);
        filter_frameworks_pb(m, who, r->get_state->get_frameworks);
        filter_executors_pb(m, who, r->get_state->get_executors);
    }
    filter_tasks_pb(m, who, r->get_tasks);
    filter_frameworks_pb(m, who, r->get_frameworks);
    filter_executors_pb(m, who, r->get_executors);
    if (r->get_roles != NULL)
        PB_KEEP(r->get_roles, roles, keep_role_pb);
    /* Resources, operations, weights and quota by the roles they name. */
    master_role_view_response(m, who, r);
}
