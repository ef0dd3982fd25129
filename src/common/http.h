/*
 * HTTP server edge: a thin layer over libevent's evhttp so that handlers never
 * see libevent. Only src/common/http*.c include <event2/http.h>.
 *
 * A server runs on the caller's event_base. Routes are exact paths with a
 * method mask; an unknown path gets 404, a known path with another method
 * 405 with an Allow header (as Mesos's libprocess does). Aliases (Mesos serves
 * both /state and /master/state) are simply routes registered twice.
 *
 * Handlers get a struct http_request: method, path, decoded query
 * parameters, headers, the body as contiguous bytes (already checked against
 * the body limit), the peer address, and content negotiation for Mesos's two
 * encodings. Every field is copied out of libevent when the request arrives,
 * so all accessors stay valid for the request's whole life, even after the
 * client went away.
 * Tests drive handlers with fake requests and streams instead, which keep
 * this whole contract without a socket (common/http_fake.h).
 *
 * Lifetime of a request (the contract the master relies on):
 *  - A handler replies before returning (http_reply*, or http_stream_start),
 *    and the request is freed when the handler returns.
 *  - Or it returns without replying: the request is *deferred* and stays
 *    valid until the owner replies later, exactly once (e.g. after a registry
 *    write). If the client disconnects meanwhile, the reply is a no-op that
 *    still frees the request. After any http_reply* call the pointer is dead.
 *    Gap: evhttp 2.1 stops reading a connection while its request awaits a
 *    reply, so a deferred request learns of a disconnect only when the reply
 *    (or a stream start) is written; http_request_is_closed turns true when
 *    the server is freed, or when evhttp reports the connection gone.
 *  - http_server_free marks pending deferred requests closed; their owners
 *    still reply (a no-op) to free them.
 *
 * Streams (the basis of SUBSCRIBE): http_stream_start turns a request into a
 * 200 chunked response; each http_stream_send writes one HTTP chunk of its
 * own. When the bytes waiting in the connection's output buffer exceed the
 * stream's cap after a send (a slow consumer), the stream is cut off; when the
 * peer disconnects, the stream is closed. In both cases the stream's close
 * callback runs once, from the event loop at a safe point (never from inside
 * an http_* call of the owner), and sends fail from then on. The owner
 * releases the stream with http_stream_close exactly once, whether or not it
 * was closed by then; on an open stream that also ends the response
 * gracefully (terminating chunk). The callback never runs after
 * http_stream_close. Streams, like deferred requests, are freed at a safe
 * point: marked first, freed after the callback chain unwinds (STYLE.md,
 * "Close and free at a safe point").
 *
 * Known gaps forced by libevent 2.1 (evhttp_set_errorcb is 2.2 only): replies
 * that libevent makes itself carry its own small HTML body instead of a
 * one-line text/plain reason. They are: 413 for a body over the limit (the
 * status is right, checked in tests), 413/400 for headers over the header
 * limit, 400 for a malformed request line or an unknown method token, and
 * 417/413 around "Expect: 100-continue". Everything offerd answers itself is
 * text/plain.
 */
#ifndef OFFERD_COMMON_HTTP_H
#define OFFERD_COMMON_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_server;
struct http_request;
struct http_stream;

/* Request methods, as bits so that routes can take a mask. */
enum http_method {
    HTTP_GET = 1 << 0,
    HTTP_POST = 1 << 1,
    HTTP_PUT = 1 << 2,
    HTTP_DELETE = 1 << 3,
    HTTP_HEAD = 1 << 4,
    HTTP_OPTIONS = 1 << 5,
    HTTP_PATCH = 1 << 6,
    HTTP_TRACE = 1 << 7,
    HTTP_CONNECT = 1 << 8,
};

/* The two body encodings Mesos speaks. The values equal enum jpb_format's
 * (JPB_JSON, JPB_PROTOBUF) so a cast converts between them. */
enum http_encoding {
    HTTP_ENC_JSON = 0,     /* application/json */
    HTTP_ENC_PROTOBUF = 1, /* application/x-protobuf */
};

#define HTTP_CONTENT_JSON     "application/json"
#define HTTP_CONTENT_PROTOBUF "application/x-protobuf"
#define HTTP_CONTENT_TEXT     "text/plain; charset=utf-8"

/* One header for calls that take a list. Both strings are borrowed. */
struct http_header {
    const char *name;
    const char *value;
};

/* Server limits; a zero field takes the default. */
#define HTTP_DEFAULT_MAX_BODY    ((size_t)4 << 20) /* 4 MiB */
#define HTTP_DEFAULT_MAX_HEADERS ((size_t)64 << 10)
#define HTTP_DEFAULT_TIMEOUT     60
#define HTTP_DEFAULT_STREAM_CAP  ((size_t)16 << 20)

struct http_server_options {
    size_t max_body;    /* largest request body in bytes; larger: 413 */
    size_t max_headers; /* largest request line plus headers in bytes */
    int timeout_secs;   /* idle time allowed while reading a request or
                           writing a reply, -1 for none; open streams have
                           no timeout */
    /* Holding under abuse (all 0 by default: off). */
    size_t max_conns;        /* open connections; past it the least useful
                                idle ones are closed (see below); 0: none */
    int64_t idle_timeout_ns; /* a connection must complete a request header
                                within this of its accept or of its last
                                reply, or it is closed; 0: no limit */
    uint64_t min_body_rate;  /* bytes/s a request body must average once
                                idle_timeout_ns has passed since its header
                                (slowloris); 0: no limit */
    size_t max_buffered;     /* bytes of requests being received, over all
                                connections; a request that would pass it is
                                answered 503 and its connection closed;
                                0: no budget */
};

/*
 * Holding under abuse. Connections are tracked from accept to close
 * (common/http_conn.c). A connection is busy while one of its requests is
 * with a handler (deferred) or has become a stream: timeouts and shedding
 * never touch it. An idle connection (reading a request) is closed when it
 * sends no complete header within idle_timeout_ns, or a body slower than
 * min_body_rate. Past max_conns, each new connection closes one idle
 * connection: first those that never completed a request, oldest first, then
 * idle keep-alive ones; with nothing to close, accepting pauses until one
 * goes. When accept() itself fails (EMFILE, ENFILE ...) the listener pauses
 * with a backoff (100 ms doubling to 1 s), logging one line per episode.
 */

/* Counters of a server's connections. */
struct http_server_stats {
    size_t conns;            /* open now */
    size_t buffered;         /* bytes of requests being received now */
    uint64_t shed;           /* idle connections closed for room */
    uint64_t timed_out;      /* closed: no complete header in time */
    uint64_t slow_bodies;    /* closed: body below the minimum rate */
    uint64_t over_budget;    /* answered 503: over max_buffered */
    uint64_t accept_pauses;  /* accept() failures that paused the listener */
    uint64_t tls_handshakes; /* TLS handshakes completed */
    uint64_t tls_handshake_failures; /* TLS handshakes refused or broken */
    uint64_t tls_plain; /* plain connections accepted (downgrade) */
};

/* Fill *out (OUT) with s's counters. */
void http_server_stats(const struct http_server *s,
                       struct http_server_stats *out);

/* Raise this process's soft RLIMIT_NOFILE to its hard limit and return the
 * connections a server should allow for it: the limit less a reserve for
 * files, the registry and outgoing connections (an eighth, at least 64).
 * *fd_limit (OUT, may be NULL) is the limit now in force. */
size_t http_max_conns_for_fd_limit(uint64_t *fd_limit);

/* Name of one method bit ("GET"), or "?" for anything else. */
const char *http_method_name(enum http_method m);

/* Encoding named by a media type such as a Content-Type value
 * ("application/json; charset=utf-8"): parameters after ';' and case are
 * ignored. Returns 0 and *out (OUT), or -1 for any other type or NULL. */
int http_media_type_encoding(const char *media_type, enum http_encoding *out);

/* ---- Server ---- */

/* Called for each request on a route. See "Lifetime of a request" above. */
typedef void (*http_handler_fn)(struct http_request *req, void *arg);

/* Create a server on base (borrowed; must outlive the server) with opts
 * (NULL: all defaults). It listens nowhere until http_server_bind. */
struct http_server *http_server_new(struct event_base *base,
                                    const struct http_server_options *opts);

/* Listen on ip:port (port 0 picks a free port). Returns 0 and the bound port
 * in *bound_port (OUT, may be NULL), or -1 with a one-line reason in err.
 * May be called more than once to listen on several addresses. The first
 * call reads LIBPROCESS_SSL_* (common/tls.h): with TLS enabled every
 * connection speaks it, and a bad TLS configuration fails the call. */
int http_server_bind(struct http_server *s, const char *ip, uint16_t port,
                     uint16_t *bound_port, char *err, size_t errlen);

/* Route requests for the exact path (no query, e.g. "/master/state") whose
 * method is in the mask methods (enum http_method bits) to fn(req, arg). A
 * route that takes GET also takes HEAD (evhttp leaves the body out).
 * path is copied; arg is borrowed. Returns 0, or -1 when path is already
 * routed or does not start with '/'. */
int http_server_route(struct http_server *s, const char *path, unsigned methods,
                      http_handler_fn fn, void *arg);
/* As http_server_route, for every path that starts with prefix (e.g.
 * "/quota/" for Mesos's DELETE /quota/<role>) and has no exact route; the
 * longest matching prefix wins. */
int http_server_route_prefix(struct http_server *s, const char *prefix,
                             unsigned methods, http_handler_fn fn, void *arg);

/* A gate every routed request passes before its handler (after 404/405):
 * returns true to let the handler run, or false after replying itself
 * (401, 403). One per server; NULL removes it. Fake requests dispatched
 * through the server (http_fake_dispatch_server) pass it too. */
typedef bool (*http_gate_fn)(struct http_request *req, void *arg);
void http_server_set_gate(struct http_server *s, http_gate_fn fn, void *arg);

/* Stop listening, close every connection and free the server; NULL is
 * ignored. Open streams and deferred requests are marked closed without
 * running callbacks and stay the owner's to release (http_stream_close,
 * http_reply*). Call it from outside the server's own callbacks. */
void http_server_free(struct http_server *s);

/* Requests the server took in whose handler returned without replying and
 * that are still waiting for their reply (the client still connected).
 * Walks them: as many steps as there are. Fake requests never count. */
size_t http_server_pending_requests(const struct http_server *s);

struct prom_writer;
/* Write the histogram family name (help, type histogram) of s's request
 * latencies to w (common/prom.h): one series per route, labelled
 * endpoint="<path>" (a prefix route's path with "*" appended), in
 * registration order, each from its first request on (a route never asked
 * is left out, as client libraries leave out a labelled series until its
 * first observation), then endpoint="other", always, for requests no route
 * matched (404, 405). A request is timed from its arrival to its reply, or to
 * the start of its stream; fake requests are not timed. Nothing is written if
 * w refuses the family (prom_family). */
void http_server_write_latency(const struct http_server *s,
                               struct prom_writer *w, const char *name,
                               const char *help);

/* ---- Request accessors (valid until the request is replied to) ---- */

enum http_method http_request_method(const struct http_request *req);

/* The path without the query string, as sent (not percent-decoded). */
const char *http_request_path(const struct http_request *req);

/* The decoded value of query parameter name (the first if repeated), or NULL
 * when absent. "?a=1&b=x%20y" gives "1" for a, "x y" for b. */
const char *http_request_query(const struct http_request *req,
                               const char *name);

/* The value of header name (case-insensitive; the first if repeated), or
 * NULL when absent. */
const char *http_request_header(const struct http_request *req,
                                const char *name);

/* The body: *len (OUT) bytes at the returned pointer, which is never NULL
 * and is followed by a NUL byte not counted in *len (so text bodies can be
 * used as strings). At most the server's max_body bytes. */
const uint8_t *http_request_body(const struct http_request *req, size_t *len);

/* The peer as "ip:port". */
const char *http_request_peer(const struct http_request *req);

/* True once the client disconnected or the server was freed: replies are
 * then no-ops (but still free the request). */
bool http_request_is_closed(const struct http_request *req);

/* ---- Content negotiation ---- */

/* The request body's encoding from its Content-Type. Returns 0 and *out
 * (OUT), or -1 when the header is absent or names another type. */
int http_request_content_encoding(const struct http_request *req,
                                  enum http_encoding *out);

/* The reply encoding from the Accept header: a listed encoding with the
 * highest q (q=0 excludes); the wildcards (any type, or "application/" with
 * any subtype) accept both; when several tie, or Accept is absent or empty,
 * fallback wins if it is among them, else JSON. Returns 0 and *out (OUT), or -1
 * when Accept names neither encoding (reply 406). */
int http_request_accept_encoding(const struct http_request *req,
                                 enum http_encoding fallback,
                                 enum http_encoding *out);

/* Both of the above for a call with a body, as Mesos's API endpoints do: a
 * missing or other Content-Type is answered 415, an unacceptable Accept 406
 * (each with a one-line reason), and -1 is returned: the request has been
 * replied to and the pointer is dead. Otherwise returns 0 with the body
 * encoding in *body and the reply encoding (Accept, defaulting to the body's
 * encoding) in *reply (both OUT). */
int http_negotiate(struct http_request *req, enum http_encoding *body,
                   enum http_encoding *reply);

/* The value of field name in an application/x-www-form-urlencoded body of
 * len bytes ("a=1&b=x%20y"), decoded into a new string (caller frees), or
 * NULL when absent or malformed. */
char *http_form_value(const char *body, size_t len, const char *name);

/* ---- Replies (each frees the request; the pointer is dead after) ---- */

/* Add a header to the coming reply or stream (e.g. Location,
 * Mesos-Stream-Id). Both strings are copied. A name or value holding CR or
 * LF is dropped. */
void http_reply_header(struct http_request *req, const char *name,
                       const char *value);

/* Reply status with len bytes of body (body may be NULL when len is 0) of
 * type content_type (NULL: no Content-Type header). */
void http_reply(struct http_request *req, int status, const char *content_type,
                const void *body, size_t len);

/* Reply status with a one-line text/plain reason (printf format; a newline
 * is appended, and CR/LF inside the text become spaces). For 4xx and 5xx;
 * 405 also gets its Allow header from the route. */
void http_reply_error(struct http_request *req, int status, const char *fmt,
                      ...) __attribute__((format(printf, 3, 4)));

/* Reply status with json (borrowed) as compact application/json. */
void http_reply_json(struct http_request *req, int status, const json_t *json);

/* Whether cb is a JavaScript name path as ?jsonp= accepts it (below). */
bool http_jsonp_callback_ok(const char *cb);

/* As http_reply_json, for read endpoints that take Mesos's ?jsonp=<callback>
 * query parameter: with it, the body is "<callback>(<json>)" of type
 * text/javascript (libprocess's OK(json, jsonp)). A callback that is not a
 * JavaScript name path (letters, digits, '_', '$' and '.' between names, at
 * most 128 bytes, not starting with a digit) is answered 400 instead. */
void http_reply_json_jsonp(struct http_request *req, int status,
                           const json_t *json);

/* As http_reply_json_jsonp, for a body already written as JSON text (len
 * bytes, borrowed; common/json_out.h). */
void http_reply_json_text_jsonp(struct http_request *req, int status,
                                const char *text, size_t len);

/* ---- Streams ---- */

/* Why a stream's close callback ran. */
enum http_close_reason {
    HTTP_CLOSE_PEER = 1, /* the peer disconnected (or had before start) */
    HTTP_CLOSE_SLOW = 2, /* output queue over the cap: cut off */
};

/* Called once when the stream closes by itself; see the top comment. The
 * stream stays valid (sends fail) until the owner calls http_stream_close,
 * which it may do inside this callback. */
typedef void (*http_stream_close_fn)(struct http_stream *s,
                                     enum http_close_reason why, void *arg);

/* Start a 200 chunked reply of content_type with the headers added by
 * http_reply_header, consuming req (the request pointer is dead after;
 * works on a deferred request too). max_pending caps the bytes queued in
 * the connection's output buffer (0: HTTP_DEFAULT_STREAM_CAP). close_cb may
 * be NULL; arg is borrowed. Returns the stream, which the owner releases
 * with http_stream_close. If the client is already known to be gone, the
 * stream is returned closed and its callback runs soon with
 * HTTP_CLOSE_PEER (after http_server_free: closed, and no callback). */
struct http_stream *http_stream_start(struct http_request *req,
                                      const char *content_type,
                                      size_t max_pending,
                                      http_stream_close_fn close_cb, void *arg);

/* As http_stream_start, for one response body sent in pieces (a large
 * read written as it is produced): no cap on the bytes pending (the owner
 * paces itself by http_stream_pending), and a fake request reads back as an
 * ordinary reply whose body is the chunks sent, replied (status 200) once
 * the owner closes the stream. */
struct http_stream *http_body_start(struct http_request *req,
                                    const char *content_type,
                                    http_stream_close_fn close_cb, void *arg);

/* Replace the stream's cap (max_pending) with a drain policy
 * (common/stream_drain.h): past policy->soft_cap the stream is cut only
 * when its reader takes nothing for policy->grace_ns, or at once past
 * policy->hard_cap. */
struct stream_drain_policy;
void http_stream_set_drain(struct http_stream *s,
                           const struct stream_drain_policy *policy);

/* Send len bytes as one HTTP chunk (len 0 sends nothing). Returns 0, or -1
 * when the stream is closed, including when this send pushed the output
 * queue over the cap (the stream is then cut off; the callback follows). */
int http_stream_send(struct http_stream *s, const void *data, size_t len);

/* Send one RecordIO record ("<len>\n<data>") as one HTTP chunk; as
 * http_stream_send. */
int http_stream_send_record(struct http_stream *s, const void *data,
                            size_t len);

/* Bytes waiting in the connection's output buffer (0 once closed). */
size_t http_stream_pending(const struct http_stream *s);

/* True once the stream is closed (peer gone, cut off or server freed). */
bool http_stream_is_closed(const struct http_stream *s);

/* The peer as "ip:port". */
const char *http_stream_peer(const struct http_stream *s);

/* Release the stream: if still open, end the response gracefully (the
 * terminating chunk is queued after the data already sent). The close
 * callback will not run after this; the pointer is dead. NULL is ignored. */
void http_stream_close(struct http_stream *s);

#endif
