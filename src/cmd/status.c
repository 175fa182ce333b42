/*
 * status.c — `aka status [WORKSPACE] [--json]`: where a campaign stands.
 *
 * Parses flags, loads the workspace summary (report/report.h) and prints its
 * header lines and versions table, or one JSON object. Read-only: it may run
 * beside a live supervisor, so it takes no lock and writes nothing.
 */
#include "cmd/cmd.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: aka status [WORKSPACE] [--json]\n\n"
                 "Show where a campaign stands: operator, layout, framework, platform, mode,\n"
                 "agent and isolation (from .aka/campaign.json); the incumbent (the latest\n"
                 "version that moved HEAD) with its latency and speedup; budget counters\n"
                 "(.aka/state.json) and why the campaign stopped; then one row per canonical\n"
                 "version memory/v<N>.json: status, episode kind, commit, latency geomean in\n"
                 "microseconds, speedup vs V0 (geomean over the shapes both measured) and the\n"
                 "verification numbers a record carries (ABBA pairs, CI lower bound,\n"
                 "dispersion). A number a record does not carry is shown as \"\xe2\x80\x94\".\n"
                 "Nothing is written.\n\n"
                 "  WORKSPACE        the campaign workspace (default: $ATREX_AKA_WORKSPACE, else\n"
                 "                   the current directory when it holds .aka/campaign.json)\n"
                 "  --workspace DIR  the same, as a flag\n"
                 "  --json           print one JSON object (schema aka.status.v1) instead\n"
                 "  --help           show this help\n\n"
                 "Exit status: 0 on success; 2 on a usage error, a missing workspace or a\n"
                 "malformed file (one line naming the file and field). See docs/status.md.\n");
}

struct status_args {
    const char *ws;
    bool json, help;
};

static int set_ws(struct status_args *a, const char *v)
{
    if (a->ws) {
        fprintf(stderr, "aka status: %s: only one workspace may be given\n", v);
        return -1;
    }
    a->ws = v;
    return 0;
}

static int unknown(const char *s)
{
    fprintf(stderr, "aka status: %s: %s (see aka status --help)\n", s,
            strcmp(s, "--workspace") == 0 ? "expected a directory after it" : "unknown argument");
    return -1;
}

static int parse_args(int argc, char **argv, struct status_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0)
            a->help = true;
        else if (strcmp(s, "--json") == 0)
            a->json = true;
        else if (strcmp(s, "--workspace") == 0 && i + 1 < argc)
            rc = set_ws(a, argv[++i]);
        else if (strncmp(s, "--workspace=", 12) == 0)
            rc = set_ws(a, s + 12);
        else if (s[0] != '-')
            rc = set_ws(a, s);
        else
            rc = unknown(s);
        if (rc < 0)
            return -1;
    }
    return 0;
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
    struct status_args a = {0};
    struct strbuf ws = STRBUF_INIT, text = STRBUF_INIT;
    struct aka_report r;
    int rc = 0;
    (void)ctx;
    if (parse_args(argc, argv, &a) < 0)
        return AKA_EXIT_USAGE;
    if (a.help) {
        usage(stdout);
        return 0;
    }
    if (aka_report_find_workspace(a.ws, true, &ws, &err) < 0 ||
        aka_report_load(ws.buf, &r, &err) < 0) {
        strbuf_release(&ws);
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
    return rc;
}
