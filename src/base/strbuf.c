/*
 * strbuf.c — growable byte buffer (see strbuf.h).
 */
#include "base/strbuf.h"
#include "base/error.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
    sb->alloc = 0;
    sb->len = 0;
    sb->buf = strbuf_empty;
    if (hint)
        strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
    if (sb->alloc)
        free(sb->buf);
    strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
    char *out;
    if (len)
        *len = sb->len;
    if (!sb->alloc)
        strbuf_grow(sb, 0);
    out = sb->buf;
    strbuf_init(sb, 0);
    return out;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
    size_t want = sb->len + extra + 1;
    if (want < sb->len)
        aka_xmalloc(SIZE_MAX); /* overflow: reported as out of memory */
    if (want <= sb->alloc)
        return;
    size_t n = sb->alloc ? sb->alloc : 64;
    while (n < want)
        n = n / 2 * 3 + 16;
    if (!sb->alloc) {
        sb->buf = aka_xmalloc(n);
        sb->buf[0] = '\0';
    } else {
        sb->buf = aka_xrealloc(sb->buf, n);
    }
    sb->alloc = n;
}

void strbuf_reset(struct strbuf *sb)
{
    strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
    if (!sb->alloc)
        return; /* only length 0 is possible without storage */
    sb->len = len < sb->alloc ? len : sb->alloc - 1;
    sb->buf[sb->len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
    strbuf_grow(sb, len);
    if (len)
        memcpy(sb->buf + sb->len, data, len);
    sb->len += len;
    sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
    strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
    char ch = (char)c;
    strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    strbuf_grow(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(sb, fmt, ap);
    va_end(ap);
}

void strbuf_trim(struct strbuf *sb)
{
    size_t start = 0, end = sb->len;
    while (end > 0 && isspace((unsigned char)sb->buf[end - 1]))
        end--;
    while (start < end && isspace((unsigned char)sb->buf[start]))
        start++;
    if (start)
        memmove(sb->buf, sb->buf + start, end - start);
    strbuf_setlen(sb, end - start);
}

int strbuf_starts_with(const struct strbuf *sb, const char *prefix)
{
    size_t n = strlen(prefix);
    return sb->len >= n && memcmp(sb->buf, prefix, n) == 0;
}
