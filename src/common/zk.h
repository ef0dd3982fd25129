/*
 * zk: one ZooKeeper session owned by a libevent loop.
 *
 * The multi-threaded ZooKeeper C client runs its watchers and completions
 * on a thread of its own. This module hands every one of them to the loop
 * (a locked queue and an eventfd the loop watches), so its owner sees
 * session changes, watch events and request results only on the loop's
 * thread and needs no locks.
 *
 * Session: zk_new connects to the hosts with the session timeout asked
 * for; ZK_CONNECTED, ZK_DISCONNECTED (connection loss: the client keeps
 * trying the hosts, the session and its ephemeral nodes may still live)
 * and ZK_EXPIRED are reported. A session is taken as expired either when
 * a server says so or when no server has been reachable for the session
 * timeout (a client cut off from the ensemble never hears the server's
 * verdict; Mesos's group times out the same way). After ZK_EXPIRED the
 * module starts a new session by itself; its ZK_CONNECTED follows.
 *
 * Watches: a read with watch=true leaves a one-shot watch on the path;
 * when it fires the owner's on_event runs with ZK_NODE_* and the path.
 * Watches die with their session.
 *
 * Requests: zk_get, zk_children, zk_exists, zk_create, zk_delete are
 * asynchronous; their callback runs once on the loop with the ZooKeeper
 * result code (ZOK, ZNONODE, ZNODEEXISTS, ZCONNECTIONLOSS,
 * ZSESSIONEXPIRED, ZCLOSING ...; see <zookeeper/zookeeper.h>). zk_free may
 * be called with requests outstanding: their callbacks never run.
 *
 * Credentials ("user:password") are sent as a digest auth right after the
 * session is created; nodes then get Mesos's ACL (everyone may read, the
 * creator may do everything), without them the open ACL.
 */
#ifndef OFFERD_COMMON_ZK_H
#define OFFERD_COMMON_ZK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct zk;

enum zk_event {
    ZK_CONNECTED,    /* a session is (again) connected to a server */
    ZK_DISCONNECTED, /* connection lost; the client is reconnecting */
    ZK_EXPIRED,      /* the session is gone (with its ephemeral nodes and
                      * watches); a new one is being created */
    ZK_AUTH_FAILED,  /* the server refused the credentials */
    ZK_NODE_CREATED, /* a watch fired: path was created */
    ZK_NODE_DELETED, /* ... path was deleted */
    ZK_NODE_CHANGED, /* ... path's data changed */
    ZK_NODE_CHILD,   /* ... path's children changed */
};

/* Printable name of an event ("connected" ...). */
const char *zk_event_name(enum zk_event ev);

/* Session changes and watch events, on the loop; path is NULL for session
 * events, else borrowed for the call. The callback may call zk_free. */
typedef void (*zk_event_cb)(struct zk *z, enum zk_event ev, const char *path,
                            void *arg);

/* A request's result, borrowed for the callback. */
struct zk_result {
    const char *data; /* zk_get: the node's data (NUL added), or NULL */
    size_t len;       /* zk_get: data's length */
    int32_t version;  /* zk_get, zk_exists: the node's data version */
    int64_t owner;    /* zk_get, zk_exists: ephemeralOwner (0: none) */
    char **names;     /* zk_children: child names */
    size_t count;     /* zk_children: how many */
    const char *path; /* zk_create: the path created (with sequence) */
};

/* rc is ZOK or a ZooKeeper error code; res is never NULL. Runs on the
 * loop; it may issue more requests or call zk_free. */
typedef void (*zk_cb)(int rc, const struct zk_result *res, void *arg);

/* Create flags. */
#define ZK_EPHEMERAL 1u
#define ZK_SEQUENCE  2u
#define ZK_PARENTS   4u /* create missing parents first (persistent, empty) */

/* A session to hosts ("h1:p1,h2:p2", copied) with session_timeout_ms
 * (> 0) and optional digest credentials ("user:password", copied; NULL or
 * empty: none), reporting to cb on base (borrowed). Connecting starts at
 * once. Returns NULL with the reason in err. */
struct zk *zk_new(struct event_base *base, const char *hosts,
                  const char *credentials, int session_timeout_ms,
                  zk_event_cb cb, void *arg, char *err, size_t errlen);

/* True while a session is connected. */
bool zk_connected(const struct zk *z);

/* The current session's id (0 before the first connection). */
int64_t zk_session_id(const struct zk *z);

/* The session timeout the server granted (or the one asked for). */
int zk_session_timeout_ms(const struct zk *z);

/* Requests. Each returns 0 when issued (cb will run, unless zk_free comes
 * first), or a ZooKeeper error code when it could not be (cb does not
 * run). Strings are copied. */
int zk_get(struct zk *z, const char *path, bool watch, zk_cb cb, void *arg);
int zk_children(struct zk *z, const char *path, bool watch, zk_cb cb,
                void *arg);
int zk_exists(struct zk *z, const char *path, bool watch, zk_cb cb, void *arg);
int zk_create(struct zk *z, const char *path, const void *data, size_t len,
              unsigned flags, zk_cb cb, void *arg);
/* version -1: any. */
int zk_delete(struct zk *z, const char *path, int32_t version, zk_cb cb,
              void *arg);

/* Close the session (its ephemeral nodes go at once), drop every
 * outstanding callback, free. NULL is ignored. Blocks until the client's
 * threads end (bounded by the client's own timeouts). */
void zk_free(struct zk *z);

/* The sequence number of a sequential node's name ("x_0000000042" -> 42),
 * or -1 when name does not end in '_' and ten digits. */
int64_t zk_sequence_of(const char *name);

#endif
