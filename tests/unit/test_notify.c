/*
 * Tests of common/notify.h: the sd_notify datagram reaches a socket bound
 * at a path or in the abstract namespace, NOTIFY_SOCKET is taken out of
 * the environment, and bad addresses fail without sending.
 */
#include "common/notify.h"

#include "check_main.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Bind a datagram socket at name (a path, or "@..." for the abstract
 * namespace) as systemd does for NOTIFY_SOCKET. */
static int bind_notify_socket(const char *name)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    size_t len = strlen(name);
    ck_assert_uint_lt(len, sizeof(sa.sun_path));
    memcpy(sa.sun_path, name, len);
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    else
        salen++;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, salen), 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static void expect_datagram(int fd, const char *want)
{
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, want);
}

START_TEST(test_send_to_path)
{
    char dir[] = "/tmp/offerd-notify-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/notify", dir);
    int fd = bind_notify_socket(path);
    ck_assert_int_eq(notify_send(path, "READY=1"), 0);
    expect_datagram(fd, "READY=1");
    ck_assert_int_eq(notify_send(path, "STOPPING=1"), 0);
    expect_datagram(fd, "STOPPING=1");
    close(fd);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_send_to_abstract)
{
    char name[64];
    snprintf(name, sizeof(name), "@offerd-notify-test-%ld", (long)getpid());
    int fd = bind_notify_socket(name);
    ck_assert_int_eq(notify_send(name, "READY=1"), 0);
    expect_datagram(fd, "READY=1");
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
