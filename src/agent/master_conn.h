/*
 * The agent's connection to the master (docs/agent-protocol.md): one
 * long-lived SUBSCRIBE request whose response is a RecordIO stream of
 * offerd.agent.Events, and every other call as a POST carrying the
 * stream's Mesos-Stream-Id. Bodies are application/x-protobuf.
 *
 * The connection subscribes when started and again whenever the stream
 * ends, fails or is refused, after a random delay in [0, b] where b starts
 * at the backoff factor and doubles per failed attempt up to the cap (reset
 * by a REGISTERED). It answers PING with PONG itself, and when REGISTERED
 * gave a ping timeout and no PING arrives for that long, it drops the
 * stream and subscribes again. A POST answered 403 (the master no longer
 * knows this stream) also makes it subscribe again.
 *
 * The owner supplies the SUBSCRIBE call for each attempt (so a
 * re-registration carries the agent's id and what it holds) and gets every
 * other event through a callback. Logs what happens at INFO.
 */
#ifndef OFFERD_AGENT_MASTER_CONN_H
#define OFFERD_AGENT_MASTER_CONN_H

#include "offerd/agent.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct agent_conn;

/* Largest event record accepted on the stream. */
#define AGENT_CONN_MAX_RECORD ((size_t)16 << 20)

struct agent_conn_config {
    const char *master_ip; /* IPv4 or host name (copied), used when master
                              is NULL */
    uint16_t master_port;
    /* The --master text (copied) for common/master_detect: host:port,
     * zk://..., file://...; the connection follows the leader it reports
     * (a new leader: the stream is dropped and a SUBSCRIBE goes to the new
     * one at once). NULL: master_ip:master_port, fixed. */
    const char *master;
    int64_t zk_session_timeout_ms; /* zk:// only; 0: 10 s */
    int64_t backoff_factor_ns;     /* first reconnection delay bound */
    int64_t backoff_max_ns;        /* cap of the bound */
    /* Authorization header value of every call ("Basic ..."; copied), or
     * NULL: none (--credential, auth_agent.h). */
    const char *authorization;
};

struct agent_conn_cbs {
    /* A new SUBSCRIBE call for an attempt; the connection takes ownership
     * (frees it with jpb_free after sending). */
    Offerd__Agent__Call *(*build_subscribe)(void *arg);
    /* An event of the current stream (borrowed for the call), REGISTERED
     * included, PING excluded. The owner may send calls from here. */
    void (*on_event)(const Offerd__Agent__Event *ev, void *arg);
    /* The stream (registered or not) closed, failed or was dropped; a new
     * attempt is scheduled. May be NULL. */
    void (*on_disconnected)(void *arg);
    void *arg;
};

/* A connection on base (borrowed); idle until agent_conn_start. Returns
 * NULL (the reason logged) when cfg->master cannot be followed. Host names
 * are resolved (evdns, not blocking the loop) before each attempt. */
struct agent_conn *agent_conn_new(struct event_base *base,
                                  const struct agent_conn_config *cfg,
                                  const struct agent_conn_cbs *cbs);

/* The master to talk to from now on (host: IPv4 or name, copied; NULL: no
 * leader known, no attempts until one is set). A different master drops
 * the stream (on_disconnected runs) and subscribes to the new one at
 * once. */
void agent_conn_set_master(struct agent_conn *c, const char *host,
                           uint16_t port);

/* Subscribe now (first attempt). */
void agent_conn_start(struct agent_conn *c);

/* True between a REGISTERED on the current stream and its end. */
bool agent_conn_is_registered(const struct agent_conn *c);

/* Most updates one UPDATES call carries (the master's limit too). */
#define AGENT_CONN_MAX_UPDATES 1024

/* POST call (borrowed; agent_id must be set by the caller) on the current
 * stream. Returns 0 when sent (the outcome is logged), -1 when no
 * registered stream exists (nothing sent). An UPDATE is not sent at once:
 * the updates of one loop turn go together at its end, as one UPDATES
 * call (one UPDATE when alone; at most AGENT_CONN_MAX_UPDATES per call),
 * in the order they were given. Those of a stream that ends first are
 * dropped (the update manager sends them again). A master that answers
 * UPDATES with 400 gets those updates again one per call, and every later
 * update too. */
int agent_conn_send(struct agent_conn *c, const Offerd__Agent__Call *call);

/* Calls POSTed whose answer has not arrived yet (updates queued for the
 * end of the loop turn count as one). */
size_t agent_conn_inflight(const struct agent_conn *c);

/* Cancel the stream and every request in flight, run no callback, free.
 * NULL is ignored. */
void agent_conn_free(struct agent_conn *c);

/* The bound of the reconnection delay after `attempts` failed attempts
 * (attempts >= 1): factor * 2^(attempts-1), at most max. Pure; exposed for
 * tests. */
int64_t agent_conn_backoff_bound(int64_t factor_ns, int64_t max_ns,
                                 unsigned attempts);

/* The body of an UPDATE call (n == 1) or an UPDATES call (n > 1) of
 * agent_id (NULL: none) carrying the n encoded Updates in order: a malloc'd
 * protobuf Call of *len bytes. Pure; exposed for tests. */
uint8_t *agent_conn_updates_body(const char *agent_id, uint8_t *const *updates,
                                 const size_t *lens, size_t n, size_t *len);

#endif
