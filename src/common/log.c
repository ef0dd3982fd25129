/*
 * Leveled logging: one line per message on stderr, written with a single
 * fwrite so lines from several processes sharing a terminal do not interleave
 * mid-line; and, when a log file is open, with a single write(2) to it
 * (O_APPEND: whole lines, even from several threads).
 */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static enum log_level current_level = LOG_LEVEL_INFO;
static int log_fd = -1; /* the log file, -1: none */

/* The level changes on the loop (log_toggle.h) while other threads (the
 * registry's worker) may log: relaxed atomics, no ordering needed. */
void log_set_level(enum log_level level)
{
    __atomic_store_n(&current_level, level, __ATOMIC_RELAXED);
}

enum log_level log_get_level(void)
{
    return __atomic_load_n(&current_level, __ATOMIC_RELAXED);
}

int log_parse_level(const char *name, enum log_level *out)
{
    static const struct {
        const char *name;
        enum log_level level;
    } names[] = {
        {"DEBUG", LOG_LEVEL_DEBUG},
        {"INFO", LOG_LEVEL_INFO},
        {"WARNING", LOG_LEVEL_WARNING},
        {"ERROR", LOG_LEVEL_ERROR},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(name, names[i].name) == 0) {
            *out = names[i].level;
            return 0;
        }
    }
    return -1;
}

int log_open_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    log_close_file();
    log_fd = fd;
    return 0;
}

void log_close_file(void)
{
    if (log_fd < 0)
        return;
    int fd = log_fd;
    log_fd = -1;
    close(fd);
}

void log_write(enum log_level level, const char *file, int line,
               const char *fmt, ...)
{
    static const char letters[] = "DIWE";
    char buf[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;

    int n = snprintf(
        buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %c %s:%d] ",
        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
        tm.tm_sec, ts.tv_nsec / 1000000, letters[level & 3], base, line);
    if (n < 0)
        return;
    size_t used = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + used, sizeof(buf) - used, fmt, ap);
    va_end(ap);
    if (m > 0)
        used +=
            (size_t)m < sizeof(buf) - used ? (size_t)m : sizeof(buf) - used - 1;
    /* Keep one line per message even when the text was truncated. */
    if (used >= sizeof(buf) - 1)
        used = sizeof(buf) - 2;
    buf[used++] = '\n';
    fwrite(buf, 1, used, stderr);
    if (log_fd >= 0) {
        ssize_t w;
        do
            w = write(log_fd, buf, used);
        while (w < 0 && errno == EINTR);
        (void)w; /* a full disk costs the file its lines, not the daemon */
    }
}
