/*
 * A master with no sockets, for unit tests of its call handling: the real
 * master (master_new_with) on a private event_base, its registry in a
 * memory store, driven through fake requests (common/http_fake.h) handed to
 * the API handlers themselves. Frameworks and agents are fake streams whose
 * events a test reads back decoded as JSON.
 *
 * Waiting is bounded: mfx_run_until runs the loop (and delivers registry
 * completions) until a condition holds or MFX_DEADLINE_MS passes. Nothing
 * sleeps and then asserts.
 */
#ifndef OFFERD_TESTS_MASTER_FIXTURE_H
#define OFFERD_TESTS_MASTER_FIXTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/http.h"
#include "common/http_fake.h"
#include "master/flags_master.h"
#include "master/master_types.h"

#define MFX_DEADLINE_MS 5000

struct mfx {
    struct event_base *base;
    struct master_flags flags;
    struct master *m;
    char store[64]; /* the memory registry's store name */
    /* The Authorization header every request of mfx_post and mfx_http
     * carries ("" for none); mfx_set_principal sets it. */
    char auth[2048];
};

/* A subscribed framework or agent: its stream and ids. */
struct mfx_peer {
    struct http_fake *stream;
    char id[256];
    char stream_id[64];
    size_t next; /* the next record to read */
};

/* The standard fixture of a master test file, written once at file scope:
 * a master X, frameworks FW and FW2, agents AG and AG2, operator
 * subscribers OP and OP2 (each all zeroes until subscribed), setup()
 * starting X with the default flags and teardown() freeing every peer
 * (freeing one never subscribed does nothing) and stopping X. A file whose
 * cases start X otherwise writes its own setup and leaves this one
 * unused. */
#define MFX_STANDARD_FIXTURE                                                   \
    static struct mfx X;                                                       \
    static struct mfx_peer FW, FW2, AG, AG2, OP, OP2;                          \
    __attribute__((unused)) static void setup(void)                            \
    {                                                                          \
        mfx_start(&X, NULL);                                                   \
    }                                                                          \
    static void teardown(void)                                                 \
    {                                                                          \
        struct mfx_peer *peers[] = {&FW, &FW2, &AG, &AG2, &OP, &OP2};          \
        mfx_teardown(&X, peers, sizeof(peers) / sizeof(peers[0]));             \
    }

/* Free the n peers' streams, then stop x (MFX_STANDARD_FIXTURE's
 * teardown). */
void mfx_teardown(struct mfx *x, struct mfx_peer *const *peers, size_t n);

/* Start a master (flags: defaults, then the "--name=value" strings of
 * extra_flags, NULL-terminated, may be NULL). Aborts the test on failure. */
void mfx_start(struct mfx *x, const char *const *extra_flags);
/* Stop the master and free everything (the store too). */
void mfx_stop(struct mfx *x);
/* Stop the master only, keeping its store, and start another on it (a
 * master restart). */
void mfx_restart(struct mfx *x);

/* Run the loop until cond(arg) holds; false when MFX_DEADLINE_MS passed. */
bool mfx_run_until(struct mfx *x, bool (*cond)(void *arg), void *arg);
/* Run what is ready now (loop turns and registry completions). */
void mfx_settle(struct mfx *x);

/* POST json to an API handler (master_scheduler_api, master_agent_api,
 * master_operator_api) as application/json, with the Mesos-Stream-Id
 * header when stream_id is not NULL. Runs the loop until the reply. Returns
 * the exchange (free with http_fake_free). */
struct http_fake *mfx_post(struct mfx *x, http_handler_fn fn,
                           const char *stream_id, const char *json);
/* Make every later request of x carry HTTP Basic credentials of
 * principal and secret (principal NULL: none). */
void mfx_set_principal(struct mfx *x, const char *principal,
                       const char *secret);
/* A request to an HTTP endpoint through the master's routes and gate
 * (method, target with its query, body of content_type; both may be NULL),
 * with x's credentials. Runs the loop until the reply. Returns the
 * exchange (free with http_fake_free). */
struct http_fake *mfx_http(struct mfx *x, enum http_method method,
                           const char *target, const char *content_type,
                           const char *body);
/* The same, returning only the status (the exchange is freed). */
int mfx_post_status(struct mfx *x, http_handler_fn fn, const char *stream_id,
                    const char *json);
/* The reply body of an exchange as a string. */
const char *mfx_body(const struct http_fake *f);

/* SUBSCRIBE a framework: info_json is the FrameworkInfo's JSON (e.g.
 * {"user":"u","name":"fw","roles":["r"],"capabilities":[...]}). Asserts
 * SUBSCRIBED arrives. */
void mfx_framework_subscribe(struct mfx *x, struct mfx_peer *fw,
                             const char *info_json);
/* SUBSCRIBE a framework with a whole Call.Subscribe as JSON
 * ({"framework_info":{...},"suppressed_roles":[...],...}). Asserts
 * SUBSCRIBED arrives. */
void mfx_framework_subscribe_call(struct mfx *x, struct mfx_peer *fw,
                                  const char *subscribe_json);
/* A scheduler call of fw: type, payload field name (NULL: none) and its
 * JSON. Returns the status. */
int mfx_framework_call(struct mfx *x, struct mfx_peer *fw, const char *type,
                       const char *field, const char *payload_json);

/* SUBSCRIBE an agent with hostname and resources (text: "cpus:2;mem:1024").
 * Asserts REGISTERED arrives. */
void mfx_agent_subscribe(struct mfx *x, struct mfx_peer *ag,
                         const char *hostname, const char *resources);
/* The same with AgentInfo.attributes (a JSON array, NULL: none). */
void mfx_agent_subscribe_attrs(struct mfx *x, struct mfx_peer *ag,
                               const char *hostname, const char *resources,
                               const char *attributes_json);
/* An agent call of ag. Returns the status. */
int mfx_agent_call(struct mfx *x, struct mfx_peer *ag, const char *type,
                   const char *field, const char *payload_json);

/* An operator call (the whole Call as JSON). Returns the exchange. */
struct http_fake *mfx_operator(struct mfx *x, const char *call_json);

/* The next event of type on p's stream, waiting for it; events of other
 * types before it are skipped. NULL when none came. Caller json_decrefs. */
json_t *mfx_next_event(struct mfx *x, struct mfx_peer *p, const char *type);
/* How many events p's stream holds that were not read yet. */
size_t mfx_unread(const struct mfx_peer *p);
/* Whether an event of type is among p's unread events (reads nothing). */
bool mfx_has_event(const struct mfx_peer *p, const char *type);

/* Free a peer's stream (after its master stopped or the test is done). */
void mfx_peer_free(struct mfx_peer *p);

/* ag reports task_id of fw in state (e.g. "TASK_FINISHED") with the
 * update uuid numbered u (0..63: 15 zero bytes and u); asserts 202 and that
 * fw gets the UPDATE. With ack, fw then acknowledges it (202 asserted). */
void mfx_task_update(struct mfx *x, struct mfx_peer *fw, struct mfx_peer *ag,
                     const char *task_id, const char *state, int u, bool ack);

/* The value of the metric name as /metrics/snapshot shows it now
 * (master_metrics_collect); fails the test when there is none. */
double mfx_metric(struct mfx *x, const char *name);

/* Wait for fw's next OFFERS event (fw and an agent already subscribed:
 * this subscribes nothing) and assert it came; returns it (new
 * reference), its first offer's id in offer_id (256 bytes). */
json_t *mfx_first_offer(struct mfx *x, struct mfx_peer *fw, char *offer_id);

/* Make the master's allocator know as many scalar resource names as it
 * keeps (ALLOC_MAX_NAMES), as earlier agents would have: cpus and mem (of
 * min_allocatable) and x0, x1, ... For tests of the cap. */
void mfx_fill_resource_names(struct mfx *x);

#endif
