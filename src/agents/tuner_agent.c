/*
 * tuner_agent.c — one episode of the built-in tuner (`aka tune-agent`).
 *
 *   read the brief (kind, episode, memory version) and the campaign (kernel)
 *   → parse the knob space and the incumbent configuration from the kernel
 *   → gather every configuration already recorded → measure the incumbent
 *   → up to --trials trials, each one `aka eval` journalled (a fast episode runs
 *     exactly that many: with no untried configuration left, re-measurements)
 *   → a winner: rewrite the defaults, commit the kernel alone, `aka eval` the
 *     committed bytes without knobs, finalize, hand off candidate_ready
 *   → otherwise: finalize and hand off pivot, saying why.
 *
 * The tuner decides nothing on the supervisor's behalf: its candidate goes
 * through the same verification as an LLM's, and a trial only counts as better
 * when the evaluator's own numbers say so.
 */
#include "agents/tuner_internal.h"
#include "base/fs.h"
#include "base/json.h"
#include "git/git.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BRIEF_MAX  ((size_t)1 << 20)
#define KERNEL_MAX ((size_t)8 << 20)

/* ---- the brief ----------------------------------------------------------------------------- */

enum aka_episode_kind aka_tune_kind_from_brief(const char *brief)
{
    const char *nl = strchr(brief, '\n');
    size_t n = nl ? (size_t)(nl - brief) : strlen(brief);
    char title[512];
    snprintf(title, sizeof(title), "%.*s", (int)(n < sizeof(title) ? n : sizeof(title) - 1), brief);
    if (strstr(title, "(goal)"))
        return AKA_EPISODE_GOAL;
    if (strstr(title, "(full)"))
        return AKA_EPISODE_FULL;
    return AKA_EPISODE_FAST;
}

/* The first number after `marker` in text, or -1. */
static long long number_after(const char *text, const char *marker)
{
    const char *p = text ? strstr(text, marker) : NULL;
    if (!p)
        return -1;
    p += strlen(marker);
    while (*p && !isdigit((unsigned char)*p) && *p != '\n')
        p++;
    return isdigit((unsigned char)*p) ? strtoll(p, NULL, 10) : -1;
}

static int parse_kind(const char *s, const char *brief, enum aka_episode_kind *out,
                      struct aka_err *err)
{
    static const char *const names[] = {"fast", "full", "goal", NULL};
    if (!s) {
        *out = aka_tune_kind_from_brief(brief);
        return 0;
    }
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum aka_episode_kind)i;
            return 0;
        }
    return aka_err_set(err, AKA_EXIT_USAGE, "--episode-kind: expected fast, full or goal; got '%s'",
                       s);
}

/* ---- the episode context ------------------------------------------------------------------- */

static void ctx_release(struct tune_ctx *c)
{
    free(c->worktree);
    free(c->workspace);
    free(c->kernel_rel);
    free(c->kernel);
    strbuf_release(&c->text);
    strbuf_release(&c->journal);
    strbuf_release(&c->handoff);
    aka_knob_space_release(&c->space);
    aka_tune_history_release(&c->hist);
}

static int resolve_dirs(struct tune_ctx *c, struct aka_err *err)
{
    const char *ws = getenv("ATREX_AKA_WORKSPACE"), *wt = c->o->worktree;
    struct strbuf sb = STRBUF_INIT;
    char cwd[PATH_MAX];
    if (!ws || !*ws)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "ATREX_AKA_WORKSPACE is not set: aka tune-agent runs inside an episode");
    if (!wt || !*wt)
        wt = getenv("ATREX_AKA_WORKTREE");
    if ((!wt || !*wt) && !(wt = getcwd(cwd, sizeof(cwd))))
        return aka_err_set(err, AKA_EXIT_ENV, "cannot read the current directory: %s",
                           strerror(errno));
    if (aka_realpath(ws, &sb, err) < 0)
        return aka_err_prefix(err, "ATREX_AKA_WORKSPACE");
    c->workspace = strbuf_detach(&sb, NULL);
    if (aka_realpath(wt, &sb, err) < 0)
        return aka_err_prefix(err, "worktree");
    c->worktree = strbuf_detach(&sb, NULL);
    return 0;
}

/* The kernel file named by the campaign (the same field `aka eval` reads). */
static int resolve_kernel(struct tune_ctx *c, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_ws_campaign camp;
    int rc = aka_ws_campaign_load(c->workspace, AKA_CF_KERNEL, &camp, err);
    if (rc == 0) {
        c->kernel_rel = aka_xstrdup(camp.kernel);
        aka_path_join(&path, c->worktree, camp.kernel);
        c->kernel = strbuf_detach(&path, NULL);
        rc = aka_read_file(c->kernel, &c->text, KERNEL_MAX, err);
    }
    aka_ws_campaign_release(&camp);
    strbuf_release(&path);
    return rc;
}

/* Episode number, memory version, kind, journal and handoff paths. */
static int resolve_episode(struct tune_ctx *c, const char *brief, struct aka_err *err)
{
    const char *env = getenv("ATREX_AKA_EPISODE");
    c->episode = c->o->episode >= 0 ? c->o->episode : number_after(env, "");
    if (c->episode < 0)
        c->episode = number_after(brief, "Episode");
    c->memory_version = c->o->memory_version >= 0
                            ? c->o->memory_version
                            : number_after(brief, "memory/v") /* the brief's prose */;
    if (c->episode < 0)
        c->episode = 0;
    if (c->memory_version < 0) {
        long latest = -1;
        if (aka_ws_latest_version(c->workspace, &latest, err) < 0)
            return -1;
        c->memory_version = latest + 1;
    }
    if (c->o->journal)
        strbuf_addstr(&c->journal, c->o->journal);
    else
        aka_wt_path(&c->journal, c->worktree, AKA_WT_JOURNAL);
    if (c->o->handoff)
        strbuf_addstr(&c->handoff, c->o->handoff);
    else
        aka_wt_path(&c->handoff, c->worktree, AKA_WT_HANDOFF);
    return parse_kind(c->o->kind, brief, &c->kind, err);
}

/*
 * --trials, else in a fast episode the supervisor's $ATREX_AKA_FAST_TRIALS (its completion
 * gate wants that many trials), else 5.
 */
static int resolve_trials(struct tune_ctx *c, struct aka_err *err)
{
    const char *env = getenv("ATREX_AKA_FAST_TRIALS");
    char *end = NULL;
    c->trials = c->o->trials > 0 ? c->o->trials : 5;
    if (c->o->trials > 0 || c->kind != AKA_EPISODE_FAST || !env || !*env)
        return 0;
    errno = 0;
    long n = strtol(env, &end, 10);
    if (errno || *end || n < 1 || n > 1000)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "ATREX_AKA_FAST_TRIALS: expected a whole number from 1 to 1000; got "
                           "'%s'",
                           env);
    c->trials = (int)n;
    return 0;
}

static int ctx_init(struct tune_ctx *c, const struct aka_tune_agent_opts *o, struct aka_err *err)
{
    struct strbuf brief = STRBUF_INIT;
    struct aka_git g;
    memset(c, 0, sizeof(*c));
    c->o = o;
    strbuf_init(&c->text, 0);
    strbuf_init(&c->journal, 0);
    strbuf_init(&c->handoff, 0);
    int rc = o->brief ? aka_read_file(o->brief, &brief, BRIEF_MAX, err)
                      : aka_err_set(err, AKA_EXIT_USAGE, "--brief FILE is required");
    if (rc == 0)
        rc = resolve_dirs(c, err);
    if (rc == 0)
        rc = resolve_kernel(c, err);
    if (rc == 0)
        rc = resolve_episode(c, brief.buf, err);
    if (rc == 0)
        rc = resolve_trials(c, err);
    if (rc == 0) {
        aka_git_open(&g, c->worktree);
        rc = aka_git_rev_parse(&g, "HEAD", c->base_commit, err);
        aka_git_close(&g);
    }
    strbuf_release(&brief);
    return rc;
}

/* ---- the search ---------------------------------------------------------------------------- */

static const char *const kind_names[] = {"fast", "full", "goal"};

/* The next configuration (aka_tune_next): goal episodes restart at random more often. */
static bool next_config(struct tune_ctx *c, int trial, const size_t *best, uint64_t *rng,
                        size_t *out)
{
    return aka_tune_next(&c->space, &c->hist, c->text.buf, c->kind == AKA_EPISODE_GOAL, trial, best,
                         rng, out);
}

static json_t *experiment(const struct tune_ctx *c, const char *name, const struct tune_trial *t,
                          const char *decision)
{
    struct strbuf key = STRBUF_INIT;
    bool trial = strncmp(name, "trial", 5) == 0;
    const char *why = trial ? "a configuration near the best so far runs faster"
                      : strcmp(name, "incumbent") == 0
                          ? "baseline: the incumbent's defaults, measured in this episode"
                          : "the committed kernel, without knobs, is the configuration chosen";
    aka_tune_key(&c->space, t->idx, &key);
    json_t *e = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "name", name, "hypothesis", why,
                          "change", key.buf, "tune", aka_tune_json(&c->space, t->idx), "evidence",
                          tune_trial_json(c, t, trial), "result", t->pass ? "pass" : "fail",
                          "decision", decision);
    strbuf_release(&key);
    return e;
}

/* Run the trials; *best ends as the best passing trial (or the incumbent). */
static int search(struct tune_ctx *c, struct tune_trial *best, int *ran, struct aka_err *err)
{
    uint64_t rng = 0x616b61ULL ^ (uint64_t)c->episode * 0x9E3779B97F4A7C15ULL;
    for (*ran = 0; *ran < c->trials; (*ran)++) {
        struct tune_trial t;
        char name[32];
        if (!next_config(c, *ran, best->idx, &rng, t.idx))
            break;
        aka_tune_history_add_key(&c->hist, &c->space, t.idx);
        if (tune_eval(c, t.idx, &t, err) < 0)
            return -1;
        bool keep = tune_better(&t, best, 0.0);
        snprintf(name, sizeof(name), "trial %d", *ran + 1);
        if (tune_journal_add(
                c, experiment(c, name, &t, keep ? "keep_as_best" : "reject_and_continue"), err) < 0)
            return -1;
        fprintf(stderr, "aka tune-agent: %s %s\n", name, keep ? "is the best so far" : "rejected");
        if (keep)
            *best = t;
    }
    return 0;
}

/*
 * A fast episode is exactly c->trials trials: the supervisor's completion gate rejects a
 * pivot after fewer (DESIGN §3). When no untried configuration is left, the remaining trials
 * re-measure the best configuration so far (knobs NULL: the kernel as committed): real
 * evaluator runs, journalled as such, that show the run-to-run noise without repeating a
 * proposal. They never replace the best: a second sample of one configuration is no search.
 */
static int remeasure(struct tune_ctx *c, const struct tune_trial *best, int from, int *again,
                     struct aka_err *err)
{
    size_t defaults[AKA_TUNE_MAX_KNOBS];
    aka_tune_defaults(&c->space, defaults);
    bool incumbent = !best || memcmp(best->idx, defaults, c->space.n * sizeof(size_t)) == 0;
    for (*again = 0; c->kind == AKA_EPISODE_FAST && from + *again < c->trials; (*again)++) {
        struct tune_trial t;
        char name[32];
        if (tune_eval(c, incumbent ? NULL : best->idx, &t, err) < 0)
            return -1;
        snprintf(name, sizeof(name), "trial %d", from + *again + 1);
        json_t *e = experiment(c, name, &t, "reject_and_continue");
        json_object_set_new(e, "hypothesis",
                            json_string("no untried configuration is left: re-measure the best "
                                        "one so far (run-to-run noise), as the fast episode's "
                                        "remaining trial"));
        if (tune_journal_add(c, e, err) < 0)
            return -1;
        fprintf(stderr, "aka tune-agent: %s re-measured the best configuration\n", name);
    }
    return 0;
}

/* ---- the outcome --------------------------------------------------------------------------- */

/* Commit the winner's defaults, evaluate the committed bytes, hand off. */
static int promote(struct tune_ctx *c, const struct tune_trial *win, const struct tune_trial *inc,
                   struct aka_err *err)
{
    struct strbuf bytes = STRBUF_INIT, msg = STRBUF_INIT, key = STRBUF_INIT;
    char oid[AKA_GIT_OID_HEX + 1];
    struct tune_trial check;
    memset(&check, 0, sizeof(check));
    aka_tune_key(&c->space, win->idx, &key);
    strbuf_addf(&msg, "tune-agent: %s", key.buf);
    int rc = aka_tune_rewrite(c->kernel, c->text.buf, &c->space, win->idx, &bytes, err);
    if (rc == 0)
        rc = aka_write_file_atomic(c->kernel, bytes.buf, bytes.len, 0644, err);
    time_t committed = time(NULL);
    if (rc == 0)
        rc = tune_commit_kernel(c, msg.buf, oid, err);
    if (rc == 0)
        rc = tune_eval(c, NULL, &check, err);
    if (rc == 0)
        memcpy(check.idx, win->idx, sizeof(check.idx));
    if (rc == 0)
        rc = tune_journal_add(
            c,
            experiment(c, "committed candidate", &check, check.pass ? "keep_as_best" : "blocked"),
            err);
    strbuf_reset(&msg);
    if (check.pass)
        strbuf_addf(&msg, "Tuned %s (score %.4g vs incumbent %.4g); committed bytes pass.", key.buf,
                    win->score, inc->score);
    else
        strbuf_addf(&msg, "The committed configuration %s failed without knobs: %s", key.buf,
                    check.failure);
    if (time(NULL) == committed)
        sleep(1); /* finalized_at must be strictly later than the commit's time */
    if (rc == 0)
        rc = tune_finish(c, check.pass ? AKA_HANDOFF_CANDIDATE_READY : AKA_HANDOFF_PIVOT,
                         check.pass ? oid : NULL, msg.buf, err);
    strbuf_release(&bytes);
    strbuf_release(&msg);
    strbuf_release(&key);
    return rc;
}

static int pivot(struct tune_ctx *c, int ran, int again, const struct tune_trial *inc,
                 struct aka_err *err)
{
    struct strbuf msg = STRBUF_INIT;
    if (ran == 0)
        strbuf_addf(&msg,
                    "Knob space exhausted: every one of the %zu configurations of %s is "
                    "already recorded.",
                    aka_tune_space_size(&c->space), c->kernel_rel);
    else
        strbuf_addf(&msg,
                    "%d %s trial(s) around the incumbent; none beat it (score %.4g) by "
                    "%.2f%%.",
                    ran, kind_names[c->kind], inc->score, c->o->min_improvement_pct);
    if (again > 0)
        strbuf_addf(&msg,
                    " %d trial(s) re-measured the best configuration: no untried one was "
                    "left.",
                    again);
    int rc = tune_finish(c, AKA_HANDOFF_PIVOT, NULL, msg.buf, err);
    strbuf_release(&msg);
    return rc;
}

/* No verdict (bad flags, no sandbox, a failed commit): say so in the journal and hand off
 * blocked, as an LLM agent would, then still fail with the error's exit status so the
 * supervisor sees an environment problem (75) as one. */
static int blocked(struct tune_ctx *c, struct aka_err *err)
{
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *e = json_pack("{s:s, s:s, s:s}", "name", "evaluation", "result", err->msg, "decision",
                          "blocked");
    if (tune_journal_add(c, e, &ignored) == 0)
        tune_finish(c, AKA_HANDOFF_BLOCKED, NULL, err->msg, &ignored);
    return -1;
}

/* Parse the knobs; a kernel without (valid) knobs ends the episode with an account. */
static int read_space(struct tune_ctx *c, bool *usable, struct aka_err *err)
{
    struct aka_err why = AKA_ERR_INIT;
    *usable = false;
    if (aka_tune_parse(c->kernel_rel, c->text.buf, aka_tune_lang_for(c->kernel), &c->space, &why) <
        0) {
        json_t *e = json_pack("{s:s, s:s, s:s}", "name", "read the knob space", "result", why.msg,
                              "decision", "blocked");
        if (tune_journal_add(c, e, err) < 0)
            return -1;
        return tune_finish(c, AKA_HANDOFF_BLOCKED, NULL, why.msg, err);
    }
    if (c->space.n == 0) {
        int again = 0;
        json_t *e = json_pack("{s:s, s:s, s:s}", "name", "read the knob space", "result",
                              "the kernel declares no aka:tune knobs", "decision", "pivot");
        if (tune_journal_add(c, e, err) < 0)
            return -1;
        if (remeasure(c, NULL, 0, &again, err) < 0) /* fast: still exactly c->trials trials */
            return blocked(c, err);
        return tune_finish(c, AKA_HANDOFF_PIVOT, NULL,
                           "Nothing to tune: the kernel declares no aka:tune knobs.", err);
    }
    *usable = true;
    return 0;
}

static int episode(struct tune_ctx *c, struct aka_err *err)
{
    struct tune_trial inc, best;
    bool usable;
    int ran = 0, again = 0;
    if (tune_journal_open(c, err) < 0 || read_space(c, &usable, err) < 0)
        return -1;
    if (!usable)
        return 0; /* the journal and handoff say why */
    if (tune_load_history(c, err) < 0)
        return -1;
    fprintf(stderr,
            "aka tune-agent: %s episode %lld, %zu knobs, %zu configurations, %zu recorded\n",
            kind_names[c->kind], c->episode, c->space.n, aka_tune_space_size(&c->space),
            c->hist.keys.n);
    aka_tune_defaults(&c->space, inc.idx);
    aka_tune_history_add_key(&c->hist, &c->space, inc.idx);
    if (tune_eval(c, NULL, &inc, err) < 0 ||
        tune_journal_add(c, experiment(c, "incumbent", &inc, "baseline"), err) < 0)
        return blocked(c, err);
    best = inc;
    if (search(c, &best, &ran, err) < 0 || remeasure(c, &best, ran, &again, err) < 0)
        return blocked(c, err);
    if (tune_better(&best, &inc, c->o->min_improvement_pct))
        return promote(c, &best, &inc, err) < 0 ? blocked(c, err) : 0;
    return pivot(c, ran, again, &inc, err);
}

int aka_tune_agent_run(const struct aka_tune_agent_opts *o)
{
    struct tune_ctx c;
    struct aka_err err = AKA_ERR_INIT;
    int rc = ctx_init(&c, o, &err) < 0 ? -1 : episode(&c, &err);
    if (rc == 0)
        fprintf(stderr, "aka tune-agent: handoff written to %s\n", c.handoff.buf);
    ctx_release(&c);
    return rc < 0 ? aka_err_report(&err) : 0;
}
