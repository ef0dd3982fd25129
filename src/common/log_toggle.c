/*
 * The temporary log verbosity (log_toggle.h): the master's and the agent's
 * /logging/toggle and SET_LOGGING_LEVEL share it. The revert is a timer on
 * the daemon's loop, so a toggle never blocks and never outlives its
 * duration by more than a loop turn.
 */
#include "common/log_toggle.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/flags.h"
#include "common/http.h"
#include "common/mem.h"

struct log_toggle {
    enum log_level base_level; /* the level at verbosity 0 */
    uint32_t verbosity;        /* 0: base_level; above: DEBUG */
    struct event *revert;      /* puts verbosity back to 0 */
};

static void apply(struct log_toggle *t, uint32_t v)
{
    t->verbosity = v;
    log_set_level(v > 0 ? LOG_LEVEL_DEBUG : t->base_level);
}

static void on_revert(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct log_toggle *t = arg;
    apply(t, 0);
    log_info("logging verbosity restored to 0");
}

struct log_toggle *log_toggle_new(struct event_base *base,
                                  enum log_level base_level)
{
    struct log_toggle *t = xcalloc(1, sizeof(*t));
    t->base_level = base_level;
    t->revert = evtimer_new(base, on_revert, t);
    if (t->revert == NULL) {
        log_error("cannot create the logging toggle's timer");
        abort();
    }
    return t;
}

void log_toggle_free(struct log_toggle *t)
{
    if (t == NULL)
        return;
    if (t->verbosity > 0)
        log_set_level(t->base_level);
    event_free(t->revert);
    free(t);
}

void log_toggle_set(struct log_toggle *t, uint32_t v, int64_t duration_ns)
{
    evtimer_del(t->revert);
    apply(t, v);
    if (v == 0)
        return;
    if (duration_ns < 0)
        duration_ns = 0;
    struct timeval tv = {(time_t)(duration_ns / CLOCK_NS_PER_SEC),
                         (suseconds_t)(duration_ns % CLOCK_NS_PER_SEC / 1000)};
    evtimer_add(t->revert, &tv);
    log_info("logging at DEBUG (verbosity %u) for %.3f seconds", v,
             (double)duration_ns / CLOCK_NS_PER_SEC);
}

uint32_t log_toggle_verbosity(const struct log_toggle *t)
{
    return t->verbosity;
}

void log_toggle_handle(struct http_request *req, void *arg)
{
    struct log_toggle *t = arg;
    const char *level = http_request_query(req, "level");
    const char *duration = http_request_query(req, "duration");
    if (level == NULL && duration == NULL) {
        char body[32];
        int n = snprintf(body, sizeof(body), "%u\n", t->verbosity);
        http_reply(req, 200, "text/plain; charset=utf-8", body, (size_t)n);
        return;
    }
    if (duration == NULL) {
        http_reply_error(req, 400, "Expecting 'duration=value' in query.");
        return;
    }
    if (level == NULL) {
        http_reply_error(req, 400, "Expecting 'level=value' in query.");
        return;
    }
    char *end;
    long v = strtol(level, &end, 10);
    if (level[0] == '\0' || *end != '\0' || v > 1000 || v < -1000) {
        http_reply_error(req, 400, "Failed to convert '%s' to number.", level);
        return;
    }
    if (v < 0) {
        http_reply_error(req, 400, "Invalid level '%ld'.", v);
        return;
    }
    int64_t ns;
    char err[256];
    if (flags_parse_duration(duration, &ns, err, sizeof(err)) != 0 || ns < 0) {
        http_reply_error(req, 400, "Invalid duration '%s'.", duration);
        return;
    }
    log_toggle_set(t, (uint32_t)v, ns);
    http_reply(req, 200, NULL, NULL, 0);
}
