/*
 * Executors' tokens; see executor_auth.h.
 */
#include "agent/executor_auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/http.h"
#include "common/jwt.h"
#include "common/log.h"
#include "common/mem.h"

#define KEY_MAX ((size_t)64 << 10)

struct agent_exec_auth {
    uint8_t *key;  /* the key file's bytes */
    size_t keylen; /* > 0 */
    bool required; /* --authenticate_http_executors */
};

struct agent_exec_auth *agent_exec_auth_new(const char *key_path, bool required,
                                            char *err, size_t errlen)
{
    const char *path = key_path;
    if (strncmp(path, "file://", 7) == 0)
        path += 7;
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, KEY_MAX, &data, &len);
    if (rc != 1 || len == 0) {
        snprintf(err, errlen, "--executor_secret_key: %s: %s", path,
                 rc == 0          ? "no such file"
                 : rc == 1        ? "empty file"
                 : errno == EFBIG ? "file too large"
                                  : strerror(errno));
        free(data);
        return NULL;
    }
    struct agent_exec_auth *a = xcalloc(1, sizeof(*a));
    a->key = data;
    a->keylen = len;
    a->required = required;
    return a;
}

void agent_exec_auth_free(struct agent_exec_auth *a)
{
    if (a == NULL)
        return;
    explicit_bzero(a->key, a->keylen);
    free(a->key);
    free(a);
}

char *agent_exec_auth_token(const struct agent_exec_auth *a, const char *fid,
                            const char *eid, const char *cid)
{
    json_t *claims =
        json_pack("{s:s, s:s, s:s}", "fid", fid, "eid", eid, "cid", cid);
    char *token =
        claims != NULL ? jwt_hs256_sign(claims, a->key, a->keylen) : NULL;
    json_decref(claims);
    return token;
}

static int unauthorized(struct http_request *req, const char *reason)
{
    http_reply_header(req, "WWW-Authenticate",
                      "Bearer realm=\"mesos-agent-executor\"");
    http_reply_error(req, 401, "%s", reason);
    return -1;
}

int agent_exec_auth_check(const struct agent_exec_auth *a,
                          struct http_request *req, json_t **claims)
{
    *claims = NULL;
    const char *h = http_request_header(req, "Authorization");
    if (h == NULL) {
        if (a->required)
            return unauthorized(req, "authentication required");
        return 0;
    }
    if (strncmp(h, "Bearer ", 7) != 0)
        return unauthorized(req, "expected a Bearer token");
    const char *token = h + 7;
    char why[256];
    *claims = jwt_hs256_verify(token, strlen(token), a->key, a->keylen, why,
                               sizeof(why));
    if (*claims == NULL) {
        log_debug("executor api: token from %s refused: %s",
                  http_request_peer(req), why);
        return unauthorized(req, why);
    }
    return 1;
}

static bool claim_is(const json_t *claims, const char *name, const char *want)
{
    const char *v = json_string_value(json_object_get(claims, name));
    return v != NULL && want != NULL && strcmp(v, want) == 0;
}

bool agent_exec_auth_claims_match(const json_t *claims, const char *fid,
                                  const char *eid, const char *cid, char *buf,
                                  size_t len)
{
    if (!claim_is(claims, "fid", fid)) {
        snprintf(buf, len,
                 "Authenticated principal does not contain an 'fid' claim "
                 "with the framework ID %s, which is set in the call",
                 fid);
        return false;
    }
    if (!claim_is(claims, "eid", eid)) {
        snprintf(buf, len,
                 "Authenticated principal does not contain an 'eid' claim "
                 "with the executor ID %s, which is set in the call",
                 eid);
        return false;
    }
    if (!claim_is(claims, "cid", cid)) {
        snprintf(buf, len,
                 "Authenticated principal does not contain a 'cid' claim "
                 "with the correct active ContainerID");
        return false;
    }
    return true;
}
