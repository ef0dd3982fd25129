/*
 * FIXME: this header only remains because src/agent/volumes.c, which
 * another branch owns, still calls agent_pb_copy. Switch its five calls to
 * jpb_copy (common/json_pb.h) with the Resource descriptor, then delete
 * this file.
 */
#ifndef OFFERD_AGENT_PB_COPY_H
#define OFFERD_AGENT_PB_COPY_H

#include "common/json_pb.h"

#include <protobuf-c/protobuf-c.h>

/* jpb_copy(m->descriptor, m); see there. */
static inline ProtobufCMessage *agent_pb_copy(const ProtobufCMessage *m)
{
    return jpb_copy(m->descriptor, m);
}

#endif
