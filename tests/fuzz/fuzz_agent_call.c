/*
 * Fuzz target: a mesos.v1.agent.Call in JSON, as POSTed to an agent's
 * /api/v1 with Content-Type application/json (agent/operator_api.h).
 * Whatever decodes must round-trip through both encodings
 * (fuzz_roundtrip.h).
 */
#include "common/json_pb.h"
#include "mesos/v1/agent.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_roundtrip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    ProtobufCMessage *m = jpb_decode(&mesos__v1__agent__call__descriptor,
                                     JPB_JSON, data, size, err, sizeof(err));
    if (m == NULL)
        return 0;
    fuzz_check_round_trips(m);
    jpb_free(m);
    return 0;
}
