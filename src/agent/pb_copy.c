/*
 * Deep copies of protobuf-c messages.
 */
#include "agent/pb_copy.h"

#include "common/json_pb.h"
#include "common/log.h"

#include <stdlib.h>

ProtobufCMessage *agent_pb_copy(const ProtobufCMessage *m)
{
    size_t len;
    uint8_t *buf = jpb_to_pb(m, &len);
    char err[256];
    ProtobufCMessage *copy =
        jpb_from_pb(m->descriptor, buf, len, err, sizeof(err));
    free(buf);
    if (copy == NULL) {
        log_error("cannot copy a %s: %s", m->descriptor->name, err);
        abort();
    }
    return copy;
}
