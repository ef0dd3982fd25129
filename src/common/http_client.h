/*
 * HTTP client edge: asynchronous requests on the caller's event_base, over
 * evhttp's client side, so that the agent and libofferd never see libevent's
 * HTTP types.
 *
 * Two kinds of request, each on a connection of its own (opened for it and
 * closed after it), unless a one-shot request names a pool (below):
 *  - http_client_request: send a request, get one callback with the whole
 *    response (status, headers, body) or a failure.
 *  - http_client_stream: send a request whose response is a long-lived
 *    chunked stream (Mesos SUBSCRIBE): a callback when the status line and
 *    headers arrive (e.g. to read Mesos-Stream-Id), one callback per HTTP
 *    chunk as it arrives, and a close callback when the stream ends, fails
 *    or is refused (a non-200 status, whose body is then delivered whole to
 *    the close callback instead of as chunks).
 *
 * Callbacks run from the event loop; inside any of them the owner may start
 * other requests or cancel this one. After the final callback (done or
 * close) the handle is dead; http_client_cancel ends a request early, runs
 * no further callback, and also kills the handle. Responses passed to
 * callbacks are borrowed for the callback's duration.
 *
 * With TLS (LIBPROCESS_SSL_ENABLED, or HTTP_CLIENT_TLS_ON) the request goes
 * over https; a refused handshake fails it with a "TLS: ..." reason.
 *
 * Hosts should be numeric addresses: evhttp resolves names with a blocking
 * lookup when no DNS base is given.
 *
 * Known gap: evhttp 2.1 buffers each response chunk whole before delivering
 * it, with no per-chunk size limit, so a hostile server could make a
 * streaming client buffer one huge chunk. Servers are offerd's own master.
 */
#ifndef OFFERD_COMMON_HTTP_CLIENT_H
#define OFFERD_COMMON_HTTP_CLIENT_H

#include "common/http.h"

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_client_req;
struct http_client_response;

/* Default largest response body of http_client_request. */
#define HTTP_CLIENT_DEFAULT_MAX_BODY ((size_t)64 << 20)

/* Whether a request speaks TLS (common/tls.h). */
enum http_client_tls {
    HTTP_CLIENT_TLS_DEFAULT = 0, /* as LIBPROCESS_SSL_ENABLED says */
    HTTP_CLIENT_TLS_ON,          /* https (e.g. an https:// URL) */
    HTTP_CLIENT_TLS_OFF,         /* plain http */
    HTTP_CLIENT_TLS_INSECURE,    /* https, verifying nothing (a task's own
                                    server, as curl -k) */
};

/* What to send. Every pointer is borrowed for the duration of the call that
 * takes it (everything is copied). */
struct http_client_options {
    const char *host; /* numeric address, e.g. "127.0.0.1" */
    uint16_t port;
    enum http_method method; /* HTTP_GET, HTTP_POST, ... */
    const char *path;        /* with the query string, e.g. "/state?x=1" */
    const struct http_header *headers; /* extra headers (Host and
                                          Content-Length are added) */
    size_t nheaders;
    const void *body; /* may be NULL when body_len is 0 */
    size_t body_len;
    int timeout_ms;  /* whole request (stream: until the headers arrive,
                        none after); 0: none of ours, but evhttp's own
                        idle timeouts (45 s to connect, 50 s between reads)
                        still end a one-shot request */
    size_t max_body; /* http_client_request only; 0: the default */
    enum http_client_tls tls; /* https: the server's certificate is
                                 verified as LIBPROCESS_SSL_* say */
    /* http_client_request only: reuse a kept-alive connection of this
     * pool to the same host, port and TLS mode, and give the connection
     * back to it after a response. NULL: a connection of its own. */
    struct http_client_pool *pool;
};

/* ---- Responses ---- */

/* HTTP status, or 0 when no response came (see http_client_error). */
int http_client_status(const struct http_client_response *r);

/* One-line reason when status is 0 (connection refused, timed out, ...);
 * NULL otherwise. */
const char *http_client_error(const struct http_client_response *r);

/* Response header value (case-insensitive), or NULL. */
const char *http_client_header(const struct http_client_response *r,
                               const char *name);

/* The body (*len OUT), never NULL, followed by a NUL not counted in *len.
 * For a stream, the body of a refused (non-200) response; empty otherwise. */
const uint8_t *http_client_body(const struct http_client_response *r,
                                size_t *len);

/* ---- One-shot requests ---- */

typedef void (*http_client_done_fn)(const struct http_client_response *r,
                                    void *arg);

/* Start a request; done(r, arg) runs exactly once from the loop unless the
 * request is cancelled first. Returns the handle (valid until done runs or
 * http_client_cancel). Never fails: even an immediate failure is reported
 * through done. */
struct http_client_req *http_client_request(struct event_base *base,
                                            const struct http_client_options *o,
                                            http_client_done_fn done,
                                            void *arg);

/* ---- Kept-alive connections ----
 *
 * A client that sends many one-shot calls to one server (an agent's
 * updates, a framework's calls) saves the server an accept, a shutdown and
 * a close per call, and itself a connect, by keeping a few connections
 * open between calls (HTTP/1.1 keep-alive). A pool has at most max_conns
 * connections in use at once: a request that names it takes an idle
 * connection to the same target (host, port, TLS mode) or opens one, and
 * when max_conns are in use it waits, in order, for one to come back (its
 * timeout_ms runs meanwhile). After a response the connection goes back to
 * the pool; one that failed, timed out or was cancelled is closed. At most
 * max_conns wait idle; one idle for idle_ms is closed, which should be
 * shorter than the server's own idle timeout (offerd's master:
 * --http_idle_timeout, 10 s) so that the server rarely closes a connection
 * as a request goes out on it (the request then fails as on a connection
 * of its own: "connection closed"). A connection the server closed while
 * idle is opened again. */
struct http_client_pool;

/* Connections a pool uses at once by default, and how long an idle one
 * stays open. */
#define HTTP_CLIENT_POOL_MAX_CONNS 8
#define HTTP_CLIENT_POOL_IDLE_MS   2000

/* A pool on base: max_conns and idle_ms as above (0: the defaults).
 * Never fails. */
struct http_client_pool *http_client_pool_new(struct event_base *base,
                                              size_t max_conns, int idle_ms);

/* Close the pool's idle connections and free it; requests still running
 * on it finish normally and close their connections. NULL is ignored. */
void http_client_pool_free(struct http_client_pool *p);

/* Connections the pool opened, and requests that reused one, so far. */
void http_client_pool_counts(const struct http_client_pool *p, uint64_t *opened,
                             uint64_t *reused);

/* ---- Streaming requests ---- */

struct http_client_stream_cbs {
    /* The status line and headers arrived (any status). May be NULL. */
    void (*on_headers)(const struct http_client_response *r, void *arg);
    /* One HTTP chunk of a 200 response (data borrowed for the call). */
    void (*on_chunk)(const uint8_t *data, size_t len, void *arg);
    /* The stream ended: status 200 and no error when the server ended it
     * gracefully; status 0 and an error when the connection failed or timed
     * out; another status (with its body) when refused. Runs exactly once
     * unless cancelled first; the handle is dead after it. */
    void (*on_close)(const struct http_client_response *r, void *arg);
    void *arg;
};

/* Start a streaming request; see the callbacks above. Returns the handle. */
struct http_client_req *
http_client_stream(struct event_base *base, const struct http_client_options *o,
                   const struct http_client_stream_cbs *cbs);

/* ---- Both ---- */

/* Abandon the request: close its connection at the next safe point, run no
 * further callback, and free it. The handle is dead after the call. Valid
 * only before the final callback ran (or inside any callback, including the
 * final one, where it is a no-op). */
void http_client_cancel(struct http_client_req *c);

/* ---- Redirects ---- */

/* Parse the Location header of a redirect into host (hostlen bytes, a
 * name or an address without brackets) and *port. Masters write it as
 * Mesos does ("//host:port/path"), or as "http://host:port/path" or
 * "host:port"; a missing port means 5050 (Mesos's), IPv6 hosts are in
 * brackets. Returns 0, or -1 when no host can be found (host and *port
 * untouched). */
int http_location_parse(const char *loc, char *host, size_t hostlen,
                        uint16_t *port);

/* Where r sends the client: when r is a redirect (301, 302, 303, 307,
 * 308, or a 503 naming the leading master in Location, as a master that
 * does not lead answers) with a Location http_location_parse accepts,
 * returns 0 with its host and *port; else -1 (nothing written). */
int http_client_redirect(const struct http_client_response *r, char *host,
                         size_t hostlen, uint16_t *port);

#endif
