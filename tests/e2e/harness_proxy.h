/*
 * A chaos proxy for end-to-end tests: a loopback TCP proxy, run by a thread
 * of its own in the test process, that forwards every connection it
 * accepts to 127.0.0.1:<upstream port> and, while told to, misbehaves at
 * random (a seeded RNG, so a seed replays the same schedule of episodes;
 * what falls into each episode still depends on timing):
 *
 *  - calm:      data passes at once;
 *  - slow:      each chunk read is held for a random delay up to a bound
 *               (50 ms .. 2.5 s); the order within a direction of a
 *               connection is kept (as TCP keeps it), connections are
 *               delayed independently (so requests on different
 *               connections may overtake each other);
 *  - stall:     nothing is forwarded for a while, then all of it at once;
 *  - cut:       every connection (or one, at random) is reset at once,
 *               dropping what it held;
 *  - refuse:    new connections are reset as soon as they are accepted;
 *  - partition: every connection is reset and new ones refused for a while
 *               (long enough for the master to miss its pings).
 *
 * Outside chaos (before e2e_proxy_chaos and once it is over) it is a plain
 * forwarder. Each episode is logged to stderr with the proxy's name.
 * The caller's thread only uses the functions below; all state is behind a
 * mutex.
 */
#ifndef OFFERD_TESTS_E2E_HARNESS_PROXY_H
#define OFFERD_TESTS_E2E_HARNESS_PROXY_H

#include <stdbool.h>
#include <stdint.h>

struct e2e_proxy;

struct e2e_proxy_config {
    const char *name;       /* for log lines (copied) */
    uint16_t upstream_port; /* where connections go, on 127.0.0.1 */
    uint64_t seed;          /* the chaos schedule's RNG */
};

/* What a proxy did so far. */
struct e2e_proxy_stats {
    unsigned accepted;       /* connections accepted and forwarded */
    unsigned refused;        /* connections reset on accept */
    unsigned cut;            /* connections reset while open */
    unsigned episodes[6];    /* by kind: calm, slow, stall, cut, refuse,
                                partition */
    unsigned long forwarded; /* bytes delivered */
    unsigned long dropped;   /* bytes held by connections that were cut */
};

/* Listen on a free loopback port and start the thread. Returns the proxy,
 * or NULL with a message on stderr. */
struct e2e_proxy *e2e_proxy_start(const struct e2e_proxy_config *cfg);

/* The port the proxy listens on. */
uint16_t e2e_proxy_port(const struct e2e_proxy *p);

/* Start misbehaving now, for duration_ms; then heal for good. */
void e2e_proxy_chaos(struct e2e_proxy *p, int duration_ms);

/* True when not (or no longer) misbehaving. */
bool e2e_proxy_healed(struct e2e_proxy *p);

/* A copy of the counters. */
void e2e_proxy_get_stats(struct e2e_proxy *p, struct e2e_proxy_stats *out);

/* Stop the thread, close every connection and the listener, free. NULL is
 * ignored. */
void e2e_proxy_stop(struct e2e_proxy *p);

#endif
