/*
 * File-system helpers.
 */
#include "common/fs.h"

#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    int n = snprintf(buf, sizeof(buf), "%s", path);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        snprintf(err, errlen, "path too long: %s", path);
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", buf, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory", buf);
        return -1;
    }
    return 0;
}

/* fsync the directory holding path. */
static void sync_parent(const char *path)
{
    char dir[PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof(dir))
        return;
    memcpy(dir, path, len + 1);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        memcpy(dir, ".", 2);
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int fs_write_atomic(const char *path, const void *data, size_t len)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    sync_parent(path);
    return 0;
fail : {
    int saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
}
}

int fs_read(const char *path, size_t max, uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    size_t cap = 4096, have = 0;
    uint8_t *buf = xmalloc(cap + 1);
    for (;;) {
        if (have == cap) {
            /* Room for max + 1 bytes tells a file of max bytes from a
             * longer one. */
            if (cap > max) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return -1;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            buf = xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            free(buf);
            close(fd);
            errno = saved;
            return -1;
        }
        if (r == 0)
            break;
        have += (size_t)r;
    }
    close(fd);
    if (have > max) {
        free(buf);
        errno = EFBIG;
        return -1;
    }
    buf[have] = '\0';
    *data = buf;
    *len = have;
    return 1;
}

int fs_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    int rc = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d == NULL)
            return -1;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char *sub = xasprintf("%s/%s", path, de->d_name);
            if (fs_remove_tree(sub) != 0)
                rc = -1;
            free(sub);
        }
        closedir(d);
        if (rmdir(path) != 0 && errno != ENOENT)
            rc = -1;
    } else if (unlink(path) != 0 && errno != ENOENT) {
        rc = -1;
    }
    return rc;
}
