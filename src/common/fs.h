/*
 * File-system helpers for the daemons' work_dirs (the master's, and the
 * agent's checkpoints, sandboxes and supervisor): mkdir -p, atomic durable file
 * replacement, bounded whole-file reads, and recursive removal. Plain POSIX
 * calls; nothing here touches the event loop, and the functions the supervisor
 * calls after fork (see supervisor.c) allocate nothing.
 */
#ifndef OFFERD_COMMON_FS_H
#define OFFERD_COMMON_FS_H

#include <stddef.h>
#include <stdint.h>

/* Create path and its missing parents (mode 0755). Returns 0 (also when it
 * exists as a directory), or -1 with a one-line reason in err. */
int fs_mkdirs(const char *path, char *err, size_t errlen);

/* Replace the file at path with len bytes of data, atomically and durably:
 * write "<path>.tmp", fsync it, rename it over path, fsync the directory.
 * A reader sees the old content or the new, never a mix. Allocates
 * nothing (safe after fork). Returns 0, or -1 with errno set (the
 * temporary file is removed). */
int fs_write_atomic(const char *path, const void *data, size_t len);

/* Read the whole file at path, at most max bytes, into a new buffer (*data,
 * NUL-terminated, not counted in *len; caller frees). Returns 1 when read, 0
 * when the file does not exist, -1 on another error or a file above max
 * (errno set: EFBIG for the latter). */
int fs_read(const char *path, size_t max, uint8_t **data, size_t *len);

/* Remove path and, if it is a directory, everything under it (symlinks are
 * removed, not followed). Missing paths are fine. Returns 0, or -1 if
 * something could not be removed. */
int fs_remove_tree(const char *path);

#endif
