/*
 * to_json.c — the JSON form of a report (`aka status --json`, `aka memory list
 * --json`): the same numbers as the text, with null wherever the text says "—".
 * A consumer must be able to tell "not measured" from zero, so no missing
 * number becomes 0 here.
 */
#include "report/internal.h"

static json_t *num(double v)
{
    return aka_measured(v) ? json_real(v) : json_null();
}

static json_t *str(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *count(long long v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

static json_t *vname(long n)
{
    return n >= 0 ? json_sprintf("v%ld", n) : json_null();
}

static json_t *verification(const struct aka_report_verification *v)
{
    if (!v->present)
        return json_null();
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "method", str(v->method), "abba_pairs",
                     count(v->abba_pairs), "improvement_pct", num(v->improvement_pct), "ci_low_pct",
                     num(v->ci_low_pct), "ci_high_pct", num(v->ci_high_pct), "dispersion_pct",
                     num(v->dispersion_pct));
}

json_t *aka_report_version_to_json(const struct aka_report_version *v)
{
    const struct aka_memory_record *m = &v->rec;
    json_t *o = json_pack(
        "{s:o, s:s, s:s, s:s, s:s, s:b, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
        "version", vname(m->version), "file", v->file, "status", aka_memory_status_names[m->status],
        "quality_gate", m->quality_gate, "correctness", m->correctness, "masked", m->masked, "kind",
        str(v->kind), "commit", str(m->git_commit_hash), "timestamp", m->timestamp,
        "measurement_status", str(m->measurement_status), "latency_us_geomean", num(v->latency_us),
        "speedup_vs_v0", num(v->speedup_vs_v0), "speedup_shapes",
        json_integer((json_int_t)v->speedup_shapes), "speedup_of_shapes",
        json_integer((json_int_t)v->speedup_of), "carried_from_version", str(v->carried_from),
        "description", str(v->description));
    json_object_set_new(o, "measured_shape_count",
                        json_integer((json_int_t)m->latency_us_by_shape.n));
    json_object_set_new(o, "verification", verification(&v->verify));
    return o;
}

static json_t *campaign(const struct aka_report *r)
{
    const struct aka_report_campaign *c = &r->campaign;
    if (!r->has_campaign)
        return json_null();
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "operator", c->op_name,
                     "op_dir", c->op_dir, "layout", c->layout, "kernel", c->kernel, "framework",
                     c->framework, "platform", c->platform, "mode", c->mode, "agent", c->agent,
                     "isolation", c->isolation, "created_at", str(c->created_at));
}

static json_t *incumbent(const struct aka_report *r)
{
    if (r->incumbent < 0)
        return json_null();
    const struct aka_report_version *v = &r->versions.v[r->incumbent];
    return json_pack("{s:o, s:s, s:o, s:o, s:o}", "version", vname(v->rec.version), "status",
                     aka_memory_status_names[v->rec.status], "commit", str(v->rec.git_commit_hash),
                     "latency_us_geomean", num(v->latency_us), "speedup_vs_v0",
                     num(v->speedup_vs_v0));
}

static json_t *budget(const struct aka_report *r)
{
    const struct aka_report_state *s = &r->state;
    long latest = r->versions.n ? r->versions.v[r->versions.n - 1].rec.version : -1;
    return json_pack("{s:b, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "state_file",
                     s->present, "canonical_versions", (json_int_t)r->versions.n, "latest_version",
                     vname(latest), "episodes", count(s->episodes), "accepted", count(s->accepted),
                     "rejected", count(s->rejected), "pivoted", count(s->pivoted), "blocked",
                     count(s->blocked), "interrupted", count(s->interrupted), "protocol_failures",
                     count(s->protocol_failures), "tokens", count(s->tokens),
                     "consecutive_without_promotion", count(s->stall));
}

static json_t *live(const struct aka_report *r)
{
    if (!r->live.present)
        return json_null();
    return json_pack("{s:o, s:o, s:o}", "phase", str(r->live.phase), "updated_at",
                     str(r->live.updated_at), "latest_version", vname(r->live.latest_version));
}

static json_t *failed_v0(const struct aka_report *r)
{
    if (!r->has_failed_v0)
        return json_null();
    json_t *why =
        json_object_get(json_object_get(r->failed_v0.json, "quality_gate"), "failure_reason");
    return json_pack("{s:s, s:s, s:O}", "file", r->failed_v0_file, "timestamp",
                     r->failed_v0.timestamp, "failure_reason", why ? why : json_null());
}

static json_t *submission(const struct aka_report *r)
{
    const struct aka_report_submission *s = &r->state.submission;
    if (!s->present)
        return json_null();
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "path", s->path, "check", s->check, "checked_by",
                     str(s->checked_by), "note", str(s->note), "detail", str(s->detail));
}

json_t *aka_report_to_json(const struct aka_report *r)
{
    json_t *versions = json_array();
    for (size_t i = 0; i < r->versions.n; i++)
        json_array_append_new(versions, aka_report_version_to_json(&r->versions.v[i]));
    return json_pack("{s:s, s:s, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}", "schema",
                     AKA_STATUS_SCHEMA, "workspace", r->workspace, "campaign", campaign(r),
                     "incumbent", incumbent(r), "budget", budget(r), "stopped",
                     r->stop_reason != NULL, "stop_reason", str(r->stop_reason), "live", live(r),
                     "failed_v0", failed_v0(r), "submission", submission(r), "versions", versions);
}
