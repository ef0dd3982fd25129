/*
 * Executor authentication as Mesos's agent does it (--authenticate_http_
 * executors, --executor_secret_key / --jwt_secret_key): the agent gives
 * each custom executor it launches a token, an HS256 JWT (common/jwt.h)
 * over the claims "fid" (framework id), "eid" (executor id) and "cid"
 * (the id of the executor's container: its run), in the environment
 * variable MESOS_EXECUTOR_AUTHENTICATION_TOKEN. The executor sends it on
 * every call to /api/v1/executor as "Authorization: Bearer <token>".
 *
 * A call with a token that does not verify is a 401 (WWW-Authenticate:
 * Bearer realm="mesos-agent-executor"); so is a call without one when
 * --authenticate_http_executors is on. A valid token whose claims do not
 * name the call's framework, executor and the executor's current
 * container is a 403: one executor cannot act for another. Without
 * --authenticate_http_executors a call without a token is let through
 * (tokens are still handed out when a key is set).
 */
#ifndef OFFERD_AGENT_EXECUTOR_AUTH_H
#define OFFERD_AGENT_EXECUTOR_AUTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct http_request;
struct agent_exec_auth;

/* The environment variable that carries an executor's token. */
#define AGENT_EXECUTOR_TOKEN_ENV "MESOS_EXECUTOR_AUTHENTICATION_TOKEN"

/* Load the key file at key_path (a "file://" prefix allowed; its bytes as
 * they are, non-empty, at most 64 KiB); required: tokens are required.
 * Returns NULL with a one-line reason in err. */
struct agent_exec_auth *agent_exec_auth_new(const char *key_path, bool required,
                                            char *err, size_t errlen);
void agent_exec_auth_free(struct agent_exec_auth *a);

/* The token of executor eid of framework fid in container cid, a new
 * string (caller frees), or NULL if signing failed. */
char *agent_exec_auth_token(const struct agent_exec_auth *a, const char *fid,
                            const char *eid, const char *cid);

/* Authenticate req. Returns 1 with the token's claims in *claims (a new
 * reference), 0 when req carries no token and none is required (*claims
 * NULL), or -1 after replying 401. */
int agent_exec_auth_check(const struct agent_exec_auth *a,
                          struct http_request *req, json_t **claims);

/* Whether claims name framework fid, executor eid and container cid;
 * false with Mesos's reason in buf. */
bool agent_exec_auth_claims_match(const json_t *claims, const char *fid,
                                  const char *eid, const char *cid, char *buf,
                                  size_t len);

#endif
