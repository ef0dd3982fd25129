/*
 * What a CommandInfo turns into: the program to exec, its argv and the
 * task's whole environment, as Mesos's command executor builds them.
 *
 *   shell true or unset:  /bin/sh -c <value>
 *   shell false:          exec <value> (PATH lookup when it has no '/')
 *                         with argv = arguments, or [value] when empty
 *   environment:          agent_task_env_build (task_env.h) over the
 *                         command's variables. Secret variables are
 *                         refused.
 *
 * Pure: no I/O.
 */
#ifndef OFFERD_AGENT_COMMAND_H
#define OFFERD_AGENT_COMMAND_H

#include "agent/task_env.h"
#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stddef.h>

/* A built command; every string and array is owned. */
struct agent_command {
    char *file;  /* program to exec */
    char **argv; /* NULL-terminated */
    char **envp; /* NULL-terminated */
    size_t nargv, nenv;
};

/* Build *out from cmd for the task ids names (ids->task_id set), with the
 * agent's environment base_env (NULL-terminated, e.g. environ; NULL for
 * none) and the parsed --executor_environment_variables (NULL: unset), as
 * agent_task_env_build takes them. Returns 0, or -1 with a one-line reason
 * in err and *out empty. */
int agent_command_build(const Mesos__V1__CommandInfo *cmd,
                        char *const *base_env, const json_t *executor_env,
                        const struct agent_task_env_ids *ids,
                        struct agent_command *out, char *err, size_t errlen);

/* Free what *c holds and leave it empty. */
void agent_command_clear(struct agent_command *c);

#endif
