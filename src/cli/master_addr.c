/*
 * master_addr: --master for the command-line programs; see master_addr.h.
 */
#include "cli/master_addr.h"

#include "common/master_detect.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <stdbool.h>
#include <zookeeper/zookeeper.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int cli_master_addr_parse(const char *text, char *ip, size_t iplen,
                          uint16_t *port, char *err, size_t errlen)
{
    const char *p = text;
    if (strncmp(p, "http://", 7) == 0)
        p += 7;
    const char *colon = strrchr(p, ':');
    if (colon == NULL || colon == p) {
        snprintf(err, errlen, "--master: expected HOST:PORT, got '%s'", text);
        return -1;
    }
    char host[256];
    size_t hlen = (size_t)(colon - p);
    if (p[0] == '[' && hlen >= 2 && p[hlen - 1] == ']') {
        p++;
        hlen -= 2;
    }
    if (hlen == 0 || hlen >= sizeof(host)) {
        snprintf(err, errlen, "--master: bad host in '%s'", text);
        return -1;
    }
    memcpy(host, p, hlen);
    host[hlen] = '\0';
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || (*end != '\0' && strcmp(end, "/") != 0) || v <= 0 ||
        v > 65535) {
        snprintf(err, errlen, "--master: bad port in '%s'", text);
        return -1;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || res == NULL) {
        snprintf(err, errlen, "--master: cannot resolve '%s': %s", host,
                 gai_strerror(rc));
        return -1;
    }
    const void *addr =
        res->ai_family == AF_INET6
            ? (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr
            : (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr;
    if (inet_ntop(res->ai_family, addr, ip, (socklen_t)iplen) == NULL) {
        freeaddrinfo(res);
        snprintf(err, errlen, "--master: cannot use '%s'", host);
        return -1;
    }
    freeaddrinfo(res);
    *port = (uint16_t)v;
    return 0;
}

/* The wait for a detector's first leader. */
struct finding {
    struct event_base *base;
    struct master_leader leader;
    bool done;     /* a leader came, or the time is up */
    bool timedout; /* the time is up */
};

static void on_leader(const struct master_leader *l, void *arg)
{
    struct finding *f = arg;
    if (!l->known || f->done)
        return;
    f->leader = *l;
    f->done = true;
    event_base_loopbreak(f->base);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct finding *f = arg;
    (void)fd;
    (void)what;
    f->done = true;
    f->timedout = true;
    event_base_loopbreak(f->base);
}

int cli_master_addr_find(struct event_base *base, const char *text,
                         int timeout_ms, char *ip, size_t iplen, uint16_t *port,
                         char *err, size_t errlen)
{
    if (strncmp(text, "zk://", 5) != 0 && strncmp(text, "file://", 7) != 0)
        return cli_master_addr_parse(text, ip, iplen, port, err, errlen);
    /* The ZooKeeper client library prints each failed connection attempt
     * on stderr; a command line says what went wrong in one line of its
     * own. (The stream stays open for the process's life.) */
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull != NULL)
        zoo_set_log_stream(devnull);
    if (timeout_ms <= 0)
        timeout_ms = CLI_MASTER_FIND_TIMEOUT_MS;
    struct finding f = {.base = base};
    char why[400];
    struct master_detect *d =
        master_detect_new(base, text, 0, on_leader, &f, why, sizeof(why));
    if (d == NULL) {
        snprintf(err, errlen, "--master: %s", why);
        return -1;
    }
    struct event *timer = evtimer_new(base, on_timeout, &f);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(timer, &tv);
    while (!f.done)
        if (event_base_loop(base, EVLOOP_ONCE) < 0)
            break;
    bool zk = master_detect_is_zk(d);
    master_detect_free(d);
    event_free(timer);
    if (!f.done || f.timedout) {
        if (zk)
            snprintf(err, errlen,
                     "--master: no leading master found in ZooKeeper within "
                     "%g s",
                     timeout_ms / 1000.0);
        else
            snprintf(err, errlen, "--master: '%s' named no master within %g s",
                     text, timeout_ms / 1000.0);
        return -2;
    }
    if (f.leader.ip[0] != '\0' && strlen(f.leader.ip) < iplen) {
        snprintf(ip, iplen, "%s", f.leader.ip);
        *port = f.leader.port;
        return 0;
    }
    char hostport[320];
    snprintf(hostport, sizeof(hostport), "%s:%u", master_leader_host(&f.leader),
             (unsigned)f.leader.port);
    return cli_master_addr_parse(hostport, ip, iplen, port, err, errlen);
}
