/*
 * header.c — the header lines of `aka status`: what the campaign is (from
 * campaign.json), which version is the incumbent, how much budget it used
 * (state.json counters and the canonical version count that --max-iters is
 * checked against), and whether and why it stopped.
 */
#include "report/internal.h"

#include "contracts/operator.h"
#include "optimize/optimize.h"

#include <stdarg.h>
#include <string.h>

#define DASH "\xe2\x80\x94"

static void line(struct strbuf *out, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void line(struct strbuf *out, const char *label, const char *fmt, ...)
{
    struct strbuf value = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&value, fmt, ap);
    va_end(ap);
    /* Values come from files (an op_dir, an evaluator's failure text): escaped, no
     * file can forge another header line or drive the terminal. */
    strbuf_addf(out, "%-11s ", label);
    strbuf_add_escaped(out, value.buf, value.len);
    strbuf_addch(out, '\n');
    strbuf_release(&value);
}

static void count(struct strbuf *sb, long long v, const char *what)
{
    if (v >= 0)
        strbuf_addf(sb, "%lld %s", v, what);
    else
        strbuf_addf(sb, DASH " %s", what);
}

static void incumbent(const struct aka_report *r, struct strbuf *out)
{
    if (r->incumbent < 0) {
        line(out, "incumbent:", "none (no version has passed yet)");
        return;
    }
    const struct aka_report_version *v = &r->versions.v[r->incumbent];
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "v%ld (%s), commit %.12s, ", v->rec.version,
                aka_memory_status_names[v->rec.status], v->rec.git_commit_hash);
    if (aka_measured(v->latency_us))
        strbuf_addf(&sb, "%.3f \xc2\xb5s, ", v->latency_us);
    else
        strbuf_addstr(&sb, DASH " \xc2\xb5s, ");
    if (aka_measured(v->speedup_vs_v0))
        strbuf_addf(&sb, "%.3fx vs V0", v->speedup_vs_v0);
    else
        strbuf_addstr(&sb, DASH " vs V0");
    line(out, "incumbent:", "%s", sb.buf);
    strbuf_release(&sb);
}

/*
 * The incumbent's roofline: the record's own "roofline" (written with every episode's
 * record), else, for records written before one (V0, V1), computed now from the record's
 * latencies and this host's cached CPU ceilings: status measures nothing and opens no wiki.
 */
static void roofline(const struct aka_report *r, struct strbuf *out)
{
    struct aka_operator op;
    struct aka_err ignored = AKA_ERR_INIT;
    struct strbuf sb = STRBUF_INIT;
    if (r->incumbent < 0 || !r->has_campaign)
        return;
    const struct aka_report_version *v = &r->versions.v[r->incumbent];
    json_t *rec = json_object_get(v->rec.json, "roofline"), *made = NULL;
    if (!rec && aka_operator_load(r->campaign.op_dir, &op, &ignored) == 0) {
        made = aka_roofline_of(NULL, r->workspace, r->campaign.platform, &op,
                               json_object_get(v->rec.json, "performance"), false);
        aka_operator_release(&op);
    }
    aka_roofline_line(rec ? rec : made, &sb);
    if (made)
        strbuf_addf(&sb, " (from v%ld's latencies now: its record has no roofline)",
                    v->rec.version);
    line(out, "roofline:", "%s", sb.buf);
    json_decref(made);
    strbuf_release(&sb);
}

static void budget(const struct aka_report *r, struct strbuf *out)
{
    const struct aka_report_state *s = &r->state;
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%zu canonical version(s)", r->versions.n);
    if (r->versions.n)
        strbuf_addf(&sb, ", latest v%ld", r->versions.v[r->versions.n - 1].rec.version);
    if (!s->present) {
        strbuf_addf(&sb, "; no episode counters yet (no %s)", aka_ws_rel(AKA_WS_STATE));
    } else {
        strbuf_addstr(&sb, "; ");
        count(&sb, s->episodes, "episodes (");
        count(&sb, s->accepted, "accepted, ");
        count(&sb, s->rejected, "rejected, ");
        count(&sb, s->pivoted, "pivoted, ");
        count(&sb, s->blocked, "blocked, ");
        count(&sb, s->interrupted, "interrupted, ");
        count(&sb, s->protocol_failures, "protocol failures); ");
        count(&sb, s->tokens, "tokens; ");
        count(&sb, s->stall, "without promotion");
    }
    line(out, "budget:", "%s", sb.buf);
    strbuf_release(&sb);
}

/* The SOL submission and its check as submitted (docs/campaign.md, "Finalization"). */
static void submission(const struct aka_report *r, struct strbuf *out)
{
    const struct aka_report_submission *s = &r->state.submission;
    struct strbuf text = STRBUF_INIT;
    if (!s->present)
        return;
    aka_submission_check_text(s->check, s->checked_by, s->note, s->detail, &text);
    if (strcmp(s->check, "unchecked") == 0)
        line(out, "submission:", "%s (%s)", s->path, text.buf);
    else
        line(out, "submission:", "%s, %s", s->path, text.buf);
    strbuf_release(&text);
}

static void progress(const struct aka_report *r, struct strbuf *out)
{
    if (r->live.present && r->live.phase)
        line(out, "live:", "%s%s%s%s", r->live.phase, r->live.updated_at ? " (updated " : "",
             r->live.updated_at ? r->live.updated_at : "", r->live.updated_at ? ")" : "");
    if (r->stop_reason)
        line(out, "stopped:", "%s", r->stop_reason);
    if (r->has_failed_v0) {
        const char *why = json_string_value(
            json_object_get(json_object_get(r->failed_v0.json, "quality_gate"), "failure_reason"));
        line(out, "failed V0:", "%s: %s", r->failed_v0_file, why ? why : "no reason recorded");
    }
}

void aka_report_render_header(const struct aka_report *r, struct strbuf *out)
{
    const struct aka_report_campaign *c = &r->campaign;
    line(out, "workspace:", "%s", r->workspace);
    if (r->has_campaign) {
        line(out, "operator:", "%s (%s)", c->op_name, c->op_dir);
        line(out, "layout:", "%s (kernel file %s)", c->layout, c->kernel);
        line(out, "framework:", "%s", c->framework);
        line(out, "platform:", "%s", c->platform);
        line(out, "mode:", "%s", c->mode);
        line(out, "agent:", "%s", c->agent);
        line(out, "isolation:", "%s", c->isolation);
    }
    incumbent(r, out);
    roofline(r, out);
    budget(r, out);
    progress(r, out);
    submission(r, out);
}
