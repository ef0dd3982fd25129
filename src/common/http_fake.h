/*
 * Test seam of common/http: a fake request, with no socket and no evhttp
 * connection, that any http_handler_fn can be driven with, and a fake
 * stream whose output a test reads back. Only tests (and benchmarks)
 * include this header; the code lives in http.c, where a struct
 * http_request or http_stream is either a real evhttp one or a fake one and
 * every accessor, reply and stream function of http.h works on both.
 *
 * One struct http_fake is one exchange: the test builds the request in it,
 * hands the request to a handler, and reads back what the handler answered,
 * at once or later (a deferred reply, a stream's records). The test owns the
 * http_fake; it outlives the request (dead after its reply, as always) and
 * the stream, and keeps the reply, the chunks and the records until
 * http_fake_free.
 *
 *     struct http_fake *x = http_fake_new(base, HTTP_POST, "/reserve?x=1");
 *     http_fake_add_header(x, "Content-Type", "application/json");
 *     http_fake_set_body(x, "{}", 2);
 *     http_fake_dispatch(x, handler, arg);  // as the server calls it
 *     ... run the loop if the handler deferred its reply ...
 *     ck_assert(http_fake_replied(x));
 *     ck_assert_int_eq(http_fake_status(x), 202);
 *     http_fake_free(x);
 *
 * Safe point. A fake stream's close callback (peer gone, slow consumer)
 * never runs inside an http_* or http_fake_* call other than
 * http_fake_run_pending. It runs on the next http_fake_run_pending(x), or,
 * when the fake was made with an event_base, from an event activated on it
 * (so the next turn of the loop, e.g. event_base_loop(base,
 * EVLOOP_NONBLOCK), runs it), whichever comes first; it runs once.
 *
 * What the fake does not model: evhttp's own replies (body and header
 * limits, malformed request lines), its extra reply headers (Date,
 * Content-Length, Transfer-Encoding) and HTTP chunk framing. A fake request
 * never joins a server's lists, so http_server_free leaves it alone.
 */
#ifndef OFFERD_COMMON_HTTP_FAKE_H
#define OFFERD_COMMON_HTTP_FAKE_H

#include "common/http.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct http_fake;

/* The peer of a fake request unless http_fake_set_peer says otherwise
 * (TEST-NET-1, RFC 5737). */
#define HTTP_FAKE_DEFAULT_PEER "192.0.2.1:40000"

/* ---- Building the request ---- */

/* A new exchange for a request of method (one bit) to target, a path with
 * an optional query string ("/reserve?x=1"), copied. base (borrowed; may be
 * NULL) is where pending stream close callbacks are scheduled (see the top
 * comment); it must outlive the fake. Free with http_fake_free. */
struct http_fake *http_fake_new(struct event_base *base,
                                enum http_method method, const char *target);

/* Add a request header (both copied; repeated names are kept in order). */
void http_fake_add_header(struct http_fake *x, const char *name,
                          const char *value);

/* Set the request body to len bytes at body (copied; NULL when len is 0). */
void http_fake_set_body(struct http_fake *x, const void *body, size_t len);

/* Set the peer string ("ip:port", copied). */
void http_fake_set_peer(struct http_fake *x, const char *peer);

/* Build the request once and return it, for calling a handler directly (it
 * is then not "in a handler": a reply frees it at once, and a handler that
 * returns without replying has deferred it). Path and query are taken from
 * the target exactly as the server takes them from a request line. Returns
 * NULL when the target does not parse, its query string is malformed (the
 * server would answer 400 before any handler), or the request was built
 * already. The request belongs to whoever replies to it, as always. */
struct http_request *http_fake_request(struct http_fake *x);

/* Build the request and call fn(req, arg) as the server's dispatcher does:
 * a reply inside fn frees the request when fn returns, and fn returning
 * without a reply defers it. A target that does not parse or a malformed
 * query string is answered 400 without calling fn, as the server does.
 * Does nothing when the request was built already. */
void http_fake_dispatch(struct http_fake *x, http_handler_fn fn, void *arg);

/* As http_fake_dispatch, but through the routes of server s (borrowed; only
 * its route table and body limit are used, it needs no bound socket): an
 * unknown path is a 404, a method the route does not take a 405 with its
 * Allow header, a body over the limit a 413. The request does not join s's
 * lists of deferred requests or streams. */
void http_fake_dispatch_server(struct http_fake *x, struct http_server *s);

/* ---- The peer ---- */

/* The client goes away: a deferred request reads as closed (its reply will
 * be a no-op that frees it, and is still recorded here, see
 * http_fake_replied); an open stream closes and its callback (
 * HTTP_CLOSE_PEER) becomes pending; a stream started later starts closed,
 * with the callback pending. Idempotent. */
void http_fake_disconnect(struct http_fake *x);

/* Stall (true) or resume (false) the peer's reading. While stalled, every
 * byte a stream sends stays in http_stream_pending; a send that takes it
 * over the stream's cap cuts the stream off as the server does (the send
 * fails, the callback with HTTP_CLOSE_SLOW becomes pending). Not stalled
 * (the default), the peer reads everything at once. */
void http_fake_stall(struct http_fake *x, bool stalled);

/* The peer reads every pending byte (http_stream_pending drops to 0). */
void http_fake_drain(struct http_fake *x);

/* Run the stream's close callback now if it is pending. Returns the number
 * of callbacks run (0 or 1). Call it from outside the handler and the
 * close callback. */
int http_fake_run_pending(struct http_fake *x);

/* ---- Reading back ---- */

/* True once the handler (or the owner, later) replied or started a stream:
 * the request is dead. True also when the reply was made after
 * http_fake_disconnect (a real server would have dropped it). */
bool http_fake_replied(const struct http_fake *x);

/* The status replied (200 for a stream), 0 until then. */
int http_fake_status(const struct http_fake *x);

/* The reply's Content-Type, NULL when it has none or before the reply. */
const char *http_fake_content_type(const struct http_fake *x);

/* The reply body: *len (OUT) bytes at the returned pointer, never NULL and
 * followed by a NUL not counted in *len (so text can be compared as a
 * string). Empty before the reply and for a stream (see the chunks). A
 * reply to HEAD keeps its body here, though evhttp would not send it. */
const uint8_t *http_fake_body(const struct http_fake *x, size_t *len);

/* The value of reply header name (case-insensitive, the first if repeated;
 * Content-Type included), or NULL. Borrowed until http_fake_free. */
const char *http_fake_reply_header(const struct http_fake *x, const char *name);

/* True when the request was turned into a stream. */
bool http_fake_is_stream(const struct http_fake *x);

/* Chunks the stream accepted (sends that returned 0, in order; a send that
 * failed, e.g. the one that cut a slow stream off, is not among them). */
size_t http_fake_chunk_count(const struct http_fake *x);

/* Chunk i (0-based): *len (OUT) bytes, borrowed until http_fake_free; NULL
 * when i is out of range. */
const uint8_t *http_fake_chunk(const struct http_fake *x, size_t i,
                               size_t *len);

/* The accepted chunks' bytes read as one RecordIO stream: the number of
 * complete records so far. */
size_t http_fake_record_count(const struct http_fake *x);

/* Record i's payload: *len (OUT) bytes, followed by a NUL not counted,
 * borrowed until http_fake_free; NULL when i is out of range. */
const uint8_t *http_fake_record(const struct http_fake *x, size_t i,
                                size_t *len);

/* Free every chunk and record received so far (a benchmark's peer that
 * reads nothing back). Counts keep counting: later ones keep their
 * indices, and a forgotten one reads as NULL. */
void http_fake_forget(struct http_fake *x);

/* True when the stream's bytes are not valid RecordIO (a raw
 * http_stream_send of other bytes); records stop at the error. */
bool http_fake_records_malformed(const struct http_fake *x);

/* True once the owner closed the stream while it was open (http_stream_close
 * queued the terminating chunk: a graceful end). */
bool http_fake_stream_ended(const struct http_fake *x);

/* How many times the stream's close callback has run (0 or 1), and why
 * (0 until it ran). */
int http_fake_close_count(const struct http_fake *x);
enum http_close_reason http_fake_close_reason(const struct http_fake *x);

/* ---- End ---- */

/* Free the exchange and what it recorded; NULL is ignored. A request still
 * deferred or a stream not yet released stays its owner's to release (as
 * after http_server_free): it reads as closed, its callback never runs,
 * and the reply or http_stream_close frees it. Not from inside a handler or
 * a close callback of this exchange. */
void http_fake_free(struct http_fake *x);

#endif
