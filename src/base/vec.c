/*
 * vec.c — the string vector (see vec.h); the generic VEC is macros only.
 */
#include "base/vec.h"
#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

void strvec_push(struct strvec *sv, const char *s)
{
    /* Keep room for the terminating NULL so sv->v is always a valid argv. */
    VEC_GROW(*sv, sv->n + 2);
    sv->v[sv->n++] = aka_xstrdup(s);
    sv->v[sv->n] = NULL;
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    VEC_GROW(*sv, sv->n + 2);
    sv->v[sv->n++] = strbuf_detach(&sb, NULL);
    sv->v[sv->n] = NULL;
}

void strvec_pushv(struct strvec *sv, const char *const *items)
{
    for (; items && *items; items++)
        strvec_push(sv, *items);
}

void strvec_clear(struct strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->alloc = 0;
}

long strvec_find(const struct strvec *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strcmp(sv->v[i], s) == 0)
            return (long)i;
    return -1;
}
