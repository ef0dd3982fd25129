/*
 * contender: this master's candidacy in the masters' ZooKeeper group,
 * laid out as Mesos lays it out (src/master/contender/zookeeper.cpp over
 * src/zookeeper/group.cpp): an ephemeral sequential child
 * "<group>/json.info_<seq>" holding this master's MasterInfo as JSON; the
 * child with the lowest sequence is the leader (common/master_detect.h
 * reads the same layout).
 *
 * The contender creates its node once its session connects (creating the
 * group's path if missing), watches the group, and reports on the loop:
 * CONTENDER_ELECTED once its node is the lowest; CONTENDER_SUSPENDED when
 * the connection to ZooKeeper is lost (the node may still live: the
 * session is not over yet) and CONTENDER_RESUMED when the same session
 * reconnects; CONTENDER_LOST when its candidacy is over: the session
 * expired or its node was deleted. After CONTENDER_LOST it contends again
 * with a new node (a follower keeps following; a leader is expected to
 * exit, as Mesos's master does).
 */
#ifndef OFFERD_MASTER_CONTENDER_H
#define OFFERD_MASTER_CONTENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct contender;

enum contender_event {
    CONTENDER_ELECTED,
    CONTENDER_SUSPENDED,
    CONTENDER_RESUMED,
    CONTENDER_LOST,
};

const char *contender_event_name(enum contender_event ev);

/* Runs on the loop; must not free the contender (free it later, e.g.
 * from a timer or once the loop stops). */
typedef void (*contender_cb)(enum contender_event ev, void *arg);

/* Contend in the group of zk_url ("zk://[user:pass@]hosts/path"; no
 * file://: resolve it first with master_detect_resolve_spec) with
 * info_json (this master's MasterInfo as JSON, copied) as the node's data,
 * on base (borrowed). Returns NULL with the reason in err. */
struct contender *contender_new(struct event_base *base, const char *zk_url,
                                int session_timeout_ms, const char *info_json,
                                contender_cb cb, void *arg, char *err,
                                size_t errlen);

/* True between CONTENDER_ELECTED and CONTENDER_LOST. */
bool contender_elected(const struct contender *c);

/* This candidacy's node name ("json.info_0000000003"), or NULL while
 * it has none. */
const char *contender_node(const struct contender *c);

/* Withdraw (the session closes, the node goes at once) and free. No
 * callback runs after. NULL is ignored. */
void contender_free(struct contender *c);

#endif
