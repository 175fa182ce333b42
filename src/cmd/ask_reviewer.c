/*
 * ask_reviewer.c — `aka ask-codex` and `aka ask-qoder`: an agent asks an
 * external reviewer for a second opinion on its frozen plan (DESIGN §4.5,
 * reference §9). This file only parses flags and prints; the reviewer call,
 * the campaign's cache of disabled reviewers and the token ledger are
 * aka_plan_review (agents/agents.h).
 */
#include "agents/agents.h"
#include "base/opts.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A usage error (exit 2); the -1 is spelled out so that the analyzer sees it. */
#define USAGE_ERROR(err, ...) (aka_err_set((err), AKA_EXIT_USAGE, __VA_ARGS__), -1)

/* The description before the flag lines, for reviewer `name` (NAME in upper case). */
static void usage(struct strbuf *out, const char *name, const char *upper)
{
    strbuf_addf(
        out,
        "usage: aka ask-%s --plan FILE [--evidence FILE]... [--timeout S] [--workspace WS]\n\n"
        "Ask %s for an independent review of a frozen plan. It runs in an empty\n"
        "temporary directory on copies of the files, may not change them (a review\n"
        "that did is rejected), and its answer is printed with the sections\n"
        "%s_SUMMARY:, RISKS:, MISSING_REQUIREMENTS:, DIRECTION_RECOMMENDATIONS:,\n"
        "VALIDATION_RECOMMENDATIONS:, QUESTIONS_OR_ASSUMPTIONS:. Its tokens count toward\n"
        "the campaign's budget. --timeout defaults to $ATREX_ASK_%s_TIMEOUT, else 600.\n\n",
        name, name, upper, upper);
}

static void notes(struct strbuf *out, const char *name, const char *upper)
{
    strbuf_addf(out,
                "\nPrints ASK_%s_SKIPPED: ... when this session is %s itself and\n"
                "ASK_%s_DISABLED: <reason> when the campaign found it unavailable (exit 0).\n"
                "Exit status: 0 review printed, skipped or disabled; 1 the reviewer failed (it is\n"
                "disabled for the rest of the campaign); 3 the review was rejected (it changed\n"
                "its inputs, or lacks sections); 124 it timed out; 2 usage error.\n",
                upper, name, upper);
}

struct ask_args {
    const char *plan, *workspace;
    long timeout;
    struct strvec evidence;
};

#define OFF(f) offsetof(struct ask_args, f)

static const struct aka_opt ask_flags[] = {
    {.name = "--plan",
     .off = OFF(plan),
     .metavar = "FILE",
     .help = "the plan to review (required, not empty)"},
    {.name = "--evidence",
     .off = OFF(evidence),
     .kind = AKA_OPT_LIST,
     .metavar = "FILE",
     .help = "a file the reviewer should weigh (profile summary, journal, measurements); at "
             "most 16"},
    {.name = "--timeout",
     .off = OFF(timeout),
     .kind = AKA_OPT_LONG,
     .lo = 1,
     .hi = 1e15,
     .def = "0",
     .metavar = "S",
     .help = "seconds to wait"},
    {.name = "--workspace",
     .off = OFF(workspace),
     .env = "ATREX_AKA_WORKSPACE",
     .metavar = "WS",
     .help = "the campaign: its cache of disabled reviewers and its token ledger"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_ask(int argc, char **argv, struct ask_args *a, enum aka_reviewer r,
                     struct aka_err *err)
{
    static const char *const upper[] = {"CODEX", "QODER"};
    struct strbuf text = STRBUF_INIT, tail = STRBUF_INIT, name = STRBUF_INIT;
    struct aka_opt_group groups[] = {{.table = ask_flags, .base = a}, {0}};
    strbuf_addf(&name, "ask-%s", aka_reviewer_names[r]);
    usage(&text, aka_reviewer_names[r], upper[r]);
    notes(&tail, aka_reviewer_names[r], upper[r]);
    const struct aka_opt_doc doc = {name.buf, text.buf, tail.buf};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc == 0 && !a->plan)
        rc = USAGE_ERROR(err, "%s: --plan: required (the plan file to review)", name.buf);
    strbuf_release(&text);
    strbuf_release(&tail);
    strbuf_release(&name);
    return rc;
}

static int ask_main(int argc, char **argv, const struct aka_app_ctx *ctx, enum aka_reviewer r)
{
    struct aka_err err = AKA_ERR_INIT;
    struct ask_args a = {.evidence = STRVEC_INIT};
    struct aka_review_result res = {.text = STRBUF_INIT};
    int rc = parse_ask(argc, argv, &a, r, &err);
    if (rc != 0) {
        strvec_clear(&a.evidence);
        return rc < 0 ? aka_err_report(&err) : 0;
    }
    struct aka_review_request rq = {.reviewer = r,
                                    .plan = a.plan,
                                    .evidence = (const char *const *)a.evidence.v,
                                    .workspace = a.workspace && *a.workspace ? a.workspace : NULL,
                                    .repo_root = ctx->repo_root,
                                    .timeout_s = a.timeout};
    if (aka_plan_review(&rq, &res, &err) < 0) {
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

static const char probe_usage[] =
    "usage: aka plan-reviewers --workspace WS --agent-cli CLI\n\n"
    "Probe the plan reviewers of a campaign once (cached in\n"
    "WS/.aka/plan_reviewers.json) and print the cache and the tokens reviewers\n"
    "have used. The campaign runs this itself before its first episode.\n\n";

struct probe_args {
    const char *ws, *cli;
};

static const struct aka_opt probe_flags[] = {
    {.name = "--workspace",
     .off = offsetof(struct probe_args, ws),
     .metavar = "WS",
     .help = "the campaign workspace; required"},
    {.name = "--agent-cli",
     .off = offsetof(struct probe_args, cli),
     .metavar = "CLI",
     .help = "the campaign's agent CLI; required"},
    {.name = NULL},
};

/* `aka plan-reviewers --workspace WS --agent-cli B`: the campaign-start probe on its own. */
int cmd_plan_reviewers(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_plan_reviewers pr;
    struct probe_args a = {0};
    struct aka_opt_group groups[] = {{.table = probe_flags, .base = &a}, {0}};
    static const struct aka_opt_doc doc = {"plan-reviewers", probe_usage, NULL};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    int rc = aka_opts_parse(&c, argc, argv, 1, &err);
    if (rc == 0 && (!a.ws || !a.cli))
        rc =
            USAGE_ERROR(&err, "plan-reviewers: %s: required", a.ws ? "--agent-cli" : "--workspace");
    if (rc != 0)
        return rc < 0 ? aka_err_report(&err) : 0;
    if (aka_plan_reviewers_ensure(a.ws, a.cli, ctx->repo_root, &pr, &err) < 0) {
        fprintf(stderr, "aka plan-reviewers: %s\n", err.msg);
        return err.code ? err.code : AKA_EXIT_FAILED;
    }
    for (int i = 0; i < AKA_REVIEWERS; i++)
        printf("%s: %s (%s): %s\n", aka_reviewer_names[i],
               pr.r[i].available ? "enabled" : "disabled", pr.r[i].status, pr.r[i].reason);
    printf("probed: %s\ntokens: %lld\n", pr.probed ? "yes" : "no (cached)",
           aka_plan_reviewer_tokens(a.ws));
    return 0;
}
