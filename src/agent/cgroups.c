/*
 * cgroups v1 and v2 for the agent's tasks (see cgroups.h).
 */
#include "agent/cgroups.h"

#include "common/fs.h"
#include "common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest cgroup file read (memory.stat is the longest, ~2 KB). */
#define CG_FILE_MAX (64 * 1024)
/* Rounds of "read cgroup.procs, SIGKILL each" when nothing freezes. */
#define KILL_ROUNDS 8
/* Reads of freezer.state while waiting for FROZEN. */
#define FREEZE_POLLS 200

static const char *const ctl_names[AGENT_CG_NCTL] = {"cpu", "cpuacct", "memory",
                                                     "pids", "freezer"};

const char *agent_cg_ctl_name(enum agent_cg_ctl c)
{
    return (unsigned)c < AGENT_CG_NCTL ? ctl_names[c] : "?";
}

const char *agent_cg_version_name(enum agent_cg_version v)
{
    switch (v) {
    case AGENT_CG_V1:
        return "v1";
    case AGENT_CG_V2:
        return "v2";
    default:
        return "none";
    }
}

/* ---- Parsing ---- */

/* True when the comma-separated list holds word. */
static bool list_has(const char *list, const char *word)
{
    size_t n = strlen(word);
    const char *p = list;
    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}

/* True when whitespace-separated text holds word. */
static bool words_have(const char *text, const char *word)
{
    size_t n = strlen(word);
    const char *p = text;
    while (p != NULL && *p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t len = strcspn(p, " \t\n");
        if (len == 0)
            break;
        if (len == n && strncmp(p, word, n) == 0)
            return true;
        p += len;
    }
    return false;
}

/* True unless /proc/cgroups says the controller is disabled. */
static bool ctl_enabled(const char *proc_cgroups, const char *name)
{
    if (proc_cgroups == NULL)
        return true;
    const char *line = proc_cgroups;
    while (*line != '\0') {
        const char *eol = strchr(line, '\n');
        size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);
        char buf[256];
        if (len < sizeof(buf) && line[0] != '#') {
            memcpy(buf, line, len);
            buf[len] = '\0';
            char sub[64];
            unsigned hier, num, en;
            if (sscanf(buf, "%63s %u %u %u", sub, &hier, &num, &en) == 4 &&
                strcmp(sub, name) == 0)
                return en != 0;
        }
        if (eol == NULL)
            break;
        line = eol + 1;
    }
    return true;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r != '\0'; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
            r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* One mountinfo line: "id parent maj:min root mountpoint opts [tags] -
 * fstype source superopts". */
static void parse_mount_line(char *line, struct agent_cg_hier *out,
                             const char *proc_cgroups)
{
    char *fields[16];
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " ", &save); tok != NULL && n < 16;
         tok = strtok_r(NULL, " ", &save))
        fields[n++] = tok;
    size_t dash = 0;
    for (size_t i = 6; i < n; i++)
        if (strcmp(fields[i], "-") == 0) {
            dash = i;
            break;
        }
    if (n < 5 || dash == 0 || dash + 3 > n)
        return;
    char *mnt = fields[4];
    unescape(mnt);
    if (strlen(mnt) >= AGENT_CG_PATH_MAX)
        return;
    const char *fstype = fields[dash + 1];
    const char *super = fields[dash + 3];
    if (strcmp(fstype, "cgroup2") == 0) {
        if (out->unified[0] == '\0')
            snprintf(out->unified, sizeof(out->unified), "%s", mnt);
        return;
    }
    if (strcmp(fstype, "cgroup") != 0)
        return;
    for (int c = 0; c < AGENT_CG_NCTL; c++)
        if (out->mount[c][0] == '\0' && list_has(super, ctl_names[c]) &&
            ctl_enabled(proc_cgroups, ctl_names[c]))
            snprintf(out->mount[c], sizeof(out->mount[c]), "%s", mnt);
}

void agent_cg_parse(const char *mountinfo, const char *proc_cgroups,
                    const char *v2_controllers, struct agent_cg_hier *out)
{
    memset(out, 0, sizeof(*out));
    const char *p = mountinfo;
    while (p != NULL && *p != '\0') {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
        if (len < 4096) {
            char line[4096];
            memcpy(line, p, len);
            line[len] = '\0';
            parse_mount_line(line, out, proc_cgroups);
        }
        p = eol != NULL ? eol + 1 : NULL;
    }
    if (out->mount[AGENT_CG_MEMORY][0] != '\0' &&
        out->mount[AGENT_CG_CPU][0] != '\0') {
        out->version = AGENT_CG_V1;
        return;
    }
    /* Not v1: forget partial v1 mounts, look at the unified hierarchy. */
    memset(out->mount, 0, sizeof(out->mount));
    if (out->unified[0] == '\0' || v2_controllers == NULL ||
        !words_have(v2_controllers, "memory") ||
        !words_have(v2_controllers, "cpu"))
        return;
    out->version = AGENT_CG_V2;
    for (int c = 0; c < AGENT_CG_NCTL; c++)
        if (c != AGENT_CG_CPUACCT && c != AGENT_CG_FREEZER &&
            words_have(v2_controllers, ctl_names[c]))
            snprintf(out->mount[c], sizeof(out->mount[c]), "%s", out->unified);
}

/* Read a small file as text (NUL-terminated); NULL when unreadable. */
static char *read_text(const char *path)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (fs_read(path, CG_FILE_MAX, &data, &len) != 1) {
        free(data);
        return NULL;
    }
    char *s = xmalloc(len + 1);
    memcpy(s, data, len);
    s[len] = '\0';
    free(data);
    return s;
}

/* /proc files are empty to stat: read them with plain reads. */
static char *read_proc(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 8192, len = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= 4 * 1024 * 1024)
                break;
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

void agent_cg_detect(struct agent_cg_hier *out)
{
    char *mi = read_proc("/proc/self/mountinfo");
    char *pc = read_proc("/proc/cgroups");
    struct agent_cg_hier h;
    agent_cg_parse(mi, pc, NULL, &h);
    char *ctls = NULL;
    if (h.version == AGENT_CG_NONE && h.unified[0] != '\0') {
        char path[AGENT_CG_PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/cgroup.controllers", h.unified);
        ctls = read_proc(path);
        agent_cg_parse(mi, pc, ctls, &h);
    }
    *out = h;
    free(ctls);
    free(mi);
    free(pc);
}

int agent_cg_parse_kv(const char *text, const char *key, uint64_t *out)
{
    size_t n = strlen(key);
    const char *p = text;
    while (p != NULL && *p != '\0') {
        if (strncmp(p, key, n) == 0 && (p[n] == ' ' || p[n] == '\t')) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(p + n + 1, &end, 10);
            if (errno != 0 || end == p + n + 1)
                return -1;
            *out = (uint64_t)v;
            return 0;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

int agent_cg_parse_limit(const char *text, uint64_t *out)
{
    while (*text == ' ')
        text++;
    if (strncmp(text, "max", 3) == 0 &&
        (text[3] == '\0' || text[3] == '\n' || text[3] == ' ')) {
        *out = 0;
        return 0;
    }
    if (*text < '0' || *text > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || !(*end == '\0' || *end == '\n' || *end == ' '))
        return -1;
    *out = v >= (1ULL << 62) ? 0 : (uint64_t)v;
    return 0;
}

void agent_cg_format_bytes(uint64_t b, char *out, size_t outlen)
{
    static const struct {
        uint64_t unit;
        const char *name;
    } units[] = {{1ULL << 40, "TB"},
                 {1ULL << 30, "GB"},
                 {1ULL << 20, "MB"},
                 {1ULL << 10, "KB"}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (b != 0 && b % units[i].unit == 0) {
            snprintf(out, outlen, "%" PRIu64 "%s", b / units[i].unit,
                     units[i].name);
            return;
        }
    snprintf(out, outlen, "%" PRIu64 "B", b);
}

uint64_t agent_cg_weight_of_shares(uint64_t shares)
{
    if (shares < 2)
        shares = 2;
    if (shares > 262144)
        shares = 262144;
    return 1 + ((shares - 2) * 9999) / 262142;
}

/* ---- Files ---- */

/* Write text to dir/file. Returns 0, or -1 with errno set. */
static int write_file(const char *dir, const char *file, const char *text)
{
    char path[AGENT_CG_PATH_MAX * 2 + 64];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* O_TRUNC as a shell's ">" does: harmless on cgroup files, and a
     * plain file (a test's fake hierarchy) then holds the last value. */
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t w;
    do {
        w = write(fd, text, len);
    } while (w < 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (w != (ssize_t)len) {
        errno = w < 0 ? e : EIO;
        return -1;
    }
    return 0;
}

static char *read_file(const char *dir, const char *file)
{
    char path[AGENT_CG_PATH_MAX * 2 + 64];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= sizeof(path))
        return NULL;
    return read_text(path);
}

static bool file_exists(const char *dir, const char *file)
{
    char path[AGENT_CG_PATH_MAX * 2 + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return access(path, F_OK) == 0;
}

/* ---- Root ---- */

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char e[256];
    if (fs_mkdirs(path, e, sizeof(e)) != 0) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    return 0;
}

/* v2: enable the controllers the hierarchy has in dir's subtree_control. */
static int enable_v2(const struct agent_cg_hier *h, const char *dir, char *err,
                     size_t errlen)
{
    static const enum agent_cg_ctl want[] = {AGENT_CG_CPU, AGENT_CG_MEMORY,
                                             AGENT_CG_PIDS};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (h->mount[want[i]][0] == '\0')
            continue;
        char text[32];
        snprintf(text, sizeof(text), "+%s", ctl_names[want[i]]);
        if (write_file(dir, "cgroup.subtree_control", text) != 0) {
            snprintf(err, errlen, "%s/cgroup.subtree_control: %s: %s", dir,
                     text, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static bool root_is_safe(const char *root)
{
    return root[0] != '\0' && root[0] != '/' && strstr(root, "..") == NULL &&
           strlen(root) < 128;
}

int agent_cg_prepare_root(const struct agent_cg_hier *h, const char *root,
                          char *err, size_t errlen)
{
    if (h->version == AGENT_CG_NONE) {
        snprintf(err, errlen,
                 "no cgroup hierarchy with the memory and cpu "
                 "controllers is mounted");
        return -1;
    }
    if (!root_is_safe(root)) {
        snprintf(err, errlen, "--cgroups_root '%s' is not a relative path",
                 root);
        return -1;
    }
    char dir[AGENT_CG_PATH_MAX + 160];
    if (h->version == AGENT_CG_V2) {
        if (enable_v2(h, h->unified, err, errlen) != 0)
            return -1;
        snprintf(dir, sizeof(dir), "%s/%s", h->unified, root);
        if (mkdir_p(dir, err, errlen) != 0)
            return -1;
        return enable_v2(h, dir, err, errlen);
    }
    for (int c = 0; c < AGENT_CG_NCTL; c++) {
        if (h->mount[c][0] == '\0')
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", h->mount[c], root);
        if (mkdir_p(dir, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* ---- One cgroup ---- */

struct agent_cgroup {
    enum agent_cg_version version;
    char *id;
    char *dir[AGENT_CG_NCTL];   /* NULL where the controller is absent */
    char *procs[AGENT_CG_NCTL]; /* cgroup.procs of each distinct dir */
    size_t nprocs;
};

static size_t distinct_dirs(const struct agent_cgroup *c,
                            const char *out[AGENT_CG_NCTL]);

struct agent_cgroup *agent_cg_open(const struct agent_cg_hier *h,
                                   const char *root, const char *id)
{
    if (h->version == AGENT_CG_NONE || !root_is_safe(root) || id[0] == '\0' ||
        strchr(id, '/') != NULL || strcmp(id, ".") == 0 ||
        strcmp(id, "..") == 0 || strlen(id) > 128)
        return NULL;
    struct agent_cgroup *c = xcalloc(1, sizeof(*c));
    c->version = h->version;
    c->id = xstrdup(id);
    for (int k = 0; k < AGENT_CG_NCTL; k++)
        if (h->mount[k][0] != '\0')
            c->dir[k] = xasprintf("%s/%s/%s", h->mount[k], root, id);
    const char *dirs[AGENT_CG_NCTL];
    c->nprocs = distinct_dirs(c, dirs);
    for (size_t i = 0; i < c->nprocs; i++)
        c->procs[i] = xasprintf("%s/cgroup.procs", dirs[i]);
    return c;
}

void agent_cg_free(struct agent_cgroup *c)
{
    if (c == NULL)
        return;
    for (int k = 0; k < AGENT_CG_NCTL; k++) {
        free(c->dir[k]);
        free(c->procs[k]);
    }
    free(c->id);
    free(c);
}

const char *agent_cg_id(const struct agent_cgroup *c)
{
    return c->id;
}

/* The distinct directories of c (co-mounted controllers and v2 share
 * one); returns how many. */
static size_t distinct_dirs(const struct agent_cgroup *c,
                            const char *out[AGENT_CG_NCTL])
{
    size_t n = 0;
    for (int k = 0; k < AGENT_CG_NCTL; k++) {
        if (c->dir[k] == NULL)
            continue;
        bool seen = false;
        for (size_t i = 0; i < n; i++)
            seen = seen || strcmp(out[i], c->dir[k]) == 0;
        if (!seen)
            out[n++] = c->dir[k];
    }
    return n;
}

int agent_cg_create(const struct agent_cgroup *c, char *err, size_t errlen)
{
    const char *dirs[AGENT_CG_NCTL];
    size_t n = distinct_dirs(c, dirs);
    for (size_t i = 0; i < n; i++)
        if (mkdir(dirs[i], 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create cgroup %s: %s", dirs[i],
                     strerror(errno));
            return -1;
        }
    return 0;
}

static const char *main_dir(const struct agent_cgroup *c)
{
    return c->dir[AGENT_CG_MEMORY];
}

bool agent_cg_exists(const struct agent_cgroup *c)
{
    struct stat st;
    return main_dir(c) != NULL && stat(main_dir(c), &st) == 0 &&
           S_ISDIR(st.st_mode);
}

static int set_u64(const char *dir, const char *file, uint64_t v, char *err,
                   size_t errlen)
{
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64, v);
    if (write_file(dir, file, text) != 0) {
        snprintf(err, errlen, "cannot write %s to %s/%s: %s", text, dir, file,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static int set_limits_v1(const struct agent_cgroup *c,
                         const struct agent_cg_limits *l, char *err,
                         size_t errlen)
{
    const char *cpu = c->dir[AGENT_CG_CPU];
    const char *mem = c->dir[AGENT_CG_MEMORY];
    const char *pids = c->dir[AGENT_CG_PIDS];
    if (cpu != NULL && l->cpu_shares > 0 &&
        set_u64(cpu, "cpu.shares", l->cpu_shares, err, errlen) != 0)
        return -1;
    if (cpu != NULL && l->cfs_quota_us > 0 &&
        (set_u64(cpu, "cpu.cfs_period_us", l->cfs_period_us, err, errlen) !=
             0 ||
         set_u64(cpu, "cpu.cfs_quota_us", l->cfs_quota_us, err, errlen) != 0))
        return -1;
    if (mem != NULL && l->mem_bytes > 0) {
        /* memsw must stay >= the memory limit: raise the memory limit
         * first only when it grows (a new cgroup's are unlimited). */
        if (set_u64(mem, "memory.limit_in_bytes", l->mem_bytes, err, errlen) !=
            0)
            return -1;
        bool memsw = file_exists(mem, "memory.memsw.limit_in_bytes");
        if (l->swap_off) {
            /* Swappiness 0 may be refused (use_hierarchy parents): the
             * memsw limit is what holds where swap accounting exists. */
            (void)write_file(mem, "memory.swappiness", "0");
            if (memsw && set_u64(mem, "memory.memsw.limit_in_bytes",
                                 l->mem_bytes, err, errlen) != 0)
                return -1;
        } else if (memsw && l->swap_bytes > 0 &&
                   set_u64(mem, "memory.memsw.limit_in_bytes",
                           l->mem_bytes + l->swap_bytes, err, errlen) != 0) {
            return -1;
        }
    }
    if (pids != NULL && l->pids_max > 0 &&
        set_u64(pids, "pids.max", l->pids_max, err, errlen) != 0)
        return -1;
    return 0;
}

static int set_limits_v2(const struct agent_cgroup *c,
                         const struct agent_cg_limits *l, char *err,
                         size_t errlen)
{
    const char *cpu = c->dir[AGENT_CG_CPU];
    const char *mem = c->dir[AGENT_CG_MEMORY];
    const char *pids = c->dir[AGENT_CG_PIDS];
    if (cpu != NULL && l->cpu_shares > 0 &&
        set_u64(cpu, "cpu.weight", agent_cg_weight_of_shares(l->cpu_shares),
                err, errlen) != 0)
        return -1;
    if (cpu != NULL && l->cfs_quota_us > 0) {
        char text[64];
        snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64, l->cfs_quota_us,
                 l->cfs_period_us);
        if (write_file(cpu, "cpu.max", text) != 0) {
            snprintf(err, errlen, "cannot write %s to %s/cpu.max: %s", text,
                     cpu, strerror(errno));
            return -1;
        }
    }
    if (mem != NULL && l->mem_bytes > 0) {
        if (set_u64(mem, "memory.max", l->mem_bytes, err, errlen) != 0)
            return -1;
        /* No swap controller (swap off in the kernel): nothing to limit. */
        if (file_exists(mem, "memory.swap.max")) {
            if (l->swap_off &&
                set_u64(mem, "memory.swap.max", 0, err, errlen) != 0)
                return -1;
            if (!l->swap_off && l->swap_bytes > 0 &&
                set_u64(mem, "memory.swap.max", l->swap_bytes, err, errlen) !=
                    0)
                return -1;
        }
    }
    if (pids != NULL && l->pids_max > 0 &&
        set_u64(pids, "pids.max", l->pids_max, err, errlen) != 0)
        return -1;
    return 0;
}

int agent_cg_set_limits(const struct agent_cgroup *c,
                        const struct agent_cg_limits *l, char *err,
                        size_t errlen)
{
    return c->version == AGENT_CG_V2 ? set_limits_v2(c, l, err, errlen)
                                     : set_limits_v1(c, l, err, errlen);
}

size_t agent_cg_procs_files(const struct agent_cgroup *c, const char **out,
                            size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < c->nprocs && k < max; i++)
        out[k++] = c->procs[i];
    return k;
}

int agent_cg_attach(const struct agent_cgroup *c, pid_t pid, char *err,
                    size_t errlen)
{
    const char *dirs[AGENT_CG_NCTL];
    size_t n = distinct_dirs(c, dirs);
    char text[32];
    snprintf(text, sizeof(text), "%d", (int)pid);
    for (size_t i = 0; i < n; i++)
        if (write_file(dirs[i], "cgroup.procs", text) != 0) {
            snprintf(err, errlen, "cannot move pid %d into %s: %s", (int)pid,
                     dirs[i], strerror(errno));
            return -1;
        }
    return 0;
}

/* ---- Statistics ---- */

static bool read_u64(const char *dir, const char *file, uint64_t *out)
{
    char *t = dir != NULL ? read_file(dir, file) : NULL;
    bool ok = t != NULL && agent_cg_parse_limit(t, out) == 0;
    free(t);
    return ok;
}

static bool kv(const char *text, const char *key, uint64_t *out)
{
    return text != NULL && agent_cg_parse_kv(text, key, out) == 0;
}

static uint32_t count_procs(const char *dir)
{
    char *t = dir != NULL ? read_file(dir, "cgroup.procs") : NULL;
    uint32_t n = 0;
    for (const char *p = t; p != NULL && *p != '\0'; p++)
        n += *p == '\n';
    free(t);
    return n;
}

static void stats_v1(const struct agent_cgroup *c, struct agent_cg_stats *s)
{
    const char *acct = c->dir[AGENT_CG_CPUACCT];
    long tck = sysconf(_SC_CLK_TCK);
    char *st = acct != NULL ? read_file(acct, "cpuacct.stat") : NULL;
    uint64_t u, sy;
    if (kv(st, "user", &u) && kv(st, "system", &sy) && tck > 0) {
        s->has_cpu = true;
        s->cpu_user_ns = u * (1000000000ULL / (uint64_t)tck);
        s->cpu_system_ns = sy * (1000000000ULL / (uint64_t)tck);
        if (!read_u64(acct, "cpuacct.usage", &s->cpu_usage_ns))
            s->cpu_usage_ns = s->cpu_user_ns + s->cpu_system_ns;
    }
    free(st);
    char *cs = c->dir[AGENT_CG_CPU] != NULL
                   ? read_file(c->dir[AGENT_CG_CPU], "cpu.stat")
                   : NULL;
    if (kv(cs, "nr_periods", &s->nr_periods) &&
        kv(cs, "nr_throttled", &s->nr_throttled) &&
        kv(cs, "throttled_time", &s->throttled_ns))
        s->has_throttle = true;
    free(cs);
    const char *mem = c->dir[AGENT_CG_MEMORY];
    if (read_u64(mem, "memory.usage_in_bytes", &s->mem_current)) {
        s->has_mem = true;
        (void)read_u64(mem, "memory.max_usage_in_bytes", &s->mem_peak);
        (void)read_u64(mem, "memory.limit_in_bytes", &s->mem_limit);
        char *ms = read_file(mem, "memory.stat");
        if (!kv(ms, "total_rss", &s->mem_anon))
            (void)kv(ms, "rss", &s->mem_anon);
        if (!kv(ms, "total_cache", &s->mem_file))
            (void)kv(ms, "cache", &s->mem_file);
        if (!kv(ms, "total_swap", &s->mem_swap))
            (void)kv(ms, "swap", &s->mem_swap);
        free(ms);
        char *oc = read_file(mem, "memory.oom_control");
        (void)kv(oc, "oom_kill", &s->oom_kills);
        free(oc);
    }
}

static void stats_v2(const struct agent_cgroup *c, struct agent_cg_stats *s)
{
    const char *dir = main_dir(c);
    char *cs = read_file(dir, "cpu.stat");
    uint64_t us, uu, su;
    if (kv(cs, "usage_usec", &us) && kv(cs, "user_usec", &uu) &&
        kv(cs, "system_usec", &su)) {
        s->has_cpu = true;
        s->cpu_usage_ns = us * 1000;
        s->cpu_user_ns = uu * 1000;
        s->cpu_system_ns = su * 1000;
    }
    uint64_t tu;
    if (kv(cs, "nr_periods", &s->nr_periods) &&
        kv(cs, "nr_throttled", &s->nr_throttled) &&
        kv(cs, "throttled_usec", &tu)) {
        s->has_throttle = true;
        s->throttled_ns = tu * 1000;
    }
    free(cs);
    if (read_u64(dir, "memory.current", &s->mem_current)) {
        s->has_mem = true;
        (void)read_u64(dir, "memory.peak", &s->mem_peak);
        (void)read_u64(dir, "memory.max", &s->mem_limit);
        (void)read_u64(dir, "memory.swap.current", &s->mem_swap);
        char *ms = read_file(dir, "memory.stat");
        (void)kv(ms, "anon", &s->mem_anon);
        (void)kv(ms, "file", &s->mem_file);
        free(ms);
        char *ev = read_file(dir, "memory.events");
        (void)kv(ev, "oom_kill", &s->oom_kills);
        free(ev);
    }
}

int agent_cg_stats(const struct agent_cgroup *c, struct agent_cg_stats *out)
{
    memset(out, 0, sizeof(*out));
    if (!agent_cg_exists(c))
        return -1;
    if (c->version == AGENT_CG_V2)
        stats_v2(c, out);
    else
        stats_v1(c, out);
    const char *pids = c->dir[AGENT_CG_PIDS];
    if (read_u64(pids, "pids.current", &out->pids_current)) {
        out->has_pids = true;
        (void)read_u64(pids, "pids.max", &out->pids_max);
    }
    out->nprocs = count_procs(main_dir(c));
    return 0;
}

/* ---- Destruction ---- */

/* SIGKILL every pid listed in dir/cgroup.procs; returns how many. */
static int kill_listed(const char *dir)
{
    char *t = read_file(dir, "cgroup.procs");
    int n = 0;
    for (char *p = t; p != NULL && *p != '\0';) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
            n++;
        p = end;
        while (*p == '\n')
            p++;
    }
    free(t);
    return n;
}

/* Freeze (true) or thaw a cgroup; returns true when it reached the state
 * (freezing is asynchronous: a bounded number of polls, then give up). */
static bool freeze(const struct agent_cgroup *c, bool on)
{
    if (c->version == AGENT_CG_V2) {
        const char *dir = main_dir(c);
        if (!file_exists(dir, "cgroup.freeze") ||
            write_file(dir, "cgroup.freeze", on ? "1" : "0") != 0)
            return false;
        for (int i = 0; on && i < FREEZE_POLLS; i++) {
            char *ev = read_file(dir, "cgroup.events");
            uint64_t frozen = 0;
            bool done = kv(ev, "frozen", &frozen) && frozen == 1;
            free(ev);
            if (done)
                return true;
            sched_yield();
        }
        return !on;
    }
    const char *dir = c->dir[AGENT_CG_FREEZER];
    if (dir == NULL ||
        write_file(dir, "freezer.state", on ? "FROZEN" : "THAWED") != 0)
        return false;
    for (int i = 0; on && i < FREEZE_POLLS; i++) {
        char *st = read_file(dir, "freezer.state");
        bool done = st != NULL && strncmp(st, "FROZEN", 6) == 0;
        free(st);
        if (done)
            return true;
        sched_yield();
    }
    return !on;
}

int agent_cg_kill_all(const struct agent_cgroup *c)
{
    const char *dir = main_dir(c);
    if (dir == NULL || !agent_cg_exists(c))
        return 0;
    if (c->version == AGENT_CG_V2 && file_exists(dir, "cgroup.kill")) {
        int n = (int)count_procs(dir);
        if (write_file(dir, "cgroup.kill", "1") == 0)
            return n;
    }
    /* v1: every hierarchy holds the same processes; the memory one is
     * enough to list them (the freezer's when the task joined it). */
    const char *list =
        c->dir[AGENT_CG_FREEZER] != NULL ? c->dir[AGENT_CG_FREEZER] : dir;
    bool frozen = freeze(c, true);
    int n = 0;
    for (int round = 0; round < (frozen ? 1 : KILL_ROUNDS); round++) {
        int k = kill_listed(list);
        n += k;
        if (k == 0)
            break;
    }
    if (frozen)
        (void)freeze(c, false);
    return n;
}

int agent_cg_remove(const struct agent_cgroup *c)
{
    int rc = 0;
    const char *dirs[AGENT_CG_NCTL];
    size_t n = distinct_dirs(c, dirs);
    for (size_t i = 0; i < n; i++) {
        if (rmdir(dirs[i]) == 0 || errno == ENOENT)
            continue;
        if (errno == EBUSY) {
            rc = rc < 0 ? rc : 1;
        } else {
            rc = -1;
        }
    }
    return rc;
}

size_t agent_cg_list(const struct agent_cg_hier *h, const char *root,
                     char **out, size_t max)
{
    const char *m = h->mount[AGENT_CG_MEMORY];
    if (m[0] == '\0' || !root_is_safe(root))
        return 0;
    char dir[AGENT_CG_PATH_MAX + 160];
    snprintf(dir, sizeof(dir), "%s/%s", m, root);
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR)
            continue;
        out[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    return n;
}
