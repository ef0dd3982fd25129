/*
 * ha: the master under ZooKeeper leader election (--zk, docs/ha.md).
 *
 * A master started with --zk is a standby first: it listens on its port
 * with a small server of its own (the standby server below) that answers
 * /health, /version, /flags, /metrics/snapshot, /state and /redirect
 * itself, and every other path with 307 Temporary Redirect to the same
 * path on the leader (Location "//<leader hostname>:<port><path>", as
 * Mesos's Master::Http::redirect sends it), or 503 "No leader elected"
 * when none is known. It contends (master/contender.h) and follows the
 * group (common/master_detect.h).
 *
 * Elected, it stops the standby server, creates the master exactly as a
 * restart would (master_new_with: the registry opened and recovered, its
 * own id kept, the same port bound) and serves. While leading, a lost
 * ZooKeeper connection makes every endpoint but the standby's own answer
 * 503 at once, until the session reconnects; when the session expires or
 * the node is gone, leadership is over: ha stops the loop with exit status
 * 1 (Mesos's master exits too; a supervisor restarts it as a standby).
 */
#ifndef OFFERD_MASTER_HA_H
#define OFFERD_MASTER_HA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_server;
struct master;
struct master_flags;
struct master_leader;
struct master_options;
struct ha;

/* Start a standby for flags (borrowed; flags->zk set) on base: bind
 * flags->ip:port (unless opts->no_listen), contend and detect. opts
 * (borrowed, may be NULL) is passed on to master_new_with when elected.
 * Returns NULL with the reason in err. */
struct ha *ha_new(struct event_base *base, const struct master_flags *flags,
                  const struct master_options *opts, char *err, size_t errlen);

/* The port listened on. */
uint16_t ha_port(const struct ha *h);

/* The leading master, or NULL while standing by. */
struct master *ha_master(const struct ha *h);

/* 0, or the exit status asked for when leadership was lost. */
int ha_exit_code(const struct ha *h);

/* Stop contending (the node goes at once), free the master if leading,
 * free. NULL is ignored. */
void ha_free(struct ha *h);

/* ---- The standby server, apart (unit tests drive it without ZooKeeper) -- */

struct ha_standby;

/* Standby endpoints for a master with this id, advertised ip and port, on
 * a new HTTP server over base (not bound: the caller binds
 * ha_standby_server, or dispatches fake requests to it). flags borrowed. */
struct ha_standby *ha_standby_new(struct event_base *base,
                                  const struct master_flags *flags,
                                  const char *id, const char *ip,
                                  uint16_t port);

/* The server (borrowed). */
struct http_server *ha_standby_server(struct ha_standby *s);

/* The leader to redirect to (copied; NULL or !known: none). */
void ha_standby_set_leader(struct ha_standby *s,
                           const struct master_leader *leader);

/* Free the server and the standby. NULL is ignored. */
void ha_standby_free(struct ha_standby *s);

/* True for the paths a master answers itself whether leading or not
 * (/health, /version, /flags, /metrics/snapshot, /redirect and their
 * /master/ forms). */
bool ha_path_is_local(const char *path);

#endif
