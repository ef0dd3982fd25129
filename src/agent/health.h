/*
 * Health checks and checks of command tasks, as Mesos's command executor
 * runs them (docs/health-checks.md; Mesos's src/checks/).
 *
 * A task whose TaskInfo has a health_check (HealthCheck) or a check
 * (CheckInfo), or both, gets a monitor once it runs. Each of the two is a
 * probe run on a libevent timer: first after delay_seconds, then
 * interval_seconds after the previous one completed; a probe that takes
 * longer than timeout_seconds (0: no limit) is abandoned (a command's
 * process group is SIGKILLed). Probes:
 *   COMMAND  the CommandInfo run by /bin/sh (or exec'd) in the task's
 *            sandbox with the task's environment; result: its exit code
 *   HTTP     GET http://127.0.0.1:<port><path> (::1 for IPv6); result: the
 *            response's status code
 *   TCP      a non-blocking connect to 127.0.0.1:<port>; result: whether
 *            it was accepted
 *
 * Health: exit code 0, a status in [200, 400), or a connection accepted is
 * a success. The first success, and the first one after failures, sends a
 * TASK_RUNNING update with healthy=true; every failure sends healthy=false,
 * except that failures are ignored while no success was seen and the task
 * is within grace_period_seconds of its start. After consecutive_failures
 * failures in a row the task is killed; its terminal update then carries
 * healthy=false (agent_health_decorate).
 *
 * Check: each result becomes a CheckStatusInfo (exit_code, status_code or
 * succeeded; a probe that could not complete leaves the field unset) and
 * a TASK_RUNNING update with REASON_TASK_CHECK_STATUS_UPDATED goes out
 * when it differs from the previous one.
 *
 * Updates are copies of the task's latest status (so healthy and
 * check_status carry over) with a new uuid, timestamp and reason; none is
 * sent once a kill was requested or the task left TASK_RUNNING, and probes
 * stop then.
 */
#ifndef OFFERD_AGENT_HEALTH_H
#define OFFERD_AGENT_HEALTH_H

#include "agent/tasks.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>

struct event_base;
struct agent_health;

struct agent_health_cbs {
    /* Queue st (ownership passed) as t's next status update. */
    void (*update)(struct agent_task *t, Mesos__V1__TaskStatus *st, void *arg);
    /* t failed its health check consecutive_failures times: kill it. */
    void (*kill)(struct agent_task *t, void *arg);
    void *arg;
};

/* A monitor table on base (borrowed). The callbacks run from the loop and
 * must not stop or free the monitor of the task they are given. */
struct agent_health *agent_health_new(struct event_base *base,
                                      const struct agent_health_cbs *cbs);

/* Stop every probe (a running command's process group is SIGKILLed) and
 * free the table. NULL is ignored. */
void agent_health_free(struct agent_health *h);

/* Start monitoring t (it runs, it has a sandbox) when its TaskInfo has a
 * health_check or a check; no-op otherwise or when t is monitored already.
 * agent_id (may be NULL) goes into a command probe's environment. A task
 * re-attached after an agent restart resumes from its latest status: a
 * known healthiness ends the grace period, and its check_status is the
 * previous result. t is borrowed until agent_health_stop. */
void agent_health_start(struct agent_health *h, struct agent_task *t,
                        const char *agent_id);

/* Stop monitoring t and forget it. No-op when it is not monitored. */
void agent_health_stop(struct agent_health *h, const struct agent_task *t);

/* Complete a status the agent builds for t from scratch, as Mesos's
 * command executor does: when t has a check and st no check_status, an
 * empty one of the check's type; when st is terminal and t was killed for
 * failing its health check, healthy=false. */
void agent_health_decorate(const struct agent_health *h,
                           const struct agent_task *t,
                           Mesos__V1__TaskStatus *st);

/* Number of monitored tasks. */
size_t agent_health_count(const struct agent_health *h);

#endif
