/*
 * master_detect: the leading master for every `--master` form (see
 * master_detect.h).
 *
 * zk:// follows Mesos's src/master/detector/zookeeper.cpp over
 * src/zookeeper/group.cpp: list the group's children with a watch, take
 * the "json.info_" child with the lowest sequence, read its data (a JSON
 * MasterInfo), report. One request is outstanding at a time (a listing,
 * then the leader's read); a children watch that fires meanwhile only
 * marks the listing stale, and the listing is done again once the read
 * returns. A group path that does not exist yet is watched with exists().
 */
#include "common/master_detect.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <zookeeper/zookeeper.h>

#include "common/errbuf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/zk.h"
#include "common/zk_url.h"

struct master_detect {
    struct event_base *base;
    master_detect_cb cb;
    void *arg;
    struct master_leader leader; /* reported last */

    /* Fixed host:port: reported once from this event. */
    struct event *fixed_ev;
    struct master_leader fixed;

    /* zk:// */
    struct zk *zk;
    char *path;        /* the group */
    bool busy;         /* a listing or a read is outstanding */
    bool stale;        /* the children changed while busy */
    char *leader_node; /* the child the leader was read from */
};

const char *master_leader_host(const struct master_leader *leader)
{
    return leader->ip[0] != '\0' ? leader->ip : leader->hostname;
}

/* ---- pure parts ---------------------------------------------------------- */

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    size_t i = 0;
    while (s[i] != '\0' && isspace((unsigned char)s[i]))
        i++;
    memmove(s, s + i, n - i + 1);
}

int master_detect_resolve_spec(const char *spec, char *out, size_t outlen,
                               char *err, size_t errlen)
{
    if (spec == NULL || spec[0] == '\0') {
        errbuf_set(err, errlen, "empty master address");
        return -1;
    }
    if (strncmp(spec, "file://", 7) != 0) {
        if (strlen(spec) >= outlen || strlen(spec) > MASTER_DETECT_MAX_SPEC) {
            errbuf_set(err, errlen, "master address too long");
            return -1;
        }
        memcpy(out, spec, strlen(spec) + 1);
        return 0;
    }
    const char *path = spec + 7;
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, MASTER_DETECT_MAX_SPEC, &data, &len);
    if (rc != 1) {
        errbuf_set(err, errlen, "%s: %s", path,
                   rc == 0 ? "no such file" : strerror(errno));
        return -1;
    }
    char *text = (char *)data;
    trim(text);
    size_t n = strlen(text);
    if (n == 0 || n >= outlen || strncmp(text, "file://", 7) == 0) {
        errbuf_set(err, errlen, "%s: %s", path,
                   n == 0                             ? "empty"
                   : strncmp(text, "file://", 7) == 0 ? "names another file"
                                                      : "too long");
        free(data);
        return -1;
    }
    memcpy(out, text, n + 1);
    free(data);
    return 0;
}

static bool valid_host(const char *h, size_t n)
{
    if (n == 0 || n >= sizeof(((struct master_leader *)0)->hostname))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if (!isalnum(c) && c != '.' && c != '-' && c != '_')
            return false;
    }
    return true;
}

int master_detect_parse_hostport(const char *text, struct master_leader *out,
                                 char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    const char *colon = strrchr(text, ':');
    if (colon == NULL) {
        errbuf_set(err, errlen, "'%s': expected host:port, zk:// or file://",
                   text);
        return -1;
    }
    size_t hn = (size_t)(colon - text);
    if (!valid_host(text, hn)) {
        errbuf_set(err, errlen, "'%s': bad host", text);
        return -1;
    }
    const char *p = colon + 1;
    unsigned long port = 0;
    if (*p == '\0')
        port = 0;
    for (; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p) || port > 65535) {
            port = 0;
            break;
        }
        port = port * 10 + (unsigned long)(*p - '0');
    }
    if (port == 0 || port > 65535) {
        errbuf_set(err, errlen, "'%s': bad port", text);
        return -1;
    }
    memcpy(out->hostname, text, hn);
    out->hostname[hn] = '\0';
    struct in_addr a;
    if (inet_pton(AF_INET, out->hostname, &a) == 1)
        memcpy(out->ip, out->hostname, hn + 1);
    out->port = (uint16_t)port;
    out->known = true;
    return 0;
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int master_detect_parse_info(const char *data, size_t len,
                             struct master_leader *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof(*out));
    json_error_t je;
    json_t *o = json_loadb(data, len, 0, &je);
    if (o == NULL || !json_is_object(o)) {
        errbuf_set(err, errlen, "MasterInfo: not a JSON object");
        json_decref(o);
        return -1;
    }
    const json_t *addr = json_object_get(o, "address");
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *hostname = json_string_value(json_object_get(o, "hostname"));
    if (hostname == NULL && json_is_object(addr))
        hostname = json_string_value(json_object_get(addr, "hostname"));
    const char *ip = json_is_object(addr)
                         ? json_string_value(json_object_get(addr, "ip"))
                         : NULL;
    json_int_t port = 0;
    if (json_is_object(addr) && json_is_integer(json_object_get(addr, "port")))
        port = json_integer_value(json_object_get(addr, "port"));
    else if (json_is_integer(json_object_get(o, "port")))
        port = json_integer_value(json_object_get(o, "port"));
    char ipbuf[INET_ADDRSTRLEN] = "";
    struct in_addr a;
    if (ip != NULL && inet_pton(AF_INET, ip, &a) == 1) {
        copy_str(ipbuf, sizeof(ipbuf), ip);
    } else if (json_is_integer(json_object_get(o, "ip"))) {
        /* Mesos's uint32 ip is the address in network byte order read as
         * a host integer (in_addr.s_addr). */
        json_int_t v = json_integer_value(json_object_get(o, "ip"));
        if (v > 0 && v <= 0xffffffffLL) {
            a.s_addr = (uint32_t)v;
            inet_ntop(AF_INET, &a, ipbuf, sizeof(ipbuf));
        }
    }
    if (port <= 0 || port > 65535 ||
        (ipbuf[0] == '\0' && (hostname == NULL || hostname[0] == '\0'))) {
        errbuf_set(err, errlen, "MasterInfo: no usable address");
        json_decref(o);
        return -1;
    }
    copy_str(out->id, sizeof(out->id), id != NULL ? id : "");
    copy_str(out->hostname, sizeof(out->hostname),
             hostname != NULL ? hostname : ipbuf);
    copy_str(out->ip, sizeof(out->ip), ipbuf);
    out->port = (uint16_t)port;
    out->known = true;
    json_decref(o);
    return 0;
}

int master_detect_lowest(const char *const *names, size_t n)
{
    static const char label[] = MASTER_DETECT_JSON_LABEL "_";
    int best = -1;
    int64_t best_seq = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(names[i], label, sizeof(label) - 1) != 0)
            continue;
        int64_t seq = zk_sequence_of(names[i]);
        if (seq < 0 || strlen(names[i]) != sizeof(label) - 1 + 10)
            continue;
        if (best < 0 || seq < best_seq) {
            best = (int)i;
            best_seq = seq;
        }
    }
    return best;
}

/* ---- reporting ----------------------------------------------------------- */

static bool same_leader(const struct master_leader *a,
                        const struct master_leader *b)
{
    return a->known == b->known && a->port == b->port &&
           strcmp(a->id, b->id) == 0 && strcmp(a->hostname, b->hostname) == 0 &&
           strcmp(a->ip, b->ip) == 0;
}

/* Report l when it differs from what was reported last. May free d (the
 * callback may): callers return right after. */
static void report(struct master_detect *d, const struct master_leader *l)
{
    if (same_leader(&d->leader, l))
        return;
    d->leader = *l;
    if (l->known)
        log_info("leading master: %s (%s:%u)", l->id[0] ? l->id : "-",
                 master_leader_host(l), (unsigned)l->port);
    else
        log_info("no leading master");
    struct master_leader copy = *l;
    d->cb(&copy, d->arg);
}

static void report_none(struct master_detect *d)
{
    struct master_leader none;
    memset(&none, 0, sizeof(none));
    free(d->leader_node);
    d->leader_node = NULL;
    report(d, &none);
}

static void on_fixed(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct master_detect *d = arg;
    report(d, &d->fixed);
}

/* ---- zk:// --------------------------------------------------------------- */

static void list_children(struct master_detect *d);

static void after_busy(struct master_detect *d)
{
    d->busy = false;
    if (d->stale) {
        d->stale = false;
        list_children(d);
    }
}

static void on_exists(int rc, const struct zk_result *res, void *arg)
{
    (void)res;
    struct master_detect *d = arg;
    d->busy = false;
    /* ZOK: created meanwhile; list. ZNONODE: the watch tells us. */
    if (rc == ZOK)
        list_children(d);
    else if (d->stale)
        after_busy(d);
}

static void on_leader_data(int rc, const struct zk_result *res, void *arg)
{
    struct master_detect *d = arg;
    if (d->stale || rc == ZNONODE) {
        /* Gone or replaced meanwhile: look again. */
        d->stale = true;
        after_busy(d);
        return;
    }
    if (rc != ZOK) {
        /* Connection loss: listed again on reconnection. */
        d->busy = false;
        return;
    }
    struct master_leader l;
    char err[128];
    if (master_detect_parse_info(res->data != NULL ? res->data : "", res->len,
                                 &l, err, sizeof(err)) != 0) {
        log_warn("%s/%s: %s; no leader", d->path,
                 d->leader_node ? d->leader_node : "?", err);
        memset(&l, 0, sizeof(l));
    }
    d->busy = false;
    report(d, &l); /* may free d */
}

static void on_children(int rc, const struct zk_result *res, void *arg)
{
    struct master_detect *d = arg;
    if (rc == ZNONODE) {
        /* No group yet: no leader; wait for the path to appear. */
        d->stale = false;
        d->busy = zk_exists(d->zk, d->path, true, on_exists, d) == ZOK;
        report_none(d);
        return;
    }
    if (rc != ZOK) {
        d->busy = false;
        return;
    }
    if (d->stale) {
        after_busy(d);
        return;
    }
    int i = master_detect_lowest((const char *const *)res->names, res->count);
    if (i < 0) {
        d->busy = false;
        report_none(d);
        return;
    }
    if (d->leader_node != NULL && d->leader.known &&
        strcmp(d->leader_node, res->names[i]) == 0) {
        d->busy = false; /* the same leader */
        return;
    }
    free(d->leader_node);
    d->leader_node = xstrdup(res->names[i]);
    char node[ZK_URL_MAX + 256];
    int irc = zk_url_join(d->path, res->names[i], node, sizeof(node)) == 0
                  ? zk_get(d->zk, node, false, on_leader_data, d)
                  : ZBADARGUMENTS;
    if (irc != ZOK)
        d->busy = false;
}

static void list_children(struct master_detect *d)
{
    if (d->busy) {
        d->stale = true;
        return;
    }
    d->stale = false;
    d->busy = zk_children(d->zk, d->path, true, on_children, d) == ZOK;
}

static void on_zk_event(struct zk *z, enum zk_event ev, const char *path,
                        void *arg)
{
    (void)z;
    struct master_detect *d = arg;
    switch (ev) {
    case ZK_CONNECTED:
        list_children(d);
        break;
    case ZK_EXPIRED:
        /* Requests of the old session come back failed; start afresh. */
        d->busy = false;
        d->stale = false;
        report_none(d);
        break;
    case ZK_NODE_CHILD:
    case ZK_NODE_CREATED:
    case ZK_NODE_DELETED:
        if (path != NULL && strcmp(path, d->path) == 0)
            list_children(d);
        break;
    default:
        break;
    }
}

/* ---- lifecycle ----------------------------------------------------------- */

struct master_detect *master_detect_new(struct event_base *base,
                                        const char *spec,
                                        int64_t session_timeout_ms,
                                        master_detect_cb cb, void *arg,
                                        char *err, size_t errlen)
{
    char text[MASTER_DETECT_MAX_SPEC + 1];
    if (master_detect_resolve_spec(spec, text, sizeof(text), err, errlen) != 0)
        return NULL;
    struct master_detect *d = xcalloc(1, sizeof(*d));
    d->base = base;
    d->cb = cb;
    d->arg = arg;
    if (strncmp(text, "zk://", 5) == 0) {
        struct zk_url u;
        if (zk_url_parse(text, &u, err, errlen) != 0) {
            free(d);
            return NULL;
        }
        d->path = xstrdup(u.path);
        if (session_timeout_ms <= 0)
            session_timeout_ms = 10000;
        if (session_timeout_ms > 3600000)
            session_timeout_ms = 3600000;
        d->zk = zk_new(base, u.hosts, (u.auth[0] != '\0' ? u.auth : NULL),
                       (int)session_timeout_ms, on_zk_event, d, err, errlen);
        if (d->zk == NULL) {
            master_detect_free(d);
            return NULL;
        }
        return d;
    }
    if (master_detect_parse_hostport(text, &d->fixed, err, errlen) != 0) {
        free(d);
        return NULL;
    }
    d->fixed_ev = evtimer_new(base, on_fixed, d);
    struct timeval now = {0, 0};
    evtimer_add(d->fixed_ev, &now);
    return d;
}

const struct master_leader *master_detect_leader(const struct master_detect *d)
{
    return &d->leader;
}

bool master_detect_is_zk(const struct master_detect *d)
{
    return d->zk != NULL;
}

void master_detect_free(struct master_detect *d)
{
    if (d == NULL)
        return;
    zk_free(d->zk);
    if (d->fixed_ev != NULL)
        event_free(d->fixed_ev);
    free(d->path);
    free(d->leader_node);
    free(d);
}
