/*
 * The agent's authentication and authorization: the credential it
 * presents to the master (--credential), and the gate of its own HTTP
 * endpoints (--http_credentials, --authenticate_http_readwrite,
 * --authenticate_http_readonly, --acls), as the master's (master/authz.h):
 *   /health                       open
 *   /files/...                      read-only realm; access_sandboxes, the
 *                                 object being the user owning the file
 *   /flags                        read-only realm; view_flags
 *   /api/v1, /logging/toggle      read-write realm (set_log_level for the
 *                                 latter)
 *   anything else                 read-only for GET and HEAD, read-write
 *                                 otherwise
 * Every file is read at start; a malformed one refuses the start.
 */
#ifndef OFFERD_AGENT_AUTH_AGENT_H
#define OFFERD_AGENT_AUTH_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/acl.h"

struct agent_flags;
struct files;
struct http_request;
struct agent_auth;

/* Load what af names (borrowed; must outlive a). Returns NULL with a
 * one-line reason in err. */
struct agent_auth *agent_auth_new(const struct agent_flags *af, char *err,
                                  size_t errlen);
/* The tree /files/... serves (borrowed), to find the owner of a path. */
void agent_auth_set_files(struct agent_auth *a, const struct files *files);
void agent_auth_free(struct agent_auth *a);

/* The Authorization header value for calls to the master, or NULL without
 * --credential. Borrowed from a. */
const char *agent_auth_master_header(const struct agent_auth *a);

struct agent_viewer;
/* Under --acls, set up *w (viewer.h; free with agent_viewer_fini) with
 * the view_* approvers of req's principal (anonymous unless it carries
 * valid --http_credentials) and return true; without --acls (or a NULL)
 * return false: the reader sees everything. */
bool agent_auth_viewer(const struct agent_auth *a,
                       const struct http_request *req, struct agent_viewer *w);

/* Whether req's principal may do action (an object-less one: view_flags,
 * set_log_level) under --acls; false after replying 403 with the reason.
 * True without --acls (or a NULL). For the operator API's calls, which
 * the gate sees only as POST /api/v1. */
bool agent_auth_allow(const struct agent_auth *a, struct http_request *req,
                      enum acl_action action);

/* Whether req's principal may read path (a /files path: LIST_FILES,
 * READ_FILE) under --acls: access_sandboxes on the user owning it, as
 * /files/... in the gate; false after replying 403. */
bool agent_auth_allow_file(const struct agent_auth *a, struct http_request *req,
                           const char *path);

/* The gate of the agent's HTTP server (http_server_set_gate; arg: a). */
bool agent_auth_gate(struct http_request *req, void *arg);

#endif
