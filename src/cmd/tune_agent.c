/*
 * tune_agent.c — `aka tune-agent`: the built-in tuner as an agent process
 * (DESIGN §9). The agents runtime starts it as `aka tune-agent --brief FILE
 * --effort E` in the episode worktree, with the campaign environment; this file
 * only parses flags and calls agents/tuner.h.
 */
#include "agents/tuner.h"
#include "base/fs.h"
#include "cmd/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka tune-agent --brief FILE [options]\n"
    "\n"
    "The built-in agent: searches the knobs the kernel declares in comments\n"
    "(aka:tune NAME in {v1, v2, ...}) by calling `aka eval`, journals every trial,\n"
    "commits the best configuration as the kernel's defaults and hands off\n"
    "(candidate_ready, or pivot when nothing beat the incumbent or the space is\n"
    "exhausted). Runs inside an episode: ATREX_AKA_WORKSPACE must be set.\n"
    "\n"
    "  --brief FILE              the episode brief (kind, episode, memory version)\n"
    "  --worktree DIR            default $ATREX_AKA_WORKTREE, else the current directory\n"
    "  --episode-kind K          fast, full or goal (default: the brief's title)\n"
    "  --trials N                trials per episode (default: in a fast episode\n"
    "                            $ATREX_AKA_FAST_TRIALS, the supervisor's --fast-trials;\n"
    "                            else 5)\n"
    "  --min-improvement-pct P   margin over the incumbent to hand off (default 1)\n"
    "  --episode N               default $ATREX_AKA_EPISODE, else the brief's\n"
    "  --memory-version N        default the brief's memory/vN, else latest + 1\n"
    "  --journal FILE            default <worktree>/.aka/journal.json\n"
    "  --handoff FILE            default <worktree>/.aka/handoff.json\n"
    "  --effort E                accepted for the agents runtime; the tuner ignores it\n"
    "  --shape-id ID, --timed-runs N, --warmup N, --multi-seed N,\n"
    "  --sandbox-isolation M     passed to every `aka eval`\n"
    "\n"
    "exit status: 0 once a handoff is written, 2 on bad input, 75 when the\n"
    "evaluator's environment is unavailable, 1 otherwise.\n";

struct tune_cli {
    struct aka_tune_agent_opts o;
    struct strvec eval_args;
    const char *trials, *pct, *episode, *memver, *effort;
    bool help;
};

static int parse_num(const char *flag, const char *s, double lo, double *out, struct aka_err *err)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || v < lo || v > 1e9)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a number >= %g; got '%s'", flag, lo,
                           s ? s : "");
    *out = v;
    return 0;
}

/* Flags whose value goes to the tuner itself. */
static const char **own_slot(struct tune_cli *t, const char *flag)
{
    static const char *const names[] = {
        "--brief",   "--worktree", "--episode-kind", "--trials",         "--min-improvement-pct",
        "--episode", "--journal",  "--handoff",      "--memory-version", "--effort",
        NULL};
    const char **slots[] = {&t->o.brief, &t->o.worktree, &t->o.kind,    &t->trials, &t->pct,
                            &t->episode, &t->o.journal,  &t->o.handoff, &t->memver, &t->effort};
    for (size_t i = 0; names[i]; i++)
        if (strcmp(flag, names[i]) == 0)
            return slots[i];
    return NULL;
}

static bool eval_flag(const char *flag)
{
    static const char *const names[] = {"--shape-id",   "--timed-runs",        "--warmup",
                                        "--multi-seed", "--sandbox-isolation", NULL};
    for (size_t i = 0; names[i]; i++)
        if (strcmp(flag, names[i]) == 0)
            return true;
    return false;
}

static int parse_args(int argc, char **argv, struct tune_cli *t, struct aka_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = own_slot(t, a);
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            t->help = true;
            continue;
        }
        if (!slot && !eval_flag(a))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s: unknown argument (see aka tune-agent --help)", a);
        if (i + 1 >= argc)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a value after it", a);
        if (slot) {
            *slot = argv[++i];
        } else {
            strvec_push(&t->eval_args, a);
            strvec_push(&t->eval_args, argv[++i]);
        }
    }
    return 0;
}

static int finish_opts(struct tune_cli *t, struct strbuf *self, struct aka_err *err)
{
    double trials = 0, pct = 1, ep = -1, mv = -1; /* trials 0: the tuner's default */
    if ((t->trials && parse_num("--trials", t->trials, 1, &trials, err) < 0) ||
        (t->pct && parse_num("--min-improvement-pct", t->pct, 0, &pct, err) < 0) ||
        (t->episode && parse_num("--episode", t->episode, 0, &ep, err) < 0) ||
        (t->memver && parse_num("--memory-version", t->memver, 0, &mv, err) < 0))
        return -1;
    if (!t->o.brief)
        return aka_err_set(err, AKA_EXIT_USAGE, "--brief FILE is required (see --help)");
    /* The same binary evaluates: /proc/self/exe, never a name looked up in PATH. */
    if (aka_realpath("/proc/self/exe", self, err) < 0)
        return -1;
    t->o.aka_bin = self->buf;
    t->o.trials = (int)trials;
    t->o.min_improvement_pct = pct;
    t->o.episode = (long long)ep;
    t->o.memory_version = (long long)mv;
    t->o.eval_args = &t->eval_args;
    return 0;
}

int cmd_tune_agent(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct tune_cli t;
    struct strbuf self = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    int rc;
    (void)ctx;
    memset(&t, 0, sizeof(t));
    if (parse_args(argc, argv, &t, &err) < 0)
        rc = aka_err_report(&err);
    else if (t.help)
        rc = (fputs(usage_text, stdout), 0);
    else if (finish_opts(&t, &self, &err) < 0)
        rc = aka_err_report(&err);
    else
        rc = aka_tune_agent_run(&t.o);
    strvec_clear(&t.eval_args);
    strbuf_release(&self);
    return rc;
}
