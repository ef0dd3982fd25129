/*
 * ha: a master under ZooKeeper leader election; see ha.h.
 *
 * Order of things when elected: the election arrives in a ZooKeeper
 * callback; the switch to leading runs from a zero timer after it, so that
 * the standby server is freed outside any of its callbacks and the
 * registry's recovery does not run inside the ZooKeeper dispatch.
 */
#include "master/ha.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "common/clock.h"
#include "common/flags.h"
#include "common/http.h"
#include "common/ids.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/master_detect.h"
#include "common/mem.h"
#include "master/authz.h"
#include "master/contender.h"
#include "master/flags_master.h"
#include "master/master.h"
#include "master/master_types.h"
#include "master/send.h"
#include "master/system_endpoints.h"

/* ---- the standby server -------------------------------------------------- */

struct ha_standby {
    struct http_server *http;
    const struct master_flags *flags;
    char id[ID_UUID_SIZE];
    char *ip;
    uint16_t port;
    double start_time;
    struct master_leader leader;
};

static const char *const local_paths[] = {
    "/health",
    "/master/health",
    "/version",
    "/flags",
    "/master/flags",
    "/metrics/snapshot",
    "/master/metrics/snapshot",
    "/redirect",
    "/master/redirect",
};

bool ha_path_is_local(const char *path)
{
    for (size_t i = 0; i < sizeof(local_paths) / sizeof(local_paths[0]); i++)
        if (strcmp(path, local_paths[i]) == 0)
            return true;
    return false;
}

/* MasterInfo JSON of the given parts, with Mesos's "pid". */
static json_t *info_json(const char *id, const char *ip, uint16_t port,
                         const char *hostname)
{
    Mesos__V1__MasterInfo mi;
    Mesos__V1__Address addr;
    master_fill_info_of(id, ip, port, hostname, &mi, &addr);
    json_t *j = jpb_to_json(&mi.base);
    char pid[320];
    snprintf(pid, sizeof(pid), "master@%s:%u", ip, (unsigned)port);
    json_object_set_new(j, "pid", json_string(pid));
    return j;
}

/* Mesos's redirect: protocol-relative, to the leader's hostname (its ip
 * when it has none); /redirect itself goes to the leader's base URL. No
 * leader: 503. */
static void redirect(struct ha_standby *s, struct http_request *req,
                     bool base_only)
{
    if (!s->leader.known) {
        http_reply_error(req, 503, "No leader elected");
        return;
    }
    const char *host = s->leader.hostname[0] != '\0'
                           ? s->leader.hostname
                           : master_leader_host(&s->leader);
    const char *path = http_request_path(req);
    char loc[1024];
    int n = snprintf(loc, sizeof(loc), "//%s:%u%s", host,
                     (unsigned)s->leader.port, base_only ? "" : path);
    if (n < 0 || (size_t)n >= sizeof(loc)) {
        http_reply_error(req, 414, "path too long to redirect");
        return;
    }
    log_debug("%s redirected to the leading master %s:%u", path, host,
              (unsigned)s->leader.port);
    http_reply_header(req, "Location", loc);
    http_reply(req, 307, NULL, NULL, 0);
}

static void handle_redirect(struct http_request *req, void *arg)
{
    redirect(arg, req, true);
}

static void handle_other(struct http_request *req, void *arg)
{
    redirect(arg, req, false);
}

static void handle_snapshot(struct http_request *req, void *arg)
{
    struct ha_standby *s = arg;
    json_t *o = json_object();
    json_object_set_new(o, "master/elected", json_integer(0));
    json_object_set_new(o, "master/uptime_secs",
                        json_real(clock_wall_secs() - s->start_time));
    http_reply_json_jsonp(req, 200, o);
    json_decref(o);
}

/* Mesos's /state on a master that is not leading: its own facts, the
 * leader's, and no cluster state. */
static void handle_state(struct http_request *req, void *arg)
{
    struct ha_standby *s = arg;
    json_t *o = master_version_json();
    char pid[320];
    snprintf(pid, sizeof(pid), "master@%s:%u", s->ip, (unsigned)s->port);
    json_object_set_new(o, "id", json_string(s->id));
    json_object_set_new(o, "pid", json_string(pid));
    json_object_set_new(o, "hostname", json_string(s->flags->hostname));
    json_object_set_new(o, "start_time", json_real(s->start_time));
    if (s->flags->cluster != NULL)
        json_object_set_new(o, "cluster", json_string(s->flags->cluster));
    if (s->leader.known) {
        const char *lip = master_leader_host(&s->leader);
        char lpid[320];
        snprintf(lpid, sizeof(lpid), "master@%s:%u", lip,
                 (unsigned)s->leader.port);
        json_object_set_new(o, "leader", json_string(lpid));
        json_object_set_new(
            o, "leader_info",
            info_json(s->leader.id, lip, s->leader.port,
                      s->leader.hostname[0] ? s->leader.hostname : lip));
    }
    json_object_set_new(o, "flags",
                        flags_to_json(master_flags_object(s->flags)));
    const char *zero[] = {"activated_slaves", "deactivated_slaves",
                          "unreachable_slaves"};
    for (size_t i = 0; i < 3; i++)
        json_object_set_new(o, zero[i], json_integer(0));
    const char *empty[] = {"slaves", "frameworks", "completed_frameworks",
                           "orphan_tasks", "unregistered_frameworks"};
    for (size_t i = 0; i < 5; i++)
        json_object_set_new(o, empty[i], json_array());
    http_reply_json_jsonp(req, 200, o);
    json_decref(o);
}

struct ha_standby *ha_standby_new(struct event_base *base,
                                  const struct master_flags *flags,
                                  const char *id, const char *ip, uint16_t port)
{
    struct ha_standby *s = xcalloc(1, sizeof(*s));
    s->flags = flags;
    snprintf(s->id, sizeof(s->id), "%s", id);
    s->ip = xstrdup(ip);
    s->port = port;
    s->start_time = clock_wall_secs();
    struct http_server_options ho = {0};
    ho.max_conns = (size_t)flags->max_connections;
    ho.idle_timeout_ns = flags->http_idle_timeout;
    ho.max_buffered = (size_t)flags->max_buffered_request_bytes;
    s->http = http_server_new(base, &ho);
    const char *states[] = {"/state", "/master/state", "/state.json",
                            "/master/state.json"};
    /* Every route is new on a new server: registration cannot fail. */
    master_system_endpoints_register(s->http, master_flags_object(flags));
    for (size_t i = 0; i < 4; i++)
        http_server_route(s->http, states[i], HTTP_GET, handle_state, s);
    http_server_route(s->http, "/metrics/snapshot", HTTP_GET, handle_snapshot,
                      s);
    http_server_route(s->http, "/master/metrics/snapshot", HTTP_GET,
                      handle_snapshot, s);
    http_server_route(s->http, "/redirect", HTTP_GET, handle_redirect, s);
    http_server_route(s->http, "/master/redirect", HTTP_GET, handle_redirect,
                      s);
    http_server_route_prefix(s->http, "/",
                             HTTP_GET | HTTP_POST | HTTP_PUT | HTTP_DELETE |
                                 HTTP_PATCH | HTTP_OPTIONS,
                             handle_other, s);
    return s;
}

struct http_server *ha_standby_server(struct ha_standby *s)
{
    return s->http;
}

void ha_standby_set_leader(struct ha_standby *s,
                           const struct master_leader *leader)
{
    if (leader == NULL || !leader->known)
        memset(&s->leader, 0, sizeof(s->leader));
    else
        s->leader = *leader;
}

void ha_standby_free(struct ha_standby *s)
{
    if (s == NULL)
        return;
    http_server_free(s->http);
    free(s->ip);
    free(s);
}

/* ---- the election -------------------------------------------------------- */

struct ha {
    struct event_base *base;
    struct master_flags flags; /* the caller's, with the bound port */
    struct master_options opts;
    char id[ID_UUID_SIZE];
    char *ip; /* advertised */
    char zk_url[MASTER_DETECT_MAX_SPEC + 1];
    struct ha_standby *standby; /* NULL once leading */
    struct master *m;           /* NULL while standing by */
    struct master_detect *detect;
    struct contender *contender;
    struct event *elect_ev;
    bool suspended; /* leading, ZooKeeper connection lost */
    int exit_code;
};

static void step_down(struct ha *h, const char *why)
{
    log_error("lost leadership (%s): exiting so that a new leader is "
              "elected (restart this master to stand by again)",
              why);
    h->exit_code = 1;
    event_base_loopbreak(h->base);
}

static bool leader_gate(struct http_request *req, void *arg)
{
    struct ha *h = arg;
    if (h->suspended && !ha_path_is_local(http_request_path(req))) {
        http_reply_error(req, 503,
                         "Lost the connection to ZooKeeper: not serving as "
                         "the leading master until it is back");
        return false;
    }
    return master_authz_gate(req, h->m);
}

static void on_elect(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct ha *h = arg;
    if (h->m != NULL || h->exit_code != 0 || !contender_elected(h->contender))
        return;
    log_info("elected the leading master; recovering the registry");
    ha_standby_free(h->standby);
    h->standby = NULL;
    char err[4608];
    h->opts.id = h->id;
    h->m = master_new_with(h->base, &h->flags, &h->opts, err, sizeof(err));
    if (h->m == NULL) {
        log_error("cannot start leading: %s", err);
        step_down(h, "the master could not start");
        return;
    }
    http_server_set_gate(h->m->http, leader_gate, h);
    log_info("leading master %s serving on %s:%u", h->id, h->ip,
             (unsigned)h->flags.port);
}

static void on_contender(enum contender_event ev, void *arg)
{
    struct ha *h = arg;
    log_info("candidacy: %s", contender_event_name(ev));
    switch (ev) {
    case CONTENDER_ELECTED: {
        struct timeval zero = {0, 0};
        evtimer_add(h->elect_ev, &zero);
        break;
    }
    case CONTENDER_SUSPENDED:
        if (h->m != NULL) {
            h->suspended = true;
            log_warn("lost the connection to ZooKeeper while leading: "
                     "leader endpoints answer 503");
        }
        break;
    case CONTENDER_RESUMED:
        if (h->suspended)
            log_info("ZooKeeper connection back: serving again");
        h->suspended = false;
        break;
    case CONTENDER_LOST:
        if (h->m != NULL || evtimer_pending(h->elect_ev, NULL)) {
            h->suspended = true;
            evtimer_del(h->elect_ev);
            step_down(h, "the ZooKeeper session expired or the node is gone");
        }
        /* A standby contends again by itself. */
        break;
    }
}

static void on_leader(const struct master_leader *leader, void *arg)
{
    struct ha *h = arg;
    if (h->standby != NULL)
        ha_standby_set_leader(h->standby, leader);
}

struct ha *ha_new(struct event_base *base, const struct master_flags *flags,
                  const struct master_options *opts, char *err, size_t errlen)
{
    struct ha *h = xcalloc(1, sizeof(*h));
    h->base = base;
    h->flags = *flags;
    if (opts != NULL)
        h->opts = *opts;
    id_uuid_v4(h->id);
    h->ip =
        xstrdup(strcmp(flags->ip, "0.0.0.0") == 0 ? "127.0.0.1" : flags->ip);
    if (master_detect_resolve_spec(flags->zk, h->zk_url, sizeof(h->zk_url), err,
                                   errlen) != 0)
        goto fail;
    if (strncmp(h->zk_url, "zk://", 5) != 0) {
        snprintf(err, errlen, "--zk: not a zk:// URL");
        goto fail;
    }
    h->standby = ha_standby_new(base, flags, h->id, h->ip, flags->port);
    if (!h->opts.no_listen) {
        uint16_t bound = flags->port;
        if (http_server_bind(ha_standby_server(h->standby), flags->ip,
                             flags->port, &bound, err, errlen) != 0)
            goto fail;
        h->flags.port = bound;
        h->standby->port = bound;
    }
    h->elect_ev = evtimer_new(base, on_elect, h);
    int timeout_ms = (int)(flags->zk_session_timeout / 1000000);
    json_t *info = info_json(h->id, h->ip, h->flags.port, flags->hostname);
    char *text = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    h->contender = contender_new(base, h->zk_url, timeout_ms, text,
                                 on_contender, h, err, errlen);
    free(text);
    if (h->contender == NULL)
        goto fail;
    h->detect = master_detect_new(base, h->zk_url, timeout_ms, on_leader, h,
                                  err, errlen);
    if (h->detect == NULL)
        goto fail;
    log_info("master %s standing by on %s:%u, contending for leadership", h->id,
             h->ip, (unsigned)h->flags.port);
    return h;
fail:
    ha_free(h);
    return NULL;
}

uint16_t ha_port(const struct ha *h)
{
    return h->flags.port;
}

struct master *ha_master(const struct ha *h)
{
    return h->m;
}

int ha_exit_code(const struct ha *h)
{
    return h->exit_code;
}

void ha_free(struct ha *h)
{
    if (h == NULL)
        return;
    /* Withdraw first: the node goes and another master can take over
     * while this one shuts down. */
    contender_free(h->contender);
    master_detect_free(h->detect);
    if (h->elect_ev != NULL)
        event_free(h->elect_ev);
    ha_standby_free(h->standby);
    master_free(h->m);
    free(h->ip);
    free(h);
}
