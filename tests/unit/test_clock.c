/*
 * Tests for common/clock.
 */
#include "common/clock.h"

#include "check_main.h"

#include <check.h>
#include <time.h>

START_TEST(test_monotonic_never_decreases)
{
    int64_t prev = clock_monotonic_ns();
    for (int i = 0; i < 100000; i++) {
        int64_t now = clock_monotonic_ns();
        ck_assert_int_ge(now, prev);
        prev = now;
    }
}
END_TEST

START_TEST(test_monotonic_advances)
{
    int64_t a = clock_monotonic_ns();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int64_t b = clock_monotonic_ns();
    ck_assert_int_ge(b - a, 20 * CLOCK_NS_PER_MS);
}
END_TEST

START_TEST(test_wall_matches_time)
{
    int64_t before = (int64_t)time(NULL);
    int64_t ns = clock_wall_ns();
    int64_t after = (int64_t)time(NULL);
    ck_assert_int_ge(ns / CLOCK_NS_PER_SEC, before);
    ck_assert_int_le(ns / CLOCK_NS_PER_SEC, after);
    double secs = clock_wall_secs();
    ck_assert(secs >= (double)before && secs <= (double)after + 1.0);
}
END_TEST

static Suite *clock_suite(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("clock");
    tcase_add_test(tc, test_monotonic_never_decreases);
    tcase_add_test(tc, test_monotonic_advances);
    tcase_add_test(tc, test_wall_matches_time);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(clock_suite)
