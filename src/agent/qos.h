/*
 * The QoS controller's decision (--qos_controller=load, docs/agent.md
 * "Oversubscription"): which revocable tasks to evict so that regular
 * (non-revocable) work gets its resources back. Pure code: tasks, the
 * estimate and the load in, the tasks to evict out; oversub.h gathers the
 * inputs and does the killing.
 *
 * Rules:
 * - Only tasks that hold some revocable resource are candidates; a task
 *   that holds none is never chosen.
 * - A task already being killed (by an eviction, the master or anything
 *   else) is not chosen again, and its resources count as returned.
 * - Estimate rule: while the revocable resources held by the candidates
 *   (flattened: roles and allocation left out) are not contained in the
 *   estimate, the newest candidate is chosen and its resources no longer
 *   count; so exactly as many as needed, newest first (a newer small task
 *   goes before an older big one). Without an estimate (no estimator) the
 *   rule does not apply.
 * - Load rule: when the load is above the threshold, no revocable task is
 *   being killed already, and the estimate rule chose none, the newest
 *   candidate is chosen: one task per round while the load stays above.
 */
#ifndef OFFERD_AGENT_QOS_H
#define OFFERD_AGENT_QOS_H

#include "common/resources.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One live task. */
struct agent_qos_task {
    int64_t start_ns;          /* when it was launched (any clock the caller
                                  uses for all tasks); larger: newer */
    uint64_t seq;              /* tie-break among equal start_ns: larger is
                                  newer */
    const res_list *revocable; /* the revocable resources it holds
                                  (borrowed); empty: never evicted */
    bool dying;                /* a kill of it is in progress */
};

struct agent_qos_input {
    const struct agent_qos_task *tasks; /* ntasks entries (borrowed) */
    size_t ntasks;
    const res_list *estimate; /* the current estimate; NULL: none */
    bool load_rule;           /* apply the load rule */
    double load;              /* 1-minute load average */
    double threshold;         /* load above this: evict */
};

/* Which tasks to evict: writes their indexes into tasks[] to out (room for
 * ntasks entries), newest first, and returns how many; *by_load (OUT) says
 * whether the load rule chose them (else the estimate rule did). */
size_t agent_qos_decide(const struct agent_qos_input *in, size_t *out,
                        bool *by_load);

/* Parse the text of /proc/loadavg ("0.52 0.58 0.59 1/467 12345"): the
 * 1-minute average into *load1. Returns 0, or -1 when the text does not
 * start with a non-negative number followed by a space. */
int agent_qos_parse_loadavg(const char *text, size_t len, double *load1);

/* Read <proc_root>/loadavg and parse it. Returns 0, or -1. */
int agent_qos_read_loadavg(const char *proc_root, double *load1);

#endif
