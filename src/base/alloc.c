/*
 * alloc.c — the allocation wrappers declared in error.h (aka_xmalloc and kin):
 * out of memory ends aka with a message. A leaf: strbuf.c and vec.h build on it,
 * and error.c reports through strbuf.
 */
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "aka: out of memory allocating %zu bytes\n", n);
    abort();
}

void *aka_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *aka_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *aka_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *aka_xstrdup(const char *s)
{
    return aka_xstrndup(s, strlen(s));
}

char *aka_xstrndup(const char *s, size_t n)
{
    char *p = aka_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
