/*
 * Tests of common/mainloop.h: the loop stops on SIGTERM and SIGINT,
 * SIGPIPE no longer kills the process, and a service manager's
 * NOTIFY_SOCKET hears READY=1 and STOPPING=1.
 */
#include "common/mainloop.h"

#include "check_main.h"
#include "notify_socket.h"

#include <check.h>
#include <event2/event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct raiser {
    int sig;
    bool ran;
};

/* Raise the signal from inside the running loop, as a peer's kill would
 * arrive while the daemon serves. */
static void raise_it(evutil_socket_t fd, short what, void *arg)
{
    struct raiser *r = arg;
    (void)fd;
    (void)what;
    r->ran = true;
    raise(r->sig);
}

static void run_until(int sig)
{
    struct mainloop *ml = mainloop_new("stopping (test)");
    ck_assert_ptr_nonnull(ml);
    struct event_base *base = mainloop_base(ml);
    ck_assert_ptr_nonnull(base);
    struct raiser r = {sig, false};
    struct timeval soon = {0, 1000};
    ck_assert_int_eq(event_base_once(base, -1, EV_TIMEOUT, raise_it, &r, &soon),
                     0);
    /* Without the stop signal the loop would wait for ever: the test's
     * timeout would fail it. */
    ck_assert_int_eq(mainloop_run(ml), 0);
    ck_assert(r.ran);
    mainloop_free(ml);
}

START_TEST(test_sigterm_stops_the_loop)
{
    run_until(SIGTERM);
}
END_TEST

START_TEST(test_sigint_stops_the_loop)
{
    run_until(SIGINT);
}
END_TEST

START_TEST(test_sigpipe_is_ignored)
{
    struct mainloop *ml = mainloop_new("stopping (test)");
    ck_assert_ptr_nonnull(ml);
    raise(SIGPIPE); /* the default action would end the test process */
    mainloop_free(ml);
}
END_TEST

/* As systemd does for a Type=notify unit: a datagram socket named by
 * NOTIFY_SOCKET; the loop must report READY=1 when it runs and STOPPING=1
 * on SIGTERM, and leave the variable out of its children's environment. */
START_TEST(test_notifies_ready_and_stopping)
{
    char name[64];
    snprintf(name, sizeof(name), "@offerd-mainloop-test-%ld", (long)getpid());
    int fd = notify_socket_bind(name, 5);
    setenv("NOTIFY_SOCKET", name, 1);

    run_until(SIGTERM);
    ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));

    /* Both were sent before run_until returned: no wait. */
    notify_socket_expect(fd, "READY=1");
    notify_socket_expect(fd, "STOPPING=1");
    close(fd);
}
END_TEST

START_TEST(test_free_null)
{
    mainloop_free(NULL);
}
END_TEST

static Suite *mainloop_suite(void)
{
    Suite *s = suite_create("mainloop");
    TCase *tc = tcase_create("mainloop");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_sigterm_stops_the_loop);
    tcase_add_test(tc, test_sigint_stops_the_loop);
    tcase_add_test(tc, test_sigpipe_is_ignored);
    tcase_add_test(tc, test_notifies_ready_and_stopping);
    tcase_add_test(tc, test_free_null);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(mainloop_suite)
