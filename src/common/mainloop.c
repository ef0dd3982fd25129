/*
 * A daemon's event loop, its stop signals and its readiness notifications
 * to systemd; see mainloop.h.
 */
#include "common/mainloop.h"

#include "common/log.h"
#include "common/mem.h"
#include "common/notify.h"

#include <errno.h>
#include <event2/event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

struct mainloop {
    struct event_base *base;
    struct event *sigterm;
    struct event *sigint;
    const char *stopping; /* borrowed: logged when a stop signal arrives */
    char *notify_socket;  /* owned: NOTIFY_SOCKET taken at start, or NULL */
};

/* Send state to the service manager, if one asked (a failure is logged:
 * systemd then times the unit out, which says more than we could). */
static void notify(const struct mainloop *ml, const char *state)
{
    if (ml->notify_socket != NULL && notify_send(ml->notify_socket, state) != 0)
        log_warn("cannot notify %s of %s: %s", ml->notify_socket, state,
                 strerror(errno));
}

static void on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
    struct mainloop *ml = arg;
    (void)what;
    log_info("received %s: %s", strsignal((int)sig), ml->stopping);
    notify(ml, "STOPPING=1");
    event_base_loopexit(ml->base, NULL);
}

/* The loop's base, with epoll's change list on: the changes made to one
 * descriptor during a loop turn go to the kernel as one epoll_ctl when
 * the turn ends, not one per change. evhttp turns reading off when a
 * request has arrived and writing on for its reply, then writing off
 * and reading on again once the reply is written: four epoll_ctl per
 * request without the list, two with it (docs/performance.md, "Per
 * request"). libevent warns that the list misbehaves with descriptors
 * copied by dup() inside the loop's process; the daemons dup only in
 * children they fork before exec, and before the loop exists. */
static struct event_base *new_base(void)
{
    struct event_config *cfg = event_config_new();
    if (cfg == NULL)
        return NULL;
    event_config_set_flag(cfg, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    struct event_base *base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    return base;
}

struct mainloop *mainloop_new(const char *stopping)
{
    struct mainloop *ml = xcalloc(1, sizeof(*ml));
    ml->stopping = stopping;
    ml->notify_socket = notify_socket_take();
    signal(SIGPIPE, SIG_IGN);
    ml->base = new_base();
    if (ml->base == NULL) {
        log_error("cannot create the event loop");
        goto fail;
    }
    ml->sigterm = evsignal_new(ml->base, SIGTERM, on_stop_signal, ml);
    ml->sigint = evsignal_new(ml->base, SIGINT, on_stop_signal, ml);
    if (ml->sigterm == NULL || ml->sigint == NULL ||
        evsignal_add(ml->sigterm, NULL) != 0 ||
        evsignal_add(ml->sigint, NULL) != 0) {
        log_error("cannot watch signals");
        goto fail;
    }
    return ml;
fail:
    mainloop_free(ml);
    return NULL;
}

struct event_base *mainloop_base(const struct mainloop *ml)
{
    return ml->base;
}

int mainloop_run(struct mainloop *ml)
{
    notify(ml, "READY=1");
    if (event_base_dispatch(ml->base) < 0) {
        log_error("event loop failed");
        return -1;
    }
    return 0;
}

void mainloop_free(struct mainloop *ml)
{
    if (ml == NULL)
        return;
    if (ml->sigterm != NULL)
        event_free(ml->sigterm);
    if (ml->sigint != NULL)
        event_free(ml->sigint);
    if (ml->base != NULL)
        event_base_free(ml->base);
    free(ml->notify_socket);
    free(ml);
}
