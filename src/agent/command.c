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

/* Set NAME=value, replacing an earlier NAME. */
static void env_set(struct agent_command *c, const char *name,
                    const char *value)
{
    size_t nl = strlen(name);
    char *entry = xasprintf("%s=%s", name, value);
    for (size_t i = 0; i < c->nenv; i++) {
        if (strncmp(c->envp[i], name, nl) == 0 && c->envp[i][nl] == '=') {
            free(c->envp[i]);
            c->envp[i] = entry;
            return;
        }
    }
    push(&c->envp, &c->nenv, entry);
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
                        char *const *base_env,
                        const struct agent_command_ids *ids,
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

    for (char *const *e = base_env; e != NULL && *e != NULL; e++)
        if (strncmp(*e, "OFFERD_", 7) != 0 && strchr(*e, '=') != NULL)
            push(&out->envp, &out->nenv, xstrdup(*e));
    env_set(out, "MESOS_SANDBOX", ids->sandbox);
    env_set(out, "MESOS_FRAMEWORK_ID", ids->framework_id);
    env_set(out, "MESOS_TASK_ID", ids->task_id);
    env_set(out, "MESOS_EXECUTOR_ID", ids->task_id);
    if (ids->agent_id != NULL)
        env_set(out, "MESOS_AGENT_ID", ids->agent_id);
    const Mesos__V1__Environment *ce = cmd->environment;
    for (size_t i = 0; ce != NULL && i < ce->n_variables; i++) {
        const Mesos__V1__Environment__Variable *v = ce->variables[i];
        if (v->has_type &&
            v->type == MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__SECRET) {
            snprintf(err, errlen,
                     "environment variable %s is a secret, which this agent "
                     "does not support",
                     v->name);
            agent_command_clear(out);
            return -1;
        }
        if (v->name[0] == '\0' || strchr(v->name, '=') != NULL) {
            snprintf(err, errlen, "bad environment variable name '%s'",
                     v->name);
            agent_command_clear(out);
            return -1;
        }
        env_set(out, v->name, v->value != NULL ? v->value : "");
    }
    return 0;
}
