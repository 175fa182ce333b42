/*
 * memory.c — `aka memory latest|show vN|list [--workspace DIR] [--json]`: the
 * canonical history of a campaign, for people and for agents (DESIGN §4.5).
 *
 * Parses flags and prints what report/report.h loads. Records are printed as
 * the pretty, key-sorted JSON the supervisor wrote. Read-only: an agent runs
 * this inside an episode, and reading history must never change it.
 */
#include "base/opts.h"
#include "cmd/cmd.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka memory latest|show vN|list [--workspace DIR] [--json]\n\n"
    "Read the canonical memory records memory/v<N>.json of a campaign.\n\n"
    "  latest                        print the record of the highest version that is not\n"
    "                                masked (masked records are hidden from agents)\n"
    "  show vN                       print the record of version N (\"v3\" or \"3\")\n"
    "  list                          one line per version: version, status, quality gate,\n"
    "                                commit, latency geomean, speedup vs V0, time,\n"
    "                                description\n";
static const char notes_text[] =
    "\nNothing is written. Exit status: 0 on success; 1 when there is no record\n"
    "yet; 2 on a usage error, a missing record or a malformed file (one line\n"
    "naming the file and field). See docs/status.md.\n";

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

struct memory_args {
    const char *action, *version, *ws;
    struct strvec words; /* the action and its version */
    bool json;
};

#define OFF(f) offsetof(struct memory_args, f)

static const struct aka_opt flags[] = {
    {.name = "--workspace",
     .off = OFF(ws),
     .metavar = "DIR",
     .help = "the campaign workspace (default: $ATREX_AKA_WORKSPACE, else the current "
             "directory when it holds .aka/campaign.json or memory/)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "list: print a JSON array; latest/show always print JSON"},
    {.name = NULL},
};

static int check_action(struct memory_args *a, struct aka_err *err)
{
    a->action = a->words.n ? a->words.v[0] : NULL;
    a->version = a->words.n > 1 ? a->words.v[1] : NULL;
    if (!a->action)
        return USAGE_ERROR(err, "memory: expected latest, show vN or list (see aka memory --help)");
    if (strcmp(a->action, "latest") && strcmp(a->action, "show") && strcmp(a->action, "list"))
        return USAGE_ERROR(err, "memory: %s: unknown action; expected latest, show vN or list",
                           a->action);
    if (strcmp(a->action, "show") == 0 && !a->version)
        return USAGE_ERROR(err, "memory: show: expected a version such as v3");
    if (strcmp(a->action, "show") != 0 && a->version)
        return USAGE_ERROR(err, "memory: '%s': unexpected argument (see aka memory --help)",
                           a->version);
    return 0;
}

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct memory_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"memory", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a->words, .max_args = 2};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    return rc == 0 ? check_action(a, err) : rc;
}

static void print_record(const struct aka_memory_record *m)
{
    json_dumpf(m->json, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("\n");
}

static int list(const char *ws, bool json, struct aka_err *err)
{
    struct aka_report r;
    struct strbuf text = STRBUF_INIT;
    if (aka_report_load_memory(ws, &r, err) < 0)
        return -1;
    if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < r.versions.n; i++)
            json_array_append_new(arr, aka_report_version_to_json(&r.versions.v[i]));
        json_dumpf(arr, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("\n");
        json_decref(arr);
    } else {
        aka_report_render_list(&r, &text);
        fwrite(text.buf, 1, text.len, stdout);
        if (!r.versions.n)
            fprintf(stderr, "aka memory: %s: no canonical version recorded yet\n", ws);
    }
    strbuf_release(&text);
    aka_report_release(&r);
    return 0;
}

static int one(const struct memory_args *a, const char *ws, struct aka_err *err)
{
    struct aka_memory_record m;
    long n = 0;
    if (strcmp(a->action, "show") == 0 && (n = aka_report_parse_version(a->version)) < 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "memory show: %s: expected a version such as v3 (no leading zeros)",
                           a->version);
    int rc = strcmp(a->action, "latest") == 0 ? aka_report_load_latest(ws, &m, err)
                                              : aka_report_load_record(ws, n, &m, err);
    if (rc == 0) {
        print_record(&m);
        aka_memory_release(&m);
    }
    return rc;
}

int cmd_memory(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct memory_args a = {.words = STRVEC_INIT};
    struct strbuf ws = STRBUF_INIT;
    int rc = parse_args(argc, argv, &a, &err);
    (void)ctx;
    if (rc == 0)
        rc = aka_report_find_workspace(a.ws, false, &ws, &err);
    if (rc == 0)
        rc = strcmp(a.action, "list") == 0 ? list(ws.buf, a.json, &err) : one(&a, ws.buf, &err);
    strbuf_release(&ws);
    strvec_clear(&a.words);
    return rc < 0 ? aka_err_report(&err) : 0;
}
