/*
 * The HTTP server's connections: tracking, timeouts, the buffered-bytes
 * budget, shedding past the connection cap, and a quiet accept loop when
 * the process runs out of descriptors. The contract is in http_conn.h and
 * in http.h ("Holding under abuse").
 *
 * How a connection is seen (libevent 2.1.12, http.c):
 *  - evhttp_get_request_connection calls our bufferevent callback for each
 *    accepted socket, creates the evhttp_connection on that bufferevent and
 *    sets the bufferevent's callbacks with the connection as their argument.
 *    The connection does not exist yet when we are called, so a fix-up event
 *    (activated from the callback, run before any read of the new socket
 *    can be reported) reads it back with bufferevent_getcb and takes the
 *    connection's close callback.
 *  - evhttp calls the close callback at the start of evhttp_connection_free
 *    for every incoming connection (they are never "reset", and keep their
 *    fd until freed), whoever frees it: a peer that went, evhttp after an
 *    error reply or a Connection: close, evhttp_free, or us.
 *  - The bytes a peer sends land in the bufferevent's input buffer, whose
 *    callback (not deferred: the bufferevent has no BEV_OPT_DEFER_CALLBACKS)
 *    tells us how many arrived: that is the budget's measure, and where the
 *    end of a request header is spotted.
 *  - Closing a connection is evhttp_connection_free from one of our own
 *    events (a safe point: no evhttp callback of it is running), and only
 *    for connections without a request at a handler.
 */
#include "common/http_conn.h"

#include "common/clock.h"
#include "common/hmap.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/tls.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define NS_PER_MS  INT64_C(1000000)
#define NS_PER_SEC INT64_C(1000000000)
#define SWEEP_MS   1000 /* timeouts are checked this often */
#define DRAIN_READS                                                            \
    16 /* reads of DRAIN_BUF before closing a refused connection */
#define DRAIN_BUF     65536
#define PAUSE_MIN_MS  100 /* first backoff of a failing accept() */
#define PAUSE_MAX_MS  1000
#define MAX_LISTENERS 8

struct http_conn {
    struct http_conns *owner;
    struct bufferevent *bev;          /* ours; evhttp frees it */
    struct evbuffer_cb_entry *in_cb;  /* on bev's input */
    struct evhttp_connection *evcon;  /* NULL until the fix-up ran */
    char key[2 * sizeof(void *) + 3]; /* evcon as text: owner->by_evcon */
    char *peer; /* "ip:port" of the peer, once a request asked (owned) */
    struct http_conn *prev, *next; /* owner's list, oldest first */
    struct http_conn *fix_next;    /* owner->fix_head */
    int64_t req_start_ns; /* accept, or the end of its last busy period */
    int64_t header_ns;    /* when the current header ended */
    size_t req_bytes;     /* received for the request being read: counted
                             in owner->buffered */
    uint64_t body_bytes;  /* received after the current header */
    uint64_t requests;    /* requests that reached a handler */
    unsigned eol;         /* header-end matcher: 1 after "\n", 2 after
                             "\n\r", else 0 */
    bool header_done;     /* the current request's header has ended */
    bool over_budget;     /* to be answered 503 by the sweep */
    void (*watch)(struct evhttp_connection *, void *); /* set: busy */
    void *watch_arg;
};

struct http_conns {
    struct event_base *base;
    struct evhttp *http;
    const struct http_server_options *opts;
    struct hmap *by_evcon; /* key -> struct http_conn, fixed-up ones */
    struct http_conn *head, *tail;
    struct http_conn *fix_head;
    struct event *fix_ev;
    struct event *sweep_ev;
    struct event *resume_ev;
    struct evconnlistener *listeners[MAX_LISTENERS];
    size_t nlisteners;
    bool paused_cap;   /* over the cap: no accepts until the sweep (or a
                          close) made room */
    bool full_logged;  /* "none idle" logged for this episode */
    bool paused_error; /* accept() failed: backing off */
    bool in_episode;   /* accept() failures logged, no success since */
    int pause_ms;
    int64_t sweep_at_ns; /* when the armed sweep runs */
    bool trim;           /* a big request's memory was freed: give it back
                            to the system at the next sweep */
    size_t nconns;
    size_t buffered;
    struct http_server_stats st; /* counters (conns/buffered filled late) */
    struct tls_server *tls;      /* borrowed; NULL: plain HTTP */
    struct http_conns *all_next; /* all_conns */
    uint8_t drain_buf[DRAIN_BUF];
};

/* Every tracker, so that a listener's error callback, whose argument is
 * evhttp's (the struct evhttp), finds its tracker. A process has a server
 * or two; the lock is for tests that run servers on several threads. */
static struct http_conns *all_conns;
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;

static struct http_conns *conns_of_http(const void *http)
{
    pthread_mutex_lock(&all_lock);
    struct http_conns *c = all_conns;
    while (c != NULL && (const void *)c->http != http)
        c = c->all_next;
    pthread_mutex_unlock(&all_lock);
    return c;
}

/* evcon's address in hex, as the key of by_evcon (outlen at least
 * 2 * sizeof(void *) + 1). Looked up for every request: no printf. */
static void conn_key(const struct evhttp_connection *evcon, char *out,
                     size_t outlen)
{
    static const char hex[] = "0123456789abcdef";
    uintptr_t v = (uintptr_t)evcon;
    size_t n = 2 * sizeof(v);
    if (outlen < n + 1)
        n = outlen - 1;
    for (size_t i = n; i > 0; i--) {
        out[i - 1] = hex[v & 0xf];
        v >>= 4;
    }
    out[n] = '\0';
}

/* ---- Listeners ---- */

static void listeners_set(struct http_conns *c)
{
    bool on = !c->paused_cap && !c->paused_error;
    for (size_t i = 0; i < c->nlisteners; i++) {
        if (on)
            evconnlistener_enable(c->listeners[i]);
        else
            evconnlistener_disable(c->listeners[i]);
    }
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
    struct http_conns *c = arg;
    (void)fd;
    (void)what;
    c->paused_error = false;
    listeners_set(c);
}

static void on_accept_error(struct evconnlistener *l, void *arg)
{
    int e = EVUTIL_SOCKET_ERROR();
    struct http_conns *c = conns_of_http(arg); /* evhttp's argument */
    if (c == NULL) {
        evconnlistener_disable(l); /* cannot happen; never spin */
        return;
    }
    c->st.accept_pauses++;
    if (!c->in_episode) {
        log_warn("http: accept() failed: %s (%zu connections open); pausing "
                 "new connections with a backoff",
                 evutil_socket_error_to_string(e), c->nconns);
        c->in_episode = true;
    }
    c->pause_ms = c->pause_ms == 0 ? PAUSE_MIN_MS : c->pause_ms * 2;
    if (c->pause_ms > PAUSE_MAX_MS)
        c->pause_ms = PAUSE_MAX_MS;
    c->paused_error = true;
    listeners_set(c);
    struct timeval tv = {c->pause_ms / 1000, (c->pause_ms % 1000) * 1000};
    evtimer_add(c->resume_ev, &tv);
}

void http_conns_add_listener(struct http_conns *c, struct evconnlistener *l)
{
    if (l == NULL || c->nlisteners == MAX_LISTENERS)
        return;
    c->listeners[c->nlisteners++] = l;
    evconnlistener_set_error_cb(l, on_accept_error);
    /* libevent listens with a backlog of 128: a burst of connections past
     * it has its SYNs dropped, and a client then waits a second for the
     * retry. Ask for the kernel's maximum (Linux caps it at somaxconn). */
    if (listen(evconnlistener_get_fd(l), 4096) != 0)
        log_debug("http: cannot raise the listen backlog");
    listeners_set(c);
}

/* ---- Sweep scheduling ---- */

static void arm_sweep(struct http_conns *c, int ms)
{
    int64_t at = clock_monotonic_ns() + (int64_t)ms * NS_PER_MS;
    if (evtimer_pending(c->sweep_ev, NULL) && c->sweep_at_ns <= at)
        return;
    c->sweep_at_ns = at;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    evtimer_add(c->sweep_ev, &tv);
}

/* ---- Connections come and go ---- */

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info,
                     void *arg);
static bool shed_one(struct http_conns *c);

static void on_fix(evutil_socket_t fd, short what, void *arg);

static struct bufferevent *on_new_bev(struct event_base *base, void *arg)
{
    struct http_conns *c = arg;
    /* As evhttp makes its own: a socket bufferevent, fd set by evhttp, not
     * closed on free (evhttp closes the fd); with TLS, common/tls's
     * (which closes the fd itself). */
    struct bufferevent *bev = c->tls != NULL
                                  ? tls_server_bev(c->tls, base)
                                  : bufferevent_socket_new(base, -1, 0);
    if (bev == NULL)
        return NULL; /* evhttp tries its own; that one goes untracked */
    struct http_conn *conn = xcalloc(1, sizeof(*conn));
    conn->owner = c;
    conn->bev = bev;
    conn->req_start_ns = clock_monotonic_ns();
    conn->in_cb = evbuffer_add_cb(bufferevent_get_input(bev), on_input, conn);
    conn->prev = c->tail;
    if (c->tail != NULL)
        c->tail->next = conn;
    else
        c->head = conn;
    c->tail = conn;
    c->nconns++;
    conn->fix_next = c->fix_head;
    c->fix_head = conn;
    event_active(c->fix_ev, EV_TIMEOUT, 0);
    if (c->in_episode) {
        log_info("http: accepting connections again (%zu open)", c->nconns);
        c->in_episode = false;
        c->pause_ms = 0;
    }
    /* Over the cap: make room now, closing an older idle connection (we
     * are inside evhttp's accept, before the new connection exists: no
     * callback of the one closed is running). With none to close, stop the
     * listener's accept loop here (it checks after each callback) until a
     * connection goes. */
    if (c->opts->max_conns > 0 && c->nconns > c->opts->max_conns &&
        !shed_one(c)) {
        c->paused_cap = true;
        listeners_set(c);
        arm_sweep(c, 0);
    }
    return bev;
}

static void on_gone(struct evhttp_connection *evcon, void *arg);

static void on_fix(evutil_socket_t fd, short what, void *arg)
{
    struct http_conns *c = arg;
    (void)fd;
    (void)what;
    while (c->fix_head != NULL) {
        struct http_conn *conn = c->fix_head;
        c->fix_head = conn->fix_next;
        conn->fix_next = NULL;
        void *cbarg = NULL;
        bufferevent_getcb(conn->bev, NULL, NULL, NULL, &cbarg);
        if (cbarg == NULL) {
            /* evhttp could not make the connection (out of memory) and
             * freed the bufferevent: nothing of it is left to watch. */
            log_error("http: a new connection vanished before it was set up");
            continue;
        }
        conn->evcon = cbarg;
        conn_key(conn->evcon, conn->key, sizeof(conn->key));
        hmap_put(c->by_evcon, conn->key, conn);
        evhttp_connection_set_closecb(conn->evcon, on_gone, conn);
    }
}

static void on_gone(struct evhttp_connection *evcon, void *arg)
{
    struct http_conn *conn = arg;
    struct http_conns *c = conn->owner;
    if (conn->watch != NULL) {
        void (*fn)(struct evhttp_connection *, void *) = conn->watch;
        conn->watch = NULL;
        fn(evcon, conn->watch_arg);
    }
    evbuffer_remove_cb_entry(bufferevent_get_input(conn->bev), conn->in_cb);
    if (conn->prev != NULL)
        conn->prev->next = conn->next;
    else
        c->head = conn->next;
    if (conn->next != NULL)
        conn->next->prev = conn->prev;
    else
        c->tail = conn->prev;
    hmap_del(c->by_evcon, conn->key);
    c->nconns--;
    c->buffered -= conn->req_bytes;
    if (conn->req_bytes >= ((size_t)256 << 10))
        c->trim = true;
    free(conn->peer);
    free(conn);
    if (c->paused_cap &&
        (c->opts->max_conns == 0 || c->nconns <= c->opts->max_conns)) {
        c->paused_cap = false;
        listeners_set(c);
    }
}

struct http_conn *http_conns_find(struct http_conns *c,
                                  struct evhttp_connection *evcon)
{
    if (c == NULL || evcon == NULL)
        return NULL;
    char key[sizeof(((struct http_conn *)0)->key)];
    conn_key(evcon, key, sizeof(key));
    return hmap_get(c->by_evcon, key);
}

const char *http_conn_peer(const struct http_conn *conn)
{
    return conn->peer;
}

void http_conn_set_peer(struct http_conn *conn, char *peer)
{
    free(conn->peer);
    conn->peer = peer;
}

void http_conn_dispatched(struct http_conn *conn)
{
    conn->owner->buffered -= conn->req_bytes;
    conn->req_bytes = 0;
    conn->body_bytes = 0;
    conn->header_done = false;
    conn->eol = 0;
    conn->requests++;
}

void http_conn_watch(struct http_conn *conn,
                     void (*fn)(struct evhttp_connection *, void *), void *arg)
{
    conn->watch = fn;
    conn->watch_arg = arg;
    if (fn == NULL)
        conn->req_start_ns = clock_monotonic_ns();
}

/* ---- What arrives ---- */

/* Feed n new bytes at p to the header-end matcher; returns how many bytes
 * of them follow the header's end, or -1 if it has not ended. */
static ssize_t scan_header(struct http_conn *conn, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[i];
        if (ch == '\n') {
            if (conn->eol != 0) {
                conn->eol = 0;
                return (ssize_t)(n - i - 1);
            }
            conn->eol = 1;
        } else if (ch == '\r') {
            if (conn->eol == 1)
                conn->eol = 2;
        } else {
            conn->eol = 0;
        }
    }
    return -1;
}

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info,
                     void *arg)
{
    struct http_conn *conn = arg;
    struct http_conns *c = conn->owner;
    size_t n = info->n_added;
    if (n == 0)
        return;
    conn->req_bytes += n;
    c->buffered += n;
    if (conn->header_done) {
        conn->body_bytes += n;
    } else {
        /* The new bytes are the buffer's last n. */
        size_t len = evbuffer_get_length(buf);
        struct evbuffer_ptr pos;
        if (n <= len &&
            evbuffer_ptr_set(buf, &pos, len - n, EVBUFFER_PTR_SET) == 0) {
            size_t left = n;
            while (left > 0 && !conn->header_done) {
                struct evbuffer_iovec v[8];
                int nv = evbuffer_peek(buf, (ev_ssize_t)left, &pos, v, 8);
                if (nv <= 0)
                    break;
                size_t seen = 0;
                for (int i = 0; i < nv && i < 8 && seen < left; i++) {
                    size_t take = v[i].iov_len;
                    if (take > left - seen)
                        take = left - seen;
                    ssize_t after = scan_header(conn, v[i].iov_base, take);
                    seen += take;
                    if (after >= 0) {
                        conn->header_done = true;
                        conn->header_ns = clock_monotonic_ns();
                        conn->body_bytes = (uint64_t)after + (left - seen);
                        break;
                    }
                }
                left -= seen;
                if (left > 0 &&
                    evbuffer_ptr_set(buf, &pos, seen, EVBUFFER_PTR_ADD) != 0)
                    break;
            }
        }
    }
    if (c->opts->max_buffered > 0 && c->buffered > c->opts->max_buffered &&
        !conn->over_budget) {
        conn->over_budget = true;
        arm_sweep(c, 0);
    }
}

/* ---- The sweep ---- */

static void conn_close(struct http_conn *conn)
{
    /* on_gone runs inside and frees conn. */
    evhttp_connection_free(conn->evcon);
}

static bool output_empty(const struct http_conn *conn)
{
    return evbuffer_get_length(bufferevent_get_output(conn->bev)) == 0;
}

static const char refusal[] =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 68\r\n"
    "Retry-After: 1\r\n"
    "Connection: close\r\n"
    "\r\n"
    "server busy: too many request bytes are being received, retry later\n";

_Static_assert(sizeof("server busy: too many request bytes are being received, "
                      "retry later\n") -
                       1 ==
                   68,
               "Content-Length of the refusal");

/* Answer 503 on conn's socket and close it. Before the close, what the
 * peer already sent is read and dropped, so that the close sends a FIN
 * after the 503 rather than a reset (which can make the peer lose the
 * reply); if more keeps coming the peer may still see a reset, after the
 * 503 arrived. The buffered bytes are freed at once. */
static void refuse(struct http_conn *conn)
{
    struct http_conns *c = conn->owner;
    conn->over_budget = false;
    c->st.over_budget++;
    evutil_socket_t fd = bufferevent_getfd(conn->bev);
    /* Under TLS the socket carries records, not this text: just close. */
    if (c->tls == NULL && fd >= 0 && output_empty(conn)) {
        /* evhttp is reading the request and writes nothing meanwhile; the
         * socket's send buffer takes these few bytes at once. */
        ssize_t w = send(fd, refusal, sizeof(refusal) - 1, MSG_NOSIGNAL);
        (void)w;
        shutdown(fd, SHUT_WR);
        for (int i = 0; i < DRAIN_READS; i++)
            if (recv(fd, c->drain_buf, sizeof(c->drain_buf), MSG_DONTWAIT) <= 0)
                break;
    }
    c->trim = true;
    conn_close(conn);
}

/* May conn be closed to make room? tier 0: never completed a request and
 * is not inside one; tier 1: idle between requests. */
static bool sheddable(const struct http_conn *conn, int tier)
{
    if (conn->evcon == NULL || conn->watch != NULL || conn->header_done ||
        !output_empty(conn))
        return false;
    return tier == 0 ? conn->requests == 0 : conn->requests > 0;
}

/* Close the oldest connection of the first tier that has one. Returns
 * whether one was closed. */
static bool shed_one(struct http_conns *c)
{
    for (int tier = 0; tier < 2; tier++) {
        for (struct http_conn *conn = c->head; conn != NULL;
             conn = conn->next) {
            if (sheddable(conn, tier)) {
                c->st.shed++;
                log_debug("http: closing an idle connection for room (%zu "
                          "open, cap %zu)",
                          c->nconns, c->opts->max_conns);
                conn_close(conn);
                return true;
            }
        }
    }
    return false;
}

static void shed(struct http_conns *c)
{
    size_t cap = c->opts->max_conns;
    if (cap == 0)
        return;
    while (c->nconns > cap && shed_one(c)) {
    }
    bool full = c->nconns > cap;
    if (full && !c->full_logged)
        log_warn("http: %zu connections open, none idle: new connections "
                 "wait until one closes",
                 c->nconns);
    c->full_logged = full;
    if (full != c->paused_cap) {
        c->paused_cap = full;
        listeners_set(c);
    }
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
    struct http_conns *c = arg;
    (void)fd;
    (void)what;
    int64_t now = clock_monotonic_ns();
    const struct http_server_options *o = c->opts;
    size_t before = c->buffered;
    int refused = 0;
    for (struct http_conn *conn = c->head; conn != NULL;) {
        struct http_conn *next = conn->next;
        if (conn->evcon == NULL) {
            conn = next;
            continue;
        }
        if (conn->over_budget && c->buffered > o->max_buffered) {
            refuse(conn); /* frees conn */
            refused++;
        } else if (conn->over_budget) {
            conn->over_budget = false; /* others' refusals made room */
        } else if (conn->watch != NULL) {
            /* busy: a handler or a stream has it */
        } else if (!output_empty(conn)) {
            conn->req_start_ns = now; /* a reply is still going out */
        } else if (o->idle_timeout_ns > 0 && !conn->header_done &&
                   now - conn->req_start_ns > o->idle_timeout_ns) {
            c->st.timed_out++;
            log_debug("http: closing a connection that sent no request "
                      "header in time");
            conn_close(conn);
        } else if (o->min_body_rate > 0 && conn->header_done &&
                   o->idle_timeout_ns > 0 &&
                   now - conn->header_ns > o->idle_timeout_ns &&
                   (double)conn->body_bytes <
                       (double)o->min_body_rate *
                           (double)(now - conn->header_ns) / 1e9) {
            c->st.slow_bodies++;
            log_debug("http: closing a connection whose body arrives slower "
                      "than %llu bytes/s",
                      (unsigned long long)o->min_body_rate);
            conn_close(conn);
        }
        conn = next;
    }
    if (refused > 0)
        log_info("http: refused %d request(s) with 503: %zu bytes of requests "
                 "being received passed the budget of %zu",
                 refused, before, o->max_buffered);
    shed(c);
#ifdef __GLIBC__
    /* Freed request buffers sit in malloc's free lists; a peer that made
     * the master buffer hundreds of MiB should not leave it that big. */
    if (c->trim && c->buffered < ((size_t)1 << 20)) {
        malloc_trim(0);
        c->trim = false;
    }
#endif
    arm_sweep(c, SWEEP_MS);
}

/* ---- The tracker ---- */

struct http_conns *http_conns_new(struct event_base *base, struct evhttp *http,
                                  const struct http_server_options *opts)
{
    struct http_conns *c = xcalloc(1, sizeof(*c));
    c->base = base;
    c->http = http;
    c->opts = opts;
    c->by_evcon = hmap_new();
    c->fix_ev = event_new(base, -1, 0, on_fix, c);
    c->sweep_ev = evtimer_new(base, on_sweep, c);
    c->resume_ev = evtimer_new(base, on_resume, c);
    evhttp_set_bevcb(http, on_new_bev, c);
    pthread_mutex_lock(&all_lock);
    c->all_next = all_conns;
    all_conns = c;
    pthread_mutex_unlock(&all_lock);
    arm_sweep(c, SWEEP_MS);
    return c;
}

void http_conns_set_tls(struct http_conns *c, struct tls_server *tls)
{
    c->tls = tls;
}

void http_conns_free(struct http_conns *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&all_lock);
    struct http_conns **pp = &all_conns;
    while (*pp != NULL && *pp != c)
        pp = &(*pp)->all_next;
    if (*pp == c)
        *pp = c->all_next;
    pthread_mutex_unlock(&all_lock);
    /* evhttp_free closed every connection (on_gone ran for each fixed-up
     * one); what is left never got its connection. */
    while (c->head != NULL) {
        struct http_conn *conn = c->head;
        c->head = conn->next;
        free(conn->peer);
        free(conn);
    }
    event_free(c->fix_ev);
    event_free(c->sweep_ev);
    event_free(c->resume_ev);
    hmap_free(c->by_evcon, NULL);
    free(c);
}

void http_conns_stats(const struct http_conns *c, struct http_server_stats *out)
{
    *out = c->st;
    out->conns = c->nconns;
    out->buffered = c->buffered;
}

size_t http_max_conns_for_fd_limit(uint64_t *fd_limit)
{
    struct rlimit rl;
    uint64_t lim = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur != rl.rlim_max) {
            struct rlimit want = rl;
            want.rlim_cur = rl.rlim_max;
            if (rl.rlim_max == RLIM_INFINITY ||
                setrlimit(RLIMIT_NOFILE, &want) != 0) {
                want.rlim_cur = 1 << 20; /* Linux's usual nr_open */
                if (want.rlim_cur > rl.rlim_cur &&
                    setrlimit(RLIMIT_NOFILE, &want) == 0)
                    rl.rlim_cur = want.rlim_cur;
            } else {
                rl.rlim_cur = want.rlim_cur;
            }
        }
        lim = rl.rlim_cur == RLIM_INFINITY ? (uint64_t)1 << 20
                                           : (uint64_t)rl.rlim_cur;
    }
    if (fd_limit != NULL)
        *fd_limit = lim;
    uint64_t reserve = lim / 8 > 64 ? lim / 8 : 64;
    return (size_t)(lim > 2 * reserve ? lim - reserve : lim / 2);
}
