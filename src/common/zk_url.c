#include "common/zk_url.h"

#include "common/errbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZK_SCHEME "zk://"

bool zk_url_is_zk(const char *text)
{
    return text != NULL && strncmp(text, ZK_SCHEME, strlen(ZK_SCHEME)) == 0;
}

/* One "host:port" of the host list, [s, e). */
static int check_host(const char *s, const char *e, char *err, size_t errlen)
{
    const char *colon = NULL;
    for (const char *p = s; p < e; p++)
        if (*p == ':')
            colon = p;
    if (colon == NULL) {
        errbuf_set(err, errlen, "zk URL: host '%.*s' has no port", (int)(e - s),
                   s);
        return -1;
    }
    if (colon == s) {
        errbuf_set(err, errlen, "zk URL: empty host name before ':%.*s'",
                   (int)(e - colon - 1), colon + 1);
        return -1;
    }
    const char *port = colon + 1;
    if (port == e || e - port > 5) {
        errbuf_set(err, errlen, "zk URL: bad port in '%.*s'", (int)(e - s), s);
        return -1;
    }
    long v = 0;
    for (const char *p = port; p < e; p++) {
        if (*p < '0' || *p > '9') {
            errbuf_set(err, errlen, "zk URL: bad port in '%.*s'", (int)(e - s),
                       s);
            return -1;
        }
        v = v * 10 + (*p - '0');
    }
    if (v < 1 || v > 65535) {
        errbuf_set(err, errlen, "zk URL: port %ld out of range in '%.*s'", v,
                   (int)(e - s), s);
        return -1;
    }
    return 0;
}

int zk_url_parse(const char *text, struct zk_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!zk_url_is_zk(text)) {
        errbuf_set(err, errlen, "zk URL: '%.64s' does not start with zk://",
                   text ? text : "");
        return -1;
    }
    size_t n = strlen(text);
    if (n > ZK_URL_MAX - 1) {
        errbuf_set(err, errlen, "zk URL: longer than %d bytes", ZK_URL_MAX - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= 0x20 || c == 0x7f) {
            errbuf_set(err, errlen,
                       "zk URL: control byte or space at offset %zu", i);
            return -1;
        }
    }
    const char *s = text + strlen(ZK_SCHEME);
    const char *slash = strchr(s, '/');
    if (slash == NULL) {
        errbuf_set(err, errlen, "zk URL: no path after the hosts");
        return -1;
    }
    /* Credentials: everything up to the last '@' before the path. */
    const char *at = NULL;
    for (const char *p = s; p < slash; p++)
        if (*p == '@')
            at = p;
    const char *hosts = s;
    if (at != NULL) {
        const char *colon = memchr(s, ':', (size_t)(at - s));
        if (colon == NULL || colon == s) {
            errbuf_set(err, errlen,
                       "zk URL: credentials must be user:password");
            return -1;
        }
        memcpy(out->auth, s, (size_t)(at - s));
        hosts = at + 1;
    }
    if (hosts == slash) {
        errbuf_set(err, errlen, "zk URL: no host");
        return -1;
    }
    const char *h = hosts;
    while (h < slash) {
        const char *comma = memchr(h, ',', (size_t)(slash - h));
        const char *end = comma ? comma : slash;
        if (end == h) {
            errbuf_set(err, errlen, "zk URL: empty host in the host list");
            return -1;
        }
        if (check_host(h, end, err, errlen) != 0)
            return -1;
        h = comma ? comma + 1 : slash;
        if (comma != NULL && h == slash) {
            errbuf_set(err, errlen, "zk URL: empty host in the host list");
            return -1;
        }
    }
    memcpy(out->hosts, hosts, (size_t)(slash - hosts));
    const char *path = slash;
    if (strstr(path, "//") != NULL) {
        errbuf_set(err, errlen, "zk URL: empty segment in path '%.64s'", path);
        return -1;
    }
    size_t plen = strlen(path);
    if (plen > 1 && path[plen - 1] == '/') {
        errbuf_set(err, errlen, "zk URL: path '%.64s' ends in '/'", path);
        return -1;
    }
    memcpy(out->path, path, plen + 1);
    return 0;
}

int zk_url_join(const char *path, const char *child, char *out, size_t outlen)
{
    bool root = strcmp(path, "/") == 0;
    int w = snprintf(out, outlen, "%s/%s", root ? "" : path, child);
    if (w < 0 || (size_t)w >= outlen) {
        if (outlen > 0)
            out[0] = '\0';
        return -1;
    }
    return 0;
}
