/*
 * Tests of common/notify.h: the sd_notify datagram reaches a socket bound
 * at a path or in the abstract namespace, NOTIFY_SOCKET is taken out of
 * the environment, and bad addresses fail without sending.
 */
#include "common/notify.h"

#include "check_main.h"
#include "notify_socket.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(test_send_to_path)
{
    char dir[] = "/tmp/offerd-notify-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/notify", dir);
    int fd = notify_socket_bind(path, 5);
    ck_assert_int_eq(notify_send(path, "READY=1"), 0);
    notify_socket_expect(fd, "READY=1");
    ck_assert_int_eq(notify_send(path, "STOPPING=1"), 0);
    notify_socket_expect(fd, "STOPPING=1");
    close(fd);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_send_to_abstract)
{
    char name[64];
    snprintf(name, sizeof(name), "@offerd-notify-test-%ld", (long)getpid());
    int fd = notify_socket_bind(name, 5);
    ck_assert_int_eq(notify_send(name, "READY=1"), 0);
    notify_socket_expect(fd, "READY=1");
    close(fd);
}
END_TEST

START_TEST(test_bad_addresses)
{
    char long_path[200];
    memset(long_path, 'a', sizeof(long_path) - 1);
    long_path[sizeof(long_path) - 1] = '\0';
    errno = 0;
    ck_assert_int_eq(notify_send("", "READY=1"), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(notify_send(long_path, "READY=1"), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* Nobody listens there: the send fails, nothing blocks. */
    ck_assert_int_eq(notify_send("/nonexistent/offerd/notify", "READY=1"), -1);
}
END_TEST

START_TEST(test_socket_taken_from_environment)
{
    setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1);
    char *s = notify_socket_take();
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "/run/systemd/notify");
    ck_assert_ptr_null(getenv("NOTIFY_SOCKET"));
    free(s);
    ck_assert_ptr_null(notify_socket_take());
    setenv("NOTIFY_SOCKET", "", 1);
    ck_assert_ptr_null(notify_socket_take());
}
END_TEST

static Suite *notify_suite(void)
{
    Suite *s = suite_create("notify");
    TCase *tc = tcase_create("notify");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_send_to_path);
    tcase_add_test(tc, test_send_to_abstract);
    tcase_add_test(tc, test_bad_addresses);
    tcase_add_test(tc, test_socket_taken_from_environment);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(notify_suite)
