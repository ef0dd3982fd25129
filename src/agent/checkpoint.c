/*
 * The agent's checkpoint files (layout in checkpoint.h).
 */
#include "agent/checkpoint.h"

#include "common/fs.h"
#include "common/json_pb.h"
#include "common/mem.h"
#include "common/recordio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct agent_ckpt {
    char *meta; /* <work_dir>/meta */
};

bool agent_ckpt_id_is_safe(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 255 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return false;
    for (const char *p = id; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c >= 0x7f || c == '/' || c == '\\')
            return false;
    }
    return true;
}

struct agent_ckpt *agent_ckpt_new(const char *work_dir, char *err,
                                  size_t errlen)
{
    char *meta = xasprintf("%s/meta", work_dir);
    if (fs_mkdirs(meta, err, errlen) != 0) {
        free(meta);
        return NULL;
    }
    struct agent_ckpt *ck = xcalloc(1, sizeof(*ck));
    ck->meta = meta;
    return ck;
}

void agent_ckpt_free(struct agent_ckpt *ck)
{
    if (ck == NULL)
        return;
    free(ck->meta);
    free(ck);
}

const char *agent_ckpt_dir(const struct agent_ckpt *ck)
{
    return ck->meta;
}

static int write_file(const char *path, const void *data, size_t len, char *err,
                      size_t errlen)
{
    if (fs_write_atomic(path, data, len) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int write_msg(const char *path, const ProtobufCMessage *m, char *err,
                     size_t errlen)
{
    size_t len;
    uint8_t *buf = jpb_to_pb(m, &len);
    int rc = write_file(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

static char *task_dir(const struct agent_ckpt *ck, const char *fw,
                      const char *task)
{
    return xasprintf("%s/frameworks/%s/tasks/%s", ck->meta, fw, task);
}

/* Make a task's directory and return the path of file in it. */
static char *task_file(const struct agent_ckpt *ck, const char *fw,
                       const char *task, const char *file, char *err,
                       size_t errlen)
{
    if (!agent_ckpt_id_is_safe(fw) || !agent_ckpt_id_is_safe(task)) {
        snprintf(err, errlen, "unsafe id for a checkpoint path");
        return NULL;
    }
    char *dir = task_dir(ck, fw, task);
    if (fs_mkdirs(dir, err, errlen) != 0) {
        free(dir);
        return NULL;
    }
    char *path = xasprintf("%s/%s", dir, file);
    free(dir);
    return path;
}

int agent_ckpt_save_agent_id(struct agent_ckpt *ck, const char *id, char *err,
                             size_t errlen)
{
    char *path = xasprintf("%s/agent_id", ck->meta);
    int rc = write_file(path, id, strlen(id), err, errlen);
    free(path);
    return rc;
}

int agent_ckpt_load_agent_id(struct agent_ckpt *ck, char *out, size_t outlen,
                             char *err, size_t errlen)
{
    char *path = xasprintf("%s/agent_id", ck->meta);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, 4096, &data, &len);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    } else if (rc == 1) {
        /* Trailing whitespace is not part of the id. */
        while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == ' '))
            data[--len] = '\0';
        if (len == 0 || len >= outlen || memchr(data, '\0', len) != NULL) {
            snprintf(err, errlen, "%s does not hold an agent id", path);
            rc = -1;
        } else {
            memcpy(out, data, len + 1);
        }
    }
    free(data);
    free(path);
    return rc;
}

int agent_ckpt_save_framework(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__FrameworkInfo *info, char *err,
                              size_t errlen)
{
    if (!agent_ckpt_id_is_safe(framework_id)) {
        snprintf(err, errlen, "unsafe framework id for a checkpoint path");
        return -1;
    }
    char *dir = xasprintf("%s/frameworks/%s", ck->meta, framework_id);
    int rc = fs_mkdirs(dir, err, errlen);
    if (rc == 0) {
        char *path = xasprintf("%s/framework_info", dir);
        rc = write_msg(path, &info->base, err, errlen);
        free(path);
    }
    free(dir);
    return rc;
}

int agent_ckpt_save_task_info(struct agent_ckpt *ck, const char *framework_id,
                              const Mesos__V1__TaskInfo *info,
                              const char *sandbox, char *err, size_t errlen)
{
    const char *task = info->task_id->value;
    char *path = task_file(ck, framework_id, task, "task_info", err, errlen);
    if (path == NULL)
        return -1;
    int rc = write_msg(path, &info->base, err, errlen);
    free(path);
    if (rc != 0)
        return rc;
    path = task_file(ck, framework_id, task, "sandbox", err, errlen);
    if (path == NULL)
        return -1;
    char *text = xasprintf("%s\n", sandbox);
    rc = write_file(path, text, strlen(text), err, errlen);
    free(text);
    free(path);
    return rc;
}

int agent_ckpt_save_task(struct agent_ckpt *ck, const char *framework_id,
                         const Mesos__V1__Task *task, char *err, size_t errlen)
{
    char *path =
        task_file(ck, framework_id, task->task_id->value, "task", err, errlen);
    if (path == NULL)
        return -1;
    int rc = write_msg(path, &task->base, err, errlen);
    free(path);
    return rc;
}

int agent_ckpt_save_updates(struct agent_ckpt *ck, const char *framework_id,
                            const char *task_id,
                            const Offerd__Agent__Call__Update *const *v,
                            size_t n, char *err, size_t errlen)
{
    char *path = task_file(ck, framework_id, task_id, "updates", err, errlen);
    if (path == NULL)
        return -1;
    uint8_t *all = NULL;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t plen;
        uint8_t *pb = jpb_to_pb(&v[i]->base, &plen);
        size_t flen;
        uint8_t *frame = rio_frame(pb, plen, &flen);
        all = xrealloc(all, len + flen);
        memcpy(all + len, frame, flen);
        len += flen;
        free(frame);
        free(pb);
    }
    int rc = write_file(path, all, len, err, errlen);
    free(all);
    free(path);
    return rc;
}

int agent_ckpt_remove_task(struct agent_ckpt *ck, const char *framework_id,
                           const char *task_id)
{
    if (!agent_ckpt_id_is_safe(framework_id) || !agent_ckpt_id_is_safe(task_id))
        return -1;
    char *dir = task_dir(ck, framework_id, task_id);
    int rc = fs_remove_tree(dir);
    free(dir);
    /* rmdir fails (and leaves them) while other tasks remain. */
    char *tasks = xasprintf("%s/frameworks/%s/tasks", ck->meta, framework_id);
    if (rmdir(tasks) == 0 || errno == ENOENT) {
        char *fw = xasprintf("%s/frameworks/%s", ck->meta, framework_id);
        fs_remove_tree(fw);
        free(fw);
    }
    free(tasks);
    return rc;
}

int agent_ckpt_remove_framework(struct agent_ckpt *ck, const char *framework_id)
{
    if (!agent_ckpt_id_is_safe(framework_id))
        return -1;
    char *fw = xasprintf("%s/frameworks/%s", ck->meta, framework_id);
    int rc = fs_remove_tree(fw);
    free(fw);
    return rc;
}
