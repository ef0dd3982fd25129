/*
 * Fuzz target: the offerd agent protocol as the master takes it. The first
 * byte picks the encoding (even: JSON, odd: protobuf), the rest is the body
 * of a POST /api/v1/agent (an offerd.agent.Call), handed to the master's
 * agent API (master/agents.h) through a fake request: the call table's
 * prologue, the decoder, and whichever handler the call reaches, against a
 * master whose state carries over from input to input (fuzz_master.h).
 */
#include "common/http.h"
#include "common/http_fake.h"
#include "master/agents.h"

#include <stddef.h>
#include <stdint.h>

#include "fuzz_master.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fuzz_master_start(false);
    struct http_fake *f = http_fake_new(fuzz_base, HTTP_POST, "/api/v1/agent");
    const char *type =
        (data[0] & 1) ? HTTP_CONTENT_PROTOBUF : HTTP_CONTENT_JSON;
    http_fake_add_header(f, "Content-Type", type);
    http_fake_add_header(f, "Accept", type);
    http_fake_set_peer(f, "127.0.0.2:5051");
    http_fake_set_body(f, data + 1, size - 1);
    http_fake_dispatch(f, master_agent_api, fuzz_m);
    fuzz_master_settle(8);
    /* A SUBSCRIBE's stream ends here: the agent disconnects. */
    http_fake_free(f);
    fuzz_master_settle(4);
    return 0;
}
