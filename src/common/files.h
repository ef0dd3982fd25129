/*
 * A virtual file tree for the /files endpoints and the operator APIs'
 * LIST_FILES and READ_FILE, as Mesos's src/files/files.cpp: real files and
 * directories are attached under virtual paths (the agent attaches its
 * sandboxes root under its own path, the master its log file as
 * /master/log), and requests name virtual paths.
 *
 *   GET /files/read?path=P[&offset=N][&length=N]
 *       {"data": "<bytes>", "offset": N}. offset -1 (or none) asks for the
 *       file's size: {"data": "", "offset": <size>}. A read past the end
 *       gives empty data. length -1 or none reads to the end, at most 16
 *       pages (64 KiB) per call. Bad offset or length, a directory, or a
 *       file that is not a regular file: 400.
 *   GET /files/browse?path=P
 *       [{"path", "mode", "size", "mtime", "nlink", "uid", "gid"}, ...]
 *       sorted by path; the path of each entry is P joined with its name;
 *       a path that names a file gives [] (as Mesos).
 *   GET /files/debug
 *       {"<virtual path>": "<real path>", ...}: what is attached.
 *
 * Resolution (files_resolve): a relative path is taken under the base
 * virtual path (files_set_base; "/" by default) and repeated '/' count as
 * one. The longest attached virtual path that the path equals or lies
 * under is used; none: 404. Under an attached file, only the file itself
 * resolves (anything below it is 404). Under an attached directory the
 * rest of the path is joined to the directory, ".", ".." are collapsed,
 * and a path that climbs out is refused 403; then the path is
 * canonicalized with realpath and must still lie in the directory (a
 * symlink leading out is refused 403); a missing file is 404. (Mesos
 * answers an escape with 400; offerd uses 403.)
 *
 * The data of /files/read is a JSON string: bytes that are not UTF-8 are
 * replaced by U+FFFD, so binary files do not read back exactly (Mesos's
 * /files/download, not served yet, is for those); READ_FILE's bytes are
 * exact.
 */
#ifndef OFFERD_COMMON_FILES_H
#define OFFERD_COMMON_FILES_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "mesos/v1/mesos.pb-c.h"

struct http_server;
struct files;

/* Largest read per /files/read or READ_FILE call (Mesos: 16 pages). */
#define FILES_MAX_READ ((size_t)16 * 4096)
/* Largest file /files/download serves (413 past it). */
#define FILES_MAX_DOWNLOAD ((size_t)64 << 20)

/* Outcomes of files_resolve, as HTTP statuses. */
enum files_result {
    FILES_OK = 200,
    FILES_FORBIDDEN = 403,
    FILES_NOT_FOUND = 404,
};

/* An empty tree (nothing attached, base "/"). Free with files_free. */
struct files *files_new(void);
/* Free f and its attachments; NULL is fine. */
void files_free(struct files *f);

/* Attach the file or directory real (which must exist; canonicalized with
 * realpath) as the absolute virtual path vpath (a trailing '/' is dropped;
 * an earlier attachment of vpath is replaced). Returns 0, or -1 with a
 * one-line reason in err. */
int files_attach(struct files *f, const char *real, const char *vpath,
                 char *err, size_t errlen);
/* Take relative request paths under the virtual path vpath (copied). */
void files_set_base(struct files *f, const char *vpath);

/* Resolve the requested path as described above. On FILES_OK writes the
 * canonical real path into out; otherwise a one-line reason into err. */
enum files_result files_resolve(const struct files *f, const char *path,
                                char out[PATH_MAX], char *err, size_t errlen);

/* One /files/browse entry for a file whose stat is st, named vpath (the
 * requested path joined with the entry's name). New reference. */
json_t *files_entry_json(const char *vpath, const struct stat *st);

/* The same entry as a mesos.v1.FileInfo, every part malloc'd: free with
 * protobuf_c_message_free_unpacked(&fi->base, NULL). */
Mesos__V1__FileInfo *files_info_pb(const char *vpath, const struct stat *st);

/* A JSON string of len bytes with each byte that is not part of valid UTF-8
 * replaced by U+FFFD. New reference. */
json_t *files_text_json(const uint8_t *data, size_t len);

/* The owner's user name and the group name of st (their numbers when the
 * names are unknown) into user and group (ulen, glen bytes, cut to fit). */
void files_owner(const struct stat *st, char *user, size_t ulen, char *group,
                 size_t glen);

/* Called for each entry of a listing with its path (the requested path
 * joined with the entry's name) and its stat, both borrowed for the call. */
typedef void (*files_entry_fn)(const char *vpath, const struct stat *st,
                               void *arg);

/* List path as /files/browse does: fn(vpath, st, arg) for each entry, in
 * vpath order (none for a file). Returns 200, or 403 or 404 (an HTTP
 * status) with a one-line reason in err and no call of fn. Shared by
 * /files/browse and the operator APIs' LIST_FILES. */
int files_list(const struct files *f, const char *path, files_entry_fn fn,
               void *arg, char *err, size_t errlen);

/* Read path as /files/read does: up to length bytes (-1: to the end), at
 * most FILES_MAX_READ, from offset (-1 or at/after the end: nothing).
 * Returns 200 with the bytes in *data (OUT, malloc'd, caller frees; NULL
 * when none), their count in *len and the file's size in *size (OUT); or
 * 400 (a directory, not a regular file), 403, 404 or 500 with a one-line
 * reason in err. Shared by /files/read and READ_FILE. */
int files_read(const struct files *f, const char *path, int64_t offset,
               int64_t length, uint8_t **data, size_t *len, int64_t *size,
               char *err, size_t errlen);

/* Read all of path as /files/download does. Returns 200 with its bytes in
 * *data (OUT, malloc'd or NULL when empty) and *len; 413 when it is larger
 * than FILES_MAX_DOWNLOAD; otherwise files_read's statuses, with a reason
 * in err. */
int files_download(const struct files *f, const char *path, uint8_t **data,
                   size_t *len, char *err, size_t errlen);

/* LIST_FILES: files_list's entries as FileInfo messages (files_info_pb),
 * a malloc'd array in *infos (OUT; NULL when empty) of *n; the caller frees
 * each and the array (or hands them to a Response that does). Returns 200,
 * or 403 or 404 with a reason in err (nothing allocated). */
int files_list_pb(const struct files *f, const char *path,
                  Mesos__V1__FileInfo ***infos, size_t *n, char *err,
                  size_t errlen);

/* READ_FILE: files_read with the call's unsigned offset (past INT64_MAX:
 * past any end) and optional length (capped at FILES_MAX_READ). */
int files_read_call(const struct files *f, const char *path, uint64_t offset,
                    bool has_length, uint64_t length, uint8_t **data,
                    size_t *len, int64_t *size, char *err, size_t errlen);

/* {"<virtual path>": "<real path>", ...} (new reference). */
json_t *files_debug_json(const struct files *f);

/* Route /files/read, /files/browse and /files/debug on srv over f, which
 * must outlive srv's use. Returns 0, or -1 if a route is taken. */
int files_route(struct files *f, struct http_server *srv);

#endif
