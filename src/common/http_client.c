/*
 * HTTP client over evhttp's client side. One evhttp connection per request;
 * the outcome is copied out of evhttp as it arrives, and the final callback
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

static void client_free(struct http_client_req *c)
{
    if (c->evcon != NULL) {
        /* Frees a request still queued on it, without callbacks. */
        evhttp_connection_free(c->evcon);
    }
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

    struct tls_client *tc = NULL;
    const char *why = NULL;
    int tls_on = 0;
    if (o->tls == HTTP_CLIENT_TLS_INSECURE) {
        tc = tls_client_insecure();
        tls_on = tc != NULL ? 1 : -1;
    } else if (o->tls != HTTP_CLIENT_TLS_OFF) {
        tls_on = tls_client_process(&tc, &why);
    }
    if (tls_on < 0 || (o->tls == HTTP_CLIENT_TLS_ON && tc == NULL)) {
        fail(c, "%s: %s", c->target, why != NULL ? why : "TLS unavailable");
        return c;
    }
    c->tls = o->tls == HTTP_CLIENT_TLS_ON || tls_on == 1;
    if (c->tls) {
        char err[256];
        struct bufferevent *bev =
            tls_client_bev(tc, base, o->host, err, sizeof(err));
        if (bev == NULL) {
            fail(c, "%s: %s", c->target, err);
            return c;
        }
        /* evhttp owns bev from here (freed with the connection). */
        c->evcon = evhttp_connection_base_bufferevent_new(base, NULL, bev,
                                                          o->host, o->port);
        if (c->evcon == NULL)
            bufferevent_free(bev);
    } else {
        c->evcon = evhttp_connection_base_new(base, NULL, o->host, o->port);
    }
    if (c->evcon == NULL) {
        fail(c, "%s: cannot create a connection", c->target);
        return c;
    }
    if (!streaming)
        evhttp_connection_set_max_body_size(
            c->evcon, (ev_ssize_t)(o->max_body ? o->max_body
                                               : HTTP_CLIENT_DEFAULT_MAX_BODY));

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
    c->evreq = evreq;
    const char *path = o->path != NULL && o->path[0] ? o->path : "/";
    if (evhttp_make_request(c->evcon, evreq, ev_method(o->method), path) != 0) {
        c->evreq = NULL;
        fail(c, "%s: cannot start the request", c->target);
    }
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
