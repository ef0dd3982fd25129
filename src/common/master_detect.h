/*
 * master_detect: where the leading master is, for every form a `--master`
 * flag takes, behind one API:
 *
 *   host:port       a fixed master (an IP or a host name, given back as
 *                   text: the connecting side resolves it at each attempt)
 *   zk://[user:pass@]host:port[,host:port...]/path
 *                   the masters' election group in ZooKeeper, laid out as
 *                   Mesos lays it out: each master holds an ephemeral
 *                   sequential child `json.info_<10-digit seq>` of path
 *                   whose data is its MasterInfo as JSON; the leader is the
 *                   child with the lowest sequence. Other children (Mesos's
 *                   protobuf `info_` nodes, `log_replicas`...) are ignored.
 *   file:///path    a file holding one of the two forms above (read once,
 *                   when the detector is created; surrounding whitespace
 *                   ignored), as Mesos reads `--master=file://...`.
 *
 * The detector lives on one libevent loop and reports on that loop's
 * thread: the callback runs whenever the leader changes, including to
 * "none" (the group is empty, or the ZooKeeper session is lost or expired:
 * Mesos's detector also reports no leader on expiry). It never runs from
 * inside master_detect_new or master_detect_free. A fixed master is
 * reported once, from the loop, soon after master_detect_new.
 *
 * With zk://, the detector keeps one ZooKeeper session (common/zk.h) and
 * re-creates it after expiry; a connection loss only suspends reports
 * (the leader known last is kept until the session expires, as ZooKeeper's
 * own guarantee goes).
 */
#ifndef OFFERD_COMMON_MASTER_DETECT_H
#define OFFERD_COMMON_MASTER_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct master_detect;

/* Mesos's label of the JSON MasterInfo children (src/master/constants.hpp
 * MASTER_INFO_JSON_LABEL); a child is "<label>_<sequence>". */
#define MASTER_DETECT_JSON_LABEL "json.info"

/* Longest `--master` text accepted (and longest file:// content). */
#define MASTER_DETECT_MAX_SPEC 4096

/* The leading master as the detector knows it. All strings are
 * NUL-terminated and empty when unknown. */
struct master_leader {
    bool known;         /* false: no leader (the other fields are empty) */
    char id[256];       /* MasterInfo.id; empty for a fixed host:port */
    char hostname[256]; /* MasterInfo.hostname, or the host of host:port */
    char ip[64];        /* dotted IPv4 (MasterInfo.address.ip, else its
                         * uint32 ip), or the host of host:port when that is
                         * numeric; empty when only a name is known */
    uint16_t port;      /* MasterInfo.port / address.port, or host:port's */
};

/* The host text to connect to: the ip when known, else the hostname.
 * Borrowed from leader. */
const char *master_leader_host(const struct master_leader *leader);

/* Called on the loop's thread with the new leader (borrowed for the call;
 * leader->known false: none). The callback may free the detector. */
typedef void (*master_detect_cb)(const struct master_leader *leader, void *arg);

/* A detector for spec (copied) on base (borrowed), reporting to cb.
 * session_timeout_ms is the ZooKeeper session timeout asked for (zk://
 * only; <= 0: 10000, Mesos's default). Returns the detector, or NULL with
 * a one-line reason in err when spec is not one of the forms above, the
 * file cannot be read, or the session cannot be created. */
struct master_detect *master_detect_new(struct event_base *base,
                                        const char *spec,
                                        int64_t session_timeout_ms,
                                        master_detect_cb cb, void *arg,
                                        char *err, size_t errlen);

/* The leader known now (borrowed; valid until the next report or free). */
const struct master_leader *master_detect_leader(const struct master_detect *d);

/* True when spec is (or the file names) a zk:// group. */
bool master_detect_is_zk(const struct master_detect *d);

/* Stop, cancel every ZooKeeper request, free; no callback runs after.
 * NULL is ignored. */
void master_detect_free(struct master_detect *d);

/* Resolve a file:// spec: when spec starts with "file://", copy the
 * file's content (whitespace trimmed) into out, else copy spec itself.
 * Returns 0, or -1 with the reason in err (unreadable file, empty, longer
 * than outlen - 1 or MASTER_DETECT_MAX_SPEC). Used by the master's --zk
 * as well. */
int master_detect_resolve_spec(const char *spec, char *out, size_t outlen,
                               char *err, size_t errlen);

/* Parse host:port (name or IPv4, port 1..65535) into a leader (known,
 * hostname = host, ip = host when numeric). Returns 0, or -1 with the
 * reason in err. Pure; exposed for tests and for the fixed form. */
int master_detect_parse_hostport(const char *text, struct master_leader *out,
                                 char *err, size_t errlen);

/* Parse one group child's JSON MasterInfo (data, len bytes) into out
 * (known). Returns 0, or -1 with the reason in err when the JSON is bad or
 * names no usable address. Pure; exposed for tests. */
int master_detect_parse_info(const char *data, size_t len,
                             struct master_leader *out, char *err,
                             size_t errlen);

/* Among names (n child names of the group), the index of the
 * "json.info_<seq>" child with the lowest sequence, or -1 when none.
 * Pure; exposed for tests and the contender. */
int master_detect_lowest(const char *const *names, size_t n);

#endif
