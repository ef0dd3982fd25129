/*
 * The launch flags' rows and checks (see flags_launch.h).
 */
#include "agent/flags_launch.h"

#include "agent/task_env.h"

#include <stdio.h>
#include <string.h>

void agent_launch_flag_defs(struct agent_launch_flags *lf,
                            struct flag_def *defs)
{
    const struct flag_def rows[AGENT_LAUNCH_FLAG_ROWS] = {
        {"containerizers", FLAG_STRING, "mesos",
         "Comma-separated list of containerizers. Only \"mesos\" (tasks run "
         "as processes in their sandbox) exists in offerd; a task or "
         "executor whose ContainerInfo asks for DOCKER, or for MESOS with an "
         "image, fails with TASK_FAILED (REASON_CONTAINER_LAUNCH_FAILED).",
         &lf->containerizers},
        {"switch_user", FLAG_BOOL, "true",
         "Run each task as the user its CommandInfo.user, else its "
         "FrameworkInfo.user, names (setgid, supplementary groups, setuid; "
         "the sandbox and fetched files are chowned to it); a user that "
         "does not exist fails the task. false: tasks run as the agent's "
         "user.",
         &lf->switch_user},
        {"executor_environment_variables", FLAG_STRING, NULL,
         "JSON object of the environment variables (string values) given "
         "to every task and executor, e.g. {\"PATH\": \"/bin:/usr/bin\"}. "
         "Unset: nothing of the agent's own environment passes (but "
         "LIBPROCESS_IP), as in Mesos.",
         &lf->executor_env_text},
        {"fetcher_cache_size", FLAG_BYTES, AGENT_FETCHER_CACHE_SIZE_DEFAULT,
         "Size of the fetcher cache (CommandInfo.URI.cache); the least "
         "recently used files are evicted to make room.",
         &lf->fetcher_cache_size},
        {"fetcher_cache_dir", FLAG_STRING, NULL,
         "Directory of the fetcher cache, cleared when the agent starts. "
         "Defaults to <work_dir>/fetch.",
         &lf->fetcher_cache_dir},
        {"fetcher_stall_timeout", FLAG_DURATION,
         AGENT_FETCHER_STALL_TIMEOUT_DEFAULT,
         "A download whose speed stays below one byte per second for this "
         "long is aborted (and the task fails).",
         &lf->fetcher_stall_timeout_ns},
        {"frameworks_home", FLAG_STRING, NULL,
         "Directory prepended to URIs that are relative paths; unset, such "
         "URIs fail the fetch.",
         &lf->frameworks_home},
    };
    memcpy(defs, rows, sizeof(rows));
}

int agent_launch_flags_check(struct agent_launch_flags *lf, char *err,
                             size_t errlen)
{
    const char *p = lf->containerizers;
    bool any = false;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        if (n == 6 && strncmp(p, "docker", 6) == 0) {
            snprintf(err, errlen,
                     "--containerizers: offerd has no docker containerizer "
                     "(only \"mesos\")");
            return -1;
        }
        if (n != 5 || strncmp(p, "mesos", 5) != 0) {
            snprintf(err, errlen,
                     "--containerizers: unknown containerizer '%.*s' (only "
                     "\"mesos\")",
                     (int)n, p);
            return -1;
        }
        any = true;
        p += n;
        if (*p == ',')
            p++;
    }
    if (!any) {
        snprintf(err, errlen, "--containerizers: must name \"mesos\"");
        return -1;
    }
    if (lf->fetcher_stall_timeout_ns <= 0) {
        snprintf(err, errlen, "--fetcher_stall_timeout: must be above 0");
        return -1;
    }
    if (lf->fetcher_cache_dir != NULL && lf->fetcher_cache_dir[0] == '\0') {
        snprintf(err, errlen, "--fetcher_cache_dir: must not be empty");
        return -1;
    }
    json_decref(lf->executor_env);
    lf->executor_env = NULL;
    if (lf->executor_env_text != NULL) {
        lf->executor_env =
            agent_task_env_parse_flag(lf->executor_env_text, err, errlen);
        if (lf->executor_env == NULL)
            return -1;
    }
    return 0;
}

void agent_launch_flags_fini(struct agent_launch_flags *lf)
{
    json_decref(lf->executor_env);
    lf->executor_env = NULL;
}
