/*
 * libofferd: a C client of the Apache Mesos v1 scheduler HTTP API
 * (POST /api/v1/scheduler), for frameworks that run on offerd or on Mesos.
 *
 * One `struct offerd_sched` is one framework's connection to the master. It
 * runs on an event_base the caller owns and drives:
 *
 *  - offerd_sched_start opens the subscription: a SUBSCRIBE call whose
 *    response is a long-lived chunked stream of RecordIO-framed Events (in
 *    JSON or protobuf, as chosen in the options). The Mesos-Stream-Id the
 *    master answers with is kept and sent on every later call; the
 *    framework id of the SUBSCRIBED event is kept and put into the
 *    FrameworkInfo, so that every re-subscription resumes the same framework
 *    (its tasks survive while the master's failover_timeout allows).
 *  - Each event is decoded and handed to the callback of its type.
 *  - Every other call (ACCEPT, DECLINE, KILL, ...) is a separate POST; the
 *    master's 202 is swallowed, any other answer (or no answer) reaches the
 *    call_failed callback with the status and the master's one-line reason.
 *  - When the stream ends or fails, when the master stays silent longer than
 *    heartbeat_interval * heartbeat_tolerance, or when SUBSCRIBED does not
 *    come within subscribe_timeout_ms, the client reconnects with
 *    exponential backoff (randomised between half and all of the current
 *    delay, doubling from backoff_min_ms up to backoff_max_ms) and
 *    re-subscribes. A 307 redirect, or a 503 carrying a Location header
 *    (a master that is not the leader), is followed to the Location's
 *    host:port at once; the next connection after a failure goes back to
 *    the configured master (or the leader the detector names, below). A
 *    503 without a Location (a standby that knows no leader yet) is
 *    retried with backoff, as a 5xx. A 4xx answer to SUBSCRIBE is
 *    reported and retried with backoff, until max_subscribe_refusals
 *    answers in a row were 4xx: then the client gives up (disconnected
 *    with will_retry false). Other failed attempts (no answer, 5xx) are
 *    retried for ever.
 *  - Other calls go to the master of the subscription; a call answered
 *    with a redirect (307, or 503 with a Location) is sent again, the same
 *    body and headers, to the Location's master, at most 3 times in a row.
 *  - Where the master is: options.master takes any form of Mesos's
 *    `--master` flag: "host:port", "zk://[user:pass@]host:port,.../path"
 *    (the masters' election group in ZooKeeper, as Mesos lays it out) or
 *    "file:///path" (a file holding one of the two, read once by
 *    offerd_sched_new). A host name (there or in master_host, or in a
 *    redirect's Location) is looked up anew at every connection attempt
 *    with libevent's asynchronous resolver (/etc/hosts, then DNS), never
 *    with a blocking lookup. With zk://, the client subscribes to whichever
 *    master leads; when the leader changes it drops its stream (the
 *    disconnected callback runs, will_retry true) and subscribes to the new
 *    leader at once with the same FrameworkID, as Mesos's scheduler library
 *    does; while ZooKeeper knows no leader it waits.
 *
 * Threads: none of its own. Every function must be called from the thread
 * running the event_base's loop (or before the loop runs), and every
 * callback runs from that loop. The library keeps no global state, so
 * several clients may share one loop.
 *
 * Callbacks may call any function of this header on the same client,
 * including offerd_sched_stop and offerd_sched_free (the client is then
 * marked, its connections are closed at once, and its memory is released
 * when the callback returns; no further callback runs). A callback must not
 * block: it runs inside the loop. Unset (NULL) callbacks are skipped.
 *
 * Ownership: everything passed in is borrowed for the duration of the call
 * and copied when kept (the options, the FrameworkInfo, ids, operations).
 * Everything passed to a callback is borrowed for the duration of that
 * callback: copy what must outlive it.
 *
 * Protobuf types are those protoc-c generates from Mesos's .proto files
 * ("mesos/v1/scheduler.pb-c.h", "mesos/v1/mesos.pb-c.h"); include them to
 * read events and build operations. This header only declares their names.
 */
#ifndef OFFERD_SCHEDULER_H
#define OFFERD_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;

/* The generated protobuf-c types this API takes or gives (C11 allows these
 * typedefs to repeat the generated headers' own). */
typedef struct Mesos__V1__FrameworkInfo Mesos__V1__FrameworkInfo;
typedef struct Mesos__V1__Filters Mesos__V1__Filters;
typedef struct Mesos__V1__KillPolicy Mesos__V1__KillPolicy;
typedef struct Mesos__V1__Offer__Operation Mesos__V1__Offer__Operation;
typedef struct Mesos__V1__Request Mesos__V1__Request;
typedef struct Mesos__V1__Scheduler__Call Mesos__V1__Scheduler__Call;
typedef struct Mesos__V1__Scheduler__Event Mesos__V1__Scheduler__Event;

struct offerd_sched;
struct offerd_pool;

/* Body encoding of calls and events. */
enum offerd_encoding {
    OFFERD_ENCODING_JSON = 0,     /* application/json */
    OFFERD_ENCODING_PROTOBUF = 1, /* application/x-protobuf */
};

/* An event callback: ev is the decoded Event (borrowed for the call), its
 * sub-message for the type is present (e.g. ev->offers for OFFERS). */
typedef void (*offerd_sched_event_fn)(struct offerd_sched *s,
                                      const Mesos__V1__Scheduler__Event *ev,
                                      void *user);

/* Callbacks; every member may be NULL. `user` is options.user. */
struct offerd_sched_callbacks {
    /* The master accepted SUBSCRIBE (200, stream open); SUBSCRIBED
     * follows. */
    void (*connected)(struct offerd_sched *s, void *user);
    /* The subscription stream that `connected` announced ended or failed,
     * or the client gave up subscribing. reason is one line. will_retry:
     * a reconnection is scheduled; false after a TEARDOWN, or after too
     * many refused SUBSCRIBEs (the client is then stopped; start it again
     * to retry). Not called by offerd_sched_stop or offerd_sched_free. */
    void (*disconnected)(struct offerd_sched *s, const char *reason,
                         bool will_retry, void *user);
    /* SUBSCRIBED: the client is now subscribed. framework_id (also
     * offerd_sched_framework_id) and heartbeat_interval_secs (0 when the
     * master sent none) are taken from ev->subscribed. */
    void (*subscribed)(struct offerd_sched *s, const char *framework_id,
                       double heartbeat_interval_secs,
                       const Mesos__V1__Scheduler__Event *ev, void *user);
    offerd_sched_event_fn offers;                /* ev->offers */
    offerd_sched_event_fn inverse_offers;        /* ev->inverse_offers */
    offerd_sched_event_fn rescind;               /* ev->rescind */
    offerd_sched_event_fn rescind_inverse_offer; /* ev->rescind_inverse_offer */
    /* ev->update. With auto_acknowledge, an update whose status carries a
     * uuid is acknowledged when this returns (do not acknowledge it too). */
    offerd_sched_event_fn update;
    offerd_sched_event_fn update_operation_status; /* not auto-acknowledged */
    offerd_sched_event_fn message;                 /* ev->message */
    offerd_sched_event_fn failure;                 /* ev->failure */
    /* ev->error: the master refuses the framework for good (Mesos advises
     * aborting); the client keeps its connection logic going, so a
     * framework usually stops or frees the client here. */
    offerd_sched_event_fn error;
    offerd_sched_event_fn heartbeat; /* no payload */
    /* A call did not get its 2xx: call_type is the
     * Mesos__V1__Scheduler__Call__Type value (SUBSCRIBE included: each
     * failed subscription attempt is reported), status the HTTP status (0
     * when no answer came: connection refused, timed out), reason the
     * master's one-line reason or the local error. Redirects that are
     * followed are not failures. */
    void (*call_failed)(struct offerd_sched *s, int call_type, int status,
                        const char *reason, void *user);
};

/* Defaults (a zero option field takes them). */
#define OFFERD_SCHED_DEFAULT_BACKOFF_MIN_MS      1000
#define OFFERD_SCHED_DEFAULT_BACKOFF_MAX_MS      15000
#define OFFERD_SCHED_DEFAULT_HEARTBEAT_TOLERANCE 5.0
#define OFFERD_SCHED_DEFAULT_SUBSCRIBE_TIMEOUT   75000
#define OFFERD_SCHED_DEFAULT_CALL_TIMEOUT        75000
#define OFFERD_SCHED_DEFAULT_MAX_REFUSALS        3
#define OFFERD_SCHED_DEFAULT_MAX_EVENT_SIZE      ((size_t)64 << 20)

/* Period of the attached offer pool's expiry and decline flushing. */
#define OFFERD_SCHED_POOL_TICK_MS 1000

/* Everything offerd_sched_new takes. Zero-initialise, then set at least
 * master (or master_host and master_port) and framework_info. */
struct offerd_sched_options {
    /* Either master (any `--master` form, see the top of this file;
     * copied) or master_host and master_port. */
    const char *master;
    const char *master_host; /* an address ("127.0.0.1", "::1") or a host
                                name; ignored when master is set */
    uint16_t master_port;    /* e.g. 5050 */
    enum offerd_encoding encoding;
    /* user and name required; id set: resume that framework. Deep-copied. */
    const Mesos__V1__FrameworkInfo *framework_info;
    struct offerd_sched_callbacks callbacks;
    void *user;                 /* passed to every callback */
    bool auto_acknowledge;      /* acknowledge UPDATEs carrying a uuid */
    int backoff_min_ms;         /* first reconnection delay; 0: default */
    int backoff_max_ms;         /* largest delay; 0: default */
    double heartbeat_tolerance; /* heartbeats that may be missed before
                                   reconnecting (silence allowed: interval
                                   times this); 0: default */
    int subscribe_timeout_ms;   /* SUBSCRIBE until SUBSCRIBED; 0: default */
    int call_timeout_ms;        /* each other call; 0: default */
    int max_subscribe_refusals; /* 4xx answers to SUBSCRIBE in a row
                                   that make the client give up; 0:
                                   default, < 0: never give up */
    size_t max_event_size;      /* largest event record in bytes; larger
                                   ends the stream; 0: default */
    /* Credentials for a master that authenticates frameworks (its
     * --authenticate_frameworks): every call carries them as HTTP Basic.
     * NULL principal: none. Both copied. framework_info.principal, when
     * unset, is taken from principal (the master requires them equal). */
    const char *principal;
    const char *secret; /* NULL: empty */
};

/* ---- Lifetime ---- */

/* Create a client on base (borrowed: it must outlive the client) that does
 * nothing until offerd_sched_start. Returns the client, or NULL with a
 * one-line reason in err (errlen bytes) when the options are unusable (no
 * master, a master that is none of the forms or a file:// that cannot be
 * read, no FrameworkInfo or one lacking user or name, backoff_min_ms >
 * backoff_max_ms, a negative timeout). */
struct offerd_sched *offerd_sched_new(struct event_base *base,
                                      const struct offerd_sched_options *o,
                                      char *err, size_t errlen);

/* Start subscribing: the first SUBSCRIBE goes out from the loop right
 * after. Returns 0, or -1 when already started (see offerd_sched_stop).
 * Starting after a TEARDOWN subscribes as a new framework (the old id is
 * dropped). */
int offerd_sched_start(struct offerd_sched *s);

/* Close the subscription and every call in flight (their callbacks will not
 * run), stop reconnecting, and forget the stream id. The framework id is
 * kept, so a later offerd_sched_start resumes the framework. No callback
 * runs. Safe inside callbacks; no-op when not started. */
void offerd_sched_stop(struct offerd_sched *s);

/* Stop and free the client; NULL is ignored. Inside a callback of this
 * client the memory is released when the callback returns; the pointer is
 * dead for the caller either way. */
void offerd_sched_free(struct offerd_sched *s);

/* ---- Offer pool (include/offerd/offer_pool.h) ---- */

/*
 * Attach pool (borrowed: it must outlive the client, or be detached with
 * NULL before it is freed), replacing any pool attached before. While
 * attached, the client keeps it fed, each change made before the event's
 * callback runs (so the callback sees the pool up to date):
 *  - OFFERS: every offer is added (offerd_pool_add);
 *  - RESCIND: the offer is removed (offerd_pool_rescind);
 *  - agent loss: a FAILURE event with an agent id and no executor id, or an
 *    UPDATE from the master (source SOURCE_MASTER) with the reason
 *    REASON_AGENT_REMOVED, REASON_AGENT_REMOVED_BY_OPERATOR,
 *    REASON_AGENT_DISCONNECTED or REASON_AGENT_REREGISTERED, or in state
 *    TASK_UNREACHABLE or TASK_LOST without a reason, calls
 *    offerd_pool_agent_lost for the status's agent (updates the master
 *    sends for reconciliation or invalid offers name other reasons);
 *  - the end of a subscription (stream lost, stop, free) clears the pool
 *    (offerd_pool_clear): the master rescinds a disconnected framework's
 *    offers.
 * The pool's queued declines (offerd_pool_flush) are sent as DECLINE calls,
 * one per refusal filter, after every event callback and every
 * OFFERD_SCHED_POOL_TICK_MS from the loop, which also expires old offers
 * (offerd_pool_expire). Declines queued while not subscribed are dropped.
 * Other threads may use the pool at any time; only the loop thread calls
 * the client. Returns 0, or -1 when s is NULL or freed.
 */
int offerd_sched_set_pool(struct offerd_sched *s, struct offerd_pool *pool);

/* The attached pool, or NULL. */
struct offerd_pool *offerd_sched_pool(const struct offerd_sched *s);

/* ---- State ---- */

/* True between SUBSCRIBED and the end of that subscription. */
bool offerd_sched_is_subscribed(const struct offerd_sched *s);

/* The framework id (from SUBSCRIBED, or from the FrameworkInfo given), or
 * NULL. Borrowed: valid until the next callback or call of the client. */
const char *offerd_sched_framework_id(const struct offerd_sched *s);

/* The current Mesos-Stream-Id, or NULL when not connected. Borrowed as
 * above. */
const char *offerd_sched_stream_id(const struct offerd_sched *s);

/* The FrameworkInfo used for the next SUBSCRIBE (with the framework id once
 * known). Borrowed as above. */
const Mesos__V1__FrameworkInfo *
offerd_sched_framework_info(const struct offerd_sched *s);

/* Calls sent and not yet answered. */
size_t offerd_sched_pending_calls(const struct offerd_sched *s);

/* ---- Calls ----
 *
 * Each builds its Call (framework_id and type filled in), encodes it and
 * POSTs it with the Mesos-Stream-Id. Returns 0 when the call was sent (its
 * outcome, if not 2xx, reaches call_failed later), or -1 at once, sending
 * nothing, when the client is not subscribed or an argument is missing
 * (an id that is NULL, n > 0 with a NULL array). Strings are ids' values
 * ("value" of OfferID, AgentID, TaskID, ExecutorID). */

/* TEARDOWN: the master kills every task and removes the framework. The
 * client then does not reconnect when the master closes the stream. */
int offerd_sched_teardown(struct offerd_sched *s);

/* ACCEPT offer_ids (n, n >= 1) applying ops (nops, may be 0) in order;
 * filters may be NULL. */
int offerd_sched_accept(struct offerd_sched *s, const char *const *offer_ids,
                        size_t n, Mesos__V1__Offer__Operation *const *ops,
                        size_t nops, const Mesos__V1__Filters *filters);

/* DECLINE offer_ids (n >= 1); filters may be NULL (the master's default
 * refusal of 5 seconds). */
int offerd_sched_decline(struct offerd_sched *s, const char *const *offer_ids,
                         size_t n, const Mesos__V1__Filters *filters);

/* ACCEPT_INVERSE_OFFERS / DECLINE_INVERSE_OFFERS (n >= 1). */
int offerd_sched_accept_inverse_offers(struct offerd_sched *s,
                                       const char *const *inverse_offer_ids,
                                       size_t n,
                                       const Mesos__V1__Filters *filters);
int offerd_sched_decline_inverse_offers(struct offerd_sched *s,
                                        const char *const *inverse_offer_ids,
                                        size_t n,
                                        const Mesos__V1__Filters *filters);

/* REVIVE / SUPPRESS roles (n may be 0: all the framework's roles). */
int offerd_sched_revive(struct offerd_sched *s, const char *const *roles,
                        size_t n);
int offerd_sched_suppress(struct offerd_sched *s, const char *const *roles,
                          size_t n);

/* KILL task_id; agent_id and kill_policy may be NULL. */
int offerd_sched_kill(struct offerd_sched *s, const char *task_id,
                      const char *agent_id,
                      const Mesos__V1__KillPolicy *kill_policy);

/* SHUTDOWN a custom executor on an agent. */
int offerd_sched_shutdown(struct offerd_sched *s, const char *executor_id,
                          const char *agent_id);

/* ACKNOWLEDGE the update of task_id on agent_id carrying uuid (uuid_len
 * bytes, as in TaskStatus.uuid). */
int offerd_sched_acknowledge(struct offerd_sched *s, const char *agent_id,
                             const char *task_id, const uint8_t *uuid,
                             size_t uuid_len);

/* One task of a RECONCILE call; agent_id may be NULL. */
struct offerd_reconcile_task {
    const char *task_id;
    const char *agent_id;
};

/* RECONCILE the n tasks (n == 0: implicit reconciliation of all tasks). */
int offerd_sched_reconcile(struct offerd_sched *s,
                           const struct offerd_reconcile_task *tasks, size_t n);

/* MESSAGE: len bytes of data (may be NULL when len is 0) for an executor. */
int offerd_sched_message(struct offerd_sched *s, const char *agent_id,
                         const char *executor_id, const uint8_t *data,
                         size_t len);

/* REQUEST resources (advisory; n may be 0). */
int offerd_sched_request(struct offerd_sched *s,
                         Mesos__V1__Request *const *requests, size_t n);

/* UPDATE_FRAMEWORK to info (its id is set to the framework's) with the
 * suppressed roles (n may be 0). On success of the send, info also replaces
 * the FrameworkInfo of later re-subscriptions. */
int offerd_sched_update_framework(struct offerd_sched *s,
                                  const Mesos__V1__FrameworkInfo *info,
                                  const char *const *suppressed_roles,
                                  size_t n);

/* Send a Call built by the caller (for calls without a function here, such
 * as ACKNOWLEDGE_OPERATION_STATUS): its framework_id is filled in when
 * unset; its type must be set and must not be SUBSCRIBE. */
int offerd_sched_call(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Call *call);

#endif
