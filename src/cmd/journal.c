/*
 * journal.c — `aka journal append --experiment-json J` and
 * `aka journal finalize --state S --outcome-json J [--candidate-commit C]`:
 * the agent's structured account of an episode (DESIGN §4.5).
 *
 * The journal is <worktree>/.aka/journal.json, where the supervisor (and the
 * built-in tuner) create it when the episode starts; the worktree is
 * $ATREX_AKA_WORKTREE, else the current directory. This file only parses
 * flags and prints: validation and the atomic, all-or-nothing update are
 * contracts/records.h's (aka_journal_append, aka_journal_finalize).
 */
#include "base/fs.h"
#include "base/opts.h"
#include "cmd/cmd.h"
#include "contracts/records.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

static const char usage_text[] =
    "usage: aka journal append --experiment-json J\n"
    "       aka journal finalize --state S --outcome-json J [--candidate-commit C]\n\n"
    "Record the episode's experiments and its outcome in the journal\n"
    "<worktree>/.aka/journal.json (the worktree is $ATREX_AKA_WORKTREE, else the\n"
    "current directory). The supervisor creates the journal when the episode\n"
    "starts; these commands never create or replace it.\n\n"
    "  append                        add one experiment; the journal must be in_progress\n"
    "  finalize                      close the journal\n";
static const char notes_text[] =
    "\nFinalizing again to the same state replaces the outcome. A rejected call\n"
    "leaves the journal byte-identical. Exit status: 0 on success; 2 on a usage\n"
    "error, invalid JSON, a missing or malformed journal, or a state conflict\n"
    "(one line naming the file or flag and the field).\n";

struct journal_args {
    const char *action, *experiment, *state, *outcome, *commit;
    struct strvec words; /* the action */
};

#define OFF(f) offsetof(struct journal_args, f)

static const struct aka_opt flags[] = {
    {.name = "--experiment-json",
     .off = OFF(experiment),
     .metavar = "J",
     .help = "append: a non-empty JSON object: what you tried, why, the eval id, the "
             "outcome; optional wiki_refs[] (ids from aka wiki); \"timestamp\" is added when "
             "absent"},
    {.name = "--state",
     .off = OFF(state),
     .metavar = "S",
     .help = "finalize: candidate_ready, pivot or blocked"},
    {.name = "--outcome-json",
     .off = OFF(outcome),
     .metavar = "J",
     .help = "finalize: {\"summary\": \"...\", \"next_directions\": [\"...\"]}"},
    {.name = "--candidate-commit",
     .off = OFF(commit),
     .metavar = "C",
     .help = "finalize: the 40-digit commit id; required for (and only for) candidate_ready"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct journal_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"journal", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups, .args = &a->words, .max_args = 1};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    a->action = a->words.n ? a->words.v[0] : NULL;
    return rc;
}

/* A terminal state; in_progress is what finalize leaves behind, never a target. */
static int parse_state(const char *s, enum aka_journal_state *out, struct aka_err *err)
{
    for (int i = 0; aka_journal_state_names[i]; i++)
        if (i != AKA_JOURNAL_IN_PROGRESS && strcmp(s, aka_journal_state_names[i]) == 0) {
            *out = (enum aka_journal_state)i;
            return 0;
        }
    return USAGE_ERROR(err, "--state: expected candidate_ready, pivot or blocked; got \"%s\"", s);
}

static int parse_json_flag(const char *flag, const char *text, json_t **out, struct aka_err *err)
{
    return aka_json_load_buf(flag, text, strlen(text), out, err);
}

/* The supervisor creates the journal; a missing one means the wrong directory. */
static int no_journal(const char *path, struct aka_err *err)
{
    if (aka_exists(path))
        return 0;
    return USAGE_ERROR(err,
                       "%s: no journal (the supervisor creates it when the episode starts; run "
                       "in the episode worktree or set ATREX_AKA_WORKTREE)",
                       path);
}

static int append(const char *path, const struct journal_args *a, struct aka_err *err)
{
    struct aka_journal j;
    json_t *exp = NULL;
    /* Flags that belong to finalize are an error, not silently ignored. */
    if (!a->experiment)
        return USAGE_ERROR(err, "--experiment-json: required by append");
    if (a->state || a->outcome || a->commit)
        return USAGE_ERROR(err, "append: takes only --experiment-json (--state, --outcome-json "
                                "and --candidate-commit belong to finalize)");
    if (no_journal(path, err) < 0 ||
        parse_json_flag("--experiment-json", a->experiment, &exp, err) < 0)
        return -1;
    int rc = aka_journal_append(path, exp, NULL, err);
    json_decref(exp);
    if (rc < 0)
        return -1;
    if (aka_journal_load(path, &j, err) < 0)
        return -1;
    printf("journal: experiment %zu appended to %s\n", j.experiment_count, path);
    aka_journal_release(&j);
    return 0;
}

static int finalize(const char *path, const struct journal_args *a, struct aka_err *err)
{
    enum aka_journal_state state = AKA_JOURNAL_IN_PROGRESS;
    json_t *outcome = NULL;
    if (!a->state || !a->outcome)
        return USAGE_ERROR(err, "%s: required by finalize",
                           a->state ? "--outcome-json" : "--state");
    if (a->experiment)
        return USAGE_ERROR(err, "finalize: --experiment-json belongs to append");
    if (no_journal(path, err) < 0 || parse_state(a->state, &state, err) < 0 ||
        parse_json_flag("--outcome-json", a->outcome, &outcome, err) < 0)
        return -1;
    int rc = aka_journal_finalize(path, state, outcome, a->commit, NULL, err);
    json_decref(outcome);
    if (rc < 0)
        return -1;
    struct strbuf line = STRBUF_INIT;
    strbuf_addf_escaped(&line, "journal: finalized as %s%s%s (%s)", aka_journal_state_names[state],
                        a->commit ? ", candidate " : "", a->commit ? a->commit : "", path);
    printf("%s\n", line.buf);
    strbuf_release(&line);
    return 0;
}

static int dispatch(const char *path, const struct journal_args *a, struct aka_err *err)
{
    if (!a->action)
        return USAGE_ERROR(err, "journal: expected append or finalize (see aka journal --help)");
    if (strcmp(a->action, "append") == 0)
        return append(path, a, err);
    if (strcmp(a->action, "finalize") == 0)
        return finalize(path, a, err);
    return USAGE_ERROR(
        err, "%s: unknown action; expected append or finalize (see aka journal --help)", a->action);
}

int cmd_journal(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct journal_args a = {.words = STRVEC_INIT};
    struct strbuf path = STRBUF_INIT;
    const char *wt = getenv("ATREX_AKA_WORKTREE");
    int rc = parse_args(argc, argv, &a, &err);
    (void)ctx;
    aka_wt_path(&path, wt && *wt ? wt : ".", AKA_WT_JOURNAL);
    if (rc == 0)
        rc = dispatch(path.buf, &a, &err);
    strbuf_release(&path);
    strvec_clear(&a.words);
    return rc < 0 ? aka_err_report(&err) : 0;
}
