/*
 * offerctl_http: offerctl's struct octl_io over the real network: each
 * request goes out through common/http_client.h on one event_base, which
 * runs until the answer is in (offerctl does one thing at a time), and the
 * pause between two polls of `logs --follow` is a timer on the same base,
 * during which SIGINT and SIGTERM arrive as loop events and stop the
 * follow.
 */
#ifndef OFFERD_CLI_OFFERCTL_HTTP_H
#define OFFERD_CLI_OFFERCTL_HTTP_H

#include "cli/offerctl.h"

#include <stdbool.h>
#include <stdint.h>

struct event;
struct event_base;

/* Redirects one request follows (a standby master names the leader). */
#define OCTL_HTTP_MAX_REDIRECTS 3

/* The network side of offerctl. Fill the first four fields, then pass it
 * as octl_io.arg with the functions below. A request to the master that
 * is answered with a redirect (307, or 503 with a Location: a master that
 * does not lead) is sent again to the Location's master, at most
 * OCTL_HTTP_MAX_REDIRECTS times, and later requests go there too. */
struct octl_http {
    struct event_base *base; /* borrowed; main's only base */
    char master_ip[64];      /* numeric address of the master */
    uint16_t master_port;
    int64_t timeout_ms;        /* per request */
    const char *authorization; /* Authorization header of every request
                                  (cli_authorization), or NULL */
    bool stopped; /* set by SIGINT/SIGTERM once a pause has begun */
    /* The SIGINT and SIGTERM events: added by the first pause and kept
     * until octl_http_clear, so that a signal during a request between two
     * pauses also stops the follow instead of killing the process. */
    struct event *sigint, *sigterm;
};

/* octl_io.request: send rq to the master (or the agent it names), run the
 * base until the answer arrives, fill *rp. */
void octl_http_request(void *arg, const struct octl_request *rq,
                       struct octl_reply *rp);

/* octl_io.sleep_ms: run the base for ms, or until SIGINT/SIGTERM (from
 * then on, those signals set `stopped` instead of ending the process). */
void octl_http_sleep_ms(void *arg, int64_t ms);

/* octl_io.stopped: true once SIGINT or SIGTERM arrived after a pause began. */
bool octl_http_stopped(void *arg);

/* Free the signal events of h (before freeing its base); the signals get
 * their default action back. */
void octl_http_clear(struct octl_http *h);

#endif
