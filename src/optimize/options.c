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
static const char *const frameworks[] = {"Triton",   "Gluon", "CuteDSL", "Cuda", "FlyDSL",
                                         "TileLang", "C",     "PyTorch", NULL};
static const char *const isolations[] = {"bwrap", "none", NULL};
static const char *const agent_evals[] = {"auto", "sandbox", "broker", NULL};

#define OFF(f) offsetof(struct aka_optimize_opts, f)
#define BIG    1e15

static const struct aka_opt flags[] = {
    {.name = "--op-dir",
     .off = OFF(op_dir),
     .kind = AKA_OPT_STR,
     .metavar = "DIR",
     .help = "operator directory (aka native, Atrex-Bench or SOL-ExecBench layout); required"},
    {.name = "--platform",
     .off = OFF(platform),
     .kind = AKA_OPT_STR,
     .metavar = "P",
     .help = "target: cpu, a product (H20, H200, MI308X, ...), sm_NN, gfxNNN, nvidia/<gpu>; "
             "names the workspace; required; only cpu and H200 are validated on hardware, "
             "every other platform is not validated on hardware (docs/platforms.md)"},
    {.name = "--framework",
     .off = OFF(framework),
     .kind = AKA_OPT_CHOICE,
     .choices = frameworks,
     .def = "",
     .nocase = true,
     .metavar = "F",
     .help = "kernel framework; empty: one child campaign per framework the vendor supports; "
             "PyTorch only with --platform cpu, as the stand-in of a distributed operator "
             "(docs/platforms.md)"},
    {.name = "--agent-cli",
     .off = OFF(agent_cli),
     .kind = AKA_OPT_CHOICE,
     .choices = agents,
     .def = "claude",
     .metavar = "CLI",
     .help = "agent for V1 and episodes; builtin is the mechanical tuner"},
    {.name = "--agent-cli-path",
     .off = OFF(agent_cli_path),
     .kind = AKA_OPT_STR,
     .def = "",
     .metavar = "PATH",
     .help = "the agent CLI executable (default: the --agent-cli name looked up on PATH)"},
    {.name = "--optimization-mode",
     .off = OFF(optimization_mode),
     .kind = AKA_OPT_CHOICE,
     .choices = modes,
     .def = "leaderboard",
     .metavar = "MODE",
     .help = "leaderboard or production (fail-closed policy, V1 by default)"},
    {.name = "--framework-baseline",
     .off = OFF(framework_baseline),
     .kind = AKA_OPT_CHOICE,
     .choices = baselines,
     .def = "auto",
     .metavar = "WHEN",
     .help = "V1 framework-native baseline: auto (production only), always, never"},
    {.name = "--framework-baseline-timeout",
     .off = OFF(framework_baseline_timeout),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = BIG,
     .def = "10800",
     .metavar = "S",
     .help = "V1 agent session timeout in seconds"},
    {.name = "--agent-timeout",
     .off = OFF(agent_timeout),
     .kind = AKA_OPT_LONG,
     .lo = 0,
     .hi = BIG,
     .def = "0",
     .metavar = "S",
     .help = "wall-clock limit of each episode agent invocation in seconds; a timed-out turn "
             "is resumed like a missing handoff (0: none, as upstream)"},
    {.name = "--max-iters",
     .off = OFF(max_iters),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "20",
     .metavar = "N",
     .help = "stop when the highest canonical version memory/v<N>.json reaches N"},
    {.name = "--fast-episodes",
     .off = OFF(fast_episodes),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "2",
     .metavar = "N",
     .help = "the first N episodes are fast episodes (0 disables)"},
    {.name = "--fast-trials",
     .off = OFF(fast_trials),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1000,
     .def = "5",
     .metavar = "N",
     .help = "plan-implement-evaluate trials per fast episode"},
    {.name = "--token-budget",
     .off = OFF(token_budget),
     .kind = AKA_OPT_LL,
     .lo = 0,
     .hi = 9e18,
     .def = "0",
     .metavar = "N",
     .help = "stop once agent sessions used N tokens in total (0: no cap)"},
    {.name = "--target-util",
     .off = OFF(target_util),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 100,
     .def = "90",
     .metavar = "PCT",
     .help = "stop when a promoted kernel reaches PCT% of the roofline peak (0 off)"},
    {.name = "--max-stall",
     .off = OFF(max_stall),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "0",
     .metavar = "N",
     .help = "stop after N consecutive episodes without promotion (0: off)"},
    {.name = "--convert-after",
     .off = OFF(convert_after),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "3",
     .metavar = "N",
     .help = "Triton: latch a Triton-to-Gluon conversion after N stalled episodes (0 off)"},
    {.name = "--goal-after-episodes",
     .off = OFF(goal_after_episodes),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "50",
     .metavar = "N",
     .help = "goal episodes need at least N completed episodes"},
    {.name = "--goal-after-stalls",
     .off = OFF(goal_after_stalls),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = 1e6,
     .def = "3",
     .metavar = "N",
     .help = "... and more than N consecutive unpromoted episodes"},
    {.name = "--goal",
     .off = OFF(goal),
     .kind = AKA_OPT_STR,
     .metavar = "TEXT",
     .help = "the restructuring goal given to goal episodes (default: a broad rewrite brief)"},
    {.name = "--handoff-resumes",
     .off = OFF(handoff_resumes),
     .kind = AKA_OPT_INT,
     .lo = 0,
     .hi = AKA_AGENT_MAX_HANDOFF_RESUMES,
     .def = "2",
     .metavar = "N",
     .help = "same-session repair turns after an incomplete handoff (at most 32; goal episodes "
             "get at least 20)"},
    {.name = "--verify-repeats",
     .off = OFF(verify_repeats),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1000,
     .def = "2",
     .metavar = "N",
     .help = "I C C I blocks in full verification, 4 runs each; upstream's --verify-repeats 2 "
             "is one block: docs/campaign.md)"},
    {.name = "--verify-run-timeout",
     .off = OFF(verify_run_timeout),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1e6,
     .def = "120",
     .metavar = "S",
     .help = "evaluator budget per ABBA run in seconds"},
    {.name = "--min-improvement-pct",
     .off = OFF(min_improvement_pct),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 100,
     .hi_open = true,
     .def = "0",
     .metavar = "PCT",
     .help = "promotion needs an improvement strictly above PCT (CI lower bound)"},
    {.name = "--max-shape-regression-pct",
     .off = OFF(max_shape_regression_pct),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 100,
     .hi_open = true,
     .def = "5",
     .metavar = "PCT",
     .help = "production: no shape may get slower by more than PCT%"},
    {.name = "--max-dispersion-pct",
     .off = OFF(max_dispersion_pct),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 100,
     .def = "10",
     .metavar = "PCT",
     .help = "reject verification whose run-to-run dispersion exceeds PCT%"},
    {.name = "--production-review-timeout",
     .off = OFF(production_review_timeout),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = BIG,
     .def = "600",
     .metavar = "S",
     .help = "production policy reviewer timeout in seconds"},
    {.name = "--production-without-reviewer",
     .off = OFF(production_without_reviewer),
     .kind = AKA_OPT_BOOL,
     .help = "production: promote on the deterministic source policy alone when no policy "
             "reviewer can run (the built-in agent has none); recorded in the campaign"},
    {.name = "--generalized",
     .off = OFF(generalized),
     .kind = AKA_OPT_BOOL,
     .help = "production: keep the evaluator's shapes private; the agent works on the public "
             "problem of the operator's agent_problem.json and reads masked results only "
             "(native operators; pinned in the campaign)"},
    {.name = "--workspace",
     .off = OFF(workspace),
     .kind = AKA_OPT_STR,
     .def = "",
     .metavar = "DIR",
     .help = "parent directory of the campaign workspace (default: the current directory)"},
    {.name = "--workspace-suffix",
     .off = OFF(workspace_suffix),
     .kind = AKA_OPT_STR,
     .def = "",
     .metavar = "S",
     .help = "internal (set by multi-framework dispatch); must already be a slug"},
    {.name = "--arch",
     .off = OFF(arch),
     .kind = AKA_OPT_STR,
     .metavar = "ARCH",
     .help = "architecture (sm_NN, gfxNNN, zwm890p) instead of the platform table's; checked "
             "against the vendor"},
    {.name = "--notes",
     .off = OFF(notes),
     .kind = AKA_OPT_STR,
     .def = "none",
     .metavar = "TEXT",
     .help = "free-text constraints put into every brief"},
    {.name = "--agent-sandbox",
     .off = OFF(agent_sandbox),
     .kind = AKA_OPT_CHOICE,
     .choices = isolations,
     .def = "bwrap",
     .metavar = "M",
     .help = "agent CLI under Bubblewrap: bwrap (its worktree writable, the campaign view "
             "read-only, no canonical workspace, operator or home) or none (unsafe; recorded)"},
    {.name = "--agent-eval",
     .off = OFF(agent_eval),
     .kind = AKA_OPT_CHOICE,
     .choices = agent_evals,
     .def = "auto",
     .metavar = "WHERE",
     .help = "where the agent's own `aka eval` and `aka profile` run in a campaign on this host: "
             "broker (the "
             "supervisor runs it as one of its own jobs; the agent sandbox holds no GPU), "
             "sandbox (a job nested in the agent sandbox, which then holds the GPU: on the "
             "lent H100 the CUDA driver refused such a job, error 304) or auto: broker on a "
             "GPU platform, sandbox on the CPU. Campaigns over ssh, Slurm or a gateway always "
             "broker"},
    {.name = "--agent-read-only-path",
     .off = OFF(agent_read_only_paths),
     .kind = AKA_OPT_LIST,
     .metavar = "PATH",
     .help = "also show PATH read-only inside the agent sandbox"},
    {.name = "--agent-writable-path",
     .off = OFF(agent_writable_paths),
     .kind = AKA_OPT_LIST,
     .metavar = "PATH",
     .help = "also show PATH writable inside the agent sandbox"},
    {.name = "--sandbox-timeout",
     .off = OFF(sandbox_timeout),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 600,
     .def = "600",
     .metavar = "S",
     .help = "per-job execution limit in seconds, 1..600"},
    {.name = "--environment-poll-interval",
     .off = OFF(environment_poll_interval),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1e6,
     .def = "60",
     .metavar = "S",
     .help = "health poll interval of the recovery monitor"},
    {.name = "--no-auto-recovery",
     .off = OFF(no_auto_recovery),
     .kind = AKA_OPT_BOOL,
     .help = "on exit 75 (environment unavailable), start no recovery monitor"},
    {.name = NULL},
};

void aka_optimize_opts_init(struct aka_optimize_opts *o)
{
    memset(o, 0, sizeof(*o));
    aka_opt_defaults(flags, o);
    aka_transport_opts_init(&o->transport);
}

void aka_optimize_opts_release(struct aka_optimize_opts *o)
{
    aka_transport_opts_release(&o->transport);
    strvec_clear(&o->agent_read_only_paths);
    strvec_clear(&o->agent_writable_paths);
}

/* The campaign's own flags, then the transport flags (sandbox.h's table, shared
 * with `aka eval` and `aka sandbox run`). groups must have room for three. */
static void command(struct aka_optimize_opts *o, struct aka_opt_group *groups,
                    struct aka_opt_cmd *c)
{
    groups[0] = (struct aka_opt_group){flags, o, o->given, NULL, false};
    groups[1] = aka_transport_opts_group(
        &o->transport, "evaluation transport (the same flags as aka eval and aka sandbox run)");
    groups[2] = (struct aka_opt_group){0};
    static const struct aka_opt_doc doc = {"optimize", NULL, NULL};
    *c = (struct aka_opt_cmd){.doc = &doc, .groups = groups, .help = &o->help};
}

int aka_optimize_opts_parse(int argc, char **argv, struct aka_optimize_opts *o, struct aka_err *err)
{
    struct aka_opt_group groups[3];
    struct aka_opt_cmd c;
    command(o, groups, &c);
    if (aka_opts_parse(&c, argc, argv, 1, err) < 0)
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
    struct aka_optimize_opts o;
    struct aka_opt_group groups[3];
    struct aka_opt_cmd c;
    aka_optimize_opts_init(&o);
    command(&o, groups, &c);
    aka_opts_print_help(&c, out);
    aka_optimize_opts_release(&o);
    fprintf(out, "\nexit status: 0 done (a budget or goal stopped the campaign), 1 campaign\n"
                 "failed, 2 usage error (nothing written), 75 environment unavailable (also:\n"
                 "a transport this build does not have yet), 130 interrupted.\n");
}
