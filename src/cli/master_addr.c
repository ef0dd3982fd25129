/*
 * master_addr: --master=HOST:PORT for the command-line programs; see
 * master_addr.h.
 */
#include "cli/master_addr.h"

#include <arpa/inet.h>
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
