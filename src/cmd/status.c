/*
 * status.c — `aka status [WORKSPACE] [--json]`: where a campaign stands.
 *
 * Parses flags, loads the workspace summary (report/report.h) and prints its
 * header lines and versions table, or one JSON object. Read-only: it may run
 * beside a live supervisor, so it takes no lock and writes nothing.
 */
#include "base/opts.h"
#include "cmd/cmd.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka status [WORKSPACE] [--json]\n\n"
    "Show where a campaign stands: operator, layout, framework, platform, mode,\n"
    "agent and isolation (from .aka/campaign.json); the incumbent (the latest\n"
    "version that moved HEAD) with its latency and speedup; budget counters\n"
    "(.aka/state.json) and why the campaign stopped; then one row per canonical\n"
    "version memory/v<N>.json: status, episode kind, commit, latency geomean in\n"
    "microseconds, speedup vs V0 (geomean over the shapes both measured) and the\n"
    "verification numbers a record carries (ABBA pairs, CI lower bound,\n"
    "dispersion). A number a record does not carry is shown as \"\xe2\x80\x94\".\n"
    "Nothing is written.\n\n"
    "  WORKSPACE                     the campaign workspace (default: $ATREX_AKA_WORKSPACE,\n"
    "                                else the current directory when it holds\n"
    "                                .aka/campaign.json)\n";
static const char notes_text[] =
    "\nExit status: 0 on success; 2 on a usage error, a missing workspace or a\n"
    "malformed file (one line naming the file and field). See docs/status.md.\n";

struct status_args {
    const char *ws;
    struct strvec words; /* WORKSPACE */
    bool json;
};

#define OFF(f) offsetof(struct status_args, f)

static const struct aka_opt flags[] = {
    {.name = "--workspace", .off = OFF(ws), .metavar = "DIR", .help = "the same, as a flag"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print one JSON object (schema aka.status.v1) instead"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct status_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"status", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a->words, .max_args = 1};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc == 0 && a->words.n && a->ws)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "status: %s: only one workspace may be given (WORKSPACE or --workspace)",
                           a->words.v[0]);
    if (rc == 0 && a->words.n)
        a->ws = a->words.v[0];
    return rc;
}

static int print_json(const struct aka_report *r)
{
    json_t *doc = aka_report_to_json(r);
    if (!doc) {
        fprintf(stderr, "aka status: could not render %s as JSON\n", r->workspace);
        return AKA_EXIT_FAILED;
    }
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("\n");
    json_decref(doc);
    return 0;
}

int cmd_status(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct status_args a = {.words = STRVEC_INIT};
    struct strbuf ws = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_report r;
    int rc = parse_args(argc, argv, &a, &err);
    (void)ctx;
    if (rc != 0) {
        strvec_clear(&a.words);
        return rc < 0 ? aka_err_report(&err) : 0;
    }
    if (aka_report_find_workspace(a.ws, true, &ws, &err) < 0 ||
        aka_report_load(ws.buf, &r, &err) < 0) {
        strbuf_release(&ws);
        strvec_clear(&a.words);
        return aka_err_report(&err);
    }
    if (a.json) {
        rc = print_json(&r);
    } else {
        aka_report_render_header(&r, &text);
        strbuf_addch(&text, '\n');
        aka_report_render_table(&r, &text);
        fwrite(text.buf, 1, text.len, stdout);
    }
    aka_report_release(&r);
    strbuf_release(&ws);
    strbuf_release(&text);
    strvec_clear(&a.words);
    return rc;
}
