/*
 * The registry's ZooKeeper backend (--registry=zk): every entity is a znode
 * <path>/registry/<kind>/<key escaped>, written through its own ZooKeeper
 * session with the synchronous API of the multi-threaded client (open and
 * load on the caller's thread, apply on the registry's worker thread).
 *
 * `where` is the --zk URL, zk://[user:pass@]host:port[,host:port...]/path.
 *
 * A version node, <path>/registry/version, guards against two writers: open
 * claims the registry by setting it (which bumps its ZooKeeper version) and
 * remembers the new version; every apply is one multi that checks that
 * version and bumps it again. A master that another one claimed the registry
 * from can therefore never write again: its apply fails with "registry
 * claimed by another master". docs/registry.md has the layout, how entities
 * above ZooKeeper's request limit are stored, and what a lost connection
 * means.
 */
#ifndef OFFERD_MASTER_REGISTRY_ZK_H
#define OFFERD_MASTER_REGISTRY_ZK_H

#include "master/registry_backend.h"

#include <stddef.h>

/* The format this build writes into the version node; a higher one is
 * refused at open. */
#define REGISTRY_ZK_FORMAT 1

/* Values above this many bytes, and values that would make one multi
 * request larger than REGISTRY_ZK_MULTI_BYTES, are stored in chunk znodes
 * of at most this size, written before the multi that links them. */
#define REGISTRY_ZK_CHUNK_BYTES (256 * 1024)

/* The most bytes (paths and data) of one multi request: well under
 * ZooKeeper's default jute.maxbuffer of 1 MiB - 1. */
#define REGISTRY_ZK_MULTI_BYTES (768 * 1024)

/* The backend table (open, load, apply, close). */
extern const struct registry_backend registry_zk_backend;

/* The ZooKeeper session timeout of stores opened from now on, in ms
 * (default 10,000; values below 1,000 are raised to it). Open waits this
 * long for a connection, and an apply whose outcome a lost connection hid
 * keeps asking for it this long before it fails closed. Set it before
 * registry_open; --zk_session_timeout does. */
void registry_zk_set_session_timeout_ms(int ms);

/* Escape a key into a znode name (OUT, NUL-terminated): bytes outside
 * [A-Za-z0-9_.-] become %XX, a name of only dots has them escaped, and the
 * empty key is "%". Returns 0, or -1 when it does not fit in outlen. */
int registry_zk_escape(const char *key, char *out, size_t outlen);

/* The reverse of registry_zk_escape; -1 for a name it cannot produce. */
int registry_zk_unescape(const char *name, char *out, size_t outlen);

#endif
