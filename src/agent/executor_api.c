/*
 * POST /api/v1/executor: decode, validate as Mesos does, dispatch to the
 * executors (executors.h).
 */
#include "agent/executor_api.h"

#include "agent/executor_auth.h"
#include "agent/executors.h"
#include "common/http.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"

#include <stdio.h>
#include <string.h>

/* The checks of Mesos's validateExecutorCall on an executor's status. */
static const char *validate_status(const Mesos__V1__TaskStatus *st,
                                   const char *fw, const char *ex, char *buf,
                                   size_t len)
{
    if (!st->has_uuid)
        return "Expecting 'uuid' to be present";
    if (st->uuid.len != 16)
        return "Expecting 'uuid' to be 16 bytes";
    if (st->executor_id != NULL && strcmp(st->executor_id->value, ex) != 0) {
        snprintf(buf, len,
                 "ExecutorID in Call: %s does not match ExecutorID in "
                 "TaskStatus: %s",
                 ex, st->executor_id->value);
        return buf;
    }
    if (!st->has_source ||
        st->source != MESOS__V1__TASK_STATUS__SOURCE__SOURCE_EXECUTOR) {
        snprintf(buf, len,
                 "Received Call from executor %s of framework %s with "
                 "invalid source, expecting 'SOURCE_EXECUTOR'",
                 ex, fw);
        return buf;
    }
    if (st->state == MESOS__V1__TASK_STATE__TASK_STAGING) {
        snprintf(buf, len,
                 "Received TASK_STAGING from executor %s of framework %s "
                 "which is not allowed",
                 ex, fw);
        return buf;
    }
    return NULL;
}

/* Mesos's validateExecutorCall. Returns NULL when call is valid, else the
 * reason in buf. */
static const char *validate(const Mesos__V1__Executor__Call *call, char *buf,
                            size_t len)
{
    if (!call->has_type)
        return "Expecting 'type' to be present";
    const char *fw = call->framework_id->value;
    const char *ex = call->executor_id->value;
    switch (call->type) {
    case MESOS__V1__EXECUTOR__CALL__TYPE__SUBSCRIBE: {
        if (call->subscribe == NULL)
            return "Expecting 'subscribe' to be present";
        /* The re-sent updates go through the update path as UPDATEs do. */
        const Mesos__V1__Executor__Call__Subscribe *s = call->subscribe;
        for (size_t i = 0; i < s->n_unacknowledged_updates; i++) {
            const char *why = validate_status(
                s->unacknowledged_updates[i]->status, fw, ex, buf, len);
            if (why != NULL)
                return why;
        }
        return NULL;
    }
    case MESOS__V1__EXECUTOR__CALL__TYPE__UPDATE:
        if (call->update == NULL)
            return "Expecting 'update' to be present";
        return validate_status(call->update->status, fw, ex, buf, len);
    case MESOS__V1__EXECUTOR__CALL__TYPE__MESSAGE:
        if (call->message == NULL)
            return "Expecting 'message' to be present";
        return NULL;
    case MESOS__V1__EXECUTOR__CALL__TYPE__HEARTBEAT:
        return NULL;
    default:
        return "Expecting 'type' to be a known call type";
    }
}

void agent_exec_api_handle(struct http_request *req, void *arg)
{
    struct agent_execs *x = arg;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[512];
    Mesos__V1__Executor__Call *call = (Mesos__V1__Executor__Call *)jpb_decode(
        &mesos__v1__executor__call__descriptor, (enum jpb_format)body_enc, body,
        len, err, sizeof(err));
    if (call == NULL) {
        log_debug("executor api: bad call from %s: %s", http_request_peer(req),
                  err);
        http_reply_error(req, 400, "Failed to parse body into Call: %s", err);
        return;
    }
    char buf[512];
    json_t *claims = NULL;
    const char *why = validate(call, buf, sizeof(buf));
    if (why != NULL) {
        log_debug("executor api: invalid call from %s: %s",
                  http_request_peer(req), why);
        http_reply_error(req, 400, "Failed to validate Executor::Call: %s",
                         why);
        goto out;
    }
    /* Its token, when the agent hands them out (executor_auth.h). */
    const struct agent_exec_auth *ea = agent_execs_auth(x);
    if (ea != NULL && agent_exec_auth_check(ea, req, &claims) < 0)
        goto out;
    if (call->type == MESOS__V1__EXECUTOR__CALL__TYPE__HEARTBEAT) {
        http_reply(req, 202, NULL, NULL, 0);
        goto out;
    }
    struct agent_execs_answer a;
    if (!agent_execs_check_call(x, call, &a)) {
        log_debug("executor api: call from %s for executor %s of framework "
                  "%s refused: %s",
                  http_request_peer(req), call->executor_id->value,
                  call->framework_id->value, a.message);
        http_reply_error(req, a.status, "%s", a.message);
        goto out;
    }
    if (claims != NULL &&
        !agent_exec_auth_claims_match(
            claims, call->framework_id->value, call->executor_id->value,
            agent_execs_container_id(x, call->framework_id->value,
                                     call->executor_id->value),
            buf, sizeof(buf))) {
        log_warn("executor api: call from %s for executor %s of framework "
                 "%s refused: %s",
                 http_request_peer(req), call->executor_id->value,
                 call->framework_id->value, buf);
        http_reply_error(req, 403, "%s", buf);
        goto out;
    }
    switch (call->type) {
    case MESOS__V1__EXECUTOR__CALL__TYPE__SUBSCRIBE:
        agent_execs_subscribe(x, call, req, reply_enc);
        break;
    case MESOS__V1__EXECUTOR__CALL__TYPE__UPDATE:
        agent_execs_update(x, call);
        http_reply(req, 202, NULL, NULL, 0);
        break;
    default: /* MESSAGE: validate() let nothing else through */
        agent_execs_executor_message(x, call);
        http_reply(req, 202, NULL, NULL, 0);
        break;
    }
out:
    json_decref(claims);
    jpb_free(&call->base);
}

int agent_exec_api_register(struct http_server *srv, struct agent_execs *x)
{
    if (http_server_route(srv, "/api/v1/executor", HTTP_POST,
                          agent_exec_api_handle, x) != 0 ||
        http_server_route(srv, "/slave(1)/api/v1/executor", HTTP_POST,
                          agent_exec_api_handle, x) != 0)
        return -1;
    return 0;
}
