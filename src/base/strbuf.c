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

size_t aka_utf8_len(const unsigned char *p, size_t left)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (!n || n > left || p[0] > 0xF4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) ||
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] > 0x8F))
        return 0;
    return n;
}

void strbuf_add_escaped(struct strbuf *sb, const char *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t n = aka_utf8_len(p + i, len - i);
        if (c == '\n' || c == '\r' || c == '\t')
            strbuf_addstr(sb, c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t");
        else if (n == 0 || c < 0x20 || c == 0x7F)
            strbuf_addf(sb, "\\x%02x", c);
        else if (n == 2 && c == 0xC2 && p[i + 1] < 0xA0) /* C1: U+0080..U+009F */
            strbuf_addf(sb, "\\u%04x", p[i + 1]);
        else
            strbuf_add(sb, p + i, n);
        i += n ? n : 1;
    }
}

void strbuf_addf_escaped(struct strbuf *sb, const char *fmt, ...)
{
    struct strbuf tmp = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&tmp, fmt, ap);
    va_end(ap);
    strbuf_add_escaped(sb, tmp.buf, tmp.len);
    strbuf_release(&tmp);
}

void strbuf_add_last_line(struct strbuf *sb, const char *text, size_t len, const char *prefix)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    const char *best = NULL;
    size_t best_len = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        size_t m = n > 0 && text[pos + n - 1] == '\r' ? n - 1 : n;
        if (prefix ? m >= plen && memcmp(text + pos, prefix, plen) == 0 : m > 0) {
            best = text + pos + plen;
            best_len = m - plen;
        }
        pos += n + 1;
    }
    if (best)
        strbuf_add(sb, best, best_len);
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
