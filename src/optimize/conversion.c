/*
 * conversion.c — what an episode does while the Triton→Gluon latch is on
 * (DESIGN §3, §6; the latch itself: schedule.c, its persistence: stops.c):
 * the brief gains the conversion directive, a candidate must import Gluon
 * (pending or latched: a Gluon campaign never switches back), and a pending
 * conversion is accepted at parity (at most 5% slower) when it does not win.
 */
#include "agents/agents.h"
#include "base/fs.h"
#include "optimize/internal.h"

#include <stdio.h>
#include <string.h>

int aka_conversion_brief(const struct aka_run *r, const struct aka_optimize_opts *o,
                         struct strbuf *brief, struct aka_err *err)
{
    if (r->conversion != AKA_CONVERSION_PENDING)
        return 0;
    struct strbuf tpl = STRBUF_INIT;
    char after[24];
    snprintf(after, sizeof(after), "%d", o->convert_after);
    const struct aka_brief_var vars[] = {
        {"kernel_file", r->camp.kernel},
        {"convert_after", after},
        {"tolerance_pct", "5"},
        {NULL, NULL},
    };
    struct strbuf directive = STRBUF_INIT;
    strbuf_addf(&tpl, "%s/runtime/prompts/conversion.md", r->env.repo_root);
    int rc = aka_brief_render(tpl.buf, vars, &directive, err); /* renders into a fresh buffer */
    if (rc == 0)
        strbuf_add(brief, directive.buf, directive.len);
    strbuf_release(&directive);
    strbuf_release(&tpl);
    return rc;
}

void aka_conversion_check_candidate(const struct aka_run *r, struct aka_episode *ep)
{
    struct strbuf path = STRBUF_INIT, src = STRBUF_INIT;
    struct aka_err e = AKA_ERR_INIT;
    if (r->conversion == AKA_CONVERSION_NONE || ep->status != AKA_MEM_PROMOTED)
        return;
    /* The terminal assessment already proved the worktree clean at the candidate
     * commit, so its kernel file is the candidate's. */
    aka_path_join(&path, ep->worktree.buf, r->camp.kernel);
    bool gluon = aka_read_file(path.buf, &src, (size_t)16 << 20, &e) == 0 &&
                 aka_kernel_imports_gluon(src.buf);
    if (!gluon) {
        ep->status = AKA_MEM_REJECTED;
        snprintf(ep->violation, sizeof(ep->violation), "%s",
                 r->conversion == AKA_CONVERSION_PENDING
                     ? "mandatory conversion candidate is not a committed Gluon kernel"
                     : "the campaign is latched to Gluon; the candidate does not import Gluon");
    }
    strbuf_release(&path);
    strbuf_release(&src);
}

bool aka_conversion_accepts(const struct aka_run *r, double candidate_us, double incumbent_us,
                            json_t *verification)
{
    if (r->conversion != AKA_CONVERSION_PENDING)
        return false;
    bool ok = aka_conversion_parity(candidate_us, incumbent_us);
    json_object_set_new(verification, "conversion_parity",
                        json_pack("{s:f, s:f, s:f, s:b}", "candidate_latency_us", candidate_us,
                                  "incumbent_latency_us", incumbent_us, "tolerance_pct", 5.0,
                                  "accepted", ok));
    return ok;
}
