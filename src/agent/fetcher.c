/*
 * The fetcher (see fetcher.h).
 *
 * agent_fetch_run and what it calls run in a task's supervisor: a forked
 * copy of the single-threaded agent that ends with _exit. They allocate
 * freely (the process is short-lived and leaves through _exit, so nothing
 * is checked for leaks there) but free what they allocate anyway, so that
 * the unit tests, which call them directly, stay leak-free.
 */
#include "agent/fetcher.h"

#include "agent/flags_launch.h"
#include "common/fs.h"
#include "common/mem.h"
#include "common/siphash.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- URIs ---- */

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

char *agent_fetch_uri_basename(const char *uri, char *err, size_t errlen)
{
    if (strpbrk(uri, "\\'") != NULL) {
        snprintf(err, errlen, "Illegal characters in URI");
        return NULL;
    }
    const char *sep = strstr(uri, "://");
    if (sep != NULL && sep - uri > 1) {
        const char *path = sep + 3;
        const char *slash = strchr(path, '/');
        if (slash == NULL || slash[1] == '\0') {
            snprintf(err, errlen, "Malformed URI (missing path): %s", uri);
            return NULL;
        }
        return xstrdup(strrchr(path, '/') + 1);
    }
    /* A path: its basename, trailing slashes ignored (stout's Path). */
    size_t len = strlen(uri);
    while (len > 1 && uri[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && uri[start - 1] != '/')
        start--;
    if (len == 0)
        return xstrdup(".");
    return xstrndup(uri + start, len - start);
}

int agent_fetch_check_output_file(const char *path, char *err, size_t errlen)
{
    if (path[0] == '\0') {
        snprintf(err, errlen, "URI output file path is empty");
        return -1;
    }
    if (path[0] == '/') {
        snprintf(err, errlen,
                 "URI output file must be within the sandbox directory");
        return -1;
    }
    /* Mesos leaves a TODO here; offerd refuses ".." so that the file stays
     * in the sandbox. */
    const char *p = path;
    while (*p != '\0') {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            snprintf(err, errlen,
                     "URI output file must be within the sandbox directory");
            return -1;
        }
        p += n;
        while (*p == '/')
            p++;
    }
    return 0;
}

int agent_fetch_source_of(const char *uri, const char *frameworks_home,
                          enum agent_fetch_source *src, char **path, char *err,
                          size_t errlen)
{
    if (has_prefix(uri, "http://") || has_prefix(uri, "https://") ||
        has_prefix(uri, "ftp://") || has_prefix(uri, "ftps://")) {
        *src = AGENT_FETCH_NET;
        return 0;
    }
    bool file_uri = has_prefix(uri, "file://");
    if (!file_uri && strstr(uri, "://") != NULL) {
        snprintf(err, errlen,
                 "Unsupported URI scheme (this agent fetches local paths, "
                 "file://, http://, https://, ftp:// and ftps://)");
        return -1;
    }
    const char *p = file_uri ? uri + 7 : uri;
    if (file_uri && has_prefix(p, "localhost"))
        p += 9;
    if (p[0] == '/') {
        *src = AGENT_FETCH_LOCAL;
        *path = xstrdup(p);
        return 0;
    }
    if (file_uri) {
        snprintf(err, errlen, "File URI only supports absolute paths");
        return -1;
    }
    if (frameworks_home == NULL || frameworks_home[0] == '\0') {
        snprintf(err, errlen,
                 "A relative path was passed for the resource but the Mesos "
                 "framework home was not specified. Please either provide "
                 "this config option or avoid using a relative path");
        return -1;
    }
    *src = AGENT_FETCH_LOCAL;
    *path = xasprintf("%s/%s", frameworks_home, p);
    return 0;
}

enum agent_fetch_archive agent_fetch_archive_kind(const char *name)
{
    static const char *const archives[] = {
        ".tar",     ".tgz", ".tar.gz", ".tbz2",
        ".tar.bz2", ".txz", ".tar.xz", ".zip",
    };
    for (size_t i = 0; i < sizeof(archives) / sizeof(archives[0]); i++)
        if (has_suffix(name, archives[i]))
            return AGENT_ARCHIVE_ARCHIVE;
    if (has_suffix(name, ".gz"))
        return AGENT_ARCHIVE_GZIP;
    return AGENT_ARCHIVE_NONE;
}

/* ---- Plans ---- */

void agent_fetch_plan_free(struct agent_fetch_plan *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++) {
        free(p->items[i].uri);
        free(p->items[i].output_file);
    }
    free(p->items);
    free(p->cache_dir);
    free(p->frameworks_home);
    free(p->user);
    free(p);
}

int agent_fetch_plan_build(const Mesos__V1__CommandInfo *cmd,
                           const struct agent_launch_flags *lf,
                           const char *cache_dir, const char *user,
                           struct agent_fetch_plan **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    if (cmd == NULL || cmd->n_uris == 0)
        return 0;
    for (size_t i = 0; i < cmd->n_uris; i++) {
        const Mesos__V1__CommandInfo__URI *u = cmd->uris[i];
        const char *v = u->value != NULL ? u->value : "";
        /* Mesos trims leading white space. */
        v += strspn(v, " \t\n\r\f\v");
        char *base = agent_fetch_uri_basename(v, err, errlen);
        if (base == NULL)
            return -1;
        free(base);
        if (v[0] == '\0') {
            snprintf(err, errlen, "URI is empty");
            return -1;
        }
        if (u->output_file != NULL &&
            agent_fetch_check_output_file(u->output_file, err, errlen) != 0)
            return -1;
    }
    struct agent_fetch_plan *p = xcalloc(1, sizeof(*p));
    p->items = xcalloc(cmd->n_uris, sizeof(*p->items));
    p->n = cmd->n_uris;
    for (size_t i = 0; i < cmd->n_uris; i++) {
        const Mesos__V1__CommandInfo__URI *u = cmd->uris[i];
        struct agent_fetch_item *it = &p->items[i];
        it->uri = xstrdup(u->value + strspn(u->value, " \t\n\r\f\v"));
        it->output_file =
            u->output_file != NULL ? xstrdup(u->output_file) : NULL;
        it->executable = u->has_executable && u->executable;
        it->extract = !u->has_extract || u->extract;
        it->cache = u->has_cache && u->cache;
    }
    p->cache_dir = xstrdup(cache_dir);
    p->cache_size = lf->fetcher_cache_size;
    p->stall_timeout_ns = lf->fetcher_stall_timeout_ns;
    p->frameworks_home =
        lf->frameworks_home != NULL ? xstrdup(lf->frameworks_home) : NULL;
    p->user = user != NULL ? xstrdup(user) : NULL;
    *out = p;
    return 0;
}

/* ---- Running a plan ---- */

static void logf_(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void logf_(int fd, const char *fmt, ...)
{
    if (fd < 0)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(buf) - 2)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    const char *s = buf;
    size_t left = (size_t)n;
    while (left > 0) {
        ssize_t w = write(fd, s, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        left -= (size_t)w;
    }
}

/* Copy src to dst (created or truncated, with src's permission bits). */
static int copy_file(const char *src, const char *dst, char *err, size_t errlen)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        snprintf(err, errlen, "Failed to open '%s': %s", src, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file", src);
        close(in);
        return -1;
    }
    int outfd =
        open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 0777);
    if (outfd < 0) {
        snprintf(err, errlen, "Failed to create '%s': %s", dst,
                 strerror(errno));
        close(in);
        return -1;
    }
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "Failed to read '%s': %s", src,
                     strerror(errno));
            rc = -1;
            break;
        }
        if (r == 0)
            break;
        const char *p = buf;
        while (r > 0) {
            ssize_t w = write(outfd, p, (size_t)r);
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                snprintf(err, errlen, "Failed to write '%s': %s", dst,
                         strerror(errno));
                rc = -1;
                break;
            }
            p += w;
            r -= w;
        }
        if (rc != 0)
            break;
    }
    close(in);
    if (close(outfd) != 0 && rc == 0) {
        snprintf(err, errlen, "Failed to write '%s': %s", dst, strerror(errno));
        rc = -1;
    }
    return rc;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
    return fwrite(ptr, size, nmemb, arg);
}

/* Download uri into dst with libcurl. */
static int download_net(const char *uri, const char *dst, int64_t stall_ns,
                        char *err, size_t errlen)
{
    FILE *f = fopen(dst, "we");
    if (f == NULL) {
        snprintf(err, errlen, "Failed to create '%s': %s", dst,
                 strerror(errno));
        return -1;
    }
    CURL *c = curl_easy_init();
    if (c == NULL) {
        fclose(f);
        snprintf(err, errlen, "Error downloading resource: curl_easy_init");
        return -1;
    }
    char cerr[CURL_ERROR_SIZE] = "";
    long stall_s = (long)((stall_ns + 999999999) / 1000000000);
    if (stall_s < 1)
        stall_s = 1;
    curl_easy_setopt(c, CURLOPT_URL, uri);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https,ftp,ftps");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_s);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, stall_s);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    CURLcode rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    bool write_failed = fclose(f) != 0;
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "Error downloading resource: %s",
                 cerr[0] != '\0' ? cerr : curl_easy_strerror(rc));
        return -1;
    }
    if (write_failed) {
        snprintf(err, errlen, "Failed to write '%s': %s", dst, strerror(errno));
        return -1;
    }
    bool ftp = has_prefix(uri, "ftp://") || has_prefix(uri, "ftps://");
    if (code != (ftp ? 226 : 200)) {
        snprintf(err, errlen,
                 "Error downloading resource, received %s return code %ld",
                 ftp ? "FTP" : "HTTP", code);
        return -1;
    }
    return 0;
}

/* Put the resource of uri at dst (download or copy). */
static int download(const struct agent_fetch_plan *p, const char *uri,
                    const char *dst, int log_fd, char *err, size_t errlen)
{
    enum agent_fetch_source src;
    char *path = NULL;
    if (agent_fetch_source_of(uri, p->frameworks_home, &src, &path, err,
                              errlen) != 0)
        return -1;
    if (src == AGENT_FETCH_NET) {
        logf_(log_fd, "Downloading resource from '%s' to '%s'", uri, dst);
        return download_net(uri, dst, p->stall_timeout_ns, err, errlen);
    }
    logf_(log_fd, "Copying resource from '%s' to '%s'", path, dst);
    int rc = copy_file(path, dst, err, errlen);
    free(path);
    return rc;
}

static int copy_data(struct archive *ar, struct archive *aw)
{
    for (;;) {
        const void *buf;
        size_t size;
        la_int64_t off;
        int r = archive_read_data_block(ar, &buf, &size, &off);
        if (r == ARCHIVE_EOF)
            return ARCHIVE_OK;
        if (r < ARCHIVE_OK)
            return r;
        r = (int)archive_write_data_block(aw, buf, size, off);
        if (r < ARCHIVE_OK)
            return r;
    }
}

/* Unpack path into dir (absolute) with libarchive. A lone .gz (gzip) is
 * read as one raw entry and written as dir/<its name without .gz>. Entries
 * may not leave dir (no "..", no absolute names, no writing through
 * symlinks). */
static int extract(const char *path, const char *dir, bool gzip, char *err,
                   size_t errlen)
{
    int rc = -1;
    char *raw_name = NULL;
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || chdir(dir) != 0) {
        snprintf(err, errlen, "Failed to extract archive '%s' to '%s': %s",
                 path, dir, strerror(errno));
        if (cwd >= 0)
            close(cwd);
        return -1;
    }
    struct archive *ar = archive_read_new();
    struct archive *aw = archive_write_disk_new();
    archive_read_support_filter_all(ar);
    if (gzip) {
        archive_read_support_format_raw(ar);
    } else {
        archive_read_support_format_tar(ar);
        archive_read_support_format_gnutar(ar);
        archive_read_support_format_zip(ar);
    }
    archive_write_disk_set_options(aw,
                                   ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                       ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                       ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                       ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
    const char *why = NULL;
    if (archive_read_open_filename(ar, path, 65536) != ARCHIVE_OK) {
        why = archive_error_string(ar);
        goto done;
    }
    if (gzip) {
        const char *slash = strrchr(path, '/');
        const char *base = slash != NULL ? slash + 1 : path;
        raw_name = xstrndup(base, strlen(base) - 3);
    }
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(ar, &e);
        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            why = archive_error_string(ar);
            break;
        }
        if (gzip) {
            archive_entry_set_pathname(e, raw_name);
            archive_entry_set_perm(e, 0644);
            archive_entry_set_filetype(e, AE_IFREG);
        }
        r = archive_write_header(aw, e);
        if (r < ARCHIVE_WARN) {
            why = archive_error_string(aw);
            break;
        }
        if (archive_entry_size(e) > 0 || gzip) {
            r = copy_data(ar, aw);
            if (r < ARCHIVE_WARN) {
                why = archive_error_string(aw) != NULL
                          ? archive_error_string(aw)
                          : archive_error_string(ar);
                break;
            }
        }
        if (archive_write_finish_entry(aw) < ARCHIVE_WARN) {
            why = archive_error_string(aw);
            break;
        }
    }
    if (why == NULL && archive_write_close(aw) != ARCHIVE_OK)
        why = archive_error_string(aw);
done:
    free(raw_name);
    if (why == NULL) {
        rc = 0;
    } else {
        snprintf(err, errlen, "Failed to extract archive '%s' to '%s': %s",
                 path, dir, why);
    }
    archive_read_free(ar);
    archive_write_free(aw);
    if (fchdir(cwd) != 0 && rc == 0) {
        snprintf(err, errlen, "fchdir: %s", strerror(errno));
        rc = -1;
    }
    close(cwd);
    return rc;
}

/* ---- The cache ---- */

void agent_fetch_cache_key(const char *user, const char *uri,
                           char key[AGENT_FETCH_KEY_SIZE])
{
    /* Two fixed keys: names must be the same in every agent process. */
    static const struct siphash_key k1 = {0x6f66666572642d66ULL,
                                          0x65746368657231ULL};
    static const struct siphash_key k2 = {0x63616368652d6b65ULL,
                                          0x792d74776f2d32ULL};
    char *s = xasprintf("%s\n%s", user != NULL ? user : "", uri);
    uint64_t h1 = siphash13(&k1, s, strlen(s));
    uint64_t h2 = siphash13(&k2, s, strlen(s));
    free(s);
    snprintf(key, AGENT_FETCH_KEY_SIZE, "c%016llx%016llx",
             (unsigned long long)h1, (unsigned long long)h2);
}

/* A cache entry's name: 'c' and 32 hex digits, nothing else. */
static bool is_entry_name(const char *name)
{
    if (name[0] != 'c' || strlen(name) != AGENT_FETCH_KEY_SIZE - 1)
        return false;
    return strspn(name + 1, "0123456789abcdef") == AGENT_FETCH_KEY_SIZE - 2;
}

struct cache_entry {
    char name[AGENT_FETCH_KEY_SIZE];
    uint64_t size;
    struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
    const struct cache_entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* True when fd is still the file at path: an evicter removes an entry's
 * lock file while holding it, so whoever waited on the old file must open
 * the new one. */
static bool lock_is_current(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* Remove the lock files of entries that are not in dir (left by fetches
 * that did not fit, failed, or by older agents), each only while nobody
 * holds it. */
static void remove_orphan_locks(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len != AGENT_FETCH_KEY_SIZE - 1 + 5 ||
            strcmp(de->d_name + len - 5, ".lock") != 0)
            continue;
        char name[AGENT_FETCH_KEY_SIZE];
        memcpy(name, de->d_name, AGENT_FETCH_KEY_SIZE - 1);
        name[AGENT_FETCH_KEY_SIZE - 1] = '\0';
        struct stat st;
        if (!is_entry_name(name) || fstatat(dirfd(d), name, &st, 0) == 0)
            continue;
        char *lock = xasprintf("%s/%s", dir, de->d_name);
        int fd = open(lock, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                lock_is_current(fd, lock) &&
                fstatat(dirfd(d), name, &st, 0) != 0)
                unlink(lock);
            close(fd);
        }
        free(lock);
    }
    closedir(d);
}

int agent_fetch_cache_make_room(const char *dir, uint64_t budget,
                                uint64_t incoming)
{
    if (incoming > budget)
        return -1;
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    struct cache_entry *v = NULL;
    size_t n = 0;
    uint64_t total = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_entry_name(de->d_name))
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        v = xreallocarray(v, n + 1, sizeof(*v));
        memcpy(v[n].name, de->d_name, AGENT_FETCH_KEY_SIZE);
        v[n].size = (uint64_t)st.st_size;
        v[n].mtime = st.st_mtim;
        total += v[n].size;
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(v, n, sizeof(*v), by_mtime);
    for (size_t i = 0; i < n && total + incoming > budget; i++) {
        /* An entry being copied out has its lock held: keep it. */
        char *lock = xasprintf("%s/%s.lock", dir, v[i].name);
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            free(lock);
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && lock_is_current(fd, lock)) {
            char *path = xasprintf("%s/%s", dir, v[i].name);
            if (unlink(path) == 0) {
                total -= v[i].size;
                /* Held, so nobody copies from it: the lock goes too. */
                unlink(lock);
            }
            free(path);
        }
        close(fd);
        free(lock);
    }
    free(v);
    remove_orphan_locks(dir);
    return total + incoming <= budget ? 0 : -1;
}

int agent_fetch_cache_reset(const char *dir, char *err, size_t errlen)
{
    if (fs_remove_tree(dir) != 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot clear the fetcher cache '%s': %s", dir,
                 strerror(errno));
        return -1;
    }
    return fs_mkdirs(dir, err, errlen);
}

static int lock_file(const char *path, char *err, size_t errlen)
{
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            snprintf(err, errlen, "Failed to open lock file '%s': %s", path,
                     strerror(errno));
            return -1;
        }
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                snprintf(err, errlen, "Failed to lock '%s': %s", path,
                         strerror(errno));
                close(fd);
                return -1;
            }
        }
        if (lock_is_current(fd, path))
            return fd;
        close(fd);
    }
}

/* Fetch a cached item's resource to dst: from the cache, or downloaded
 * into it first (or past it, when larger than the whole cache). */
static int fetch_cached(const struct agent_fetch_plan *p,
                        const struct agent_fetch_item *it, const char *dst,
                        int log_fd, char *err, size_t errlen)
{
    if (fs_mkdirs(p->cache_dir, err, errlen) != 0)
        return -1;
    char key[AGENT_FETCH_KEY_SIZE];
    agent_fetch_cache_key(p->user, it->uri, key);
    char *entry = xasprintf("%s/%s", p->cache_dir, key);
    char *lock = xasprintf("%s.lock", entry);
    char *tmp = xasprintf("%s.tmp", entry);
    char *glock = xasprintf("%s/.lock", p->cache_dir);
    int rc = -1;
    int lfd = lock_file(lock, err, errlen);
    if (lfd < 0)
        goto out;
    struct stat st;
    if (stat(entry, &st) == 0 && S_ISREG(st.st_mode)) {
        logf_(log_fd, "Fetching URI '%s' from cache", it->uri);
        (void)utimensat(AT_FDCWD, entry, NULL, 0); /* most recently used */
        rc = copy_file(entry, dst, err, errlen);
        goto out;
    }
    logf_(log_fd, "Fetching URI '%s' into the cache", it->uri);
    unlink(tmp);
    if (download(p, it->uri, tmp, log_fd, err, errlen) != 0) {
        unlink(tmp);
        goto out;
    }
    if (stat(tmp, &st) != 0) {
        snprintf(err, errlen, "'%s' vanished: %s", tmp, strerror(errno));
        goto out;
    }
    int gfd = lock_file(glock, err, errlen);
    if (gfd < 0) {
        unlink(tmp);
        goto out;
    }
    bool fits = agent_fetch_cache_make_room(p->cache_dir, p->cache_size,
                                            (uint64_t)st.st_size) == 0 &&
                rename(tmp, entry) == 0;
    close(gfd);
    if (fits) {
        rc = copy_file(entry, dst, err, errlen);
    } else {
        logf_(log_fd,
              "'%s' (%lld bytes) does not fit in the fetcher cache (%llu "
              "bytes): fetched directly",
              it->uri, (long long)st.st_size,
              (unsigned long long)p->cache_size);
        rc = copy_file(tmp, dst, err, errlen);
        unlink(tmp);
    }
out:
    if (lfd >= 0) {
        /* Nothing cached under this key (failed, or too big): no lock file
         * left behind either (a waiter sees it gone and opens a new one). */
        struct stat est;
        if (stat(entry, &est) != 0)
            unlink(lock);
        close(lfd);
    }
    free(entry);
    free(lock);
    free(tmp);
    free(glock);
    return rc;
}

/* Fetch one item into sandbox. */
static int fetch_one(const struct agent_fetch_plan *p,
                     const struct agent_fetch_item *it, const char *sandbox,
                     int log_fd, char *err, size_t errlen)
{
    char *name = it->output_file != NULL
                     ? xstrdup(it->output_file)
                     : agent_fetch_uri_basename(it->uri, err, errlen);
    if (name == NULL)
        return -1;
    char *dst = xasprintf("%s/%s", sandbox, name);
    int rc = -1;
    char *slash = strrchr(dst, '/');
    if (it->output_file != NULL && strchr(it->output_file, '/') != NULL) {
        *slash = '\0';
        char merr[256];
        int m = fs_mkdirs(dst, merr, sizeof(merr));
        *slash = '/';
        if (m != 0) {
            snprintf(err, errlen,
                     "Unable to create subdirectory in sandbox: %s", merr);
            goto out;
        }
    }
    if (it->cache) {
        if (fetch_cached(p, it, dst, log_fd, err, errlen) != 0)
            goto out;
    } else {
        logf_(log_fd, "Fetching '%s' directly into the sandbox directory",
              it->uri);
        if (download(p, it->uri, dst, log_fd, err, errlen) != 0)
            goto out;
    }
    if (it->executable) {
        if (chmod(dst, 0755) != 0) {
            snprintf(err, errlen, "Failed to chmod executable '%s': %s", dst,
                     strerror(errno));
            goto out;
        }
    } else if (it->extract) {
        enum agent_fetch_archive k = agent_fetch_archive_kind(dst);
        if (k == AGENT_ARCHIVE_NONE) {
            logf_(log_fd,
                  "Copying instead of extracting resource from URI with "
                  "'extract' flag, because it does not seem to be an "
                  "archive: %s",
                  it->uri);
        } else {
            if (extract(dst, sandbox, k == AGENT_ARCHIVE_GZIP, err, errlen) !=
                0)
                goto out;
            logf_(log_fd, "Extracted '%s' into '%s'", dst, sandbox);
        }
    }
    logf_(log_fd, "Fetched '%s' to '%s'", it->uri, dst);
    rc = 0;
out:
    free(name);
    free(dst);
    return rc;
}

int agent_fetch_run(const struct agent_fetch_plan *p, const char *sandbox,
                    int log_fd, char *err, size_t errlen)
{
    char why[1024];
    for (size_t i = 0; i < p->n; i++) {
        const struct agent_fetch_item *it = &p->items[i];
        if (fetch_one(p, it, sandbox, log_fd, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "Failed to fetch '%s': %s", it->uri, why);
            logf_(log_fd, "%s", err);
            return -1;
        }
    }
    logf_(log_fd, "Successfully fetched all URIs into '%s'", sandbox);
    return 0;
}
