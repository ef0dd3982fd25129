/*
 * Limits on frameworks, so that nobody without privileges fills the
 * master's framework table (docs/security.md, "Holding under abuse"):
 *  - a cap on the frameworks registered at once per principal and per peer
 *    address (--max_frameworks_per_principal), checked for new frameworks
 *    only: a framework re-subscribing with its id is never refused;
 *  - a SUBSCRIBE rate per principal after Mesos's --rate_limits (a token
 *    bucket of `qps` refilled per second holding up to `capacity`; principals
 *    not listed share the aggregate default, and frameworks without a
 *    principal get a bucket per peer address at the aggregate default);
 *  - a cap on the failover timeout of a framework that never launched a
 *    task (--max_failover_timeout), so abandoned subscriptions expire.
 * frameworks.c calls these from a few places; the state lives here.
 */
#ifndef OFFERD_MASTER_LIMITS_H
#define OFFERD_MASTER_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include "mesos/v1/mesos.pb-c.h"

struct master;
struct master_flags;
struct framework;
struct http_request;
struct master_limits;

/* Build the limits of flags (borrowed; outlives the result). Returns NULL
 * with a one-line reason in err when --rate_limits does not parse. */
struct master_limits *master_limits_new(const struct master_flags *flags,
                                        char *err, size_t errlen);

/* Free the limits; NULL is ignored. */
void master_limits_free(struct master_limits *l);

/* May the SUBSCRIBE of fi on req go on? A known framework (is_new false)
 * always may. A new one over its principal's or peer's cap is answered 503,
 * one over its SUBSCRIBE rate 429 (each with a one-line reason and
 * Retry-After); then -1 is returned and req is dead. Returns 0 otherwise
 * (a rate token was taken). */
int master_limits_subscribe(struct master *m, struct http_request *req,
                            const Mesos__V1__FrameworkInfo *fi, bool is_new);

/* A new framework id was admitted by the SUBSCRIBE on req: count it
 * against its principal and peer until master_limits_framework_gone. */
void master_limits_framework_added(struct master *m, const char *id,
                                   const struct http_request *req,
                                   const Mesos__V1__FrameworkInfo *fi);

/* Framework id left the table (removed, or its subscription failed). An id
 * never added is ignored. */
void master_limits_framework_gone(struct master *m, const char *id);

/* The failover timeout to honour for fw, asked for secs: at most
 * --max_failover_timeout if fw never launched a task, else secs. */
double master_limits_failover_secs(const struct framework *fw, double secs);

#endif
