/*
 * errbuf: writing a one-line reason into a caller's error buffer, the
 * "char *err, size_t errlen" out-parameter that offerd's parsers and
 * decoders fill and the HTTP edge turns into a 4xx reply unchanged.
 *
 * Every function here takes that pair as it is given: err may be NULL or
 * errlen 0 when the caller does not want the reason, and then nothing is
 * written. A reason longer than the buffer is cut (always NUL-terminated).
 * A reason often quotes what a peer sent, so control bytes (below 0x20, and
 * 0x7f) are written as '?': the reason stays on one line whatever the input.
 */
#ifndef OFFERD_COMMON_ERRBUF_H
#define OFFERD_COMMON_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Format a reason into err (errlen bytes, the NUL included), as above. If
 * the format itself fails (vsnprintf returns < 0), err holds a fixed reason
 * that says so instead. */
void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* errbuf_set with a va_list, for helpers that take "fmt, ...". ap is used
 * up as vsnprintf uses it. */
void errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
