/*
 * A test's NOTIFY_SOCKET (see notify_socket.h).
 */
#include "notify_socket.h"

#include <check.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>

int notify_socket_bind(const char *name, int timeout_secs)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    size_t len = strlen(name);
    ck_assert_uint_lt(len, sizeof(sa.sun_path));
    memcpy(sa.sun_path, name, len);
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract: the length ends the name */
    else
        salen++; /* a path: with its NUL */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(bind(fd, (struct sockaddr *)&sa, salen) == 0,
                  "cannot bind %s", name);
    struct timeval tv = {timeout_secs, 0};
    ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
                     0);
    return fd;
}

void notify_socket_expect(int fd, const char *want)
{
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
    ck_assert_msg(n > 0, "no %s within the socket's timeout", want);
    buf[n] = '\0';
    ck_assert_str_eq(buf, want);
}
