/*
 * write.c — the files `aka report` writes: one workspace's page, or for a
 * directory of workspaces an index page and one page per child. Everything is
 * loaded and rendered before the first byte is written, so a malformed record
 * anywhere leaves no output file; each file is replaced atomically. Nothing is
 * written inside a workspace: only the output paths the caller names. Also
 * `--open`: the written page handed to the desktop's viewer.
 */
#include "base/fs.h"
#include "base/proc.h"
#include "report/internal.h"

#include <stdlib.h>
#include <string.h>

struct page {
    char *path; /* output file */
    struct strbuf html;
};

static int load_full(const char *ws, struct aka_report *r, struct aka_err *err)
{
    if (aka_report_load(ws, r, err) < 0)
        return -1;
    if (aka_report_load_episodes(r, err) < 0) {
        aka_report_release(r);
        return -1;
    }
    return 0;
}

static int write_pages(struct page *p, size_t n, struct strvec *written, struct aka_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (aka_write_file_atomic(p[i].path, p[i].html.buf, p[i].html.len, 0644, err) < 0)
            return -1;
        strvec_push(written, p[i].path);
    }
    return 0;
}

int aka_report_write_one(const char *ws, const char *out_file, struct strvec *written,
                         size_t *points, struct aka_err *err)
{
    struct aka_report r;
    struct page p = {.path = (char *)out_file, .html = STRBUF_INIT};
    if (load_full(ws, &r, err) < 0)
        return -1;
    aka_report_render_html(&r, &p.html);
    *points = aka_report_latency_points(&r);
    aka_report_release(&r);
    int rc = write_pages(&p, 1, written, err);
    strbuf_release(&p.html);
    return rc;
}

/* ---- a directory of workspaces ------------------------------------------- */

bool aka_report_is_index_dir(const char *dir, struct strvec *children)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    strvec_clear(children);
    aka_path_join(&p, dir, aka_ws_rel(AKA_WS_CAMPAIGN));
    if (aka_is_file(p.buf) || aka_list_dir(dir, &names, &ignored) < 0)
        names.n = 0;
    for (size_t i = 0; i < names.n; i++) {
        strbuf_reset(&p);
        aka_path_join(&p, dir, names.v[i]);
        strbuf_addf(&p, "/%s", aka_ws_rel(AKA_WS_CAMPAIGN));
        if (names.v[i][0] != '.' && aka_is_file(p.buf))
            strvec_push(children, names.v[i]);
    }
    strvec_clear(&names);
    strbuf_release(&p);
    return children->n > 0;
}

/* A child's file name as a relative link: every byte but [A-Za-z0-9._-] %-encoded. */
static void href_of(const char *name, struct strbuf *out)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-';
        if (plain)
            strbuf_addch(out, *c);
        else
            strbuf_addf(out, "%%%c%c", hex[*c >> 4], hex[*c & 15]);
    }
    strbuf_addstr(out, ".html");
}

static int load_children(const char *dir, const struct strvec *kids, struct aka_report *rs,
                         size_t *loaded, struct aka_err *err)
{
    struct strbuf ws = STRBUF_INIT;
    int rc = 0;
    for (*loaded = 0; rc == 0 && *loaded < kids->n; (*loaded)++) {
        strbuf_reset(&ws);
        aka_path_join(&ws, dir, kids->v[*loaded]);
        rc = load_full(ws.buf, &rs[*loaded], err);
        if (rc < 0)
            break;
    }
    strbuf_release(&ws);
    return rc;
}

static void render_all(const char *dir, const char *out_dir, const struct strvec *kids,
                       const struct aka_report *rs, struct page *pages)
{
    struct aka_report_index_row *rows = aka_xcalloc(kids->n, sizeof(*rows));
    struct strvec hrefs = STRVEC_INIT;
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < kids->n; i++) {
        strbuf_reset(&sb);
        href_of(kids->v[i], &sb);
        strvec_push(&hrefs, sb.buf);
        strbuf_reset(&sb);
        aka_path_join(&sb, out_dir, kids->v[i]);
        strbuf_addstr(&sb, ".html");
        pages[i] = (struct page){.path = strbuf_detach(&sb, NULL), .html = STRBUF_INIT};
        aka_report_render_html(&rs[i], &pages[i].html);
        rows[i] = (struct aka_report_index_row){kids->v[i], hrefs.v[i], &rs[i]};
    }
    aka_path_join(&sb, out_dir, "index.html");
    pages[kids->n] = (struct page){.path = strbuf_detach(&sb, NULL), .html = STRBUF_INIT};
    aka_report_render_index(dir, rows, kids->n, &pages[kids->n].html);
    strvec_clear(&hrefs);
    free(rows);
}

int aka_report_write_index(const char *dir, const char *out_dir, struct strvec *written,
                           struct aka_err *err)
{
    struct strvec kids = STRVEC_INIT;
    if (!aka_report_is_index_dir(dir, &kids))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: no child directory is a campaign workspace",
                           dir);
    struct aka_report *rs = aka_xcalloc(kids.n, sizeof(*rs));
    struct page *pages = aka_xcalloc(kids.n + 1, sizeof(*pages));
    size_t loaded = 0;
    int rc = load_children(dir, &kids, rs, &loaded, err);
    if (rc == 0) {
        render_all(dir, out_dir, &kids, rs, pages);
        rc = aka_mkdir_p(out_dir, 0755, err);
    }
    if (rc == 0)
        rc = write_pages(pages, kids.n + 1, written, err);
    for (size_t i = 0; i < kids.n + 1; i++) {
        free(pages[i].path);
        strbuf_release(&pages[i].html);
    }
    for (size_t i = 0; i < loaded; i++)
        aka_report_release(&rs[i]);
    free(pages);
    free(rs);
    strvec_clear(&kids);
    return rc;
}

int aka_report_open(const char *path, struct aka_err *err)
{
    const char *argv[] = {"xdg-open", path, NULL};
    struct proc_spec spec = {.argv = argv, .timeout_ms = 30000};
    struct proc_result res;
    proc_result_init(&res);
    int rc = proc_run(&spec, &res, err);
    if (rc == 0 && res.exit_code != 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "xdg-open %s exited %d", path, res.exit_code);
    proc_result_release(&res);
    if (rc < 0)
        err->code = AKA_EXIT_FAILED; /* the page is written; only the viewer failed */
    return rc;
}
