/*
 * du-style disk accounting (see disk_quota.h).
 */
#include "agent/disk_quota.h"

#include "agent/cgroups.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hard links already counted (inode numbers of multi-link files). */
struct seen {
    ino_t *v;
    size_t n, cap;
};

static bool seen_add(struct seen *s, ino_t ino)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == ino)
            return false;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = xreallocarray(s->v, s->cap, sizeof(*s->v));
    }
    s->v[s->n++] = ino;
    return true;
}

/* Add what dirfd holds; takes dirfd. */
static void walk(int dirfd, dev_t dev, int depth, struct seen *s, uint64_t *sum)
{
    DIR *d = fdopendir(dirfd);
    if (d == NULL) {
        close(dirfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (st.st_nlink > 1 && !S_ISDIR(st.st_mode) && !seen_add(s, st.st_ino))
            continue;
        *sum += (uint64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode) && st.st_dev == dev &&
            depth < AGENT_DU_MAX_DEPTH) {
            int fd = openat(dirfd, e->d_name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                walk(fd, dev, depth + 1, s, sum);
        }
    }
    closedir(d);
}

int agent_disk_usage(const char *dir, uint64_t *bytes)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    uint64_t sum = (uint64_t)st.st_blocks * 512;
    struct seen s = {0};
    walk(fd, st.st_dev, 1, &s, &sum);
    free(s.v);
    *bytes = sum;
    return 0;
}

bool agent_disk_over_quota(uint64_t used, uint64_t quota, char *msg,
                           size_t msglen)
{
    if (quota == 0 || used <= quota)
        return false;
    char u[32], q[32];
    agent_cg_format_bytes(used, u, sizeof(u));
    agent_cg_format_bytes(quota, q, sizeof(q));
    snprintf(msg, msglen, "Disk usage (%s) exceeds quota (%s)", u, q);
    return true;
}
