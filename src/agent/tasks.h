/*
 * The agent's task table and the life of each task's processes: launching
 * through a supervisor (supervisor.h), learning from its report pipe that
 * the task runs, reaping supervisors on SIGCHLD (a libevent signal event)
 * and reading the task's exit status from the sandbox, and killing (SIGTERM
 * to the task's process group, SIGKILL when the grace period ends, on a
 * libevent timer).
 *
 * The table decides nothing about status updates: it tells its owner that
 * a task runs and that a task ended (with its wait status, or why its
 * launch failed), and the owner reports.
 *
 * After an agent restart, tasks are put back (agent_tasks_restore). A
 * supervisor that still runs is not the new agent's child, so no SIGCHLD
 * tells of its end: the table watches it through a pidfd (readable when the
 * process exits) or, where pidfd_open is unavailable, by polling /proc on a
 * timer (AGENT_TASKS_POLL_MS; one stat per such task per tick). The same
 * timer notices when a re-attached task that was still launching execs (its
 * supervisor writes the task's pid file), since no report pipe is left.
 */
#ifndef OFFERD_AGENT_TASKS_H
#define OFFERD_AGENT_TASKS_H

#include "agent/supervisor.h"
#include "common/ids.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct event_base;
struct event;
struct agent_tasks;

/* One state a task went through, for /state. */
struct agent_task_state_entry {
    Mesos__V1__TaskState state;
    double timestamp;
};

/* Where a task's process is. */
enum agent_task_phase {
    AGENT_TASK_NEW,       /* not launched (or its launch failed early) */
    AGENT_TASK_LAUNCHING, /* supervisor started, exec not reported yet */
    AGENT_TASK_RUNNING,   /* the task's process runs */
    AGENT_TASK_ENDED,     /* supervisor reaped (or never started) */
};

/* A task the agent holds. The owner reads every field and may write the
 * ones marked (owner); the rest belong to the table. */
struct agent_task {
    char *framework_id;
    char *task_id;
    Mesos__V1__TaskInfo *info;             /* owned copy of the TaskInfo */
    Mesos__V1__TaskState state;            /* (owner) latest state reported */
    struct agent_task_state_entry *states; /* (owner) history, oldest first */
    size_t nstates;
    Mesos__V1__TaskStatus *last_status; /* (owner) copy of the latest
                                           status, freed with the task */
    char *sandbox;                      /* (owner) run directory, or NULL */
    char *group; /* (owner) executor id of the task group it was launched
                    in (LAUNCH_GROUP), or NULL */
    char run_id[ID_UUID_SIZE]; /* (owner) run uuid, "" when none */
    enum agent_task_phase phase;
    pid_t sup_pid;           /* supervisor, 0 when none */
    pid_t task_pid;          /* task (and its process group), 0 until known */
    bool kill_requested;     /* a kill was asked for */
    bool kill_during_launch; /* the kill came before the task ran */
    int64_t grace_ns;        /* grace period of the pending kill */
    bool has_kill_reason;    /* (owner) the kill is an eviction or carries
                                the master's reason: its TASK_KILLING and
                                TASK_KILLED say SOURCE_AGENT and: */
    Mesos__V1__TaskStatus__Reason kill_reason; /* (owner) */

    /* Private to the table. */
    bool adopted;          /* restored live: the supervisor is not our child */
    int pidfd;             /* adopted: pidfd of the supervisor, -1 (polled) */
    struct event *exit_ev; /* adopted: the pidfd is readable */
    int report_fd;         /* read end of the supervisor's pipe, -1 */
    char report_line[64];  /* partial report line */
    size_t report_len;
    int launch_errno; /* from an "E" report, 0 otherwise */
    struct event *report_ev;
    struct event *kill_timer;
    struct agent_tasks *table;
};

/* How a task ended. */
struct agent_task_end {
    bool launch_failed; /* exec or set-up failed: message says why */
    bool has_status;    /* wait_status is the task's waitpid() status */
    int wait_status;
    char message[1024]; /* launch failure or lost supervisor, else "" */
};

struct agent_tasks_cbs {
    /* The task's process runs (its pid is in t->task_pid). */
    void (*on_running)(struct agent_task *t, void *arg);
    /* The task's processes are gone (phase is ENDED); the owner reports
     * and may remove the task from here. */
    void (*on_ended)(struct agent_task *t, const struct agent_task_end *end,
                     void *arg);
    void *arg;
};

/* A table on base (borrowed) that watches SIGCHLD. Returns NULL if the
 * signal event cannot be added. */
struct agent_tasks *agent_tasks_new(struct event_base *base,
                                    const struct agent_tasks_cbs *cbs);

/* Free the table and every task record. Processes are left running (they
 * are meant to outlive the agent). NULL is ignored. */
void agent_tasks_free(struct agent_tasks *ts);

/* Add a task (phase NEW, state TASK_STAGING) with a copy of info. Returns
 * it, or NULL when the table already holds that framework's task id. */
struct agent_task *agent_tasks_add(struct agent_tasks *ts,
                                   const char *framework_id,
                                   const Mesos__V1__TaskInfo *info);

/* The task, or NULL. */
struct agent_task *agent_tasks_get(const struct agent_tasks *ts,
                                   const char *framework_id,
                                   const char *task_id);

/* Remove and free a task. Its processes, if any, are left alone: remove
 * tasks whose phase is NEW or ENDED. */
void agent_tasks_remove(struct agent_tasks *ts, struct agent_task *t);

/* Start t's supervisor (t must be NEW with a sandbox). Returns 0 (phase
 * LAUNCHING), or -1 with a reason in err (phase stays NEW). */
int agent_tasks_launch(struct agent_tasks *ts, struct agent_task *t,
                       const struct agent_launch *l, char *err, size_t errlen);

/* Kill t: SIGTERM to its process group now (or as soon as its pid is
 * known), SIGKILL after grace_ns unless it ended. A second call while a
 * kill is pending only shortens the grace period if smaller. No-op for
 * NEW and ENDED tasks. */
void agent_tasks_kill(struct agent_tasks *ts, struct agent_task *t,
                      int64_t grace_ns);

/* How often re-attached tasks without a pidfd, or still launching, are
 * checked. */
#define AGENT_TASKS_POLL_MS 200

/* A task as a restarted agent puts it back. */
struct agent_task_restore {
    enum agent_task_phase phase; /* ENDED, or LAUNCHING / RUNNING for a
                                    supervisor that still runs */
    const char *sandbox;         /* copied into t->sandbox; may be NULL for
                                    an ENDED task */
    pid_t sup_pid;               /* live phases: the running supervisor */
    pid_t task_pid;              /* RUNNING: the task's pid */
    bool kill_requested;         /* a kill was in progress: */
    int64_t kill_grace_ns;       /* what is left of its grace period */
    bool kill_during_launch;     /* it came before the task ran */
};

/* Put back a task found in the checkpoint (phase and processes as r says,
 * state TASK_STAGING for the owner to set) with a copy of info. A live
 * task's supervisor is watched from now on (on_ended when it exits; with
 * r->kill_requested the kill resumes: SIGTERM to the task's group again,
 * SIGKILL after kill_grace_ns); on_running is called when a LAUNCHING one
 * is seen to exec. No callback runs from inside this call. Returns the
 * task, or NULL when the table already holds that framework's task id. */
struct agent_task *agent_tasks_restore(struct agent_tasks *ts,
                                       const char *framework_id,
                                       const Mesos__V1__TaskInfo *info,
                                       const struct agent_task_restore *r);

/* SIGKILL what runs of t now: the task's process group and its
 * supervisor (an adopted supervisor through its pidfd, or only when
 * /proc still shows it in the sandbox). No-op for NEW and ENDED tasks. */
void agent_tasks_kill_now(struct agent_tasks *ts, struct agent_task *t);

/* Iterate tasks: start with *pos = 0; returns NULL when done. Removing the
 * returned task before the next call is not allowed. */
struct agent_task *agent_tasks_next(const struct agent_tasks *ts, size_t *pos);

/* Number of tasks, and of tasks whose processes may still run (LAUNCHING
 * or RUNNING). */
size_t agent_tasks_count(const struct agent_tasks *ts);
size_t agent_tasks_live(const struct agent_tasks *ts);

/* Append a state to t's history. */
void agent_task_note_state(struct agent_task *t, Mesos__V1__TaskState s,
                           double timestamp);

#endif
