/*
 * The agent's checkpoint files (layout in checkpoint.h).
 */
#include "agent/checkpoint.h"

#include "common/fs.h"
#include "common/json_pb.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/recordio.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent_ckpt {
    char *meta;         /* <work_dir>/meta */
    uint64_t trash_seq; /* names of directories moved to trash/ */
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

int agent_ckpt_trash(struct agent_ckpt *ck, const char *path)
{
    char *tdir = xasprintf("%s/trash", ck->meta);
    char err[256];
    int rc = -1;
    bool done = false;
    if (fs_mkdirs(tdir, err, sizeof(err)) == 0) {
        char *dst =
            xasprintf("%s/%ld-%" PRIu64, tdir, (long)getpid(), ++ck->trash_seq);
        if (rename(path, dst) == 0) {
            rc = fs_remove_tree(dst);
            done = true;
        } else if (errno == ENOENT) {
            rc = 0;
            done = true;
        }
        free(dst);
    }
    free(tdir);
    return done ? rc : fs_remove_tree(path);
}

int agent_ckpt_save_kill(struct agent_ckpt *ck, const char *framework_id,
                         const char *task_id, const struct agent_ckpt_kill *k,
                         char *err, size_t errlen)
{
    char *path = task_file(ck, framework_id, task_id, "kill", err, errlen);
    if (path == NULL)
        return -1;
    char text[96];
    int n =
        k->has_reason
            ? snprintf(text, sizeof(text), "%" PRId64 " %" PRId64 " %d %d\n",
                       k->grace_ns, k->deadline_wall_ns,
                       k->during_launch ? 1 : 0, k->reason)
            : snprintf(text, sizeof(text), "%" PRId64 " %" PRId64 " %d\n",
                       k->grace_ns, k->deadline_wall_ns,
                       k->during_launch ? 1 : 0);
    int rc = -1;
    if (n > 0 && (size_t)n < sizeof(text))
        rc = write_file(path, text, (size_t)n, err, errlen);
    else
        snprintf(err, errlen, "cannot format the kill checkpoint");
    free(path);
    return rc;
}

int agent_ckpt_remove_task(struct agent_ckpt *ck, const char *framework_id,
                           const char *task_id)
{
    if (!agent_ckpt_id_is_safe(framework_id) || !agent_ckpt_id_is_safe(task_id))
        return -1;
    char *dir = task_dir(ck, framework_id, task_id);
    int rc = agent_ckpt_trash(ck, dir);
    free(dir);
    /* rmdir fails (and leaves them) while other tasks remain. */
    char *tasks = xasprintf("%s/frameworks/%s/tasks", ck->meta, framework_id);
    if (rmdir(tasks) == 0 || errno == ENOENT) {
        char *fw = xasprintf("%s/frameworks/%s", ck->meta, framework_id);
        agent_ckpt_trash(ck, fw);
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
    int rc = agent_ckpt_trash(ck, fw);
    free(fw);
    return rc;
}

int agent_ckpt_remove_all(struct agent_ckpt *ck)
{
    char *fws = xasprintf("%s/frameworks", ck->meta);
    int rc = agent_ckpt_trash(ck, fws);
    free(fws);
    char *res = xasprintf("%s/resources", ck->meta);
    if (agent_ckpt_trash(ck, res) != 0)
        rc = -1;
    free(res);
    char *id = xasprintf("%s/agent_id", ck->meta);
    if (unlink(id) != 0 && errno != ENOENT)
        rc = -1;
    free(id);
    char *tdir = xasprintf("%s/trash", ck->meta);
    if (fs_remove_tree(tdir) != 0)
        rc = -1;
    free(tdir);
    return rc;
}

/* ---- Checkpointed resources ---- */

static char *res_file(const struct agent_ckpt *ck,
                      enum agent_ckpt_res_file which)
{
    return xasprintf("%s/resources/%s", ck->meta,
                     which == AGENT_CKPT_RES_CHECKPOINTED ? "checkpointed"
                                                          : "removing");
}

int agent_ckpt_save_resources(struct agent_ckpt *ck,
                              enum agent_ckpt_res_file which,
                              Mesos__V1__Resource *const *v, size_t n,
                              uint64_t version, char *err, size_t errlen)
{
    char *dir = xasprintf("%s/resources", ck->meta);
    int rc = fs_mkdirs(dir, err, errlen);
    free(dir);
    if (rc != 0)
        return -1;
    Offerd__Agent__Event__CheckpointResources m =
        OFFERD__AGENT__EVENT__CHECKPOINT_RESOURCES__INIT;
    m.resources = (Mesos__V1__Resource **)v;
    m.n_resources = n;
    m.version = version;
    char *path = res_file(ck, which);
    rc = write_msg(path, &m.base, err, errlen);
    free(path);
    return rc;
}

int agent_ckpt_load_resources(struct agent_ckpt *ck,
                              enum agent_ckpt_res_file which,
                              Offerd__Agent__Event__CheckpointResources **out,
                              char *err, size_t errlen)
{
    char *path = res_file(ck, which);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, AGENT_CKPT_MAX_FILE, &data, &len);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
    } else if (rc == 1) {
        char why[256];
        ProtobufCMessage *m =
            jpb_from_pb(&offerd__agent__event__checkpoint_resources__descriptor,
                        data, len, why, sizeof(why));
        if (m == NULL) {
            snprintf(err, errlen, "%s is not a valid CheckpointResources: %s",
                     path, why);
            rc = -1;
        } else {
            *out = (Offerd__Agent__Event__CheckpointResources *)m;
        }
    }
    free(data);
    free(path);
    return rc;
}

/* ---- Reading back ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir that are directories, sorted, "." and ".." left out
 * (NULL-terminated; free each and the array). NULL when dir cannot be
 * opened (errno set). */
static char **list_dirs(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    char **v = NULL;
    size_t k = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        char *path = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        bool is_dir = lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
        free(path);
        if (!is_dir) {
            log_warn("checkpoint: %s/%s is not a directory: skipped", dir,
                     de->d_name);
            continue;
        }
        v = xreallocarray(v, k + 2, sizeof(*v));
        v[k++] = xstrdup(de->d_name);
        v[k] = NULL;
    }
    closedir(d);
    if (v == NULL)
        v = xcalloc(1, sizeof(*v));
    qsort(v, k, sizeof(*v), by_name);
    *n = k;
    return v;
}

static void free_list(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

/* Read and decode dir/file as desc. Returns the message, or NULL when the
 * file is absent (*present false) or unreadable or invalid (*present true,
 * logged, *problems counted). */
static ProtobufCMessage *read_msg(const char *dir, const char *file,
                                  const ProtobufCMessageDescriptor *desc,
                                  bool *present, size_t *problems)
{
    char *path = xasprintf("%s/%s", dir, file);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, AGENT_CKPT_MAX_FILE, &data, &len);
    ProtobufCMessage *m = NULL;
    *present = rc != 0;
    if (rc < 0) {
        log_warn("checkpoint: cannot read %s: %s", path, strerror(errno));
        (*problems)++;
    } else if (rc == 1) {
        char err[256];
        m = jpb_from_pb(desc, data, len, err, sizeof(err));
        if (m == NULL) {
            log_warn("checkpoint: %s is not a valid %s: %s", path, desc->name,
                     err);
            (*problems)++;
        }
    }
    free(data);
    free(path);
    return m;
}

/* Read the small text file dir/name (at most max bytes) and hand it to
 * parse, which fills *out and says whether it was well-formed. A file that
 * is there but unreadable or malformed is logged as not holding what, and
 * counted in *problems. Returns true when the file was there and parsed. */
static bool read_text_file(const char *dir, const char *name, size_t max,
                           const char *what,
                           bool (*parse)(uint8_t *data, size_t len, void *out),
                           void *out, size_t *problems)
{
    char *path = xasprintf("%s/%s", dir, name);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, max, &data, &len);
    bool ok = rc == 1 && parse(data, len, out);
    if (rc < 0 || (rc == 1 && !ok)) {
        log_warn("checkpoint: %s does not hold %s", path, what);
        (*problems)++;
    }
    free(data);
    free(path);
    return ok;
}

/* The sandbox file: an absolute path on one line (out: char **, the
 * path copied). */
static bool parse_sandbox(uint8_t *data, size_t len, void *out)
{
    while (len > 0 && data[len - 1] == '\n')
        data[--len] = '\0';
    if (len == 0 || data[0] != '/' || memchr(data, '\0', len) != NULL ||
        memchr(data, '\n', len) != NULL)
        return false;
    *(char **)out = xstrdup((char *)data);
    return true;
}

/* The kill file: "grace deadline during_launch[ reason]\n" (out: struct
 * agent_ckpt_kill *). */
static bool parse_kill(uint8_t *data, size_t len, void *out)
{
    struct agent_ckpt_kill *k = out;
    long long grace, deadline;
    int during, reason = -1, end = 0;
    char nl;
    /* Three fields, or four with the kill's reason. */
    bool three = sscanf((char *)data, "%lld %lld %d%c%n", &grace, &deadline,
                        &during, &nl, &end) == 4 &&
                 nl == '\n' && (size_t)end == len;
    bool four = !three &&
                sscanf((char *)data, "%lld %lld %d %d%c%n", &grace, &deadline,
                       &during, &reason, &nl, &end) == 5 &&
                nl == '\n' && (size_t)end == len && reason >= 0;
    if (!(three || four) || grace < 0 || (during != 0 && during != 1))
        return false;
    k->grace_ns = grace;
    k->deadline_wall_ns = deadline;
    k->during_launch = during == 1;
    k->has_reason = four;
    k->reason = four ? reason : 0;
    return true;
}

/* The updates file: every valid record of this task, oldest first. */
static void read_updates(const char *dir, struct agent_ckpt_task *t,
                         size_t *problems)
{
    char *path = xasprintf("%s/updates", dir);
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = fs_read(path, AGENT_CKPT_MAX_FILE, &data, &len);
    if (rc < 0) {
        log_warn("checkpoint: cannot read %s: %s", path, strerror(errno));
        (*problems)++;
    }
    if (rc != 1) {
        free(path);
        free(data);
        return;
    }
    struct rio_decoder *d = rio_decoder_new(AGENT_CKPT_MAX_FILE);
    size_t off = 0, index = 0;
    bool failed = false;
    while (off < len) {
        size_t used;
        const uint8_t *rec;
        size_t rlen;
        enum rio_result r =
            rio_decoder_feed(d, data + off, len - off, &used, &rec, &rlen);
        off += used;
        if (r == RIO_ERROR) {
            log_warn("checkpoint: %s: %s (the rest is skipped)", path,
                     rio_decoder_error(d));
            (*problems)++;
            failed = true;
            break;
        }
        if (r == RIO_NEED_MORE)
            break;
        char err[256];
        Offerd__Agent__Call__Update *u =
            (Offerd__Agent__Call__Update *)jpb_from_pb(
                &offerd__agent__call__update__descriptor, rec, rlen, err,
                sizeof(err));
        const char *why = NULL;
        if (u == NULL)
            why = err;
        else if (strcmp(u->status->task_id->value, t->task_id) != 0)
            why = "an update of another task";
        else if (!u->status->has_uuid || u->status->uuid.len != 16)
            why = "an update without a 16-byte uuid";
        if (why != NULL) {
            log_warn("checkpoint: %s: record %zu skipped: %s", path, index,
                     why);
            (*problems)++;
            if (u != NULL)
                jpb_free(&u->base);
        } else {
            t->updates =
                xreallocarray(t->updates, t->nupdates + 1, sizeof(*t->updates));
            t->updates[t->nupdates++] = u;
        }
        index++;
    }
    if (!failed && !rio_decoder_is_idle(d)) {
        log_warn("checkpoint: %s ends inside a record (skipped)", path);
        (*problems)++;
    }
    rio_decoder_free(d);
    free(data);
    free(path);
}

static void read_task(const char *fwdir, const char *fw, const char *task_id,
                      struct agent_ckpt_task *t, size_t *problems)
{
    char *dir = xasprintf("%s/tasks/%s", fwdir, task_id);
    memset(t, 0, sizeof(*t));
    t->framework_id = xstrdup(fw);
    t->task_id = xstrdup(task_id);
    bool present;
    t->info = (Mesos__V1__TaskInfo *)read_msg(dir, "task_info",
                                              &mesos__v1__task_info__descriptor,
                                              &present, problems);
    if (t->info != NULL && strcmp(t->info->task_id->value, task_id) != 0) {
        log_warn("checkpoint: %s/task_info is of task %s: skipped", dir,
                 t->info->task_id->value);
        (*problems)++;
        jpb_free(&t->info->base);
        t->info = NULL;
    }
    read_text_file(dir, "sandbox", PATH_MAX, "a sandbox path", parse_sandbox,
                   &t->sandbox, problems);
    t->task = (Mesos__V1__Task *)read_msg(
        dir, "task", &mesos__v1__task__descriptor, &t->has_task_file, problems);
    if (t->task != NULL && (strcmp(t->task->task_id->value, task_id) != 0 ||
                            strcmp(t->task->framework_id->value, fw) != 0)) {
        log_warn("checkpoint: %s/task is of another task: skipped", dir);
        (*problems)++;
        jpb_free(&t->task->base);
        t->task = NULL;
    }
    read_updates(dir, t, problems);
    t->has_kill = read_text_file(dir, "kill", 128, "a kill record", parse_kill,
                                 &t->kill, problems);
    if (t->nupdates > 0) {
        t->has_state = true;
        t->state = t->updates[t->nupdates - 1]->status->state;
    } else if (t->task != NULL) {
        t->has_state = true;
        t->state = t->task->state;
    }
    free(dir);
}

void agent_ckpt_read(struct agent_ckpt *ck, struct agent_ckpt_state *out)
{
    memset(out, 0, sizeof(*out));
    char *tdir = xasprintf("%s/trash", ck->meta);
    if (fs_remove_tree(tdir) != 0) {
        log_warn("checkpoint: cannot empty %s", tdir);
        out->problems++;
    }
    free(tdir);
    char *root = xasprintf("%s/frameworks", ck->meta);
    size_t nfw = 0;
    char **fws = list_dirs(root, &nfw);
    if (fws == NULL) {
        if (errno != ENOENT) {
            log_warn("checkpoint: cannot read %s: %s", root, strerror(errno));
            out->problems++;
        }
        free(root);
        return;
    }
    for (size_t i = 0; i < nfw; i++) {
        const char *fw = fws[i];
        if (!agent_ckpt_id_is_safe(fw)) {
            log_warn("checkpoint: %s/%s does not name a framework: skipped",
                     root, fw);
            out->problems++;
            continue;
        }
        char *fwdir = xasprintf("%s/%s", root, fw);
        bool present;
        Mesos__V1__FrameworkInfo *fi = (Mesos__V1__FrameworkInfo *)read_msg(
            fwdir, "framework_info", &mesos__v1__framework_info__descriptor,
            &present, &out->problems);
        if (fi != NULL && fi->id != NULL && strcmp(fi->id->value, fw) != 0) {
            log_warn("checkpoint: %s/framework_info is of framework %s: "
                     "skipped",
                     fwdir, fi->id->value);
            out->problems++;
            jpb_free(&fi->base);
            fi = NULL;
        }
        out->frameworks = xreallocarray(out->frameworks, out->nframeworks + 1,
                                        sizeof(*out->frameworks));
        out->frameworks[out->nframeworks].id = xstrdup(fw);
        out->frameworks[out->nframeworks].info = fi;
        out->nframeworks++;

        char *tasks = xasprintf("%s/tasks", fwdir);
        size_t nt = 0;
        char **tv = list_dirs(tasks, &nt);
        if (tv == NULL && errno != ENOENT) {
            log_warn("checkpoint: cannot read %s: %s", tasks, strerror(errno));
            out->problems++;
        }
        for (size_t k = 0; k < nt; k++) {
            if (!agent_ckpt_id_is_safe(tv[k])) {
                log_warn("checkpoint: %s/%s does not name a task: skipped",
                         tasks, tv[k]);
                out->problems++;
                continue;
            }
            out->tasks =
                xreallocarray(out->tasks, out->ntasks + 1, sizeof(*out->tasks));
            read_task(fwdir, fw, tv[k], &out->tasks[out->ntasks],
                      &out->problems);
            out->ntasks++;
        }
        free_list(tv);
        free(tasks);
        free(fwdir);
    }
    free_list(fws);
    free(root);
}

void agent_ckpt_state_clear(struct agent_ckpt_state *s)
{
    for (size_t i = 0; i < s->nframeworks; i++) {
        free(s->frameworks[i].id);
        if (s->frameworks[i].info != NULL)
            jpb_free(&s->frameworks[i].info->base);
    }
    free(s->frameworks);
    for (size_t i = 0; i < s->ntasks; i++) {
        struct agent_ckpt_task *t = &s->tasks[i];
        free(t->framework_id);
        free(t->task_id);
        if (t->info != NULL)
            jpb_free(&t->info->base);
        free(t->sandbox);
        if (t->task != NULL)
            jpb_free(&t->task->base);
        for (size_t k = 0; k < t->nupdates; k++)
            jpb_free(&t->updates[k]->base);
        free(t->updates);
    }
    free(s->tasks);
    memset(s, 0, sizeof(*s));
}
