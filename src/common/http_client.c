/*
 * HTTP client over evhttp's client side. One evhttp connection per request
 * (taken from and given back to a pool when the request names one); the
 * outcome is copied out of evhttp as it arrives, and the final callback
 * plus every free happen in a "finish" event of our own, so the connection is
 * never freed while evhttp is still inside one of its callbacks.
 */
#include "common/http_client.h"

#include "common/errbuf.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/tls.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <sys/queue.h>

#include <event2/keyvalq_struct.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct http_client_response {
    int status;      /* 0: no response */
    char error[192]; /* reason when status is 0 */
    bool has_error;  /* error is meaningful */
    struct evkeyvalq headers;
    uint8_t *body; /* NUL-terminated copy */
    size_t body_len;
};

struct http_client_req {
    struct event_base *base;
    struct evhttp_connection *evcon; /* ours; freed in finish */
    struct evhttp_request *evreq;    /* NULL once evhttp freed it */
    bool streaming;
    http_client_done_fn done;
    void *done_arg;
    struct http_client_stream_cbs cbs;
    struct event *deadline; /* NULL when there is no timeout */
    struct event *finish_ev;
    struct http_client_response resp;
    char *target; /* "host:port", for messages */
    int timeout_ms;
    bool have_evreq_error;
    enum evhttp_request_error evreq_error;
    bool finished;    /* outcome recorded, finish event active */
    bool cancelled;   /* no further callbacks */
    bool in_user_cb;  /* inside on_headers or on_chunk */
    bool in_final_cb; /* inside done or on_close */
    bool refused;     /* stream answered with a non-200 status */
    bool got_headers; /* resp.status and headers recorded */
    bool tls;         /* over TLS */
    /* The pool the request named (one-shot requests only), the TLS mode it
     * asked for (part of the pool's key), and whether a response came, so
     * that the connection may go back to the pool. */
    struct http_client_pool *pool;
    enum http_client_tls tls_mode;
    bool reusable;
    bool has_slot; /* counted in pool->busy */
    /* Waiting for one of the pool's connections: the request, built but
     * not yet handed to evhttp (ours to free), and what sending needs. */
    struct evhttp_request *unsent;
    struct http_client_req *wprev, *wnext;
    char *host;
    uint16_t port;
    enum evhttp_cmd_type method;
    char *path;
    size_t max_body;
};

/* An idle kept-alive connection of a pool. */
struct pooled_conn {
    struct http_client_pool *pool;
    struct evhttp_connection *evcon;
    char *target; /* "host:port" */
    enum http_client_tls tls_mode;
    bool tls;
    struct event *idle_ev; /* closes it after idle_ms */
    struct pooled_conn *prev, *next;
};

struct http_client_pool {
    struct event_base *base;
    size_t max_conns;
    int idle_ms;
    struct pooled_conn *idle; /* most recently used first */
    size_t nidle;
    size_t busy; /* requests holding a connection */
    /* Requests waiting for busy to fall below max_conns, oldest first. */
    struct http_client_req *whead, *wtail;
    size_t active; /* requests that named it and have not finished */
    bool dead;     /* freed by its owner: goes with its last request */
    uint64_t opened, reused;
};

int http_client_status(const struct http_client_response *r)
{
    return r->status;
}

const char *http_client_error(const struct http_client_response *r)
{
    return r->has_error ? r->error : NULL;
}

const char *http_client_header(const struct http_client_response *r,
                               const char *name)
{
    return evhttp_find_header(&r->headers, name);
}

const uint8_t *http_client_body(const struct http_client_response *r,
                                size_t *len)
{
    static const uint8_t empty[1] = {0};
    *len = r->body_len;
    return r->body != NULL ? r->body : empty;
}

static void fail(struct http_client_req *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void schedule_finish(struct http_client_req *c)
{
    if (c->deadline != NULL)
        event_del(c->deadline);
    event_active(c->finish_ev, 0, 0);
}

/* Record a failure as the outcome (the first outcome wins). */
static void fail(struct http_client_req *c, const char *fmt, ...)
{
    if (c->finished)
        return;
    va_list ap;
    va_start(ap, fmt);
    errbuf_vset(c->resp.error, sizeof(c->resp.error), fmt, ap);
    va_end(ap);
    c->resp.has_error = true;
    c->resp.status = 0;
    c->finished = true;
    schedule_finish(c);
}

static const char *evreq_error_text(enum evhttp_request_error e)
{
    switch (e) {
    case EVREQ_HTTP_TIMEOUT:
        return "timed out";
    case EVREQ_HTTP_EOF:
        return "connection closed";
    case EVREQ_HTTP_INVALID_HEADER:
        return "malformed response";
    case EVREQ_HTTP_BUFFER_ERROR:
        return "connection error";
    case EVREQ_HTTP_REQUEST_CANCEL:
        return "cancelled";
    case EVREQ_HTTP_DATA_TOO_LONG:
        return "response too large";
    }
    return "failed";
}

/* ---- Pools ---- */

static void pooled_unlink(struct pooled_conn *pc)
{
    struct http_client_pool *p = pc->pool;
    if (pc->prev != NULL)
        pc->prev->next = pc->next;
    else
        p->idle = pc->next;
    if (pc->next != NULL)
        pc->next->prev = pc->prev;
    p->nidle--;
}

/* Forget pc; its connection is closed unless keep. */
static void pooled_free(struct pooled_conn *pc, bool keep)
{
    pooled_unlink(pc);
    if (!keep)
        evhttp_connection_free(pc->evcon);
    event_free(pc->idle_ev);
    free(pc->target);
    free(pc);
}

static void on_pooled_idle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    pooled_free(arg, false); /* our own event: no evhttp callback runs */
}

struct http_client_pool *http_client_pool_new(struct event_base *base,
                                              size_t max_conns, int idle_ms)
{
    struct http_client_pool *p = xcalloc(1, sizeof(*p));
    p->base = base;
    p->max_conns = max_conns > 0 ? max_conns : HTTP_CLIENT_POOL_MAX_CONNS;
    p->idle_ms = idle_ms > 0 ? idle_ms : HTTP_CLIENT_POOL_IDLE_MS;
    return p;
}

void http_client_pool_free(struct http_client_pool *p)
{
    if (p == NULL)
        return;
    while (p->idle != NULL)
        pooled_free(p->idle, false);
    p->dead = true;
    if (p->active == 0)
        free(p);
}

void http_client_pool_counts(const struct http_client_pool *p, uint64_t *opened,
                             uint64_t *reused)
{
    *opened = p->opened;
    *reused = p->reused;
}

/* An idle connection of p to target in tls_mode, taken out of the pool
 * (its TLS use in *tls), or NULL. */
static struct evhttp_connection *pool_take(struct http_client_pool *p,
                                           const char *target,
                                           enum http_client_tls tls_mode,
                                           bool *tls)
{
    for (struct pooled_conn *pc = p->idle; pc != NULL; pc = pc->next) {
        if (pc->tls_mode != tls_mode || strcmp(pc->target, target) != 0)
            continue;
        struct evhttp_connection *evcon = pc->evcon;
        *tls = pc->tls;
        pooled_free(pc, true);
        return evcon;
    }
    return NULL;
}

/* Give c's connection back to its pool, or close it when the pool is full
 * or gone. */
static void pool_put(struct http_client_req *c)
{
    struct http_client_pool *p = c->pool;
    if (p->dead || p->nidle >= p->max_conns) {
        evhttp_connection_free(c->evcon);
        return;
    }
    struct pooled_conn *pc = xcalloc(1, sizeof(*pc));
    pc->pool = p;
    pc->evcon = c->evcon;
    pc->target = xstrdup(c->target);
    pc->tls_mode = c->tls_mode;
    pc->tls = c->tls;
    pc->idle_ev = event_new(p->base, -1, 0, on_pooled_idle, pc);
    struct timeval tv = {p->idle_ms / 1000, (p->idle_ms % 1000) * 1000};
    event_add(pc->idle_ev, &tv);
    pc->next = p->idle;
    if (p->idle != NULL)
        p->idle->prev = pc;
    p->idle = pc;
    p->nidle++;
}

static void wait_unlink(struct http_client_req *c)
{
    struct http_client_pool *p = c->pool;
    if (c->wprev != NULL)
        c->wprev->wnext = c->wnext;
    else
        p->whead = c->wnext;
    if (c->wnext != NULL)
        c->wnext->wprev = c->wprev;
    else
        p->wtail = c->wprev;
    c->wprev = c->wnext = NULL;
}

static void dispatch(struct http_client_req *c);

static void client_free(struct http_client_req *c)
{
    struct http_client_pool *p = c->pool;
    if (c->unsent != NULL) { /* still waiting for a connection */
        wait_unlink(c);
        evhttp_request_free(c->unsent);
    }
    if (c->evcon != NULL) {
        if (p != NULL && c->reusable && !c->cancelled)
            pool_put(c);
        else /* frees a request still queued on it, without callbacks */
            evhttp_connection_free(c->evcon);
    }
    if (c->has_slot) {
        p->busy--;
        /* The oldest waiting request takes the slot (and, to the same
         * target, the connection just given back). */
        while (p->whead != NULL && p->busy < p->max_conns) {
            struct http_client_req *w = p->whead;
            wait_unlink(w);
            dispatch(w);
        }
    }
    if (p != NULL && --p->active == 0 && p->dead)
        free(p);
    free(c->host);
    free(c->path);
    if (c->deadline != NULL)
        event_free(c->deadline);
    event_free(c->finish_ev);
    evhttp_clear_headers(&c->resp.headers);
    free(c->resp.body);
    free(c->target);
    free(c);
}

static void on_finish(evutil_socket_t fd, short what, void *arg)
{
    struct http_client_req *c = arg;
    (void)fd;
    (void)what;
    if (!c->cancelled) {
        c->in_final_cb = true;
        if (c->streaming) {
            if (c->cbs.on_close != NULL)
                c->cbs.on_close(&c->resp, c->cbs.arg);
        } else if (c->done != NULL) {
            c->done(&c->resp, c->done_arg);
        }
        c->in_final_cb = false;
    }
    c->evreq = NULL; /* freed with the connection if still queued */
    client_free(c);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    struct http_client_req *c = arg;
    (void)fd;
    (void)what;
    if (c->streaming && c->got_headers)
        return;
    fail(c, "%s: timed out after %d ms", c->target, c->timeout_ms);
}

static void copy_headers(struct http_client_req *c,
                         struct evhttp_request *evreq)
{
    if (c->got_headers)
        return;
    c->got_headers = true;
    c->resp.status = evhttp_request_get_response_code(evreq);
    struct evkeyval *kv;
    for (kv = TAILQ_FIRST(evhttp_request_get_input_headers(evreq)); kv != NULL;
         kv = TAILQ_NEXT(kv, next)) {
        evhttp_add_header(&c->resp.headers, kv->key, kv->value);
    }
}

static void copy_body(struct http_client_req *c, struct evhttp_request *evreq)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(evreq);
    size_t len = evbuffer_get_length(in);
    free(c->resp.body);
    c->resp.body = xmalloc(len + 1);
    if (len > 0)
        evbuffer_remove(in, c->resp.body, len);
    c->resp.body[len] = '\0';
    c->resp.body_len = len;
}

static void on_evreq_error(enum evhttp_request_error err, void *arg)
{
    struct http_client_req *c = arg;
    c->have_evreq_error = true;
    c->evreq_error = err;
}

static int on_evreq_headers(struct evhttp_request *evreq, void *arg)
{
    struct http_client_req *c = arg;
    if (c->cancelled || c->finished)
        return 0;
    copy_headers(c, evreq);
    if (c->resp.status != 200) {
        /* Refused: collect the body whole for on_close. */
        c->refused = true;
        evhttp_request_set_chunked_cb(evreq, NULL);
    }
    if (c->deadline != NULL)
        event_del(c->deadline);
    /* evhttp arms a 50 s read timeout on client connections; a stream may
     * stay quiet longer (the owner watches heartbeats itself). */
    if (!c->refused && c->evcon != NULL)
        bufferevent_set_timeouts(evhttp_connection_get_bufferevent(c->evcon),
                                 NULL, NULL);
    if (c->cbs.on_headers != NULL) {
        c->in_user_cb = true;
        c->cbs.on_headers(&c->resp, c->cbs.arg);
        c->in_user_cb = false;
    }
    return 0;
}

static void on_evreq_chunk(struct evhttp_request *evreq, void *arg)
{
    struct http_client_req *c = arg;
    struct evbuffer *in = evhttp_request_get_input_buffer(evreq);
    size_t len = evbuffer_get_length(in);
    if (c->cancelled || c->finished || c->refused || len == 0)
        return; /* evhttp drains the buffer after this callback */
    const uint8_t *data = evbuffer_pullup(in, -1);
    if (c->cbs.on_chunk != NULL) {
        c->in_user_cb = true;
        c->cbs.on_chunk(data, len, c->cbs.arg);
        c->in_user_cb = false;
    }
}

static void on_evreq_done(struct evhttp_request *evreq, void *arg)
{
    struct http_client_req *c = arg;
    c->evreq = NULL; /* evhttp frees it after this callback */
    if (c->cancelled || c->finished)
        return;
    if (evreq == NULL || evhttp_request_get_response_code(evreq) == 0) {
        char why[256];
        if (c->tls && c->evcon != NULL &&
            tls_client_bev_error(evhttp_connection_get_bufferevent(c->evcon),
                                 why, sizeof(why)))
            fail(c, "%s: %s", c->target, why);
        else if (c->have_evreq_error)
            fail(c, "%s: %s", c->target, evreq_error_text(c->evreq_error));
        else
            fail(c, "%s: connection failed", c->target);
        return;
    }
    copy_headers(c, evreq);
    if (!c->streaming || c->refused)
        copy_body(c, evreq);
    c->reusable = true;
    c->finished = true;
    schedule_finish(c);
}

static enum evhttp_cmd_type ev_method(enum http_method m)
{
    switch (m) {
    case HTTP_GET:
        return EVHTTP_REQ_GET;
    case HTTP_POST:
        return EVHTTP_REQ_POST;
    case HTTP_PUT:
        return EVHTTP_REQ_PUT;
    case HTTP_DELETE:
        return EVHTTP_REQ_DELETE;
    case HTTP_HEAD:
        return EVHTTP_REQ_HEAD;
    case HTTP_OPTIONS:
        return EVHTTP_REQ_OPTIONS;
    case HTTP_PATCH:
        return EVHTTP_REQ_PATCH;
    case HTTP_TRACE:
        return EVHTTP_REQ_TRACE;
    case HTTP_CONNECT:
        return EVHTTP_REQ_CONNECT;
    }
    return EVHTTP_REQ_GET;
}

/* Open c's connection as o says (TLS or not). Returns 0, or -1 with the
 * failure recorded. */
static int open_conn(struct http_client_req *c)
{
    struct event_base *base = c->base;
    struct tls_client *tc = NULL;
    const char *why = NULL;
    int tls_on = 0;
    if (c->tls_mode == HTTP_CLIENT_TLS_INSECURE) {
        tc = tls_client_insecure();
        tls_on = tc != NULL ? 1 : -1;
    } else if (c->tls_mode != HTTP_CLIENT_TLS_OFF) {
        tls_on = tls_client_process(&tc, &why);
    }
    if (tls_on < 0 || (c->tls_mode == HTTP_CLIENT_TLS_ON && tc == NULL)) {
        fail(c, "%s: %s", c->target, why != NULL ? why : "TLS unavailable");
        return -1;
    }
    c->tls = c->tls_mode == HTTP_CLIENT_TLS_ON || tls_on == 1;
    if (c->tls) {
        char err[256];
        struct bufferevent *bev =
            tls_client_bev(tc, base, c->host, err, sizeof(err));
        if (bev == NULL) {
            fail(c, "%s: %s", c->target, err);
            return -1;
        }
        /* evhttp owns bev from here (freed with the connection). */
        c->evcon = evhttp_connection_base_bufferevent_new(base, NULL, bev,
                                                          c->host, c->port);
        if (c->evcon == NULL)
            bufferevent_free(bev);
    } else {
        c->evcon = evhttp_connection_base_new(base, NULL, c->host, c->port);
    }
    if (c->evcon == NULL) {
        fail(c, "%s: cannot create a connection", c->target);
        return -1;
    }
    return 0;
}

/* Send c's request (built, in c->unsent) on a connection: an idle one of
 * its pool, or a new one. */
static void dispatch(struct http_client_req *c)
{
    struct evhttp_request *evreq = c->unsent;
    c->unsent = NULL;
    struct http_client_pool *p = c->pool;
    if (p != NULL) {
        p->busy++;
        c->has_slot = true;
        c->evcon = pool_take(p, c->target, c->tls_mode, &c->tls);
        if (c->evcon != NULL)
            p->reused++;
    }
    if (c->evcon == NULL) {
        if (open_conn(c) != 0) {
            evhttp_request_free(evreq);
            return;
        }
        if (p != NULL)
            p->opened++;
    }
    if (!c->streaming)
        evhttp_connection_set_max_body_size(
            c->evcon, (ev_ssize_t)(c->max_body ? c->max_body
                                               : HTTP_CLIENT_DEFAULT_MAX_BODY));
    c->evreq = evreq;
    if (evhttp_make_request(c->evcon, evreq, c->method, c->path) != 0) {
        c->evreq = NULL;
        fail(c, "%s: cannot start the request", c->target);
    }
}

static struct http_client_req *start(struct event_base *base,
                                     const struct http_client_options *o,
                                     bool streaming)
{
    struct http_client_req *c = xcalloc(1, sizeof(*c));
    c->base = base;
    c->streaming = streaming;
    c->timeout_ms = o->timeout_ms;
    TAILQ_INIT(&c->resp.headers);
    c->target = xasprintf("%s:%u", o->host, (unsigned)o->port);
    c->finish_ev = event_new(base, -1, 0, on_finish, c);
    if (o->timeout_ms > 0) {
        c->deadline = event_new(base, -1, 0, on_deadline, c);
        struct timeval tv = {o->timeout_ms / 1000,
                             (o->timeout_ms % 1000) * 1000};
        event_add(c->deadline, &tv);
    }

    c->host = xstrdup(o->host);
    c->port = o->port;
    c->tls_mode = o->tls;
    c->method = ev_method(o->method);
    c->path = xstrdup(o->path != NULL && o->path[0] ? o->path : "/");
    c->max_body = o->max_body;

    struct evhttp_request *evreq = evhttp_request_new(on_evreq_done, c);
    evhttp_request_set_error_cb(evreq, on_evreq_error);
    if (streaming) {
        evhttp_request_set_header_cb(evreq, on_evreq_headers);
        evhttp_request_set_chunked_cb(evreq, on_evreq_chunk);
    }
    struct evkeyvalq *out = evhttp_request_get_output_headers(evreq);
    evhttp_add_header(out, "Host", c->target);
    for (size_t i = 0; i < o->nheaders; i++)
        evhttp_add_header(out, o->headers[i].name, o->headers[i].value);
    if (o->body_len > 0 || o->method == HTTP_POST || o->method == HTTP_PUT) {
        char cl[32];
        snprintf(cl, sizeof(cl), "%zu", o->body_len);
        evhttp_remove_header(out, "Content-Length");
        evhttp_add_header(out, "Content-Length", cl);
    }
    if (o->body_len > 0)
        evbuffer_add(evhttp_request_get_output_buffer(evreq), o->body,
                     o->body_len);
    c->unsent = evreq;

    struct http_client_pool *p = streaming ? NULL : o->pool;
    if (p != NULL) {
        c->pool = p;
        p->active++;
        if (p->busy >= p->max_conns) {
            /* Wait for a connection of the pool (in order). */
            c->wprev = p->wtail;
            if (p->wtail != NULL)
                p->wtail->wnext = c;
            else
                p->whead = c;
            p->wtail = c;
            return c;
        }
    }
    dispatch(c);
    return c;
}

struct http_client_req *http_client_request(struct event_base *base,
                                            const struct http_client_options *o,
                                            http_client_done_fn done, void *arg)
{
    struct http_client_req *c = start(base, o, false);
    c->done = done;
    c->done_arg = arg;
    return c;
}

struct http_client_req *
http_client_stream(struct event_base *base, const struct http_client_options *o,
                   const struct http_client_stream_cbs *cbs)
{
    struct http_client_req *c = start(base, o, true);
    c->cbs = *cbs;
    return c;
}

void http_client_cancel(struct http_client_req *c)
{
    if (c == NULL || c->in_final_cb || c->cancelled)
        return;
    c->cancelled = true;
    if (c->in_user_cb) {
        /* evhttp is inside this connection: free it from the loop. */
        schedule_finish(c);
        return;
    }
    c->evreq = NULL;
    client_free(c);
}

/* ---- Redirects ---- */

/* See http_client.h. */
int http_location_parse(const char *loc, char *host, size_t hostlen,
                        uint16_t *port)
{
    const char *p = loc;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *scheme = strstr(p, "://");
    if (scheme != NULL && scheme < p + strcspn(p, "/"))
        p = scheme + 3;
    else if (p[0] == '/' && p[1] == '/')
        p += 2;
    size_t alen = strcspn(p, "/?# \t");
    if (alen == 0)
        return -1;
    const char *h = p, *hend, *colon = NULL;
    if (*p == '[') {
        const char *rb = memchr(p, ']', alen);
        if (rb == NULL)
            return -1;
        h = p + 1;
        hend = rb;
        if (rb + 1 < p + alen) {
            if (rb[1] != ':')
                return -1;
            colon = rb + 1;
        }
    } else {
        colon = memchr(p, ':', alen);
        hend = colon != NULL ? colon : p + alen;
    }
    size_t hlen = (size_t)(hend - h);
    if (hlen == 0 || hlen >= hostlen)
        return -1;
    unsigned long v = 5050;
    if (colon != NULL) {
        const char *d = colon + 1;
        size_t dlen = (size_t)(p + alen - d);
        if (dlen == 0 || dlen > 5)
            return -1;
        v = 0;
        for (size_t i = 0; i < dlen; i++) {
            if (d[i] < '0' || d[i] > '9')
                return -1;
            v = v * 10 + (unsigned long)(d[i] - '0');
        }
        if (v == 0 || v > 65535)
            return -1;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (uint16_t)v;
    return 0;
}

int http_client_redirect(const struct http_client_response *r, char *host,
                         size_t hostlen, uint16_t *port)
{
    int status = http_client_status(r);
    if (status != 301 && status != 302 && status != 303 && status != 307 &&
        status != 308 && status != 503)
        return -1;
    const char *loc = http_client_header(r, "Location");
    if (loc == NULL)
        return -1;
    return http_location_parse(loc, host, hostlen, port);
}
