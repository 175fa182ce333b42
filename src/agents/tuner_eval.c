/*
 * tuner_eval.c — one trial: `aka eval` as a subprocess, and its verdict.
 *
 * The tuner calls the same command an LLM agent calls, with an argv (no
 * shell), so its evidence is produced, recorded (evaluations.jsonl, with the
 * kernel hash and the knob values) and later re-checked exactly like anyone
 * else's. Native kernels get their knobs as --tune NAME=VALUE (-D flags, the
 * file untouched); Python kernels cannot take -D, so the trial bytes are
 * written into the file for the evaluation and the incumbent bytes put back.
 */
#include "agents/tuner_internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "base/proc.h"

#include <stdio.h>
#include <string.h>

#define EVAL_OUT_CAP ((size_t)4 << 20)
/* What is kept of the evaluation's stderr: its progress and, last, why it gave no verdict. */
#define EVAL_ERR_CAP ((size_t)1 << 20)

static void build_argv(const struct tune_ctx *c, const size_t *knobs, struct strvec *argv)
{
    strvec_push(argv, c->o->aka_bin);
    strvec_push(argv, "eval");
    for (size_t i = 0; knobs && c->space.lang == AKA_TUNE_LANG_C && i < c->space.n; i++) {
        strvec_push(argv, "--tune");
        strvec_pushf(argv, "%s=%s", c->space.v[i].name, c->space.v[i].values.v[knobs[i]]);
    }
    for (size_t i = 0; c->o->eval_args && i < c->o->eval_args->n; i++)
        strvec_push(argv, c->o->eval_args->v[i]);
}

/* The verdict of a finished `aka eval` (exit 0 or 1 with one RESULT_JSON line). */
static int read_verdict(const struct proc_result *pr, struct tune_trial *t, struct aka_err *err)
{
    struct aka_result r;
    aka_result_init(&r);
    if (aka_result_parse_output("aka eval", pr->out.buf, pr->out.len, &r, err) < 0) {
        aka_result_release(&r);
        return -1;
    }
    t->ran = true;
    t->pass = r.all_pass && pr->exit_code == 0;
    t->score = r.performance_score;
    t->latency = r.latency_us_geomean;
    snprintf(t->eval_id, sizeof(t->eval_id), "%s", r.eval_id ? r.eval_id : "");
    snprintf(t->sha256, sizeof(t->sha256), "%s", r.kernel_sha256 ? r.kernel_sha256 : "");
    snprintf(t->failure, sizeof(t->failure), "%s", r.failures.n ? r.failures.v[0] : "");
    aka_result_release(&r);
    return 0;
}

/*
 * An exit other than 0 or 1 is no verdict (2: bad usage, 75: the environment). Its stderr
 * was kept, and passed on to ours whole, so that the reason it gives reaches the episode's
 * record and not only the agent's log (a GPU campaign whose every trial exited 75 showed
 * nothing else).
 */
static int no_verdict(const struct proc_result *pr, struct aka_err *err)
{
    struct strbuf why = STRBUF_INIT;
    strbuf_add_last_line(&why, pr->err.buf, pr->err.len, NULL);
    int rc = aka_err_set(err, pr->exit_code == 2 ? AKA_EXIT_USAGE : AKA_EXIT_ENV,
                         "aka eval exited with status %d (no verdict)%s%s", pr->exit_code,
                         why.len ? ": " : "", why.buf);
    strbuf_release(&why);
    return rc;
}

static int run_eval(struct tune_ctx *c, const size_t *knobs, struct tune_trial *t,
                    struct aka_err *err)
{
    struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
    struct proc_result pr;
    int rc;
    build_argv(c, knobs, &argv);
    strvec_pushf(&env, "ATREX_AKA_WORKTREE=%s", c->worktree);
    struct proc_spec spec = {.argv = (const char *const *)argv.v,
                             .cwd = c->worktree,
                             .env = (const char *const *)env.v,
                             .out_mode = PROC_TO_BUFFER,
                             .out_cap = EVAL_OUT_CAP,
                             .err_mode = PROC_TO_BUFFER,
                             .err_cap = EVAL_ERR_CAP};
    proc_result_init(&pr);
    rc = proc_run(&spec, &pr, err);
    fwrite(pr.err.buf, 1, pr.err.len, stderr);
    if (rc == 0 && pr.exit_code != 0 && pr.exit_code != 1)
        rc = no_verdict(&pr, err);
    if (rc == 0)
        rc = read_verdict(&pr, t, err);
    proc_result_release(&pr);
    strvec_clear(&argv);
    strvec_clear(&env);
    return rc;
}

int tune_eval(struct tune_ctx *c, const size_t *knobs, struct tune_trial *t, struct aka_err *err)
{
    struct strbuf trial = STRBUF_INIT;
    int rc;
    memset(t->eval_id, 0, sizeof(t->eval_id));
    t->ran = t->pass = false;
    t->score = t->latency = AKA_MISSING;
    t->sha256[0] = t->failure[0] = '\0';
    if (!knobs)
        aka_tune_defaults(&c->space, t->idx);
    else if (knobs != t->idx)
        memcpy(t->idx, knobs, c->space.n * sizeof(*knobs));
    if (!knobs || c->space.lang == AKA_TUNE_LANG_C)
        return run_eval(c, knobs, t, err);
    /* Python: the knobs must be in the file; the incumbent bytes go back whatever happens. */
    rc = aka_tune_rewrite(c->kernel, c->text.buf, &c->space, knobs, &trial, err);
    if (rc == 0)
        rc = aka_write_file_atomic(c->kernel, trial.buf, trial.len, 0644, err);
    if (rc == 0)
        rc = run_eval(c, NULL, t, err);
    struct aka_err restore = AKA_ERR_INIT;
    if (aka_write_file_atomic(c->kernel, c->text.buf, c->text.len, 0644, &restore) < 0) {
        *err = restore;
        rc = -1;
    }
    strbuf_release(&trial);
    return rc;
}

/*
 * The supervisor's rule (episode_verify.c): a score relative to a reference that every
 * run re-times can rise while the kernel got slower, so a candidate must beat the
 * incumbent by its score and by its own latency geomean. Picking the winner by the score
 * alone handed off trials that verification then rejected: row_sum_cuda's and rope's v2 on
 * the H100 of 2026-12-07 (+19.14% by score, -15.08% by latency; +7.87% and -2.21%), an
 * episode each.
 */
bool tune_better(const struct tune_trial *a, const struct tune_trial *b, double pct)
{
    double f = 1.0 + pct / 100.0;
    bool scores = aka_measured(a->score) && aka_measured(b->score);
    bool latencies = aka_measured(a->latency) && aka_measured(b->latency);
    if (!a->pass)
        return false;
    if (!b->pass)
        return true;
    if (!scores && !latencies)
        return false; /* nothing comparable was measured: no evidence of a gain */
    return (!scores || a->score > b->score * f) && (!latencies || a->latency * f < b->latency);
}

static json_t *num_or_null(double v)
{
    return aka_measured(v) ? json_real(v) : json_null();
}

json_t *tune_trial_json(const struct tune_ctx *c, const struct tune_trial *t, bool with_knobs)
{
    json_t *ev = json_pack("{s:s, s:s, s:b, s:o, s:o}", "eval_id", t->eval_id, "kernel_sha256",
                           t->sha256, "all_pass", t->pass, "performance_score",
                           num_or_null(t->score), "latency_us_geomean", num_or_null(t->latency));
    if (t->failure[0])
        json_object_set_new(ev, "first_failure", json_string(t->failure));
    json_object_set_new(ev, "knobs_passed_as",
                        json_string(!with_knobs                        ? "kernel defaults"
                                    : c->space.lang == AKA_TUNE_LANG_C ? "--tune flags"
                                                                       : "rewritten defaults"));
    return ev;
}
