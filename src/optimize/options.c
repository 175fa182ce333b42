/*
 * options.c — the `aka optimize` flag table: parsing, defaults, validation, --help.
 *
 * One table drives everything, so a flag cannot be parsed without help text or
 * validated against a range its help does not state. Values are checked one by
 * one (ranges, choices), then in combination (sandbox transports, the ABBA
 * allocation-fit rule); the first problem is a usage error naming the flag.
 * Nothing here touches the file system except the PATH lookup of check_host.
 */
#include "agents/agents.h"
#include "optimize/optimize.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum kind { K_STR, K_CHOICE, K_INT, K_LONG, K_LL, K_DBL, K_LIST };

struct flag {
    const char *name;
    size_t off;
    const char *const *choices; /* K_CHOICE */
    double lo, hi;              /* numeric range */
    enum kind kind;
    bool hi_open; /* [lo, hi) instead of [lo, hi] */
    const char *metavar, *help;
};

static const char *const modes[] = {"leaderboard", "production", NULL};
static const char *const agents[] = {"claude", "qodercli", "codex", "pi", "builtin", NULL};
static const char *const baselines[] = {"auto", "always", "never", NULL};
static const char *const frameworks[] = {"Triton", "Gluon",    "CuteDSL", "Cuda",
                                         "FlyDSL", "TileLang", "C",       NULL};
static const char *const sandboxes[] = {"local", "ssh", "gateway", "slurm", NULL};
static const char *const profiles[] = {"pre", "prod", NULL};
static const char *const isolations[] = {"bwrap", "none", NULL};

#define OFF(f) offsetof(struct aka_optimize_opts, f)
#define BIG    1e15

/* clang-format off */
static const struct flag flags[] = {
    {"--op-dir", OFF(op_dir), NULL, 0, 0, K_STR, 0, "DIR",
     "operator directory (aka native, Atrex-Bench or SOL-ExecBench layout); required"},
    {"--platform", OFF(platform), NULL, 0, 0, K_STR, 0, "P",
     "target: cpu, a product (H20, H200, MI308X, ...), sm_NN, gfxNNN, nvidia/<gpu>; "
     "names the workspace; required; only cpu and H200 are validated on hardware, every "
     "other platform is not validated on hardware (docs/platforms.md)"},
    {"--framework", OFF(framework), frameworks, 0, 0, K_CHOICE, 0, "F",
     "kernel framework; empty: one child campaign per framework the vendor supports"},
    {"--agent-cli", OFF(agent_cli), agents, 0, 0, K_CHOICE, 0, "CLI",
     "agent for V1 and episodes (default claude); builtin is the mechanical tuner"},
    {"--agent-cli-path", OFF(agent_cli_path), NULL, 0, 0, K_STR, 0, "PATH",
     "the agent CLI executable (default: the --agent-cli name looked up on PATH)"},
    {"--optimization-mode", OFF(optimization_mode), modes, 0, 0, K_CHOICE, 0, "MODE",
     "leaderboard (default) or production (fail-closed policy, V1 by default)"},
    {"--framework-baseline", OFF(framework_baseline), baselines, 0, 0, K_CHOICE, 0, "WHEN",
     "V1 framework-native baseline: auto (production only, default), always, never"},
    {"--framework-baseline-timeout", OFF(framework_baseline_timeout), NULL, 1, BIG, K_LONG, 0,
     "S", "V1 agent session timeout in seconds (default 10800)"},
    {"--agent-timeout", OFF(agent_timeout), NULL, 0, BIG, K_LONG, 0, "S",
     "wall-clock limit of each episode agent invocation in seconds; a timed-out turn is "
     "resumed like a missing handoff (default 0: none, as upstream)"},
    {"--max-iters", OFF(max_iters), NULL, 0, 1e6, K_INT, 0, "N",
     "stop when the highest canonical version memory/v<N>.json reaches N (default 20)"},
    {"--fast-episodes", OFF(fast_episodes), NULL, 0, 1e6, K_INT, 0, "N",
     "the first N episodes are fast episodes (default 2; 0 disables)"},
    {"--fast-trials", OFF(fast_trials), NULL, 1, 1000, K_INT, 0, "N",
     "plan-implement-evaluate trials per fast episode (default 5)"},
    {"--token-budget", OFF(token_budget), NULL, 0, 9e18, K_LL, 0, "N",
     "stop once agent sessions used N tokens in total (default 0: no cap)"},
    {"--target-util", OFF(target_util), NULL, 0, 100, K_DBL, 0, "PCT",
     "stop when a promoted kernel reaches PCT% of the roofline peak (default 90; 0 off)"},
    {"--max-stall", OFF(max_stall), NULL, 0, 1e6, K_INT, 0, "N",
     "stop after N consecutive episodes without promotion (default 0: off)"},
    {"--convert-after", OFF(convert_after), NULL, 0, 1e6, K_INT, 0, "N",
     "Triton: latch a Triton-to-Gluon conversion after N stalled episodes (default 3; 0 off)"},
    {"--goal-after-episodes", OFF(goal_after_episodes), NULL, 0, 1e6, K_INT, 0, "N",
     "goal episodes need at least N completed episodes (default 50)"},
    {"--goal-after-stalls", OFF(goal_after_stalls), NULL, 0, 1e6, K_INT, 0, "N",
     "... and more than N consecutive unpromoted episodes (default 3)"},
    {"--goal", OFF(goal), NULL, 0, 0, K_STR, 0, "TEXT",
     "the restructuring goal given to goal episodes (default: a broad rewrite brief)"},
    {"--handoff-resumes", OFF(handoff_resumes), NULL, 0, AKA_AGENT_MAX_HANDOFF_RESUMES, K_INT, 0,
     "N", "same-session repair turns after an incomplete handoff (default 2, at most 32; goal "
     "episodes get at least 20)"},
    {"--verify-repeats", OFF(verify_repeats), NULL, 1, 1000, K_INT, 0, "N",
     "ABBA repeat pairs (I C C I) in full verification (default 2)"},
    {"--verify-run-timeout", OFF(verify_run_timeout), NULL, 1, 1e6, K_INT, 0, "S",
     "evaluator budget per ABBA run in seconds (default 120)"},
    {"--min-improvement-pct", OFF(min_improvement_pct), NULL, 0, 100, K_DBL, 1, "PCT",
     "promotion needs an improvement strictly above PCT (CI lower bound; default 0)"},
    {"--max-shape-regression-pct", OFF(max_shape_regression_pct), NULL, 0, 100, K_DBL, 1, "PCT",
     "production: no shape may get slower by more than PCT% (default 5)"},
    {"--max-dispersion-pct", OFF(max_dispersion_pct), NULL, 0, 100, K_DBL, 0, "PCT",
     "reject verification whose run-to-run dispersion exceeds PCT% (default 10)"},
    {"--setup-timeout", OFF(setup_timeout), NULL, 1, BIG, K_LONG, 0, "S",
     "setup-session timeout in seconds (default 7200)"},
    {"--production-review-timeout", OFF(production_review_timeout), NULL, 1, BIG, K_LONG, 0,
     "S", "production policy reviewer timeout in seconds (default 600)"},
    {"--workspace", OFF(workspace), NULL, 0, 0, K_STR, 0, "DIR",
     "parent directory of the campaign workspace (default: the current directory)"},
    {"--workspace-suffix", OFF(workspace_suffix), NULL, 0, 0, K_STR, 0, "S",
     "internal (set by multi-framework dispatch); must already be a slug"},
    {"--arch", OFF(arch), NULL, 0, 0, K_STR, 0, "ARCH",
     "architecture (sm_NN, gfxNNN, zwm890p) instead of the platform table's; checked "
     "against the vendor"},
    {"--notes", OFF(notes), NULL, 0, 0, K_STR, 0, "TEXT",
     "free-text constraints put into every brief (default none)"},
    {"--agent-sandbox", OFF(agent_sandbox), isolations, 0, 0, K_CHOICE, 0, "M",
     "agent CLI under Bubblewrap: bwrap (default; its worktree writable, the campaign view "
     "read-only, no canonical workspace, operator or home) or none (unsafe; recorded)"},
    {"--agent-read-only-path", OFF(agent_read_only_paths), NULL, 0, 0, K_LIST, 0, "PATH",
     "also show PATH read-only inside the agent sandbox (repeatable)"},
    {"--agent-writable-path", OFF(agent_writable_paths), NULL, 0, 0, K_LIST, 0, "PATH",
     "also show PATH writable inside the agent sandbox (repeatable)"},
    {"--sandbox", OFF(sandbox), sandboxes, 0, 0, K_CHOICE, 0, "T",
     "evaluation transport: local (default), ssh, gateway, slurm"},
    {"--sandbox-isolation", OFF(sandbox_isolation), isolations, 0, 0, K_CHOICE, 0, "M",
     "local jobs: bwrap (default) or none (recorded in every result)"},
    {"--sandbox-url", OFF(sandbox_url), NULL, 0, 0, K_STR, 0, "URL",
     "gateway URL (implies --sandbox gateway)"},
    {"--sandbox-profile", OFF(sandbox_profile), profiles, 0, 0, K_CHOICE, 0, "P",
     "gateway endpoint profile (pre, prod); exclusive with --sandbox-url"},
    {"--sandbox-hardware", OFF(sandbox_hardware), NULL, 0, 0, K_STR, 0, "H",
     "scheduler hardware token (default: --platform)"},
    {"--sandbox-timeout", OFF(sandbox_timeout), NULL, 1, 600, K_INT, 0, "S",
     "per-job execution limit in seconds, 1..600 (default 600)"},
    {"--sandbox-ssh", OFF(sandbox_ssh), NULL, 0, 0, K_STR, 0, "USER@HOST",
     "run evaluations on this host over OpenSSH (implies --sandbox ssh)"},
    {"--sandbox-ssh-gpu", OFF(sandbox_ssh_gpu), NULL, 0, 31, K_INT, 0, "N",
     "the remote GPU index, 0..31 (required with ssh)"},
    {"--sandbox-ssh-runtime-bind", OFF(sandbox_ssh_runtime_binds), NULL, 0, 0, K_LIST, 0,
     "SRC[=DST]", "remote runtime directory bound read-only into jobs (repeatable)"},
    {"--sandbox-ssh-init", OFF(sandbox_ssh_init), NULL, 0, 0, K_STR, 0, "CMD",
     "shell command run on the remote host before each job"},
    {"--sandbox-health-command", OFF(sandbox_health_command), NULL, 0, 0, K_STR, 0, "CMD",
     "GPU health probe (ssh); failure stops the campaign with exit 75"},
    {"--environment-poll-interval", OFF(environment_poll_interval), NULL, 1, 1e6, K_INT, 0, "S",
     "health poll interval of the recovery monitor (default 60)"},
    {"--slurm-partition", OFF(slurm_partition), NULL, 0, 0, K_STR, 0, "P",
     "slurm partition (required with --sandbox slurm)"},
    {"--slurm-account", OFF(slurm_account), NULL, 0, 0, K_STR, 0, "A", "slurm account"},
    {"--slurm-qos", OFF(slurm_qos), NULL, 0, 0, K_STR, 0, "Q", "slurm quality of service"},
    {"--slurm-time", OFF(slurm_time), NULL, 0, 0, K_STR, 0, "T", "slurm time limit per job"},
    {NULL, 0, NULL, 0, 0, K_STR, 0, NULL, NULL},
};
/* clang-format on */

void aka_optimize_opts_init(struct aka_optimize_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->framework = "";
    o->agent_cli = "claude";
    o->agent_cli_path = "";
    o->optimization_mode = "leaderboard";
    o->framework_baseline = "auto";
    o->framework_baseline_timeout = 10800;
    o->max_iters = 20;
    o->fast_episodes = 2;
    o->fast_trials = 5;
    o->target_util = 90.0;
    o->convert_after = 3;
    o->goal_after_episodes = 50;
    o->goal_after_stalls = 3;
    o->handoff_resumes = 2;
    o->verify_repeats = 2;
    o->verify_run_timeout = 120;
    o->max_shape_regression_pct = 5.0;
    o->max_dispersion_pct = 10.0;
    o->setup_timeout = 7200;
    o->production_review_timeout = 600;
    o->workspace = "";
    o->workspace_suffix = "";
    o->notes = "none";
    o->sandbox = "local";
    o->sandbox_isolation = "bwrap";
    o->agent_sandbox = "bwrap";
    o->sandbox_timeout = 600;
    o->sandbox_ssh_gpu = -1;
    o->environment_poll_interval = 60;
}

void aka_optimize_opts_release(struct aka_optimize_opts *o)
{
    strvec_clear(&o->sandbox_ssh_runtime_binds);
    strvec_clear(&o->agent_read_only_paths);
    strvec_clear(&o->agent_writable_paths);
}

static void *field(struct aka_optimize_opts *o, const struct flag *f)
{
    return (char *)o + f->off;
}

static int bad_number(const struct flag *f, const char *v, struct aka_err *err)
{
    const char *what = f->kind == K_DBL ? "a number" : "an integer";
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected %s in [%g, %g%s; got '%s'", f->name, what,
                       f->lo, f->hi, f->hi_open ? ")" : "]", v);
}

/* Strict numeric parse with the flag's range; no trailing junk, no NaN. */
static int set_number(struct aka_optimize_opts *o, const struct flag *f, const char *v,
                      struct aka_err *err)
{
    char *end = NULL;
    double d;
    errno = 0;
    if (f->kind == K_DBL) {
        d = strtod(v, &end);
    } else {
        long long ll = strtoll(v, &end, 10);
        d = (double)ll;
    }
    if (errno || end == v || *end || !isfinite(d) || d < f->lo || d > f->hi ||
        (f->hi_open && d >= f->hi))
        return bad_number(f, v, err);
    if (f->kind == K_INT)
        *(int *)field(o, f) = (int)d;
    else if (f->kind == K_LONG)
        *(long *)field(o, f) = (long)d;
    else if (f->kind == K_LL)
        *(long long *)field(o, f) = strtoll(v, NULL, 10);
    else
        *(double *)field(o, f) = d;
    return 0;
}

static int set_choice(struct aka_optimize_opts *o, const struct flag *f, const char *v,
                      struct aka_err *err)
{
    /* Frameworks match case-insensitively (upstream accepts "triton"); the
     * canonical spelling is what the campaign records. */
    bool nocase = f->choices == frameworks;
    for (int i = 0; f->choices[i]; i++) {
        if (nocase ? strcasecmp(v, f->choices[i]) == 0 : strcmp(v, f->choices[i]) == 0) {
            *(const char **)field(o, f) = f->choices[i];
            return 0;
        }
    }
    if (nocase && !*v) {
        *(const char **)field(o, f) = "";
        return 0;
    }
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; f->choices[i]; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", f->choices[i]);
    aka_err_set(err, AKA_EXIT_USAGE, "%s: expected one of %s; got '%s'", f->name, sb.buf, v);
    strbuf_release(&sb);
    return -1;
}

static int set_value(struct aka_optimize_opts *o, const struct flag *f, const char *v,
                     struct aka_err *err)
{
    switch (f->kind) {
    case K_STR:
        *(const char **)field(o, f) = v;
        return 0;
    case K_CHOICE:
        return set_choice(o, f, v, err);
    case K_LIST:
        strvec_push((struct strvec *)field(o, f), v);
        return 0;
    default:
        return set_number(o, f, v, err);
    }
}

static const struct flag *find_flag(const char *arg, size_t len)
{
    for (const struct flag *f = flags; f->name; f++)
        if (strlen(f->name) == len && strncmp(f->name, arg, len) == 0)
            return f;
    return NULL;
}

/* One argument (and its value): "--flag VALUE" or "--flag=VALUE". */
static int parse_one(int argc, char **argv, int *i, struct aka_optimize_opts *o,
                     struct aka_err *err)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        o->help = true;
        return 0;
    }
    if (strncmp(arg, "--", 2) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "unexpected argument '%s' (every value follows its flag; see "
                           "aka optimize --help)",
                           arg);
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const struct flag *f = find_flag(arg, len);
    if (!f)
        return aka_err_set(err, AKA_EXIT_USAGE, "%.*s: unknown flag (see aka optimize --help)",
                           (int)len, arg);
    const char *v = eq ? eq + 1 : NULL;
    if (!v) {
        if (*i + 1 >= argc)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value (%s)", f->name,
                               f->metavar);
        v = argv[++*i];
    }
    o->given[f - flags] = true;
    return set_value(o, f, v, err);
}

int aka_optimize_opts_parse(int argc, char **argv, struct aka_optimize_opts *o, struct aka_err *err)
{
    for (int i = 1; i < argc; i++)
        if (parse_one(argc, argv, &i, o, err) < 0)
            return -1;
    if (o->help)
        return 0;
    return aka_optimize_opts_validate(o, err);
}

bool aka_optimize_opt_given(const struct aka_optimize_opts *o, const char *flag)
{
    const struct flag *f = find_flag(flag, strlen(flag));
    return f && o->given[f - flags];
}

bool aka_optimize_is_production(const struct aka_optimize_opts *o)
{
    return strcmp(o->optimization_mode, "production") == 0;
}

void aka_optimize_print_help(FILE *out)
{
    fprintf(out, "usage: aka optimize [--repo-root DIR] [--] --op-dir DIR --platform P [flags]\n"
                 "\n"
                 "Run an optimization campaign: a measured V0 baseline, an optional V1\n"
                 "framework baseline, then agent episodes in Git worktrees whose candidates\n"
                 "the supervisor verifies before it promotes them. Rerunning the same command\n"
                 "resumes the campaign. orchestrator/optimize.py FLAGS is the same as\n"
                 "aka optimize -- FLAGS.\n\n");
    for (const struct flag *f = flags; f->name; f++) {
        char head[64];
        snprintf(head, sizeof(head), "%s %s", f->name, f->metavar);
        fprintf(out, "  %-34s %s\n", head, f->help);
        if (f->kind == K_CHOICE) {
            fprintf(out, "  %-34s choices:", "");
            for (int i = 0; f->choices[i]; i++)
                fprintf(out, " %s", f->choices[i]);
            fputc('\n', out);
        }
    }
    fprintf(out, "\nexit status: 0 done (a budget or goal stopped the campaign), 1 campaign\n"
                 "failed, 2 usage error (nothing written), 75 environment unavailable,\n"
                 "130 interrupted.\n");
}
