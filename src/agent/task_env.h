/*
 * The environment a task or an executor starts with, as Mesos's agent and
 * command executor give it (slave.cpp executorEnvironment, the Mesos
 * containerizer's launch, launcher/executor.cpp), in this order, a later
 * NAME replacing an earlier one:
 *
 *   1. LIBPROCESS_IP from the agent's own environment, when set;
 *   2. --executor_environment_variables (a JSON object of strings). Without
 *      the flag nothing else of the agent's environment passes (Mesos:
 *      "Users have to define executor environment explicitly");
 *   3. LIBPROCESS_PORT=0, MESOS_FRAMEWORK_ID, MESOS_EXECUTOR_ID,
 *      MESOS_DIRECTORY, MESOS_SLAVE_ID and MESOS_AGENT_ID (once the agent
 *      has an id), MESOS_SLAVE_PID, MESOS_AGENT_ENDPOINT, MESOS_CHECKPOINT,
 *      MESOS_HTTP_COMMAND_EXECUTOR=0, MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD,
 *      MESOS_SANDBOX;
 *   4. for a task: MESOS_TASK_ID, then CommandInfo.environment (VALUE
 *      variables; a SECRET one is refused: this agent has no secret
 *      resolver), then MESOS_ALLOCATION_ROLE (the role its resources are
 *      allocated to);
 *   5. PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
 *      when nothing above set PATH.
 *
 * HOME and USER are not set (Mesos sets neither). Pure: no I/O.
 */
#ifndef OFFERD_AGENT_TASK_ENV_H
#define OFFERD_AGENT_TASK_ENV_H

#include "mesos/v1/mesos.pb-c.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mesos's os::host_default_path(). */
#define AGENT_ENV_DEFAULT_PATH                                                 \
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A NULL-terminated vector of owned "NAME=value" strings, each NAME once. */
struct agent_env {
    char **v; /* NULL while empty */
    size_t n;
};

/* Set NAME=value (copied), replacing an earlier NAME in place. */
void agent_env_set(struct agent_env *e, const char *name, const char *value);

/* The value of NAME (borrowed from e), or NULL. */
const char *agent_env_get(const struct agent_env *e, const char *name);

/* Free what e holds and leave it empty. */
void agent_env_clear(struct agent_env *e);

/* Who the process runs for. Strings are borrowed for the call. */
struct agent_task_env_ids {
    const char *sandbox;         /* MESOS_SANDBOX and MESOS_DIRECTORY */
    const char *framework_id;    /* MESOS_FRAMEWORK_ID */
    const char *executor_id;     /* MESOS_EXECUTOR_ID (a command task's
                                    executor id is its task id) */
    const char *task_id;         /* MESOS_TASK_ID; NULL for an executor */
    const char *agent_id;        /* NULL: not registered yet */
    const char *agent_endpoint;  /* "ip:port" of the agent; NULL: unset */
    const char *allocation_role; /* tasks only; NULL: unset */
    bool checkpoint;             /* FrameworkInfo.checkpoint */
    int64_t shutdown_grace_ns;   /* executor shutdown grace period */
};

/* Build *out (OUT, empty on failure) as described above. agent_environ is
 * the agent's environment (NULL-terminated, e.g. environ; NULL for none);
 * executor_env is the parsed --executor_environment_variables object or
 * NULL; cmd_env is the task's CommandInfo.environment or NULL. Returns 0,
 * or -1 with a one-line reason in err (a secret variable, a name that is
 * empty or holds '=', a non-string value in executor_env). */
int agent_task_env_build(const struct agent_task_env_ids *ids,
                         char *const *agent_environ, const json_t *executor_env,
                         const Mesos__V1__Environment *cmd_env,
                         struct agent_env *out, char *err, size_t errlen);

/* Check a --executor_environment_variables value: a JSON object whose
 * values are all strings. Returns the object (new reference), or NULL
 * with Mesos's one-line reason in err. */
json_t *agent_task_env_parse_flag(const char *text, char *err, size_t errlen);

#endif
