/*
 * The call table's prologue; see calls.h.
 */
#include "master/calls.h"

#include <string.h>

#include "common/auth.h"
#include "common/json_pb.h"
#include "master/authz.h"

/* The descriptor of the Call's "type" field (every API's Call has one). */
static const ProtobufCFieldDescriptor *type_field(const struct master_api *api)
{
    return protobuf_c_message_descriptor_get_field_by_name(api->call_desc,
                                                           "type");
}

const char *master_call_type_name(const struct master_api *api, int type)
{
    const ProtobufCFieldDescriptor *f = type_field(api);
    const ProtobufCEnumValue *v =
        f != NULL ? protobuf_c_enum_descriptor_get_value(f->descriptor, type)
                  : NULL;
    return v != NULL ? v->name : "UNKNOWN";
}

/* The call's type: 0 with *type (OUT) when it is set to a value the .proto
 * knows other than UNKNOWN (0), else -1. */
static int call_type(const struct master_api *api, const ProtobufCMessage *call,
                     int *type)
{
    const ProtobufCFieldDescriptor *f = type_field(api);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_ENUM)
        return -1;
    const char *base = (const char *)call;
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset != 0 &&
        !*(const protobuf_c_boolean *)(base + f->quantifier_offset))
        return -1;
    int v;
    memcpy(&v, base + f->offset, sizeof(v));
    if (v == 0 ||
        protobuf_c_enum_descriptor_get_value(f->descriptor, v) == NULL)
        return -1;
    *type = v;
    return 0;
}

/* True when the message field `name` of call is set. */
static bool payload_is_set(const struct master_api *api,
                           const ProtobufCMessage *call, const char *name)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(api->call_desc, name);
    if (f == NULL || f->type != PROTOBUF_C_TYPE_MESSAGE)
        return false; /* a row naming no message field: a bug, refused */
    const ProtobufCMessage *sub;
    memcpy(&sub, (const char *)call + f->offset, sizeof(sub));
    return sub != NULL;
}

static const struct master_call *find_row(const struct master_api *api,
                                          int type)
{
    for (size_t i = 0; i < api->nrows; i++)
        if (api->rows[i].type == type)
            return &api->rows[i];
    return NULL;
}

void master_call_dispatch(const struct master_api *api, struct master *m,
                          struct http_request *req)
{
    char principal[AUTH_MAX_PRINCIPAL + 1];
    bool authenticated;
    if (master_authz_authenticate(m, api->realm, req, principal,
                                  &authenticated) != 0)
        return;
    enum http_encoding body_enc, reply_enc;
    if (http_negotiate(req, &body_enc, &reply_enc) != 0)
        return;
    size_t len;
    const uint8_t *body = http_request_body(req, &len);
    char err[512];
    ProtobufCMessage *call = jpb_decode(
        api->call_desc, (enum jpb_format)body_enc, body, len, err, sizeof(err));
    if (call == NULL) {
        m->metrics.invalid_calls++;
        http_reply_error(req, 400, "%s", err);
        return;
    }
    struct master_call_ctx c = {.m = m,
                                .req = req,
                                .reply_enc = reply_enc,
                                .call = call,
                                .principal = authenticated ? principal : NULL};
    if (call_type(api, call, &c.type) != 0) {
        m->metrics.invalid_calls++;
        http_reply_error(req, 400, "unknown call type");
        goto out;
    }
    const struct master_call *row = find_row(api, c.type);
    if (row == NULL) {
        api->fallback(&c);
        goto out;
    }
    if (row->payload != NULL && !payload_is_set(api, call, row->payload)) {
        m->metrics.invalid_calls++;
        http_reply_error(req, 400, "%s: required for %s", row->payload,
                         master_call_type_name(api, c.type));
        goto out;
    }
    if (row->counter != MASTER_CALL_NO_COUNT) {
        uint64_t *n = (uint64_t *)((char *)&m->metrics + (row->counter - 1));
        (*n)++;
    }
    if (!(row->flags & MASTER_CALL_OPEN) && api->bind != NULL &&
        api->bind(&c) != 0)
        goto out;
    if (master_authz_call(&c, api->realm, row->action) != 0)
        goto out;
    row->fn(&c);
out:
    jpb_free(call);
}
