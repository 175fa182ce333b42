/*
 * options.c — the `aka optimize` flag table: parsing, defaults, validation, --help.
 *
 * One table (rows of base/opts.h) drives everything, so a flag cannot be parsed
 * without help text or validated against a range its help does not state; the
 * transport flags are the shared table of sandbox.h, consulted first, so `aka
 * optimize`, `aka eval` and `aka sandbox run` parse them alike. Values are checked
 * one by one (ranges, choices), then in combination (options_check.c: the
 * transport, the ABBA allocation-fit rule); the first problem is a usage error
 * naming the flag.
 */
#include "agents/agents.h"
#include "base/opts.h"
#include "optimize/optimize.h"

#include <string.h>

static const char *const modes[] = {"leaderboard", "production", NULL};
static const char *const agents[] = {"claude", "qodercli", "codex", "pi", "builtin", NULL};
static const char *const baselines[] = {"auto", "always", "never", NULL};
static const char *const frameworks[] = {"Triton", "Gluon",    "CuteDSL", "Cuda",
                                         "FlyDSL", "TileLang", "C",       NULL};
static const char *const isolations[] = {"bwrap", "none", NULL};

#define OFF(f) offsetof(struct aka_optimize_opts, f)
#define BIG    1e15

/* clang-format off */
static const struct aka_opt flags[] = {
    {"--op-dir", OFF(op_dir), NULL, 0, 0, AKA_OPT_STR, 0, "DIR",
     "operator directory (aka native, Atrex-Bench or SOL-ExecBench layout); required", NULL, false},
    {"--platform", OFF(platform), NULL, 0, 0, AKA_OPT_STR, 0, "P",
     "target: cpu, a product (H20, H200, MI308X, ...), sm_NN, gfxNNN, nvidia/<gpu>; "
     "names the workspace; required; only cpu and H200 are validated on hardware, every "
     "other platform is not validated on hardware (docs/platforms.md)", NULL, false},
    {"--framework", OFF(framework), frameworks, 0, 0, AKA_OPT_CHOICE, 0, "F",
     "kernel framework; empty: one child campaign per framework the vendor supports", NULL, true},
    {"--agent-cli", OFF(agent_cli), agents, 0, 0, AKA_OPT_CHOICE, 0, "CLI",
     "agent for V1 and episodes (default claude); builtin is the mechanical tuner", NULL, false},
    {"--agent-cli-path", OFF(agent_cli_path), NULL, 0, 0, AKA_OPT_STR, 0, "PATH",
     "the agent CLI executable (default: the --agent-cli name looked up on PATH)", NULL, false},
    {"--optimization-mode", OFF(optimization_mode), modes, 0, 0, AKA_OPT_CHOICE, 0, "MODE",
     "leaderboard (default) or production (fail-closed policy, V1 by default)", NULL, false},
    {"--framework-baseline", OFF(framework_baseline), baselines, 0, 0, AKA_OPT_CHOICE, 0, "WHEN",
     "V1 framework-native baseline: auto (production only, default), always, never", NULL, false},
    {"--framework-baseline-timeout", OFF(framework_baseline_timeout), NULL, 1, BIG, AKA_OPT_LONG, 0,
     "S", "V1 agent session timeout in seconds (default 10800)", NULL, false},
    {"--agent-timeout", OFF(agent_timeout), NULL, 0, BIG, AKA_OPT_LONG, 0, "S",
     "wall-clock limit of each episode agent invocation in seconds; a timed-out turn is "
     "resumed like a missing handoff (default 0: none, as upstream)", NULL, false},
    {"--max-iters", OFF(max_iters), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "stop when the highest canonical version memory/v<N>.json reaches N (default 20)", NULL, false},
    {"--fast-episodes", OFF(fast_episodes), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "the first N episodes are fast episodes (default 2; 0 disables)", NULL, false},
    {"--fast-trials", OFF(fast_trials), NULL, 1, 1000, AKA_OPT_INT, 0, "N",
     "plan-implement-evaluate trials per fast episode (default 5)", NULL, false},
    {"--token-budget", OFF(token_budget), NULL, 0, 9e18, AKA_OPT_LL, 0, "N",
     "stop once agent sessions used N tokens in total (default 0: no cap)", NULL, false},
    {"--target-util", OFF(target_util), NULL, 0, 100, AKA_OPT_DBL, 0, "PCT",
     "stop when a promoted kernel reaches PCT% of the roofline peak (default 90; 0 off)", NULL, false},
    {"--max-stall", OFF(max_stall), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "stop after N consecutive episodes without promotion (default 0: off)", NULL, false},
    {"--convert-after", OFF(convert_after), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "Triton: latch a Triton-to-Gluon conversion after N stalled episodes (default 3; 0 off)", NULL, false},
    {"--goal-after-episodes", OFF(goal_after_episodes), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "goal episodes need at least N completed episodes (default 50)", NULL, false},
    {"--goal-after-stalls", OFF(goal_after_stalls), NULL, 0, 1e6, AKA_OPT_INT, 0, "N",
     "... and more than N consecutive unpromoted episodes (default 3)", NULL, false},
    {"--goal", OFF(goal), NULL, 0, 0, AKA_OPT_STR, 0, "TEXT",
     "the restructuring goal given to goal episodes (default: a broad rewrite brief)", NULL, false},
    {"--handoff-resumes", OFF(handoff_resumes), NULL, 0, AKA_AGENT_MAX_HANDOFF_RESUMES, AKA_OPT_INT, 0,
     "N", "same-session repair turns after an incomplete handoff (default 2, at most 32; goal "
     "episodes get at least 20)", NULL, false},
    {"--verify-repeats", OFF(verify_repeats), NULL, 1, 1000, AKA_OPT_INT, 0, "N",
     "I C C I blocks in full verification, 4 runs each (default 2; upstream's --verify-repeats "
     "2 is one block: docs/campaign.md)", NULL, false},
    {"--verify-run-timeout", OFF(verify_run_timeout), NULL, 1, 1e6, AKA_OPT_INT, 0, "S",
     "evaluator budget per ABBA run in seconds (default 120)", NULL, false},
    {"--min-improvement-pct", OFF(min_improvement_pct), NULL, 0, 100, AKA_OPT_DBL, 1, "PCT",
     "promotion needs an improvement strictly above PCT (CI lower bound; default 0)", NULL, false},
    {"--max-shape-regression-pct", OFF(max_shape_regression_pct), NULL, 0, 100, AKA_OPT_DBL, 1, "PCT",
     "production: no shape may get slower by more than PCT% (default 5)", NULL, false},
    {"--max-dispersion-pct", OFF(max_dispersion_pct), NULL, 0, 100, AKA_OPT_DBL, 0, "PCT",
     "reject verification whose run-to-run dispersion exceeds PCT% (default 10)", NULL, false},
    {"--production-review-timeout", OFF(production_review_timeout), NULL, 1, BIG, AKA_OPT_LONG, 0,
     "S", "production policy reviewer timeout in seconds (default 600)", NULL, false},
    {"--workspace", OFF(workspace), NULL, 0, 0, AKA_OPT_STR, 0, "DIR",
     "parent directory of the campaign workspace (default: the current directory)", NULL, false},
    {"--workspace-suffix", OFF(workspace_suffix), NULL, 0, 0, AKA_OPT_STR, 0, "S",
     "internal (set by multi-framework dispatch); must already be a slug", NULL, false},
    {"--arch", OFF(arch), NULL, 0, 0, AKA_OPT_STR, 0, "ARCH",
     "architecture (sm_NN, gfxNNN, zwm890p) instead of the platform table's; checked "
     "against the vendor", NULL, false},
    {"--notes", OFF(notes), NULL, 0, 0, AKA_OPT_STR, 0, "TEXT",
     "free-text constraints put into every brief (default none)", NULL, false},
    {"--agent-sandbox", OFF(agent_sandbox), isolations, 0, 0, AKA_OPT_CHOICE, 0, "M",
     "agent CLI under Bubblewrap: bwrap (default; its worktree writable, the campaign view "
     "read-only, no canonical workspace, operator or home) or none (unsafe; recorded)", NULL, false},
    {"--agent-read-only-path", OFF(agent_read_only_paths), NULL, 0, 0, AKA_OPT_LIST, 0, "PATH",
     "also show PATH read-only inside the agent sandbox (repeatable)", NULL, false},
    {"--agent-writable-path", OFF(agent_writable_paths), NULL, 0, 0, AKA_OPT_LIST, 0, "PATH",
     "also show PATH writable inside the agent sandbox (repeatable)", NULL, false},
    {"--sandbox-timeout", OFF(sandbox_timeout), NULL, 1, 600, AKA_OPT_INT, 0, "S",
     "per-job execution limit in seconds, 1..600 (default 600)", NULL, false},
    {"--environment-poll-interval", OFF(environment_poll_interval), NULL, 1, 1e6, AKA_OPT_INT, 0, "S",
     "health poll interval of the recovery monitor (default 60)", NULL, false},
    {NULL, 0, NULL, 0, 0, AKA_OPT_STR, 0, NULL, NULL, NULL, false},
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
    o->production_review_timeout = 600;
    o->workspace = "";
    o->workspace_suffix = "";
    o->notes = "none";
    o->agent_sandbox = "bwrap";
    o->sandbox_timeout = 600;
    o->environment_poll_interval = 60;
    aka_transport_opts_init(&o->transport);
}

void aka_optimize_opts_release(struct aka_optimize_opts *o)
{
    aka_transport_opts_release(&o->transport);
    strvec_clear(&o->agent_read_only_paths);
    strvec_clear(&o->agent_writable_paths);
}

/* One argument (and its value): a transport flag (sandbox.h's table, shared with
 * `aka eval` and `aka sandbox run`) or one of the campaign's own. */
static int parse_one(int argc, char **argv, int *i, struct aka_optimize_opts *o,
                     struct aka_err *err)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
        o->help = true;
        return 0;
    }
    if (strncmp(arg, "--", 2) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "unexpected argument '%s' (every value follows its flag; see "
                           "aka optimize --help)",
                           arg);
    int hit = aka_transport_opts_parse_one(&o->transport, argc, argv, i, err);
    if (hit == 0)
        hit = aka_opt_parse_one(flags, o, o->given, argc, argv, i, err);
    if (hit < 0)
        return -1;
    if (hit == 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%.*s: unknown flag (see aka optimize --help)",
                           (int)strcspn(arg, "="), arg);
    return 0;
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
    return aka_opt_given(flags, o->given, flag) || aka_transport_opt_given(&o->transport, flag);
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
    aka_opt_print_help(flags, out);
    fprintf(out, "\nevaluation transport (the same flags as aka eval and aka sandbox run):\n");
    aka_transport_opts_print_help(out);
    fprintf(out, "\nexit status: 0 done (a budget or goal stopped the campaign), 1 campaign\n"
                 "failed, 2 usage error (nothing written), 75 environment unavailable (also:\n"
                 "a transport this build does not have yet), 130 interrupted.\n");
}
