/*
 * Leveled logging to stderr with a wall-clock timestamp, in the form
 *
 *     2026-11-30T10:52:27.123Z I master.c:42] listening on 127.0.0.1:5050
 *
 * (level letters D, I, W, E as glog's), and to a log file as well when one
 * is open (--log_dir). The level is set at start-up (--logging_level) and
 * for a while by operators (log_toggle.h); messages below it cost one
 * comparison.
 */
#ifndef OFFERD_COMMON_LOG_H
#define OFFERD_COMMON_LOG_H

#include <stddef.h>

enum log_level {
    LOG_LEVEL_DEBUG = 0,
    LOG_LEVEL_INFO = 1,
    LOG_LEVEL_WARNING = 2,
    LOG_LEVEL_ERROR = 3,
};

/* Set the lowest level written. */
void log_set_level(enum log_level level);
/* The lowest level written. */
enum log_level log_get_level(void);
/* Parse "DEBUG", "INFO", "WARNING" or "ERROR" (any case); 0 on success and
 * *out set, -1 on anything else. */
int log_parse_level(const char *name, enum log_level *out);
/* Also append every line to the file at path (created 0644 if missing,
 * opened O_APPEND), replacing any earlier log file. Returns 0, or -1 with a
 * one-line reason in err (stderr alone then). Call before other threads
 * log. */
int log_open_file(const char *path, char *err, size_t errlen);
/* Stop writing to the log file and close it (no file: nothing). */
void log_close_file(void);
/* Write one line; use the macros below instead. */
void log_write(enum log_level level, const char *file, int line,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define LOG_AT(lvl, ...)                                                       \
    do {                                                                       \
        if ((lvl) >= log_get_level())                                          \
            log_write((lvl), __FILE__, __LINE__, __VA_ARGS__);                 \
    } while (0)

#define log_debug(...) LOG_AT(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_info(...)  LOG_AT(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_warn(...)  LOG_AT(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_error(...) LOG_AT(LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
