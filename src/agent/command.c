/*
 * Building a task's program, argv and environment from its CommandInfo.
 */
#include "agent/command.h"

#include "common/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Append s (owned) to a NULL-terminated vector of *n entries. */
static void push(char ***v, size_t *n, char *s)
{
    *v = xreallocarray(*v, *n + 2, sizeof(**v));
    (*v)[(*n)++] = s;
    (*v)[*n] = NULL;
}

void agent_command_clear(struct agent_command *c)
{
    for (size_t i = 0; i < c->nargv; i++)
        free(c->argv[i]);
    for (size_t i = 0; i < c->nenv; i++)
        free(c->envp[i]);
    free(c->argv);
    free(c->envp);
    free(c->file);
    memset(c, 0, sizeof(*c));
}

int agent_command_build(const Mesos__V1__CommandInfo *cmd,
                        char *const *base_env, const json_t *executor_env,
                        const struct agent_task_env_ids *ids,
                        struct agent_command *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (cmd->value == NULL || cmd->value[0] == '\0') {
        snprintf(err, errlen, "the command has no value");
        return -1;
    }
    if (!cmd->has_shell || cmd->shell) {
        out->file = xstrdup("/bin/sh");
        push(&out->argv, &out->nargv, xstrdup("sh"));
        push(&out->argv, &out->nargv, xstrdup("-c"));
        push(&out->argv, &out->nargv, xstrdup(cmd->value));
    } else {
        out->file = xstrdup(cmd->value);
        if (cmd->n_arguments == 0)
            push(&out->argv, &out->nargv, xstrdup(cmd->value));
        for (size_t i = 0; i < cmd->n_arguments; i++)
            push(&out->argv, &out->nargv, xstrdup(cmd->arguments[i]));
    }

    struct agent_env env = {NULL, 0};
    if (agent_task_env_build(ids, base_env, executor_env, cmd->environment,
                             &env, err, errlen) != 0) {
        agent_command_clear(out);
        return -1;
    }
    out->envp = env.v;
    out->nenv = env.n;
    return 0;
}
