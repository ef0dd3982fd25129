/*
 * The master's files (files.h): a common/files tree holding the master's
 * log, as Mesos's master attaches its glog file under /master/log.
 */
#include "master/files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/files.h"
#include "common/log.h"
#include "common/mem.h"

bool master_log_path(const struct master_flags *flags, char *out, size_t n)
{
    if (flags->log_dir == NULL || flags->log_dir[0] == '\0')
        return false;
    int k = snprintf(out, n, "%s/%s", flags->log_dir, MASTER_LOG_NAME);
    return k > 0 && (size_t)k < n;
}

int master_files_register(struct master *m)
{
    m->files = files_new();
    char path[PATH_MAX];
    if (master_log_path(m->flags, path, sizeof(path))) {
        char err[PATH_MAX + 128];
        if (files_attach(m->files, path, MASTER_LOG_VPATH, err, sizeof(err)) !=
            0)
            log_warn("the log is not served as %s: %s", MASTER_LOG_VPATH, err);
    }
    return files_route(m->files, m->http);
}

void master_files_free(struct master *m)
{
    files_free(m->files);
    m->files = NULL;
}

static Mesos__V1__Master__Response *
response_new(Mesos__V1__Master__Response__Type type)
{
    Mesos__V1__Master__Response *r = xmalloc(sizeof(*r));
    mesos__v1__master__response__init(r);
    r->has_type = true;
    r->type = type;
    return r;
}

Mesos__V1__Master__Response *
master_files_list(struct master *m, struct http_request *req,
                  const Mesos__V1__Master__Call__ListFiles *lf)
{
    Mesos__V1__FileInfo **infos = NULL;
    size_t n = 0;
    char why[PATH_MAX + 64];
    int status =
        files_list_pb(m->files, lf->path, &infos, &n, why, sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return NULL;
    }
    Mesos__V1__Master__Response *r =
        response_new(MESOS__V1__MASTER__RESPONSE__TYPE__LIST_FILES);
    r->list_files = xmalloc(sizeof(*r->list_files));
    mesos__v1__master__response__list_files__init(r->list_files);
    r->list_files->file_infos = infos;
    r->list_files->n_file_infos = n;
    return r;
}

Mesos__V1__Master__Response *
master_files_read(struct master *m, struct http_request *req,
                  const Mesos__V1__Master__Call__ReadFile *rf)
{
    uint8_t *data;
    size_t len;
    int64_t size;
    char why[PATH_MAX + 64];
    int status =
        files_read_call(m->files, rf->path, rf->offset, rf->has_length,
                        rf->length, &data, &len, &size, why, sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return NULL;
    }
    Mesos__V1__Master__Response *r =
        response_new(MESOS__V1__MASTER__RESPONSE__TYPE__READ_FILE);
    r->read_file = xmalloc(sizeof(*r->read_file));
    mesos__v1__master__response__read_file__init(r->read_file);
    r->read_file->size = (uint64_t)size;
    r->read_file->data.data = data; /* NULL with len 0 is an empty field */
    r->read_file->data.len = len;
    return r;
}
