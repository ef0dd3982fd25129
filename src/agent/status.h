/*
 * Task status updates as the agent builds them: every TaskStatus carries
 * task_id, state, source, agent_id (once known), executor_id (the task id,
 * Mesos's command executor convention), timestamp (wall seconds) and a
 * 16-byte random uuid, plus message and reason where they help. And the
 * mapping from a task's wait status to its terminal state, as Mesos's
 * command executor reports it. Pure code: no I/O.
 */
#ifndef OFFERD_AGENT_STATUS_H
#define OFFERD_AGENT_STATUS_H

#include "common/task_state.h"
#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a new status says. Strings are borrowed (copied by
 * agent_status_new). */
struct agent_status_spec {
    const char *task_id; /* required */
    Mesos__V1__TaskState state;
    Mesos__V1__TaskStatus__Source source;
    bool has_reason;
    Mesos__V1__TaskStatus__Reason reason;
    const char *message;     /* NULL: none */
    const char *agent_id;    /* NULL: not registered yet */
    const char *executor_id; /* NULL: none */
    double timestamp;        /* wall-clock seconds since the epoch */
    const uint8_t *uuid;     /* 16 bytes; NULL: a new random one */
};

/* Build a new TaskStatus from spec. Every field is allocated separately:
 * free with jpb_free. */
Mesos__V1__TaskStatus *agent_status_new(const struct agent_status_spec *spec);

/* How a task ended, from its supervisor's wait status. */
struct agent_exit_outcome {
    Mesos__V1__TaskState state; /* FINISHED, FAILED or KILLED */
    bool has_reason;
    Mesos__V1__TaskStatus__Reason reason;
    char message[128]; /* "Command exited with status 3", "Command
                          terminated by signal 9 (Killed)" */
};

/* Map a waitpid() status of the task to its terminal state: a kill that
 * was requested gives TASK_KILLED whatever the status; exit 0 gives
 * TASK_FINISHED; any other exit or a signal gives TASK_FAILED with
 * REASON_COMMAND_EXECUTOR_FAILED. */
void agent_exit_outcome(int wait_status, bool kill_requested,
                        struct agent_exit_outcome *out);

#endif
