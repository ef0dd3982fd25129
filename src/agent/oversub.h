/*
 * Oversubscription on the agent (docs/agent.md "Oversubscription",
 * docs/oversubscription.md): the resource estimator, which tells the
 * master what it may offer as revocable resources, and the QoS controller,
 * which evicts revocable tasks when regular work needs the machine back.
 *
 * One timer on the agent's loop, every --oversubscription_interval; each
 * round:
 *  1. looks at the live tasks (launching or running, not terminal), with
 *     the revocable and non-revocable resources of their TaskInfo;
 *  2. estimates (estimator.h): `fixed` takes --oversubscribed_resources
 *     (read again from its file each round when given as file://PATH);
 *     `usage` samples the tasks' processes (usage.h) and reports what
 *     regular tasks hold but do not use;
 *  3. when the estimate changed, sends UPDATE_OVERSUBSCRIBED with it (every
 *     resource revocable; an empty list means none), and again after every
 *     REGISTERED (agent_oversub_registered);
 *  4. with --qos_controller=load, decides which revocable tasks to evict
 *     (qos.h) from the estimate and the 1-minute load average, and has the
 *     owner kill them (each with its kill policy's grace period, reported
 *     TASK_KILLED, SOURCE_AGENT, REASON_CONTAINER_PREEMPTED).
 *
 * The usage estimator measures a task only once it has two samples (a CPU
 * rate needs two); tasks not measured yet are left out of the estimate
 * (their resources came from what was not allocated, not from the slack
 * of others). Its first estimate after the agent starts waits until every
 * live task has been measured, or AGENT_OVERSUB_WARMUP_ROUNDS rounds, so
 * that a restarted agent does not report (and act on) an estimate that
 * forgot the tasks it recovered.
 */
#ifndef OFFERD_AGENT_OVERSUB_H
#define OFFERD_AGENT_OVERSUB_H

#include "agent/flags_agent.h"
#include "agent/tasks.h"
#include "common/resources.h"
#include "offerd/agent.pb-c.h"

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct agent_oversub;
struct agent_iso;

/* Most rounds the usage estimator waits for every task to be measured
 * before its first estimate. */
#define AGENT_OVERSUB_WARMUP_ROUNDS 3

struct agent_oversub_config {
    const struct agent_flags *flags; /* borrowed; outlives the module */
    const char *proc_root;           /* "/proc" (tests: a crafted tree) */
    const struct agent_iso *iso;     /* tasks' cgroups (isolator.h); NULL:
                                        /proc only */
};

struct agent_oversub_cbs {
    /* POST call (borrowed; the owner sets agent_id). Returns 0 when sent,
     * -1 when it cannot be now (not registered): the estimate then goes
     * with the next REGISTERED. */
    int (*send)(Offerd__Agent__Call *call, void *arg);
    /* Kill t as an eviction (t is live, holds revocable resources and is
     * not being killed); why is for the log. */
    void (*evict)(struct agent_task *t, const char *why, void *arg);
    void *arg;
};

/* A module on base (borrowed) watching the tasks of table (borrowed),
 * idle until agent_oversub_start. With --resource_estimator=fixed the
 * resources are read now (from the file for file://PATH). Returns NULL
 * with a one-line reason in err. */
struct agent_oversub *agent_oversub_new(struct event_base *base,
                                        const struct agent_oversub_config *cfg,
                                        struct agent_tasks *table,
                                        const struct agent_oversub_cbs *cbs,
                                        char *err, size_t errlen);

/* Run a round now, then every interval. No-op when neither an estimator
 * nor a QoS controller is configured. */
void agent_oversub_start(struct agent_oversub *o);

/* Stop the rounds (e.g. when the agent shuts down): no more estimates or
 * evictions. */
void agent_oversub_stop(struct agent_oversub *o);

/* The agent (re-)registered: send the current estimate, if there is one. */
void agent_oversub_registered(struct agent_oversub *o);

/* The estimate last reported (borrowed), or NULL when none yet or no
 * estimator. */
const res_list *agent_oversub_estimate(const struct agent_oversub *o);

/* Free the module (stops its timer). NULL is ignored. */
void agent_oversub_free(struct agent_oversub *o);

#endif
