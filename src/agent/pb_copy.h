/*
 * Deep copies of protobuf-c messages, so that the agent can keep parts of
 * an event (a TaskInfo, a FrameworkInfo) after the event is freed, or put
 * them into a message it builds and frees with jpb_free.
 */
#ifndef OFFERD_AGENT_PB_COPY_H
#define OFFERD_AGENT_PB_COPY_H

#include <protobuf-c/protobuf-c.h>

/* A deep copy of m (packed and unpacked again), allocated as jpb_free
 * expects. Aborts if m cannot be read back, which would be a bug: every
 * message the agent copies was decoded or built by it. */
ProtobufCMessage *agent_pb_copy(const ProtobufCMessage *m);

#endif
