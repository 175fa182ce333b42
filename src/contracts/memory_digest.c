/*
 * memory_digest.c — what a campaign learns, carried from one episode to the
 * next (DESIGN §3; upstream's memory record fields experience,
 * open_directions and profile_evidence):
 *
 *   experience         the journal's experiments, compacted: known keys kept as
 *                      strings (non-strings as sorted-key JSON), each capped;
 *                      other keys folded into one "details" string; at most
 *                      AKA_MEMORY_MAX_EXPERIMENTS, the latest ones;
 *   open_directions    the journal outcome's next_directions (at most 3);
 *   profile_evidence   the profile summary the agent cited, or "not_profiled";
 *   the digest         the text a brief shows: the last episodes' directions,
 *                      dead ends and failures with their evidence, bounded.
 *
 * Everything here is the agent's own account (untrusted text): it is capped,
 * never interpreted, and a brief inserts it verbatim (no placeholder expansion).
 */
#include "contracts/records.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kept_keys[] = {"name",   "hypothesis", "change",    "evidence",
                                        "result", "decision",   "timestamp", NULL};

/* s capped at cap bytes (on a UTF-8 boundary), with a marker when cut. */
static json_t *capped(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n <= cap)
        return json_string(s);
    while (cap > 0 && ((unsigned char)s[cap] & 0xC0) == 0x80)
        cap--;
    struct strbuf b = STRBUF_INIT;
    strbuf_add(&b, s, cap);
    strbuf_addstr(&b, " [truncated]");
    json_t *j = json_string(b.buf);
    strbuf_release(&b);
    return j ? j : json_string("[not valid UTF-8]");
}

static json_t *as_text(const json_t *v, size_t cap)
{
    if (json_is_string(v))
        return capped(json_string_value(v), cap);
    char *s = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *j = capped(s ? s : "", cap);
    free(s);
    return j;
}

static bool is_kept(const char *key)
{
    for (size_t i = 0; kept_keys[i]; i++)
        if (strcmp(key, kept_keys[i]) == 0)
            return true;
    return false;
}

static json_t *compact_experiment(size_t index, json_t *exp)
{
    json_t *o = json_pack("{s:I}", "index", (json_int_t)index), *details = json_object(), *v;
    const char *key;
    json_object_foreach(exp, key, v)
    {
        if (is_kept(key))
            json_object_set_new(o, key, as_text(v, AKA_MEMORY_FIELD_CAP));
        else
            json_object_set(details, key, v);
    }
    if (json_object_size(details))
        json_object_set_new(o, "details", as_text(details, AKA_MEMORY_FIELD_CAP));
    json_decref(details);
    return o;
}

json_t *aka_memory_experience(const json_t *journal)
{
    json_t *exps = json_object_get(journal, "experiments"), *out = json_array();
    size_t n = json_array_size(exps), objects = 0;
    size_t first = n > AKA_MEMORY_MAX_EXPERIMENTS ? n - AKA_MEMORY_MAX_EXPERIMENTS : 0;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(exps, i);
        if (!json_is_object(e))
            continue;
        objects++;
        if (i >= first)
            json_array_append_new(out, compact_experiment(i + 1, e));
    }
    return json_pack("{s:I, s:I, s:o}", "experiment_count", (json_int_t)n,
                     "recorded_experiment_count", (json_int_t)objects, "experiments", out);
}

json_t *aka_memory_open_directions(const json_t *journal)
{
    json_t *dirs = json_object_get(json_object_get(journal, "outcome"), "next_directions");
    json_t *out = json_array(), *d;
    size_t i;
    json_array_foreach(dirs, i, d)
    {
        if (json_array_size(out) >= AKA_MEMORY_MAX_DIRECTIONS)
            break;
        if (json_is_string(d) && *json_string_value(d))
            json_array_append_new(out,
                                  json_pack("{s:o, s:s}", "direction",
                                            capped(json_string_value(d), AKA_MEMORY_FIELD_CAP),
                                            "rationale", "the episode journal's next_directions"));
    }
    return out;
}

json_t *aka_memory_profile_evidence(const json_t *journal, const json_t *profile)
{
    size_t n = json_array_size(json_object_get(journal, "experiments"));
    if (!json_is_object(profile))
        return json_pack("{s:s, s:o, s:s, s:[]}", "tool_used", "none", "evidence_summary",
                         json_sprintf("%zu structured experiments, no profile cited", n),
                         "bottleneck_type", "not_profiled", "evidence_chain");
    json_t *chain = json_array(), *k;
    size_t i;
    json_array_foreach(json_object_get(profile, "kernels"), i, k)
    {
        if (i >= 3)
            break;
        json_array_append_new(
            chain,
            json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?}", "name", json_object_get(k, "name"), "bound",
                      json_object_get(k, "bound"), "duration_ns", json_object_get(k, "duration_ns"),
                      "memory_sol_pct", json_object_get(k, "memory_sol_pct"), "compute_sol_pct",
                      json_object_get(k, "compute_sol_pct")));
    }
    json_t *top = json_array_get(json_object_get(profile, "kernels"), 0);
    const char *tool = json_string_value(json_object_get(profile, "tool"));
    const char *bound = json_string_value(json_object_get(top, "bound"));
    const char *text = json_string_value(json_object_get(profile, "text"));
    return json_pack("{s:s, s:o, s:s, s:o}", "tool_used", tool ? tool : "unknown",
                     "evidence_summary", capped(text ? text : "", AKA_MEMORY_PROFILE_CAP),
                     "bottleneck_type", bound ? bound : "unknown", "evidence_chain", chain);
}

json_t *aka_memory_wiki_citations(const json_t *journal)
{
    json_t *out = json_array(), *e, *id;
    size_t i, k;
    json_array_foreach(json_object_get(journal, "experiments"), i, e)
    {
        const json_t *d = json_object_get(e, "decision");
        json_array_foreach(json_object_get(e, "wiki_refs"), k, id)
        {
            if (!json_is_string(id))
                continue;
            json_array_append_new(out, json_pack("{s:O, s:I, s:o}", "id", id, "experiment",
                                                 (json_int_t)(i + 1), "disposition",
                                                 d ? as_text(d, 200) : json_string("")));
        }
    }
    return out;
}

/* ---- the digest a brief shows ---------------------------------------------------------- */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : NULL;
}

/* One line, control characters flattened, capped: agent text stays on its line. */
static void add_line(struct strbuf *out, const char *prefix, const char *text)
{
    size_t start = out->len;
    strbuf_addstr(out, prefix);
    for (const char *p = text; *p && out->len - start < AKA_MEMORY_DIGEST_LINE; p++)
        strbuf_addch(out, iscntrl((unsigned char)*p) ? ' ' : *p);
    if (out->len - start >= AKA_MEMORY_DIGEST_LINE)
        strbuf_addstr(out, " [...]");
    strbuf_addch(out, '\n');
}

/* A dead end: an experiment its author decided against (or that failed). */
static bool dead_end(const json_t *e)
{
    static const char *const words[] = {"reject", "revert", "abandon", "dead end", "fail",
                                        "slower", "worse",  "regress", "discard",  NULL};
    char buf[256];
    snprintf(buf, sizeof(buf), "%s %s", str(e, "decision") ? str(e, "decision") : "",
             str(e, "result") ? str(e, "result") : "");
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    for (size_t i = 0; words[i]; i++)
        if (strstr(buf, words[i]))
            return true;
    return false;
}

static void digest_record(const json_t *r, struct strbuf *out)
{
    struct strbuf b = STRBUF_INIT;
    const json_t *ep = json_object_get(r, "episode"), *gate = json_object_get(r, "quality_gate");
    const json_t *d, *e;
    size_t i;
    strbuf_addstr(&b, str(r, "version") ? str(r, "version") : "v?");
    if (json_is_object(ep)) /* baselines have no episode */
        strbuf_addf(&b, " (episode %lld, %s)",
                    (long long)json_integer_value(json_object_get(ep, "number")),
                    str(ep, "kind") ? str(ep, "kind") : "?");
    strbuf_addf(&b, ": %s", str(r, "status") ? str(r, "status") : "?");
    if (str(gate, "failure_reason"))
        strbuf_addf(&b, "; failure: %s", str(gate, "failure_reason"));
    add_line(out, "- ", b.buf);
    json_array_foreach(json_object_get(r, "open_directions"), i, d)
        add_line(out, "  direction: ", str(d, "direction") ? str(d, "direction") : "");
    json_array_foreach(json_object_get(json_object_get(r, "experience"), "experiments"), i, e)
    {
        if (!dead_end(e))
            continue;
        strbuf_reset(&b);
        strbuf_addf(&b, "%s: %s", str(e, "name") ? str(e, "name") : "experiment",
                    str(e, "result") ? str(e, "result") : str(e, "decision"));
        if (str(e, "evidence"))
            strbuf_addf(&b, " (evidence: %s)", str(e, "evidence"));
        add_line(out, "  dead end: ", b.buf);
    }
    const json_t *pe = json_object_get(r, "profile_evidence");
    if (str(pe, "tool_used") && strcmp(str(pe, "tool_used"), "none") != 0) {
        strbuf_reset(&b);
        strbuf_addf(&b, "%s, %s", str(pe, "bottleneck_type") ? str(pe, "bottleneck_type") : "?",
                    str(pe, "tool_used"));
        add_line(out, "  profile: ", b.buf);
    }
    strbuf_release(&b);
}

void aka_memory_digest(const json_t *const *records, size_t n, size_t cap, struct strbuf *out)
{
    size_t shown = 0;
    for (size_t i = n; i-- > 0;) { /* newest first: the cap drops the oldest */
        struct strbuf one = STRBUF_INIT;
        digest_record(records[i], &one);
        if (out->len + one.len > cap) {
            strbuf_release(&one);
            break;
        }
        strbuf_add(out, one.buf, one.len);
        strbuf_release(&one);
        shown++;
    }
    if (shown < n)
        strbuf_addf(out, "(%zu older record(s) left out; see `aka memory list`)\n", n - shown);
    if (n == 0)
        strbuf_addstr(out, "(no earlier episode yet)\n");
}
