/*
 * The agent's credential and its endpoints' gate; see auth_agent.h.
 */
#include "agent/auth_agent.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/flags_agent.h"
#include "agent/viewer.h"
#include "common/acl.h"
#include "common/auth.h"
#include "common/files.h"
#include "common/http.h"
#include "common/mem.h"

struct agent_auth {
    const struct agent_flags *af;
    const struct files *files;
    char *master_header;            /* --credential, as a header */
    struct auth_credentials *creds; /* --http_credentials */
    struct acls *acls;              /* --acls */
};

void agent_auth_set_files(struct agent_auth *a, const struct files *files)
{
    a->files = files;
}

struct agent_auth *agent_auth_new(const struct agent_flags *af, char *err,
                                  size_t errlen)
{
    struct agent_auth *a = xcalloc(1, sizeof(*a));
    a->af = af;
    if (af->credential != NULL) {
        struct auth_credential c;
        char why[512];
        if (auth_credential_load(af->credential, &c, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "--credential: %s", why);
            goto fail;
        }
        a->master_header = auth_basic_header(c.principal, c.secret);
        explicit_bzero(&c, sizeof(c));
    }
    if (af->http_credentials != NULL) {
        char why[512];
        a->creds =
            auth_credentials_load(af->http_credentials, why, sizeof(why));
        if (a->creds == NULL) {
            snprintf(err, errlen, "--http_credentials: %s", why);
            goto fail;
        }
    }
    if (af->acls != NULL) {
        char why[512];
        a->acls = acls_load(af->acls, why, sizeof(why));
        if (a->acls == NULL) {
            snprintf(err, errlen, "--acls: %s", why);
            goto fail;
        }
    }
    return a;
fail:
    agent_auth_free(a);
    return NULL;
}

void agent_auth_free(struct agent_auth *a)
{
    if (a == NULL)
        return;
    if (a->master_header != NULL) {
        explicit_bzero(a->master_header, strlen(a->master_header));
        free(a->master_header);
    }
    auth_credentials_free(a->creds);
    acls_free(a->acls);
    free(a);
}

const char *agent_auth_master_header(const struct agent_auth *a)
{
    return a != NULL ? a->master_header : NULL;
}

bool agent_auth_viewer(const struct agent_auth *a,
                       const struct http_request *req, struct agent_viewer *w)
{
    if (a == NULL || a->acls == NULL)
        return false;
    char principal[AUTH_MAX_PRINCIPAL + 1];
    const char *who = NULL;
    if (a->creds != NULL &&
        auth_request(a->creds, req, principal, NULL, 0) == AUTH_OK)
        who = principal;
    agent_viewer_init(w, a->acls, who);
    return true;
}

bool agent_auth_allow(const struct agent_auth *a, struct http_request *req,
                      enum acl_action action)
{
    if (a == NULL || a->acls == NULL)
        return true;
    char principal[AUTH_MAX_PRINCIPAL + 1];
    const char *who = NULL;
    if (a->creds != NULL &&
        auth_request(a->creds, req, principal, NULL, 0) == AUTH_OK)
        who = principal;
    if (acls_authorized(a->acls, who, action, NULL))
        return true;
    http_reply_error(req, 403, "principal '%s' is not authorized to %s",
                     who != NULL ? who : "(anonymous)",
                     acl_action_name(action));
    return false;
}

/* The user owning path (as /files names it), into user (ulen bytes);
 * false when the path does not resolve (the handler answers). */
static bool path_owner(const struct agent_auth *a, const char *path, char *user,
                       size_t ulen)
{
    if (a->files == NULL || path == NULL)
        return false;
    char real[PATH_MAX], err[256];
    struct stat st;
    if (files_resolve(a->files, path, real, err, sizeof(err)) != FILES_OK ||
        stat(real, &st) != 0)
        return false;
    char group[64];
    files_owner(&st, user, ulen, group, sizeof(group));
    return true;
}

/* The same for the path a /files/... request names. */
static bool file_owner(const struct agent_auth *a, struct http_request *req,
                       char *user, size_t ulen)
{
    return path_owner(a, http_request_query(req, "path"), user, ulen);
}

bool agent_auth_allow_file(const struct agent_auth *a, struct http_request *req,
                           const char *path)
{
    if (a == NULL || a->acls == NULL)
        return true;
    char principal[AUTH_MAX_PRINCIPAL + 1];
    const char *who = NULL;
    if (a->creds != NULL &&
        auth_request(a->creds, req, principal, NULL, 0) == AUTH_OK)
        who = principal;
    char owner[256];
    const char *obj = path_owner(a, path, owner, sizeof(owner)) ? owner : NULL;
    if (acls_authorized(a->acls, who, ACL_ACCESS_SANDBOXES, obj))
        return true;
    http_reply_error(req, 403, "principal '%s' is not authorized to %s%s%s",
                     who != NULL ? who : "(anonymous)",
                     acl_action_name(ACL_ACCESS_SANDBOXES),
                     obj != NULL ? " for " : "", obj != NULL ? obj : "");
    return false;
}

bool agent_auth_gate(struct http_request *req, void *arg)
{
    struct agent_auth *a = arg;
    const char *path = http_request_path(req);
    if (strncmp(path, "/slave(1)/", 10) == 0)
        path += 9;
    enum http_method method = http_request_method(req);
    /* Executors authenticate with their own tokens, not HTTP Basic: the
     * executor API checks them (executor_auth.h). */
    if (strcmp(path, "/health") == 0 || strcmp(path, "/api/v1/executor") == 0)
        return true;
    bool readwrite = strcmp(path, "/api/v1") == 0 ||
                     strcmp(path, "/logging/toggle") == 0 ||
                     (method != HTTP_GET && method != HTTP_HEAD);
    bool required = readwrite ? a->af->authenticate_http_readwrite
                              : a->af->authenticate_http_readonly;
    char principal[AUTH_MAX_PRINCIPAL + 1];
    const char *who = NULL;
    if (a->creds != NULL || required) {
        char why[256];
        switch (auth_request(a->creds, req, principal, why, sizeof(why))) {
        case AUTH_OK:
            who = principal;
            break;
        case AUTH_ANONYMOUS:
            if (required) {
                auth_reply_unauthorized(req, "authentication required");
                return false;
            }
            break;
        case AUTH_FAILED:
            auth_reply_unauthorized(req, why);
            return false;
        }
    }
    enum acl_action action = ACL_NONE;
    char object[256];
    const char *obj = NULL;
    if (strncmp(path, "/files/", 7) == 0) {
        action = ACL_ACCESS_SANDBOXES;
        if (file_owner(a, req, object, sizeof(object)))
            obj = object;
    } else if (strcmp(path, "/flags") == 0) {
        action = ACL_VIEW_FLAGS;
    } else if (strcmp(path, "/logging/toggle") == 0) {
        action = ACL_SET_LOG_LEVEL;
    }
    if (acls_authorized(a->acls, who, action, obj))
        return true;
    http_reply_error(req, 403, "principal '%s' is not authorized to %s%s%s",
                     who != NULL ? who : "(anonymous)", acl_action_name(action),
                     obj != NULL ? " for " : "", obj != NULL ? obj : "");
    return false;
}
