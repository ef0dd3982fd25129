/*
 * A temporary log verbosity, as Mesos's /logging/toggle and the v1
 * operator APIs' SET_LOGGING_LEVEL / GET_LOGGING_LEVEL: an operator raises
 * the verbosity for a while, and a timer on the loop puts it back.
 *
 * offerd logs by level, not by glog verbosity: verbosity 0 is the level the
 * daemon started with (--logging_level), any verbosity above 0 logs at
 * DEBUG. The verbosity set is what GET_LOGGING_LEVEL and a bare
 * /logging/toggle answer. One toggle per daemon: it sets the process's
 * level (log.h).
 */
#ifndef OFFERD_COMMON_LOG_TOGGLE_H
#define OFFERD_COMMON_LOG_TOGGLE_H

#include <stdint.h>

#include "common/log.h"

struct event_base;
struct http_request;
struct log_toggle;

/* A toggle on base at verbosity 0, restoring base_level when it reverts.
 * Free with log_toggle_free. */
struct log_toggle *log_toggle_new(struct event_base *base,
                                  enum log_level base_level);
/* Put the level back to base_level if it was raised, and free t (NULL is
 * fine). */
void log_toggle_free(struct log_toggle *t);

/* Set verbosity v. Above 0: log at DEBUG for duration_ns (>= 0), then
 * revert to 0; 0: back to the base level now. Replaces any earlier toggle
 * and its timer. */
void log_toggle_set(struct log_toggle *t, uint32_t v, int64_t duration_ns);
/* The verbosity in force. */
uint32_t log_toggle_verbosity(const struct log_toggle *t);

/* GET or POST /logging/toggle[?level=N&duration=D] (an http_handler_fn;
 * arg is the struct log_toggle): without parameters, 200 with the
 * verbosity and a newline; with both, 200 once set; a missing or
 * malformed one, 400 with Mesos's reason. */
void log_toggle_handle(struct http_request *req, void *arg);

#endif
