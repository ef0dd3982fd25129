/*
 * Task sandboxes: one directory per run of a task, Mesos-like,
 *
 *   <work_dir>/sandboxes/<framework_id>/<task_id>/<run uuid>/
 *
 * holding the task's stdout and stderr files (created empty before the task
 * starts), the files the task writes (it runs with the sandbox as its
 * working directory), and the supervisor's bookkeeping (see supervisor.h).
 * The agent's /files endpoints serve everything under
 * <work_dir>/sandboxes.
 */
#ifndef OFFERD_AGENT_SANDBOX_H
#define OFFERD_AGENT_SANDBOX_H

#include "common/ids.h"

#include <stddef.h>

/* The sandboxes root of an (absolute) work_dir, newly allocated. */
char *agent_sandbox_root(const char *work_dir);

/* Create a new run directory for a task under root, with empty stdout and
 * stderr files, and return its path (newly allocated) with the run uuid in
 * run_id. framework_id and task_id must be safe path components
 * (agent_ckpt_id_is_safe). Returns NULL with a one-line reason in err. */
char *agent_sandbox_create(const char *root, const char *framework_id,
                           const char *task_id, char run_id[ID_UUID_SIZE],
                           char *err, size_t errlen);

#endif
