/*
 * zk_harness: real ZooKeeper servers for unit and end-to-end tests.
 *
 * Starts one server, or an ensemble of up to ZK_HARNESS_MAX servers, from
 * Debian's `zookeeper` package (java, /usr/share/java/zookeeper.jar) on
 * 127.0.0.1, every port (client, peer, election) chosen free at run time,
 * with its data and log (zk<i>.log) in a fresh temporary directory. Servers
 * run with a short tick (200 ms) so elections and session expiry are quick,
 * and accept session timeouts from 400 ms to 60 s.
 *
 * Each server is a child of the calling process that dies with it
 * (PR_SET_PDEATHSIG), so a test that crashes leaves nothing behind;
 * zk_ensemble_stop() still kills them all and removes the directory.
 * Functions are for the test's own thread; none is thread-safe.
 */
#ifndef OFFERD_TESTS_ZK_HARNESS_H
#define OFFERD_TESTS_ZK_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ZK_HARNESS_MAX 5

struct zk_ensemble;

/* Start n servers (1 runs standalone, 2..ZK_HARNESS_MAX a quorum ensemble)
 * and wait up to timeout_ms until every one of them serves. NULL with a
 * one-line reason in err on failure (nothing left running). */
struct zk_ensemble *zk_ensemble_start(int n, int timeout_ms, char *err,
                                      size_t errlen);

/* Number of servers. */
int zk_ensemble_size(const struct zk_ensemble *z);

/* "127.0.0.1:p1,127.0.0.1:p2,..." for zookeeper_init(). */
const char *zk_ensemble_hosts(const struct zk_ensemble *z);

/* out = "zk://<hosts><path>" (path starts with '/'). 0, or -1 when it does
 * not fit. */
int zk_ensemble_url(const struct zk_ensemble *z, const char *path, char *out,
                    size_t outlen);

/* Client port of server i (0-based). */
uint16_t zk_server_port(const struct zk_ensemble *z, int i);

/* The ensemble's temporary directory (server i's log is zk<i>.log). */
const char *zk_ensemble_dir(const struct zk_ensemble *z);

/* Kill server i (SIGKILL) and reap it; its data stays. 0, or -1 when it
 * was not running. */
int zk_server_stop(struct zk_ensemble *z, int i);

/* Start server i again on the same ports and data, and wait up to
 * timeout_ms until it serves (in an ensemble: has joined a quorum). */
int zk_server_start(struct zk_ensemble *z, int i, int timeout_ms);

/* SIGSTOP / SIGCONT server i: a server that hangs without closing its
 * connections. 0, or -1 when it is not running. */
int zk_server_pause(struct zk_ensemble *z, int i);
int zk_server_resume(struct zk_ensemble *z, int i);

/* True when server i answers "srvr" as standalone, leader or follower. */
bool zk_server_serving(const struct zk_ensemble *z, int i);

/* Wait up to timeout_ms until every running server serves. */
bool zk_ensemble_wait_serving(const struct zk_ensemble *z, int timeout_ms);

/* Print the last max_bytes of each server's log to stderr (for failing
 * tests). */
void zk_ensemble_dump_logs(const struct zk_ensemble *z, size_t max_bytes);

/* Kill every server, remove the directory, free. NULL is ignored. */
void zk_ensemble_stop(struct zk_ensemble *z);

#endif
