/*
 * Clock readings via clock_gettime.
 */
#include "common/clock.h"

#include <time.h>

static int64_t read_ns(clockid_t id)
{
    struct timespec ts;
    /* clock_gettime cannot fail for these clocks on Linux. */
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * CLOCK_NS_PER_SEC + ts.tv_nsec;
}

int64_t clock_monotonic_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int64_t clock_wall_ns(void)
{
    return read_ns(CLOCK_REALTIME);
}

double clock_wall_secs(void)
{
    return (double)clock_wall_ns() / (double)CLOCK_NS_PER_SEC;
}
