/*
 * import_map.c — mapping one upstream gpu-wiki record onto our record format.
 *
 * Upstream kernel records ("clean-1.3") keep their scope under
 * retrieval.scope and their prose under payload; hardware records ("hw-1.0")
 * keep numbers under facts and citations under provenance.sources. We keep the
 * meaning and the citation, and drop what we cannot vouch for: verbatim code
 * snippets (their licence cannot be traced from the record) and ranking
 * metadata (worth, evidence counters), which our index does not use.
 */
#include "wiki/wiki_impl.h"

#include <stdio.h>
#include <string.h>

#define TITLE_CAP 200
#define BODY_CAP  16000

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* A scope value in our vocabulary, or "any". */
static const char *canon_or_any(enum wiki_axis ax, const char *v)
{
    const char *c = v ? wiki_canon(ax, v) : NULL;
    return c ? c : "any";
}

/* Fill scope {vendor, arch, chip, framework, family}; NULL vendor: unusable. */
static json_t *make_scope(const char *vendor, const char *arch, const char *chip,
                          const char *framework, const char *family)
{
    const char *v = vendor ? wiki_canon(AX_VENDOR, vendor) : NULL;
    if (!v)
        return NULL;
    const char *a = canon_or_any(AX_ARCH, arch);
    if (strcmp(a, "any") && strcmp(wiki_arch_vendor(a), v))
        a = "any";
    const char *c = canon_or_any(AX_CHIP, chip);
    if (strcmp(c, "any") && strcmp(wiki_chip_arch(c), a))
        c = "any";
    const char *f = canon_or_any(AX_FRAMEWORK, framework);
    if (!wiki_framework_fits(v, f))
        f = "any";
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "vendor", v, "arch", a, "chip", c, "framework", f,
                     "family", canon_or_any(AX_FAMILY, family));
}

static void cap_string(json_t *rec, const char *key, const char *s, size_t cap)
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_add(&sb, s, strlen(s) > cap ? cap : strlen(s));
    json_object_set_new(rec, key, json_string(sb.buf));
    strbuf_release(&sb);
}

/* "Label: text" paragraphs from the payload's prose fields, in a fixed order. */
static void payload_body(const json_t *payload, struct strbuf *body)
{
    static const char *const fields[][2] = {
        {"goal", "Goal"},       {"what", "What"},           {"when", "When"},
        {"change", "Change"},   {"mechanism", "Mechanism"}, {"caveats", "Caveats"},
        {"attempted", "Tried"}, {"verdict", "Verdict"},     {"lesson", "Lesson"},
        {"summary", "Summary"}, {"rule", "Rule"},           {"rationale", "Rationale"},
    };
    const char *stmt = str_at(json_object_get(payload, "problem"), "statement");
    if (stmt)
        strbuf_addf(body, "Problem: %s\n", stmt);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        json_t *v = json_object_get(payload, fields[i][0]), *e;
        size_t k;
        if (json_is_string(v))
            strbuf_addf(body, "%s: %s\n", fields[i][1], json_string_value(v));
        json_array_foreach(v, k, e) if (json_is_string(e))
            strbuf_addf(body, "%s: %s\n", fields[i][1], json_string_value(e));
    }
}

static void append_strings(json_t *dst, const json_t *src)
{
    size_t i;
    json_t *v;
    json_array_foreach(src, i, v) if (json_is_string(v) && *json_string_value(v))
        json_array_append(dst, v);
}

static const char *kernel_kind(const char *type)
{
    if (!type)
        return NULL;
    if (strcmp(type, "anti-strategy") == 0)
        return "pitfall";
    if (strcmp(type, "doc") == 0)
        return "reference";
    return "technique";
}

/* Upstream workload families that are one of ours under another name. */
static const char *family_of(const json_t *retrieval)
{
    const char *fam = str_at(json_object_get(retrieval, "scope"), "operator_family");
    if (fam && wiki_canon(AX_FAMILY, fam))
        return fam;
    const char *wl = str_at(json_object_get(retrieval, "generality"), "workload_family");
    if (wl && strcmp(wl, "gemm-projection") == 0)
        return "gemm";
    if (wl && strcmp(wl, "mlp-activation") == 0)
        return "elementwise";
    return wl;
}

static json_t *kernel_source(const json_t *up, const char *id, const char *rel)
{
    json_t *raw = json_object_get(json_object_get(up, "evidence"), "raw");
    struct strbuf title = STRBUF_INIT;
    strbuf_addf(&title, "Upstream gpu-wiki kernel record %s", id);
    json_t *src = json_pack("{s:s, s:s, s:s}", "kind", "document", "title", title.buf, "ref", rel);
    const char *origin =
        str_at(raw, "source_repo") ? str_at(raw, "source_repo") : str_at(raw, "page_path");
    if (origin)
        json_object_set_new(src, "note", json_sprintf("upstream origin: %s", origin));
    strbuf_release(&title);
    return src;
}

int wiki_import_kernel(const json_t *up, const char *rel, json_t *out, struct strvec *notes)
{
    const char *id = str_at(up, "id");
    const char *kind = kernel_kind(str_at(up, "type"));
    json_t *retrieval = json_object_get(up, "retrieval");
    json_t *sc = json_object_get(retrieval, "scope"), *payload = json_object_get(up, "payload");
    json_t *scope = make_scope(str_at(sc, "vendor"), str_at(sc, "arch"), str_at(sc, "product"),
                               str_at(sc, "dsl"), family_of(retrieval));
    if (!id || !kind || !scope || !json_is_object(payload)) {
        strvec_pushf(notes, "%s: skipped: needs id, type, retrieval.scope.vendor and payload", rel);
        json_decref(scope);
        return -1;
    }
    const char *title = str_at(payload, "title")       ? str_at(payload, "title")
                        : str_at(payload, "technique") ? str_at(payload, "technique")
                        : str_at(payload, "goal")      ? str_at(payload, "goal")
                                                       : id;
    struct strbuf body = STRBUF_INIT;
    payload_body(payload, &body);
    if (!body.len)
        strbuf_addstr(&body, title);
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:[], s:{s:s, s:s?, s:s}}", "schema",
                  "aka.wiki.kernel.v1", "id", id, "kind", kind, "scope", scope, "tags",
                  json_array(), "source", kernel_source(up, id, rel), "related", "upstream",
                  "schema", "clean-1.3", "type", str_at(up, "type"), "path", rel);
    cap_string(rec, "title", title, TITLE_CAP);
    cap_string(rec, "body", body.buf, BODY_CAP);
    append_strings(json_object_get(rec, "tags"), json_object_get(retrieval, "technique_tags"));
    append_strings(json_object_get(rec, "tags"),
                   json_object_get(json_object_get(retrieval, "signals"), "symptoms"));
    json_t *links = json_object_get(retrieval, "links");
    append_strings(json_object_get(rec, "related"), json_object_get(links, "see_also"));
    append_strings(json_object_get(rec, "related"), json_object_get(links, "depends_on"));
    json_array_append_new(out, rec);
    strbuf_release(&body);
    return 0;
}

/* The first provenance source as our document citation; NULL if none. */
static json_t *hw_source(const json_t *up)
{
    json_t *srcs = json_object_get(json_object_get(up, "provenance"), "sources");
    json_t *s = json_array_get(srcs, 0);
    const char *title = str_at(s, "title"), *ref = str_at(s, "ref");
    if (!title)
        return NULL;
    bool url = ref && (strncmp(ref, "https://", 8) == 0 || strncmp(ref, "http://", 7) == 0);
    return json_pack("{s:s, s:s, s:s}", "kind", "document", "title", title, url ? "url" : "ref",
                     ref ? ref : "upstream hw-1.0 record");
}

static json_t *hw_record(const char *id, const char *kind, json_t *scope, const char *title,
                         const char *body, json_t *source, const char *rel)
{
    json_t *rec = json_pack("{s:s, s:s, s:s, s:O, s:O, s:{s:s, s:s}}", "schema",
                            "aka.wiki.hardware.v1", "id", id, "kind", kind, "scope", scope,
                            "source", source, "upstream", "schema", "hw-1.0", "path", rel);
    cap_string(rec, "title", title, TITLE_CAP);
    cap_string(rec, "body", body, BODY_CAP);
    return rec;
}

/* One numeric spec-sheet value as a fact record. */
static void hw_fact(const char *sheet, const char *product, json_t *scope, json_t *source,
                    const char *rel, const char *quantity, const json_t *value, const char *unit,
                    json_t *out)
{
    struct strbuf id = STRBUF_INIT, title = STRBUF_INIT, body = STRBUF_INIT;
    if (!json_is_number(value))
        return;
    strbuf_addf(&id, "%s.%s", sheet, quantity);
    for (char *p = id.buf; *p; p++)
        if (*p == '_')
            *p = '-';
    strbuf_addf(&title, "%s: %s", product, quantity);
    strbuf_addf(&body, "%s %s is %g %s (imported from the upstream spec sheet %s).", product,
                quantity, json_number_value(value), unit, sheet);
    json_t *rec = hw_record(id.buf, "fact", scope, title.buf, body.buf, source, rel);
    json_object_set_new(
        rec, "fact",
        json_pack("{s:s, s:O, s:s}", "quantity", quantity, "value", value, "unit", unit));
    json_object_set_new(rec, "related", json_pack("[s]", sheet));
    json_array_append_new(out, rec);
    strbuf_release(&id);
    strbuf_release(&title);
    strbuf_release(&body);
}

/*
 * A sheet may list one dtype twice (upstream's MI300X: fp64 on the vector units and on the
 * matrix cores): such entries get their unit_kind in the quantity (dense_fp64_tensor_core),
 * and any that still collide their position, so that every fact id is unique. A dtype
 * listed once keeps the plain dense_<dtype>.
 */
static void peak_qualifier(const json_t *peaks, size_t at, struct strbuf *q)
{
    const char *dtype = str_at(json_array_get(peaks, at), "dtype");
    const char *kind = str_at(json_array_get(peaks, at), "unit_kind");
    size_t same = 0, same_kind = 0;
    for (size_t k = 0; dtype && k < json_array_size(peaks); k++) {
        const json_t *o = json_array_get(peaks, k);
        bool d = str_at(o, "dtype") && strcmp(str_at(o, "dtype"), dtype) == 0;
        same += d;
        same_kind += d && k < at && kind && str_at(o, "unit_kind") &&
                     strcmp(str_at(o, "unit_kind"), kind) == 0;
    }
    if (same < 2)
        return;
    if (kind)
        strbuf_addf(q, "_%s", kind);
    if (!kind || same_kind)
        strbuf_addf(q, "_%zu", at + 1);
    for (char *p = q->buf; *p; p++)
        *p = *p == '-' ? '_' : *p;
}

static void hw_spec_facts(const json_t *up, const char *product, json_t *scope, json_t *source,
                          const char *rel, json_t *out)
{
    const char *id = str_at(up, "id");
    json_t *facts = json_object_get(up, "facts"), *mem = json_object_get(facts, "memory");
    json_t *cu = json_object_get(facts, "compute_units"), *pc;
    size_t i;
    hw_fact(id, product, scope, source, rel, "memory_bandwidth",
            json_object_get(mem, "bandwidth_tb_s"), "TB/s", out);
    hw_fact(id, product, scope, source, rel, "memory_capacity", json_object_get(mem, "capacity_gb"),
            "GB", out);
    hw_fact(id, product, scope, source, rel, "l2_cache", json_object_get(mem, "l2_cache_mb"), "MB",
            out);
    hw_fact(id, product, scope, source, rel, "sm_count", json_object_get(cu, "sm_count"), "count",
            out);
    hw_fact(id, product, scope, source, rel, "shared_memory_per_sm",
            json_object_get(cu, "shared_memory_kb_per_sm"), "KB", out);
    json_t *peaks = json_object_get(facts, "peak_compute");
    json_array_foreach(peaks, i, pc)
    {
        const char *dtype = str_at(pc, "dtype"), *unit = str_at(pc, "unit");
        struct strbuf q = STRBUF_INIT;
        strbuf_addf(&q, "dense_%s", dtype ? dtype : "unknown");
        peak_qualifier(peaks, i, &q);
        if (dtype)
            hw_fact(id, product, scope, source, rel, q.buf, json_object_get(pc, "dense"),
                    unit ? unit : "TFLOPS", out);
        strbuf_release(&q);
    }
}

/* Title and body of a hardware record that is prose, not a number. */
static void hw_prose(const json_t *up, const char *type, struct strbuf *title, struct strbuf *body)
{
    const json_t *id = json_object_get(up, "identity"), *facts = json_object_get(up, "facts");
    static const char *const keys[] = {"summary",        "syntax",      "semantics", "what",
                                       "why_it_matters", "constraints", "caveats"};
    const char *name = strcmp(type, "instruction") == 0    ? str_at(id, "mnemonic")
                       : strcmp(type, "arch-feature") == 0 ? str_at(id, "feature")
                                                           : str_at(id, "product");
    strbuf_addf(title, "%s %s", name ? name : str_at(up, "id"), type);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (str_at(facts, keys[i]))
            strbuf_addf(body, "%s\n", str_at(facts, keys[i]));
    if (!body->len)
        strbuf_addf(body, "Upstream %s record %s.", type, str_at(up, "id"));
}

int wiki_import_hardware(const json_t *up, const char *rel, json_t *out, struct strvec *notes)
{
    const char *id = str_at(up, "id"), *type = str_at(up, "type");
    json_t *ident = json_object_get(up, "identity");
    json_t *scope = make_scope(str_at(ident, "vendor"), str_at(ident, "arch"),
                               str_at(ident, "product"), NULL, NULL);
    json_t *source = hw_source(up);
    int rc = 0;
    if (!id || !type || !scope || !source) {
        strvec_pushf(notes,
                     "%s: skipped: needs id, type, identity.vendor and a provenance "
                     "source",
                     rel);
        rc = -1;
    } else {
        struct strbuf title = STRBUF_INIT, body = STRBUF_INIT;
        hw_prose(up, type, &title, &body);
        json_array_append_new(out,
                              hw_record(id, "reference", scope, title.buf, body.buf, source, rel));
        if (strcmp(type, "spec-sheet") == 0) {
            const char *product = str_at(ident, "product");
            hw_spec_facts(up, product ? product : id, scope, source, rel, out);
        }
        strbuf_release(&title);
        strbuf_release(&body);
    }
    json_decref(scope);
    json_decref(source);
    return rc;
}
