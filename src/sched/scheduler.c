/*
 * libofferd's scheduler client: the subscription stream, event dispatch,
 * calls, reconnection. The contract is include/offerd/scheduler.h.
 *
 * How it is put together:
 *  - One http_client_stream carries the subscription; its chunks feed a
 *    RecordIO decoder and each record is decoded into an Event and
 *    dispatched. Every other call is an http_client_request of its own
 *    (over the client's kept-alive connections, s->conns), kept in a list
 *    so that stop and free can cancel it.
 *  - A connection attempt always starts from the reconnect timer, never
 *    from inside another callback, so the decoder of a stream is only ever
 *    replaced at the top of the loop.
 *  - One watchdog timer bounds the time from SUBSCRIBE to SUBSCRIBED and,
 *    once subscribed, the silence between two events.
 *  - Close and free at a safe point: every entry from the loop (stream and
 *    call callbacks, timers) is bracketed by enter()/leave(). A user
 *    callback that frees the client only marks it dead (its connections are
 *    cancelled at once); leave() frees it when the outermost entry unwinds.
 *    After each user callback the code checks whether the client died or
 *    its stream was replaced (conn_gen) before touching anything else.
 *  - Logging: what the owner learns through callbacks is logged at DEBUG
 *    only (a library should not chatter on stderr); protocol anomalies the
 *    owner cannot see (an event without its payload, a missing stream id)
 *    are warnings.
 */
#include "offerd/scheduler.h"

#include "offerd/offer_pool.h"

#include "common/auth.h"
#include "common/http.h"
#include "common/http_client.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/master_detect.h"
#include "common/mem.h"
#include "common/recordio.h"
#include "mesos/v1/mesos.pb-c.h"
#include "mesos/v1/scheduler.pb-c.h"

#include <arpa/inet.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define SCHED_PATH "/api/v1/scheduler"

/* Redirects followed at once in a row; beyond, each waits for the backoff
 * (two masters pointing at each other must not spin the loop). */
#define MAX_QUICK_REDIRECTS 8

/* Redirects a call (not SUBSCRIBE) follows before it is reported failed. */
#define MAX_CALL_REDIRECTS 3

/* Longest reason kept from a response body. */
#define REASON_MAX 512

/* Kept-alive connections for calls; more calls at once wait for one. */
#define SCHED_CALL_CONNS 16

enum conn_state {
    ST_IDLE,       /* not started, stopped, or gave up */
    ST_WAITING,    /* the reconnect timer will send SUBSCRIBE */
    ST_CONNECTING, /* SUBSCRIBE sent, no answer yet */
    ST_CONNECTED,  /* 200 received, SUBSCRIBED not yet */
    ST_SUBSCRIBED, /* SUBSCRIBED received on the current stream */
};

/* A call in flight. */
struct pending_call {
    struct offerd_sched *s;
    struct http_client_req *req; /* NULL while a redirect's host resolves */
    struct evdns_getaddrinfo_request *lookup; /* that lookup, or NULL */
    uint8_t *body;                            /* encoded Call, kept for
                                                 redirects */
    size_t body_len;
    uint16_t port; /* where it goes (after a redirect, the Location's) */
    int hops;      /* redirects followed */
    int type;      /* Call.Type */
    struct pending_call *prev, *next; /* s->calls */
};

struct offerd_sched {
    struct event_base *base;
    /* Calls' kept-alive connections (the master is spared an accept and
     * a close per call). */
    struct http_client_pool *conns;
    char *master_host;   /* the configured master, or the leader the
                            detector names ("" while none is known) */
    char *authorization; /* "Basic ..." of options.principal, or NULL */
    uint16_t master_port;
    char *target_host; /* where the next SUBSCRIBE goes (after a redirect:
                          the Location's host); a name or an address */
    uint16_t target_port;
    char conn_ip[64]; /* target_host's address for the current attempt and
                         stream (the calls go there) */
    /* Names are looked up with libevent's asynchronous resolver at every
     * attempt (a master's name may move), never with a blocking lookup. */
    struct evdns_base *dns;                      /* made on first use */
    struct evdns_getaddrinfo_request *resolving; /* SUBSCRIBE's lookup */
    /* options.master: the detector names the master to subscribe to (a
     * fixed host:port too, as a file:// may hold one). NULL: master_host
     * and master_port as given. */
    struct master_detect *detect;
    bool leader_known;               /* with detect: master_host is a leader */
    enum offerd_encoding enc;        /* what calls are sent in */
    enum offerd_encoding stream_enc; /* what the current stream carries */
    struct offerd_sched_callbacks cb;
    void *user;
    bool auto_ack;
    int backoff_min_ms, backoff_max_ms;
    int backoff_ms; /* next reconnection delay (before jitter) */
    double hb_tolerance;
    int subscribe_timeout_ms;
    int call_timeout_ms;
    int max_refusals; /* < 0: never give up */
    size_t max_event;

    Mesos__V1__FrameworkInfo *info; /* owned; info->id once known */
    char *stream_id;                /* Mesos-Stream-Id, NULL when none */
    enum conn_state state;
    struct http_client_req *stream; /* NULL when no stream request */
    struct rio_decoder *dec;        /* of the current stream */
    unsigned conn_gen;              /* bumped whenever the stream changes */
    unsigned run_gen;               /* bumped by start and stop */
    double hb_interval;             /* seconds, 0: none announced */
    struct event *reconnect_ev;
    struct event *watchdog_ev;
    int refusals;       /* 4xx answers to SUBSCRIBE in a row */
    int redirects;      /* redirects followed in a row */
    bool teardown_sent; /* TEARDOWN accepted or in flight */

    struct pending_call *calls;
    size_t ncalls;

    struct offerd_pool *pool; /* attached pool (borrowed), or NULL */
    struct event *pool_ev;    /* expiry and decline flushing, periodic */

    int depth; /* entries from the loop currently running */
    bool dead; /* freed by the owner inside a callback */
    uint64_t rng;
};

/* ---- Safe points ---- */

static void destroy(struct offerd_sched *s);

static void enter(struct offerd_sched *s)
{
    s->depth++;
}

/* Leave an entry; returns true when the client was destroyed. */
static bool leave(struct offerd_sched *s)
{
    if (--s->depth == 0 && s->dead) {
        destroy(s);
        return true;
    }
    return false;
}

/* ---- Small helpers ---- */

static const char *content_type(enum offerd_encoding e)
{
    return e == OFFERD_ENCODING_PROTOBUF ? HTTP_CONTENT_PROTOBUF
                                         : HTTP_CONTENT_JSON;
}

static const char *call_type_name(int type)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__scheduler__call__type__descriptor, type);
    return v != NULL ? v->name : "UNKNOWN";
}

static const char *event_type_name(int type)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
        &mesos__v1__scheduler__event__type__descriptor, type);
    return v != NULL ? v->name : "UNKNOWN";
}

static uint64_t next_random(struct offerd_sched *s)
{
    /* xorshift64*: jitter only, no need for more. */
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * UINT64_C(2685821657736338717);
}

/* The delay before the next attempt: a random point in [d/2, d] of the
 * current backoff d, which then doubles up to the maximum. */
static int next_backoff(struct offerd_sched *s)
{
    int d = s->backoff_ms;
    int half = d / 2;
    int delay = half + (int)(next_random(s) % (uint64_t)(d - half + 1));
    s->backoff_ms = d > s->backoff_max_ms / 2 ? s->backoff_max_ms : d * 2;
    return delay;
}

static void arm_timer(struct event *ev, double ms)
{
    if (ms < 0)
        ms = 0;
    if (ms > 86400e3)
        ms = 86400e3;
    long long us = (long long)(ms * 1000.0);
    struct timeval tv = {(time_t)(us / 1000000), (suseconds_t)(us % 1000000)};
    evtimer_add(ev, &tv);
}

/* The first line of a response body, trimmed, or "HTTP <status>"; for no
 * response, the client's error. */
static void response_reason(const struct http_client_response *r, char *out,
                            size_t outlen)
{
    int status = http_client_status(r);
    if (status == 0) {
        const char *e = http_client_error(r);
        snprintf(out, outlen, "%s", e != NULL ? e : "no response");
        return;
    }
    size_t len;
    const uint8_t *body = http_client_body(r, &len);
    size_t start = 0;
    while (start < len && (body[start] == ' ' || body[start] == '\t' ||
                           body[start] == '\r' || body[start] == '\n'))
        start++;
    size_t end = start;
    while (end < len && body[end] != '\n' && body[end] != '\r' &&
           end - start < REASON_MAX)
        end++;
    while (end > start && (body[end - 1] == ' ' || body[end - 1] == '\t'))
        end--;
    if (end == start) {
        snprintf(out, outlen, "HTTP %d", status);
        return;
    }
    /* Keep it printable on one line. */
    char line[REASON_MAX + 1];
    size_t n = 0;
    for (size_t i = start; i < end; i++)
        line[n++] = (body[i] < 0x20 || body[i] == 0x7f) ? ' ' : (char)body[i];
    line[n] = '\0';
    snprintf(out, outlen, "%s", line);
}

/* A deep copy of a FrameworkInfo, in protobuf-c's unpacked form (released
 * with jpb_free), or NULL with a reason. */
static Mesos__V1__FrameworkInfo *copy_info(const Mesos__V1__FrameworkInfo *in,
                                           char *err, size_t errlen)
{
    if (in->user == NULL || in->name == NULL) {
        snprintf(err, errlen, "framework_info: user and name are required");
        return NULL;
    }
    if (in->id != NULL && in->id->value == NULL) {
        snprintf(err, errlen, "framework_info.id: value is required");
        return NULL;
    }
    size_t len;
    uint8_t *buf = jpb_to_pb(&in->base, &len);
    ProtobufCMessage *m = jpb_from_pb(&mesos__v1__framework_info__descriptor,
                                      buf, len, err, errlen);
    free(buf);
    return (Mesos__V1__FrameworkInfo *)m;
}

static void info_set_id(Mesos__V1__FrameworkInfo *info, const char *id)
{
    if (info->id == NULL) {
        info->id = xmalloc(sizeof(*info->id));
        mesos__v1__framework_id__init(info->id);
    } else {
        free(info->id->value);
    }
    info->id->value = xstrdup(id);
}

static void info_clear_id(Mesos__V1__FrameworkInfo *info)
{
    if (info->id != NULL)
        jpb_free(&info->id->base);
    info->id = NULL;
}

/* ---- Names ---- */

static bool is_numeric(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 ||
           inet_pton(AF_INET6, host, buf) == 1;
}

/* The client's resolver, made on first use; NULL when libevent cannot
 * make one. It reads /etc/resolv.conf and /etc/hosts, and holds no event
 * while no lookup runs (the owner's loop may end). */
static struct evdns_base *dns_base(struct offerd_sched *s)
{
    if (s->dns == NULL)
        s->dns = evdns_base_new(s->base, EVDNS_BASE_INITIALIZE_NAMESERVERS |
                                             EVDNS_BASE_DISABLE_WHEN_INACTIVE);
    return s->dns;
}

/* Start looking host up; cb(rc, res, arg) runs later from the loop, or at
 * once (then NULL is returned), and with EVUTIL_EAI_CANCEL when the lookup
 * is cancelled (evdns_getaddrinfo_cancel runs it at once). */
static struct evdns_getaddrinfo_request *lookup_start(struct offerd_sched *s,
                                                      const char *host,
                                                      evdns_getaddrinfo_cb cb,
                                                      void *arg)
{
    struct evdns_base *dns = dns_base(s);
    if (dns == NULL) {
        cb(EVUTIL_EAI_FAIL, NULL, arg);
        return NULL;
    }
    struct evutil_addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    log_debug("looking up %s", host);
    return evdns_getaddrinfo(dns, host, NULL, &hints, cb, arg);
}

/* The address to connect to among a lookup's results (IPv4 first, as
 * masters listen on one), as text in out. Returns 0, or -1 when none. */
static int pick_address(const struct evutil_addrinfo *res, char *out,
                        size_t outlen)
{
    const struct evutil_addrinfo *best = NULL;
    for (const struct evutil_addrinfo *a = res; a != NULL; a = a->ai_next)
        if (a->ai_family == AF_INET && best == NULL)
            best = a;
    for (const struct evutil_addrinfo *a = res; a != NULL; a = a->ai_next)
        if (a->ai_family == AF_INET6 && best == NULL)
            best = a;
    if (best == NULL)
        return -1;
    const void *addr =
        best->ai_family == AF_INET6
            ? (const void *)&((const struct sockaddr_in6 *)best->ai_addr)
                  ->sin6_addr
            : (const void *)&((const struct sockaddr_in *)best->ai_addr)
                  ->sin_addr;
    return inet_ntop(best->ai_family, addr, out, (socklen_t)outlen) != NULL
               ? 0
               : -1;
}

/* A lookup's failure as one line. */
static void lookup_reason(int rc, const char *host, char *out, size_t outlen)
{
    snprintf(out, outlen, "cannot resolve '%s': %s", host,
             rc != 0 ? evutil_gai_strerror(rc) : "no IPv4 or IPv6 address");
}

/* ---- Connection ---- */

static void on_stream_headers(const struct http_client_response *r, void *arg);
static void on_stream_chunk(const uint8_t *data, size_t len, void *arg);
static void on_stream_close(const struct http_client_response *r, void *arg);

/* Forget the current stream (cancelled or finished). */
static void drop_stream(struct offerd_sched *s)
{
    /* The master rescinds a framework's offers when its subscription
     * ends: what the pool holds (and its queued declines) is void. */
    if (s->pool != NULL)
        offerd_pool_clear(s->pool);
    if (s->stream != NULL)
        http_client_cancel(s->stream);
    s->stream = NULL;
    if (s->resolving != NULL)
        evdns_getaddrinfo_cancel(s->resolving);
    s->resolving = NULL;
    free(s->stream_id);
    s->stream_id = NULL;
    s->hb_interval = 0;
    s->conn_gen++;
    evtimer_del(s->watchdog_ev);
}

/* Schedule the next SUBSCRIBE in delay_ms. Unless keep_target (a redirect
 * being followed), it goes to the configured master, or to the leader;
 * while the detector knows none, nothing is scheduled: its next report
 * does it (leader_changed). */
static void schedule_connect(struct offerd_sched *s, int delay_ms,
                             bool keep_target)
{
    if (!keep_target && (s->target_port != s->master_port ||
                         strcmp(s->target_host, s->master_host) != 0)) {
        free(s->target_host);
        s->target_host = xstrdup(s->master_host);
        s->target_port = s->master_port;
    }
    s->state = ST_WAITING;
    if (!keep_target && s->detect != NULL && !s->leader_known) {
        evtimer_del(s->reconnect_ev);
        return;
    }
    arm_timer(s->reconnect_ev, delay_ms);
}

/* Open the SUBSCRIBE stream to conn_ip. */
static void open_subscribe(struct offerd_sched *s)
{
    Mesos__V1__Scheduler__Call call = MESOS__V1__SCHEDULER__CALL__INIT;
    Mesos__V1__Scheduler__Call__Subscribe sub =
        MESOS__V1__SCHEDULER__CALL__SUBSCRIBE__INIT;
    call.has_type = 1;
    call.type = MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE;
    call.framework_id = s->info->id; /* set when resuming */
    call.subscribe = &sub;
    sub.framework_info = s->info;
    size_t len;
    uint8_t *body = jpb_encode(&call.base, (enum jpb_format)s->enc, &len);

    const struct http_header headers[] = {
        {"Content-Type", content_type(s->enc)},
        {"Accept", content_type(s->enc)},
        {"Authorization", s->authorization},
    };
    struct http_client_options o = {
        .host = s->conn_ip,
        .port = s->target_port,
        .method = HTTP_POST,
        .path = SCHED_PATH,
        .headers = headers,
        .nheaders = s->authorization != NULL ? 3 : 2,
        .body = body,
        .body_len = len,
        .timeout_ms = 0, /* the watchdog bounds it */
    };
    struct http_client_stream_cbs cbs = {
        .on_headers = on_stream_headers,
        .on_chunk = on_stream_chunk,
        .on_close = on_stream_close,
        .arg = s,
    };
    rio_decoder_free(s->dec);
    s->dec = rio_decoder_new(s->max_event);
    s->conn_gen++;
    s->stream_enc = s->enc;
    log_debug("SUBSCRIBE to %s:%u (%s)%s%s", s->target_host,
              (unsigned)s->target_port, s->conn_ip, s->info->id ? " as " : "",
              s->info->id ? s->info->id->value : "");
    s->stream = http_client_stream(s->base, &o, &cbs);
    free(body);
}

static void attempt_failed(struct offerd_sched *s, int status,
                           const char *reason);

static void on_subscribe_resolved(int rc, struct evutil_addrinfo *res,
                                  void *arg)
{
    if (rc == EVUTIL_EAI_CANCEL) {
        if (res != NULL)
            evutil_freeaddrinfo(res);
        return;
    }
    struct offerd_sched *s = arg;
    enter(s);
    s->resolving = NULL;
    if (!s->dead && s->state == ST_CONNECTING) {
        if (rc == 0 && pick_address(res, s->conn_ip, sizeof(s->conn_ip)) == 0) {
            open_subscribe(s);
        } else {
            char reason[512];
            lookup_reason(rc, s->target_host, reason, sizeof(reason));
            attempt_failed(s, 0, reason);
        }
    }
    if (res != NULL)
        evutil_freeaddrinfo(res);
    leave(s);
}

/* One SUBSCRIBE attempt to target_host: at once to an address, after a
 * lookup to a name. The watchdog bounds both. */
static void send_subscribe(struct offerd_sched *s)
{
    s->conn_gen++;
    s->state = ST_CONNECTING;
    arm_timer(s->watchdog_ev, s->subscribe_timeout_ms);
    if (is_numeric(s->target_host)) {
        snprintf(s->conn_ip, sizeof(s->conn_ip), "%s", s->target_host);
        open_subscribe(s);
        return;
    }
    struct evdns_getaddrinfo_request *rq =
        lookup_start(s, s->target_host, on_subscribe_resolved, s);
    if (rq != NULL)
        s->resolving = rq; /* else the callback already ran */
}

static void on_reconnect_timer(evutil_socket_t fd, short what, void *arg)
{
    struct offerd_sched *s = arg;
    (void)fd;
    (void)what;
    enter(s);
    if (!s->dead && s->state == ST_WAITING)
        send_subscribe(s);
    leave(s);
}

/* A SUBSCRIBE attempt failed before the stream opened (status 0: no
 * answer). Schedule the next one, then report. */
static void attempt_failed(struct offerd_sched *s, int status,
                           const char *reason)
{
    log_debug("SUBSCRIBE to %s:%u failed: %s", s->target_host,
              (unsigned)s->target_port, reason);
    drop_stream(s);
    schedule_connect(s, next_backoff(s), false);
    if (s->cb.call_failed != NULL)
        s->cb.call_failed(s, MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE,
                          status, reason, s->user);
}

/* The open stream ended or was given up. Reconnect unless the framework was
 * torn down, then tell the owner. */
static void stream_lost(struct offerd_sched *s, const char *reason)
{
    log_debug("subscription to %s:%u lost: %s", s->target_host,
              (unsigned)s->target_port, reason);
    drop_stream(s);
    bool retry = !s->teardown_sent;
    if (retry) {
        schedule_connect(s, next_backoff(s), false);
    } else {
        s->state = ST_IDLE;
        evtimer_del(s->reconnect_ev);
    }
    if (s->cb.disconnected != NULL)
        s->cb.disconnected(s, reason, retry, s->user);
}

/* Give up on the current stream because of what we saw (bad data, silence):
 * cancel it and go on as if it had failed. */
static void abandon_stream(struct offerd_sched *s, const char *reason)
{
    if (s->state == ST_CONNECTED || s->state == ST_SUBSCRIBED)
        stream_lost(s, reason);
    else if (s->state == ST_CONNECTING)
        attempt_failed(s, 0, reason);
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
    struct offerd_sched *s = arg;
    (void)fd;
    (void)what;
    enter(s);
    char reason[160];
    if (s->state == ST_SUBSCRIBED)
        snprintf(reason, sizeof(reason),
                 "no event for %.3g seconds (heartbeat interval %.3g seconds)",
                 s->hb_interval * s->hb_tolerance, s->hb_interval);
    else
        snprintf(reason, sizeof(reason), "no SUBSCRIBED within %d ms",
                 s->subscribe_timeout_ms);
    if (!s->dead)
        abandon_stream(s, reason);
    leave(s);
}

static void on_stream_headers(const struct http_client_response *r, void *arg)
{
    struct offerd_sched *s = arg;
    enter(s);
    if (!s->dead && http_client_status(r) == 200 && s->state == ST_CONNECTING) {
        const char *sid = http_client_header(r, "Mesos-Stream-Id");
        free(s->stream_id);
        s->stream_id = sid != NULL ? xstrdup(sid) : NULL;
        if (sid == NULL)
            log_warn("SUBSCRIBE answered without a Mesos-Stream-Id");
        enum http_encoding e;
        if (http_media_type_encoding(http_client_header(r, "Content-Type"),
                                     &e) == 0)
            s->stream_enc = (enum offerd_encoding)e;
        s->state = ST_CONNECTED;
        if (s->cb.connected != NULL)
            s->cb.connected(s, s->user);
    }
    leave(s);
}

/* Acknowledge an update after its callback, as Mesos's scheduler driver
 * does with implicit acknowledgements. */
static void auto_acknowledge(struct offerd_sched *s,
                             const Mesos__V1__TaskStatus *st)
{
    if (!st->has_uuid)
        return;
    if (st->agent_id == NULL || st->task_id == NULL) {
        log_warn("update with a uuid but no agent id not acknowledged");
        return;
    }
    offerd_sched_acknowledge(s, st->agent_id->value, st->task_id->value,
                             st->uuid.data, st->uuid.len);
}

static void on_subscribed(struct offerd_sched *s,
                          const Mesos__V1__Scheduler__Event *ev)
{
    const Mesos__V1__Scheduler__Event__Subscribed *sub = ev->subscribed;
    if (sub == NULL || sub->framework_id == NULL) {
        abandon_stream(s, "SUBSCRIBED event without a framework id");
        return;
    }
    info_set_id(s->info, sub->framework_id->value);
    double hb = 0;
    if (sub->has_heartbeat_interval_seconds &&
        isfinite(sub->heartbeat_interval_seconds) &&
        sub->heartbeat_interval_seconds > 0)
        hb = sub->heartbeat_interval_seconds;
    s->hb_interval = hb;
    s->state = ST_SUBSCRIBED;
    s->refusals = 0;
    s->redirects = 0;
    s->backoff_ms = s->backoff_min_ms;
    if (hb > 0)
        arm_timer(s->watchdog_ev, hb * s->hb_tolerance * 1000.0);
    else
        evtimer_del(s->watchdog_ev);
    log_debug("subscribed to %s:%u as framework %s", s->target_host,
              (unsigned)s->target_port, s->info->id->value);
    if (s->cb.subscribed != NULL)
        s->cb.subscribed(s, s->info->id->value, hb, ev, s->user);
}

/* ---- Offer pool ---- */

/* The pool's decline sink: one DECLINE per batch. */
static void pool_decline(const char *const *ids, size_t n, double secs,
                         void *arg)
{
    struct offerd_sched *s = arg;
    Mesos__V1__Filters f = MESOS__V1__FILTERS__INIT;
    if (secs >= 0) {
        f.has_refuse_seconds = 1;
        f.refuse_seconds = secs;
    }
    if (offerd_sched_decline(s, ids, n, secs >= 0 ? &f : NULL) != 0)
        log_debug("%zu declines of the offer pool dropped: not subscribed", n);
}

static void flush_pool(struct offerd_sched *s)
{
    offerd_pool_flush(s->pool, pool_decline, s);
}

static void on_pool_timer(evutil_socket_t fd, short what, void *arg)
{
    struct offerd_sched *s = arg;
    (void)fd;
    (void)what;
    enter(s);
    if (!s->dead && s->pool != NULL) {
        offerd_pool_expire(s->pool);
        flush_pool(s);
    }
    leave(s);
}

/* Does this update tell that its agent was lost or re-registered? Only
 * the master's own updates count, and not its answers to reconciliation
 * or to invalid launches (TASK_LOST too, but the agent is fine). */
static bool update_means_agent_lost(const Mesos__V1__TaskStatus *st)
{
    if (st == NULL || st->agent_id == NULL || st->agent_id->value == NULL ||
        !st->has_source ||
        st->source != MESOS__V1__TASK_STATUS__SOURCE__SOURCE_MASTER)
        return false;
    if (st->has_reason) {
        switch (st->reason) {
        case MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED:
        case MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REMOVED_BY_OPERATOR:
        case MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_DISCONNECTED:
        case MESOS__V1__TASK_STATUS__REASON__REASON_AGENT_REREGISTERED:
            return true;
        default:
            return false;
        }
    }
    return st->state == MESOS__V1__TASK_STATE__TASK_UNREACHABLE ||
           st->state == MESOS__V1__TASK_STATE__TASK_LOST;
}

/* Tell the pool what the event changes, before the owner's callback. */
static void feed_pool(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Event *ev)
{
    switch (ev->type) {
    case MESOS__V1__SCHEDULER__EVENT__TYPE__OFFERS:
        for (size_t i = 0; i < ev->offers->n_offers; i++)
            if (offerd_pool_add(s->pool, ev->offers->offers[i]) ==
                OFFERD_POOL_REJECTED)
                log_warn("offer without id or agent id, or repeated, not "
                         "pooled");
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__RESCIND:
        if (ev->rescind->offer_id != NULL &&
            ev->rescind->offer_id->value != NULL)
            offerd_pool_rescind(s->pool, ev->rescind->offer_id->value);
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__FAILURE:
        /* An agent failure names no executor (an executor's does). */
        if (ev->failure->agent_id != NULL &&
            ev->failure->agent_id->value != NULL &&
            ev->failure->executor_id == NULL)
            offerd_pool_agent_lost(s->pool, ev->failure->agent_id->value);
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE:
        if (update_means_agent_lost(ev->update->status))
            offerd_pool_agent_lost(s->pool,
                                   ev->update->status->agent_id->value);
        break;
    default:
        break;
    }
}

/* Run the callback of one decoded event. gen is the stream's generation,
 * to notice a callback that stopped or replaced the stream. */
static void dispatch(struct offerd_sched *s,
                     const Mesos__V1__Scheduler__Event *ev, unsigned gen)
{
    int type = ev->has_type ? (int)ev->type : 0;
    if (type == MESOS__V1__SCHEDULER__EVENT__TYPE__SUBSCRIBED) {
        on_subscribed(s, ev);
        return;
    }
    if (s->state != ST_SUBSCRIBED) {
        log_warn("%s event before SUBSCRIBED ignored", event_type_name(type));
        return;
    }
    offerd_sched_event_fn fn = NULL;
    const void *payload = ev; /* the sub-message the type needs */
    switch (type) {
    case MESOS__V1__SCHEDULER__EVENT__TYPE__OFFERS:
        fn = s->cb.offers;
        payload = ev->offers;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__INVERSE_OFFERS:
        fn = s->cb.inverse_offers;
        payload = ev->inverse_offers;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__RESCIND:
        fn = s->cb.rescind;
        payload = ev->rescind;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__RESCIND_INVERSE_OFFER:
        fn = s->cb.rescind_inverse_offer;
        payload = ev->rescind_inverse_offer;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE:
        fn = s->cb.update;
        payload = ev->update;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE_OPERATION_STATUS:
        fn = s->cb.update_operation_status;
        payload = ev->update_operation_status;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__MESSAGE:
        fn = s->cb.message;
        payload = ev->message;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__FAILURE:
        fn = s->cb.failure;
        payload = ev->failure;
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__ERROR:
        fn = s->cb.error;
        payload = ev->error;
        if (ev->error != NULL)
            log_warn("ERROR event: %s", ev->error->message);
        break;
    case MESOS__V1__SCHEDULER__EVENT__TYPE__HEARTBEAT:
        fn = s->cb.heartbeat;
        break;
    default:
        log_debug("event of unknown type %d ignored", type);
        return;
    }
    if (payload == NULL) {
        log_warn("%s event without its payload ignored", event_type_name(type));
        return;
    }
    if (s->pool != NULL)
        feed_pool(s, ev);
    if (fn != NULL)
        fn(s, ev, s->user);
    if (!s->dead && s->pool != NULL)
        flush_pool(s);
    if (type == MESOS__V1__SCHEDULER__EVENT__TYPE__UPDATE && s->auto_ack &&
        !s->dead && s->conn_gen == gen && s->state == ST_SUBSCRIBED)
        auto_acknowledge(s, ev->update->status);
}

static void handle_record(struct offerd_sched *s, const uint8_t *rec,
                          size_t len, unsigned gen)
{
    if (s->state == ST_SUBSCRIBED && s->hb_interval > 0)
        arm_timer(s->watchdog_ev, s->hb_interval * s->hb_tolerance * 1000.0);
    if (len == 0)
        return; /* Mesos never sends one; harmless */
    char err[256];
    ProtobufCMessage *m =
        jpb_decode(&mesos__v1__scheduler__event__descriptor,
                   (enum jpb_format)s->stream_enc, rec, len, err, sizeof(err));
    if (m == NULL) {
        char reason[320];
        snprintf(reason, sizeof(reason), "undecodable event: %s", err);
        abandon_stream(s, reason);
        return;
    }
    dispatch(s, (const Mesos__V1__Scheduler__Event *)m, gen);
    jpb_free(m);
}

static void on_stream_chunk(const uint8_t *data, size_t len, void *arg)
{
    struct offerd_sched *s = arg;
    enter(s);
    unsigned gen = s->conn_gen;
    size_t off = 0;
    while (!s->dead && s->conn_gen == gen && off < len) {
        size_t used = 0, rlen = 0;
        const uint8_t *rec = NULL;
        enum rio_result r =
            rio_decoder_feed(s->dec, data + off, len - off, &used, &rec, &rlen);
        off += used;
        if (r == RIO_NEED_MORE)
            break;
        if (r == RIO_ERROR) {
            char reason[320];
            snprintf(reason, sizeof(reason), "malformed event stream: %s",
                     rio_decoder_error(s->dec));
            abandon_stream(s, reason);
            break;
        }
        handle_record(s, rec, rlen, gen);
    }
    leave(s);
}

static void on_stream_close(const struct http_client_response *r, void *arg)
{
    struct offerd_sched *s = arg;
    enter(s);
    s->stream = NULL; /* the handle is dead after this callback */
    if (s->dead)
        goto out;
    int status = http_client_status(r);
    char reason[REASON_MAX + 64];
    response_reason(r, reason, sizeof(reason));

    if (s->state == ST_CONNECTED || s->state == ST_SUBSCRIBED) {
        if (status == 200 && http_client_error(r) == NULL)
            snprintf(reason, sizeof(reason),
                     "the master closed the subscription stream");
        stream_lost(s, reason);
        goto out;
    }
    if (s->state != ST_CONNECTING)
        goto out;

    char host[256];
    uint16_t port;
    if (http_client_redirect(r, host, sizeof(host), &port) == 0) {
        log_debug("SUBSCRIBE to %s:%u: %d, following the leader at %s:%u",
                  s->target_host, (unsigned)s->target_port, status, host,
                  (unsigned)port);
        drop_stream(s);
        free(s->target_host);
        s->target_host = xstrdup(host);
        s->target_port = port;
        int delay = s->redirects < MAX_QUICK_REDIRECTS ? 0 : next_backoff(s);
        s->redirects++;
        schedule_connect(s, delay, true);
        goto out;
    }
    if (status >= 400 && status < 500) {
        s->refusals++;
        if (s->max_refusals >= 0 && s->refusals >= s->max_refusals) {
            log_warn("SUBSCRIBE refused %d times in a row, giving up: %d %s",
                     s->refusals, status, reason);
            drop_stream(s);
            s->state = ST_IDLE;
            unsigned run = s->run_gen;
            if (s->cb.call_failed != NULL)
                s->cb.call_failed(s,
                                  MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE,
                                  status, reason, s->user);
            if (s->dead || s->run_gen != run)
                goto out;
            char why[REASON_MAX + 128];
            snprintf(why, sizeof(why),
                     "SUBSCRIBE refused %d times in a row (%d %s)", s->refusals,
                     status, reason);
            if (s->cb.disconnected != NULL)
                s->cb.disconnected(s, why, false, s->user);
            goto out;
        }
    } else {
        s->refusals = 0;
    }
    attempt_failed(s, status, reason);
out:
    leave(s);
}

/* ---- The leader ---- */

/* The detector's report: a new leading master, or none. A client that is
 * started leaves the master it was talking to and subscribes to the new
 * leader at once (the same FrameworkID), or waits while there is none. */
static void leader_changed(struct offerd_sched *s,
                           const struct master_leader *l)
{
    const char *host = l->known ? master_leader_host(l) : "";
    if (l->known == s->leader_known && l->port == s->master_port &&
        strcmp(host, s->master_host) == 0)
        return;
    free(s->master_host);
    s->master_host = xstrdup(host);
    s->master_port = l->known ? l->port : 0;
    s->leader_known = l->known;
    char reason[400];
    if (l->known)
        snprintf(reason, sizeof(reason), "the leading master is now %s:%u",
                 host, (unsigned)l->port);
    else
        snprintf(reason, sizeof(reason), "no leading master is known");
    log_debug("%s", reason);
    if (s->state == ST_IDLE)
        return;
    /* Already talking to it (a redirect got there first): keep that. */
    if (l->known && s->state != ST_WAITING && s->target_port == l->port &&
        strcmp(s->target_host, host) == 0)
        return;
    bool was_open = s->state == ST_CONNECTED || s->state == ST_SUBSCRIBED;
    drop_stream(s);
    s->redirects = 0;
    s->backoff_ms = s->backoff_min_ms;
    schedule_connect(s, 0, false);
    if (was_open && s->cb.disconnected != NULL)
        s->cb.disconnected(s, reason, true, s->user);
}

static void on_leader(const struct master_leader *l, void *arg)
{
    struct offerd_sched *s = arg;
    enter(s);
    if (!s->dead)
        leader_changed(s, l);
    leave(s);
}

/* ---- Lifetime ---- */

struct offerd_sched *offerd_sched_new(struct event_base *base,
                                      const struct offerd_sched_options *o,
                                      char *err, size_t errlen)
{
    if (base == NULL || o == NULL) {
        snprintf(err, errlen, "no event base or options");
        return NULL;
    }
    if (o->master == NULL &&
        (o->master_host == NULL || o->master_host[0] == '\0' ||
         o->master_port == 0)) {
        snprintf(err, errlen,
                 "master, or master_host and master_port, are required");
        return NULL;
    }
    if (o->encoding != OFFERD_ENCODING_JSON &&
        o->encoding != OFFERD_ENCODING_PROTOBUF) {
        snprintf(err, errlen, "unknown encoding %d", (int)o->encoding);
        return NULL;
    }
    if (o->framework_info == NULL) {
        snprintf(err, errlen, "framework_info is required");
        return NULL;
    }
    int bmin = o->backoff_min_ms ? o->backoff_min_ms
                                 : OFFERD_SCHED_DEFAULT_BACKOFF_MIN_MS;
    int bmax = o->backoff_max_ms ? o->backoff_max_ms
                                 : OFFERD_SCHED_DEFAULT_BACKOFF_MAX_MS;
    if (bmin < 0 || bmax < 0 || bmin > bmax) {
        snprintf(err, errlen,
                 "backoff_min_ms %d and backoff_max_ms %d: need "
                 "0 <= min <= max",
                 bmin, bmax);
        return NULL;
    }
    if (o->subscribe_timeout_ms < 0 || o->call_timeout_ms < 0 ||
        o->heartbeat_tolerance < 0 || !isfinite(o->heartbeat_tolerance)) {
        snprintf(err, errlen,
                 "timeouts and heartbeat_tolerance must not be "
                 "negative");
        return NULL;
    }
    Mesos__V1__FrameworkInfo *info = copy_info(o->framework_info, err, errlen);
    if (info == NULL)
        return NULL;

    struct offerd_sched *s = xcalloc(1, sizeof(*s));
    s->base = base;
    s->conns = http_client_pool_new(base, SCHED_CALL_CONNS, 0);
    s->master_host = xstrdup(o->master != NULL ? "" : o->master_host);
    if (o->principal != NULL) {
        s->authorization =
            auth_basic_header(o->principal, o->secret != NULL ? o->secret : "");
        if (info->principal == NULL)
            info->principal = xstrdup(o->principal);
    }
    s->master_port = o->master != NULL ? 0 : o->master_port;
    s->target_host = xstrdup(s->master_host);
    s->target_port = s->master_port;
    s->enc = o->encoding;
    s->stream_enc = o->encoding;
    s->cb = o->callbacks;
    s->user = o->user;
    s->auto_ack = o->auto_acknowledge;
    s->backoff_min_ms = bmin > 0 ? bmin : 1;
    s->backoff_max_ms = bmax > 0 ? bmax : 1;
    s->backoff_ms = s->backoff_min_ms;
    s->hb_tolerance = o->heartbeat_tolerance > 0
                          ? o->heartbeat_tolerance
                          : OFFERD_SCHED_DEFAULT_HEARTBEAT_TOLERANCE;
    s->subscribe_timeout_ms = o->subscribe_timeout_ms
                                  ? o->subscribe_timeout_ms
                                  : OFFERD_SCHED_DEFAULT_SUBSCRIBE_TIMEOUT;
    s->call_timeout_ms = o->call_timeout_ms ? o->call_timeout_ms
                                            : OFFERD_SCHED_DEFAULT_CALL_TIMEOUT;
    s->max_refusals = o->max_subscribe_refusals
                          ? o->max_subscribe_refusals
                          : OFFERD_SCHED_DEFAULT_MAX_REFUSALS;
    s->max_event = o->max_event_size ? o->max_event_size
                                     : OFFERD_SCHED_DEFAULT_MAX_EVENT_SIZE;
    s->info = info;
    s->state = ST_IDLE;
    s->reconnect_ev = evtimer_new(base, on_reconnect_timer, s);
    s->watchdog_ev = evtimer_new(base, on_watchdog, s);
    s->pool_ev = event_new(base, -1, EV_PERSIST, on_pool_timer, s);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s->rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
             (uint64_t)(uintptr_t)s;
    if (s->rng == 0)
        s->rng = 0x9e3779b97f4a7c15ULL;
    if (o->master != NULL) {
        s->detect =
            master_detect_new(base, o->master, 0, on_leader, s, err, errlen);
        if (s->detect == NULL) {
            destroy(s);
            return NULL;
        }
    }
    return s;
}

int offerd_sched_start(struct offerd_sched *s)
{
    if (s == NULL || s->dead || s->state != ST_IDLE)
        return -1;
    if (s->teardown_sent) {
        info_clear_id(s->info);
        s->teardown_sent = false;
    }
    s->refusals = 0;
    s->redirects = 0;
    s->backoff_ms = s->backoff_min_ms;
    s->run_gen++;
    schedule_connect(s, 0, false);
    return 0;
}

static void cancel_calls(struct offerd_sched *s)
{
    while (s->calls != NULL) {
        struct pending_call *pc = s->calls;
        s->calls = pc->next;
        if (pc->req != NULL)
            http_client_cancel(pc->req);
        if (pc->lookup != NULL)
            evdns_getaddrinfo_cancel(pc->lookup);
        free(pc->body);
        free(pc);
    }
    s->ncalls = 0;
}

void offerd_sched_stop(struct offerd_sched *s)
{
    if (s == NULL)
        return;
    drop_stream(s);
    evtimer_del(s->reconnect_ev);
    cancel_calls(s);
    s->state = ST_IDLE;
    s->run_gen++;
}

static void destroy(struct offerd_sched *s)
{
    offerd_sched_stop(s);
    master_detect_free(s->detect);
    event_free(s->reconnect_ev);
    event_free(s->watchdog_ev);
    event_free(s->pool_ev);
    rio_decoder_free(s->dec);
    jpb_free(&s->info->base);
    free(s->master_host);
    if (s->authorization != NULL) {
        explicit_bzero(s->authorization, strlen(s->authorization));
        free(s->authorization);
    }
    free(s->target_host);
    free(s->stream_id);
    if (s->dns != NULL)
        evdns_base_free(s->dns, 0);
    http_client_pool_free(s->conns);
    free(s);
}

void offerd_sched_free(struct offerd_sched *s)
{
    if (s == NULL || s->dead)
        return;
    offerd_sched_stop(s);
    if (s->depth > 0)
        s->dead = true; /* leave() frees it */
    else
        destroy(s);
}

int offerd_sched_set_pool(struct offerd_sched *s, struct offerd_pool *pool)
{
    if (s == NULL || s->dead)
        return -1;
    s->pool = pool;
    if (pool == NULL) {
        evtimer_del(s->pool_ev);
        return 0;
    }
    struct timeval tv = {OFFERD_SCHED_POOL_TICK_MS / 1000,
                         (OFFERD_SCHED_POOL_TICK_MS % 1000) * 1000};
    event_add(s->pool_ev, &tv);
    return 0;
}

struct offerd_pool *offerd_sched_pool(const struct offerd_sched *s)
{
    return s != NULL ? s->pool : NULL;
}

/* ---- State ---- */

bool offerd_sched_is_subscribed(const struct offerd_sched *s)
{
    return s != NULL && !s->dead && s->state == ST_SUBSCRIBED;
}

const char *offerd_sched_framework_id(const struct offerd_sched *s)
{
    return s->info->id != NULL ? s->info->id->value : NULL;
}

const char *offerd_sched_stream_id(const struct offerd_sched *s)
{
    return s->stream_id;
}

const Mesos__V1__FrameworkInfo *
offerd_sched_framework_info(const struct offerd_sched *s)
{
    return s->info;
}

size_t offerd_sched_pending_calls(const struct offerd_sched *s)
{
    return s->ncalls;
}

/* ---- Calls ---- */

static void on_call_done(const struct http_client_response *r, void *arg);

/* Remove pc from the client's list and free it. */
static void call_unlink(struct pending_call *pc)
{
    struct offerd_sched *s = pc->s;
    if (pc->prev != NULL)
        pc->prev->next = pc->next;
    else
        s->calls = pc->next;
    if (pc->next != NULL)
        pc->next->prev = pc->prev;
    s->ncalls--;
    free(pc->body);
    free(pc);
}

/* The call is over: forget it and report anything but a 2xx. */
static void call_finish(struct pending_call *pc, int status, const char *reason)
{
    struct offerd_sched *s = pc->s;
    int type = pc->type;
    call_unlink(pc);
    if (s->dead || (status >= 200 && status <= 299))
        return;
    log_debug("%s call failed: %d %s", call_type_name(type), status, reason);
    if (type == MESOS__V1__SCHEDULER__CALL__TYPE__TEARDOWN)
        s->teardown_sent = false;
    if (s->cb.call_failed != NULL)
        s->cb.call_failed(s, type, status, reason, s->user);
}

/* POST the call's body to ip:pc->port. */
static void call_send(struct pending_call *pc, const char *ip)
{
    struct offerd_sched *s = pc->s;
    struct http_header headers[4] = {
        {"Content-Type", content_type(s->enc)},
        {"Accept", content_type(s->enc)},
    };
    size_t nheaders = 2;
    if (s->stream_id != NULL)
        headers[nheaders++] =
            (struct http_header){"Mesos-Stream-Id", s->stream_id};
    if (s->authorization != NULL)
        headers[nheaders++] =
            (struct http_header){"Authorization", s->authorization};
    struct http_client_options o = {
        .host = ip,
        .port = pc->port,
        .method = HTTP_POST,
        .path = SCHED_PATH,
        .headers = headers,
        .nheaders = nheaders,
        .body = pc->body,
        .body_len = pc->body_len,
        .timeout_ms = s->call_timeout_ms,
        .pool = s->conns,
    };
    pc->req = http_client_request(s->base, &o, on_call_done, pc);
}

static void on_call_resolved(int rc, struct evutil_addrinfo *res, void *arg)
{
    if (rc == EVUTIL_EAI_CANCEL) {
        if (res != NULL)
            evutil_freeaddrinfo(res);
        return;
    }
    struct pending_call *pc = arg;
    struct offerd_sched *s = pc->s;
    enter(s);
    pc->lookup = NULL;
    char ip[64];
    if (rc == 0 && pick_address(res, ip, sizeof(ip)) == 0) {
        call_send(pc, ip);
    } else {
        char reason[512];
        lookup_reason(rc, "the redirect's host", reason, sizeof(reason));
        call_finish(pc, 0, reason);
    }
    if (res != NULL)
        evutil_freeaddrinfo(res);
    leave(s);
}

static void on_call_done(const struct http_client_response *r, void *arg)
{
    struct pending_call *pc = arg;
    struct offerd_sched *s = pc->s;
    enter(s);
    pc->req = NULL;
    char host[256];
    uint16_t port;
    if (!s->dead && pc->hops < MAX_CALL_REDIRECTS &&
        http_client_redirect(r, host, sizeof(host), &port) == 0) {
        /* A master that does not lead names the leader: send it there, as
         * Mesos's scheduler library does. */
        pc->hops++;
        pc->port = port;
        log_debug("%s call: %d, following the leader at %s:%u",
                  call_type_name(pc->type), http_client_status(r), host,
                  (unsigned)port);
        if (is_numeric(host)) {
            call_send(pc, host);
        } else {
            struct evdns_getaddrinfo_request *rq =
                lookup_start(s, host, on_call_resolved, pc);
            if (rq != NULL)
                pc->lookup = rq; /* else pc may be gone already */
        }
        leave(s);
        return;
    }
    char reason[REASON_MAX + 64];
    response_reason(r, reason, sizeof(reason));
    call_finish(pc, http_client_status(r), reason);
    leave(s);
}

/* Encode and POST call to the master of the subscription; fills in
 * framework_id when unset. */
static int post_call(struct offerd_sched *s, Mesos__V1__Scheduler__Call *call)
{
    if (s == NULL || s->dead || s->state != ST_SUBSCRIBED ||
        s->info->id == NULL)
        return -1;
    Mesos__V1__FrameworkID fid = MESOS__V1__FRAMEWORK_ID__INIT;
    if (call->framework_id == NULL) {
        fid.value = s->info->id->value;
        call->framework_id = &fid;
    }
    struct pending_call *pc = xcalloc(1, sizeof(*pc));
    pc->s = s;
    pc->type = call->has_type ? (int)call->type : 0;
    pc->port = s->target_port;
    pc->body = jpb_encode(&call->base, (enum jpb_format)s->enc, &pc->body_len);
    if (call->framework_id == &fid)
        call->framework_id = NULL;
    pc->next = s->calls;
    if (pc->next != NULL)
        pc->next->prev = pc;
    s->calls = pc;
    s->ncalls++;
    log_debug("%s call", call_type_name(pc->type));
    call_send(pc, s->conn_ip);
    return 0;
}

static void call_init(Mesos__V1__Scheduler__Call *call,
                      Mesos__V1__Scheduler__Call__Type type)
{
    mesos__v1__scheduler__call__init(call);
    call->has_type = 1;
    call->type = type;
}

/* OfferIDs for an array of id strings: msgs holds the messages, ptrs the
 * pointer array protobuf-c wants. */
struct offer_ids {
    Mesos__V1__OfferID *msgs;
    Mesos__V1__OfferID **ptrs;
};

static int offer_ids_make(struct offer_ids *v, const char *const *ids, size_t n)
{
    v->msgs = NULL;
    v->ptrs = NULL;
    if (n == 0 || ids == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (ids[i] == NULL)
            return -1;
    v->msgs = xcalloc(n, sizeof(*v->msgs));
    v->ptrs = xcalloc(n, sizeof(*v->ptrs));
    for (size_t i = 0; i < n; i++) {
        mesos__v1__offer_id__init(&v->msgs[i]);
        v->msgs[i].value = (char *)ids[i];
        v->ptrs[i] = &v->msgs[i];
    }
    return 0;
}

static void offer_ids_free(struct offer_ids *v)
{
    free(v->msgs);
    free(v->ptrs);
}

static bool strings_ok(const char *const *v, size_t n)
{
    if (n > 0 && v == NULL)
        return false;
    for (size_t i = 0; i < n; i++)
        if (v[i] == NULL)
            return false;
    return true;
}

int offerd_sched_teardown(struct offerd_sched *s)
{
    Mesos__V1__Scheduler__Call call;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__TEARDOWN);
    if (post_call(s, &call) != 0)
        return -1;
    s->teardown_sent = true;
    return 0;
}

/* Post one of the calls that answer offers or inverse offers (ACCEPT,
 * DECLINE, ACCEPT_INVERSE_OFFERS, DECLINE_INVERSE_OFFERS): ids (n >= 1),
 * filters (may be NULL) and, for ACCEPT only, nops operations. */
static int post_answer(struct offerd_sched *s,
                       Mesos__V1__Scheduler__Call__Type type,
                       const char *const *offer_ids, size_t n,
                       Mesos__V1__Offer__Operation *const *ops, size_t nops,
                       const Mesos__V1__Filters *filters)
{
    struct offer_ids ids;
    if (offer_ids_make(&ids, offer_ids, n) != 0)
        return -1;
    Mesos__V1__Filters *f = (Mesos__V1__Filters *)filters;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Accept acc =
        MESOS__V1__SCHEDULER__CALL__ACCEPT__INIT;
    Mesos__V1__Scheduler__Call__Decline dec =
        MESOS__V1__SCHEDULER__CALL__DECLINE__INIT;
    Mesos__V1__Scheduler__Call__AcceptInverseOffers acc_inv =
        MESOS__V1__SCHEDULER__CALL__ACCEPT_INVERSE_OFFERS__INIT;
    Mesos__V1__Scheduler__Call__DeclineInverseOffers dec_inv =
        MESOS__V1__SCHEDULER__CALL__DECLINE_INVERSE_OFFERS__INIT;
    call_init(&call, type);
    switch (type) {
    case MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT:
        acc.n_offer_ids = n;
        acc.offer_ids = ids.ptrs;
        acc.n_operations = nops;
        acc.operations = (Mesos__V1__Offer__Operation **)ops;
        acc.filters = f;
        call.accept = &acc;
        break;
    case MESOS__V1__SCHEDULER__CALL__TYPE__DECLINE:
        dec.n_offer_ids = n;
        dec.offer_ids = ids.ptrs;
        dec.filters = f;
        call.decline = &dec;
        break;
    case MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT_INVERSE_OFFERS:
        acc_inv.n_inverse_offer_ids = n;
        acc_inv.inverse_offer_ids = ids.ptrs;
        acc_inv.filters = f;
        call.accept_inverse_offers = &acc_inv;
        break;
    default: /* DECLINE_INVERSE_OFFERS */
        dec_inv.n_inverse_offer_ids = n;
        dec_inv.inverse_offer_ids = ids.ptrs;
        dec_inv.filters = f;
        call.decline_inverse_offers = &dec_inv;
        break;
    }
    int rc = post_call(s, &call);
    offer_ids_free(&ids);
    return rc;
}

int offerd_sched_accept(struct offerd_sched *s, const char *const *offer_ids,
                        size_t n, Mesos__V1__Offer__Operation *const *ops,
                        size_t nops, const Mesos__V1__Filters *filters)
{
    if (nops > 0 && ops == NULL)
        return -1;
    for (size_t i = 0; i < nops; i++)
        if (ops[i] == NULL)
            return -1;
    return post_answer(s, MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT, offer_ids,
                       n, ops, nops, filters);
}

int offerd_sched_decline(struct offerd_sched *s, const char *const *offer_ids,
                         size_t n, const Mesos__V1__Filters *filters)
{
    return post_answer(s, MESOS__V1__SCHEDULER__CALL__TYPE__DECLINE, offer_ids,
                       n, NULL, 0, filters);
}

int offerd_sched_accept_inverse_offers(struct offerd_sched *s,
                                       const char *const *inverse_offer_ids,
                                       size_t n,
                                       const Mesos__V1__Filters *filters)
{
    return post_answer(s,
                       MESOS__V1__SCHEDULER__CALL__TYPE__ACCEPT_INVERSE_OFFERS,
                       inverse_offer_ids, n, NULL, 0, filters);
}

int offerd_sched_decline_inverse_offers(struct offerd_sched *s,
                                        const char *const *inverse_offer_ids,
                                        size_t n,
                                        const Mesos__V1__Filters *filters)
{
    return post_answer(s,
                       MESOS__V1__SCHEDULER__CALL__TYPE__DECLINE_INVERSE_OFFERS,
                       inverse_offer_ids, n, NULL, 0, filters);
}

/* Post REVIVE or SUPPRESS for roles (n may be 0: all of them). */
static int post_roles(struct offerd_sched *s,
                      Mesos__V1__Scheduler__Call__Type type,
                      const char *const *roles, size_t n)
{
    if (!strings_ok(roles, n))
        return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Revive rev =
        MESOS__V1__SCHEDULER__CALL__REVIVE__INIT;
    Mesos__V1__Scheduler__Call__Suppress sup =
        MESOS__V1__SCHEDULER__CALL__SUPPRESS__INIT;
    call_init(&call, type);
    if (type == MESOS__V1__SCHEDULER__CALL__TYPE__REVIVE) {
        rev.n_roles = n;
        rev.roles = (char **)roles;
        call.revive = &rev;
    } else {
        sup.n_roles = n;
        sup.roles = (char **)roles;
        call.suppress = &sup;
    }
    return post_call(s, &call);
}

int offerd_sched_revive(struct offerd_sched *s, const char *const *roles,
                        size_t n)
{
    return post_roles(s, MESOS__V1__SCHEDULER__CALL__TYPE__REVIVE, roles, n);
}

int offerd_sched_suppress(struct offerd_sched *s, const char *const *roles,
                          size_t n)
{
    return post_roles(s, MESOS__V1__SCHEDULER__CALL__TYPE__SUPPRESS, roles, n);
}

int offerd_sched_kill(struct offerd_sched *s, const char *task_id,
                      const char *agent_id,
                      const Mesos__V1__KillPolicy *kill_policy)
{
    if (task_id == NULL)
        return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Kill kill =
        MESOS__V1__SCHEDULER__CALL__KILL__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__KILL);
    tid.value = (char *)task_id;
    kill.task_id = &tid;
    if (agent_id != NULL) {
        aid.value = (char *)agent_id;
        kill.agent_id = &aid;
    }
    kill.kill_policy = (Mesos__V1__KillPolicy *)kill_policy;
    call.kill = &kill;
    return post_call(s, &call);
}

int offerd_sched_shutdown(struct offerd_sched *s, const char *executor_id,
                          const char *agent_id)
{
    if (executor_id == NULL || agent_id == NULL)
        return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Shutdown sd =
        MESOS__V1__SCHEDULER__CALL__SHUTDOWN__INIT;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__SHUTDOWN);
    eid.value = (char *)executor_id;
    aid.value = (char *)agent_id;
    sd.executor_id = &eid;
    sd.agent_id = &aid;
    call.shutdown = &sd;
    return post_call(s, &call);
}

int offerd_sched_acknowledge(struct offerd_sched *s, const char *agent_id,
                             const char *task_id, const uint8_t *uuid,
                             size_t uuid_len)
{
    if (agent_id == NULL || task_id == NULL || (uuid == NULL && uuid_len > 0))
        return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Acknowledge ack =
        MESOS__V1__SCHEDULER__CALL__ACKNOWLEDGE__INIT;
    Mesos__V1__TaskID tid = MESOS__V1__TASK_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__ACKNOWLEDGE);
    tid.value = (char *)task_id;
    aid.value = (char *)agent_id;
    ack.task_id = &tid;
    ack.agent_id = &aid;
    ack.uuid.data = (uint8_t *)uuid;
    ack.uuid.len = uuid_len;
    call.acknowledge = &ack;
    return post_call(s, &call);
}

int offerd_sched_reconcile(struct offerd_sched *s,
                           const struct offerd_reconcile_task *tasks, size_t n)
{
    if (n > 0 && tasks == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (tasks[i].task_id == NULL)
            return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Reconcile rec =
        MESOS__V1__SCHEDULER__CALL__RECONCILE__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__RECONCILE);
    Mesos__V1__Scheduler__Call__Reconcile__Task *t = xcalloc(n, sizeof(*t));
    Mesos__V1__Scheduler__Call__Reconcile__Task **tp = xcalloc(n, sizeof(*tp));
    Mesos__V1__TaskID *tids = xcalloc(n, sizeof(*tids));
    Mesos__V1__AgentID *aids = xcalloc(n, sizeof(*aids));
    for (size_t i = 0; i < n; i++) {
        mesos__v1__scheduler__call__reconcile__task__init(&t[i]);
        mesos__v1__task_id__init(&tids[i]);
        tids[i].value = (char *)tasks[i].task_id;
        t[i].task_id = &tids[i];
        if (tasks[i].agent_id != NULL) {
            mesos__v1__agent_id__init(&aids[i]);
            aids[i].value = (char *)tasks[i].agent_id;
            t[i].agent_id = &aids[i];
        }
        tp[i] = &t[i];
    }
    rec.n_tasks = n;
    rec.tasks = tp;
    call.reconcile = &rec;
    int rc = post_call(s, &call);
    free(t);
    free(tp);
    free(tids);
    free(aids);
    return rc;
}

int offerd_sched_message(struct offerd_sched *s, const char *agent_id,
                         const char *executor_id, const uint8_t *data,
                         size_t len)
{
    if (agent_id == NULL || executor_id == NULL || (data == NULL && len > 0))
        return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Message msg =
        MESOS__V1__SCHEDULER__CALL__MESSAGE__INIT;
    Mesos__V1__ExecutorID eid = MESOS__V1__EXECUTOR_ID__INIT;
    Mesos__V1__AgentID aid = MESOS__V1__AGENT_ID__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__MESSAGE);
    eid.value = (char *)executor_id;
    aid.value = (char *)agent_id;
    msg.agent_id = &aid;
    msg.executor_id = &eid;
    msg.data.data = (uint8_t *)data;
    msg.data.len = len;
    call.message = &msg;
    return post_call(s, &call);
}

int offerd_sched_request(struct offerd_sched *s,
                         Mesos__V1__Request *const *requests, size_t n)
{
    if (n > 0 && requests == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (requests[i] == NULL)
            return -1;
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__Request req =
        MESOS__V1__SCHEDULER__CALL__REQUEST__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__REQUEST);
    req.n_requests = n;
    req.requests = (Mesos__V1__Request **)requests;
    call.request = &req;
    return post_call(s, &call);
}

int offerd_sched_update_framework(struct offerd_sched *s,
                                  const Mesos__V1__FrameworkInfo *info,
                                  const char *const *suppressed_roles, size_t n)
{
    if (info == NULL || !strings_ok(suppressed_roles, n))
        return -1;
    if (!offerd_sched_is_subscribed(s))
        return -1;
    char err[256];
    Mesos__V1__FrameworkInfo *copy = copy_info(info, err, sizeof(err));
    if (copy == NULL) {
        log_warn("UPDATE_FRAMEWORK not sent: %s", err);
        return -1;
    }
    info_set_id(copy, s->info->id->value);
    Mesos__V1__Scheduler__Call call;
    Mesos__V1__Scheduler__Call__UpdateFramework up =
        MESOS__V1__SCHEDULER__CALL__UPDATE_FRAMEWORK__INIT;
    call_init(&call, MESOS__V1__SCHEDULER__CALL__TYPE__UPDATE_FRAMEWORK);
    up.framework_info = copy;
    up.n_suppressed_roles = n;
    up.suppressed_roles = (char **)suppressed_roles;
    call.update_framework = &up;
    if (post_call(s, &call) != 0) {
        jpb_free(&copy->base);
        return -1;
    }
    jpb_free(&s->info->base);
    s->info = copy;
    return 0;
}

int offerd_sched_call(struct offerd_sched *s,
                      const Mesos__V1__Scheduler__Call *call)
{
    if (call == NULL || !call->has_type ||
        call->type == MESOS__V1__SCHEDULER__CALL__TYPE__SUBSCRIBE)
        return -1;
    /* A shallow copy, so that the caller's message is left as it was. */
    Mesos__V1__Scheduler__Call copy = *call;
    int rc = post_call(s, &copy);
    if (rc == 0 && call->type == MESOS__V1__SCHEDULER__CALL__TYPE__TEARDOWN)
        s->teardown_sent = true;
    return rc;
}
