/*
 * wiki.c — `aka wiki query|show|check|import|plugins`: flag parsing and
 * printing only; everything else is in src/wiki/.
 */
#include "wiki/wiki.h"
#include "base/error.h"
#include "base/opts.h"
#include "base/strbuf.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wiki_args {
    struct aka_wiki_query q;
    struct aka_wiki_config cfg;
    const char *out, *name;
    bool json;
    struct strvec words; /* positional arguments */
};

static const char usage_main[] =
    "usage: aka wiki <command> [flags]\n\n"
    "The GPU wiki: hardware facts, techniques and pitfalls, each with its source.\n\n"
    "commands:\n"
    "  query TEXT   ranked search with scope filters (aka wiki query --help)\n"
    "  show ID      one record in full, with its attribution\n"
    "  check        validate every plugin and record; exit 1 on problems\n"
    "  import DIR   convert an upstream gpu-wiki store into a local plugin\n"
    "  plugins      list discovered plugins, fingerprints and skipped ones\n"
    "  cited        which records a campaign's episodes cited, and their outcomes\n"
    "  tool NAME    run a tool a plugin declares (pinned plugins only, in an episode)\n\n"
    "Plugins come from <repo-root>/runtime/plugins, $XDG_DATA_HOME/aka/plugins\n"
    "(default ~/.local/share/aka/plugins) and <workspace>/.aka-plugins.\n";

static const char usage_query[] =
    "usage: aka wiki query [TEXT...] [--vendor V] [--arch A] [--chip C] [--framework F]\n"
    "                      [--family F] [--kind K] [--limit N] [--json]\n\n"
    "Rank records by BM25 over title > tags > scope > body, keeping only those in\n"
    "scope. Spellings are folded: cute-dsl = cutedsl = CuteDSL, sm_90 = hopper,\n"
    "\"rms norm\" = rmsnorm, H200 = h200. Unknown filter values are errors that\n"
    "name the nearest valid value (exit 2); an empty result says which filter\n"
    "emptied it. Every result names its record id, plugin, file:line and source.\n\n";

static const char usage_show[] = "usage: aka wiki show ID [--json]\n\n"
                                 "Print one record in full with its attribution.\n\n";
static const char usage_check[] =
    "usage: aka wiki check [--json]\n\n"
    "Validate every discovered plugin afresh: manifests, record schema, sources,\n"
    "duplicate ids and dangling related ids. Exit 1 and list them on problems.\n\n";
static const char usage_import[] =
    "usage: aka wiki import DIR --out PLUGIN_DIR [--name NAME]\n\n"
    "Convert a store in upstream gpu-wiki format (kernel records clean-1.3,\n"
    "hardware records hw-1.0) into a plugin directory (default name: imported-wiki).\n"
    "Install it by copying PLUGIN_DIR into ~/.local/share/aka/plugins/ or\n"
    "<workspace>/.aka-plugins/.\n\n";
static const char usage_plugins[] = "usage: aka wiki plugins [--json]\n\n"
                                    "List discovered plugins with their fingerprints, and "
                                    "skipped ones with reasons.\n\n";

#define OFF(f) offsetof(struct wiki_args, f)
#define FILTER(flag, field, meta, text)                                                            \
    {                                                                                              \
        .name = flag, .off = OFF(q.field), .metavar = meta, .help = text                           \
    }

_Static_assert(AKA_WIKI_LIMIT_DEFAULT == 8, "--limit's default");

static const struct aka_opt query_flags[] = {
    FILTER("--vendor", vendor, "V", "nvidia, amd, cpu, generic (generic records always match)"),
    FILTER("--arch", arch, "A",
           "ampere, ada, hopper, blackwell, cdna3, x86-64, ... or sm_90, gfx942"),
    FILTER("--chip", chip, "C", "h100, h200, b200, a100, l20, l40s, mi300x, mi308x, x86-cpu, ..."),
    FILTER("--framework", framework, "F", "triton, gluon, cutedsl, cuda, tilelang, flydsl, c"),
    FILTER("--family", family, "F",
           "elementwise, reduction, norm, softmax, gemm, attention, moe, "
           "quantization, rope"),
    FILTER("--kind", kind, "K", "fact, technique, pitfall, reference"),
    {.name = "--limit",
     .off = OFF(q.limit),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = AKA_WIKI_LIMIT_MAX,
     .def = "8",
     .metavar = "N",
     .help = "at most N results, 1 to 200"},
    {.name = NULL},
};

static const struct aka_opt common_flags[] = {
    {.name = "--workspace",
     .off = OFF(cfg.workspace),
     .metavar = "DIR",
     .help = "also load DIR/.aka-plugins/* (default $ATREX_AKA_WORKSPACE)"},
    {.name = "--cache-dir",
     .off = OFF(cfg.cache_dir),
     .metavar = "DIR",
     .help = "where the index lives (default $XDG_CACHE_HOME/aka or ~/.cache/aka)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print JSON instead of text"},
    {.name = NULL},
};

static const struct aka_opt import_flags[] = {
    {.name = "--out",
     .off = OFF(out),
     .metavar = "PLUGIN_DIR",
     .help = "the plugin directory to write; required"},
    {.name = "--name",
     .off = OFF(name),
     .def = "imported-wiki",
     .metavar = "NAME",
     .help = "the plugin's name"},
    {.name = NULL},
};

static int print_json(json_t *v)
{
    json_dumpf(v, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    fputc('\n', stdout);
    json_decref(v);
    return 0;
}

static int open_wiki(struct wiki_args *a, struct aka_wiki **w)
{
    struct aka_err err = AKA_ERR_INIT;
    if (aka_wiki_open(&a->cfg, w, &err) < 0)
        return aka_err_report(&err);
    return 0;
}

static int run_query(struct wiki_args *a)
{
    struct strbuf text = STRBUF_INIT, out = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki_result res;
    struct aka_wiki *w = NULL;
    for (size_t i = 0; i < a->words.n; i++)
        strbuf_addf(&text, "%s%s", i ? " " : "", a->words.v[i]);
    a->q.text = text.buf;
    aka_wiki_result_init(&res);
    int rc = open_wiki(a, &w);
    if (rc == 0 && aka_wiki_query(w, &a->q, &res, &err) < 0)
        rc = aka_err_report(&err);
    if (rc == 0 && a->json)
        print_json(aka_wiki_result_json(&res));
    else if (rc == 0) {
        aka_wiki_result_format(&res, &out);
        fputs(out.buf, stdout);
    }
    aka_wiki_result_release(&res);
    aka_wiki_close(w);
    strbuf_release(&text);
    strbuf_release(&out);
    return rc;
}

static int run_show(struct wiki_args *a)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki_hit hit = {0};
    struct strbuf out = STRBUF_INIT;
    struct aka_wiki *w = NULL;
    if (a->words.n != 1) {
        fprintf(stderr, "aka wiki show: expected exactly one record id\n%s", usage_show);
        return AKA_EXIT_USAGE;
    }
    int rc = open_wiki(a, &w);
    if (rc == 0 && aka_wiki_show(w, a->words.v[0], &hit, &err) < 0)
        rc = aka_err_report(&err);
    if (rc == 0 && a->json)
        print_json(aka_wiki_hit_json(&hit));
    else if (rc == 0) {
        aka_wiki_hit_format(&hit, true, &out);
        fputs(out.buf, stdout);
    }
    aka_wiki_hit_release(&hit);
    aka_wiki_close(w);
    strbuf_release(&out);
    return rc;
}

static int run_check(struct wiki_args *a)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki_check_report rep;
    aka_wiki_check_report_init(&rep);
    if (aka_wiki_check(&a->cfg, &rep, &err) < 0) {
        aka_wiki_check_report_release(&rep);
        return aka_err_report(&err);
    }
    int rc = rep.problems.n ? AKA_EXIT_FAILED : AKA_EXIT_OK;
    if (a->json) {
        json_t *probs = json_array();
        for (size_t i = 0; i < rep.problems.n; i++)
            json_array_append_new(probs, json_string(rep.problems.v[i]));
        print_json(json_pack("{s:b, s:I, s:I, s:o, s:O}", "ok", rc == 0, "plugins",
                             (json_int_t)rep.plugins, "records", (json_int_t)rep.records,
                             "problems", probs, "stats", rep.stats));
    } else {
        for (size_t i = 0; i < rep.problems.n; i++)
            printf("%s\n", rep.problems.v[i]);
        printf("%s: %zu plugin(s), %zu record(s), %zu problem line(s)\n", rc ? "FAILED" : "ok",
               rep.plugins, rep.records, rep.problems.n);
    }
    aka_wiki_check_report_release(&rep);
    return rc;
}

static int run_import(struct wiki_args *a)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki_import_report rep;
    if (a->words.n != 1 || !a->out) {
        fprintf(stderr, "aka wiki import: expected DIR and --out PLUGIN_DIR\n%s", usage_import);
        return AKA_EXIT_USAGE;
    }
    aka_wiki_import_report_init(&rep);
    int rc = aka_wiki_import(a->words.v[0], a->out, a->name, &rep, &err);
    for (size_t i = 0; i < rep.notes.n; i++)
        fprintf(stderr, "aka wiki import: %s\n", rep.notes.v[i]);
    if (rc < 0)
        rc = aka_err_report(&err);
    else
        printf("imported %zu kernel and %zu hardware record(s) into %zu record(s) in %s "
               "(%zu skipped, %zu id(s) mapped%s)\n",
               rep.kernel_in, rep.hardware_in, rep.records_out, a->out, rep.skipped, rep.mapped,
               rep.mapped ? ": see import-report.json" : "");
    aka_wiki_import_report_release(&rep);
    return rc;
}

static int run_plugins(struct wiki_args *a)
{
    struct strbuf out = STRBUF_INIT;
    struct aka_wiki *w = NULL;
    a->cfg.quiet = true; /* skipped plugins are part of the listing itself */
    int rc = open_wiki(a, &w);
    if (rc == 0 && a->json) {
        json_t *j = aka_wiki_plugins_json(aka_wiki_plugins(w));
        json_object_set_new(j, "set_fingerprint", json_string(aka_wiki_fingerprint(w)));
        json_object_set_new(j, "cache", json_string(aka_wiki_cache_path(w)));
        print_json(j);
    } else if (rc == 0) {
        aka_wiki_plugins_format(aka_wiki_plugins(w), &out);
        printf("%sset fingerprint: %s\nindex: %s\n", out.buf, aka_wiki_fingerprint(w),
               aka_wiki_cache_path(w));
    }
    aka_wiki_close(w);
    strbuf_release(&out);
    return rc;
}

static const char usage_cited[] =
    "usage: aka wiki cited [--workspace DIR] [--json]\n\n"
    "Which wiki records helped: every id a campaign's episodes cited in their\n"
    "journals (memory records' wiki_citations), with how often, the citing\n"
    "experiments' decisions and the outcome of each citing episode.\n";

static int run_cited(struct wiki_args *a)
{
    struct aka_err err = AKA_ERR_INIT;
    const char *ws = a->cfg.workspace ? a->cfg.workspace : getenv("ATREX_AKA_WORKSPACE");
    if (!ws || !*ws) {
        aka_err_set(&err, AKA_EXIT_USAGE, "--workspace: required (the campaign workspace)");
        return aka_err_report(&err);
    }
    json_t *cites = aka_wiki_citations(ws, &err);
    if (!cites)
        return aka_err_report(&err);
    if (a->json) {
        print_json(cites);
    } else {
        struct strbuf out = STRBUF_INIT;
        aka_wiki_citations_format(cites, &out);
        fwrite(out.buf, 1, out.len, stdout);
        strbuf_release(&out);
        json_decref(cites);
    }
    return 0;
}

static const char usage_tool[] =
    "usage: aka wiki tool NAME [--] [ARG...]\n\n"
    "Run a tool a loaded plugin declares (contributes.tools), with ARGs appended and\n"
    "this terminal's streams. In an episode the plugins must be the ones the campaign\n"
    "pinned. The exit status is the tool's.\n";

static int run_tool(struct wiki_args *a)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki *w;
    struct strvec args = STRVEC_INIT;
    int code = 0;
    if (!a->words.n) {
        fprintf(stderr, "aka wiki tool: expected a tool NAME\n%s", usage_tool);
        return AKA_EXIT_USAGE;
    }
    int orc = open_wiki(a, &w);
    if (orc != 0)
        return orc;
    for (size_t i = 1; i < a->words.n; i++)
        strvec_push(&args, a->words.v[i]);
    const char *ws = a->cfg.workspace ? a->cfg.workspace : getenv("ATREX_AKA_WORKSPACE");
    int rc = aka_wiki_tool_run(w, ws, a->words.v[0], &args, &code, &err);
    aka_wiki_close(w);
    strvec_clear(&args);
    return rc < 0 ? aka_err_report(&err) : code;
}

struct subcommand {
    const char *name;
    const struct aka_opt *flags; /* its own, before the common ones (NULL: none) */
    bool common;                 /* also --workspace, --cache-dir, --json */
    const char *usage;
    int (*run)(struct wiki_args *a);
};

static const struct subcommand subs[] = {
    {"query", query_flags, true, usage_query, run_query},
    {"show", NULL, true, usage_show, run_show},
    {"check", NULL, true, usage_check, run_check},
    {"import", import_flags, false, usage_import, run_import},
    {"plugins", NULL, true, usage_plugins, run_plugins},
    {"cited", NULL, true, usage_cited, run_cited},
    {"tool", NULL, true, usage_tool, run_tool},
};
static const char *const sub_names[] = {"query",   "show",  "check", "import",
                                        "plugins", "cited", "tool",  NULL};

static int dispatch(const struct subcommand *s, int argc, char **argv,
                    const struct aka_app_ctx *ctx)
{
    struct wiki_args a = {.words = STRVEC_INIT};
    struct aka_err err = AKA_ERR_INIT;
    struct aka_opt_group groups[3] = {{0}}, *g = groups;
    char name[32];
    snprintf(name, sizeof(name), "wiki %s", s->name);
    if (s->flags)
        *g++ = (struct aka_opt_group){.table = s->flags, .base = &a};
    if (s->common)
        *g++ = (struct aka_opt_group){.table = common_flags, .base = &a};
    const struct aka_opt_doc doc = {name, s->usage, NULL};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a.words};
    a.cfg.repo_root = ctx->repo_root;
    int rc = aka_opts_parse(&c, argc, argv, 2, &err);
    if (rc != 0)
        rc = rc < 0 ? aka_err_report(&err) : 0;
    else
        rc = s->run(&a);
    strvec_clear(&a.words);
    return rc;
}

int cmd_wiki(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        fputs(usage_main, stdout);
        return AKA_EXIT_OK;
    }
    int k = aka_opts_subcommand("wiki", sub_names, argc, argv, &err);
    if (k < 0) {
        aka_err_report(&err);
        fputs(usage_main, stderr);
        return AKA_EXIT_USAGE;
    }
    return dispatch(&subs[k], argc, argv, ctx);
}
