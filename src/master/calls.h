/*
 * The call table: one prologue for every call of the scheduler, agent and
 * operator APIs, and one row per call type.
 *
 * A POST to an API endpoint goes through master_call_dispatch, which, in
 * order: negotiates the encodings (415, 406), decodes the body into the
 * API's Call message (400 naming the field), checks the call type is one
 * the .proto knows (400), finds its row, checks that the payload field the
 * row names is set (400 "<field>: required for <TYPE>", read through the
 * protobuf-c descriptor, so a row cannot get it wrong), counts the call in
 * the row's metric, binds the call to its caller (the API's bind: for the
 * scheduler API the framework and its Mesos-Stream-Id, for the agent API
 * the agent and its stream) unless the row is MASTER_CALL_OPEN, and runs
 * the row's handler. A call type the .proto knows and the table lacks goes
 * to the API's fallback.
 *
 * A handler replies on c->req (or defers it: see common/http.h) and must
 * not keep pointers into c->call, which is freed when it returns.
 * Adding a call is one row and one handler.
 */
#ifndef OFFERD_MASTER_CALLS_H
#define OFFERD_MASTER_CALLS_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "common/acl.h"
#include "master/master_types.h"

/* A call on its way through the table. */
struct master_call_ctx {
    struct master *m;
    struct http_request *req;     /* the handler replies (or defers) */
    enum http_encoding reply_enc; /* the encoding the client accepts */
    const ProtobufCMessage *call; /* the decoded Call of the API; borrowed */
    int type;                     /* its type */
    struct framework *fw;         /* scheduler API: the caller (bound rows) */
    struct agent *ag;             /* agent API: the caller (bound rows) */
    /* The authenticated principal (master/authz.h), NULL when the request
     * carried no credentials. */
    const char *principal;
};

typedef void (*master_call_fn)(struct master_call_ctx *c);

/* Row flags. */
#define MASTER_CALL_OPEN 1u /* no caller to bind (SUBSCRIBE, operator) */

/* The metric column: a counter of struct master_metrics, or none. */
#define MASTER_CALL_COUNT(field) (offsetof(struct master_metrics, field) + 1)
#define MASTER_CALL_NO_COUNT     0

/* One call type and how it is handled. */
struct master_call {
    int type;            /* the Call's type enum value */
    const char *payload; /* the Call field this type requires, or NULL */
    master_call_fn fn;
    size_t counter; /* MASTER_CALL_COUNT(x) or MASTER_CALL_NO_COUNT */
    unsigned flags; /* MASTER_CALL_* */
    /* The ACL action the call needs (master/authz.c works out its objects
     * from the call); ACL_NONE: none. */
    enum acl_action action;
};

/* An API: its Call message and its rows. */
/* Which authentication flag covers an API (master/authz.h). */
enum master_realm {
    MASTER_REALM_FRAMEWORKS = 0, /* --authenticate_frameworks */
    MASTER_REALM_AGENTS,         /* --authenticate_agents */
    MASTER_REALM_READWRITE,      /* --authenticate_http_readwrite */
};

struct master_api {
    const char *name; /* for logs: "scheduler", "agent", "operator" */
    enum master_realm realm;
    const ProtobufCMessageDescriptor *call_desc;
    const struct master_call *rows;
    size_t nrows;
    /* Bind a call to its caller (sets c->fw or c->ag). Returns 0, or -1
     * after replying (400, 403). NULL: calls need no binding. */
    int (*bind)(struct master_call_ctx *c);
    /* A type the .proto knows and no row handles. */
    master_call_fn fallback;
};

/* Run req through api's prologue and the handler of its row; see above.
 * req is replied to (or deferred by the handler) when this returns. */
void master_call_dispatch(const struct master_api *api, struct master *m,
                          struct http_request *req);

/* The name of a call type of api ("ACCEPT"), or "UNKNOWN". */
const char *master_call_type_name(const struct master_api *api, int type);

#endif
