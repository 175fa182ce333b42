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

#include <errno.h>
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
    "\n"
    "  --op-dir DIR            the operator (aka native, Atrex-Bench or SOL-ExecBench)\n"
    "  --kernel FILE           the candidate (kernel.c, kernel.cu or kernel.py)\n"
    "  --framework F           C, Cuda, Triton, Gluon, CuteDSL, TileLang, FlyDSL or\n"
    "                          PyTorch\n"
    "  --platform P            cpu, a product (H20, L20N, H200, B200, MI308X, ZW-M890P,\n"
    "                          ...), sm_<NN>, gfx<hex> or nvidia/<gpu> (docs/platforms.md);\n"
    "                          validated on hardware: cpu and H200 only, every other\n"
    "                          platform is not validated on hardware\n"
    "  --shape-id ID           evaluate only this shape (repeatable)\n"
    "  --multi-seed N          check correctness with seeds 0..N-1 (default 1)\n"
    "  --timed-runs N          timed runs per shape (default C 25, CUDA/Python 100)\n"
    "  --warmup N              untimed runs before them (default C 3, CUDA/Python 10)\n"
    "  --tune NAME=VALUE       compile the kernel with -DNAME=VALUE (native; repeatable)\n"
    "  --arch ARCH             the platform's architecture (sm_NN, gfxNNN) instead of\n"
    "                          its table's; nvcc -arch (also: --cuda-arch)\n"
    "  --timeout S             wall-clock limit of the job in seconds (default 600)\n"
    "  --record FILE           append the evaluation to FILE (JSON Lines; its directory\n"
    "                          must exist)\n"
    "  --json                  print the outcome as one JSON object instead\n"
    "  -v, --verbose           also print the evaluator's stderr and sandbox notes\n"
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
    "recorded).\n"
    "\n"
    "evaluation transport (the same flags as aka sandbox run and aka optimize):\n";

struct eval_opts {
    struct aka_eval_request req;
    struct aka_transport_opts transport;
    struct strvec shape_ids, tune;
    const char *record;
    bool json, verbose, help;
};

static int parse_int(const char *flag, const char *s, int lo, int *out, struct aka_err *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > 1000000)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected an integer >= %d; got '%s'", flag, lo,
                           s);
    *out = (int)v;
    return 0;
}

/* One "--flag VALUE" or "--flag=VALUE"; *value is NULL for a flag that takes none. */
static int take_value(int argc, char **argv, int *i, const char *flag, const char **value)
{
    size_t n = strlen(flag);
    if (strncmp(argv[*i], flag, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static int apply(struct eval_opts *o, const char *flag, const char *v, struct aka_err *err)
{
    int n = 0;
    if (strcmp(flag, "--op-dir") == 0)
        o->req.op_dir = v;
    else if (strcmp(flag, "--kernel") == 0)
        o->req.kernel = v;
    else if (strcmp(flag, "--framework") == 0)
        o->req.framework = v;
    else if (strcmp(flag, "--platform") == 0)
        o->req.platform = v;
    else if (strcmp(flag, "--shape-id") == 0)
        strvec_push(&o->shape_ids, v);
    else if (strcmp(flag, "--tune") == 0)
        strvec_push(&o->tune, v);
    else if (strcmp(flag, "--cuda-arch") == 0 || strcmp(flag, "--arch") == 0)
        o->req.cuda_arch = v;
    else if (strcmp(flag, "--record") == 0)
        o->record = v;
    else if (strcmp(flag, "--multi-seed") == 0)
        return parse_int(flag, v, 1, &o->req.multi_seed, err);
    else if (strcmp(flag, "--timed-runs") == 0)
        return parse_int(flag, v, 0, &o->req.timed_runs, err);
    else if (strcmp(flag, "--warmup") == 0)
        return parse_int(flag, v, 0, &o->req.warmup, err);
    else if (strcmp(flag, "--timeout") == 0) {
        if (parse_int(flag, v, 1, &n, err) < 0)
            return -1;
        o->req.timeout_s = n;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct eval_opts *o, struct aka_err *err)
{
    static const char *const valued[] = {
        "--op-dir",     "--kernel",    "--framework", "--platform", "--shape-id",
        "--tune",       "--cuda-arch", "--arch",      "--record",   "--multi-seed",
        "--timed-runs", "--warmup",    "--timeout",   NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int hit = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = true;
            continue;
        }
        if (strcmp(a, "--json") == 0 || strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            if (strcmp(a, "--json") == 0)
                o->json = true;
            else
                o->verbose = true;
            continue;
        }
        if ((hit = aka_transport_opts_parse_one(&o->transport, argc, argv, &i, err)) < 0)
            return -1;
        for (const char *const *f = valued; *f && !hit; f++)
            if ((hit = take_value(argc, argv, &i, *f, &v)) < 0)
                return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value after it", *f);
            else if (hit && apply(o, *f, v, err) < 0)
                return -1;
        if (!hit)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: unknown argument (see aka eval --help)",
                               a);
    }
    return 0;
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
    /* Set by the supervisor for an agent it confined (src/agents/confine.c). */
    const char *confined = getenv("ATREX_AKA_AGENT_SANDBOX");
    o->req.in_agent_sandbox = confined && strcmp(confined, "bwrap") == 0;
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

/* Evaluate, print, record; returns the exit status. */
static int evaluate_and_report(struct eval_opts *o, const struct aka_eval_episode *ep)
{
    struct aka_eval_outcome out;
    struct aka_sandbox_transport t;
    struct aka_err err = AKA_ERR_INIT;
    const char *record = ep->active ? ep->record_path : o->record;
    int rc;
    aka_eval_outcome_init(&out);
    /* Ctrl-C or SIGTERM: the job is ended and its directories removed, nothing recorded. */
    if (proc_catch_stop_signals(&err) < 0 || aka_transport_open(&o->transport, &t, &err) < 0 ||
        aka_evaluate(&t, &o->req, &out, &err) < 0 || proc_check_stop(&err) < 0) {
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
    o.req.timed_runs = o.req.warmup = -1;
    if (parse_args(argc, argv, &o, &err) < 0) {
        rc = aka_err_report(&err);
    } else if (o.help) {
        fputs(usage_text, stdout);
        aka_transport_opts_print_help(stdout);
        rc = 0;
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
