/*
 * zk: a ZooKeeper session on a libevent loop (see zk.h).
 *
 * Threads: the ZooKeeper client's completion thread runs watcher() and the
 * *_done() completions below. They copy what they were given into an item,
 * append it to z->queue under z->mu and write the eventfd; nothing else of
 * struct zk is touched there. The loop reads the eventfd (on_wake), takes
 * the whole queue and dispatches it. Everything else runs on the loop.
 *
 * Lifetimes: a request's completion context is its struct zk_req, freed on
 * the loop after its item is dispatched (or dropped). zookeeper_close()
 * runs every pending completion (ZCLOSING) before it returns, so once the
 * handle is closed no thread refers to z any more and the queue holds
 * everything that remains to free.
 *
 * Generations: each handle (session) gets a number; its watcher context
 * carries it, and events of a handle already replaced are ignored.
 */
#include "common/zk.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <zookeeper/zookeeper.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "common/mem.h"

enum req_kind { REQ_GET, REQ_CHILDREN, REQ_EXISTS, REQ_CREATE, REQ_DELETE };

/* One request; the completion's context. */
struct zk_req {
    struct zk *z;
    enum req_kind kind;
    zk_cb cb;
    void *arg;
    /* ZK_PARENTS: the final create's path, data and flags, and how many
     * '/'-separated prefixes have been created so far. */
    char *path;
    char *data;
    size_t len;
    unsigned flags;
    size_t parents_done;
    bool parent_step; /* this completion is a parent's create */
};

/* Something the client's thread hands to the loop. */
struct zk_item {
    struct zk_item *next;
    struct zk_req *req; /* NULL: a watcher call */
    /* watcher call */
    unsigned gen;
    int type, state;
    /* completion */
    int rc;
    char *path; /* watcher's path, or the created path */
    char *data;
    size_t len;
    int32_t version;
    int64_t owner;
    char **names;
    size_t count;
};

/* A handle's watcher context. */
struct zk_handle_ctx {
    struct zk *z;
    unsigned gen;
};

struct zk {
    struct event_base *base;
    char *hosts;
    char *credentials; /* NULL: none */
    int timeout_ms;
    zk_event_cb cb;
    void *arg;

    zhandle_t *zh;
    struct zk_handle_ctx *hctx;
    unsigned gen;
    bool connected;
    bool was_connected; /* a connection existed since the handle was made */
    int64_t session_id;
    int granted_ms;

    int wake_fd;
    struct event *wake_ev;
    struct event *expire_ev; /* no server for the session timeout */

    int dispatching; /* depth of callbacks running */
    bool freed;      /* zk_free was called inside a callback */

    pthread_mutex_t mu;
    pthread_cond_t idle_cv;              /* outstanding reached 0 */
    struct zk_item *queue, **queue_tail; /* under mu */
    size_t outstanding; /* under mu: requests issued, not yet answered */
};

const char *zk_event_name(enum zk_event ev)
{
    switch (ev) {
    case ZK_CONNECTED:
        return "connected";
    case ZK_DISCONNECTED:
        return "disconnected";
    case ZK_EXPIRED:
        return "expired";
    case ZK_AUTH_FAILED:
        return "auth failed";
    case ZK_NODE_CREATED:
        return "created";
    case ZK_NODE_DELETED:
        return "deleted";
    case ZK_NODE_CHANGED:
        return "changed";
    case ZK_NODE_CHILD:
        return "child";
    }
    return "?";
}

/* ---- the client's thread ------------------------------------------------- */

static void push(struct zk *z, struct zk_item *it)
{
    pthread_mutex_lock(&z->mu);
    *z->queue_tail = it;
    z->queue_tail = &it->next;
    if (it->req != NULL && z->outstanding > 0 && --z->outstanding == 0)
        pthread_cond_broadcast(&z->idle_cv);
    pthread_mutex_unlock(&z->mu);
    uint64_t one = 1;
    ssize_t w = write(z->wake_fd, &one, sizeof(one));
    (void)w; /* EAGAIN: the counter is already non-zero */
}

static void watcher(zhandle_t *zh, int type, int state, const char *path,
                    void *ctx)
{
    (void)zh;
    struct zk_handle_ctx *h = ctx;
    if (h == NULL)
        return;
    struct zk_item *it = xcalloc(1, sizeof(*it));
    it->gen = h->gen;
    it->type = type;
    it->state = state;
    it->path = (path != NULL && path[0] != '\0') ? xstrdup(path) : NULL;
    push(h->z, it);
}

static struct zk_item *result_item(const void *ctx, int rc)
{
    struct zk_req *r = (struct zk_req *)ctx;
    struct zk_item *it = xcalloc(1, sizeof(*it));
    it->req = r;
    it->rc = rc;
    return it;
}

static void data_done(int rc, const char *value, int value_len,
                      const struct Stat *stat, const void *ctx)
{
    struct zk_item *it = result_item(ctx, rc);
    if (rc == ZOK && value != NULL && value_len > 0) {
        it->data = xmalloc((size_t)value_len + 1);
        memcpy(it->data, value, (size_t)value_len);
        it->data[value_len] = '\0';
        it->len = (size_t)value_len;
    }
    if (rc == ZOK && stat != NULL) {
        it->version = stat->version;
        it->owner = stat->ephemeralOwner;
    }
    push(it->req->z, it);
}

static void stat_done(int rc, const struct Stat *stat, const void *ctx)
{
    struct zk_item *it = result_item(ctx, rc);
    if (rc == ZOK && stat != NULL) {
        it->version = stat->version;
        it->owner = stat->ephemeralOwner;
    }
    push(it->req->z, it);
}

static void strings_done(int rc, const struct String_vector *sv,
                         const void *ctx)
{
    struct zk_item *it = result_item(ctx, rc);
    if (rc == ZOK && sv != NULL && sv->count > 0) {
        it->count = (size_t)sv->count;
        it->names = xcalloc(it->count, sizeof(char *));
        for (size_t i = 0; i < it->count; i++)
            it->names[i] = xstrdup(sv->data[i]);
    }
    push(it->req->z, it);
}

static void string_done(int rc, const char *value, const void *ctx)
{
    struct zk_item *it = result_item(ctx, rc);
    if (rc == ZOK && value != NULL)
        it->path = xstrdup(value);
    push(it->req->z, it);
}

static void void_done(int rc, const void *ctx)
{
    push(((const struct zk_req *)ctx)->z, result_item(ctx, rc));
}

static void auth_done(int rc, const void *ctx)
{
    /* Reported through the watcher's AUTH_FAILED state as well; log
     * only. */
    (void)ctx;
    if (rc != ZOK)
        log_warn("zookeeper: digest authentication: %s", zerror(rc));
}

/* ---- the loop ------------------------------------------------------------ */

static void item_free(struct zk_item *it)
{
    free(it->path);
    free(it->data);
    for (size_t i = 0; i < it->count; i++)
        free(it->names[i]);
    free(it->names);
    free(it);
}

static void req_free(struct zk_req *r)
{
    if (r == NULL)
        return;
    free(r->path);
    free(r->data);
    free(r);
}

static void log_quiet_once(void)
{
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
}

static int open_handle(struct zk *z, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, log_quiet_once);
    struct zk_handle_ctx *h = xcalloc(1, sizeof(*h));
    h->z = z;
    h->gen = ++z->gen;
    zhandle_t *zh =
        zookeeper_init(z->hosts, watcher, z->timeout_ms, NULL, h, 0);
    if (zh == NULL) {
        errbuf_set(err, errlen, "zookeeper_init(%s): %s", z->hosts,
                   strerror(errno));
        free(h);
        return -1;
    }
    if (z->credentials != NULL)
        zoo_add_auth(zh, "digest", z->credentials, (int)strlen(z->credentials),
                     auth_done, NULL);
    z->zh = zh;
    z->hctx = h;
    z->connected = false;
    z->was_connected = false;
    event_del(z->expire_ev);
    /* A handle that never reaches a server expires like a lost one. */
    struct timeval tv = {z->timeout_ms / 1000, (z->timeout_ms % 1000) * 1000};
    event_add(z->expire_ev, &tv);
    return 0;
}

/* Close the current handle; its pending completions are queued (ZCLOSING)
 * by the time this returns.
 *
 * Why the wait: zookeeper_close() called while the client's completion
 * thread is busy takes another path, which stops that thread before it
 * has run the completions it was handed, leaking them (and our requests).
 * So the requests in flight are let finish first, for at most
 * CLOSE_WAIT_MS (a connected server answers in milliseconds; a lost
 * connection fails them as soon as the client notices). */
#define CLOSE_WAIT_MS 2000

static void close_handle(struct zk *z)
{
    if (z->zh == NULL)
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += CLOSE_WAIT_MS / 1000;
    pthread_mutex_lock(&z->mu);
    while (z->outstanding > 0 &&
           pthread_cond_timedwait(&z->idle_cv, &z->mu, &until) == 0)
        ;
    pthread_mutex_unlock(&z->mu);
    zookeeper_close(z->zh);
    z->zh = NULL;
    free(z->hctx);
    z->hctx = NULL;
    z->connected = false;
}

static void emit(struct zk *z, enum zk_event ev, const char *path)
{
    z->dispatching++;
    z->cb(z, ev, path, z->arg);
    z->dispatching--;
}

static void expire(struct zk *z, const char *why)
{
    log_warn("zookeeper: session 0x%llx expired (%s); starting a new one",
             (unsigned long long)z->session_id, why);
    close_handle(z);
    z->session_id = 0;
    char err[256];
    if (open_handle(z, err, sizeof(err)) != 0)
        log_error("zookeeper: %s", err); /* expire_ev not armed: retried
                                          * below */
    emit(z, ZK_EXPIRED, NULL);
    if (!z->freed && z->zh == NULL) {
        struct timeval tv = {1, 0};
        event_add(z->expire_ev, &tv);
    }
}

static void on_expire_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct zk *z = arg;
    expire(z, z->zh == NULL ? "no handle"
                            : "no server reachable for the session timeout");
    if (z->freed && z->dispatching == 0)
        zk_free(z);
}

static void session_event(struct zk *z, int state)
{
    if (state == ZOO_CONNECTED_STATE) {
        event_del(z->expire_ev);
        const clientid_t *id = zoo_client_id(z->zh);
        z->session_id = id != NULL ? id->client_id : 0;
        z->granted_ms = zoo_recv_timeout(z->zh);
        if (!z->connected) {
            z->connected = true;
            z->was_connected = true;
            log_info("zookeeper: connected, session 0x%llx (timeout %d ms)",
                     (unsigned long long)z->session_id, z->granted_ms);
            emit(z, ZK_CONNECTED, NULL);
        }
    } else if (state == ZOO_CONNECTING_STATE ||
               state == ZOO_ASSOCIATING_STATE) {
        if (z->connected) {
            z->connected = false;
            log_warn("zookeeper: connection lost; reconnecting");
            struct timeval tv = {z->timeout_ms / 1000,
                                 (z->timeout_ms % 1000) * 1000};
            event_add(z->expire_ev, &tv);
            emit(z, ZK_DISCONNECTED, NULL);
        }
    } else if (state == ZOO_EXPIRED_SESSION_STATE) {
        expire(z, "the server says so");
    } else if (state == ZOO_AUTH_FAILED_STATE) {
        log_error("zookeeper: authentication failed");
        emit(z, ZK_AUTH_FAILED, NULL);
    }
}

static int issue_create_step(struct zk *z, struct zk_req *r);

static void dispatch_result(struct zk *z, struct zk_item *it)
{
    struct zk_req *r = it->req;
    if (r->parent_step) {
        r->parent_step = false;
        if (it->rc == ZOK || it->rc == ZNODEEXISTS) {
            int rc = issue_create_step(z, r);
            if (rc == ZOK)
                return; /* r lives on */
            it->rc = rc;
        }
    }
    struct zk_result res = {
        .data = it->data,
        .len = it->len,
        .version = it->version,
        .owner = it->owner,
        .names = it->names,
        .count = it->count,
        .path = it->path,
    };
    if (!z->freed) {
        z->dispatching++;
        r->cb(it->rc, &res, r->arg);
        z->dispatching--;
    }
    req_free(r);
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct zk *z = arg;
    uint64_t n;
    ssize_t rd = read(fd, &n, sizeof(n));
    (void)rd;
    pthread_mutex_lock(&z->mu);
    struct zk_item *list = z->queue;
    z->queue = NULL;
    z->queue_tail = &z->queue;
    pthread_mutex_unlock(&z->mu);

    z->dispatching++;
    while (list != NULL) {
        struct zk_item *it = list;
        list = it->next;
        if (z->freed) {
            req_free(it->req);
        } else if (it->req != NULL) {
            dispatch_result(z, it);
        } else if (it->gen == z->gen && z->zh != NULL) {
            if (it->type == ZOO_SESSION_EVENT) {
                session_event(z, it->state);
            } else {
                enum zk_event ev = ZK_NODE_CHANGED;
                if (it->type == ZOO_CREATED_EVENT)
                    ev = ZK_NODE_CREATED;
                else if (it->type == ZOO_DELETED_EVENT)
                    ev = ZK_NODE_DELETED;
                else if (it->type == ZOO_CHILD_EVENT)
                    ev = ZK_NODE_CHILD;
                if (it->path != NULL)
                    emit(z, ev, it->path);
            }
        }
        item_free(it);
    }
    z->dispatching--;
    if (z->freed && z->dispatching == 0)
        zk_free(z);
}

struct zk *zk_new(struct event_base *base, const char *hosts,
                  const char *credentials, int session_timeout_ms,
                  zk_event_cb cb, void *arg, char *err, size_t errlen)
{
    if (hosts == NULL || hosts[0] == '\0' || session_timeout_ms <= 0) {
        errbuf_set(err, errlen, "zookeeper: no hosts or no session timeout");
        return NULL;
    }
    struct zk *z = xcalloc(1, sizeof(*z));
    z->base = base;
    z->hosts = xstrdup(hosts);
    z->credentials = (credentials != NULL && credentials[0] != '\0')
                         ? xstrdup(credentials)
                         : NULL;
    z->timeout_ms = session_timeout_ms;
    z->granted_ms = session_timeout_ms;
    z->cb = cb;
    z->arg = arg;
    z->queue_tail = &z->queue;
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->idle_cv, NULL);
    z->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (z->wake_fd < 0) {
        errbuf_set(err, errlen, "zookeeper: eventfd: %s", strerror(errno));
        goto fail;
    }
    z->wake_ev = event_new(base, z->wake_fd, EV_READ | EV_PERSIST, on_wake, z);
    z->expire_ev = evtimer_new(base, on_expire_timer, z);
    if (z->wake_ev == NULL || z->expire_ev == NULL ||
        event_add(z->wake_ev, NULL) != 0) {
        errbuf_set(err, errlen, "zookeeper: cannot create loop events");
        goto fail;
    }
    if (open_handle(z, err, errlen) != 0)
        goto fail;
    return z;
fail:
    z->freed = false;
    z->dispatching = 0;
    zk_free(z);
    return NULL;
}

bool zk_connected(const struct zk *z)
{
    return z->connected;
}

int64_t zk_session_id(const struct zk *z)
{
    return z->session_id;
}

int zk_session_timeout_ms(const struct zk *z)
{
    return z->granted_ms;
}

static struct zk_req *req_new(struct zk *z, enum req_kind kind, zk_cb cb,
                              void *arg)
{
    struct zk_req *r = xcalloc(1, sizeof(*r));
    r->z = z;
    r->kind = kind;
    r->cb = cb;
    r->arg = arg;
    return r;
}

/* One more ZooKeeper request in flight when rc is ZOK (zk_free waits
 * for them, see there). */
static int counted(struct zk *z, int rc)
{
    if (rc == ZOK) {
        pthread_mutex_lock(&z->mu);
        z->outstanding++;
        pthread_mutex_unlock(&z->mu);
    }
    return rc;
}

static int issued(struct zk_req *r, int rc)
{
    if (rc != ZOK)
        req_free(r);
    return rc;
}

int zk_get(struct zk *z, const char *path, bool watch, zk_cb cb, void *arg)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    struct zk_req *r = req_new(z, REQ_GET, cb, arg);
    return issued(r, counted(z, zoo_aget(z->zh, path, watch, data_done, r)));
}

int zk_children(struct zk *z, const char *path, bool watch, zk_cb cb, void *arg)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    struct zk_req *r = req_new(z, REQ_CHILDREN, cb, arg);
    return issued(
        r, counted(z, zoo_aget_children(z->zh, path, watch, strings_done, r)));
}

int zk_exists(struct zk *z, const char *path, bool watch, zk_cb cb, void *arg)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    struct zk_req *r = req_new(z, REQ_EXISTS, cb, arg);
    return issued(r, counted(z, zoo_aexists(z->zh, path, watch, stat_done, r)));
}

/* Mesos's ACL when authenticated: everyone reads, the creator does all. */
static struct ACL acl_read_creator_all[2];
static struct ACL_vector acl_auth_vec = {2, acl_read_creator_all};

static void acl_init_once(void)
{
    acl_read_creator_all[0].perms = ZOO_PERM_READ;
    acl_read_creator_all[0].id = ZOO_ANYONE_ID_UNSAFE;
    acl_read_creator_all[1].perms = ZOO_PERM_ALL;
    acl_read_creator_all[1].id = ZOO_AUTH_IDS;
}

static struct ACL_vector *acl_for(const struct zk *z)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (z->credentials == NULL)
        return &ZOO_OPEN_ACL_UNSAFE;
    pthread_once(&once, acl_init_once);
    return &acl_auth_vec;
}

/* Issue r's next create: the next missing parent prefix, or the node. */
static int issue_create_step(struct zk *z, struct zk_req *r)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    if (r->flags & ZK_PARENTS) {
        /* Prefixes "/a", "/a/b" ... of r->path, excluding the node. */
        size_t seen = 0;
        for (const char *p = r->path + 1; *p != '\0'; p++) {
            if (*p != '/')
                continue;
            if (seen++ < r->parents_done)
                continue;
            r->parents_done++;
            r->parent_step = true;
            char *prefix = xstrndup(r->path, (size_t)(p - r->path));
            int rc = counted(z, zoo_acreate(z->zh, prefix, NULL, -1, acl_for(z),
                                            0, string_done, r));
            free(prefix);
            if (rc != ZOK)
                r->parent_step = false;
            return rc;
        }
    }
    int flags = 0;
    if (r->flags & ZK_EPHEMERAL)
        flags |= ZOO_EPHEMERAL;
    if (r->flags & ZK_SEQUENCE)
        flags |= ZOO_SEQUENCE;
    return counted(z, zoo_acreate(z->zh, r->path, r->data,
                                  r->data != NULL ? (int)r->len : -1,
                                  acl_for(z), flags, string_done, r));
}

int zk_create(struct zk *z, const char *path, const void *data, size_t len,
              unsigned flags, zk_cb cb, void *arg)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    if (path == NULL || path[0] != '/' || len > (1u << 20))
        return ZBADARGUMENTS;
    struct zk_req *r = req_new(z, REQ_CREATE, cb, arg);
    r->path = xstrdup(path);
    if (data != NULL) {
        r->data = xmalloc(len + 1);
        memcpy(r->data, data, len);
        r->len = len;
    }
    r->flags = flags;
    return issued(r, issue_create_step(z, r));
}

int zk_delete(struct zk *z, const char *path, int32_t version, zk_cb cb,
              void *arg)
{
    if (z->zh == NULL)
        return ZINVALIDSTATE;
    struct zk_req *r = req_new(z, REQ_DELETE, cb, arg);
    return issued(r,
                  counted(z, zoo_adelete(z->zh, path, version, void_done, r)));
}

void zk_free(struct zk *z)
{
    if (z == NULL)
        return;
    if (z->dispatching > 0) {
        /* Inside one of our callbacks: finish when it returns. */
        z->freed = true;
        return;
    }
    close_handle(z);
    if (z->wake_ev != NULL)
        event_free(z->wake_ev);
    if (z->expire_ev != NULL)
        event_free(z->expire_ev);
    /* No thread refers to z now: drop what is queued. */
    struct zk_item *list = z->queue;
    while (list != NULL) {
        struct zk_item *it = list;
        list = it->next;
        req_free(it->req);
        item_free(it);
    }
    if (z->wake_fd >= 0)
        close(z->wake_fd);
    pthread_cond_destroy(&z->idle_cv);
    pthread_mutex_destroy(&z->mu);
    free(z->hosts);
    free(z->credentials);
    free(z);
}

int64_t zk_sequence_of(const char *name)
{
    size_t n = strlen(name);
    if (n < 11 || name[n - 11] != '_')
        return -1;
    int64_t v = 0;
    for (size_t i = n - 10; i < n; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}
