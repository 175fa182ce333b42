/*
 * submission_check.c — the finalized SOL submission evaluated the way a user would
 * submit it (issue 16): `aka eval --evaluator official --kernel <workspace>/solution.json`
 * on the campaign's transport, against the operator snapshot.
 *
 * With SOL-ExecBench installed in the sandbox runtime its own tool decides; without it
 * aka's judge evaluates the file, which still proves that the packaging (inlined sources,
 * entry point, calling style) loads and passes as a solution. Either way the outcome is
 * reported beside the summary and never changes what the campaign decided: the incumbent
 * was verified by aka's judge, and the official tool runs the candidate in its own
 * process, where a hostile kernel could forge what it reports (official.py). A failed
 * check keeps solution.json in place (nothing is lost) and says so on the final line.
 */
#include "evaluator/evaluator.h"
#include "optimize/optimize.h"

#include <string.h>

/* The evaluator names its producer: "official.<tool>" when the owner's tool decided. */
static bool by_official(const char *evaluator)
{
    return evaluator && strncmp(evaluator, "official.", 9) == 0;
}

static void fill(struct aka_finalize_summary *s, const struct aka_eval_outcome *out)
{
    const struct aka_result *res = &out->result;
    snprintf(s->checked_by, sizeof(s->checked_by), "%s",
             by_official(res->evaluator) ? res->evaluator + 9
             : res->evaluator            ? res->evaluator
                                         : "an unnamed evaluator");
    s->check = res->all_pass ? AKA_SUBMISSION_PASSED : AKA_SUBMISSION_FAILED;
    if (res->all_pass)
        snprintf(s->check_detail, sizeof(s->check_detail), "%lld/%lld workloads passed",
                 res->passed, res->total);
    else
        snprintf(s->check_detail, sizeof(s->check_detail), "%s",
                 res->failures.n ? res->failures.v[0] : "it did not pass (no failure named)");
    if (!by_official(res->evaluator))
        snprintf(s->check_note, sizeof(s->check_note),
                 "no official evaluator in the sandbox runtime");
}

void aka_optimize_check_submission(const struct aka_sandbox_transport *t,
                                   const struct aka_eval_request *base,
                                   struct aka_finalize_summary *s)
{
    struct aka_eval_request req = *base;
    struct aka_eval_outcome out;
    struct aka_err err = AKA_ERR_INIT;
    s->check = AKA_SUBMISSION_UNCHECKED;
    if (!s->submission_written)
        return;
    req.kernel = s->submission;
    req.official = true;
    aka_eval_outcome_init(&out);
    if (aka_evaluate(t, &req, &out, &err) == 0)
        fill(s, &out);
    else
        snprintf(s->check_detail, sizeof(s->check_detail), "not evaluated: %s", err.msg);
    aka_eval_outcome_release(&out);
}
