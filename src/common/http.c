/*
 * HTTP server edge over evhttp (libevent 2.1). The contract is in http.h;
 * this file is where libevent's lifetimes are tamed:
 *
 *  - evhttp owns an incoming request until it is replied to. When a client
 *    disconnects while a request is pending (deferred, or a stream), evhttp
 *    detaches the request from its connection (evreq->evcon = NULL) and frees
 *    the connection, calling the connection's close callback; the detached
 *    request is then ours to free. When the connection is freed for any other
 *    reason (server shutdown, or we cut a slow stream) the request is still
 *    attached and evhttp frees it with the connection.
 *  - So every object bound to a connection (a pending request or a stream)
 *    holds a `struct link` registered as the connection's close-callback
 *    argument, and the callback tells from evhttp_request_get_connection
 *    which case it is. The close callback is cleared before every reply, so
 *    it never points at a freed object.
 *  - Everything a handler may read is copied out of evhttp when the request
 *    arrives, so accessors never touch evhttp memory.
 *  - Stream callbacks and frees happen in a "reap" event the server
 *    activates: marking is immediate, freeing waits until the loop is back
 *    at a safe point.
 *  - A request or stream may instead be fake (http_fake.h): it has no
 *    evhttp request or connection (its link stays empty), belongs to no
 *    server, and records what a real one would send in its struct
 *    http_fake. Each function that talks to evhttp checks `fake` first.
 *    Once its http_fake is freed, a fake object looks like one whose server
 *    was freed: closed, no server, no callbacks.
 */
#include "common/http.h"
#include "common/stream_drain.h"

#include "common/clock.h"
#include "common/http_conn.h"
#include "common/http_fake.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/prom.h"
#include "common/recordio.h"
#include "common/tls.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sys/queue.h>

#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

struct route {
    char *path;
    unsigned methods; /* enum http_method bits */
    http_handler_fn fn;
    void *arg;
    bool prefix;              /* matches every path that starts with `path` */
    struct prom_hist latency; /* arrival to reply (or stream start), s */
};

/* Binding of one of our objects to an evhttp request and its connection. */
struct link {
    struct evhttp_request *evreq;    /* NULL once freed by evhttp or sent */
    struct evhttp_connection *evcon; /* NULL once the connection is gone */
    bool evreq_ours;                 /* evreq was detached: we free it */
    bool closed;                     /* peer gone, cut off or shut down */
    void (*on_lost)(struct link *);  /* run when the connection goes */
    struct http_conn *conn; /* the tracked connection watched for us, or
                               NULL (untracked: the close callback is ours) */
};

struct http_server {
    struct event_base *base;
    struct evhttp *http;
    struct http_server_options opts;
    struct route *routes;
    size_t nroutes, routes_cap;
    http_gate_fn gate; /* http_server_set_gate */
    void *gate_arg;
    struct http_request *deferred; /* pending deferred requests */
    struct http_stream *streams;   /* streams not yet freed */
    struct http_stream *reap_head; /* streams with work for the reaper */
    struct event *reap_ev;
    struct prom_hist other_latency; /* requests that matched no route */
    struct http_conns *conns;       /* every connection (http_conn.h) */
    struct tls_server *tls;         /* LIBPROCESS_SSL_*; NULL: plain */
    bool tls_loaded;                /* the environment was read */
};

extern char **environ;

/* Read LIBPROCESS_SSL_* once per server, before its first port listens:
 * a bad configuration refuses the bind (and so the daemon's start). */
static int server_load_tls(struct http_server *s, char *err, size_t errlen)
{
    if (s->tls_loaded)
        return 0;
    struct tls_config tc;
    if (tls_config_from_env(environ, &tc, err, errlen) != 0)
        return -1;
    if (tc.enabled) {
        s->tls = tls_server_new(&tc, err, errlen);
        if (s->tls == NULL) {
            tls_config_clear(&tc);
            return -1;
        }
        http_conns_set_tls(s->conns, s->tls);
        log_info("TLS on every connection (%s%s)",
                 tc.require_client_cert ? "client certificates required"
                                        : "client certificates optional",
                 tc.support_downgrade ? ", plain HTTP accepted too" : "");
    }
    tls_config_clear(&tc);
    s->tls_loaded = true;
    return 0;
}

struct http_request {
    struct http_server *server; /* NULL once the server is freed */
    struct link link;
    enum http_method method;
    char *path;
    char *peer;
    struct evkeyvalq query;
    struct evkeyvalq headers;
    struct evkeyvalq reply_headers;
    uint8_t *body;
    size_t body_len;
    bool in_handler;                  /* its handler is running */
    bool done;                        /* replied to, or turned into a stream */
    bool bad_target;                  /* fake: the target did not parse */
    bool bad_query;                   /* the query string did not parse */
    struct http_fake *fake;           /* fake request: its exchange, or NULL
                                         (real, or the fake was freed) */
    struct http_request *prev, *next; /* server->deferred */
    int64_t start_ns; /* monotonic arrival; 0 for a fake request */
    size_t route;     /* 1 + index of its route in server->routes, 0: none */
};

struct http_stream {
    struct http_server *server; /* NULL once the server is freed */
    struct link link;
    char *peer;
    size_t max_pending;
    http_stream_close_fn cb;
    void *arg;
    struct evbuffer *chunk;        /* scratch for one chunk */
    enum http_close_reason reason; /* why it closed by itself */
    bool cut_pending;              /* reaper must free the connection */
    bool notify_pending;           /* reaper must run the callback */
    bool released;                 /* owner called http_stream_close */
    bool in_reap;                  /* on server->reap_head */
    bool in_callback;              /* its close callback is running */
    bool body;                     /* a plain chunked body (http_body_start) */
    struct http_fake *fake;        /* fake stream: its exchange, or NULL */
    struct http_stream *prev, *next; /* server->streams */
    struct http_stream *reap_next;
    /* With has_drain, the cap is drain_policy's (http_stream_set_drain)
     * instead of max_pending alone. */
    bool has_drain;
    struct stream_drain drain;
    struct stream_drain_policy drain_policy;
};

/* One stored piece of bytes, NUL-terminated past len. */
struct fake_bytes {
    uint8_t *data;
    size_t len;
};

/* A fake exchange (http_fake.h): the request to build, then what was
 * answered. req and stream point back at the live objects, which point at
 * the exchange through their `fake` field; each side clears its pointer
 * when it goes. */
struct http_fake {
    struct event_base *base; /* borrowed, may be NULL */
    struct event *ev;        /* runs pending work on base; NULL without */
    /* The request. */
    enum http_method method;
    char *target; /* path with optional query */
    char *peer;
    struct evkeyvalq headers;
    uint8_t *body;
    size_t body_len;
    bool built;                 /* the request was made (once only) */
    struct http_request *req;   /* the live request, until it is freed */
    struct http_stream *stream; /* the live stream, until it is freed */
    /* The peer. */
    bool disconnected; /* http_fake_disconnect was called */
    bool stalled;      /* the peer does not read: bytes stay pending */
    size_t pending;    /* bytes sent and not read while stalled */
    /* The reply. */
    bool replied;
    bool is_stream;
    bool ended; /* the owner closed the open stream gracefully */
    int status;
    struct evkeyvalq reply_headers; /* with Content-Type */
    struct fake_bytes reply_body;
    /* The stream's output. */
    struct fake_bytes *chunks;
    size_t nchunks, chunks_cap;
    struct fake_bytes *records;
    size_t nrecords, records_cap;
    /* Chunks and records dropped by http_fake_forget: chunk i is
     * chunks[i - chunks_gone] (records likewise). */
    size_t chunks_gone, records_gone;
    struct rio_decoder *rio;
    bool rio_bad; /* not RecordIO; records stop there */
    int close_count;
    enum http_close_reason close_reason;
};

static void fake_record_reply(struct http_request *req, int status,
                              const char *content_type, const void *body,
                              size_t len);
static void fake_record_stream(struct http_request *req, struct http_stream *st,
                               const char *content_type);
static int fake_send(struct http_stream *st, const uint8_t *head, size_t hlen,
                     const void *data, size_t len);
static void fake_schedule(struct http_fake *x);

/* ---- Small helpers ---- */

static const struct {
    enum http_method m;
    enum evhttp_cmd_type ev;
    const char *name;
} methods[] = {
    {HTTP_GET, EVHTTP_REQ_GET, "GET"},
    {HTTP_POST, EVHTTP_REQ_POST, "POST"},
    {HTTP_PUT, EVHTTP_REQ_PUT, "PUT"},
    {HTTP_DELETE, EVHTTP_REQ_DELETE, "DELETE"},
    {HTTP_HEAD, EVHTTP_REQ_HEAD, "HEAD"},
    {HTTP_OPTIONS, EVHTTP_REQ_OPTIONS, "OPTIONS"},
    {HTTP_PATCH, EVHTTP_REQ_PATCH, "PATCH"},
    {HTTP_TRACE, EVHTTP_REQ_TRACE, "TRACE"},
    {HTTP_CONNECT, EVHTTP_REQ_CONNECT, "CONNECT"},
};
#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

const char *http_method_name(enum http_method m)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].m == m)
            return methods[i].name;
    return "?";
}

static enum http_method method_from_ev(enum evhttp_cmd_type t)
{
    for (size_t i = 0; i < NMETHODS; i++)
        if (methods[i].ev == t)
            return methods[i].m;
    return 0;
}

static void clear_kv(struct evkeyvalq *q)
{
    evhttp_clear_headers(q);
}

/* Compare the media type at p (up to ';' or end, spaces trimmed) with want,
 * ignoring case. */
static bool media_is(const char *p, size_t n, const char *want)
{
    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return strlen(want) == n && strncasecmp(p, want, n) == 0;
}

int http_media_type_encoding(const char *media_type, enum http_encoding *out)
{
    if (media_type == NULL)
        return -1;
    size_t n = strcspn(media_type, ";");
    if (media_is(media_type, n, HTTP_CONTENT_JSON)) {
        *out = HTTP_ENC_JSON;
        return 0;
    }
    if (media_is(media_type, n, HTTP_CONTENT_PROTOBUF)) {
        *out = HTTP_ENC_PROTOBUF;
        return 0;
    }
    return -1;
}

/* ---- Links: who frees the evhttp request ---- */

static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
    struct link *l = arg;
    (void)evcon;
    if (l->evcon == NULL)
        return;
    l->closed = true;
    if (l->evreq != NULL && !l->evreq_ours) {
        if (evhttp_request_get_connection(l->evreq) == NULL)
            l->evreq_ours = true; /* detached: evhttp forgot it */
        else
            l->evreq = NULL; /* freed with the connection */
    }
    l->evcon = NULL;
    l->conn = NULL; /* its watcher is gone with it */
    if (l->on_lost != NULL)
        l->on_lost(l);
}

/* Watch l's connection: through its tracker when it has one. */
static void link_watch(struct link *l)
{
    if (l->conn != NULL)
        http_conn_watch(l->conn, on_conn_close, l);
    else if (l->evcon != NULL)
        evhttp_connection_set_closecb(l->evcon, on_conn_close, l);
}

static void link_bind(struct link *l, struct evhttp_request *evreq,
                      struct http_conn *conn)
{
    l->evreq = evreq;
    l->evcon = evhttp_request_get_connection(evreq);
    l->evreq_ours = false;
    l->closed = false;
    l->conn = l->evcon != NULL ? conn : NULL;
    if (l->evcon != NULL)
        link_watch(l);
    else
        l->closed = true;
}

/* Stop watching the connection (before a reply hands evreq to evhttp). */
static void link_unwatch(struct link *l)
{
    if (l->conn != NULL)
        http_conn_watch(l->conn, NULL, NULL);
    else if (l->evcon != NULL)
        evhttp_connection_set_closecb(l->evcon, NULL, NULL);
    l->conn = NULL;
}

/* The connection is about to be freed by us or by evhttp_free: forget
 * everything it owns. */
static void link_forget_connection(struct link *l)
{
    link_unwatch(l);
    if (l->evreq != NULL && !l->evreq_ours)
        l->evreq = NULL;
    l->evcon = NULL;
    l->closed = true;
}

/* Free a detached request we own. */
static void link_free(struct link *l)
{
    link_unwatch(l);
    if (l->evreq != NULL && l->evreq_ours)
        evhttp_request_free(l->evreq);
    l->evreq = NULL;
    l->evcon = NULL;
}

/* ---- Server ---- */

static void on_request(struct evhttp_request *evreq, void *arg);
static void on_reap(evutil_socket_t fd, short what, void *arg);

struct http_server *http_server_new(struct event_base *base,
                                    const struct http_server_options *opts)
{
    struct http_server *s = xcalloc(1, sizeof(*s));
    prom_hist_init(&s->other_latency, PROM_BOUNDS_LATENCY,
                   PROM_BOUNDS_LATENCY_N);
    s->base = base;
    if (opts != NULL)
        s->opts = *opts;
    if (s->opts.max_body == 0)
        s->opts.max_body = HTTP_DEFAULT_MAX_BODY;
    if (s->opts.max_headers == 0)
        s->opts.max_headers = HTTP_DEFAULT_MAX_HEADERS;
    if (s->opts.timeout_secs == 0)
        s->opts.timeout_secs = HTTP_DEFAULT_TIMEOUT;
    s->http = evhttp_new(base);
    if (s->http == NULL) {
        log_error("evhttp_new failed");
        abort();
    }
    evhttp_set_max_body_size(s->http, (ev_ssize_t)s->opts.max_body);
    evhttp_set_max_headers_size(s->http, (ev_ssize_t)s->opts.max_headers);
    if (s->opts.timeout_secs > 0)
        evhttp_set_timeout(s->http, s->opts.timeout_secs);
    /* Every method reaches the router, which answers 405 itself. */
    evhttp_set_allowed_methods(
        s->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                     EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                     EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_default_content_type(s->http, NULL);
    evhttp_set_gencb(s->http, on_request, s);
    s->reap_ev = event_new(base, -1, 0, on_reap, s);
    s->conns = http_conns_new(base, s->http, &s->opts);
    return s;
}

int http_server_bind(struct http_server *s, const char *ip, uint16_t port,
                     uint16_t *bound_port, char *err, size_t errlen)
{
    if (server_load_tls(s, err, errlen) != 0)
        return -1;
    struct evhttp_bound_socket *h =
        evhttp_bind_socket_with_handle(s->http, ip, port);
    if (h == NULL) {
        int e = EVUTIL_SOCKET_ERROR();
        snprintf(err, errlen, "cannot listen on %s:%u: %s", ip, (unsigned)port,
                 e ? evutil_socket_error_to_string(e) : "bind failed");
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    evutil_socket_t fd = evhttp_bound_socket_get_fd(h);
    uint16_t got = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            got = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            got = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    if (bound_port != NULL)
        *bound_port = got;
    http_conns_add_listener(s->conns, evhttp_bound_socket_get_listener(h));
    return 0;
}

static int add_route(struct http_server *s, const char *path,
                     unsigned methods_mask, http_handler_fn fn, void *arg,
                     bool prefix)
{
    if (path == NULL || path[0] != '/')
        return -1;
    for (size_t i = 0; i < s->nroutes; i++)
        if (s->routes[i].prefix == prefix &&
            strcmp(s->routes[i].path, path) == 0)
            return -1;
    if (s->nroutes == s->routes_cap) {
        s->routes_cap = s->routes_cap ? s->routes_cap * 2 : 16;
        s->routes = xreallocarray(s->routes, s->routes_cap, sizeof(*s->routes));
    }
    struct route *r = &s->routes[s->nroutes++];
    prom_hist_init(&r->latency, PROM_BOUNDS_LATENCY, PROM_BOUNDS_LATENCY_N);
    r->path = xstrdup(path);
    r->methods = methods_mask;
    r->fn = fn;
    r->arg = arg;
    r->prefix = prefix;
    return 0;
}

void http_server_set_gate(struct http_server *s, http_gate_fn fn, void *arg)
{
    s->gate = fn;
    s->gate_arg = arg;
}

int http_server_route(struct http_server *s, const char *path,
                      unsigned methods_mask, http_handler_fn fn, void *arg)
{
    return add_route(s, path, methods_mask, fn, arg, false);
}

int http_server_route_prefix(struct http_server *s, const char *prefix,
                             unsigned methods_mask, http_handler_fn fn,
                             void *arg)
{
    return add_route(s, prefix, methods_mask, fn, arg, true);
}

static void stream_free(struct http_stream *st);

void http_server_free(struct http_server *s)
{
    if (s == NULL)
        return;
    for (struct http_request *r = s->deferred; r != NULL;) {
        struct http_request *next = r->next;
        link_forget_connection(&r->link);
        r->server = NULL;
        r->prev = r->next = NULL;
        r = next;
    }
    s->deferred = NULL;
    for (struct http_stream *st = s->streams; st != NULL;) {
        struct http_stream *next = st->next;
        link_forget_connection(&st->link);
        st->server = NULL;
        st->prev = st->next = NULL;
        st->in_reap = false;
        st->reap_next = NULL;
        st->cut_pending = false;
        st->notify_pending = false;
        if (st->released)
            stream_free(st);
        st = next;
    }
    s->streams = NULL;
    s->reap_head = NULL;
    evhttp_free(s->http);
    http_conns_free(s->conns);
    tls_server_free(s->tls);
    event_free(s->reap_ev);
    for (size_t i = 0; i < s->nroutes; i++)
        free(s->routes[i].path);
    free(s->routes);
    free(s);
}

/* ---- Requests ---- */

static void request_unlist(struct http_request *req)
{
    if (req->server == NULL)
        return;
    if (req->prev != NULL)
        req->prev->next = req->next;
    else if (req->server->deferred == req)
        req->server->deferred = req->next;
    if (req->next != NULL)
        req->next->prev = req->prev;
    req->prev = req->next = NULL;
}

static void request_free(struct http_request *req)
{
    if (req->fake != NULL && req->fake->req == req)
        req->fake->req = NULL;
    request_unlist(req);
    link_free(&req->link);
    clear_kv(&req->query);
    clear_kv(&req->headers);
    clear_kv(&req->reply_headers);
    free(req->body);
    free(req->path);
    free(req->peer);
    free(req);
}

/* The reply has been handed over (or dropped): free now, or when the
 * handler returns. */
static void request_done(struct http_request *req)
{
    req->done = true;
    if (!req->in_handler)
        request_free(req);
}

static char *peer_string(struct evhttp_connection *evcon)
{
    char *addr = NULL;
    ev_uint16_t port = 0;
    if (evcon == NULL)
        return xstrdup("?");
    evhttp_connection_get_peer(evcon, &addr, &port);
    if (addr == NULL)
        return xstrdup("?");
    if (strchr(addr, ':') != NULL)
        return xasprintf("[%s]:%u", addr, (unsigned)port);
    return xasprintf("%s:%u", addr, (unsigned)port);
}

/* Send a text reply straight on evreq (before our request object exists). */
static void send_raw_text(struct evhttp_request *evreq, int status,
                          const char *text)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "%s\n", text);
    evhttp_add_header(evhttp_request_get_output_headers(evreq), "Content-Type",
                      HTTP_CONTENT_TEXT);
    evhttp_send_reply(evreq, status, NULL, b);
    evbuffer_free(b);
}

/* Answer req's errors or call its route's handler, as the server does for
 * every request that parsed (the caller sets in_handler around it). */
static void route_request(struct http_server *s, struct http_request *req)
{
    enum http_method m = req->method;
    if (req->bad_query) {
        http_reply_error(req, 400, "malformed query string");
    } else if (req->body_len > s->opts.max_body) {
        /* evhttp enforces the limit already; this guards the contract. */
        http_reply_error(req, 413, "request body exceeds %zu bytes",
                         s->opts.max_body);
    } else {
        const struct route *r = NULL;
        size_t best = 0;
        for (size_t i = 0; i < s->nroutes; i++) {
            if (!s->routes[i].prefix &&
                strcmp(s->routes[i].path, req->path) == 0) {
                r = &s->routes[i];
                break;
            }
        }
        bool exact = r != NULL;
        for (size_t i = 0; !exact && i < s->nroutes; i++) {
            size_t len = strlen(s->routes[i].path);
            if (s->routes[i].prefix && len > best &&
                strncmp(s->routes[i].path, req->path, len) == 0) {
                r = &s->routes[i];
                best = len;
            }
        }
        unsigned allowed = r ? r->methods : 0;
        if (allowed & HTTP_GET)
            allowed |= HTTP_HEAD;
        if (r == NULL) {
            http_reply_error(req, 404, "no such endpoint: %s", req->path);
        } else if ((allowed & m) == 0) {
            char list[128] = "";
            size_t used = 0;
            for (size_t i = 0; i < NMETHODS; i++) {
                if (!(allowed & methods[i].m))
                    continue;
                int w = snprintf(list + used, sizeof(list) - used, "%s%s",
                                 used ? ", " : "", methods[i].name);
                if (w < 0 || (size_t)w >= sizeof(list) - used)
                    break;
                used += (size_t)w;
            }
            http_reply_header(req, "Allow", list);
            http_reply_error(req, 405,
                             "Expecting one of { %s }, but "
                             "received '%s'",
                             list, http_method_name(m));
        } else {
            log_debug("%s %s from %s", http_method_name(m), req->path,
                      req->peer);
            req->route = (size_t)(r - s->routes) + 1;
            if (s->gate == NULL || s->gate(req, s->gate_arg))
                r->fn(req, r->arg);
        }
    }
}

static void on_request(struct evhttp_request *evreq, void *arg)
{
    struct http_server *s = arg;
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(evreq);
    enum http_method m = method_from_ev(evhttp_request_get_command(evreq));
    if (uri == NULL || m == 0) {
        send_raw_text(evreq, 400, "malformed request");
        return;
    }

    struct http_request *req = xcalloc(1, sizeof(*req));
    req->server = s;
    req->start_ns = clock_monotonic_ns();
    req->method = m;
    TAILQ_INIT(&req->query);
    TAILQ_INIT(&req->headers);
    TAILQ_INIT(&req->reply_headers);
    const char *path = evhttp_uri_get_path(uri);
    req->path = xstrdup(path != NULL && path[0] != '\0' ? path : "/");
    struct evhttp_connection *evcon = evhttp_request_get_connection(evreq);
    struct http_conn *conn = http_conns_find(s->conns, evcon);
    if (conn != NULL) {
        http_conn_dispatched(conn);
        if (http_conn_peer(conn) == NULL)
            http_conn_set_peer(conn, peer_string(evcon));
        req->peer = xstrdup(http_conn_peer(conn));
    } else {
        req->peer = peer_string(evcon);
    }
    link_bind(&req->link, evreq, conn);

    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(evhttp_request_get_input_headers(evreq)); kv != NULL;
         kv = TAILQ_NEXT(kv, next)) {
        evhttp_add_header(&req->headers, kv->key, kv->value);
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(evreq);
    size_t len = evbuffer_get_length(in);
    req->body = xmalloc(len + 1);
    if (len > 0)
        evbuffer_remove(in, req->body, len);
    req->body[len] = '\0';
    req->body_len = len;

    const char *query = evhttp_uri_get_query(uri);
    if (query != NULL && evhttp_parse_query_str(query, &req->query) != 0)
        req->bad_query = true;
    req->in_handler = true;
    route_request(s, req);
    req->in_handler = false;
    if (req->done) {
        request_free(req);
        return;
    }
    /* Deferred: keep it on the server's list until the owner replies. */
    req->next = s->deferred;
    if (s->deferred != NULL)
        s->deferred->prev = req;
    s->deferred = req;
}

void http_server_write_latency(const struct http_server *s,
                               struct prom_writer *w, const char *name,
                               const char *help)
{
    if (prom_family(w, name, help, PROM_HISTOGRAM) != 0)
        return;
    for (size_t i = 0; i < s->nroutes; i++) {
        const struct route *r = &s->routes[i];
        if (r->latency.count == 0)
            continue;
        if (r->prefix) {
            char *label = xasprintf("%s*", r->path);
            prom_hist_write(w, name, "endpoint", label, &r->latency);
            free(label);
        } else {
            prom_hist_write(w, name, "endpoint", r->path, &r->latency);
        }
    }
    prom_hist_write(w, name, "endpoint", "other", &s->other_latency);
}

void http_server_stats(const struct http_server *s,
                       struct http_server_stats *out)
{
    http_conns_stats(s->conns, out);
    if (s->tls != NULL) {
        struct tls_server_stats ts;
        tls_server_stats(s->tls, &ts);
        out->tls_handshakes = ts.handshakes;
        out->tls_handshake_failures = ts.handshake_failures;
        out->tls_plain = ts.plain;
    }
}

size_t http_server_pending_requests(const struct http_server *s)
{
    size_t n = 0;
    for (const struct http_request *r = s->deferred; r != NULL; r = r->next)
        n++;
    return n;
}

enum http_method http_request_method(const struct http_request *req)
{
    return req->method;
}

const char *http_request_path(const struct http_request *req)
{
    return req->path;
}

const char *http_request_query(const struct http_request *req, const char *name)
{
    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(&req->query); kv != NULL; kv = TAILQ_NEXT(kv, next)) {
        if (strcmp(kv->key, name) == 0)
            return kv->value;
    }
    return NULL;
}

const char *http_request_header(const struct http_request *req,
                                const char *name)
{
    return evhttp_find_header(&req->headers, name);
}

const uint8_t *http_request_body(const struct http_request *req, size_t *len)
{
    *len = req->body_len;
    return req->body;
}

const char *http_request_peer(const struct http_request *req)
{
    return req->peer;
}

bool http_request_is_closed(const struct http_request *req)
{
    return req->link.closed;
}

/* ---- Negotiation ---- */

int http_request_content_encoding(const struct http_request *req,
                                  enum http_encoding *out)
{
    return http_media_type_encoding(http_request_header(req, "Content-Type"),
                                    out);
}

/* Parse the q parameter among the ';' parameters in [p, end); 1 if absent,
 * -1 if malformed. */
static double accept_q(const char *p, const char *end)
{
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *pe = semi ? semi : end;
        while (p < pe && (*p == ' ' || *p == '\t'))
            p++;
        if (pe - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            char num[16];
            size_t n = (size_t)(pe - p - 2);
            while (n > 0 && (p[2 + n - 1] == ' ' || p[2 + n - 1] == '\t'))
                n--;
            if (n == 0 || n >= sizeof(num))
                return -1;
            memcpy(num, p + 2, n);
            num[n] = '\0';
            char *e;
            double q = strtod(num, &e);
            if (*e != '\0' || q < 0 || q > 1)
                return -1;
            return q;
        }
        p = semi ? semi + 1 : end;
    }
    return 1;
}

int http_request_accept_encoding(const struct http_request *req,
                                 enum http_encoding fallback,
                                 enum http_encoding *out)
{
    const char *accept = http_request_header(req, "Accept");
    if (accept == NULL || accept[strspn(accept, " \t")] == '\0') {
        *out = fallback;
        return 0;
    }
    /* Best q for each encoding: an exact type beats a wildcard. */
    double q_exact[2] = {-1, -1}, q_wild[2] = {-1, -1};
    const char *p = accept;
    while (*p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *type_end = semi ? semi : end;
        size_t tn = (size_t)(type_end - p);
        double q = accept_q(semi ? semi + 1 : end, end);
        if (q >= 0) {
            if (media_is(p, tn, HTTP_CONTENT_JSON)) {
                if (q > q_exact[HTTP_ENC_JSON])
                    q_exact[HTTP_ENC_JSON] = q;
            } else if (media_is(p, tn, HTTP_CONTENT_PROTOBUF)) {
                if (q > q_exact[HTTP_ENC_PROTOBUF])
                    q_exact[HTTP_ENC_PROTOBUF] = q;
            } else if (media_is(p, tn, "*/*") ||
                       media_is(p, tn, "application/*")) {
                for (int i = 0; i < 2; i++)
                    if (q > q_wild[i])
                        q_wild[i] = q;
            }
        }
        p = comma ? comma + 1 : end;
    }
    double q[2];
    for (int i = 0; i < 2; i++)
        q[i] = q_exact[i] >= 0 ? q_exact[i] : q_wild[i];
    bool ok_json = q[HTTP_ENC_JSON] > 0, ok_pb = q[HTTP_ENC_PROTOBUF] > 0;
    if (!ok_json && !ok_pb)
        return -1;
    if (ok_json && ok_pb && q[HTTP_ENC_JSON] == q[HTTP_ENC_PROTOBUF])
        *out = fallback;
    else if (ok_json && (!ok_pb || q[HTTP_ENC_JSON] > q[HTTP_ENC_PROTOBUF]))
        *out = HTTP_ENC_JSON;
    else
        *out = HTTP_ENC_PROTOBUF;
    return 0;
}

int http_negotiate(struct http_request *req, enum http_encoding *body,
                   enum http_encoding *reply)
{
    enum http_encoding b, r;
    if (http_request_content_encoding(req, &b) != 0) {
        const char *ct = http_request_header(req, "Content-Type");
        if (ct == NULL)
            http_reply_error(req, 415, "Expecting 'Content-Type' of %s or %s",
                             HTTP_CONTENT_JSON, HTTP_CONTENT_PROTOBUF);
        else
            http_reply_error(req, 415,
                             "Expecting 'Content-Type' of %s or %s, got '%s'",
                             HTTP_CONTENT_JSON, HTTP_CONTENT_PROTOBUF, ct);
        return -1;
    }
    if (http_request_accept_encoding(req, b, &r) != 0) {
        http_reply_error(req, 406, "Expecting 'Accept' to allow %s or %s",
                         HTTP_CONTENT_JSON, HTTP_CONTENT_PROTOBUF);
        return -1;
    }
    *body = b;
    *reply = r;
    return 0;
}

/* ---- Replies ---- */

void http_reply_header(struct http_request *req, const char *name,
                       const char *value)
{
    /* evhttp_add_header drops names or values holding CR or LF. */
    evhttp_add_header(&req->reply_headers, name, value);
}

/* Move the queued reply headers and Content-Type onto evreq. */
static void apply_reply_headers(struct http_request *req,
                                struct evhttp_request *evreq,
                                const char *content_type)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(evreq);
    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(&req->reply_headers); kv != NULL;
         kv = TAILQ_NEXT(kv, next)) {
        evhttp_add_header(out, kv->key, kv->value);
    }
    if (content_type != NULL) {
        evhttp_remove_header(out, "Content-Type");
        evhttp_add_header(out, "Content-Type", content_type);
    }
}

/* Count req's latency in its route's histogram (or "other"): real
 * requests only, when they are answered or become a stream. */
static void observe_latency(const struct http_request *req)
{
    struct http_server *s = req->server;
    if (s == NULL || req->fake != NULL || req->start_ns == 0)
        return;
    struct prom_hist *h = req->route > 0 && req->route <= s->nroutes
                              ? &s->routes[req->route - 1].latency
                              : &s->other_latency;
    prom_hist_observe(h, (double)(clock_monotonic_ns() - req->start_ns) /
                             (double)CLOCK_NS_PER_SEC);
}

void http_reply(struct http_request *req, int status, const char *content_type,
                const void *body, size_t len)
{
    if (req->done) {
        log_error("http: second reply to %s %s ignored",
                  http_method_name(req->method), req->path);
        return;
    }
    observe_latency(req);
    if (req->fake != NULL) {
        fake_record_reply(req, status, content_type, body, len);
    } else if (!req->link.closed && req->link.evreq != NULL) {
        struct evhttp_request *evreq = req->link.evreq;
        link_unwatch(&req->link);
        apply_reply_headers(req, evreq, content_type);
        struct evbuffer *b = evbuffer_new();
        if (len > 0)
            evbuffer_add(b, body, len);
        log_debug("%s %s from %s: %d", http_method_name(req->method), req->path,
                  req->peer, status);
        /* evhttp owns evreq from here and frees it once sent. */
        evhttp_send_reply(evreq, status, NULL, b);
        evbuffer_free(b);
        req->link.evreq = NULL;
        req->link.evcon = NULL;
        req->link.closed = true;
    }
    request_done(req);
}

void http_reply_error(struct http_request *req, int status, const char *fmt,
                      ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        snprintf(text, sizeof(text), "error");
        n = (int)strlen(text);
    }
    size_t len = (size_t)n < sizeof(text) - 1 ? (size_t)n : sizeof(text) - 2;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\r' || text[i] == '\n')
            text[i] = ' ';
    text[len++] = '\n';
    if (status >= 500)
        log_warn("%s %s from %s: %d %.*s", http_method_name(req->method),
                 req->path, req->peer, status, (int)len - 1, text);
    else
        log_debug("%s %s from %s: %d %.*s", http_method_name(req->method),
                  req->path, req->peer, status, (int)len - 1, text);
    http_reply(req, status, HTTP_CONTENT_TEXT, text, len);
}

void http_reply_json(struct http_request *req, int status, const json_t *json)
{
    char *text = json_dumps(json, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL) {
        http_reply_error(req, 500, "cannot encode JSON");
        return;
    }
    http_reply(req, status, HTTP_CONTENT_JSON, text, strlen(text));
    free(text);
}

char *http_form_value(const char *body, size_t len, const char *name)
{
    size_t nlen = strlen(name);
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *fe = amp != NULL ? amp : end;
        const char *eq = memchr(p, '=', (size_t)(fe - p));
        if (eq != NULL && (size_t)(eq - p) == nlen &&
            memcmp(p, name, nlen) == 0) {
            const char *v = eq + 1;
            char *out = xmalloc((size_t)(fe - v) + 1);
            size_t k = 0;
            for (const char *s = v; s < fe; s++) {
                if (*s == '+') {
                    out[k++] = ' ';
                } else if (*s == '%' && fe - s >= 3) {
                    char hex[3] = {s[1], s[2], 0};
                    char *bad;
                    long c = strtol(hex, &bad, 16);
                    if (*bad != '\0') {
                        free(out);
                        return NULL;
                    }
                    out[k++] = (char)c;
                    s += 2;
                } else if (*s == '%') {
                    free(out);
                    return NULL;
                } else {
                    out[k++] = *s;
                }
            }
            out[k] = '\0';
            return out;
        }
        p = fe + 1;
    }
    return NULL;
}

/* Whether cb is a JavaScript name path: names of letters, digits, '_' and
 * '$' (not starting with a digit), joined by single dots. */
bool http_jsonp_callback_ok(const char *cb)
{
    size_t len = strlen(cb);
    if (len == 0 || len > 128)
        return false;
    bool name_start = true;
    for (size_t i = 0; i < len; i++) {
        char c = cb[i];
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     c == '_' || c == '$';
        bool digit = c >= '0' && c <= '9';
        if (c == '.') {
            if (name_start)
                return false;
            name_start = true;
        } else if (alpha || (digit && !name_start)) {
            name_start = false;
        } else {
            return false;
        }
    }
    return !name_start;
}

void http_reply_json_jsonp(struct http_request *req, int status,
                           const json_t *json)
{
    const char *cb = http_request_query(req, "jsonp");
    if (cb == NULL) {
        http_reply_json(req, status, json);
        return;
    }
    if (!http_jsonp_callback_ok(cb)) {
        http_reply_error(req, 400,
                         "jsonp: the callback must be a JavaScript name");
        return;
    }
    char *text = json_dumps(json, JSON_COMPACT | JSON_ENCODE_ANY);
    if (text == NULL) {
        http_reply_error(req, 500, "cannot encode JSON");
        return;
    }
    http_reply_json_text_jsonp(req, status, text, strlen(text));
    free(text);
}

void http_reply_json_text_jsonp(struct http_request *req, int status,
                                const char *text, size_t len)
{
    const char *cb = http_request_query(req, "jsonp");
    if (cb == NULL) {
        http_reply(req, status, HTTP_CONTENT_JSON, text, len);
        return;
    }
    if (!http_jsonp_callback_ok(cb)) {
        http_reply_error(req, 400,
                         "jsonp: the callback must be a JavaScript name");
        return;
    }
    size_t cblen = strlen(cb);
    char *body = xmalloc(cblen + len + 2);
    memcpy(body, cb, cblen);
    body[cblen] = '(';
    memcpy(body + cblen + 1, text, len);
    body[cblen + 1 + len] = ')';
    http_reply(req, status, "text/javascript", body, cblen + len + 2);
    free(body);
}

/* ---- Streams ---- */

static struct http_stream *stream_of(struct link *l)
{
    return (struct http_stream *)((char *)l -
                                  offsetof(struct http_stream, link));
}

static void schedule_reap(struct http_stream *st)
{
    struct http_server *s = st->server;
    if (s == NULL || st->in_reap)
        return;
    st->in_reap = true;
    st->reap_next = s->reap_head;
    s->reap_head = st;
    event_active(s->reap_ev, 0, 0);
}

static void stream_lost(struct link *l)
{
    struct http_stream *st = stream_of(l);
    if (!st->notify_pending && !st->released) {
        st->reason = HTTP_CLOSE_PEER;
        st->notify_pending = true;
    }
    schedule_reap(st);
}

static void stream_free(struct http_stream *st)
{
    struct http_server *s = st->server;
    if (s != NULL) {
        if (st->prev != NULL)
            st->prev->next = st->next;
        else if (s->streams == st)
            s->streams = st->next;
        if (st->next != NULL)
            st->next->prev = st->prev;
    }
    if (st->fake != NULL && st->fake->stream == st)
        st->fake->stream = NULL;
    link_free(&st->link);
    evbuffer_free(st->chunk);
    free(st->peer);
    free(st);
}

static void reap_one(struct http_stream *st)
{
    if (st->cut_pending) {
        st->cut_pending = false;
        struct evhttp_connection *evcon = st->link.evcon;
        if (evcon != NULL) {
            link_forget_connection(&st->link);
            evhttp_connection_free(evcon);
        }
    }
    if (st->notify_pending && !st->released) {
        st->notify_pending = false;
        if (st->cb != NULL) {
            st->in_callback = true;
            st->cb(st, st->reason, st->arg);
            st->in_callback = false;
        }
    }
    if (st->released)
        stream_free(st);
}

static void on_reap(evutil_socket_t fd, short what, void *arg)
{
    struct http_server *s = arg;
    (void)fd;
    (void)what;
    while (s->reap_head != NULL) {
        struct http_stream *st = s->reap_head;
        s->reap_head = st->reap_next;
        st->reap_next = NULL;
        st->in_reap = false;
        reap_one(st);
    }
}

struct http_stream *http_stream_start(struct http_request *req,
                                      const char *content_type,
                                      size_t max_pending,
                                      http_stream_close_fn close_cb, void *arg)
{
    observe_latency(req);
    struct http_stream *st = xcalloc(1, sizeof(*st));
    st->server = req->server;
    st->peer = xstrdup(req->peer);
    st->max_pending = max_pending ? max_pending : HTTP_DEFAULT_STREAM_CAP;
    st->cb = close_cb;
    st->arg = arg;
    st->chunk = evbuffer_new();

    /* Take the request's link over; the request keeps nothing. */
    st->link = req->link;
    st->link.on_lost = stream_lost;
    memset(&req->link, 0, sizeof(req->link));
    req->link.closed = true;

    if (st->server != NULL) {
        st->next = st->server->streams;
        if (st->next != NULL)
            st->next->prev = st;
        st->server->streams = st;
    }

    if (req->fake != NULL) {
        fake_record_stream(req, st, content_type);
    } else if (!st->link.closed && st->link.evreq != NULL &&
               st->link.evcon != NULL) {
        struct evhttp_request *evreq = st->link.evreq;
        link_watch(&st->link); /* the link moved: watch its new place */
        apply_reply_headers(req, evreq, content_type);
        evhttp_send_reply_start(evreq, 200, NULL);
        /* A stream may stay quiet for long: no idle timeout. */
        bufferevent_set_timeouts(
            evhttp_connection_get_bufferevent(st->link.evcon), NULL, NULL);
        log_debug("%s %s from %s: stream started",
                  http_method_name(req->method), req->path, req->peer);
    } else {
        st->link.closed = true;
        st->reason = HTTP_CLOSE_PEER;
        st->notify_pending = true;
        schedule_reap(st);
    }
    req->done = true;
    if (!req->in_handler)
        request_free(req);
    return st;
}

struct http_stream *http_body_start(struct http_request *req,
                                    const char *content_type,
                                    http_stream_close_fn close_cb, void *arg)
{
    struct http_fake *x = req->fake;
    struct http_stream *st =
        http_stream_start(req, content_type, SIZE_MAX, close_cb, arg);
    st->body = true;
    if (x != NULL) {
        /* Read back as a deferred reply: replied once the body ends. */
        x->is_stream = false;
        x->replied = false;
        x->status = 0;
    }
    return st;
}

static size_t output_pending(const struct http_stream *st)
{
    if (st->link.closed || st->link.evcon == NULL)
        return 0;
    struct bufferevent *bev = evhttp_connection_get_bufferevent(st->link.evcon);
    return evbuffer_get_length(bufferevent_get_output(bev));
}

/* Send what st->chunk holds as one chunk and enforce the cap. */
/* Whether a stream with pending bytes after queueing added must be cut. */
static bool stream_over_cap(struct http_stream *st, size_t added,
                            size_t pending)
{
    if (!st->has_drain)
        return pending > st->max_pending;
    return stream_drain_check(&st->drain, &st->drain_policy, added, pending,
                              clock_monotonic_ns());
}

void http_stream_set_drain(struct http_stream *st,
                           const struct stream_drain_policy *p)
{
    st->has_drain = true;
    st->drain_policy = *p;
    st->max_pending = p->soft_cap;
    memset(&st->drain, 0, sizeof(st->drain));
    /* What is queued already (the reply's headers) counts as queued. */
    st->drain.queued =
        st->fake != NULL ? st->fake->pending : output_pending(st);
}

static int stream_flush_chunk(struct http_stream *st)
{
    size_t len = evbuffer_get_length(st->chunk);
    evhttp_send_reply_chunk(st->link.evreq, st->chunk);
    evbuffer_drain(st->chunk, len);
    /* The chunk's framing: its length in hex and two CRLFs. */
    size_t framing = 4;
    for (size_t v = len; v > 0; v >>= 4)
        framing++;
    size_t pending = output_pending(st);
    if (stream_over_cap(st, len + framing, pending)) {
        log_warn("stream to %s cut off: %zu bytes pending exceed the cap of "
                 "%zu",
                 st->peer, pending, st->max_pending);
        st->link.closed = true;
        st->reason = HTTP_CLOSE_SLOW;
        st->cut_pending = true;
        st->notify_pending = true;
        schedule_reap(st);
        return -1;
    }
    return 0;
}

int http_stream_send(struct http_stream *st, const void *data, size_t len)
{
    if (st->released || st->link.closed)
        return -1;
    if (st->fake != NULL)
        return fake_send(st, NULL, 0, data, len);
    if (st->link.evreq == NULL)
        return -1;
    if (len == 0)
        return 0;
    evbuffer_add(st->chunk, data, len);
    return stream_flush_chunk(st);
}

int http_stream_send_record(struct http_stream *st, const void *data,
                            size_t len)
{
    if (st->released || st->link.closed)
        return -1;
    uint8_t header[RIO_HEADER_MAX];
    size_t h = rio_encode_header(len, header, sizeof(header));
    if (st->fake != NULL)
        return fake_send(st, header, h, data, len);
    if (st->link.evreq == NULL)
        return -1;
    evbuffer_add(st->chunk, header, h);
    if (len > 0)
        evbuffer_add(st->chunk, data, len);
    return stream_flush_chunk(st);
}

size_t http_stream_pending(const struct http_stream *st)
{
    if (st->fake != NULL)
        return st->link.closed ? 0 : st->fake->pending;
    return output_pending(st);
}

bool http_stream_is_closed(const struct http_stream *st)
{
    return st->link.closed;
}

const char *http_stream_peer(const struct http_stream *st)
{
    return st->peer;
}

void http_stream_close(struct http_stream *st)
{
    if (st == NULL)
        return;
    if (st->released) {
        log_error("http: stream to %s released twice", st->peer);
        return;
    }
    st->released = true;
    st->notify_pending = false;
    if (st->fake != NULL) {
        /* No connection to drain: free now (unless the callback runs). */
        if (!st->link.closed) {
            st->fake->ended = true;
            if (st->body) {
                /* The body is whole: the fake reads as replied now. */
                st->fake->replied = true;
                st->fake->status = 200;
            }
        }
        st->link.closed = true;
        if (!st->in_callback)
            stream_free(st);
        return;
    }
    if (!st->link.closed && st->link.evreq != NULL && st->link.evcon != NULL) {
        struct evhttp_connection *evcon = st->link.evcon;
        struct evhttp_request *evreq = st->link.evreq;
        link_unwatch(&st->link);
        st->link.evreq = NULL;
        st->link.evcon = NULL;
        st->link.closed = true;
        /* Give the peer the usual time to take the rest, then evhttp
         * frees the request once the terminating chunk is out. */
        if (st->server != NULL && st->server->opts.timeout_secs > 0) {
            struct timeval tv = {st->server->opts.timeout_secs, 0};
            bufferevent_set_timeouts(evhttp_connection_get_bufferevent(evcon),
                                     &tv, &tv);
        }
        evhttp_send_reply_end(evreq);
    }
    if (st->in_callback)
        return; /* reap_one frees it when the callback returns */
    if (st->server != NULL)
        schedule_reap(st);
    else
        stream_free(st);
}

/* ---- Fake requests and streams (http_fake.h) ---- */

/* Records bigger than this are taken for a broken stream. */
#define FAKE_MAX_RECORD ((size_t)1 << 30)

static void bytes_set(struct fake_bytes *b, const void *data, size_t len)
{
    free(b->data);
    b->data = xmalloc(len + 1);
    if (len > 0)
        memcpy(b->data, data, len);
    b->data[len] = '\0';
    b->len = len;
}

static void bytes_push(struct fake_bytes **items, size_t *n, size_t *cap,
                       const void *data, size_t len)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *items = xreallocarray(*items, *cap, sizeof(**items));
    }
    (*items)[*n] = (struct fake_bytes){NULL, 0};
    bytes_set(&(*items)[*n], data, len);
    (*n)++;
}

static void on_fake_pending(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    http_fake_run_pending(arg);
}

struct http_fake *http_fake_new(struct event_base *base,
                                enum http_method method, const char *target)
{
    struct http_fake *x = xcalloc(1, sizeof(*x));
    x->base = base;
    if (base != NULL)
        x->ev = event_new(base, -1, 0, on_fake_pending, x);
    x->method = method;
    x->target = xstrdup(target);
    x->peer = xstrdup(HTTP_FAKE_DEFAULT_PEER);
    TAILQ_INIT(&x->headers);
    TAILQ_INIT(&x->reply_headers);
    bytes_set(&x->reply_body, NULL, 0);
    x->body = xmalloc(1);
    x->body[0] = '\0';
    return x;
}

void http_fake_add_header(struct http_fake *x, const char *name,
                          const char *value)
{
    evhttp_add_header(&x->headers, name, value);
}

void http_fake_set_body(struct http_fake *x, const void *body, size_t len)
{
    free(x->body);
    x->body = xmalloc(len + 1);
    if (len > 0)
        memcpy(x->body, body, len);
    x->body[len] = '\0';
    x->body_len = len;
}

void http_fake_set_peer(struct http_fake *x, const char *peer)
{
    free(x->peer);
    x->peer = xstrdup(peer);
}

/* Make the request from what x holds, parsing the target as evhttp parses
 * a request line's URI; a bad target or query is flagged for the caller.
 * NULL when built already. */
static struct http_request *fake_build(struct http_fake *x)
{
    if (x->built)
        return NULL;
    x->built = true;
    struct http_request *req = xcalloc(1, sizeof(*req));
    req->fake = x;
    req->method = x->method;
    TAILQ_INIT(&req->query);
    TAILQ_INIT(&req->headers);
    TAILQ_INIT(&req->reply_headers);
    struct evhttp_uri *uri =
        evhttp_uri_parse_with_flags(x->target, EVHTTP_URI_NONCONFORMANT);
    if (uri == NULL) {
        req->bad_target = true;
        req->path = xstrndup(x->target, strcspn(x->target, "?"));
    } else {
        const char *path = evhttp_uri_get_path(uri);
        req->path = xstrdup(path != NULL && path[0] != '\0' ? path : "/");
        const char *query = evhttp_uri_get_query(uri);
        if (query != NULL && evhttp_parse_query_str(query, &req->query) != 0)
            req->bad_query = true;
        evhttp_uri_free(uri);
    }
    req->peer = xstrdup(x->peer);
    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(&x->headers); kv != NULL; kv = TAILQ_NEXT(kv, next))
        evhttp_add_header(&req->headers, kv->key, kv->value);
    req->body = xmemdup(x->body, x->body_len + 1);
    req->body_len = x->body_len;
    req->link.closed = x->disconnected;
    x->req = req;
    return req;
}

struct http_request *http_fake_request(struct http_fake *x)
{
    struct http_request *req = fake_build(x);
    if (req != NULL && (req->bad_target || req->bad_query)) {
        request_free(req);
        return NULL;
    }
    return req;
}

/* Dispatch as on_request does: through s's routes, or to fn. */
static void fake_dispatch(struct http_fake *x, struct http_server *s,
                          http_handler_fn fn, void *arg)
{
    struct http_request *req = fake_build(x);
    if (req == NULL)
        return;
    req->in_handler = true;
    if (req->bad_target)
        http_reply_error(req, 400, "malformed request");
    else if (s != NULL)
        route_request(s, req);
    else if (req->bad_query)
        http_reply_error(req, 400, "malformed query string");
    else
        fn(req, arg);
    req->in_handler = false;
    if (req->done)
        request_free(req);
}

void http_fake_dispatch(struct http_fake *x, http_handler_fn fn, void *arg)
{
    fake_dispatch(x, NULL, fn, arg);
}

void http_fake_dispatch_server(struct http_fake *x, struct http_server *s)
{
    fake_dispatch(x, s, NULL, NULL);
}

/* Copy the queued reply headers and Content-Type into the exchange, as
 * apply_reply_headers does onto an evhttp request. */
static void fake_take_headers(struct http_fake *x,
                              const struct http_request *req,
                              const char *content_type)
{
    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(&req->reply_headers); kv != NULL;
         kv = TAILQ_NEXT(kv, next)) {
        evhttp_add_header(&x->reply_headers, kv->key, kv->value);
    }
    if (content_type != NULL) {
        evhttp_remove_header(&x->reply_headers, "Content-Type");
        evhttp_add_header(&x->reply_headers, "Content-Type", content_type);
    }
}

static void fake_record_reply(struct http_request *req, int status,
                              const char *content_type, const void *body,
                              size_t len)
{
    struct http_fake *x = req->fake;
    x->replied = true;
    x->status = status;
    fake_take_headers(x, req, content_type);
    bytes_set(&x->reply_body, body, len);
    req->link.closed = true;
}

static void fake_record_stream(struct http_request *req, struct http_stream *st,
                               const char *content_type)
{
    struct http_fake *x = req->fake;
    st->fake = x;
    x->stream = st;
    x->replied = true;
    x->is_stream = true;
    x->status = 200;
    fake_take_headers(x, req, content_type);
    if (x->rio == NULL)
        x->rio = rio_decoder_new(FAKE_MAX_RECORD);
    if (st->link.closed) {
        /* The client went before the start. */
        st->reason = HTTP_CLOSE_PEER;
        st->notify_pending = true;
        fake_schedule(x);
    }
}

/* Decode the records in a new chunk. */
static void fake_decode(struct http_fake *x, const uint8_t *p, size_t n)
{
    while (!x->rio_bad) {
        size_t used = 0;
        const uint8_t *rec = NULL;
        size_t rlen = 0;
        enum rio_result r = rio_decoder_feed(x->rio, p, n, &used, &rec, &rlen);
        if (r == RIO_ERROR) {
            x->rio_bad = true;
            break;
        }
        if (r == RIO_NEED_MORE)
            break;
        bytes_push(&x->records, &x->nrecords, &x->records_cap, rec, rlen);
        p += used;
        n -= used;
    }
}

static int fake_send(struct http_stream *st, const uint8_t *head, size_t hlen,
                     const void *data, size_t len)
{
    struct http_fake *x = st->fake;
    size_t n = hlen + len;
    if (n == 0)
        return 0;
    if (x->stalled)
        x->pending += n;
    if (x->stalled || st->has_drain) {
        if (stream_over_cap(st, n, x->pending)) {
            log_warn("stream to %s cut off: %zu bytes pending exceed the cap "
                     "of %zu",
                     st->peer, x->pending, st->max_pending);
            st->link.closed = true;
            st->reason = HTTP_CLOSE_SLOW;
            st->notify_pending = true;
            fake_schedule(x);
            return -1;
        }
    }
    uint8_t *chunk = xmalloc(n);
    if (hlen > 0)
        memcpy(chunk, head, hlen);
    if (len > 0)
        memcpy(chunk + hlen, data, len);
    bytes_push(&x->chunks, &x->nchunks, &x->chunks_cap, chunk, n);
    if (st->body) {
        /* A plain body: the chunks make up the reply body. */
        struct fake_bytes *b = &x->reply_body;
        b->data = xrealloc(b->data, b->len + n + 1);
        memcpy(b->data + b->len, chunk, n);
        b->len += n;
        b->data[b->len] = '\0';
    } else {
        fake_decode(x, chunk, n);
    }
    free(chunk);
    return 0;
}

static void fake_schedule(struct http_fake *x)
{
    if (x->ev != NULL)
        event_active(x->ev, 0, 0);
}

void http_fake_disconnect(struct http_fake *x)
{
    x->disconnected = true;
    if (x->req != NULL)
        x->req->link.closed = true;
    struct http_stream *st = x->stream;
    if (st != NULL && !st->released && !st->link.closed) {
        st->link.closed = true;
        st->reason = HTTP_CLOSE_PEER;
        st->notify_pending = true;
        fake_schedule(x);
    }
}

void http_fake_stall(struct http_fake *x, bool stalled)
{
    x->stalled = stalled;
}

void http_fake_drain(struct http_fake *x)
{
    x->pending = 0;
}

int http_fake_run_pending(struct http_fake *x)
{
    struct http_stream *st = x->stream;
    if (st == NULL || !st->notify_pending || st->released)
        return 0;
    st->notify_pending = false;
    x->close_count++;
    x->close_reason = st->reason;
    if (st->cb != NULL) {
        st->in_callback = true;
        st->cb(st, st->reason, st->arg);
        st->in_callback = false;
    }
    if (st->released)
        stream_free(st);
    return 1;
}

bool http_fake_replied(const struct http_fake *x)
{
    return x->replied;
}

int http_fake_status(const struct http_fake *x)
{
    return x->status;
}

const char *http_fake_content_type(const struct http_fake *x)
{
    return http_fake_reply_header(x, "Content-Type");
}

const uint8_t *http_fake_body(const struct http_fake *x, size_t *len)
{
    *len = x->reply_body.len;
    return x->reply_body.data;
}

const char *http_fake_reply_header(const struct http_fake *x, const char *name)
{
    /* evhttp_find_header takes a non-const list but only reads it. */
    return evhttp_find_header(&((struct http_fake *)x)->reply_headers, name);
}

bool http_fake_is_stream(const struct http_fake *x)
{
    return x->is_stream;
}

size_t http_fake_chunk_count(const struct http_fake *x)
{
    return x->chunks_gone + x->nchunks;
}

const uint8_t *http_fake_chunk(const struct http_fake *x, size_t i, size_t *len)
{
    if (i < x->chunks_gone || i - x->chunks_gone >= x->nchunks)
        return NULL;
    i -= x->chunks_gone;
    *len = x->chunks[i].len;
    return x->chunks[i].data;
}

size_t http_fake_record_count(const struct http_fake *x)
{
    return x->records_gone + x->nrecords;
}

const uint8_t *http_fake_record(const struct http_fake *x, size_t i,
                                size_t *len)
{
    if (i < x->records_gone || i - x->records_gone >= x->nrecords)
        return NULL;
    i -= x->records_gone;
    *len = x->records[i].len;
    return x->records[i].data;
}

static void bytes_drop(struct fake_bytes **items, size_t *n, size_t *cap)
{
    for (size_t i = 0; i < *n; i++)
        free((*items)[i].data);
    free(*items);
    *items = NULL;
    *n = *cap = 0;
}

void http_fake_forget(struct http_fake *x)
{
    x->chunks_gone += x->nchunks;
    bytes_drop(&x->chunks, &x->nchunks, &x->chunks_cap);
    x->records_gone += x->nrecords;
    bytes_drop(&x->records, &x->nrecords, &x->records_cap);
}

bool http_fake_records_malformed(const struct http_fake *x)
{
    return x->rio_bad;
}

bool http_fake_stream_ended(const struct http_fake *x)
{
    return x->ended;
}

int http_fake_close_count(const struct http_fake *x)
{
    return x->close_count;
}

enum http_close_reason http_fake_close_reason(const struct http_fake *x)
{
    return x->close_reason;
}

void http_fake_free(struct http_fake *x)
{
    if (x == NULL)
        return;
    /* What is still alive becomes as after http_server_free. */
    if (x->req != NULL) {
        x->req->fake = NULL;
        x->req->link.closed = true;
    }
    if (x->stream != NULL) {
        x->stream->fake = NULL;
        x->stream->link.closed = true;
        x->stream->notify_pending = false;
    }
    if (x->ev != NULL)
        event_free(x->ev);
    free(x->target);
    free(x->peer);
    clear_kv(&x->headers);
    clear_kv(&x->reply_headers);
    free(x->body);
    free(x->reply_body.data);
    for (size_t i = 0; i < x->nchunks; i++)
        free(x->chunks[i].data);
    free(x->chunks);
    for (size_t i = 0; i < x->nrecords; i++)
        free(x->records[i].data);
    free(x->records);
    rio_decoder_free(x->rio);
    free(x);
}
