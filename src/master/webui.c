/*
 * The web UI's static file server (webui.h). Each request resolves its path
 * under the UI directory, checks it (no hidden or ".." segment, inside the
 * directory once symbolic links are resolved, a regular file of bounded
 * size) and answers the file with its validators, or 304 when the
 * browser's copy is current. Reading a small file blocks the loop for a
 * moment; the UI is a few files of some kilobytes.
 */
#include "master/webui.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/http.h"
#include "common/log.h"
#include "common/mem.h"

#ifndef OFFERD_WEBUI_INSTALLED
#define OFFERD_WEBUI_INSTALLED "/usr/local/share/offerd/webui"
#endif
#ifndef OFFERD_WEBUI_SOURCE
#define OFFERD_WEBUI_SOURCE "webui"
#endif

struct master_webui {
    char *dir;  /* as given */
    char *real; /* canonical dir, NULL when it does not exist */
};

const char *master_webui_default_dir(void)
{
    struct stat st;
    if (stat(OFFERD_WEBUI_INSTALLED, &st) == 0 && S_ISDIR(st.st_mode))
        return OFFERD_WEBUI_INSTALLED;
    return OFFERD_WEBUI_SOURCE;
}

struct master_webui *master_webui_new(const char *dir)
{
    struct master_webui *w = xmalloc(sizeof(*w));
    if (dir == NULL)
        dir = master_webui_default_dir();
    w->dir = xstrdup(dir);
    w->real = realpath(dir, NULL);
    if (w->real == NULL)
        log_warn("web UI directory %s: %s; / will answer 404", dir,
                 strerror(errno));
    return w;
}

void master_webui_free(struct master_webui *w)
{
    if (w == NULL)
        return;
    free(w->dir);
    free(w->real);
    free(w);
}

static const struct {
    const char *ext;
    const char *type;
} content_types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".map", "application/json"},
    {".woff2", "font/woff2"},
};

const char *master_webui_content_type(const char *name)
{
    const char *dot = strrchr(name, '.');
    const char *slash = strrchr(name, '/');
    if (dot != NULL && (slash == NULL || dot > slash)) {
        for (size_t i = 0; i < sizeof(content_types) / sizeof(content_types[0]);
             i++)
            if (strcasecmp(dot, content_types[i].ext) == 0)
                return content_types[i].type;
    }
    return "application/octet-stream";
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode in into out (n bytes). Returns 0, or -1 for a malformed
 * escape, an escaped NUL or a result that does not fit. */
static int pct_decode(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = in; *p != '\0'; p++) {
        char c = *p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
            if (lo < 0)
                return -1;
            c = (char)(hi * 16 + lo);
            if (c == '\0')
                return -1;
            p += 2;
        }
        if (k + 1 >= n)
            return -1;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

/* True when every '/'-separated segment of rel is a plain name: not empty,
 * not starting with '.', without a backslash. */
static bool rel_path_ok(const char *rel)
{
    const char *seg = rel;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t len = end != NULL ? (size_t)(end - seg) : strlen(seg);
        if (len == 0 || seg[0] == '.' || memchr(seg, '\\', len) != NULL)
            return false;
        if (end == NULL)
            return true;
        seg = end + 1;
    }
}

/* True when the browser's validators (If-None-Match, else
 * If-Modified-Since) match the file's. */
static bool not_modified(struct http_request *req, const char *etag,
                         const char *lastmod)
{
    const char *inm = http_request_header(req, "If-None-Match");
    if (inm != NULL)
        return strcmp(inm, "*") == 0 || strstr(inm, etag) != NULL;
    const char *ims = http_request_header(req, "If-Modified-Since");
    return ims != NULL && strcmp(ims, lastmod) == 0;
}

static void serve(struct master_webui *w, struct http_request *req,
                  const char *rel)
{
    if (w->real == NULL) {
        http_reply_error(req, 404, "the web UI is not installed (%s)", w->dir);
        return;
    }
    if (!rel_path_ok(rel)) {
        http_reply_error(req, 403, "path refused: %s", rel);
        return;
    }
    char full[PATH_MAX];
    int k = snprintf(full, sizeof(full), "%s/%s", w->real, rel);
    if (k < 0 || (size_t)k >= sizeof(full)) {
        http_reply_error(req, 404, "no such file: %s", rel);
        return;
    }
    char *resolved = realpath(full, NULL);
    if (resolved == NULL) {
        if (errno == ENOENT || errno == ENOTDIR)
            http_reply_error(req, 404, "no such file: %s", rel);
        else
            http_reply_error(req, 403, "cannot open %s: %s", rel,
                             strerror(errno));
        return;
    }
    size_t rlen = strlen(w->real);
    bool inside =
        strncmp(resolved, w->real, rlen) == 0 && resolved[rlen] == '/';
    /* Never block on a FIFO: opened non-blocking, refused below. */
    int fd = inside
                 ? open(resolved, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
                 : -1;
    free(resolved);
    if (!inside) {
        http_reply_error(req, 403, "path refused: %s leaves the web UI", rel);
        return;
    }
    if (fd < 0) {
        http_reply_error(req, 403, "cannot open %s: %s", rel, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        http_reply_error(req, 403, "not a regular file: %s", rel);
        return;
    }
    if ((size_t)st.st_size > WEBUI_MAX_FILE) {
        close(fd);
        http_reply_error(req, 403, "file too large to serve: %s", rel);
        return;
    }
    char etag[64], lastmod[64];
    snprintf(etag, sizeof(etag), "\"%llx-%llx-%lx\"",
             (unsigned long long)st.st_size,
             (unsigned long long)st.st_mtim.tv_sec,
             (unsigned long)st.st_mtim.tv_nsec);
    struct tm tm;
    time_t mt = st.st_mtim.tv_sec;
    if (gmtime_r(&mt, &tm) == NULL ||
        strftime(lastmod, sizeof(lastmod), "%a, %d %b %Y %H:%M:%S GMT", &tm) ==
            0)
        lastmod[0] = '\0';
    http_reply_header(req, "ETag", etag);
    if (lastmod[0] != '\0')
        http_reply_header(req, "Last-Modified", lastmod);
    http_reply_header(req, "Cache-Control", "no-cache");
    http_reply_header(req, "X-Content-Type-Options", "nosniff");
    if (not_modified(req, etag, lastmod)) {
        close(fd);
        http_reply(req, 304, NULL, NULL, 0);
        return;
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = xmalloc(size + 1);
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != size) {
        free(buf);
        http_reply_error(req, 500, "cannot read %s", rel);
        return;
    }
    http_reply(req, 200, master_webui_content_type(rel), buf, size);
    free(buf);
}

static void handle(struct http_request *req, void *arg)
{
    const char *path = http_request_path(req);
    if (strcmp(path, "/") == 0) {
        serve(arg, req, "index.html");
        return;
    }
    char rel[PATH_MAX];
    if (pct_decode(path + 1, rel, sizeof(rel)) != 0) {
        http_reply_error(req, 400, "malformed path: %s", path);
        return;
    }
    serve(arg, req, rel);
}

int master_webui_route(struct master_webui *w, struct http_server *s)
{
    if (http_server_route(s, "/", HTTP_GET, handle, w) != 0 ||
        http_server_route_prefix(s, "/static/", HTTP_GET, handle, w) != 0)
        return -1;
    return 0;
}
