/*
 * The agent's /files endpoints over the task sandboxes, as Mesos's:
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
 *
 * Paths: absolute paths under the sandboxes root (as /state shows them), or
 * paths relative to that root. Confinement (agent_files_resolve): ".", ".."
 * and repeated '/' are collapsed first, and a path that climbs above the
 * root is refused 403; an absolute path elsewhere is 404 (nothing of ours
 * is there); then the path is canonicalized with realpath and must still
 * lie under the root (a symlink leading out is refused 403); a missing file
 * is 404. (Mesos answers an escape with 400; offerd uses 403.)
 *
 * The data of /files/read is a JSON string: bytes that are not UTF-8 are
 * replaced by U+FFFD, so binary files do not read back exactly (Mesos's
 * /files/download, not served yet, is for those).
 */
#ifndef OFFERD_AGENT_FILES_H
#define OFFERD_AGENT_FILES_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct http_server;
struct agent_files;

/* Largest read per /files/read call (Mesos: 16 pages). */
#define AGENT_FILES_MAX_READ ((size_t)16 * 4096)

/* Outcomes of agent_files_resolve, as HTTP statuses. */
enum agent_files_result {
    AGENT_FILES_OK = 200,
    AGENT_FILES_FORBIDDEN = 403,
    AGENT_FILES_NOT_FOUND = 404,
};

/* Resolve the requested path against root (absolute and canonical, e.g.
 * from realpath) as described above. On AGENT_FILES_OK writes the canonical
 * path into out; otherwise a one-line reason into err. */
enum agent_files_result agent_files_resolve(const char *root, const char *path,
                                            char out[PATH_MAX], char *err,
                                            size_t errlen);

/* One /files/browse entry for a file whose stat is st, named vpath (the
 * requested path joined with the entry's name). New reference. */
json_t *agent_files_entry_json(const char *vpath, const struct stat *st);

/* A JSON string of len bytes with each byte that is not part of valid UTF-8
 * replaced by U+FFFD. New reference. */
json_t *agent_files_text_json(const uint8_t *data, size_t len);

/* The owner's user name and the group name of st (their numbers when the
 * names are unknown) into user and group (ulen, glen bytes, cut to fit). */
void agent_files_owner(const struct stat *st, char *user, size_t ulen,
                       char *group, size_t glen);

/* Called for each entry of a listing with its path (the requested path
 * joined with the entry's name) and its stat, both borrowed for the call. */
typedef void (*agent_files_entry_fn)(const char *vpath, const struct stat *st,
                                     void *arg);

/* List path under root as /files/browse does: fn(vpath, st, arg) for each
 * entry, in vpath order (none for a file). Returns 200, or 403 or 404 (an
 * HTTP status) with a one-line reason in err and no call of fn. Shared by
 * /files/browse and the operator API's LIST_FILES. */
int agent_files_list(const char *root, const char *path,
                     agent_files_entry_fn fn, void *arg, char *err,
                     size_t errlen);

/* Read path under root as /files/read does: up to length bytes (-1: to the
 * end), at most AGENT_FILES_MAX_READ, from offset (-1 or at/after the end:
 * nothing). Returns 200 with the bytes in *data (OUT, malloc'd, caller
 * frees; NULL when none), their count in *len and the file's size in *size
 * (OUT); or 400 (a directory, not a regular file), 403, 404 or 500 with a
 * one-line reason in err. Shared by /files/read and READ_FILE. */
int agent_files_read(const char *root, const char *path, int64_t offset,
                     int64_t length, uint8_t **data, size_t *len, int64_t *size,
                     char *err, size_t errlen);

/* Route /files/read and /files/browse on srv over root (copied; it must be
 * canonical). Returns the handler state, which must outlive srv's use and is
 * freed with agent_files_free; NULL if a route is taken. */
struct agent_files *agent_files_register(struct http_server *srv,
                                         const char *root);
void agent_files_free(struct agent_files *f);

#endif
