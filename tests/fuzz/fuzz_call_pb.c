/*
 * Fuzz target: a mesos.v1.scheduler.Call in protobuf, as POSTed to
 * /api/v1/scheduler with Content-Type application/x-protobuf. Whatever
 * decodes must round-trip through both encodings (fuzz_roundtrip.h).
 */
#include "common/json_pb.h"
#include "mesos/v1/scheduler.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    ProtobufCMessage *m =
        jpb_decode(&mesos__v1__scheduler__call__descriptor, JPB_PROTOBUF, data,
                   size, err, sizeof(err));
    if (m == NULL)
        return 0;
    fuzz_check_round_trips(m);
    jpb_free(m);
    return 0;
}
