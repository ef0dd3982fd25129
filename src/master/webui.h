/*
 * The web UI's static files, served by the master as Mesos's master serves
 * its UI: GET / is <webui_dir>/index.html, GET /static/<path> is
 * <webui_dir>/static/<path>. Files are read from disk on each request (they
 * are small; a new copy of the UI is picked up without a restart) and carry
 * an ETag and Last-Modified with "Cache-Control: no-cache", so a browser
 * revalidates and gets 304 Not Modified for what it has.
 *
 * Only GET and HEAD are served. A path with a segment that is empty or
 * starts with '.' ("..", hidden files), a NUL or a backslash is refused 403,
 * as is a path whose symbolic links lead out of webui_dir and anything that
 * is not a regular file (a directory, a FIFO: never opened blocking); a
 * missing file is 404; a malformed percent escape 400.
 */
#ifndef OFFERD_MASTER_WEBUI_H
#define OFFERD_MASTER_WEBUI_H

#include <stdbool.h>
#include <stddef.h>

struct http_server;
struct master_webui;

/* Largest file served (bytes); a larger one is refused 403. */
#define WEBUI_MAX_FILE ((size_t)8 << 20)

/* The default of --webui_dir: the installed copy (<datadir>/offerd/webui)
 * when it is a directory, else the source tree's webui/ (for a build-tree
 * run), both fixed when offerd is compiled. Borrowed, static. */
const char *master_webui_default_dir(void);

/* A file server over dir (copied; NULL: the default dir). Never fails: a dir
 * that does not exist is logged and every request is then a 404 saying so. Free
 * with master_webui_free. */
struct master_webui *master_webui_new(const char *dir);

/* Route GET / and GET /static/ of s to w (borrowed; must outlive s's
 * use). Returns 0, or -1 when a route is taken. */
int master_webui_route(struct master_webui *w, struct http_server *s);

/* NULL is ignored. */
void master_webui_free(struct master_webui *w);

/* The content type served for a file name, by its extension
 * ("application/octet-stream" for an unknown one). Static string. */
const char *master_webui_content_type(const char *name);

#endif
