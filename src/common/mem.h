/*
 * Allocation wrappers. Running out of memory is the process's own failure,
 * never a size a peer chose: these log and abort instead of returning NULL,
 * so callers need no error path for it. Sizes that come from the network must
 * be bounded before they reach here (see DESIGN.md, "Errors and bad input").
 */
#ifndef OFFERD_COMMON_MEM_H
#define OFFERD_COMMON_MEM_H

#include <stddef.h>

/* Allocate n bytes; never returns NULL (n == 0 yields a unique pointer). */
void *xmalloc(size_t n);
/* Allocate an array of count zeroed elements of size bytes; aborts on
 * overflow of count * size. */
void *xcalloc(size_t count, size_t size);
/* Resize p to n bytes; the old pointer is dead after the call. */
void *xrealloc(void *p, size_t n);
/* Resize p to count elements of size bytes, checking the product. */
void *xreallocarray(void *p, size_t count, size_t size);
/* Copy a NUL-terminated string; NULL in gives NULL out. */
char *xstrdup(const char *s);
/* Copy at most n bytes of s and NUL-terminate the copy. */
char *xstrndup(const char *s, size_t n);
/* Copy n bytes of memory. */
void *xmemdup(const void *p, size_t n);
/* printf into a new string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Calls to malloc, calloc and realloc the calling thread has made through
 * these wrappers since it started: tests take the difference around code
 * that should allocate nothing (the allocator's offer path). */
unsigned long long mem_allocations(void);

#endif
