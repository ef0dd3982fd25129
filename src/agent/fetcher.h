/*
 * The fetcher: puts a task's CommandInfo.uris into its sandbox before the
 * task starts, as Mesos's mesos-fetcher does (docs/fetcher.md in Mesos).
 *
 * The agent builds a plan (agent_fetch_plan_build: URIs validated, flags
 * copied) on its loop; the task's supervisor (supervisor.h), a child of
 * the agent, runs it (agent_fetch_run) in the sandbox before it forks the
 * task, so a slow download never holds the agent's event loop. Its log
 * lines go to the sandbox's stderr file, as Mesos's fetcher's do.
 *
 * Each URI is
 *   - a local path (absolute, or relative to --frameworks_home) or a
 *     file:// URI: copied;
 *   - an http://, https://, ftp:// or ftps:// URI: downloaded with libcurl
 *     (redirects followed; anything but HTTP 200 / FTP 226 fails; a
 *     download slower than one byte per second for --fetcher_stall_timeout
 *     is aborted);
 * into <sandbox>/<output_file>, or <sandbox>/<the URI's last path
 * component>. Then, with `executable`, the file is made executable (and
 * not extracted); else with `extract` (default true) an archive is
 * unpacked into the sandbox with libarchive (.tar, .tgz, .tar.gz, .tbz2,
 * .tar.bz2, .txz, .tar.xz, .zip; a lone .gz is decompressed next to it).
 *
 * With `cache`, the download lands first in the fetcher cache
 * (--fetcher_cache_dir, one file per (user, URI)) and is copied from there;
 * a later task of the same user fetching the same URI copies the cached
 * file without downloading. The cache holds at most --fetcher_cache_size
 * bytes: the least recently used files (by modification time, touched on
 * every hit) are evicted to make room; a file larger than the whole cache
 * is fetched directly. Concurrent fetches are safe: each entry has a lock
 * file (flock) held while it is downloaded or copied, eviction skips
 * entries whose lock is held, and the cache's own lock file serialises
 * eviction and insertion.
 */
#ifndef OFFERD_AGENT_FETCHER_H
#define OFFERD_AGENT_FETCHER_H

#include "mesos/v1/mesos.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_launch_flags;

/* One URI of a plan (strings owned). */
struct agent_fetch_item {
    char *uri;
    char *output_file; /* relative to the sandbox; NULL: the URI's basename */
    bool executable;
    bool extract;
    bool cache;
};

/* What a supervisor fetches. Everything is owned by the plan. */
struct agent_fetch_plan {
    struct agent_fetch_item *items;
    size_t n;
    char *cache_dir;          /* absolute */
    uint64_t cache_size;      /* bytes */
    int64_t stall_timeout_ns; /* > 0 */
    char *frameworks_home;    /* NULL: relative paths fail */
    char *user;               /* whose cache entries; NULL: the agent's */
};

/* Build the plan of cmd's URIs (*out NULL when it has none) with the
 * fetcher flags of lf, cache_dir (the effective --fetcher_cache_dir) and
 * the task's user (NULL: the agent's). Returns 0, or -1 with Mesos's
 * one-line reason in err for an invalid URI or output_file (nothing
 * allocated). */
int agent_fetch_plan_build(const Mesos__V1__CommandInfo *cmd,
                           const struct agent_launch_flags *lf,
                           const char *cache_dir, const char *user,
                           struct agent_fetch_plan **out, char *err,
                           size_t errlen);

/* Free a plan; NULL is ignored. */
void agent_fetch_plan_free(struct agent_fetch_plan *p);

/* Fetch every item of p into sandbox (absolute), in order, writing log
 * lines to log_fd (-1: none). Meant for the supervisor, a single-threaded
 * child. Returns 0, or -1 with "Failed to fetch '<uri>': <reason>" in err
 * (what was fetched before stays). */
int agent_fetch_run(const struct agent_fetch_plan *p, const char *sandbox,
                    int log_fd, char *err, size_t errlen);

/* Empty the cache directory (remove and re-create it), as Mesos's agent
 * does at start. Returns 0, or -1 with a reason in err. */
int agent_fetch_cache_reset(const char *dir, char *err, size_t errlen);

/* ---- Parts, exposed for tests ---- */

/* The file name a URI lands under: its last path component (for
 * scheme://host/path URIs, after the host). Mesos's Fetcher::basename.
 * Returns a new string, or NULL with a reason in err ("Illegal characters
 * in URI", "Malformed URI (missing path): ..."). */
char *agent_fetch_uri_basename(const char *uri, char *err, size_t errlen);

/* Check an output_file: not empty, not absolute, no ".." component.
 * Returns 0, or -1 with a reason in err. */
int agent_fetch_check_output_file(const char *path, char *err, size_t errlen);

/* Where a URI comes from. */
enum agent_fetch_source {
    AGENT_FETCH_LOCAL, /* a path or file:// */
    AGENT_FETCH_NET,   /* http, https, ftp, ftps */
};

/* Classify uri; for a local one, *path (OUT, new string) is the file to
 * copy (a relative path joined to frameworks_home). Returns 0, or -1 with
 * Mesos's reason in err (an unsupported scheme, a relative file:// path,
 * a relative path without --frameworks_home). */
int agent_fetch_source_of(const char *uri, const char *frameworks_home,
                          enum agent_fetch_source *src, char **path, char *err,
                          size_t errlen);

/* What extraction a file name calls for. */
enum agent_fetch_archive {
    AGENT_ARCHIVE_NONE,    /* not an archive: left as it is */
    AGENT_ARCHIVE_ARCHIVE, /* tar (any compression) or zip: unpacked */
    AGENT_ARCHIVE_GZIP,    /* a lone .gz: decompressed */
};
enum agent_fetch_archive agent_fetch_archive_kind(const char *name);

/* Size of a cache key, with its NUL. */
#define AGENT_FETCH_KEY_SIZE 34

/* The cache file name of (user, uri): 'c' and 32 hex digits. */
void agent_fetch_cache_key(const char *user, const char *uri,
                           char key[AGENT_FETCH_KEY_SIZE]);

/* Evict least recently used entries of the cache in dir until its files
 * and `incoming` more bytes fit in budget; entries whose lock is held are
 * skipped. Returns 0 when they fit, -1 when they cannot (incoming above
 * the budget, or too much is in use; nothing is evicted when incoming
 * alone is above the budget). */
int agent_fetch_cache_make_room(const char *dir, uint64_t budget,
                                uint64_t incoming);

#endif
