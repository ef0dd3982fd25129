/*
 * What a CommandInfo turns into: the program to exec, its argv and the
 * task's whole environment, as Mesos's command executor builds them.
 *
 *   shell true or unset:  /bin/sh -c <value>
 *   shell false:          exec <value> (PATH lookup when it has no '/')
 *                         with argv = arguments, or [value] when empty
 *   environment:          the base environment without OFFERD_* variables,
 *                         then MESOS_SANDBOX, MESOS_FRAMEWORK_ID,
 *                         MESOS_TASK_ID, MESOS_EXECUTOR_ID (= the task id)
 *                         and MESOS_AGENT_ID (when known), then the
 *                         command's variables; a later NAME replaces an
 *                         earlier one. Secret variables are refused.
 *
 * Pure: no I/O.
 */
#ifndef OFFERD_AGENT_COMMAND_H
#define OFFERD_AGENT_COMMAND_H

#include "mesos/v1/mesos.pb-c.h"

#include <stddef.h>

/* Who the command runs for. Strings are borrowed. */
struct agent_command_ids {
    const char *sandbox;
    const char *framework_id;
    const char *task_id;
    const char *agent_id; /* NULL: not known yet */
};

/* A built command; every string and array is owned. */
struct agent_command {
    char *file;  /* program to exec */
    char **argv; /* NULL-terminated */
    char **envp; /* NULL-terminated */
    size_t nargv, nenv;
};

/* Build *out from cmd over base_env (NULL-terminated, e.g. environ; NULL
 * for none). Returns 0, or -1 with a one-line reason in err and *out
 * empty. */
int agent_command_build(const Mesos__V1__CommandInfo *cmd,
                        char *const *base_env,
                        const struct agent_command_ids *ids,
                        struct agent_command *out, char *err, size_t errlen);

/* Free what *c holds and leave it empty. */
void agent_command_clear(struct agent_command *c);

#endif
