/*
 * Fuzz target: raw bytes from a client of the master's HTTP port (request
 * lines, methods, headers, chunked and sized bodies, several requests in a
 * row). A real master listens on 127.0.0.1 (fuzz_master.h); each input is
 * written on a new connection, the write side is shut, and the loop runs
 * until the master closes the connection or 100 ms pass. Every layer a peer
 * reaches is exercised: evhttp's parser, common/http's connection tracking
 * and limits, routing, negotiation, the call table and the handlers.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_master.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_master_start(true);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(master_port(fuzz_m))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return 0;
    }
    size_t off = 0;
    bool shut = false;
    int64_t end = now_ms() + 100;
    uint8_t buf[65536];
    while (now_ms() < end) {
        if (off < size) {
            ssize_t w = send(fd, data + off, size - off, MSG_NOSIGNAL);
            if (w > 0)
                off += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                     errno != EINPROGRESS && errno != ENOTCONN)
                off = size;
        } else if (!shut) {
            shutdown(fd, SHUT_WR);
            shut = true;
        }
        event_base_loop(fuzz_base, EVLOOP_NONBLOCK);
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                       errno != ENOTCONN))
            break;
    }
    close(fd);
    fuzz_master_settle(4);
    return 0;
}
