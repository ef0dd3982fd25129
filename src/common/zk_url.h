/*
 * zk_url: the ZooKeeper URL Mesos's flags take (--zk, --master=zk://...):
 *
 *     zk://[user:password@]host:port[,host:port...]/path
 *
 * split into what the ZooKeeper C client wants: the comma-separated host
 * list for zookeeper_init(), the znode path the group lives under, and the
 * optional digest credentials ("user:password", for zoo_add_auth with the
 * "digest" scheme), as Mesos's zookeeper::URL does.
 *
 * Parsing only; nothing is resolved or connected here.
 */
#ifndef OFFERD_COMMON_ZK_URL_H
#define OFFERD_COMMON_ZK_URL_H

#include <stdbool.h>
#include <stddef.h>

/* Longest URL accepted, in bytes without the NUL. */
#define ZK_URL_MAX 4096

struct zk_url {
    char hosts[ZK_URL_MAX]; /* "h1:p1,h2:p2" */
    char path[ZK_URL_MAX];  /* "/mesos"; never "" and never ends in '/'
                             * unless it is "/" */
    char auth[ZK_URL_MAX];  /* "user:password", or "" for none */
};

/* True when text starts with "zk://" (case-sensitive, as Mesos). */
bool zk_url_is_zk(const char *text);

/* Parse text into out. Returns 0, or -1 with a one-line reason in err (out
 * is then unspecified). Refused: a missing "zk://", no host, a host without
 * a port or with a port outside 1..65535, an empty host name, a missing or
 * relative path, a path with an empty segment ("//"), a trailing '/' (other
 * than the root itself), control bytes or spaces anywhere, and credentials
 * without ':' or with an empty user. */
int zk_url_parse(const char *text, struct zk_url *out, char *err,
                 size_t errlen);

/* out (outlen bytes) = path "/" child, with no doubled '/' when path is the
 * root. Returns 0, or -1 when it does not fit (out then holds ""). */
int zk_url_join(const char *path, const char *child, char *out, size_t outlen);

#endif
