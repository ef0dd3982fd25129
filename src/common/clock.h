/*
 * Clocks: monotonic time for timeouts and intervals, wall-clock time only for
 * what people read (log lines, registration times in /state). Both are
 * int64_t nanoseconds, the unit Mesos uses for durations on the wire.
 * Modules that make decisions from time (the allocator, offer timeouts)
 * take "now" as an argument instead of calling these, so tests pass exact
 * values.
 */
#ifndef OFFERD_COMMON_CLOCK_H
#define OFFERD_COMMON_CLOCK_H

#include <stdint.h>

#define CLOCK_NS_PER_US  INT64_C(1000)
#define CLOCK_NS_PER_MS  INT64_C(1000000)
#define CLOCK_NS_PER_SEC INT64_C(1000000000)

/* Nanoseconds on CLOCK_MONOTONIC: never goes backwards, unrelated to the
 * date; only differences mean anything. */
int64_t clock_monotonic_ns(void);

/* Nanoseconds since the Unix epoch on CLOCK_REALTIME (can jump). */
int64_t clock_wall_ns(void);

/* Seconds since the epoch as a double, the form Mesos's /state uses for
 * times such as "registered_time" and "start_time". */
double clock_wall_secs(void);

#endif
