/*
 * contender: this master's candidacy in the ZooKeeper group (see
 * contender.h). One ZooKeeper session of its own (common/zk.h); the
 * detector that tells standbys where the leader is has another, as in
 * Mesos.
 *
 * States: no node -> creating -> member (node known) -> elected. The group
 * is listed (with a watch) whenever it changes; the node itself is watched
 * with exists() so its deletion is seen even when the listing is late.
 */
#include "master/contender.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zookeeper/zookeeper.h>

#include "common/errbuf.h"
#include "common/log.h"
#include "common/master_detect.h"
#include "common/mem.h"
#include "common/zk.h"
#include "common/zk_url.h"

struct contender {
    contender_cb cb;
    void *arg;
    struct zk *zk;
    char *group; /* the group's path */
    char *info;  /* node data */
    char *node;  /* our child's name, or NULL */
    char *node_path;
    bool creating;
    bool listing;
    bool relist;
    bool elected;
    bool suspended;
};

const char *contender_event_name(enum contender_event ev)
{
    switch (ev) {
    case CONTENDER_ELECTED:
        return "elected";
    case CONTENDER_SUSPENDED:
        return "suspended";
    case CONTENDER_RESUMED:
        return "resumed";
    case CONTENDER_LOST:
        return "lost";
    }
    return "?";
}

static void forget_node(struct contender *c)
{
    free(c->node);
    free(c->node_path);
    c->node = NULL;
    c->node_path = NULL;
    c->elected = false;
}

static void list_group(struct contender *c);
static void create_node(struct contender *c);

/* Candidacy over. May free c: callers return right after. */
static void lost(struct contender *c, const char *why)
{
    bool had = c->node != NULL || c->elected;
    log_warn("contender: candidacy %s lost: %s", c->node ? c->node : "-", why);
    forget_node(c);
    c->listing = false;
    c->relist = false;
    if (had)
        c->cb(CONTENDER_LOST, c->arg);
}

static void on_group(int rc, const struct zk_result *res, void *arg)
{
    struct contender *c = arg;
    c->listing = false;
    if (rc != ZOK || c->node == NULL)
        return; /* connection loss: listed again on reconnection */
    if (c->relist) {
        c->relist = false;
        list_group(c);
        return;
    }
    bool present = false;
    for (size_t i = 0; i < res->count; i++)
        if (strcmp(res->names[i], c->node) == 0)
            present = true;
    if (!present) {
        lost(c, "its node is gone");
        if (zk_connected(c->zk))
            create_node(c);
        return;
    }
    int lo = master_detect_lowest((const char *const *)res->names, res->count);
    if (!c->elected && lo >= 0 && strcmp(res->names[lo], c->node) == 0) {
        c->elected = true;
        log_info("contender: elected (%s/%s)", c->group, c->node);
        c->cb(CONTENDER_ELECTED, c->arg);
    }
}

static void list_group(struct contender *c)
{
    if (c->listing) {
        c->relist = true;
        return;
    }
    c->listing = zk_children(c->zk, c->group, true, on_group, c) == ZOK;
}

static void on_node_exists(int rc, const struct zk_result *res, void *arg)
{
    (void)res;
    struct contender *c = arg;
    if (rc == ZNONODE && c->node != NULL) {
        lost(c, "its node is gone");
        if (zk_connected(c->zk))
            create_node(c);
    }
}

static void on_created(int rc, const struct zk_result *res, void *arg)
{
    struct contender *c = arg;
    c->creating = false;
    if (rc != ZOK || res->path == NULL) {
        log_warn("contender: creating %s/%s_: %s", c->group,
                 MASTER_DETECT_JSON_LABEL, zerror(rc));
        return; /* retried on the next connection */
    }
    const char *slash = strrchr(res->path, '/');
    forget_node(c);
    c->node_path = xstrdup(res->path);
    c->node = xstrdup(slash != NULL ? slash + 1 : res->path);
    log_info("contender: contending as %s", c->node_path);
    zk_exists(c->zk, c->node_path, true, on_node_exists, c);
    list_group(c);
}

static void create_node(struct contender *c)
{
    if (c->creating || c->node != NULL)
        return;
    char *path = xasprintf("%s/%s_", c->group, MASTER_DETECT_JSON_LABEL);
    c->creating = zk_create(c->zk, path, c->info, strlen(c->info),
                            ZK_EPHEMERAL | ZK_SEQUENCE | ZK_PARENTS, on_created,
                            c) == ZOK;
    free(path);
}

static void on_zk(struct zk *z, enum zk_event ev, const char *path, void *arg)
{
    (void)z;
    struct contender *c = arg;
    switch (ev) {
    case ZK_CONNECTED:
        if (c->node == NULL) {
            create_node(c);
        } else {
            list_group(c);
            if (c->suspended) {
                c->suspended = false;
                c->cb(CONTENDER_RESUMED, c->arg);
            }
        }
        break;
    case ZK_DISCONNECTED:
        if (!c->suspended) {
            c->suspended = true;
            c->cb(CONTENDER_SUSPENDED, c->arg);
        }
        break;
    case ZK_EXPIRED:
        c->suspended = false;
        c->creating = false;
        lost(c, "the ZooKeeper session expired");
        break;
    case ZK_NODE_CHILD:
        if (path != NULL && strcmp(path, c->group) == 0 && c->node != NULL)
            list_group(c);
        break;
    case ZK_NODE_DELETED:
        if (path != NULL && c->node_path != NULL &&
            strcmp(path, c->node_path) == 0) {
            lost(c, "its node was deleted");
            if (zk_connected(c->zk))
                create_node(c);
            return;
        }
        break;
    default:
        break;
    }
}

struct contender *contender_new(struct event_base *base, const char *zk_url,
                                int session_timeout_ms, const char *info_json,
                                contender_cb cb, void *arg, char *err,
                                size_t errlen)
{
    struct zk_url u;
    if (zk_url_parse(zk_url, &u, err, errlen) != 0)
        return NULL;
    struct contender *c = xcalloc(1, sizeof(*c));
    c->cb = cb;
    c->arg = arg;
    c->group = xstrdup(u.path);
    c->info = xstrdup(info_json);
    c->zk = zk_new(base, u.hosts, (u.auth[0] != '\0' ? u.auth : NULL),
                   session_timeout_ms, on_zk, c, err, errlen);
    if (c->zk == NULL) {
        contender_free(c);
        return NULL;
    }
    return c;
}

bool contender_elected(const struct contender *c)
{
    return c->elected;
}

const char *contender_node(const struct contender *c)
{
    return c->node;
}

void contender_free(struct contender *c)
{
    if (c == NULL)
        return;
    zk_free(c->zk);
    forget_node(c);
    free(c->group);
    free(c->info);
    free(c);
}
