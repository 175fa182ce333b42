/*
 * csv.c — the CSV reader the profile parsers share (RFC 4180: quoted fields may
 * hold commas, doubled quotes and newlines). Profilers write plain CSV, but a
 * kernel's demangled name ("void f<float, 4>(float*, int)") is full of commas,
 * so splitting on commas would shift every column after it.
 */
#include "profile/internal.h"

#include <stdlib.h>
#include <string.h>

static void push_row(struct aka_csv *c, size_t line)
{
    if (c->rows.n == c->rows.alloc) {
        c->rows.alloc = c->rows.alloc ? 2 * c->rows.alloc : 16;
        c->rows.v = aka_xrealloc(c->rows.v, c->rows.alloc * sizeof(*c->rows.v));
    }
    struct aka_csv_row *r = &c->rows.v[c->rows.n++];
    r->line = line;
    r->fields = (struct strvec)STRVEC_INIT;
}

/* One field starting at *p; advances past it (not past the separator). */
static int field(const char *label, const char **p, const char *end, size_t *line,
                 struct strbuf *out, struct aka_err *err)
{
    const char *s = *p;
    size_t start = *line;
    strbuf_reset(out);
    if (s < end && *s == '"') {
        for (s++;; s++) {
            if (s >= end)
                return aka_err_set(err, AKA_EXIT_USAGE,
                                   "%s:%zu: unterminated quoted field (truncated export?)", label,
                                   start);
            if (*s == '"' && s + 1 < end && s[1] == '"')
                s++;
            else if (*s == '"')
                break;
            *line += *s == '\n';
            strbuf_addch(out, *s);
        }
        s++;
        if (s < end && *s != ',' && *s != '\n' && *s != '\r')
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s:%zu: text after a closing quote (expected ',' or end of line)",
                               label, *line);
    } else {
        while (s < end && *s != ',' && *s != '\n' && *s != '\r')
            strbuf_addch(out, *s++);
    }
    *p = s;
    return 0;
}

int aka_csv_parse(const char *label, const char *buf, size_t len, struct aka_csv *out,
                  struct aka_err *err)
{
    const char *p = buf, *end = buf + len;
    size_t line = 1;
    struct strbuf f = STRBUF_INIT;
    memset(out, 0, sizeof(*out));
    if (memchr(buf, '\0', len))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: binary data (expected a CSV export)", label);
    while (p < end) {
        if (*p == '\n' || *p == '\r') { /* blank line */
            line += *p == '\n';
            p++;
            continue;
        }
        push_row(out, line);
        for (;;) {
            if (field(label, &p, end, &line, &f, err) < 0) {
                strbuf_release(&f);
                aka_csv_release(out);
                return -1;
            }
            strvec_push(&out->rows.v[out->rows.n - 1].fields, f.buf);
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (p < end && *p == '\r')
            p++;
        if (p < end && *p == '\n') {
            p++;
            line++;
        }
    }
    strbuf_release(&f);
    return 0;
}

void aka_csv_release(struct aka_csv *c)
{
    for (size_t i = 0; i < c->rows.n; i++)
        strvec_clear(&c->rows.v[i].fields);
    free(c->rows.v);
    memset(c, 0, sizeof(*c));
}

long aka_csv_column(const struct aka_csv_row *header, const char *name)
{
    return strvec_find(&header->fields, name);
}
