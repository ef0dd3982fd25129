/*
 * Agent recovery: what a restarted agent does with each task it finds in
 * its checkpoint (checkpoint.h, agent_ckpt_read), decided from what the
 * checkpoint says and from the task's processes (supervisor.h: the
 * supervisor outlives the agent and leaves the task's exit status in the
 * sandbox). This module decides only; the agent acts (agent.c): it
 * re-attaches to live supervisors, reports tasks that ended while it was
 * down, resends pending updates, and then subscribes.
 *
 * The rules, for one task directory:
 *   - nothing but pending updates (no task_info, no task file): updates of
 *     a task the agent never ran (TASK_LOST for an unknown task): resend;
 *   - no known state and no task file (the launch was cut short after
 *     task_info, or only the directory was made): TASK_FAILED, after
 *     killing whatever of it runs;
 *   - a terminal state: keep it until its pending updates are acknowledged,
 *     or forget it at once when none is pending;
 *   - otherwise (a live state, or an unreadable task file): by its
 *     processes: a supervisor that still runs is re-attached; one that is
 *     gone left the task's exit status (or did not: TASK_FAILED).
 */
#ifndef OFFERD_AGENT_RECOVERY_H
#define OFFERD_AGENT_RECOVERY_H

#include "agent/checkpoint.h"

#include <stdbool.h>
#include <sys/types.h>

/* What to do with a checkpointed task. */
enum agent_rec_action {
    AGENT_REC_FORGET,       /* terminal, nothing pending: remove it */
    AGENT_REC_UPDATES_ONLY, /* no task, only pending updates: resend them */
    AGENT_REC_TERMINAL,     /* terminal, updates pending: hold it until they
                               are acknowledged */
    AGENT_REC_ATTACH,       /* its supervisor still runs: watch it */
    AGENT_REC_ENDED,        /* its supervisor ended while the agent was
                               down: report the task's end */
    AGENT_REC_INTERRUPTED,  /* its launch was cut short: kill what runs of
                               it and report TASK_FAILED */
};

struct agent_rec_plan {
    enum agent_rec_action action;
    pid_t sup_pid;     /* ATTACH: the live supervisor; INTERRUPTED: a live
                          supervisor to kill; else 0 */
    pid_t task_pid;    /* ATTACH: the task once its exec succeeded (0: still
                          launching); ENDED, INTERRUPTED: a task process
                          that outlived its supervisor, to kill; else 0 */
    bool has_status;   /* ENDED: the supervisor recorded the task's */
    int wait_status;   /* waitpid() status */
    char message[256]; /* ENDED without a status, INTERRUPTED: why */
};

/* Decide what to do with t (borrowed), looking at its sandbox's pid and
 * status files and at /proc. Fills *out (OUT); never fails. */
void agent_rec_plan(const struct agent_ckpt_task *t,
                    struct agent_rec_plan *out);

/* The action's name ("ATTACH"), for logs. */
const char *agent_rec_action_name(enum agent_rec_action a);

#endif
