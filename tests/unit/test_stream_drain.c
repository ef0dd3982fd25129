/*
 * The slow-reader policy of event streams (common/stream_drain): a stream
 * is cut for not reading, not for a burst its reader drains.
 */
#include <check.h>

#include "check_main.h"
#include "common/stream_drain.h"

static const struct stream_drain_policy P = {100, 1000, 10};

/* One step: bytes queued, bytes pending after, time, and the verdict. */
struct step {
    size_t added, pending;
    int64_t now;
    bool cut;
};

static void play(const struct step *s, size_t n)
{
    struct stream_drain d = {0};
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(stream_drain_check(&d, &P, s[i].added, s[i].pending,
                                         s[i].now) == s[i].cut,
                      "step %zu", i);
}

START_TEST(test_under_soft_cap_never_cut)
{
    const struct step s[] = {
        {50, 50, 1, false}, {50, 100, 100, false}, {0, 100, 10000, false}};
    play(s, sizeof(s) / sizeof(s[0]));
}
END_TEST

/* Over the soft cap with no byte written: cut once the grace is over. */
START_TEST(test_stalled_reader_cut_after_grace)
{
    const struct step s[] = {
        {200, 200, 1, false}, /* over: the grace starts */
        {10, 210, 5, false},  /* nothing written, within the grace */
        {10, 220, 11, false}, /* exactly 10 after: not yet */
        {10, 230, 12, true},  /* past the grace */
    };
    play(s, sizeof(s) / sizeof(s[0]));
}
END_TEST

/* Over the soft cap for far longer than the grace, but the reader takes
 * bytes between every two checks: never cut. */
START_TEST(test_draining_reader_kept)
{
    struct stream_drain d = {0};
    size_t pending = 0;
    for (int64_t t = 0; t < 1000; t += 5) {
        pending += 60; /* 60 queued ... */
        pending -= 20; /* ... 20 of the queue written out meanwhile */
        if (pending > 900)
            pending = 900;
        ck_assert(!stream_drain_check(&d, &P, 60, pending, t));
    }
    ck_assert_uint_gt(pending, P.soft_cap);
}
END_TEST

START_TEST(test_hard_cap_cuts_at_once)
{
    const struct step s[] = {{500, 500, 1, false}, {600, 1001, 2, true}};
    play(s, sizeof(s) / sizeof(s[0]));
}
END_TEST

/* Back under the soft cap, the grace starts over next time. */
START_TEST(test_grace_restarts_under_cap)
{
    const struct step s[] = {
        {200, 200, 1, false},  /* over at 1 */
        {0, 50, 9, false},     /* drained below the cap */
        {200, 250, 30, false}, /* over again at 30: a new grace */
        {10, 260, 35, false},  {10, 270, 41, true},
    };
    play(s, sizeof(s) / sizeof(s[0]));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stream_drain");
    TCase *tc = tcase_create("policy");
    tcase_add_test(tc, test_under_soft_cap_never_cut);
    tcase_add_test(tc, test_stalled_reader_cut_after_grace);
    tcase_add_test(tc, test_draining_reader_kept);
    tcase_add_test(tc, test_hard_cap_cuts_at_once);
    tcase_add_test(tc, test_grace_restarts_under_cap);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(suite)
