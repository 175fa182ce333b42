/*
 * profile.c — `aka profile [--level survey|sol|deep] [--kernel-regex R]
 * [--top-kernels N] [--shape-id ID] [--metric M]... [--raw] [--json]
 * [--from-report FILE] [--chip C] [--platform P]`: parse and print only; the
 * parsers and the summary are src/profile/, the ceilings src/wiki/.
 */
#include "profile/profile.h"
#include "base/fs.h"
#include "base/opts.h"
#include "cmd/cmd.h"
#include "evaluator/evaluator.h"
#include "sandbox/sandbox.h"
#include "wiki/wiki.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka profile [--level survey|sol|deep] [--kernel-regex R] [--top-kernels N]\n"
    "                   [--shape-id ID] [--metric M]... [--raw] [--json]\n"
    "                   [--from-report FILE] [--chip C] [--platform P]\n\n"
    "Profile the worktree's kernel on one shape under the vendor profiler inside the\n"
    "sandbox (Nsight Compute with --clock-control none; rocprofv3 on AMD), or\n"
    "re-summarize a saved export with --from-report. The summary has one entry per\n"
    "kernel: duration, compute and memory SOL %, DRAM throughput, achieved\n"
    "occupancy, registers, shared memory, top stall reasons and the bound, set\n"
    "against the chip's ceilings from the wiki's hardware records.\n";
static const char notes_text[] =
    "\nExit status: 0 with a summary; 2 on a usage error or a malformed export (one\n"
    "line naming the file, line and field); 75 when this machine has no profiler\n"
    "or GPU. See docs/profile.md.\n";

static const char *const levels[] = {"survey", "sol", "deep", NULL};

struct profile_args {
    const char *level, *regex, *shape, *report, *chip, *platform;
    int top, heartbeat;
    struct strvec metrics;
    bool raw, json, help;
    struct aka_transport_opts transport;
};

#define OFF(f) offsetof(struct profile_args, f)

static const struct aka_opt flags[] = {
    {.name = "--level",
     .off = OFF(level),
     .kind = AKA_OPT_CHOICE,
     .choices = levels,
     .def = "sol",
     .help = "survey: durations; sol: speed of light, occupancy, stalls; deep: every section "
             "(needs --kernel-regex)"},
    {.name = "--kernel-regex",
     .off = OFF(regex),
     .metavar = "R",
     .help = "only kernels whose demangled name matches R (POSIX extended)"},
    AKA_CMD_HEARTBEAT_FLAG(OFF(heartbeat)),
    {.name = "--top-kernels",
     .off = OFF(top),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1000,
     .def = "10",
     .metavar = "N",
     .help = "keep the N longest kernels"},
    {.name = "--shape-id",
     .off = OFF(shape),
     .metavar = "ID",
     .help = "the shape to profile (an opaque id in generalized production)"},
    {.name = "--metric",
     .off = OFF(metrics),
     .kind = AKA_OPT_LIST,
     .metavar = "M",
     .help = "an extra profiler metric"},
    {.name = "--raw",
     .off = OFF(raw),
     .kind = AKA_OPT_BOOL,
     .help = "also print the raw export after the summary"},
    {.name = "--json", .off = OFF(json), .kind = AKA_OPT_BOOL, .help = "print the summary as JSON"},
    {.name = "--from-report",
     .off = OFF(report),
     .metavar = "FILE",
     .help = "re-summarize a saved export (ncu --csv --page raw, rocprofv3 CSV, PPU acu CSV)"},
    {.name = "--chip",
     .off = OFF(chip),
     .metavar = "C",
     .help = "the chip whose wiki ceilings frame the summary (e.g. H200); none: no roofline"},
    {.name = "--platform",
     .off = OFF(platform),
     .metavar = "P",
     .help = "the target platform whose profiler and GPU this machine must have (default: the "
             "campaign's, inside an episode)"},
    {.name = NULL},
};

/* The chip's DRAM and FLOP ceilings with their records; NULL chip: no roofline. */
static int ceilings(const struct profile_args *a, const struct aka_app_ctx *ctx,
                    struct aka_wiki_fact f[2], struct aka_profile_ceilings *c, struct aka_err *err)
{
    static const char *const bw[] = {"hbm_bandwidth", "memory_bandwidth", NULL};
    static const char *const fl[] = {"fp32_tflops", NULL};
    struct aka_wiki_config cfg = {.repo_root = ctx->repo_root, .quiet = true};
    struct aka_wiki *w;
    memset(c, 0, sizeof(*c));
    if (!a->chip)
        return 0;
    if (aka_wiki_open(&cfg, &w, err) < 0)
        return -1;
    int rc = aka_wiki_fact(w, a->chip, bw, "GB/s", &f[0], err);
    if (rc >= 0)
        rc = aka_wiki_fact(w, a->chip, fl, "TFLOPS", &f[1], err);
    aka_wiki_close(w);
    c->chip = a->chip;
    c->dram_gbps = f[0].id ? f[0].value : 0;
    c->dram_record = f[0].id;
    c->dram_source = f[0].source;
    c->tflops = f[1].id ? f[1].value : 0;
    c->flop_record = f[1].id;
    c->flop_source = f[1].source;
    return rc < 0 ? -1 : 0;
}

static void print(const struct profile_args *a, const struct aka_profile_summary *s,
                  const struct aka_profile_ceilings *c)
{
    if (a->json) {
        json_t *o = aka_profile_to_json(s, c);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("\n");
        json_decref(o);
    } else {
        struct strbuf text = STRBUF_INIT;
        aka_profile_format(s, c, &text);
        fwrite(text.buf, 1, text.len, stdout);
        strbuf_release(&text);
    }
}

/* Inside an episode the summary is kept for the memory record's profile_evidence. */
static int keep(const struct aka_profile_summary *s, const struct aka_profile_ceilings *c,
                struct aka_err *err)
{
    const char *wt = getenv("ATREX_AKA_WORKTREE");
    struct strbuf saved = STRBUF_INIT;
    if (!wt || !*wt)
        return 0;
    json_t *doc = aka_profile_to_json(s, c);
    int rc = aka_profile_save(wt, doc, &saved, err);
    if (rc == 0)
        fprintf(stderr, "aka profile: summary kept as %s\n", saved.buf);
    json_decref(doc);
    strbuf_release(&saved);
    return rc;
}

static int from_report(const struct profile_args *a, const struct aka_app_ctx *ctx,
                       struct aka_err *err)
{
    struct aka_profile_summary s;
    struct aka_profile_ceilings c;
    struct aka_wiki_fact f[2];
    memset(f, 0, sizeof(f));
    int parsed = aka_profile_parse_file(a->report, &s, err), rc = parsed;
    if (rc == 0)
        rc = aka_profile_select(&s, a->regex, (size_t)a->top, err);
    if (rc == 0)
        rc = ceilings(a, ctx, f, &c, err);
    if (rc == 0)
        rc = keep(&s, &c, err);
    if (rc == 0)
        print(a, &s, &c);
    if (rc == 0 && a->raw) {
        struct strbuf raw = STRBUF_INIT;
        if (aka_read_file(a->report, &raw, AKA_READ_LIMIT_DEFAULT, err) == 0)
            printf("\n--- raw export %s ---\n%s", a->report, raw.buf);
        strbuf_release(&raw);
    }
    aka_wiki_fact_release(&f[0]);
    aka_wiki_fact_release(&f[1]);
    if (parsed == 0)
        aka_profile_summary_release(&s);
    return rc;
}

/* The export of a live profile, summarized, kept and printed like --from-report's. */
static int summarize_export(struct profile_args *a, const struct aka_app_ctx *ctx,
                            const char *export, const struct aka_eval_outcome *out,
                            struct aka_err *err)
{
    if (!aka_is_file(export))
        return aka_err_set(err, AKA_EXIT_FAILED,
                           "profile: the profiler wrote no export (job exit %d); its stderr ends: "
                           "%.400s",
                           out->command_exit,
                           out->log.len > 400 ? out->log.buf + out->log.len - 400 : out->log.buf);
    a->report = export;
    return from_report(a, ctx, err);
}

/* The request of an episode's profile job: the campaign's operator, kernel and platform, one
 * shape, one seed, one warmup and one timed run, under the profiler. */
static void profile_request(const struct profile_args *a, const struct aka_app_ctx *ctx,
                            const struct aka_eval_episode *ep, const struct strvec *shapes,
                            struct aka_eval_request *req)
{
    *req = (struct aka_eval_request){.op_dir = ep->op_dir,
                                     .kernel = ep->kernel,
                                     .framework = ep->framework,
                                     .platform = ep->platform,
                                     .repo_root = ctx->repo_root,
                                     .shape_ids = shapes,
                                     .multi_seed = 1,
                                     .timed_runs = 1,
                                     .warmup = 1,
                                     .cuda_arch = ep->cuda_arch};
    req->in_agent_sandbox = aka_sandbox_inside_agent();
}

/* The job runs through the campaign's transport from here, or, when the campaign's supervisor
 * serves this agent's jobs (a GPU campaign on its host or a remote one: evaluator/broker.c),
 * by the supervisor under its own profiler, the export coming back into artifact_dir. */
static int run_job(struct profile_args *a, const struct aka_eval_episode *ep, bool brokered,
                   struct aka_eval_request *req, struct aka_eval_outcome *out, struct aka_err *err)
{
    struct aka_sandbox_transport t;
    aka_eval_heartbeat_on("aka profile", a->heartbeat);
    if (brokered) {
        struct aka_eval_profile_ask ask = {a->level, a->regex, &a->metrics};
        req->profile_ask = &ask;
        int rc = aka_eval_broker_call(ep->workspace, req, out, err);
        req->profile_ask = NULL;
        return rc;
    }
    a->transport.env_cannot_choose = true;
    if (ep->isolation && !aka_transport_opt_given(&a->transport, "--sandbox-isolation"))
        a->transport.isolation = strcmp(ep->isolation, "none") == 0 ? "none" : "bwrap";
    if (aka_transport_opts_validate(&a->transport, ep->platform, err) < 0 ||
        aka_transport_open(&a->transport, &t, err) < 0)
        return -1;
    return aka_evaluate(&t, req, out, err);
}

/* The profiler's command line: this machine's, or, brokered, only checked here (the
 * supervisor builds its own from the same flags). */
static int command(const struct profile_args *a, const char *platform, bool brokered,
                   struct strvec *argv, struct strbuf *dir, struct aka_err *err)
{
    if (brokered)
        return aka_profile_ncu_argv(a->level, a->regex, &a->metrics, argv, err);
    return aka_profile_command(platform, a->level, a->regex, &a->metrics, argv, dir, err);
}

/* A live profile, in an episode: the platform's profiler and GPU must be here (or the
 * supervisor's, brokered); the export comes back under the worktree's .aka/profiles/. */
static int live(struct profile_args *a, const struct aka_app_ctx *ctx, struct aka_err *err)
{
    struct aka_eval_episode ep;
    struct aka_eval_request req;
    struct aka_eval_outcome out;
    struct strbuf dir = STRBUF_INIT, export = STRBUF_INIT;
    struct strvec argv = STRVEC_INIT, shapes = STRVEC_INIT;
    memset(&ep, 0, sizeof(ep));
    aka_eval_outcome_init(&out);
    int rc = aka_eval_episode_detect(&ep, ctx->repo_root, err);
    const char *platform = a->platform ? a->platform : ep.platform;
    bool brokered =
        rc == 0 && ep.active && aka_sandbox_inside_agent() && aka_eval_broker_present(ep.workspace);
    if (rc == 0 && !platform)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "--platform: required outside an episode (or use --from-report FILE)");
    if (rc == 0)
        rc = command(a, platform, brokered, &argv, &dir, err);
    if (rc == 0 && !ep.active)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "profile: a live profile runs in an episode worktree "
                         "(ATREX_AKA_WORKSPACE); elsewhere use --from-report FILE");
    if (rc == 0 && !a->shape)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "--shape-id: required for a live profile (one shape is profiled)");
    if (rc == 0) {
        strvec_push(&shapes, a->shape);
        profile_request(a, ctx, &ep, &shapes, &req);
        req.profiler = &argv;
        req.profiler_dir = dir.buf;
        strbuf_addf(&export, "%s/.aka/profiles/raw", ep.worktree);
        req.artifact_dir = export.buf;
        rc = run_job(a, &ep, brokered, &req, &out, err);
    }
    if (rc == 0) {
        strbuf_addf(&export, "/%s", AKA_EVAL_PROFILE_EXPORT);
        rc = summarize_export(a, ctx, export.buf, &out, err);
    }
    aka_eval_outcome_release(&out);
    aka_eval_episode_release(&ep);
    strbuf_release(&dir);
    strbuf_release(&export);
    strvec_clear(&argv);
    strvec_clear(&shapes);
    return rc;
}

int cmd_profile(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct profile_args a = {.metrics = STRVEC_INIT};
    aka_transport_opts_init(&a.transport);
    struct aka_opt_group groups[] = {
        {.table = flags, .base = &a, .title = "options"},
        aka_transport_opts_group(&a.transport, "profile transport (the campaign's, in an episode)"),
        {0}};
    static const struct aka_opt_doc doc = {"profile", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .help = &a.help};
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc == 0 && !a.help)
        rc = a.report ? from_report(&a, ctx, &err) : live(&a, ctx, &err);
    strvec_clear(&a.metrics);
    aka_transport_opts_release(&a.transport);
    return rc < 0 ? aka_err_report(&err) : 0;
}
