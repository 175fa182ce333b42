/*
 * handoff.c — `aka handoff --status {candidate_ready,pivot,blocked}
 * [--candidate-commit C] [--summary TEXT]`: how the agent ends its part of an
 * episode (DESIGN §4.5).
 *
 * The handoff is <worktree>/.aka/handoff.json beside the journal
 * <worktree>/.aka/journal.json, where the supervisor and the built-in tuner
 * keep them; the worktree is $ATREX_AKA_WORKTREE, else the current directory.
 * This file only parses flags and prints: aka_handoff_submit
 * (contracts/records.h) validates against the finalized journal and writes
 * the file atomically, or writes nothing.
 */
#include "base/fs.h"
#include "base/opts.h"
#include "cmd/cmd.h"
#include "contracts/records.h"
#include "wiki/wiki.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

static const char usage_text[] =
    "usage: aka handoff --status {candidate_ready,pivot,blocked} [--candidate-commit C]\n"
    "                   [--summary TEXT]\n\n"
    "End your part of the episode: check the handoff against the finalized\n"
    "journal and write <worktree>/.aka/handoff.json atomically (the worktree is\n"
    "$ATREX_AKA_WORKTREE, else the current directory). Finalize the journal\n"
    "first (aka journal finalize) in the same state.\n\n";
static const char notes_text[] =
    "\nExit status: 0 when the handoff was written; 2 on a usage error, a missing,\n"
    "unfinalized or disagreeing journal (one line naming the file or flag and\n"
    "the field), in which case nothing is written.\n";

struct handoff_args {
    const char *status, *commit, *summary;
};

#define OFF(f) offsetof(struct handoff_args, f)

static const struct aka_opt flags[] = {
    {.name = "--status",
     .off = OFF(status),
     .metavar = "S",
     .help = "candidate_ready, pivot or blocked: the journal's state"},
    {.name = "--candidate-commit",
     .off = OFF(commit),
     .metavar = "C",
     .help = "the 40-digit commit id of the candidate; required for (and only for) "
             "candidate_ready, and equal to the journal's candidate_commit"},
    {.name = "--summary",
     .off = OFF(summary),
     .metavar = "TEXT",
     .help = "a one-line note echoed in the receipt; the record of the outcome is the "
             "journal's outcome.summary"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct handoff_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"handoff", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc == 0 && !a->status)
        return USAGE_ERROR(err, "--status: required; expected candidate_ready, pivot or blocked");
    return rc;
}

/* Status and commit into the record; the contract checks the commit's form and rule. */
static int build_handoff(const struct handoff_args *a, struct aka_handoff *h, struct aka_err *err)
{
    int st = -1;
    memset(h, 0, sizeof(*h));
    for (int i = 0; aka_handoff_status_names[i]; i++)
        if (strcmp(a->status, aka_handoff_status_names[i]) == 0)
            st = i;
    if (st < 0)
        return USAGE_ERROR(err, "--status: expected candidate_ready, pivot or blocked; got \"%s\"",
                           a->status);
    h->status = (enum aka_handoff_status)st;
    if (a->commit && strlen(a->commit) != AKA_COMMIT_HEX_LEN)
        return USAGE_ERROR(err,
                           "--candidate-commit: expected a 40-digit lower-case commit id; got "
                           "\"%s\"",
                           a->commit);
    if (a->commit)
        memcpy(h->candidate_commit, a->commit, AKA_COMMIT_HEX_LEN + 1);
    return 0;
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

int cmd_handoff(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct handoff_args a;
    struct aka_handoff h;
    struct strbuf handoff = STRBUF_INIT, journal = STRBUF_INIT;
    const char *wt = getenv("ATREX_AKA_WORKTREE");
    memset(&a, 0, sizeof(a));
    int rc = parse_args(argc, argv, &a, &err);
    if (rc > 0)
        return 0; /* the help is printed */
    if (rc == 0)
        rc = build_handoff(&a, &h, &err);
    if (rc == 0) {
        aka_wt_path(&handoff, wt && *wt ? wt : ".", AKA_WT_HANDOFF);
        aka_wt_path(&journal, wt && *wt ? wt : ".", AKA_WT_JOURNAL);
        rc = no_journal(journal.buf, &err);
    }
    if (rc == 0) { /* a cited wiki id that no record has: nothing is written */
        struct aka_wiki_config cfg = {.repo_root = ctx->repo_root, .quiet = true};
        struct aka_wiki *w = NULL;
        rc = aka_wiki_open(&cfg, &w, &err);
        if (rc == 0)
            rc = aka_handoff_submit_cited(handoff.buf, journal.buf, &h, NULL, aka_wiki_has_id, w,
                                          &err);
        if (w)
            aka_wiki_close(w);
    }
    if (rc == 0) {
        /* The summary is the agent's text: escaped, it cannot drive the terminal. */
        struct strbuf line = STRBUF_INIT;
        strbuf_addf_escaped(&line, "handoff: %s%s%s written to %s%s%s",
                            aka_handoff_status_names[h.status], h.candidate_commit[0] ? " " : "",
                            h.candidate_commit, handoff.buf, a.summary ? ": " : "",
                            a.summary ? a.summary : "");
        printf("%s\n", line.buf);
        strbuf_release(&line);
    }
    strbuf_release(&handoff);
    strbuf_release(&journal);
    return rc < 0 ? aka_err_report(&err) : 0;
}
