/*
 * render.c — the text forms of a report: `aka status` header lines, the
 * versions table, and `aka memory list` lines.
 *
 * Columns are padded by characters, not bytes, because the "—" that marks a
 * missing number and the "µ" in a heading are two bytes of UTF-8 each; byte
 * padding would shift every row that has one. Text that comes from records
 * (descriptions, reasons) is escaped onto one line: a record must not be able
 * to forge extra rows of the table nor send escape sequences to the terminal.
 */
#include "report/internal.h"

#include <string.h>

#define DASH      "\xe2\x80\x94" /* — */
#define DESC_MAX  72             /* characters of a description in `memory list` */
#define SHORT_OID 12

/* ---- cells --------------------------------------------------------------- */

static size_t width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80; /* count UTF-8 lead bytes only */
    return n;
}

/* Add s with control characters escaped, at most max characters ("…" when cut). */
static void add_clean(struct strbuf *sb, const char *s, size_t max)
{
    struct strbuf esc = STRBUF_INIT;
    size_t chars = 0;
    strbuf_add_escaped(&esc, s, strlen(s));
    for (const unsigned char *p = (const unsigned char *)esc.buf; *p; p++) {
        bool lead = (*p & 0xC0) != 0x80;
        if (lead && ++chars > max) {
            strbuf_addstr(sb, "\xe2\x80\xa6");
            break;
        }
        strbuf_addch(sb, *p);
    }
    strbuf_release(&esc);
}

static void push_clean(struct strvec *row, const char *s)
{
    struct strbuf sb = STRBUF_INIT;
    add_clean(&sb, s, DESC_MAX);
    strvec_push(row, sb.buf);
    strbuf_release(&sb);
}

static void add_num(struct strvec *row, double v, const char *fmt)
{
    char buf[64];
    if (!aka_measured(v)) {
        strvec_push(row, DASH);
        return;
    }
    snprintf(buf, sizeof(buf), fmt, v);
    strvec_push(row, buf);
}

static void add_speedup(struct strvec *row, const struct aka_report_version *v)
{
    if (!aka_measured(v->speedup_vs_v0) || v->speedup_shapes == v->speedup_of)
        add_num(row, v->speedup_vs_v0, "%.3fx");
    else /* say how many shapes the number rests on when not all of them */
        strvec_pushf(row, "%.3fx (%zu/%zu)", v->speedup_vs_v0, v->speedup_shapes, v->speedup_of);
}

static void add_commit(struct strvec *row, const char *oid)
{
    if (oid)
        strvec_pushf(row, "%.*s", SHORT_OID, oid);
    else
        strvec_push(row, DASH);
}

static void add_verification(struct strvec *row, const struct aka_report_verification *v)
{
    struct strbuf sb = STRBUF_INIT;
    if (!v->present) {
        strvec_push(row, DASH);
        return;
    }
    if (v->abba_pairs >= 0)
        strbuf_addf(&sb, "%lld ABBA pairs", v->abba_pairs);
    else
        strbuf_addstr(&sb, "ABBA pairs " DASH);
    if (aka_measured(v->ci_low_pct))
        strbuf_addf(&sb, ", CI low %+.2f%%", v->ci_low_pct);
    else
        strbuf_addstr(&sb, ", CI low " DASH);
    if (aka_measured(v->dispersion_pct))
        strbuf_addf(&sb, ", disp %.2f%%", v->dispersion_pct);
    else
        strbuf_addstr(&sb, ", disp " DASH);
    strvec_push(row, sb.buf);
    strbuf_release(&sb);
}

static void add_note(struct strvec *row, const struct aka_report_version *v)
{
    struct strbuf sb = STRBUF_INIT;
    if (v->carried_from)
        strbuf_addf(&sb, "measurement carried from %s", v->carried_from);
    if (v->rec.masked)
        strbuf_addf(&sb, "%smasked", sb.len ? "; " : "");
    strvec_push(row, sb.buf);
    strbuf_release(&sb);
}

/* ---- tables -------------------------------------------------------------- */

/* Rows of ncols cells (row-major in cells); right[c] right-aligns column c. */
static void emit(const struct strvec *cells, size_t ncols, const bool *right, struct strbuf *out)
{
    size_t w[16] = {0};
    for (size_t i = 0; i < cells->n; i++)
        if (width(cells->v[i]) > w[i % ncols])
            w[i % ncols] = width(cells->v[i]);
    for (size_t i = 0; i < cells->n; i++) {
        size_t col = i % ncols, pad = w[col] - width(cells->v[i]);
        if (col)
            strbuf_addstr(out, "  ");
        for (size_t k = 0; right[col] && k < pad; k++)
            strbuf_addch(out, ' ');
        strbuf_addstr(out, cells->v[i]);
        for (size_t k = 0; !right[col] && col + 1 < ncols && k < pad; k++)
            strbuf_addch(out, ' ');
        if (col + 1 == ncols) {
            while (out->len && out->buf[out->len - 1] == ' ')
                strbuf_setlen(out, out->len - 1);
            strbuf_addch(out, '\n');
        }
    }
}

void aka_report_render_table(const struct aka_report *r, struct strbuf *out)
{
    static const char *const heads[] = {
        "version", "status",       "kind", "commit", "latency \xc2\xb5s",
        "vs V0",   "verification", "note", NULL};
    static const bool right[] = {false, false, false, false, true, true, false, false};
    struct strvec cells = STRVEC_INIT;
    strvec_pushv(&cells, heads);
    for (size_t i = 0; i < r->versions.n; i++) {
        const struct aka_report_version *v = &r->versions.v[i];
        strvec_pushf(&cells, "v%ld", v->rec.version);
        strvec_push(&cells, aka_memory_status_names[v->rec.status]);
        push_clean(&cells, v->kind ? v->kind : DASH);
        add_commit(&cells, v->rec.git_commit_hash);
        add_num(&cells, v->latency_us, "%.3f");
        add_speedup(&cells, v);
        add_verification(&cells, &v->verify);
        add_note(&cells, v);
    }
    emit(&cells, 8, right, out);
    if (!r->versions.n)
        strbuf_addstr(out, "(no canonical version recorded yet)\n");
    strvec_clear(&cells);
}

void aka_report_render_list(const struct aka_report *r, struct strbuf *out)
{
    static const bool right[] = {false, false, false, false, true, true, false, false};
    struct strvec cells = STRVEC_INIT;
    for (size_t i = 0; i < r->versions.n; i++) {
        const struct aka_report_version *v = &r->versions.v[i];
        struct strbuf d = STRBUF_INIT;
        strvec_pushf(&cells, "v%ld", v->rec.version);
        strvec_push(&cells, aka_memory_status_names[v->rec.status]);
        strvec_push(&cells, v->rec.quality_gate);
        add_commit(&cells, v->rec.git_commit_hash);
        if (aka_measured(v->latency_us))
            strvec_pushf(&cells, "%.3f \xc2\xb5s", v->latency_us);
        else
            strvec_push(&cells, DASH);
        add_speedup(&cells, v);
        strvec_push(&cells, v->rec.timestamp);
        add_clean(&d, v->description ? v->description : "", DESC_MAX);
        if (v->rec.masked)
            strbuf_addstr(&d, d.len ? " [masked]" : "[masked]");
        strvec_push(&cells, d.buf);
        strbuf_release(&d);
    }
    emit(&cells, 8, right, out);
    strvec_clear(&cells);
}
