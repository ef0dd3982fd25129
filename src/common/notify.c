/*
 * The sd_notify datagram protocol; see notify.h.
 */
#include "common/notify.h"

#include "common/mem.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

char *notify_socket_take(void)
{
    const char *v = getenv("NOTIFY_SOCKET");
    if (v == NULL || v[0] == '\0')
        return NULL;
    char *copy = xstrdup(v);
    unsetenv("NOTIFY_SOCKET");
    return copy;
}

int notify_send(const char *path, const char *state)
{
    struct sockaddr_un sa;
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof(sa.sun_path)) {
        errno = EINVAL;
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, len);
    /* An abstract address has a NUL first byte and counts only its
     * length; a path address counts its terminating NUL. */
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    else
        salen++;

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
                       (const struct sockaddr *)&sa, salen);
    int saved = errno;
    close(fd);
    if (n < 0) {
        errno = saved;
        return -1;
    }
    return 0;
}
