/*
 * Sandbox directories.
 */
#include "agent/sandbox.h"

#include "agent/checkpoint.h"
#include "common/fs.h"
#include "common/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *agent_sandbox_root(const char *work_dir)
{
    return xasprintf("%s/sandboxes", work_dir);
}

static int touch(const char *dir, const char *name, char *err, size_t errlen)
{
    char *path = xasprintf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
        free(path);
        return -1;
    }
    close(fd);
    free(path);
    return 0;
}

char *agent_sandbox_create(const char *root, const char *framework_id,
                           const char *task_id, char run_id[ID_UUID_SIZE],
                           char *err, size_t errlen)
{
    if (!agent_ckpt_id_is_safe(framework_id) ||
        !agent_ckpt_id_is_safe(task_id)) {
        snprintf(err, errlen,
                 "framework or task id cannot name a sandbox directory");
        return NULL;
    }
    id_uuid_v4(run_id);
    char *path = xasprintf("%s/%s/%s/%s", root, framework_id, task_id, run_id);
    if (fs_mkdirs(path, err, errlen) != 0 ||
        touch(path, "stdout", err, errlen) != 0 ||
        touch(path, "stderr", err, errlen) != 0) {
        free(path);
        return NULL;
    }
    return path;
}
