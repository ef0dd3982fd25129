/*
 * Master connection: SUBSCRIBE stream, POSTed calls, backoff, PING/PONG.
 */
#include "agent/master_conn.h"

#include "common/http_client.h"
#include "common/ids.h"
#include "common/master_detect.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/recordio.h"

#include <arpa/inet.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define API_PATH "/api/v1/agent"

/* How long a SUBSCRIBE may take to get its response headers. */
#define SUBSCRIBE_TIMEOUT_MS 15000
/* How long a POSTed call may take. */
#define CALL_TIMEOUT_MS 15000
/* Kept-alive connections for calls (more calls at once wait for one):
 * tasks launched together send their updates together. */
#define AGENT_CALL_CONNS 4

/* Status updates queued in one loop turn (each an encoded Update). */
struct update_batch {
    uint8_t **pb;
    size_t *len;
    size_t n, cap;
};

struct post {
    struct agent_conn *c;
    struct http_client_req *req;
    struct post *prev, *next;
    Offerd__Agent__Call__Type type;
    char stream_id[ID_UUID_SIZE + 64]; /* the stream it was sent on */
    /* An UPDATES call keeps its updates: a master that refuses the call
     * (one older than UPDATES) gets them again one per call. */
    struct update_batch ups;
};

struct agent_conn {
    struct event_base *base;
    /* The calls' kept-alive connections: the master is spared an accept
     * and a close per call. */
    struct http_client_pool *conns;
    char *ip; /* the master's host as given (IPv4 or a name); NULL:
                 no leading master known */
    uint16_t port;
    char addr[INET_ADDRSTRLEN]; /* ip resolved at the current attempt */
    bool started;               /* agent_conn_start was called */
    /* --master through common/master_detect (NULL: fixed cfg address). */
    struct master_detect *detect;
    /* Host names are resolved at each attempt, without blocking the
     * loop. */
    struct evdns_base *dns;
    struct evdns_getaddrinfo_request *dns_req;
    char *authorization; /* the Authorization header, or NULL */
    int64_t factor, max;
    struct agent_conn_cbs cbs;

    struct http_client_req *stream; /* the SUBSCRIBE, NULL when idle */
    enum jpb_format stream_format;  /* encoding of the events */
    struct rio_decoder *dec;
    char stream_id[ID_UUID_SIZE + 64]; /* "" until the headers arrive */
    bool registered;
    unsigned attempts; /* failed attempts since the last REGISTERED */
    uint64_t rng;

    struct event *retry_timer; /* next SUBSCRIBE attempt */
    struct event *ping_timer;  /* no PING for this long: reconnect */
    int64_t ping_timeout_ns;   /* 0: no ping timer */

    struct post *posts; /* in flight */
    size_t nposts;
    /* UPDATE calls of this loop turn, sent together when it ends: the
     * STARTING updates of one RUN_TASK record's tasks, or the updates that
     * acknowledgements read together released, cost the master one
     * request instead of one each. */
    struct update_batch batch;
    struct event *flush_ev;
    bool no_batch;  /* the master refused UPDATES: one UPDATE per call */
    char *agent_id; /* from the last REGISTERED, for PONGs */
};

int64_t agent_conn_backoff_bound(int64_t factor_ns, int64_t max_ns,
                                 unsigned attempts)
{
    int64_t b = factor_ns;
    for (unsigned i = 1; i < attempts && b < max_ns; i++)
        b = b > INT64_MAX / 2 ? INT64_MAX : b * 2;
    return b < max_ns ? b : max_ns;
}

static uint64_t next_random(struct agent_conn *c)
{
    /* xorshift64*: plenty for spreading reconnections. */
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return c->rng * UINT64_C(2685821657736338717);
}

static struct timeval tv_of(int64_t ns)
{
    if (ns < 0)
        ns = 0;
    struct timeval tv = {(time_t)(ns / 1000000000),
                         (suseconds_t)((ns % 1000000000) / 1000)};
    return tv;
}

static void subscribe_now(struct agent_conn *c);
static void batch_clear(struct update_batch *b);

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    subscribe_now(arg);
}

/* Forget the current stream (cancelled if still open) and schedule the next
 * attempt; tell the owner. */
static void drop_stream(struct agent_conn *c, const char *why)
{
    bool was = c->stream != NULL || c->registered;
    if (c->stream != NULL)
        http_client_cancel(c->stream);
    c->stream = NULL;
    rio_decoder_free(c->dec);
    c->dec = NULL;
    c->stream_id[0] = '\0';
    c->registered = false;
    /* Not sent on a stream that is gone: the update manager sends every
     * pending update again once registered. */
    batch_clear(&c->batch);
    event_del(c->ping_timer);
    c->attempts++;
    int64_t bound = agent_conn_backoff_bound(c->factor, c->max, c->attempts);
    int64_t delay =
        bound > 0 ? (int64_t)(next_random(c) % (uint64_t)(bound + 1)) : 0;
    log_info("master %s:%u: %s; subscribing again in %" PRId64 " ms", c->ip,
             (unsigned)c->port, why, delay / 1000000);
    struct timeval tv = tv_of(delay);
    event_add(c->retry_timer, &tv);
    if (was && c->cbs.on_disconnected != NULL)
        c->cbs.on_disconnected(c->cbs.arg);
}

static void arm_ping_timer(struct agent_conn *c)
{
    if (c->ping_timeout_ns <= 0)
        return;
    struct timeval tv = tv_of(c->ping_timeout_ns);
    event_add(c->ping_timer, &tv);
}

static void on_ping_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    drop_stream(arg, "no PING within the ping timeout");
}

/* ---- Batched updates ---- */

static void batch_push(struct update_batch *b, uint8_t *pb, size_t len)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->pb = xreallocarray(b->pb, b->cap, sizeof(*b->pb));
        b->len = xreallocarray(b->len, b->cap, sizeof(*b->len));
    }
    b->pb[b->n] = pb;
    b->len[b->n] = len;
    b->n++;
}

static void batch_clear(struct update_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->pb[i]);
    free(b->pb);
    free(b->len);
    memset(b, 0, sizeof(*b));
}

static size_t varint_put(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Wire tags (field << 3 | length-delimited) of Call.update,
 * Call.updates and Updates.updates. */
#define TAG_CALL_UPDATE    ((4 << 3) | 2)
#define TAG_CALL_UPDATES   ((11 << 3) | 2)
#define TAG_UPDATES_UPDATE ((1 << 3) | 2)

uint8_t *agent_conn_updates_body(const char *agent_id, uint8_t *const *updates,
                                 const size_t *lens, size_t n, size_t *len)
{
    /* The call's head (agent_id and type) is encoded by protobuf-c; the
     * updates, already encoded when queued, are appended as its payload
     * field (protobuf takes fields in any order): no decode and re-encode
     * of each update. */
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.agent_id = agent_id != NULL ? &aid : NULL;
    call.type = n == 1 ? OFFERD__AGENT__CALL__TYPE__UPDATE
                       : OFFERD__AGENT__CALL__TYPE__UPDATES;
    size_t head = protobuf_c_message_get_packed_size(&call.base);
    size_t inner = 0;
    for (size_t i = 0; n > 1 && i < n; i++)
        inner += 1 + varint_size(lens[i]) + lens[i];
    size_t total = head + (n == 1 ? 1 + varint_size(lens[0]) + lens[0]
                                  : 1 + varint_size(inner) + inner);
    uint8_t *out = xmalloc(total), *p = out;
    p += protobuf_c_message_pack(&call.base, p);
    if (n == 1) {
        *p++ = TAG_CALL_UPDATE;
        p += varint_put(p, lens[0]);
        memcpy(p, updates[0], lens[0]);
        p += lens[0];
    } else {
        *p++ = TAG_CALL_UPDATES;
        p += varint_put(p, inner);
        for (size_t i = 0; i < n; i++) {
            *p++ = TAG_UPDATES_UPDATE;
            p += varint_put(p, lens[i]);
            memcpy(p, updates[i], lens[i]);
            p += lens[i];
        }
    }
    *len = (size_t)(p - out);
    return out;
}

/* ---- POSTed calls ---- */

static void send_updates(struct agent_conn *c, struct update_batch *b);

static void post_done(const struct http_client_response *r, void *arg)
{
    struct post *p = arg;
    struct agent_conn *c = p->c;
    if (p->prev != NULL)
        p->prev->next = p->next;
    else
        c->posts = p->next;
    if (p->next != NULL)
        p->next->prev = p->prev;
    c->nposts--;

    const ProtobufCEnumValue *tv = protobuf_c_enum_descriptor_get_value(
        &offerd__agent__call__type__descriptor, (int)p->type);
    const char *type = tv != NULL ? tv->name : "?";
    int status = http_client_status(r);
    if (status == 202 || status == 200) {
        log_debug("%s call accepted", type);
    } else if (status == 0) {
        log_warn("%s call to the master failed: %s", type,
                 http_client_error(r));
    } else {
        size_t len;
        const uint8_t *body = http_client_body(r, &len);
        log_warn("%s call answered %d: %.*s", type, status,
                 (int)(len > 300 ? 300 : len), (const char *)body);
        /* 403: the master does not know this stream (any more). */
        if (status == 403 && strcmp(p->stream_id, c->stream_id) == 0 &&
            c->stream_id[0] != '\0')
            drop_stream(c, "the master refused a call on this stream");
        /* A master older than UPDATES: send these again and every later
         * update one per call. */
        if (status == 400 && p->type == OFFERD__AGENT__CALL__TYPE__UPDATES &&
            strcmp(p->stream_id, c->stream_id) == 0 && c->registered) {
            log_warn("the master refused UPDATES: sending status updates "
                     "one per call");
            c->no_batch = true;
            for (size_t i = 0; i < p->ups.n; i++) {
                struct update_batch one = {0};
                batch_push(&one, p->ups.pb[i], p->ups.len[i]);
                p->ups.pb[i] = NULL;
                send_updates(c, &one);
            }
        }
    }
    batch_clear(&p->ups);
    free(p);
}

/* A POST of call to the master's agent API, in protobuf both ways, with
 * the stream id when with_stream: the request's headers go into h (caller
 * storage; the values are borrowed from c) and the encoded call into
 * *body (the caller frees it after starting the request). */
static struct http_client_options
api_post_body(const struct agent_conn *c, uint8_t *body, size_t len,
              bool with_stream, int timeout_ms, struct http_header h[4])
{
    h[0] = (struct http_header){"Content-Type", HTTP_CONTENT_PROTOBUF};
    h[1] = (struct http_header){"Accept", HTTP_CONTENT_PROTOBUF};
    size_t n = 2;
    if (with_stream)
        h[n++] = (struct http_header){"Mesos-Stream-Id", c->stream_id};
    if (c->authorization != NULL)
        h[n++] = (struct http_header){"Authorization", c->authorization};
    return (struct http_client_options){
        .host = c->addr,
        .port = c->port,
        .method = HTTP_POST,
        .path = API_PATH,
        .headers = h,
        .nheaders = n,
        .body = body,
        .body_len = len,
        .timeout_ms = timeout_ms,
    };
}

static struct http_client_options api_post(const struct agent_conn *c,
                                           const Offerd__Agent__Call *call,
                                           bool with_stream, int timeout_ms,
                                           struct http_header h[4],
                                           uint8_t **body)
{
    size_t len;
    *body = jpb_to_pb(&call->base, &len);
    return api_post_body(c, *body, len, with_stream, timeout_ms, h);
}

static struct http_client_req *
post_call(struct agent_conn *c, const Offerd__Agent__Call *call, struct post *p)
{
    struct http_header h[4];
    uint8_t *body;
    struct http_client_options o =
        api_post(c, call, true, CALL_TIMEOUT_MS, h, &body);
    o.pool = c->conns;
    struct http_client_req *req =
        http_client_request(c->base, &o, post_done, p);
    free(body);
    return req;
}

static struct post *post_new(struct agent_conn *c,
                             Offerd__Agent__Call__Type type)
{
    struct post *p = xcalloc(1, sizeof(*p));
    p->c = c;
    p->type = type;
    memcpy(p->stream_id, c->stream_id, sizeof(p->stream_id));
    p->next = c->posts;
    if (c->posts != NULL)
        c->posts->prev = p;
    c->posts = p;
    c->nposts++;
    return p;
}

/* POST b's updates (taken; b is left empty) as one UPDATE or UPDATES. */
static void send_updates(struct agent_conn *c, struct update_batch *b)
{
    size_t len;
    uint8_t *body =
        agent_conn_updates_body(c->agent_id, b->pb, b->len, b->n, &len);
    struct post *p =
        post_new(c, b->n == 1 ? OFFERD__AGENT__CALL__TYPE__UPDATE
                              : OFFERD__AGENT__CALL__TYPE__UPDATES);
    if (b->n > 1) {
        p->ups = *b;
        memset(b, 0, sizeof(*b));
    } else {
        batch_clear(b);
    }
    struct http_header h[4];
    struct http_client_options o =
        api_post_body(c, body, len, true, CALL_TIMEOUT_MS, h);
    o.pool = c->conns;
    p->req = http_client_request(c->base, &o, post_done, p);
    free(body);
}

static void flush_batch(struct agent_conn *c)
{
    if (c->batch.n > 0 && c->registered)
        send_updates(c, &c->batch);
    batch_clear(&c->batch);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    flush_batch(arg);
}

/* Queue an UPDATE call's update for the end of this loop turn. */
static void queue_update(struct agent_conn *c, const Offerd__Agent__Call *call)
{
    size_t len;
    uint8_t *pb = jpb_to_pb(&call->update->base, &len);
    batch_push(&c->batch, pb, len);
    if (c->batch.n == 1)
        event_active(c->flush_ev, EV_TIMEOUT, 0);
    else if (c->batch.n >= AGENT_CONN_MAX_UPDATES)
        flush_batch(c);
}

int agent_conn_send(struct agent_conn *c, const Offerd__Agent__Call *call)
{
    if (!c->registered)
        return -1;
    if (call->type == OFFERD__AGENT__CALL__TYPE__UPDATE &&
        call->update != NULL && !c->no_batch) {
        queue_update(c, call);
        return 0;
    }
    struct post *p = post_new(c, call->type);
    /* done runs from the loop, never from inside the call. */
    p->req = post_call(c, call, p);
    return 0;
}

size_t agent_conn_inflight(const struct agent_conn *c)
{
    return c->nposts + (c->batch.n > 0);
}

/* ---- The stream ---- */

static void send_pong(struct agent_conn *c, uint64_t seq, const char *agent_id)
{
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    aid.value = (char *)agent_id;
    Offerd__Agent__Call__Pong pong = OFFERD__AGENT__CALL__PONG__INIT;
    pong.sequence = seq;
    Offerd__Agent__Call call = OFFERD__AGENT__CALL__INIT;
    call.type = OFFERD__AGENT__CALL__TYPE__PONG;
    call.agent_id = agent_id != NULL ? &aid : NULL;
    call.pong = &pong;
    agent_conn_send(c, &call);
}

static void handle_event(struct agent_conn *c, const Offerd__Agent__Event *ev)
{
    switch (ev->type) {
    case OFFERD__AGENT__EVENT__TYPE__REGISTERED: {
        const Offerd__Agent__Event__Registered *r = ev->registered;
        if (r == NULL || r->agent_id == NULL) {
            log_warn("REGISTERED without an agent id: ignored");
            return;
        }
        c->registered = true;
        c->attempts = 0;
        c->ping_timeout_ns = r->has_ping_timeout_seconds &&
                                     r->ping_timeout_seconds > 0 &&
                                     r->ping_timeout_seconds < 1e9
                                 ? (int64_t)(r->ping_timeout_seconds * 1e9)
                                 : 0;
        free(c->agent_id);
        c->agent_id = xstrdup(r->agent_id->value);
        log_info("registered with master %s:%u as agent %s", c->ip,
                 (unsigned)c->port, r->agent_id->value);
        arm_ping_timer(c);
        break;
    }
    case OFFERD__AGENT__EVENT__TYPE__PING:
        if (ev->ping == NULL)
            return;
        arm_ping_timer(c);
        if (c->registered)
            send_pong(c, ev->ping->sequence, c->agent_id);
        return;
    case OFFERD__AGENT__EVENT__TYPE__ERROR:
        log_warn("master error: %s",
                 ev->error != NULL ? ev->error->message : "(no message)");
        break;
    default:
        break;
    }
    if (c->cbs.on_event != NULL)
        c->cbs.on_event(ev, c->cbs.arg);
}

static void stream_headers(const struct http_client_response *r, void *arg)
{
    struct agent_conn *c = arg;
    if (http_client_status(r) != 200)
        return; /* on_close reports the refusal with its body */
    const char *sid = http_client_header(r, "Mesos-Stream-Id");
    if (sid == NULL || sid[0] == '\0' || strlen(sid) >= sizeof(c->stream_id)) {
        drop_stream(c, "SUBSCRIBE answered without a Mesos-Stream-Id");
        return;
    }
    memcpy(c->stream_id, sid, strlen(sid) + 1);
    const char *ct = http_client_header(r, "Content-Type");
    enum http_encoding enc = HTTP_ENC_PROTOBUF;
    if (ct != NULL && http_media_type_encoding(ct, &enc) != 0)
        enc = HTTP_ENC_PROTOBUF;
    c->stream_format = (enum jpb_format)enc;
    log_info("subscribed to master %s:%u (stream %s)", c->ip, (unsigned)c->port,
             c->stream_id);
}

static void stream_chunk(const uint8_t *data, size_t len, void *arg)
{
    struct agent_conn *c = arg;
    struct http_client_req *stream = c->stream;
    while (len > 0 && c->stream == stream) {
        size_t used = 0;
        const uint8_t *rec = NULL;
        size_t rlen = 0;
        enum rio_result rr =
            rio_decoder_feed(c->dec, data, len, &used, &rec, &rlen);
        if (rr == RIO_ERROR) {
            char why[256];
            snprintf(why, sizeof(why), "bad event stream: %s",
                     rio_decoder_error(c->dec));
            drop_stream(c, why);
            return;
        }
        data += used;
        len -= used;
        if (rr == RIO_NEED_MORE)
            return;
        char err[256];
        ProtobufCMessage *m =
            jpb_decode(&offerd__agent__event__descriptor, c->stream_format, rec,
                       rlen, err, sizeof(err));
        if (m == NULL) {
            char why[320];
            snprintf(why, sizeof(why), "undecodable event: %s", err);
            drop_stream(c, why);
            return;
        }
        handle_event(c, (const Offerd__Agent__Event *)m);
        jpb_free(m);
    }
}

static void stream_close(const struct http_client_response *r, void *arg)
{
    struct agent_conn *c = arg;
    c->stream = NULL; /* the handle is dead after this callback */
    char why[512];
    int status = http_client_status(r);
    if (status == 0) {
        snprintf(why, sizeof(why), "connection failed: %s",
                 http_client_error(r));
    } else if (status == 200) {
        snprintf(why, sizeof(why), "the event stream ended");
    } else {
        size_t len;
        const uint8_t *body = http_client_body(r, &len);
        snprintf(why, sizeof(why), "SUBSCRIBE refused with %d: %.*s", status,
                 (int)(len > 300 ? 300 : len), (const char *)body);
        /* Drop the newline of a one-line reason. */
        size_t n = strlen(why);
        while (n > 0 && (why[n - 1] == '\n' || why[n - 1] == '\r'))
            why[--n] = '\0';
    }
    drop_stream(c, why);
}

static void subscribe_resolved(struct agent_conn *c)
{
    Offerd__Agent__Call *call = c->cbs.build_subscribe(c->cbs.arg);
    struct http_header h[4];
    uint8_t *body;
    struct http_client_options o =
        api_post(c, call, false, SUBSCRIBE_TIMEOUT_MS, h, &body);
    jpb_free(&call->base);
    struct http_client_stream_cbs cbs = {
        .on_headers = stream_headers,
        .on_chunk = stream_chunk,
        .on_close = stream_close,
        .arg = c,
    };
    c->dec = rio_decoder_new(AGENT_CONN_MAX_RECORD);
    c->stream_id[0] = '\0';
    c->stream_format = JPB_PROTOBUF;
    log_info("subscribing to master %s:%u", c->ip, (unsigned)c->port);
    c->stream = http_client_stream(c->base, &o, &cbs);
    free(body);
}

static void on_resolved(int result, struct evutil_addrinfo *ai, void *arg)
{
    struct agent_conn *c = arg;
    if (result == EVUTIL_EAI_CANCEL) {
        if (ai != NULL)
            evutil_freeaddrinfo(ai);
        return; /* agent_conn_free or a new master: c may be going */
    }
    c->dns_req = NULL;
    bool ok = false;
    if (result == 0 && ai != NULL && ai->ai_family == AF_INET) {
        const struct sockaddr_in *sin = (const void *)ai->ai_addr;
        ok = inet_ntop(AF_INET, &sin->sin_addr, c->addr, sizeof(c->addr)) !=
             NULL;
    }
    if (ai != NULL)
        evutil_freeaddrinfo(ai);
    if (!ok) {
        char why[300];
        snprintf(why, sizeof(why), "cannot resolve %s: %s", c->ip,
                 result != 0 ? evutil_gai_strerror(result) : "no IPv4 address");
        drop_stream(c, why);
        return;
    }
    subscribe_resolved(c);
}

/* Subscribe to the master known now, resolving its name first. */
static void subscribe_now(struct agent_conn *c)
{
    if (c->stream != NULL || c->dns_req != NULL || c->ip == NULL)
        return;
    struct in_addr a;
    if (inet_pton(AF_INET, c->ip, &a) == 1) {
        snprintf(c->addr, sizeof(c->addr), "%s", c->ip);
        subscribe_resolved(c);
        return;
    }
    if (c->dns == NULL)
        c->dns = evdns_base_new(c->base, EVDNS_BASE_INITIALIZE_NAMESERVERS);
    if (c->dns == NULL) {
        drop_stream(c, "cannot start the DNS resolver");
        return;
    }
    struct evutil_addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    /* NULL when the callback already ran (names in /etc/hosts). */
    c->dns_req = evdns_getaddrinfo(c->dns, c->ip, NULL, &hints, on_resolved, c);
}

void agent_conn_set_master(struct agent_conn *c, const char *host,
                           uint16_t port)
{
    if (host != NULL && c->ip != NULL && strcmp(host, c->ip) == 0 &&
        port == c->port)
        return;
    if (c->dns_req != NULL) {
        struct evdns_getaddrinfo_request *r = c->dns_req;
        c->dns_req = NULL;
        evdns_getaddrinfo_cancel(r);
    }
    if (c->stream != NULL || c->registered)
        drop_stream(c, "the leading master changed");
    free(c->ip);
    c->ip = host != NULL ? xstrdup(host) : NULL;
    c->port = port;
    if (host == NULL)
        log_info("no leading master: waiting for one");
    else
        log_info("leading master now %s:%u", host, (unsigned)port);
    /* A new leader is tried at once; none: nothing to try. */
    event_del(c->retry_timer);
    c->attempts = 0;
    if (c->started && host != NULL)
        subscribe_now(c);
}

static void on_leader(const struct master_leader *l, void *arg)
{
    struct agent_conn *c = arg;
    agent_conn_set_master(c, l->known ? master_leader_host(l) : NULL,
                          l->known ? l->port : 0);
}

struct agent_conn *agent_conn_new(struct event_base *base,
                                  const struct agent_conn_config *cfg,
                                  const struct agent_conn_cbs *cbs)
{
    struct agent_conn *c = xcalloc(1, sizeof(*c));
    c->base = base;
    c->conns = http_client_pool_new(base, AGENT_CALL_CONNS, 0);
    c->ip = cfg->master_ip != NULL && cfg->master_ip[0] != '\0'
                ? xstrdup(cfg->master_ip)
                : NULL;
    c->authorization =
        cfg->authorization != NULL ? xstrdup(cfg->authorization) : NULL;
    c->port = cfg->master_port;
    c->factor = cfg->backoff_factor_ns > 0 ? cfg->backoff_factor_ns : 0;
    c->max = cfg->backoff_max_ns > c->factor ? cfg->backoff_max_ns : c->factor;
    c->cbs = *cbs;
    uint8_t seed[16];
    id_uuid_v4_bytes(seed);
    memcpy(&c->rng, seed, sizeof(c->rng));
    if (c->rng == 0)
        c->rng = 1;
    c->retry_timer = evtimer_new(base, on_retry, c);
    c->ping_timer = evtimer_new(base, on_ping_timeout, c);
    c->flush_ev = event_new(base, -1, 0, on_flush, c);
    if (cfg->master != NULL) {
        char err[512];
        c->detect =
            master_detect_new(base, cfg->master, cfg->zk_session_timeout_ms,
                              on_leader, c, err, sizeof(err));
        if (c->detect == NULL) {
            agent_conn_free(c);
            log_error("--master: %s", err);
            return NULL;
        }
        free(c->ip);
        c->ip = NULL; /* the detector tells */
    }
    return c;
}

void agent_conn_start(struct agent_conn *c)
{
    c->started = true;
    subscribe_now(c);
}

bool agent_conn_is_registered(const struct agent_conn *c)
{
    return c->registered;
}

void agent_conn_free(struct agent_conn *c)
{
    if (c == NULL)
        return;
    master_detect_free(c->detect);
    if (c->dns_req != NULL) {
        struct evdns_getaddrinfo_request *r = c->dns_req;
        c->dns_req = NULL;
        evdns_getaddrinfo_cancel(r);
    }
    if (c->dns != NULL)
        evdns_base_free(c->dns, 0);
    if (c->stream != NULL)
        http_client_cancel(c->stream);
    rio_decoder_free(c->dec);
    while (c->posts != NULL) {
        struct post *p = c->posts;
        c->posts = p->next;
        if (p->req != NULL)
            http_client_cancel(p->req);
        batch_clear(&p->ups);
        free(p);
    }
    batch_clear(&c->batch);
    if (c->flush_ev != NULL)
        event_free(c->flush_ev);
    event_free(c->retry_timer);
    event_free(c->ping_timer);
    free(c->ip);
    free(c->authorization);
    free(c->agent_id);
    http_client_pool_free(c->conns);
    free(c);
}
