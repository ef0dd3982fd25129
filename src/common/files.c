/*
 * The virtual file tree behind /files/read, /files/browse, /files/debug and
 * the operator APIs' LIST_FILES and READ_FILE (files.h), for the master
 * and the agent alike. Every path a peer sends is confined to what was
 * attached; reads are bounded (FILES_MAX_READ) and never block on a FIFO.
 */
#include "common/files.h"

#include "common/http.h"
#include "common/log.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Most attachments a tree holds: they are the daemon's own (a log, a
 * sandboxes root), never a peer's. */
#define MAX_ATTACHED 16

struct attached {
    char *vpath; /* absolute, no trailing '/' (except "/" itself) */
    char *real;  /* canonical */
    bool dir;
};

struct files {
    struct attached v[MAX_ATTACHED];
    size_t n;
    char *base; /* relative request paths are taken under it */
};

/* Collapse ".", ".." and repeated '/' of an absolute path in place. Returns
 * 0, or -1 when ".." climbs above "/". */
static int normalize(char *p)
{
    char *out = p; /* write position; p[0] == '/' */
    const char *in = p;
    while (*in) {
        while (*in == '/')
            in++;
        if (*in == '\0')
            break;
        const char *seg = in;
        while (*in && *in != '/')
            in++;
        size_t len = (size_t)(in - seg);
        if (len == 1 && seg[0] == '.')
            continue;
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            if (out == p)
                return -1;
            while (out > p && *--out != '/')
                ;
            continue;
        }
        *out++ = '/';
        memmove(out, seg, len);
        out += len;
    }
    if (out == p)
        *out++ = '/';
    *out = '\0';
    return 0;
}

/* True when path equals root or lies under it. */
static int is_under(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Make repeated '/' one, in place. */
static void squeeze_slashes(char *p)
{
    char *out = p;
    for (const char *in = p; *in; in++)
        if (!(in[0] == '/' && in[1] == '/'))
            *out++ = *in;
    *out = '\0';
}

/* Drop trailing '/' (but keep "/"), in place. */
static void trim_slash(char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
}

struct files *files_new(void)
{
    struct files *f = xcalloc(1, sizeof(*f));
    f->base = xstrdup("/");
    return f;
}

void files_free(struct files *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].vpath);
        free(f->v[i].real);
    }
    free(f->base);
    free(f);
}

int files_attach(struct files *f, const char *real, const char *vpath,
                 char *err, size_t errlen)
{
    if (vpath[0] != '/') {
        snprintf(err, errlen, "virtual path '%s' is not absolute", vpath);
        return -1;
    }
    char canon[PATH_MAX];
    struct stat st;
    if (realpath(real, canon) == NULL || stat(canon, &st) != 0) {
        snprintf(err, errlen, "Failed to get realpath of '%s': %s", real,
                 strerror(errno));
        return -1;
    }
    char *v = xstrdup(vpath);
    squeeze_slashes(v);
    trim_slash(v);
    size_t i = 0;
    while (i < f->n && strcmp(f->v[i].vpath, v) != 0)
        i++;
    if (i == f->n) {
        if (f->n == MAX_ATTACHED) {
            free(v);
            snprintf(err, errlen, "more than %d attached paths", MAX_ATTACHED);
            return -1;
        }
        f->n++;
    } else {
        free(f->v[i].vpath);
        free(f->v[i].real);
    }
    f->v[i].vpath = v;
    f->v[i].real = xstrdup(canon);
    f->v[i].dir = S_ISDIR(st.st_mode);
    return 0;
}

void files_set_base(struct files *f, const char *vpath)
{
    free(f->base);
    f->base = xstrdup(vpath);
}

/* The attachment that vpath equals or lies under, the longest; NULL when
 * none. */
static const struct attached *attachment_of(const struct files *f,
                                            const char *vpath)
{
    const struct attached *best = NULL;
    for (size_t i = 0; i < f->n; i++)
        if (is_under(f->v[i].vpath, vpath) &&
            (best == NULL || strlen(f->v[i].vpath) > strlen(best->vpath)))
            best = &f->v[i];
    return best;
}

enum files_result files_resolve(const struct files *f, const char *path,
                                char out[PATH_MAX], char *err, size_t errlen)
{
    char buf[PATH_MAX];
    int n = path[0] == '/' ? snprintf(buf, sizeof(buf), "%s", path)
                           : snprintf(buf, sizeof(buf), "%s/%s", f->base, path);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        snprintf(err, errlen, "path too long");
        return FILES_NOT_FOUND;
    }
    squeeze_slashes(buf);
    /* A path that does not even start with an attached one names nothing
     * here; one that does but climbs out is an escape. */
    const struct attached *a = attachment_of(f, buf);
    if (a == NULL) {
        snprintf(err, errlen, "'%s' not found", path);
        return FILES_NOT_FOUND;
    }
    const char *rest =
        buf + (strcmp(a->vpath, "/") == 0 ? 0 : strlen(a->vpath));
    if (!a->dir) {
        if (strspn(rest, "/") != strlen(rest)) {
            snprintf(err, errlen, "'%s' not found", path);
            return FILES_NOT_FOUND;
        }
        if (access(a->real, F_OK) != 0) {
            snprintf(err, errlen, "'%s' not found", path);
            return FILES_NOT_FOUND;
        }
        memcpy(out, a->real, strlen(a->real) + 1);
        return FILES_OK;
    }
    char joined[PATH_MAX];
    n = snprintf(joined, sizeof(joined), "%s%s", a->real, rest);
    if (n < 0 || (size_t)n >= sizeof(joined)) {
        snprintf(err, errlen, "path too long");
        return FILES_NOT_FOUND;
    }
    if (normalize(joined) != 0 || !is_under(a->real, joined)) {
        snprintf(err, errlen, "'%s' is inaccessible", path);
        return FILES_FORBIDDEN;
    }
    char real[PATH_MAX];
    if (realpath(joined, real) == NULL) {
        snprintf(err, errlen, "'%s' not found", path);
        return FILES_NOT_FOUND;
    }
    if (!is_under(a->real, real)) {
        snprintf(err, errlen, "'%s' is inaccessible", path);
        return FILES_FORBIDDEN;
    }
    memcpy(out, real, strlen(real) + 1);
    return FILES_OK;
}

json_t *files_text_json(const uint8_t *p, size_t len)
{
    /* Worst case every byte becomes the 3-byte U+FFFD. */
    char *s = xmalloc(len * 3 + 1);
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint8_t c = p[i];
        size_t need = 0;
        uint32_t min = 0;
        if (c < 0x80)
            need = 1;
        else if ((c & 0xe0) == 0xc0)
            need = 2, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
            need = 3, min = 0x800;
        else if ((c & 0xf8) == 0xf0)
            need = 4, min = 0x10000;
        int ok = need > 0 && i + need <= len;
        uint32_t cp = 0;
        if (ok) {
            cp = need == 1 ? c : (uint32_t)(c & (0x7f >> need));
            for (size_t k = 1; k < need; k++) {
                if ((p[i + k] & 0xc0) != 0x80) {
                    ok = 0;
                    break;
                }
                cp = (cp << 6) | (p[i + k] & 0x3f);
            }
        }
        if (ok && need > 1 &&
            (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
            ok = 0;
        if (ok) {
            memcpy(s + o, p + i, need);
            o += need;
            i += need;
        } else {
            memcpy(s + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    json_t *j = json_stringn(s, o);
    free(s);
    return j != NULL ? j : json_string("");
}

static void mode_text(mode_t m, char out[11])
{
    char t = '-';
    if (S_ISDIR(m))
        t = 'd';
    else if (S_ISCHR(m))
        t = 'c';
    else if (S_ISBLK(m))
        t = 'b';
    else if (S_ISFIFO(m))
        t = 'p';
    else if (S_ISLNK(m))
        t = 'l';
    else if (S_ISSOCK(m))
        t = 's';
    out[0] = t;
    const char *rwx = "rwxrwxrwx";
    for (int i = 0; i < 9; i++)
        out[1 + i] = (m & (0400 >> i)) ? rwx[i] : '-';
    out[10] = '\0';
}

void files_owner(const struct stat *st, char *user, size_t ulen, char *group,
                 size_t glen)
{
    char buf[1024];
    struct passwd pw, *pwp = NULL;
    struct group gr, *grp = NULL;
    if (getpwuid_r(st->st_uid, &pw, buf, sizeof(buf), &pwp) == 0 && pwp != NULL)
        snprintf(user, ulen, "%s", pwp->pw_name);
    else
        snprintf(user, ulen, "%u", (unsigned)st->st_uid);
    if (getgrgid_r(st->st_gid, &gr, buf, sizeof(buf), &grp) == 0 && grp != NULL)
        snprintf(group, glen, "%s", grp->gr_name);
    else
        snprintf(group, glen, "%u", (unsigned)st->st_gid);
}

json_t *files_entry_json(const char *vpath, const struct stat *st)
{
    char mode[11];
    mode_text(st->st_mode, mode);
    char user[256], group[256];
    files_owner(st, user, sizeof(user), group, sizeof(group));
    json_t *j = json_object();
    json_object_set_new(j, "path", json_string(vpath));
    json_object_set_new(j, "mode", json_string(mode));
    json_object_set_new(j, "size", json_integer((json_int_t)st->st_size));
    json_object_set_new(j, "mtime", json_integer((json_int_t)st->st_mtime));
    json_object_set_new(j, "nlink", json_integer((json_int_t)st->st_nlink));
    json_object_set_new(j, "uid", json_string(user));
    json_object_set_new(j, "gid", json_string(group));
    return j;
}

Mesos__V1__FileInfo *files_info_pb(const char *vpath, const struct stat *st)
{
    Mesos__V1__FileInfo *fi = xmalloc(sizeof(*fi));
    mesos__v1__file_info__init(fi);
    fi->path = xstrdup(vpath);
    fi->has_nlink = true;
    fi->nlink = (int32_t)st->st_nlink;
    fi->has_size = true;
    fi->size = (uint64_t)st->st_size;
    fi->mtime = xmalloc(sizeof(*fi->mtime));
    mesos__v1__time_info__init(fi->mtime);
    fi->mtime->nanoseconds =
        (int64_t)st->st_mtim.tv_sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
    fi->has_mode = true;
    fi->mode = (uint32_t)st->st_mode;
    char user[256], group[256];
    files_owner(st, user, sizeof(user), group, sizeof(group));
    fi->uid = xstrdup(user);
    fi->gid = xstrdup(group);
    return fi;
}

/* The path query of req, or NULL after answering 400 when it is missing
 * or empty. */
static const char *query_path(struct http_request *req)
{
    const char *path = http_request_query(req, "path");
    if (path == NULL || path[0] == '\0') {
        http_reply_error(req, 400, "Expecting 'path=value' in query.");
        return NULL;
    }
    return path;
}

/* The query integer name of req, -1 when absent (OUT: *out). Returns 0, or
 * -1 after answering 400 when it is malformed or below -1. */
static int query_position(struct http_request *req, const char *name,
                          int64_t *out)
{
    const char *v = http_request_query(req, name);
    long long n = -1;
    if (v != NULL) {
        char *end;
        errno = 0;
        n = strtoll(v, &end, 10);
        if (v[0] == '\0' || *end != '\0' || errno != 0) {
            http_reply_error(req, 400, "Failed to parse %s: '%s'", name, v);
            return -1;
        }
    }
    if (n < -1) {
        http_reply_error(req, 400, "Negative %s provided: %lld.", name, n);
        return -1;
    }
    *out = n;
    return 0;
}

/* files_read with the largest read `cap` (FILES_MAX_READ for /files/read,
 * FILES_MAX_DOWNLOAD for /files/download). */
static int read_capped(const struct files *f, const char *path, int64_t offset,
                       int64_t length, size_t cap, uint8_t **data, size_t *len,
                       int64_t *size, char *err, size_t errlen)
{
    char real[PATH_MAX];
    enum files_result r = files_resolve(f, path, real, err, errlen);
    if (r != FILES_OK)
        return (int)r;
    /* Anything but a regular file or a directory (a FIFO, a socket, a
     * device) is refused before open(): opening a UNIX socket fails with
     * ENXIO, which is the client's mistake, not the daemon's. The fstat()
     * below checks again what was actually opened. */
    struct stat st;
    if (stat(real, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "Cannot read a file that is not regular.");
        return 400;
    }
    /* O_NONBLOCK: a FIFO must never stall the loop (it is refused below). */
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (e == ENOENT) {
            snprintf(err, errlen, "'%s' not found", path);
            return 404;
        }
        snprintf(err, errlen, "Failed to open file at '%s': %s", path,
                 strerror(e));
        return 500;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "Cannot read a directory.");
        return 400;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "Cannot read a file that is not regular.");
        return 400;
    }
    int64_t fsize = (int64_t)st.st_size;
    uint8_t *buf = NULL;
    size_t got = 0;
    if (offset >= 0 && offset < fsize && length != 0) {
        int64_t want = length < 0 ? fsize - offset : length;
        if (want > (int64_t)cap)
            want = (int64_t)cap;
        buf = xmalloc((size_t)want);
        while (got < (size_t)want) {
            ssize_t n = pread(fd, buf + got, (size_t)want - got,
                              (off_t)(offset + (int64_t)got));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            got += (size_t)n;
        }
    }
    close(fd);
    *data = buf;
    *len = got;
    *size = fsize;
    return 200;
}

int files_read(const struct files *f, const char *path, int64_t offset,
               int64_t length, uint8_t **data, size_t *len, int64_t *size,
               char *err, size_t errlen)
{
    return read_capped(f, path, offset, length, FILES_MAX_READ, data, len, size,
                       err, errlen);
}

int files_download(const struct files *f, const char *path, uint8_t **data,
                   size_t *len, char *err, size_t errlen)
{
    int64_t size;
    int status = read_capped(f, path, 0, -1, FILES_MAX_DOWNLOAD, data, len,
                             &size, err, errlen);
    if (status == 200 && size > (int64_t)FILES_MAX_DOWNLOAD) {
        free(*data);
        *data = NULL;
        *len = 0;
        snprintf(err, errlen,
                 "'%s' is larger than %zu MiB: read it in pieces with "
                 "/files/read",
                 path, FILES_MAX_DOWNLOAD >> 20);
        return 413;
    }
    return status;
}

/* GET /files/download?path=: the file's bytes as an attachment named as
 * the file, as Mesos serves them. */
static void handle_download(struct http_request *req, void *arg)
{
    const struct files *f = arg;
    const char *path = query_path(req);
    if (path == NULL)
        return;
    uint8_t *buf = NULL;
    size_t got = 0;
    char why[PATH_MAX + 64];
    int status = files_download(f, path, &buf, &got, why, sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return;
    }
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    char disp[NAME_MAX + 64];
    /* Quotes and control bytes cannot be in the header's quoted name. */
    size_t o = (size_t)snprintf(disp, sizeof(disp), "attachment; filename=\"");
    for (const char *c = base; *c != '\0' && o < sizeof(disp) - 2; c++)
        disp[o++] =
            (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) ? '_' : *c;
    disp[o++] = '"';
    disp[o] = '\0';
    http_reply_header(req, "Content-Disposition", disp);
    http_reply(req, 200, "application/octet-stream",
               buf != NULL ? buf : (const uint8_t *)"", got);
    free(buf);
}

static void handle_read(struct http_request *req, void *arg)
{
    const struct files *f = arg;
    const char *path = query_path(req);
    int64_t offset, length;
    if (path == NULL || query_position(req, "offset", &offset) != 0 ||
        query_position(req, "length", &length) != 0)
        return;
    uint8_t *buf;
    size_t got;
    int64_t size;
    char why[PATH_MAX + 64];
    int status = files_read(f, path, offset, length, &buf, &got, &size, why,
                            sizeof(why));
    if (status != 200) {
        http_reply_error(req, status, "%s", why);
        return;
    }
    json_t *j = json_object();
    json_object_set_new(j, "data", files_text_json(buf, got));
    json_object_set_new(j, "offset",
                        json_integer(offset == -1 ? size : offset));
    free(buf);
    http_reply_json(req, 200, j);
    json_decref(j);
}

/* One entry found by files_list. */
struct listed {
    char *vpath;
    struct stat st;
};

static int by_vpath(const void *a, const void *b)
{
    const struct listed *x = a, *y = b;
    return strcmp(x->vpath, y->vpath);
}

int files_list(const struct files *f, const char *path, files_entry_fn fn,
               void *arg, char *err, size_t errlen)
{
    char real[PATH_MAX];
    enum files_result r = files_resolve(f, path, real, err, errlen);
    if (r != FILES_OK)
        return (int)r;
    struct listed *entries = NULL;
    size_t n = 0;
    DIR *d = opendir(real);
    if (d != NULL) {
        size_t plen = strlen(path);
        const char *sep = plen > 0 && path[plen - 1] == '/' ? "" : "/";
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char *full = xasprintf("%s/%s", real, de->d_name);
            struct stat st;
            if (stat(full, &st) == 0) {
                entries = xreallocarray(entries, n + 1, sizeof(*entries));
                entries[n].vpath = xasprintf("%s%s%s", path, sep, de->d_name);
                entries[n].st = st;
                n++;
            }
            free(full);
        }
        closedir(d);
    }
    if (n > 1)
        qsort(entries, n, sizeof(*entries), by_vpath);
    for (size_t i = 0; i < n; i++) {
        fn(entries[i].vpath, &entries[i].st, arg);
        free(entries[i].vpath);
    }
    free(entries);
    return 200;
}

struct pb_list {
    Mesos__V1__FileInfo **v;
    size_t n;
};

static void pb_entry(const char *vpath, const struct stat *st, void *arg)
{
    struct pb_list *l = arg;
    l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
    l->v[l->n++] = files_info_pb(vpath, st);
}

int files_list_pb(const struct files *f, const char *path,
                  Mesos__V1__FileInfo ***infos, size_t *n, char *err,
                  size_t errlen)
{
    struct pb_list l = {NULL, 0};
    int status = files_list(f, path, pb_entry, &l, err, errlen);
    if (status == 200) {
        *infos = l.v;
        *n = l.n;
    }
    return status;
}

int files_read_call(const struct files *f, const char *path, uint64_t offset,
                    bool has_length, uint64_t length, uint8_t **data,
                    size_t *len, int64_t *size, char *err, size_t errlen)
{
    int64_t off = offset > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)offset;
    int64_t want = -1;
    if (has_length)
        want = length > (uint64_t)FILES_MAX_READ ? (int64_t)FILES_MAX_READ
                                                 : (int64_t)length;
    return files_read(f, path, off, want, data, len, size, err, errlen);
}

static void browse_entry(const char *vpath, const struct stat *st, void *arg)
{
    json_array_append_new(arg, files_entry_json(vpath, st));
}

static void handle_browse(struct http_request *req, void *arg)
{
    const struct files *f = arg;
    const char *path = query_path(req);
    if (path == NULL)
        return;
    char why[PATH_MAX + 64];
    json_t *arr = json_array();
    int status = files_list(f, path, browse_entry, arr, why, sizeof(why));
    if (status != 200)
        http_reply_error(req, status, "%s", why);
    else
        http_reply_json(req, 200, arr);
    json_decref(arr);
}

json_t *files_debug_json(const struct files *f)
{
    json_t *o = json_object();
    for (size_t i = 0; i < f->n; i++)
        json_object_set_new(o, f->v[i].vpath, json_string(f->v[i].real));
    return o;
}

static void handle_debug(struct http_request *req, void *arg)
{
    json_t *o = files_debug_json(arg);
    http_reply_json_jsonp(req, 200, o);
    json_decref(o);
}

int files_route(struct files *f, struct http_server *srv)
{
    if (http_server_route(srv, "/files/read", HTTP_GET, handle_read, f) != 0 ||
        http_server_route(srv, "/files/browse", HTTP_GET, handle_browse, f) !=
            0 ||
        http_server_route(srv, "/files/download", HTTP_GET, handle_download,
                          f) != 0 ||
        http_server_route(srv, "/files/debug", HTTP_GET, handle_debug, f) != 0)
        return -1;
    return 0;
}
