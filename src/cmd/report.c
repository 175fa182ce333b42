/*
 * report.c — `aka report [WORKSPACE] [-o OUT] [--open] [--json]`: a campaign as
 * one self-contained HTML page, or a directory of campaigns as an index page
 * with one page per campaign.
 *
 * Parses flags and prints what was written; loading, rendering and writing
 * are report/'s (report.h). Read-only on the workspaces: it may run beside a
 * live supervisor.
 */
#include "report/report.h"
#include "base/fs.h"
#include "base/opts.h"
#include "cmd/cmd.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka report [WORKSPACE] [-o OUT] [--open] [--json]\n\n"
    "Write a campaign's report: one self-contained HTML file (inline CSS and SVG, no\n"
    "network, no server) that opens in any browser. Panels: latency and speedup over\n"
    "versions (hover a marker for the episode's summary and commit), per-shape speedup\n"
    "of the incumbent against V0 and V1, each verification's interval and ABBA runs\n"
    "against the promotion threshold, the roofline position of V0, V1 and the\n"
    "incumbent, tokens and time per episode and phase, and every episode's journal.\n"
    "A number no record carries is shown as \"\xe2\x80\x94\" or \"not recorded\".\n\n"
    "When WORKSPACE is not a workspace but a directory whose children are (a\n"
    "multi-framework dispatch's parent), OUT is a directory: OUT/index.html lists\n"
    "the campaigns (sortable) and links OUT/<child>.html, one page per child.\n"
    "Nothing is written inside a workspace.\n\n"
    "  WORKSPACE                     the campaign workspace or a directory of them\n"
    "                                (default: $ATREX_AKA_WORKSPACE, else the current\n"
    "                                directory when it holds .aka/campaign.json)\n";
static const char notes_text[] =
    "\nOUT defaults to ./<name>.html for a workspace and ./<name>-report/ for a\n"
    "directory of workspaces (<name>: the directory's last component).\n"
    "Exit status: 0 on success; 2 on a usage error, a missing workspace or a\n"
    "malformed record (one line naming the file and field; no file is written);\n"
    "1 when --open could not start a viewer. See docs/report.md.\n";

struct report_args {
    const char *ws, *out;
    struct strvec words; /* WORKSPACE */
    bool open, json;
};

#define OFF(f) offsetof(struct report_args, f)

static const struct aka_opt flags[] = {
    {.name = "--workspace", .off = OFF(ws), .metavar = "DIR", .help = "the same, as a flag"},
    {.name = "--output",
     .alias = "-o",
     .off = OFF(out),
     .metavar = "OUT",
     .help = "the file to write (a directory for an index; see below)"},
    {.name = "--open",
     .off = OFF(open),
     .kind = AKA_OPT_BOOL,
     .help = "open the written page with xdg-open"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print what was written as one JSON object"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct report_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"report", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a->words, .max_args = 1};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc == 0 && a->words.n && a->ws)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "report: %s: only one workspace may be given (WORKSPACE or --workspace)",
                           a->words.v[0]);
    if (rc == 0 && a->words.n)
        a->ws = a->words.v[0];
    return rc;
}

/* ./<last component of dir><suffix> */
static void default_out(const char *dir, const char *suffix, struct strbuf *out)
{
    struct strbuf copy = STRBUF_INIT;
    strbuf_addstr(&copy, dir);
    strbuf_addf(out, "%s%s", basename(copy.buf), suffix);
    strbuf_release(&copy);
}

static void print_written(const struct strvec *files, const char *index, size_t points, bool json)
{
    if (!json) {
        for (size_t i = 0; i < files->n; i++)
            printf("aka report: wrote %s\n", files->v[i]);
        return;
    }
    json_t *doc = json_pack("{s:s, s:o, s:s?, s:o}", "schema", "aka.report.v1", "files",
                            json_array(), "index", index, "latency_points",
                            index ? json_null() : json_integer((json_int_t)points));
    for (size_t i = 0; i < files->n; i++)
        json_array_append_new(json_object_get(doc, "files"), json_string(files->v[i]));
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("\n");
    json_decref(doc);
}

static int run(const struct report_args *a, struct strvec *files, struct aka_err *err)
{
    struct strvec kids = STRVEC_INIT;
    struct strbuf ws = STRBUF_INIT, out = STRBUF_INIT;
    size_t points = 0;
    bool index = a->ws && aka_report_is_index_dir(a->ws, &kids);
    int rc =
        index ? aka_realpath(a->ws, &ws, err) : aka_report_find_workspace(a->ws, true, &ws, err);
    if (rc == 0 && a->out)
        strbuf_addstr(&out, a->out);
    else if (rc == 0)
        default_out(ws.buf, index ? "-report" : ".html", &out);
    if (rc == 0 && index)
        rc = aka_report_write_index(ws.buf, out.buf, files, err);
    else if (rc == 0)
        rc = aka_report_write_one(ws.buf, out.buf, files, &points, err);
    if (rc == 0)
        print_written(files, index ? files->v[files->n - 1] : NULL, points, a->json);
    if (rc == 0 && a->open)
        rc = aka_report_open(files->v[files->n - 1], err);
    strvec_clear(&kids);
    strbuf_release(&ws);
    strbuf_release(&out);
    return rc;
}

int cmd_report(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct report_args a = {.words = STRVEC_INIT};
    struct strvec files = STRVEC_INIT;
    int rc = parse_args(argc, argv, &a, &err);
    (void)ctx;
    if (rc == 0)
        rc = run(&a, &files, &err);
    strvec_clear(&a.words);
    strvec_clear(&files);
    if (rc == 1)
        return 0;
    return rc < 0 ? aka_err_report(&err) : 0;
}
