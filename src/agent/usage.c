/*
 * Task usage from /proc (see usage.h).
 */
#include "agent/usage.h"

#include "common/fs.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy at most AGENT_USAGE_MAX_FILE bytes of text into buf, NUL-terminated;
 * false when longer or holding a NUL. */
static bool copy_text(const char *text, size_t len,
                      char buf[AGENT_USAGE_MAX_FILE + 1])
{
    if (len > AGENT_USAGE_MAX_FILE || memchr(text, '\0', len) != NULL)
        return false;
    memcpy(buf, text, len);
    buf[len] = '\0';
    return true;
}

/* Read a signed decimal at *p (after single spaces), advance past it. */
static bool next_int(const char **p, long long *out)
{
    const char *s = *p;
    if (*s != ' ')
        return false;
    s++;
    if (!(*s == '-' || (*s >= '0' && *s <= '9')))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s)
        return false;
    *out = v;
    *p = end;
    return true;
}

/* Skip one space-separated field of any content. */
static bool skip_field(const char **p)
{
    const char *s = *p;
    if (*s != ' ')
        return false;
    s++;
    if (*s == ' ' || *s == '\0' || *s == '\n')
        return false;
    while (*s != ' ' && *s != '\0' && *s != '\n')
        s++;
    *p = s;
    return true;
}

static uint64_t nonneg(long long v)
{
    return v < 0 ? 0 : (uint64_t)v;
}

int agent_usage_parse_stat(const char *text, size_t len,
                           struct agent_proc_stat *out)
{
    char buf[AGENT_USAGE_MAX_FILE + 1];
    if (!copy_text(text, len, buf))
        return -1;
    /* "<pid> (<comm>) <state> <ppid> <pgrp> <session> <tty> <tpgid>
     *  <flags> <minflt> <cminflt> <majflt> <cmajflt> <utime> <stime>
     *  <cutime> <cstime> ..." */
    char *end;
    errno = 0;
    long pid = strtol(buf, &end, 10);
    if (errno != 0 || end == buf || pid <= 0 || pid > INT_MAX ||
        strncmp(end, " (", 2) != 0)
        return -1;
    const char *close = strrchr(end, ')');
    if (close == NULL)
        return -1;
    const char *p = close + 1;
    if (p[0] != ' ' || p[1] == '\0' || p[1] == ' ' || (p[2] != ' '))
        return -1;
    char state = p[1];
    p += 2;
    long long ppid, pgrp, session, utime, stime, cutime, cstime;
    if (!next_int(&p, &ppid) || !next_int(&p, &pgrp) || !next_int(&p, &session))
        return -1;
    for (int i = 0; i < 6; i++) /* tty_nr tpgid flags minflt cminflt majflt */
        if (!skip_field(&p))
            return -1;
    if (!skip_field(&p)) /* cmajflt */
        return -1;
    if (!next_int(&p, &utime) || !next_int(&p, &stime) ||
        !next_int(&p, &cutime) || !next_int(&p, &cstime))
        return -1;
    if (*p != ' ' && *p != '\n' && *p != '\0')
        return -1;
    if (pgrp < 0 || pgrp > INT_MAX || session < 0 || session > INT_MAX ||
        utime < 0 || stime < 0)
        return -1;
    (void)ppid;
    out->pid = (pid_t)pid;
    out->state = state;
    out->pgrp = (pid_t)pgrp;
    out->session = (pid_t)session;
    out->utime = (uint64_t)utime;
    out->stime = (uint64_t)stime;
    out->cutime = nonneg(cutime);
    out->cstime = nonneg(cstime);
    return 0;
}

int agent_usage_parse_statm(const char *text, size_t len, uint64_t *resident)
{
    char buf[AGENT_USAGE_MAX_FILE + 1];
    if (!copy_text(text, len, buf))
        return -1;
    char *end;
    errno = 0;
    unsigned long long size = strtoull(buf, &end, 10);
    if (errno != 0 || end == buf || buf[0] == '-' || *end != ' ')
        return -1;
    const char *s = end + 1;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long res = strtoull(s, &end, 10);
    if (errno != 0 || end == s || (*end != ' ' && *end != '\n' && *end != '\0'))
        return -1;
    (void)size;
    *resident = (uint64_t)res;
    return 0;
}

static int cmp_pid(const void *x, const void *y)
{
    pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;
    return (a > b) - (a < b);
}

struct leader {
    pid_t pid;
    size_t index; /* into out */
};

static int cmp_leader(const void *x, const void *y)
{
    return cmp_pid(&((const struct leader *)x)->pid,
                   &((const struct leader *)y)->pid);
}

static const struct leader *find_leader(const struct leader *v, size_t n,
                                        pid_t pid)
{
    struct leader key = {pid, 0};
    return bsearch(&key, v, n, sizeof(*v), cmp_leader);
}

/* Read <proc_root>/<name>/<file> into a new buffer; NULL when unreadable. */
static char *read_proc_file(const char *proc_root, const char *name,
                            const char *file, size_t *len)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s/%s", proc_root, name, file);
    if (n < 0 || (size_t)n >= sizeof(path))
        return NULL;
    uint8_t *data = NULL;
    if (fs_read(path, AGENT_USAGE_MAX_FILE, &data, len) != 1)
        return NULL;
    return (char *)data;
}

static bool is_pid_name(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int agent_usage_scan(const char *proc_root, const pid_t *leaders, size_t n,
                     struct agent_usage *out)
{
    memset(out, 0, n * sizeof(*out));
    DIR *d = opendir(proc_root);
    if (d == NULL)
        return -1;
    struct leader *lv = xcalloc(n ? n : 1, sizeof(*lv));
    for (size_t i = 0; i < n; i++) {
        lv[i].pid = leaders[i];
        lv[i].index = i;
    }
    qsort(lv, n, sizeof(*lv), cmp_leader);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_pid_name(de->d_name))
            continue;
        size_t len;
        char *text = read_proc_file(proc_root, de->d_name, "stat", &len);
        if (text == NULL)
            continue; /* gone meanwhile */
        struct agent_proc_stat ps;
        int rc = agent_usage_parse_stat(text, len, &ps);
        free(text);
        if (rc != 0)
            continue;
        const struct leader *l = find_leader(lv, n, ps.pgrp);
        if (l == NULL)
            l = find_leader(lv, n, ps.session);
        if (l == NULL)
            continue;
        struct agent_usage *u = &out[l->index];
        u->nprocs++;
        u->cpu_ticks += ps.utime + ps.stime + ps.cutime + ps.cstime;
        u->user_ticks += ps.utime + ps.cutime;
        u->system_ticks += ps.stime + ps.cstime;
        text = read_proc_file(proc_root, de->d_name, "statm", &len);
        uint64_t resident;
        if (text != NULL && agent_usage_parse_statm(text, len, &resident) == 0)
            u->rss_pages += resident;
        free(text);
    }
    closedir(d);
    free(lv);
    return 0;
}
