/*
 * One-line reasons in caller buffers; see errbuf.h.
 */
#include "common/errbuf.h"

#include <stdio.h>

void errbuf_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err == NULL || errlen == 0)
        return;
    if (vsnprintf(err, errlen, fmt, ap) < 0)
        snprintf(err, errlen, "(the reason could not be formatted)");
    for (char *p = err; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

void errbuf_set(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errbuf_vset(err, errlen, fmt, ap);
    va_end(ap);
}
