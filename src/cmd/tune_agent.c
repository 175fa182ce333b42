/*
 * tune_agent.c — `aka tune-agent`: the built-in tuner as an agent process
 * (DESIGN §9). The agents runtime starts it as `aka tune-agent --brief FILE
 * --effort E` in the episode worktree, with the campaign environment; this file
 * only parses flags and calls agents/tuner.h.
 */
#include "agents/tuner.h"
#include "base/fs.h"
#include "base/opts.h"
#include "cmd/cmd.h"

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
    "\n";
static const char notes_text[] =
    "\n"
    "exit status: 0 once a handoff is written, 2 on bad input, 75 when the\n"
    "evaluator's environment is unavailable, 1 otherwise.\n";

/* The flags handed on to every `aka eval`, in the order given per flag. */
struct eval_lists {
    struct strvec shape_id, timed_runs, warmup, multi_seed, isolation;
};

struct tune_cli {
    struct aka_tune_agent_opts o;
    struct eval_lists ev;
    struct strvec eval_args;
    const char *effort;
};

#define OFF(f) offsetof(struct tune_cli, f)
#define STR(flag, field, meta, text)                                                               \
    {                                                                                              \
        .name = flag, .off = OFF(field), .metavar = meta, .help = text                             \
    }
#define EVAL(flag, field, meta)                                                                    \
    {                                                                                              \
        .name = flag, .off = OFF(ev.field), .kind = AKA_OPT_LIST, .metavar = meta,                 \
        .help = "passed to every `aka eval`"                                                       \
    }

static const struct aka_opt flags[] = {
    STR("--brief", o.brief, "FILE", "the episode brief (kind, episode, memory version); required"),
    STR("--worktree", o.worktree, "DIR", "default $ATREX_AKA_WORKTREE, else the current directory"),
    STR("--episode-kind", o.kind, "K", "fast, full or goal (default: the brief's title)"),
    {.name = "--trials",
     .off = OFF(o.trials),
     .kind = AKA_OPT_INT,
     .lo = 1,
     .hi = 1e9,
     .def = "0",
     .metavar = "N",
     .help = "trials per episode (default: in a fast episode $ATREX_AKA_FAST_TRIALS, the "
             "supervisor's --fast-trials; else 5)"},
    {.name = "--min-improvement-pct",
     .off = OFF(o.min_improvement_pct),
     .kind = AKA_OPT_DBL,
     .lo = 0,
     .hi = 1e9,
     .def = "1",
     .metavar = "P",
     .help = "margin over the incumbent to hand off"},
    {.name = "--episode",
     .off = OFF(o.episode),
     .kind = AKA_OPT_LL,
     .lo = 0,
     .hi = 1e9,
     .def = "-1",
     .metavar = "N",
     .help = "default $ATREX_AKA_EPISODE, else the brief's"},
    {.name = "--memory-version",
     .off = OFF(o.memory_version),
     .kind = AKA_OPT_LL,
     .lo = 0,
     .hi = 1e9,
     .def = "-1",
     .metavar = "N",
     .help = "default the brief's memory/vN, else latest + 1"},
    STR("--journal", o.journal, "FILE", "default <worktree>/.aka/journal.json"),
    STR("--handoff", o.handoff, "FILE", "default <worktree>/.aka/handoff.json"),
    STR("--effort", effort, "E", "accepted for the agents runtime; the tuner ignores it"),
    EVAL("--shape-id", shape_id, "ID"),
    EVAL("--timed-runs", timed_runs, "N"),
    EVAL("--warmup", warmup, "N"),
    EVAL("--multi-seed", multi_seed, "N"),
    EVAL("--sandbox-isolation", isolation, "M"),
    {.name = NULL},
};

/* "--flag VALUE" pairs for `aka eval`, from the lists above. */
static void eval_args(struct tune_cli *t)
{
    static const char *const names[] = {"--shape-id", "--timed-runs", "--warmup", "--multi-seed",
                                        "--sandbox-isolation"};
    struct strvec *lists[] = {&t->ev.shape_id, &t->ev.timed_runs, &t->ev.warmup, &t->ev.multi_seed,
                              &t->ev.isolation};
    for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
        for (size_t i = 0; i < lists[k]->n; i++)
            strvec_pushv(&t->eval_args, (const char *const[]){names[k], lists[k]->v[i], NULL});
        strvec_clear(lists[k]);
    }
}

static int finish_opts(struct tune_cli *t, struct strbuf *self, struct aka_err *err)
{
    if (!t->o.brief)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "tune-agent: --brief FILE is required (see --help)");
    /* The same binary evaluates: /proc/self/exe, never a name looked up in PATH. */
    if (aka_realpath("/proc/self/exe", self, err) < 0)
        return -1;
    t->o.aka_bin = self->buf;
    t->o.eval_args = &t->eval_args;
    return 0;
}

int cmd_tune_agent(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct tune_cli t;
    struct strbuf self = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_opt_group groups[] = {{.table = flags, .base = &t}, {0}};
    static const struct aka_opt_doc doc = {"tune-agent", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    (void)ctx;
    memset(&t, 0, sizeof(t));
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    eval_args(&t);
    if (rc != 0)
        rc = rc < 0 ? aka_err_report(&err) : 0;
    else if (finish_opts(&t, &self, &err) < 0)
        rc = aka_err_report(&err);
    else
        rc = aka_tune_agent_run(&t.o);
    strvec_clear(&t.eval_args);
    strbuf_release(&self);
    return rc;
}
