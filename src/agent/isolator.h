/*
 * The agent's isolator: holds each task to the resources it was given
 * (docs/isolation.md).
 *
 * Policy per agent, chosen at start from --isolation: cgroups (each task
 * in its own cgroup, cgroups.h, named by its run id under --cgroups_root:
 * a memory limit from mem, cpu shares/weight from cpus and, with
 * --cgroups_enable_cfs, a CFS quota; revocable tasks get the lowest
 * weight; swap off unless --cgroups_limit_swap; pids.max from
 * --cgroups_limit_pids) or posix (nothing enforced). With
 * --enforce_container_disk_quota, either policy measures each sandbox every
 * --container_disk_watch_interval and kills a task over its disk.
 *
 * The life of a task's cgroup:
 *   - agent_iso_prepare before the launch makes the cgroup, writes the
 *     limits and hands the supervisor the cgroup.procs files the task joins
 *     before its exec (supervisor.h);
 *   - a timer (AGENT_ISO_TICK_MS) watches the live tasks: an OOM kill in a
 *     cgroup, or a sandbox over its disk, is a limitation: every process of
 *     the task is killed, and its end is reported TASK_FAILED with Mesos's
 *     reason and message;
 *   - agent_iso_ended, when the task's processes are gone, says whether a
 *     limitation ended it, then kills what is left in the cgroup and
 *     removes it (retried on the timer while the kernel still holds it);
 *   - agent_iso_recover, after a restart, re-attaches the cgroups of the
 *     tasks that still run and removes the cgroups this agent made for
 *     tasks that are gone (only its own: each cgroup it makes is recorded
 *     under <work_dir>/meta/cgroups/, so agents sharing a machine and a
 *     --cgroups_root leave each other's alone).
 *
 * Statistics: agent_iso_statistics and agent_iso_usage read the task's
 * cgroup (CPU time, throttling, memory, pids) and its last disk
 * measurement, for /monitor/statistics, GET_CONTAINERS and the usage
 * estimator.
 */
#ifndef OFFERD_AGENT_ISOLATOR_H
#define OFFERD_AGENT_ISOLATOR_H

#include "agent/cgroups.h"
#include "agent/isolation_flags.h"
#include "agent/supervisor.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct agent_iso;
struct agent_task;
struct agent_tasks;
struct agent_usage;

/* How often live tasks are checked for an OOM kill (and removals of busy
 * cgroups retried). */
#define AGENT_ISO_TICK_MS 250

/* Create the isolator on base for the tasks of tasks (both borrowed).
 * With AGENT_ISOLATION_AUTO, cgroups are used when hier has a hierarchy
 * and the root can be made, else posix; AGENT_ISOLATION_CGROUPS fails
 * (NULL, reason in err) when they cannot. hier NULL: detect this machine's.
 * The choice is logged. work_dir is where the agent keeps its state. */
struct agent_iso *agent_iso_new(struct event_base *base,
                                const struct agent_iso_flags *flags,
                                const struct agent_cg_hier *hier,
                                const char *work_dir, struct agent_tasks *tasks,
                                char *err, size_t errlen);

/* Free the isolator; cgroups of tasks that run are left. NULL ignored. */
void agent_iso_free(struct agent_iso *iso);

/* True when tasks get cgroups. */
bool agent_iso_uses_cgroups(const struct agent_iso *iso);

/* Start the timer (after recovery). */
void agent_iso_start(struct agent_iso *iso);

/* Before t's launch (t has its run id and sandbox): make its cgroup and
 * limits, and set l->cgroup_procs (borrowed from the isolator until the
 * task ends). Posix: nothing. Returns 0, or -1 with a reason in err
 * (nothing left behind). */
int agent_iso_prepare(struct agent_iso *iso, const struct agent_task *t,
                      struct agent_launch *l, char *err, size_t errlen);

/* What ended a task, if a limit did. */
struct agent_iso_limitation {
    bool limited;
    Mesos__V1__TaskStatus__Reason reason; /* REASON_CONTAINER_LIMITATION_* */
    char message[512];                    /* Mesos's message */
};

/* t's processes are gone: fill *out (OUT) with the limitation that ended
 * it (seen by the timer, or an OOM kill the cgroup records now), then kill
 * what is left in its cgroup and remove it. Safe for any task (nothing to
 * do without a cgroup or limitation). */
void agent_iso_ended(struct agent_iso *iso, const struct agent_task *t,
                     struct agent_iso_limitation *out);

/* After the agent put its tasks back: re-attach the cgroups of the live
 * ones, remove the others this agent made. */
void agent_iso_recover(struct agent_iso *iso);

/* Statistics of t from its cgroup and disk measurement, with timestamp
 * now (a new message for the caller), or NULL when the isolator has none
 * for it (posix without a disk measurement, or no cgroup). */
Mesos__V1__ResourceStatistics *agent_iso_statistics(const struct agent_iso *iso,
                                                    const struct agent_task *t,
                                                    double now);

/* t's use from its cgroup into *out (OUT, as agent_usage_scan fills it:
 * ticks of _SC_CLK_TCK and pages of page_size). Returns 0, or -1 when t
 * has no cgroup (the caller falls back to /proc). */
int agent_iso_usage(const struct agent_iso *iso, const struct agent_task *t,
                    long clk_tck, long page_size, struct agent_usage *out);

/* The limits a task with these resources gets (pure; for tests). */
void agent_iso_limits_for(const struct agent_iso_flags *f, double cpus,
                          double mem_mb, bool revocable,
                          struct agent_cg_limits *out);

#endif
