/*
 * eval.c — `aka eval`: evaluate a kernel against its operator in the sandbox.
 *
 * Parses flags (the transport flags from sandbox.h's shared table; inside an
 * episode worktree the operator, kernel, framework and platform come from the
 * campaign: evaluator/evaluator.h), opens the transport, calls aka_evaluate,
 * prints the RESULT_JSON line on stdout and a short summary on stderr, and
 * appends the record to evaluations.jsonl (the worktree's in episode mode;
 * --record FILE otherwise). No logic beyond parsing and printing.
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"
#include "cmd/cmd.h"
#include "evaluator/evaluator.h"
#include "sandbox/sandbox.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka eval --op-dir DIR --kernel FILE --framework F --platform P [options]\n"
    "       aka eval [options]            (inside an episode worktree)\n"
    "\n"
    "Evaluate a candidate kernel against its operator inside the sandbox: correctness\n"
    "on every selected shape and seed, then timing against the reference. Prints one\n"
    "RESULT_JSON= line on stdout and a summary on stderr.\n"
    "\n";

static const char notes_text[] =
    "\n"
    "Inside an episode (ATREX_AKA_WORKSPACE set) the kernel, framework and platform\n"
    "come from $ATREX_AKA_WORKSPACE/.aka/campaign.json, the operator is the campaign's\n"
    "V0 snapshot (.aka/operator, checked against its manifest; a changed original is\n"
    "reported, never used), the asset tree must still hash as the campaign pinned it,\n"
    "and every result is appended with the kernel's sha256 to\n"
    "<worktree>/.aka/evaluations.jsonl.\n"
    "\n"
    "exit status: 0 when every case passed, 1 when the candidate failed, 2 on bad\n"
    "input, 75 when the environment (sandbox, toolchain, device, temp directory) is\n"
    "unavailable (also: a transport this build does not have yet), 130/143 when\n"
    "SIGINT/SIGTERM stopped it (the job is ended, its directories removed, nothing\n"
    "recorded).\n";

static const char *const evaluators[] = {"aka", "official", NULL};

struct eval_opts {
    struct aka_eval_request req;
    struct aka_transport_opts transport;
    struct strvec shape_ids, tune;
    const char *record;
    const char *evaluator; /* "aka" or "official" */
    int heartbeat;         /* seconds between "still running" lines; 0: none */
    bool json, verbose, help;
};

#define OFF(f) offsetof(struct eval_opts, f)
#define MAX_N  1e6

static const struct aka_opt flags[] = {
    {.name = "--op-dir",
     .off = OFF(req.op_dir),
     .metavar = "DIR",
     .help = "the operator (aka native, Atrex-Bench or SOL-ExecBench)"},
    {.name = "--kernel",
     .off = OFF(req.kernel),
     .metavar = "FILE",
     .help = "the candidate (kernel.c, kernel.cu or kernel.py)"},
    {.name = "--framework",
     .off = OFF(req.framework),
     .metavar = "F",
     .help = "C, Cuda, Triton, Gluon, CuteDSL, TileLang, FlyDSL or PyTorch"},
    {.name = "--platform",
     .off = OFF(req.platform),
     .metavar = "P",
     .help = "cpu, a product (H20, L20N, H200, B200, MI308X, ZW-M890P, ...), sm_<NN>, "
             "gfx<hex> or nvidia/<gpu> (docs/platforms.md); validated on hardware: cpu and "
             "H200 only, every other platform is not validated on hardware"},
    {.name = "--shape-id",
     .off = OFF(shape_ids),
     .kind = AKA_OPT_LIST,
     .metavar = "ID",
     .help = "evaluate only this shape"},
    {.name = "--multi-seed",
     .off = OFF(req.multi_seed),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = MAX_N,
     .def = "1",
     .metavar = "N",
     .help = "check correctness with seeds 0..N-1"},
    {.name = "--timed-runs",
     .off = OFF(req.timed_runs),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = MAX_N,
     .def = "-1",
     .metavar = "N",
     .help = "timed runs per shape (default C 25, CUDA/Python 100)"},
    AKA_CMD_HEARTBEAT_FLAG(OFF(heartbeat)),
    {.name = "--evaluator",
     .off = OFF(evaluator),
     .kind = AKA_OPT_CHOICE,
     .choices = evaluators,
     .def = "aka",
     .metavar = "E",
     .help = "aka (the judge), or official: the operator owner's evaluator decides when the "
             "sandbox runtime has it (Atrex-Bench run_eval.py, sol-execbench), else the judge "
             "does and says so; it runs the candidate in its own process, so it is for "
             "comparing numbers, never for promotion"},
    {.name = "--time-budget-ms",
     .off = OFF(req.time_budget_ms),
     .kind = AKA_OPT_INT,
     .lo = -1,
     .hi = 3600000,
     .def = "0",
     .metavar = "MS",
     .help = "a shape's timed runs per runner fit in MS, judged from the reference's "
             "correctness calls (at least 3 runs); 0: the default, 2000; -1: no budget"},
    {.name = "--timed-inputs",
     .off = OFF(req.timed_inputs),
     .kind = AKA_OPT_CHOICE,
     .choices = aka_eval_timed_input_modes,
     .def = "auto",
     .metavar = "HOW",
     .help = "PyTorch layouts: how a timed run gets its fresh inputs: seeded (the runner "
             "builds them from a secret seed sent with the run), sent (the judge sends them), "
             "auto (seeded on a GPU when the operator's input builder repeats itself, else "
             "sent)"},
    {.name = "--timing",
     .off = OFF(req.timing),
     .kind = AKA_OPT_CHOICE,
     .choices = aka_eval_timing_modes,
     .def = "auto",
     .metavar = "HOW",
     .help = "GPU operators: events (CUDA events around the call), kernel-span (CUPTI: "
             "first kernel start to last kernel end, SOL-ExecBench's method; events when "
             "CUPTI cannot start, said in the result), auto (kernel-span for SOL-ExecBench "
             "operators, events otherwise)"},
    {.name = "--warmup",
     .off = OFF(req.warmup),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = MAX_N,
     .def = "-1",
     .metavar = "N",
     .help = "untimed runs before them (default C 3, CUDA/Python 10)"},
    {.name = "--tune",
     .off = OFF(tune),
     .kind = AKA_OPT_LIST,
     .metavar = "NAME=VALUE",
     .help = "compile the kernel with -DNAME=VALUE (native)"},
    {.name = "--arch",
     .off = OFF(req.cuda_arch),
     .metavar = "ARCH",
     .help = "the platform's architecture (sm_NN, gfxNNN) instead of its table's; nvcc -arch"},
    {.name = "--cuda-arch",
     .off = OFF(req.cuda_arch),
     .metavar = "ARCH",
     .help = "the same as --arch"},
    {.name = "--timeout",
     .off = OFF(req.timeout_s),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = MAX_N,
     .def = "600",
     .metavar = "S",
     .help = "wall-clock limit of the job in seconds"},
    {.name = "--record",
     .off = OFF(record),
     .metavar = "FILE",
     .help = "append the evaluation to FILE (JSON Lines; its directory must exist)"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print the outcome as one JSON object instead"},
    {.name = "--verbose",
     .alias = "-v",
     .off = OFF(verbose),
     .kind = AKA_OPT_BOOL,
     .help = "also print the evaluator's stderr and sandbox notes"},
    {.name = NULL},
};

/* Its own flags, then the transport's (sandbox.h: the same rows as aka sandbox run and
 * aka optimize). groups must have room for three. */
static void command(struct eval_opts *o, struct aka_opt_group *groups, struct aka_opt_cmd *c)
{
    groups[0] = (struct aka_opt_group){flags, o, NULL, "options", false};
    groups[1] = aka_transport_opts_group(
        &o->transport, "evaluation transport (the same flags as aka sandbox run and aka optimize)");
    groups[2] = (struct aka_opt_group){0};
    static const struct aka_opt_doc doc = {"eval", usage_text, notes_text};
    *c = (struct aka_opt_cmd){.doc = &doc, .groups = groups, .help = &o->help};
}

static int parse_args(int argc, char **argv, struct eval_opts *o, struct aka_err *err)
{
    struct aka_opt_group groups[3];
    struct aka_opt_cmd c;
    command(o, groups, &c);
    return aka_opts_parse(&c, argc, argv, 1, err);
}

/* Episode mode: the campaign names operator, kernel, framework and platform. */
static int use_episode(struct eval_opts *o, const struct aka_eval_episode *ep, struct aka_err *err)
{
    if (o->req.op_dir || o->req.kernel || o->req.framework || o->req.platform)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "inside an episode (ATREX_AKA_WORKSPACE=%s) the operator, kernel, "
                           "framework and platform come from the campaign; drop --op-dir, "
                           "--kernel, --framework and --platform",
                           ep->workspace);
    o->req.op_dir = ep->op_dir;
    o->req.kernel = ep->kernel;
    o->req.framework = ep->framework;
    o->req.platform = ep->platform;
    if (!o->req.cuda_arch)
        o->req.cuda_arch = ep->cuda_arch;
    o->req.production_score = ep->production; /* scored as the supervisor will score it */
    /* The campaign's transport: campaigns of this build evaluate on this host, so
     * ATREX_SANDBOX_* variables inherited from the supervisor's environment do not
     * move an episode's evaluations elsewhere; and its isolation, unless this
     * command line names one. */
    o->transport.env_cannot_choose = true;
    if (ep->isolation && !aka_transport_opt_given(&o->transport, "--sandbox-isolation")) {
        if (strcmp(ep->isolation, "bwrap") != 0 && strcmp(ep->isolation, "none") != 0)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s/.aka/campaign.json: sandbox_isolation: expected bwrap or "
                               "none; got '%s'",
                               ep->workspace, ep->isolation);
        o->transport.isolation = strcmp(ep->isolation, "none") == 0 ? "none" : "bwrap";
    }
    return 0;
}

/* --record names a file to append to, in a directory that exists: a wrong path is a
 * usage error before anything is evaluated, not a lost result afterwards. */
static int check_record(const char *path, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    const char *slash = strrchr(path, '/');
    int rc = 0;
    if (!*path || aka_is_dir(path) || (slash && !slash[1]))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--record %s: is a directory; expected a file to append the evaluation "
                           "to (JSON Lines)",
                           path);
    if (aka_exists(path) && !aka_is_file(path))
        return aka_err_set(err, AKA_EXIT_USAGE, "--record %s: not a regular file", path);
    strbuf_add(&dir, path, slash ? (size_t)(slash - path) : 0);
    if (!dir.len)
        strbuf_addstr(&dir, slash ? "/" : ".");
    if (!aka_is_dir(dir.buf))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "--record %s: directory %s does not exist; expected a file in an "
                         "existing directory",
                         path, dir.buf);
    strbuf_release(&dir);
    return rc;
}

static int finish_request(struct eval_opts *o, const struct aka_app_ctx *ctx, struct aka_err *err)
{
    o->req.repo_root = ctx->repo_root;
    o->req.shape_ids = &o->shape_ids;
    o->req.tune = &o->tune;
    o->req.official = o->evaluator && strcmp(o->evaluator, "official") == 0;
    /* Set by the supervisor for an agent it confined (src/agents/confine.c): where this
     * process runs, episode or not (an explicit --op-dir inside the agent sandbox of a root
     * supervisor built its job with a fresh /proc, which the kernel refuses there). */
    o->req.in_agent_sandbox = aka_sandbox_inside_agent();
    if (!o->req.op_dir || !o->req.kernel || !o->req.framework || !o->req.platform)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--op-dir, --kernel, --framework and --platform are required outside "
                           "an episode (see aka eval --help)");
    if (aka_transport_opts_validate(&o->transport, o->req.platform, err) < 0)
        return -1;
    return o->record ? check_record(o->record, err) : 0;
}

/* Failures and diagnostics quote shape ids and compiler output of candidate code:
 * every line is escaped, so none of it can drive the terminal or forge a line. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    struct strbuf text = STRBUF_INIT, sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&text, fmt, ap);
    va_end(ap);
    strbuf_add_escaped(&sb, text.buf, text.len);
    fprintf(stderr, "aka eval: %s\n", sb.buf);
    strbuf_release(&text);
    strbuf_release(&sb);
}

static void summary(const struct aka_eval_outcome *out, const struct aka_eval_request *req)
{
    const struct aka_result *r = &out->result;
    struct strbuf sb = STRBUF_INIT;
    say("%s %lld/%lld cases · %s · %s on %s · sandbox %s · kernel %.12s · %.1f s",
        r->all_pass ? "PASS" : "FAIL", r->passed, r->total, req->op_dir, out->framework,
        out->platform, out->isolation, out->kernel_sha256, out->seconds);
    if (aka_measured(r->latency_us_geomean))
        strbuf_addf(&sb, "latency geomean %.3f us", r->latency_us_geomean);
    /* Which clock: a CUPTI kernel span and an event time of one kernel differ by ~3 us. */
    if (aka_measured(r->latency_us_geomean) && r->timing.method && *r->timing.method)
        strbuf_addf(&sb, " (%s)", r->timing.method);
    if (aka_measured(r->speedup_vs_ref_mean))
        strbuf_addf(&sb, ", speedup vs reference %.3fx (mean) %.3fx (geomean)",
                    r->speedup_vs_ref_mean, r->speedup_vs_ref_geomean);
    if (aka_measured(r->latency_us_geomean))
        say("%s", sb.buf);
    for (size_t i = 0; i < r->failures.n && i < 5; i++)
        say("%s", r->failures.v[i]);
    if (r->failures.n > 5)
        say("... %zu more failures in the result", r->failures.n - 5);
    for (size_t i = 0; i < r->diagnostics.n && i < 2; i++)
        say("[%s] %s", r->diagnostics.v[i].stage, r->diagnostics.v[i].message);
    strbuf_release(&sb);
}

/* The job's stderr, line by line, each escaped. */
static void print_log(const struct strbuf *log)
{
    struct strbuf sb = STRBUF_INIT;
    for (const char *p = log->buf, *end = log->buf + log->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        strbuf_reset(&sb);
        strbuf_add_escaped(&sb, p, n);
        fprintf(stderr, "%s\n", sb.buf);
        p += n + 1;
    }
    strbuf_release(&sb);
}

static void print_outcome(const struct eval_opts *o, const struct aka_eval_outcome *out,
                          const char *record)
{
    struct strbuf sb = STRBUF_INIT;
    json_t *result = aka_eval_result_json(out);
    if (o->json) {
        json_t *doc =
            json_pack("{s:o, s:s, s:s, s:s, s:i, s:f, s:o}", "result", result, "kernel_sha256",
                      out->kernel_sha256, "eval_id", out->eval_id, "sandbox_isolation",
                      out->isolation, "exit_code", out->exit_code, "seconds", out->seconds,
                      "record", record ? json_string(record) : json_null());
        aka_json_dump_compact(doc, &sb);
        printf("%s\n", sb.buf);
        json_decref(doc);
    } else {
        aka_json_dump_compact(result, &sb);
        printf("RESULT_JSON=%s\n", sb.buf);
        json_decref(result);
    }
    fflush(stdout);
    strbuf_release(&sb);
    if (o->verbose) {
        print_log(&out->log);
        for (size_t i = 0; i < out->notes.n; i++)
            say("note: %s", out->notes.v[i]);
    }
    summary(out, &o->req);
}

/* The evaluation itself: on the transport, or, for an agent in a campaign whose jobs run
 * elsewhere, by the supervisor on the campaign's transport (evaluator/broker.c). */
static int run(struct eval_opts *o, const struct aka_eval_episode *ep, struct aka_eval_outcome *out,
               struct aka_err *err)
{
    struct aka_sandbox_transport t;
    if (ep->active && o->req.in_agent_sandbox && aka_eval_broker_present(ep->workspace))
        return aka_eval_broker_call(ep->workspace, &o->req, out, err);
    if (aka_transport_open(&o->transport, &t, err) < 0)
        return -1;
    return aka_evaluate(&t, &o->req, out, err);
}

/* Evaluate, print, record; returns the exit status. */
static int evaluate_and_report(struct eval_opts *o, const struct aka_eval_episode *ep)
{
    struct aka_eval_outcome out;
    struct aka_err err = AKA_ERR_INIT;
    const char *record = ep->active ? ep->record_path : o->record;
    int rc;
    aka_eval_outcome_init(&out);
    /* Ctrl-C or SIGTERM: the job is ended and its directories removed, nothing recorded. */
    aka_eval_heartbeat_on("aka eval", o->heartbeat);
    if (proc_catch_stop_signals(&err) < 0 || run(o, ep, &out, &err) < 0 ||
        proc_check_stop(&err) < 0) {
        aka_eval_outcome_release(&out);
        return aka_err_report(&err);
    }
    if (ep->operator_note)
        fprintf(stderr,
                "aka eval: warning: the original operator changed (%s); the campaign's "
                "V0 snapshot was evaluated\n",
                ep->operator_note);
    print_outcome(o, &out, record);
    rc = out.exit_code;
    if (record && aka_eval_record_append(record, &o->req, &out, ep->episode, &err) < 0)
        rc = aka_err_report(&err);
    if (rc == out.exit_code && ep->active && o->record &&
        aka_eval_record_append(o->record, &o->req, &out, ep->episode, &err) < 0)
        rc = aka_err_report(&err);
    aka_eval_outcome_release(&out);
    return rc;
}

int cmd_eval(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct eval_opts o;
    struct aka_eval_episode ep;
    struct aka_err err = AKA_ERR_INIT;
    int rc;
    memset(&o, 0, sizeof(o));
    memset(&ep, 0, sizeof(ep));
    aka_transport_opts_init(&o.transport);
    if (parse_args(argc, argv, &o, &err) < 0) {
        rc = aka_err_report(&err);
    } else if (o.help) {
        rc = 0; /* the help is printed */
    } else if (aka_eval_episode_detect(&ep, ctx->repo_root, &err) < 0 ||
               (ep.active && use_episode(&o, &ep, &err) < 0) || finish_request(&o, ctx, &err) < 0) {
        rc = aka_err_report(&err);
    } else {
        rc = evaluate_and_report(&o, &ep);
    }
    aka_eval_episode_release(&ep);
    strvec_clear(&o.shape_ids);
    strvec_clear(&o.tune);
    aka_transport_opts_release(&o.transport);
    return rc;
}
