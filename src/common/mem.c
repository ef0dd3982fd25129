/*
 * Allocation wrappers: the one place that handles the process running out of
 * memory (log and abort), so that no caller needs an error path for it.
 */
#include "common/mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per thread, so that counting needs no atomics and threads do not race. */
static _Thread_local unsigned long long allocations;

unsigned long long mem_allocations(void)
{
    return allocations;
}

static void oom(size_t n)
{
    fprintf(stderr, "offerd: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    allocations++;
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        oom(n);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    if (count == 0 || size == 0)
        count = size = 1;
    allocations++;
    void *p = calloc(count, size);
    if (p == NULL)
        oom(count * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    allocations++;
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        oom(n);
    return q;
}

void *xreallocarray(void *p, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    return xrealloc(p, count * size);
}

char *xstrdup(const char *s)
{
    if (s == NULL)
        return NULL;
    return xmemdup(s, strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void *xmemdup(const void *p, size_t n)
{
    void *q = xmalloc(n);
    if (n > 0)
        memcpy(q, p, n);
    return q;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort(); /* only a bad format string gets here: a bug */
    char *s = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}
