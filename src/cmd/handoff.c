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
#include "cmd/cmd.h"
#include "contracts/records.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

static void usage(FILE *out)
{
    fprintf(out,
            "usage: aka handoff --status {candidate_ready,pivot,blocked} [--candidate-commit C]\n"
            "                   [--summary TEXT]\n\n"
            "End your part of the episode: check the handoff against the finalized\n"
            "journal and write <worktree>/.aka/handoff.json atomically (the worktree is\n"
            "$ATREX_AKA_WORKTREE, else the current directory). Finalize the journal\n"
            "first (aka journal finalize) in the same state.\n\n"
            "  --status S            candidate_ready, pivot or blocked: the journal's state\n"
            "  --candidate-commit C  the 40-digit commit id of the candidate; required for\n"
            "                        (and only for) candidate_ready, and equal to the\n"
            "                        journal's candidate_commit\n"
            "  --summary TEXT        a one-line note echoed in the receipt; the record of\n"
            "                        the outcome is the journal's outcome.summary\n"
            "  --help                show this help\n\n"
            "Exit status: 0 when the handoff was written; 2 on a usage error, a missing,\n"
            "unfinalized or disagreeing journal (one line naming the file or flag and\n"
            "the field), in which case nothing is written.\n");
}

struct handoff_args {
    const char *status, *commit, *summary;
    bool help;
};

static int parse_args(int argc, char **argv, struct handoff_args *a, struct aka_err *err)
{
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            a->help = true;
            continue;
        }
        if ((m = cmd_flag_value(argc, argv, &i, "--status", &a->status, err)) != 0 ||
            (m = cmd_flag_value(argc, argv, &i, "--candidate-commit", &a->commit, err)) != 0 ||
            (m = cmd_flag_value(argc, argv, &i, "--summary", &a->summary, err)) != 0) {
            if (m < 0)
                return -1;
            continue;
        }
        return USAGE_ERROR(err, "%s: unexpected argument (see aka handoff --help)", argv[i]);
    }
    if (a->help)
        return 0;
    if (!a->status)
        return USAGE_ERROR(err, "--status: required; expected candidate_ready, pivot or blocked");
    return 0;
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
    (void)ctx;
    memset(&a, 0, sizeof(a));
    int rc = parse_args(argc, argv, &a, &err);
    if (rc == 0 && a.help) {
        usage(stdout);
        return 0;
    }
    if (rc == 0)
        rc = build_handoff(&a, &h, &err);
    if (rc == 0) {
        aka_wt_path(&handoff, wt && *wt ? wt : ".", AKA_WT_HANDOFF);
        aka_wt_path(&journal, wt && *wt ? wt : ".", AKA_WT_JOURNAL);
        rc = no_journal(journal.buf, &err);
    }
    if (rc == 0) {
        rc = aka_handoff_submit(handoff.buf, journal.buf, &h, NULL, &err);
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
