/*
 * task_state: questions about a Mesos TaskState value (mesos.v1.TaskState)
 * that the master, the agent and offerd-execute all ask. Pure code: no I/O,
 * no state.
 *
 * The functions take an int so that callers holding a Mesos__V1__TaskState,
 * a protobuf-c enum field or a value read from the network pass it as it
 * is; values the enum does not define are answered, never asserted on.
 */
#ifndef OFFERD_COMMON_TASK_STATE_H
#define OFFERD_COMMON_TASK_STATE_H

#include <stdbool.h>

/* True for the states after which a task never changes, as Mesos's
 * protobuf::isTerminalState: FINISHED, FAILED, KILLED, ERROR, LOST, DROPPED,
 * GONE and GONE_BY_OPERATOR. False for every other value, undefined ones
 * included (UNREACHABLE and UNKNOWN are not terminal: the task may be seen
 * again). */
bool task_state_is_terminal(int state);

/* The enum name of state ("TASK_RUNNING"), or "?" for a value the enum does
 * not define. The string is static: never freed. */
const char *task_state_name(int state);

#endif
