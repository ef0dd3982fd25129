/*
 * Scripted peers of the master for end-to-end tests: a framework and an
 * agent speaking JSON over the harness's blocking HTTP client, their
 * events read from RecordIO streams. Assertions (Check) fail the test on
 * protocol errors.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_API_H
#define OFFERD_TESTS_E2E_HARNESS_API_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define T 5000 /* ms: default wait for an event */

/* A stream of events (a framework's or an agent's subscription). */
struct conn {
    struct e2e_stream s;
    char stream_id[128];
    char id[256];  /* framework or agent id */
    char *pending; /* bytes of a record split across chunks */
    size_t npending;
};

/* Resources of a small task and of a scripted agent, as JSON arrays. */
#define SMALL                                                                  \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":0.5}},"     \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":64}}]"
#define AGENT_RES                                                              \
    "[{\"name\":\"cpus\",\"type\":\"SCALAR\",\"scalar\":{\"value\":2}},"       \
    "{\"name\":\"mem\",\"type\":\"SCALAR\",\"scalar\":{\"value\":1024}},"      \
    "{\"name\":\"ports\",\"type\":\"RANGES\",\"ranges\":{\"range\":[{"         \
    "\"begin\":31000,\"end\":32000}]}}]"

/* The next record of the stream as JSON, or NULL on timeout. */
json_t *api_next_event(struct conn *c, int timeout_ms);
/* The next record of the stream, whatever its encoding: its bytes
 * (malloc'd, NUL-terminated, caller frees) and length in *len (OUT), or
 * NULL on timeout. */
uint8_t *api_next_record(struct conn *c, int timeout_ms, size_t *len);
/* SUBSCRIBE to the master's operator event stream on port in media_type
 * ("application/json" or "application/x-protobuf", for the call and the
 * events); asserts 200 in that type. */
void api_operator_subscribe(struct conn *c, uint16_t port,
                            const char *media_type);
/* The next event of the given type, skipping others (heartbeats, pings);
 * NULL when none arrives in time. */
json_t *api_wait_event(struct conn *c, const char *type, int timeout_ms);
/* Close the stream and free its buffers. */
void api_conn_close(struct conn *c);
/* Send HTTP Basic credentials with every later api_post, framework
 * SUBSCRIBE and operator form (principal NULL: none again). */
void api_set_credentials(const char *principal, const char *secret);
/* POST a JSON body (with Mesos-Stream-Id when stream_id is set); returns
 * the status and, with reason, the body. */
int api_post(uint16_t port, const char *path, const char *stream_id,
             const char *body, char *reason, size_t reasonlen);
/* GET path; asserts 200 and JSON. */
json_t *api_get_json(uint16_t port, const char *path);
/* POST a Mesos-style operator form to the master on port, as /reserve,
 * /unreserve, /create-volumes and /destroy-volumes take: slaveId=agent_id
 * and field=json (percent-encoded). Returns the status, the body in
 * reason (reasonlen bytes). */
int api_operator_form(uint16_t port, const char *path, const char *agent_id,
                      const char *field, const char *json, char *reason,
                      size_t reasonlen);
/* The checkpointed resources version an agent (its port) holds, from its
 * /state. */
long long api_agent_ckpt_version(uint16_t agent_port);
/* Subscribe a framework with framework_info (JSON) and wait for
 * SUBSCRIBED. */
void api_subscribe_framework(struct conn *c, uint16_t port,
                             const char *framework_info);
/* The same with a whole Call.Subscribe as JSON ({"framework_info":...,
 * "suppressed_roles":[...], "offer_constraints":{...}}). */
void api_subscribe_framework_call(struct conn *c, uint16_t port,
                                  const char *subscribe);
/* A framework call (type and, with field, its payload JSON); returns the
 * status. */
int api_fw_call(struct conn *c, uint16_t port, const char *type,
                const char *field, const char *payload);
/* ACKNOWLEDGE the status of an UPDATE event (status: the event's
 * update.status, borrowed) when it carries a uuid, asserting 202; nothing
 * for a status without one. */
void api_fw_ack_status(struct conn *c, uint16_t port, json_t *status);
/* Wait for an OFFERS event; copy out the first offer's id and agent id
 * (256 bytes each). Returns the event (caller json_decref's), or NULL. */
json_t *api_wait_offer(struct conn *fw, char *offer_id, char *agent_id,
                       int timeout_ms);
/* The amount of scalar resource name in the first offer of an event. */
double api_offered_scalar(json_t *offers_event, const char *name);
/* The amount of revocable scalar resource name in the first offer of an
 * event (0 when none). */
double api_offered_revocable(json_t *offers_event, const char *name);
/* DECLINE one offer with filters.refuse_seconds; returns the status. */
int api_decline(struct conn *fw, uint16_t port, const char *offer_id,
                double refuse_seconds);
/* ACCEPT one offer with one LAUNCH of task_id running `true`. */
int api_launch(struct conn *fw, uint16_t port, const char *offer_id,
               const char *agent_id, const char *task_id,
               const char *resources_json);
/* Subscribe a new agent and wait for REGISTERED. */
void api_subscribe_agent(struct conn *c, uint16_t port, const char *hostname,
                         const char *resources_json);
/* Send a status update from the agent (uuid_b64 NULL: without uuid). */
int api_agent_update(struct conn *ag, uint16_t port, const char *fw_id,
                     const char *task_id, const char *state,
                     const char *uuid_b64);
/* Answer a PING event. */
int api_agent_pong(struct conn *ag, uint16_t port, json_t *ping);

#endif
