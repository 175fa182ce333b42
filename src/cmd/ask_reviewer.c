/*
 * ask_reviewer.c — `aka ask-codex` and `aka ask-qoder`: an agent asks an
 * external reviewer for a second opinion on its frozen plan (DESIGN §4.5,
 * reference §9). This file only parses flags and prints; the reviewer call,
 * the campaign's cache of disabled reviewers and the token ledger are
 * aka_plan_review (agents/agents.h).
 */
#include "agents/agents.h"
#include "base/vec.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

static void usage(FILE *out, const char *name, const char *upper)
{
    fprintf(out,
            "usage: aka ask-%s --plan FILE [--evidence FILE]... [--timeout S] [--workspace WS]\n\n"
            "Ask %s for an independent review of a frozen plan. It runs in an empty\n"
            "temporary directory on copies of the files, may not change them (a review\n"
            "that did is rejected), and its answer is printed with the sections\n"
            "%s_SUMMARY:, RISKS:, MISSING_REQUIREMENTS:, DIRECTION_RECOMMENDATIONS:,\n"
            "VALIDATION_RECOMMENDATIONS:, QUESTIONS_OR_ASSUMPTIONS:. Its tokens count toward\n"
            "the campaign's budget.\n\n"
            "  --plan FILE      the plan to review (required, not empty)\n"
            "  --evidence FILE  a file the reviewer should weigh (profile summary, journal,\n"
            "                   measurements); repeatable, at most 16\n"
            "  --timeout S      seconds to wait (default $ATREX_ASK_%s_TIMEOUT, else 600)\n"
            "  --workspace WS   the campaign (default $ATREX_AKA_WORKSPACE): its cache of\n"
            "                   disabled reviewers and its token ledger\n"
            "  --help           show this help\n\n"
            "Prints ASK_%s_SKIPPED: ... when this session is %s itself and\n"
            "ASK_%s_DISABLED: <reason> when the campaign found it unavailable (exit 0).\n"
            "Exit status: 0 review printed, skipped or disabled; 1 the reviewer failed (it is\n"
            "disabled for the rest of the campaign); 3 the review was rejected (it changed\n"
            "its inputs, or lacks sections); 124 it timed out; 2 usage error.\n",
            name, name, upper, upper, upper, name, upper);
}

struct ask_args {
    const char *plan, *timeout, *workspace;
    struct strvec evidence;
    bool help;
};

static int parse_args(int argc, char **argv, struct ask_args *a, struct aka_err *err)
{
    for (int i = 1; i < argc; i++) {
        const char *ev = NULL;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            a->help = true;
            continue;
        }
        if ((m = cmd_flag_value(argc, argv, &i, "--evidence", &ev, err)) != 0) {
            if (m < 0)
                return -1;
            strvec_push(&a->evidence, ev);
            continue;
        }
        if ((m = cmd_flag_value(argc, argv, &i, "--plan", &a->plan, err)) != 0 ||
            (m = cmd_flag_value(argc, argv, &i, "--timeout", &a->timeout, err)) != 0 ||
            (m = cmd_flag_value(argc, argv, &i, "--workspace", &a->workspace, err)) != 0) {
            if (m < 0)
                return -1;
            continue;
        }
        return USAGE_ERROR(err, "%s: unexpected argument (see aka %s --help)", argv[i], argv[0]);
    }
    if (!a->help && !a->plan)
        return USAGE_ERROR(err, "--plan: required (the plan file to review)");
    return 0;
}

static int parse_timeout(const char *s, long *out, struct aka_err *err)
{
    char *end = NULL;
    *out = 0;
    if (!s)
        return 0;
    long t = strtol(s, &end, 10);
    if (!*s || *end || t <= 0)
        return USAGE_ERROR(err,
                           "--timeout: expected a positive whole number of seconds; got "
                           "\"%s\"",
                           s);
    *out = t;
    return 0;
}

static int ask_main(int argc, char **argv, const struct aka_app_ctx *ctx, enum aka_reviewer r)
{
    static const char *const upper[] = {"CODEX", "QODER"};
    struct aka_err err = AKA_ERR_INIT;
    struct ask_args a = {.evidence = STRVEC_INIT};
    struct aka_review_result res = {.text = STRBUF_INIT};
    long timeout_s = 0;
    int rc = parse_args(argc, argv, &a, &err);
    if (rc == 0 && a.help) {
        usage(stdout, aka_reviewer_names[r], upper[r]);
        strvec_clear(&a.evidence);
        return 0;
    }
    const char *ws = a.workspace ? a.workspace : getenv("ATREX_AKA_WORKSPACE");
    struct aka_review_request rq = {.reviewer = r,
                                    .plan = a.plan,
                                    .evidence = (const char *const *)a.evidence.v,
                                    .workspace = ws && *ws ? ws : NULL,
                                    .repo_root = ctx->repo_root};
    if (rc == 0)
        rc = parse_timeout(a.timeout, &timeout_s, &err);
    rq.timeout_s = timeout_s;
    if (rc == 0)
        rc = aka_plan_review(&rq, &res, &err);
    if (rc < 0) {
        fprintf(stderr, "aka %s: %s\n", argv[0], err.msg);
        rc = err.code ? err.code : AKA_EXIT_USAGE;
    } else {
        FILE *out = res.outcome == AKA_REVIEW_DONE || res.outcome == AKA_REVIEW_SKIPPED ||
                            res.outcome == AKA_REVIEW_DISABLED
                        ? stdout
                        : stderr;
        fprintf(out, "%s\n", res.text.buf);
        rc = res.exit_code;
    }
    aka_review_result_release(&res);
    strvec_clear(&a.evidence);
    return rc;
}

int cmd_ask_codex(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    return ask_main(argc, argv, ctx, AKA_REVIEWER_CODEX);
}

int cmd_ask_qoder(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    return ask_main(argc, argv, ctx, AKA_REVIEWER_QODER);
}

/* `aka plan-reviewers --workspace WS --agent-cli B`: the campaign-start probe on its own. */
int cmd_plan_reviewers(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_plan_reviewers pr;
    const char *ws = NULL, *cli = NULL;
    for (int i = 1; i < argc; i++) {
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: aka plan-reviewers --workspace WS --agent-cli CLI\n\n"
                   "Probe the plan reviewers of a campaign once (cached in\n"
                   "WS/.aka/plan_reviewers.json) and print the cache and the tokens reviewers\n"
                   "have used. The campaign runs this itself before its first episode.\n");
            return 0;
        }
        if ((m = cmd_flag_value(argc, argv, &i, "--workspace", &ws, &err)) == 0 &&
            (m = cmd_flag_value(argc, argv, &i, "--agent-cli", &cli, &err)) == 0)
            m = USAGE_ERROR(&err, "%s: unexpected argument (see aka plan-reviewers --help)",
                            argv[i]);
        if (m < 0) {
            fprintf(stderr, "aka plan-reviewers: %s\n", err.msg);
            return AKA_EXIT_USAGE;
        }
    }
    if (!ws || !cli) {
        fprintf(stderr, "aka plan-reviewers: %s: required\n", ws ? "--agent-cli" : "--workspace");
        return AKA_EXIT_USAGE;
    }
    if (aka_plan_reviewers_ensure(ws, cli, ctx->repo_root, &pr, &err) < 0) {
        fprintf(stderr, "aka plan-reviewers: %s\n", err.msg);
        return err.code ? err.code : AKA_EXIT_FAILED;
    }
    for (int i = 0; i < AKA_REVIEWERS; i++)
        printf("%s: %s (%s): %s\n", aka_reviewer_names[i],
               pr.r[i].available ? "enabled" : "disabled", pr.r[i].status, pr.r[i].reason);
    printf("probed: %s\ntokens: %lld\n", pr.probed ? "yes" : "no (cached)",
           aka_plan_reviewer_tokens(ws));
    return 0;
}
