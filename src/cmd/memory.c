/*
 * memory.c — `aka memory latest|show vN|list [--workspace DIR] [--json]`: the
 * canonical history of a campaign, for people and for agents (DESIGN §4.5).
 *
 * Parses flags and prints what report/report.h loads. Records are printed as
 * the pretty, key-sorted JSON the supervisor wrote. Read-only: an agent runs
 * this inside an episode, and reading history must never change it.
 */
#include "cmd/cmd.h"
#include "report/report.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: aka memory latest|show vN|list [--workspace DIR] [--json]\n\n"
                 "Read the canonical memory records memory/v<N>.json of a campaign.\n\n"
                 "  latest           print the record of the highest version that is not\n"
                 "                   masked (masked records are hidden from agents)\n"
                 "  show vN          print the record of version N (\"v3\" or \"3\")\n"
                 "  list             one line per version: version, status, quality gate,\n"
                 "                   commit, latency geomean, speedup vs V0, time, description\n"
                 "  --workspace DIR  the campaign workspace (default: $ATREX_AKA_WORKSPACE, else\n"
                 "                   the current directory when it holds .aka/campaign.json or\n"
                 "                   memory/)\n"
                 "  --json           list: print a JSON array; latest/show always print JSON\n"
                 "  --help           show this help\n\n"
                 "Nothing is written. Exit status: 0 on success; 1 when there is no record\n"
                 "yet; 2 on a usage error, a missing record or a malformed file (one line\n"
                 "naming the file and field). See docs/status.md.\n");
}

struct memory_args {
    const char *action, *version, *ws;
    bool json, help;
};

static int bad(const char *s, const char *why)
{
    fprintf(stderr, "aka memory: %s: %s (see aka memory --help)\n", s, why);
    return -1;
}

static int positional(struct memory_args *a, const char *s)
{
    if (!a->action)
        a->action = s;
    else if (strcmp(a->action, "show") == 0 && !a->version)
        a->version = s;
    else
        return bad(s, "unexpected argument");
    return 0;
}

static int check_action(const struct memory_args *a)
{
    if (!a->action)
        return bad("memory", "expected latest, show vN or list");
    if (strcmp(a->action, "latest") && strcmp(a->action, "show") && strcmp(a->action, "list"))
        return bad(a->action, "unknown action; expected latest, show vN or list");
    if (strcmp(a->action, "show") == 0 && !a->version)
        return bad("show", "expected a version such as v3");
    return 0;
}

static int parse_args(int argc, char **argv, struct memory_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0)
            a->help = true;
        else if (strcmp(s, "--json") == 0)
            a->json = true;
        else if (strcmp(s, "--workspace") == 0 && i + 1 < argc)
            a->ws = argv[++i];
        else if (strncmp(s, "--workspace=", 12) == 0)
            a->ws = s + 12;
        else if (s[0] != '-')
            rc = positional(a, s);
        else
            rc = bad(s, strcmp(s, "--workspace") == 0 ? "expected a directory after it"
                                                      : "unknown argument");
        if (rc < 0)
            return -1;
    }
    return a->help ? 0 : check_action(a);
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
    struct memory_args a = {0};
    struct strbuf ws = STRBUF_INIT;
    int rc;
    (void)ctx;
    if (parse_args(argc, argv, &a) < 0)
        return AKA_EXIT_USAGE;
    if (a.help) {
        usage(stdout);
        return 0;
    }
    rc = aka_report_find_workspace(a.ws, false, &ws, &err);
    if (rc == 0)
        rc = strcmp(a.action, "list") == 0 ? list(ws.buf, a.json, &err) : one(&a, ws.buf, &err);
    strbuf_release(&ws);
    return rc < 0 ? aka_err_report(&err) : 0;
}
