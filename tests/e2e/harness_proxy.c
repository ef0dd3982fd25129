/*
 * The chaos proxy (see harness_proxy.h): one thread, one poll loop over the
 * listener and both sockets of every connection. Each direction of a
 * connection is a FIFO of chunks, each with the time it may be written; the
 * end of a direction (EOF read) is a chunk of its own, so it is passed on
 * (as a shutdown) in order.
 */
#include "harness_proxy.h"

#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 256
#define DIR_CAP                                                                \
    (1 << 20) /* bytes held per direction before we stop                       \
                 reading it */
#define READ_SIZE   65536
#define POLL_MAX_MS 10

enum episode {
    EP_CALM,
    EP_SLOW,
    EP_STALL,
    EP_CUT,
    EP_REFUSE,
    EP_PARTITION,
};

static const char *const EP_NAMES[] = {"calm", "slow",   "stall",
                                       "cut",  "refuse", "partition"};

struct chunk {
    struct chunk *next;
    int64_t release_ms;
    size_t len, off; /* len 0: the end of the direction */
    uint8_t data[];
};

struct dir {
    struct chunk *head, *tail;
    size_t bytes; /* held */
    int64_t last_release;
    bool eof_read; /* the source ended */
    bool eof_sent; /* the end was passed on */
};

struct conn {
    int cfd, sfd;    /* client side, upstream side */
    bool connecting; /* upstream connect in progress */
    struct dir d[2]; /* 0: client -> upstream, 1: upstream -> client */
};

struct e2e_proxy {
    char name[32];
    uint16_t upstream;
    uint16_t port;
    int lfd;
    pthread_t th;
    pthread_mutex_t mu;

    /* Under mu. */
    bool stop;
    int64_t chaos_from, chaos_until; /* 0: no chaos asked */
    bool healed;
    struct e2e_proxy_stats stats;

    /* The thread's own. */
    uint64_t rng;
    struct conn *conns[MAX_CONNS];
    int nconns;
    enum episode ep;
    int64_t ep_end;
    int delay_max; /* slow: bound of the delay, ms */
    bool in_chaos;
};

static uint64_t rnd(struct e2e_proxy *p)
{
    /* splitmix64 */
    uint64_t z = (p->rng += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int rnd_between(struct e2e_proxy *p, int lo, int hi)
{
    return lo + (int)(rnd(p) % (uint64_t)(hi - lo + 1));
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Close with a reset (no FIN): the peer sees ECONNRESET. */
static void close_reset(int fd)
{
    if (fd < 0)
        return;
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd);
}

static void dir_clear(struct dir *d)
{
    while (d->head != NULL) {
        struct chunk *c = d->head;
        d->head = c->next;
        free(c);
    }
    d->tail = NULL;
    d->bytes = 0;
}

static void conn_free(struct e2e_proxy *p, int i, bool reset)
{
    struct conn *c = p->conns[i];
    if (reset) {
        pthread_mutex_lock(&p->mu);
        p->stats.dropped += c->d[0].bytes + c->d[1].bytes;
        pthread_mutex_unlock(&p->mu);
        close_reset(c->cfd);
        close_reset(c->sfd);
    } else {
        close(c->cfd);
        close(c->sfd);
    }
    dir_clear(&c->d[0]);
    dir_clear(&c->d[1]);
    free(c);
    p->conns[i] = p->conns[--p->nconns];
}

static void cut_all(struct e2e_proxy *p)
{
    unsigned n = (unsigned)p->nconns;
    while (p->nconns > 0)
        conn_free(p, p->nconns - 1, true);
    pthread_mutex_lock(&p->mu);
    p->stats.cut += n;
    pthread_mutex_unlock(&p->mu);
}

/* ---- The schedule ---- */

static void start_episode(struct e2e_proxy *p, int64_t now)
{
    int r = (int)(rnd(p) % 100);
    int dur;
    enum episode ep;
    p->delay_max = 0;
    if (r < 28) {
        ep = EP_CALM;
        dur = rnd_between(p, 300, 2000);
    } else if (r < 52) {
        static const int bounds[] = {50, 300, 1000, 2500};
        ep = EP_SLOW;
        dur = rnd_between(p, 1000, 4000);
        p->delay_max = bounds[rnd(p) % 4];
    } else if (r < 64) {
        ep = EP_STALL;
        dur = rnd_between(p, 300, 3000);
    } else if (r < 74) {
        ep = EP_CUT;
        dur = rnd_between(p, 100, 800); /* calm after the cut */
        if (rnd(p) % 2 == 0 && p->nconns > 0) {
            int victim = (int)(rnd(p) % (uint64_t)p->nconns);
            conn_free(p, victim, true);
            pthread_mutex_lock(&p->mu);
            p->stats.cut++;
            pthread_mutex_unlock(&p->mu);
        } else {
            cut_all(p);
        }
    } else if (r < 86) {
        ep = EP_REFUSE;
        dur = rnd_between(p, 300, 2000);
    } else {
        ep = EP_PARTITION;
        dur = rnd_between(p, 500, 4000);
        cut_all(p);
    }
    p->ep = ep;
    p->ep_end = now + dur;
    pthread_mutex_lock(&p->mu);
    p->stats.episodes[ep]++;
    int64_t t = now - p->chaos_from;
    pthread_mutex_unlock(&p->mu);
    if (ep == EP_SLOW)
        fprintf(stderr, "proxy %s: +%lld ms %s (up to %d ms) for %d ms\n",
                p->name, (long long)t, EP_NAMES[ep], p->delay_max, dur);
    else
        fprintf(stderr, "proxy %s: +%lld ms %s for %d ms\n", p->name,
                (long long)t, EP_NAMES[ep], dur);
}

/* Advance the schedule; false when the thread must stop. */
static bool schedule(struct e2e_proxy *p, int64_t now)
{
    pthread_mutex_lock(&p->mu);
    bool stop = p->stop;
    int64_t from = p->chaos_from, until = p->chaos_until;
    pthread_mutex_unlock(&p->mu);
    if (stop)
        return false;
    bool chaos = from > 0 && now >= from && now < until;
    if (chaos && !p->in_chaos) {
        p->in_chaos = true;
        start_episode(p, now);
    } else if (chaos && now >= p->ep_end) {
        start_episode(p, now);
    } else if (!chaos && p->in_chaos) {
        p->in_chaos = false;
        p->ep = EP_CALM;
        p->delay_max = 0;
        pthread_mutex_lock(&p->mu);
        p->healed = true;
        pthread_mutex_unlock(&p->mu);
        fprintf(stderr, "proxy %s: healed\n", p->name);
    }
    return true;
}

static bool refusing(const struct e2e_proxy *p)
{
    return p->in_chaos && (p->ep == EP_REFUSE || p->ep == EP_PARTITION);
}

static bool stalled(const struct e2e_proxy *p)
{
    return p->in_chaos && p->ep == EP_STALL;
}

/* ---- Connections ---- */

static void accept_new(struct e2e_proxy *p)
{
    for (;;) {
        int fd = accept(p->lfd, NULL, NULL);
        if (fd < 0)
            return;
        if (refusing(p) || p->nconns == MAX_CONNS) {
            close_reset(fd);
            pthread_mutex_lock(&p->mu);
            p->stats.refused++;
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        int sfd = socket(AF_INET, SOCK_STREAM, 0);
        if (sfd < 0) {
            close_reset(fd);
            continue;
        }
        set_nonblock(fd);
        set_nonblock(sfd);
        struct sockaddr_in a;
        memset(&a, 0, sizeof(a));
        a.sin_family = AF_INET;
        a.sin_port = htons(p->upstream);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int rc = connect(sfd, (struct sockaddr *)&a, sizeof(a));
        if (rc != 0 && errno != EINPROGRESS) {
            close_reset(fd);
            close(sfd);
            continue;
        }
        struct conn *c = calloc(1, sizeof(*c));
        if (c == NULL)
            abort();
        c->cfd = fd;
        c->sfd = sfd;
        c->connecting = rc != 0;
        p->conns[p->nconns++] = c;
        pthread_mutex_lock(&p->mu);
        p->stats.accepted++;
        pthread_mutex_unlock(&p->mu);
    }
}

static void enqueue(struct e2e_proxy *p, struct dir *d, const uint8_t *data,
                    size_t len, int64_t now)
{
    struct chunk *c = malloc(sizeof(*c) + len);
    if (c == NULL)
        abort();
    c->next = NULL;
    c->len = len;
    c->off = 0;
    if (len > 0)
        memcpy(c->data, data, len);
    int64_t rel = now;
    if (p->in_chaos && p->ep == EP_SLOW && p->delay_max > 0)
        rel += rnd_between(p, 0, p->delay_max);
    if (rel < d->last_release)
        rel = d->last_release; /* the order of a direction is kept */
    d->last_release = rel;
    c->release_ms = rel;
    if (d->tail != NULL)
        d->tail->next = c;
    else
        d->head = c;
    d->tail = c;
    d->bytes += len;
}

/* Read what src has into direction d. Returns -1 on a connection error. */
static int pump_in(struct e2e_proxy *p, int src, struct dir *d, int64_t now)
{
    uint8_t buf[READ_SIZE];
    while (!d->eof_read && d->bytes < DIR_CAP) {
        ssize_t n = read(src, buf, sizeof(buf));
        if (n > 0) {
            enqueue(p, d, buf, (size_t)n, now);
            continue;
        }
        if (n == 0) {
            d->eof_read = true;
            enqueue(p, d, NULL, 0, now);
            return 0;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        if (errno == EINTR)
            continue;
        return -1;
    }
    return 0;
}

/* Write what direction d may release to dst. Returns -1 on a connection
 * error. */
static int pump_out(struct e2e_proxy *p, int dst, struct dir *d, int64_t now)
{
    if (stalled(p))
        return 0;
    while (d->head != NULL && d->head->release_ms <= now) {
        struct chunk *c = d->head;
        if (c->len == 0) {
            shutdown(dst, SHUT_WR);
            d->eof_sent = true;
        } else {
            ssize_t n =
                send(dst, c->data + c->off, c->len - c->off, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    return 0;
                if (errno == EINTR)
                    continue;
                return -1;
            }
            c->off += (size_t)n;
            d->bytes -= (size_t)n;
            pthread_mutex_lock(&p->mu);
            p->stats.forwarded += (unsigned long)n;
            pthread_mutex_unlock(&p->mu);
            if (c->off < c->len)
                return 0;
        }
        d->head = c->next;
        if (d->head == NULL)
            d->tail = NULL;
        free(c);
    }
    return 0;
}

static bool releasable(const struct e2e_proxy *p, const struct dir *d,
                       int64_t now)
{
    return !stalled(p) && d->head != NULL && d->head->release_ms <= now;
}

/* One round over connection i after poll; false when it was closed. */
static bool service(struct e2e_proxy *p, int i, const struct pollfd *pc,
                    const struct pollfd *ps, int64_t now)
{
    struct conn *c = p->conns[i];
    if (c->connecting) {
        if (ps->revents == 0) {
            return true;
        }
        int err = 0;
        socklen_t el = sizeof(err);
        getsockopt(c->sfd, SOL_SOCKET, SO_ERROR, &err, &el);
        if (err != 0) {
            conn_free(p, i, true);
            return false;
        }
        c->connecting = false;
    }
    bool bad = false;
    if (pc->revents & (POLLIN | POLLHUP | POLLERR))
        bad |= pump_in(p, c->cfd, &c->d[0], now) != 0;
    if (ps->revents & (POLLIN | POLLHUP | POLLERR))
        bad |= pump_in(p, c->sfd, &c->d[1], now) != 0;
    if (!bad) {
        bad |= pump_out(p, c->sfd, &c->d[0], now) != 0;
        bad |= pump_out(p, c->cfd, &c->d[1], now) != 0;
    }
    if (bad) {
        conn_free(p, i, true);
        return false;
    }
    if (c->d[0].eof_sent && c->d[1].eof_sent) {
        conn_free(p, i, false);
        return false;
    }
    return true;
}

static void *run(void *arg)
{
    struct e2e_proxy *p = arg;
    struct pollfd pfd[1 + 2 * MAX_CONNS];
    for (;;) {
        int64_t now = e2e_now_ms();
        if (!schedule(p, now))
            break;
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = p->lfd, .events = POLLIN};
        int timeout = POLL_MAX_MS;
        for (int i = 0; i < p->nconns; i++) {
            struct conn *c = p->conns[i];
            short ce = 0, se = 0;
            if (c->connecting) {
                se = POLLOUT;
            } else {
                if (!c->d[0].eof_read && c->d[0].bytes < DIR_CAP)
                    ce |= POLLIN;
                if (!c->d[1].eof_read && c->d[1].bytes < DIR_CAP)
                    se |= POLLIN;
                if (releasable(p, &c->d[0], now))
                    se |= POLLOUT;
                if (releasable(p, &c->d[1], now))
                    ce |= POLLOUT;
            }
            /* A socket whose input ended and that has nothing to write
             * is left out: poll would report its hang-up at every round
             * while the other direction drains. */
            bool cidle = ce == 0 && c->d[0].eof_read && !c->connecting;
            bool sidle = se == 0 && c->d[1].eof_read && !c->connecting;
            pfd[n++] = (struct pollfd){.fd = cidle ? -1 : c->cfd, .events = ce};
            pfd[n++] = (struct pollfd){.fd = sidle ? -1 : c->sfd, .events = se};
        }
        poll(pfd, (nfds_t)n, timeout);
        now = e2e_now_ms();
        if (pfd[0].revents & POLLIN)
            accept_new(p);
        /* Service from the end: conn_free moves the last connection into
         * the freed slot, which was serviced already. New connections
         * (after the polled ones) wait for the next round. */
        int polled = (n - 1) / 2;
        for (int i = polled - 1; i >= 0; i--)
            service(p, i, &pfd[1 + 2 * i], &pfd[2 + 2 * i], now);
    }
    while (p->nconns > 0)
        conn_free(p, p->nconns - 1, false);
    return NULL;
}

/* ---- API ---- */

struct e2e_proxy *e2e_proxy_start(const struct e2e_proxy_config *cfg)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        perror("proxy: socket");
        return NULL;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        perror("proxy: listen");
        close(fd);
        return NULL;
    }
    set_nonblock(fd);
    struct e2e_proxy *p = calloc(1, sizeof(*p));
    if (p == NULL)
        abort();
    snprintf(p->name, sizeof(p->name), "%s", cfg->name ? cfg->name : "proxy");
    p->upstream = cfg->upstream_port;
    p->port = ntohs(a.sin_port);
    p->lfd = fd;
    p->rng = cfg->seed;
    pthread_mutex_init(&p->mu, NULL);
    if (pthread_create(&p->th, NULL, run, p) != 0) {
        fprintf(stderr, "proxy: cannot start its thread\n");
        pthread_mutex_destroy(&p->mu);
        close(fd);
        free(p);
        return NULL;
    }
    return p;
}

uint16_t e2e_proxy_port(const struct e2e_proxy *p)
{
    return p->port;
}

void e2e_proxy_chaos(struct e2e_proxy *p, int duration_ms)
{
    int64_t now = e2e_now_ms();
    pthread_mutex_lock(&p->mu);
    p->chaos_from = now;
    p->chaos_until = now + duration_ms;
    p->healed = false;
    pthread_mutex_unlock(&p->mu);
}

bool e2e_proxy_healed(struct e2e_proxy *p)
{
    pthread_mutex_lock(&p->mu);
    bool h = p->chaos_from == 0 || p->healed;
    pthread_mutex_unlock(&p->mu);
    return h;
}

void e2e_proxy_get_stats(struct e2e_proxy *p, struct e2e_proxy_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    pthread_mutex_unlock(&p->mu);
}

void e2e_proxy_stop(struct e2e_proxy *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    close(p->lfd);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
