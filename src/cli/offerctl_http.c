/*
 * offerctl_http: offerctl's requests over common/http_client.h; see
 * offerctl_http.h.
 */
#include "cli/offerctl_http.h"

#include "cli/master_addr.h"
#include "common/http_client.h"
#include "common/mem.h"

#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct pending {
    struct octl_reply *rp;
    bool done;
    bool redirect; /* the answer names another master: */
    char host[256];
    uint16_t port;
};

static void on_done(const struct http_client_response *r, void *arg)
{
    struct pending *p = arg;
    p->rp->status = http_client_status(r);
    if (p->rp->status == 0) {
        const char *e = http_client_error(r);
        p->rp->body = xstrdup(e ? e : "no answer");
        p->rp->len = strlen(p->rp->body);
    } else {
        size_t len;
        const uint8_t *b = http_client_body(r, &len);
        p->rp->body = xmalloc(len + 1);
        memcpy(p->rp->body, b, len);
        p->rp->body[len] = '\0';
        p->rp->len = len;
    }
    p->redirect =
        http_client_redirect(r, p->host, sizeof(p->host), &p->port) == 0;
    p->done = true;
}

/* Send rq once to host:port and run the base until the answer is in. */
static void request_once(struct octl_http *h, const struct octl_request *rq,
                         const char *host, uint16_t port, struct pending *p)
{
    struct http_header headers[3];
    size_t n = 0;
    if (rq->post) {
        headers[n++] = (struct http_header){"Content-Type", "application/json"};
        headers[n++] = (struct http_header){"Accept", "application/json"};
    }
    if (h->authorization != NULL)
        headers[n++] = (struct http_header){"Authorization", h->authorization};
    struct http_client_options o = {
        .host = host,
        .port = port,
        .method = rq->post ? HTTP_POST : HTTP_GET,
        .path = rq->path,
        .headers = n > 0 ? headers : NULL,
        .nheaders = n,
        .body = rq->body,
        .body_len = rq->body ? strlen(rq->body) : 0,
        .timeout_ms = (int)h->timeout_ms,
    };
    memset(p->rp, 0, sizeof(*p->rp));
    p->done = false;
    p->redirect = false;
    http_client_request(h->base, &o, on_done, p);
    while (!p->done)
        if (event_base_loop(h->base, EVLOOP_ONCE) != 0)
            break;
    if (!p->done) {
        /* The loop had nothing left to run: cannot happen while the
         * request is pending, but never return an unfilled reply. */
        p->rp->status = 0;
        p->rp->body = xstrdup("the event loop stopped");
        p->rp->len = strlen(p->rp->body);
    }
}

void octl_http_request(void *arg, const struct octl_request *rq,
                       struct octl_reply *rp)
{
    struct octl_http *h = arg;
    struct pending p = {.rp = rp};
    if (rq->to_agent) {
        request_once(h, rq, rq->host, rq->port, &p);
        return;
    }
    request_once(h, rq, h->master_ip, h->master_port, &p);
    for (int hops = 0; p.redirect && hops < OCTL_HTTP_MAX_REDIRECTS; hops++) {
        /* Offerctl does one thing at a time: looking the leader's name up
         * here holds nothing else. */
        char hostport[300], ip[64], err[400];
        uint16_t port;
        snprintf(hostport, sizeof(hostport),
                 strchr(p.host, ':') != NULL ? "[%s]:%u" : "%s:%u", p.host,
                 (unsigned)p.port);
        if (cli_master_addr_parse(hostport, ip, sizeof(ip), &port, err,
                                  sizeof(err)) != 0)
            return; /* the redirect stands as the answer */
        free(rp->body);
        snprintf(h->master_ip, sizeof(h->master_ip), "%s", ip);
        h->master_port = port;
        request_once(h, rq, h->master_ip, h->master_port, &p);
    }
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    struct octl_http *h = arg;
    h->stopped = true;
    event_base_loopbreak(h->base);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    event_base_loopbreak(arg);
}

void octl_http_sleep_ms(void *arg, int64_t ms)
{
    struct octl_http *h = arg;
    if (h->sigint == NULL) {
        h->sigint = evsignal_new(h->base, SIGINT, on_signal, h);
        h->sigterm = evsignal_new(h->base, SIGTERM, on_signal, h);
        evsignal_add(h->sigint, NULL);
        evsignal_add(h->sigterm, NULL);
    }
    struct event *timer = evtimer_new(h->base, on_timer, h->base);
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(timer, &tv);
    event_base_dispatch(h->base);
    event_free(timer);
}

bool octl_http_stopped(void *arg)
{
    return ((struct octl_http *)arg)->stopped;
}

void octl_http_clear(struct octl_http *h)
{
    if (h->sigint != NULL)
        event_free(h->sigint);
    if (h->sigterm != NULL)
        event_free(h->sigterm);
    h->sigint = h->sigterm = NULL;
}
