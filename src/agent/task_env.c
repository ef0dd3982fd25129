/*
 * Building a task's or an executor's environment (see task_env.h).
 */
#include "agent/task_env.h"

#include "common/flags.h"
#include "common/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void agent_env_set(struct agent_env *e, const char *name, const char *value)
{
    size_t nl = strlen(name);
    char *entry = xasprintf("%s=%s", name, value);
    for (size_t i = 0; i < e->n; i++) {
        if (strncmp(e->v[i], name, nl) == 0 && e->v[i][nl] == '=') {
            free(e->v[i]);
            e->v[i] = entry;
            return;
        }
    }
    e->v = xreallocarray(e->v, e->n + 2, sizeof(*e->v));
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
}

const char *agent_env_get(const struct agent_env *e, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, nl) == 0 && e->v[i][nl] == '=')
            return e->v[i] + nl + 1;
    return NULL;
}

void agent_env_clear(struct agent_env *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    e->v = NULL;
    e->n = 0;
}

static bool name_ok(const char *name)
{
    return name != NULL && name[0] != '\0' && strchr(name, '=') == NULL;
}

/* The value of NAME in a NULL-terminated environ, or NULL. */
static const char *environ_get(char *const *env, const char *name)
{
    size_t nl = strlen(name);
    for (char *const *p = env; p != NULL && *p != NULL; p++)
        if (strncmp(*p, name, nl) == 0 && (*p)[nl] == '=')
            return *p + nl + 1;
    return NULL;
}

int agent_task_env_build(const struct agent_task_env_ids *ids,
                         char *const *agent_environ, const json_t *executor_env,
                         const Mesos__V1__Environment *cmd_env,
                         struct agent_env *out, char *err, size_t errlen)
{
    struct agent_env e = {NULL, 0};
    const char *lip = environ_get(agent_environ, "LIBPROCESS_IP");
    if (lip != NULL)
        agent_env_set(&e, "LIBPROCESS_IP", lip);
    if (executor_env != NULL) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)executor_env, k, v)
        {
            if (!json_is_string(v) || !name_ok(k)) {
                snprintf(err, errlen,
                         "`executor_environment_variables` must only "
                         "contain string values");
                agent_env_clear(&e);
                return -1;
            }
            agent_env_set(&e, k, json_string_value(v));
        }
    }
    agent_env_set(&e, "LIBPROCESS_PORT", "0");
    agent_env_set(&e, "MESOS_FRAMEWORK_ID", ids->framework_id);
    agent_env_set(&e, "MESOS_EXECUTOR_ID", ids->executor_id);
    agent_env_set(&e, "MESOS_DIRECTORY", ids->sandbox);
    if (ids->agent_id != NULL) {
        agent_env_set(&e, "MESOS_SLAVE_ID", ids->agent_id);
        agent_env_set(&e, "MESOS_AGENT_ID", ids->agent_id);
    }
    if (ids->agent_endpoint != NULL) {
        char *pid = xasprintf("slave(1)@%s", ids->agent_endpoint);
        agent_env_set(&e, "MESOS_SLAVE_PID", pid);
        free(pid);
        agent_env_set(&e, "MESOS_AGENT_ENDPOINT", ids->agent_endpoint);
    }
    agent_env_set(&e, "MESOS_CHECKPOINT", ids->checkpoint ? "1" : "0");
    agent_env_set(&e, "MESOS_HTTP_COMMAND_EXECUTOR", "0");
    char grace[64];
    if (flags_format_duration(
            ids->shutdown_grace_ns > 0 ? ids->shutdown_grace_ns : 0, grace,
            sizeof(grace)) == 0)
        agent_env_set(&e, "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD", grace);
    agent_env_set(&e, "MESOS_SANDBOX", ids->sandbox);
    if (ids->task_id == NULL) {
        /* An executor's own (executor.proto's environment). */
        agent_env_set(&e, "MESOS_SUBSCRIPTION_BACKOFF_MAX", "2secs");
        if (ids->checkpoint)
            agent_env_set(&e, "MESOS_RECOVERY_TIMEOUT", "15mins");
    } else {
        agent_env_set(&e, "MESOS_TASK_ID", ids->task_id);
    }
    {
        for (size_t i = 0; cmd_env != NULL && i < cmd_env->n_variables; i++) {
            const Mesos__V1__Environment__Variable *v = cmd_env->variables[i];
            if (v->has_type &&
                v->type == MESOS__V1__ENVIRONMENT__VARIABLE__TYPE__SECRET) {
                snprintf(err, errlen,
                         "environment variable %s is a secret, which this "
                         "agent does not support",
                         v->name != NULL ? v->name : "");
                agent_env_clear(&e);
                return -1;
            }
            if (!name_ok(v->name)) {
                snprintf(err, errlen, "bad environment variable name '%s'",
                         v->name != NULL ? v->name : "");
                agent_env_clear(&e);
                return -1;
            }
            agent_env_set(&e, v->name, v->value != NULL ? v->value : "");
        }
        if (ids->task_id != NULL && ids->allocation_role != NULL)
            agent_env_set(&e, "MESOS_ALLOCATION_ROLE", ids->allocation_role);
    }
    if (agent_env_get(&e, "PATH") == NULL)
        agent_env_set(&e, "PATH", AGENT_ENV_DEFAULT_PATH);
    *out = e;
    return 0;
}

json_t *agent_task_env_parse_flag(const char *text, char *err, size_t errlen)
{
    json_error_t je;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (o == NULL || !json_is_object(o)) {
        snprintf(err, errlen,
                 "--executor_environment_variables: not a JSON object%s%s",
                 o == NULL ? ": " : "", o == NULL ? je.text : "");
        json_decref(o);
        return NULL;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (!json_is_string(v)) {
            snprintf(err, errlen,
                     "--executor_environment_variables: "
                     "`executor_environment_variables` must only contain "
                     "string values");
            json_decref(o);
            return NULL;
        }
        if (!name_ok(k)) {
            snprintf(err, errlen,
                     "--executor_environment_variables: bad variable name "
                     "'%s'",
                     k);
            json_decref(o);
            return NULL;
        }
    }
    return o;
}
