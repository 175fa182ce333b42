/*
 * strbuf.h — a growable, always NUL-terminated byte buffer.
 *
 * `buf` is never NULL after strbuf_init (it points at a shared empty string
 * until the first write), so a strbuf can be printed at any time. Bytes may
 * include NULs; `len` is authoritative.
 */
#ifndef AKA_BASE_STRBUF_H
#define AKA_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    size_t alloc;
    size_t len;
    char *buf;
};

extern char strbuf_empty[];
#define STRBUF_INIT                                                                                \
    {                                                                                              \
        0, 0, strbuf_empty                                                                         \
    }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it) and reset sb. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

/*
 * Append text for a terminal: whatever could move the cursor, recolour or
 * rewrite the screen, or forge another line is shown as an escape instead.
 * \n, \r and \t become those two characters, other C0 controls and DEL
 * \xNN, C1 controls (U+0080..U+009F) \u00NN, and bytes that are not part of
 * valid UTF-8 \xNN; all other UTF-8 text is kept as it is.
 */
void strbuf_add_escaped(struct strbuf *sb, const char *data, size_t len);
/* Length of the valid UTF-8 sequence at p (left > 0 bytes there), 0 when it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are not). */
size_t aka_utf8_len(const unsigned char *p, size_t left);
/* strbuf_add_escaped of the formatted text. */
void strbuf_addf_escaped(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Append the last line of text[0..len) that starts with prefix, less the prefix; NULL
 * prefix: the last line that is not empty. A line's trailing '\r' is not part of it.
 * Appends nothing when no line matches (the last word of a process's stderr). */
void strbuf_add_last_line(struct strbuf *sb, const char *text, size_t len, const char *prefix);

void strbuf_trim(struct strbuf *sb);
int strbuf_starts_with(const struct strbuf *sb, const char *prefix);

#endif
