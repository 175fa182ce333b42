/*
 * record.c — validation of wiki record files; the authority on the record
 * format (runtime/schemas/wiki-{hardware,kernel}.v1.schema.json document it).
 *
 * A record file holds one record object or an array of them. Validation does
 * not stop at the first problem: `aka wiki check` lists every problem of every
 * file, each as "FILE: FIELD: reason", where FIELD is "[3].source.kind" for the
 * fourth record of an array file. A record is accepted only when it has a
 * source: knowledge without a citation is not knowledge the supervisor can
 * attribute (DESIGN §8).
 */
#include "base/json.h"
#include "wiki/wiki_impl.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHEMA_HW     "aka.wiki.hardware.v1"
#define SCHEMA_KERNEL "aka.wiki.kernel.v1"
#define ID_MAX        128
#define ALIAS_MAX     1024
#define TITLE_MAX     200
#define BODY_MAX      16384

/* The record being checked and where its problems go. */
struct checker {
    const char *file;
    char prefix[32]; /* "[3]." inside an array file, "" otherwise */
    struct strvec *problems;
    size_t count;
};

static void bad(struct checker *ck, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bad(struct checker *ck, const char *field, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    ck->count++;
    if (ck->problems->n >= WIKI_MAX_PROBLEMS)
        return;
    strbuf_addf(&sb, "%s: %s%s: ", ck->file, ck->prefix, field);
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    strvec_push(ck->problems, sb.buf);
    strbuf_release(&sb);
}

/* obj.key as a non-empty string of at most max bytes; NULL (and a problem) otherwise. */
static const char *need_str(struct checker *ck, json_t *obj, const char *path, const char *key,
                            bool required, size_t max)
{
    struct strbuf f = STRBUF_INIT;
    json_t *v = json_object_get(obj, key);
    const char *s = NULL;
    jpath_key(&f, path, key);
    if (!v) {
        if (required)
            bad(ck, f.buf, "required field is missing");
    } else if (!json_is_string(v) || !*json_string_value(v)) {
        bad(ck, f.buf, "expected a non-empty string; got %s", jtype_name(v));
    } else if (strlen(json_string_value(v)) > max) {
        bad(ck, f.buf, "longer than %zu bytes", max);
    } else {
        s = json_string_value(v);
    }
    strbuf_release(&f);
    return s;
}

static void check_keys(struct checker *ck, json_t *obj, const char *path,
                       const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        if (jenum_index(key, allowed) < 0) {
            struct strbuf f = STRBUF_INIT;
            jpath_key(&f, path, key);
            bad(ck, f.buf, "unknown field (typo?)");
            strbuf_release(&f);
        }
    }
}

static bool valid_id(const char *s)
{
    if (!s || !*s || strlen(s) > ID_MAX ||
        !(islower((unsigned char)*s) || isdigit((unsigned char)*s)))
        return false;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || strchr("._-", *p)))
            return false;
    return true;
}

static bool valid_date(const char *s)
{
    static const char shape[] = "dddd-dd-dd";
    if (strlen(s) != sizeof(shape) - 1)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != '-')
            return false;
    return s[5] <= '1' && s[8] <= '3';
}

/* scope.<axis>: canonical value or "any"; a known alias gets the canonical name. */
static const char *scope_value(struct checker *ck, json_t *scope, enum wiki_axis ax, bool required)
{
    const char *field = wiki_axis_field(ax);
    struct strbuf f = STRBUF_INIT;
    const char *v = need_str(ck, scope, "scope", field, required, 64);
    jpath_key(&f, "scope", field);
    if (v && !wiki_is_canon(ax, v)) {
        struct strbuf list = STRBUF_INIT;
        const char *canon = wiki_canon(ax, v);
        wiki_axis_list(ax, &list);
        if (canon)
            bad(ck, f.buf, "write the canonical value \"%s\" instead of \"%s\"", canon, v);
        else
            bad(ck, f.buf, "unknown value \"%s\" (did you mean \"%s\"? valid: %s)", v,
                wiki_suggest(ax, v), list.buf);
        strbuf_release(&list);
        v = NULL;
    } else if (!v && !required && !json_object_get(scope, field)) {
        v = "any";
    }
    strbuf_release(&f);
    return v;
}

static void check_scope(struct checker *ck, json_t *rec, bool hardware, struct wiki_record *r)
{
    static const char *const keys[] = {"vendor", "arch", "chip", "framework", "family", NULL};
    json_t *scope = json_object_get(rec, "scope");
    if (!json_is_object(scope)) {
        bad(ck, "scope", scope ? "expected an object" : "required field is missing");
        return;
    }
    check_keys(ck, scope, "scope", keys);
    const char *vendor = scope_value(ck, scope, AX_VENDOR, true);
    const char *arch = scope_value(ck, scope, AX_ARCH, false);
    const char *chip = scope_value(ck, scope, AX_CHIP, false);
    const char *fw = scope_value(ck, scope, AX_FRAMEWORK, false);
    const char *fam = scope_value(ck, scope, AX_FAMILY, false);
    if (vendor && arch && strcmp(arch, "any") && strcmp(wiki_arch_vendor(arch), vendor))
        bad(ck, "scope.arch", "\"%s\" is a %s architecture, but scope.vendor is \"%s\"", arch,
            wiki_arch_vendor(arch), vendor);
    if (arch && chip && strcmp(chip, "any") && strcmp(wiki_chip_arch(chip), arch))
        bad(ck, "scope.chip", "\"%s\" is a %s chip, but scope.arch is \"%s\"", chip,
            wiki_chip_arch(chip), arch);
    if (vendor && fw && !wiki_framework_fits(vendor, fw))
        bad(ck, "scope.framework", "\"%s\" does not run on vendor \"%s\"", fw, vendor);
    if (hardware && ((fw && strcmp(fw, "any")) || (fam && strcmp(fam, "any"))))
        bad(ck, "scope", "hardware records apply to every framework and family (use \"any\")");
    r->vendor = aka_xstrdup(vendor ? vendor : "");
    r->arch = aka_xstrdup(arch ? arch : "");
    r->chip = aka_xstrdup(chip ? chip : "");
    r->framework = aka_xstrdup(fw ? fw : "");
    r->family = aka_xstrdup(fam ? fam : "");
}

static void check_source(struct checker *ck, json_t *rec, struct wiki_record *r)
{
    static const char *const keys[] = {"kind", "title",  "url",  "ref",       "section", "by",
                                       "date", "method", "note", "published", NULL};
    static const char *const kinds[] = {"document", "measurement", NULL};
    json_t *src = json_object_get(rec, "source");
    if (!json_is_object(src)) {
        bad(ck, "source",
            src ? "expected an object"
                : "required field is missing (every record "
                  "cites a document, URL or measurement)");
        return;
    }
    check_keys(ck, src, "source", keys);
    const char *kind = need_str(ck, src, "source", "kind", true, 32);
    const char *url = need_str(ck, src, "source", "url", false, 1024);
    if (url && strncmp(url, "https://", 8) && strncmp(url, "http://", 7))
        bad(ck, "source.url", "expected an http(s) URL; got \"%s\"", url);
    if (!kind)
        return;
    if (jenum_index(kind, kinds) < 0) {
        bad(ck, "source.kind", "expected one of document, measurement; got \"%s\"", kind);
    } else if (strcmp(kind, "document") == 0) {
        need_str(ck, src, "source", "title", true, 512);
        if (!json_object_get(src, "url") && !need_str(ck, src, "source", "ref", false, 512))
            bad(ck, "source", "a document needs a url or a ref (section, page or path)");
    } else {
        need_str(ck, src, "source", "by", true, 128);
        need_str(ck, src, "source", "method", true, 2048);
        const char *date = need_str(ck, src, "source", "date", true, 10);
        if (date && !valid_date(date))
            bad(ck, "source.date", "expected YYYY-MM-DD; got \"%s\"", date);
    }
    r->has_source = true;
}

static void check_fact(struct checker *ck, json_t *rec, const char *kind)
{
    static const char *const keys[] = {"quantity", "value", "unit", NULL};
    json_t *fact = json_object_get(rec, "fact");
    if (!kind)
        return;
    if (strcmp(kind, "fact") != 0) {
        if (fact)
            bad(ck, "fact", "only records of kind \"fact\" carry a structured fact");
        return;
    }
    if (!json_is_object(fact)) {
        bad(ck, "fact",
            fact ? "expected an object {quantity, value, unit}"
                 : "required for kind \"fact\": {quantity, value, unit}");
        return;
    }
    check_keys(ck, fact, "fact", keys);
    need_str(ck, fact, "fact", "quantity", true, 64);
    json_t *v = json_object_get(fact, "value");
    if (!v || !(json_is_number(v) || json_is_string(v) || json_is_boolean(v)))
        bad(ck, "fact.value", "expected a number, string or boolean; got %s",
            v ? jtype_name(v) : "nothing");
    if (v && json_is_number(v))
        need_str(ck, fact, "fact", "unit", true, 32);
    else
        need_str(ck, fact, "fact", "unit", false, 32);
}

/* An array of strings at rec.key, each passing ok (when given). */
static void check_str_array(struct checker *ck, json_t *rec, const char *key,
                            bool (*ok)(const char *), struct strvec *out)
{
    json_t *arr = json_object_get(rec, key), *v;
    size_t i;
    if (!arr)
        return;
    if (!json_is_array(arr)) {
        bad(ck, key, "expected an array of strings; got %s", jtype_name(arr));
        return;
    }
    json_array_foreach(arr, i, v)
    {
        struct strbuf f = STRBUF_INIT;
        jpath_index(&f, key, i);
        if (!json_is_string(v) || !*json_string_value(v))
            bad(ck, f.buf, "expected a non-empty string; got %s", jtype_name(v));
        else if (ok && !ok(json_string_value(v)))
            bad(ck, f.buf, "\"%s\" is not a record id", json_string_value(v));
        else if (out)
            strvec_push(out, json_string_value(v));
        strbuf_release(&f);
    }
}

/* schema, id and kind; returns the kind (NULL when unusable). */
static const char *check_head(struct checker *ck, json_t *rec, bool *hardware,
                              struct wiki_record *r)
{
    static const char *const hw_kinds[] = {"fact", "reference", NULL};
    static const char *const k_kinds[] = {"technique", "pitfall", "reference", NULL};
    const char *schema = need_str(ck, rec, "", "schema", true, 64);
    const char *id = need_str(ck, rec, "", "id", true, ID_MAX);
    const char *kind = need_str(ck, rec, "", "kind", true, 32);
    if (schema && strcmp(schema, SCHEMA_HW) && strcmp(schema, SCHEMA_KERNEL))
        bad(ck, "schema", "expected \"%s\" or \"%s\"; got \"%s\"", SCHEMA_HW, SCHEMA_KERNEL,
            schema);
    if (id && !valid_id(id))
        bad(ck, "id", "\"%s\" must match ^[a-z0-9][a-z0-9._-]*$", id);
    *hardware = schema && strcmp(schema, SCHEMA_HW) == 0;
    const char *const *kinds = *hardware ? hw_kinds : k_kinds;
    if (schema && kind && jenum_index(kind, kinds) < 0) {
        bad(ck, "kind", "a %s record is one of %s; got \"%s\"", *hardware ? "hardware" : "kernel",
            *hardware ? "fact, reference" : "technique, pitfall, reference", kind);
        kind = NULL;
    }
    r->id = aka_xstrdup(id ? id : "");
    r->schema = aka_xstrdup(schema ? schema : "");
    r->kind = aka_xstrdup(kind ? kind : "");
    return kind;
}

static bool id_ok(const char *s)
{
    return valid_id(s);
}

/* Normalised text for the FTS columns. */
static void index_text(json_t *rec, struct wiki_record *r)
{
    struct strbuf t = STRBUF_INIT, sb = STRBUF_INIT;
    json_t *tags = json_object_get(rec, "tags"), *v, *fact = json_object_get(rec, "fact");
    size_t i;
    wiki_norm_text(json_string_value(json_object_get(rec, "title")), &t);
    r->title = strbuf_detach(&t, NULL);
    json_array_foreach(tags, i, v) strbuf_addf(&sb, "%s ", json_string_value(v));
    wiki_norm_text(sb.buf, &t);
    r->tags = strbuf_detach(&t, NULL);
    strbuf_reset(&sb);
    strbuf_addstr(&sb, json_string_value(json_object_get(rec, "body")));
    if (fact) {
        const char *q = json_string_value(json_object_get(fact, "quantity"));
        const char *u = json_string_value(json_object_get(fact, "unit"));
        strbuf_addf(&sb, " %s %s", q ? q : "", u ? u : "");
    }
    wiki_norm_text(sb.buf, &t);
    r->body = strbuf_detach(&t, NULL);
    strbuf_reset(&sb);
    strbuf_addf(&sb, "%s %s %s %s %s %s", r->id, wiki_scope_words(AX_VENDOR, r->vendor),
                wiki_scope_words(AX_ARCH, r->arch), wiki_scope_words(AX_CHIP, r->chip),
                wiki_scope_words(AX_FRAMEWORK, r->framework),
                wiki_scope_words(AX_FAMILY, r->family));
    wiki_norm_text(sb.buf, &t);
    r->scope = strbuf_detach(&t, NULL);
    strbuf_release(&sb);
}

/* Validate one record object; fills r (which the caller releases on failure). */
static void check_record(struct checker *ck, json_t *rec, struct wiki_record *r)
{
    static const char *const keys[] = {"schema", "id",   "kind",   "scope",   "title",    "body",
                                       "fact",   "tags", "source", "related", "upstream", NULL};
    bool hardware = false;
    if (!json_is_object(rec)) {
        bad(ck, "", "expected a record object; got %s", jtype_name(rec));
        return;
    }
    check_keys(ck, rec, "", keys);
    const char *kind = check_head(ck, rec, &hardware, r);
    check_scope(ck, rec, hardware, r);
    need_str(ck, rec, "", "title", true, TITLE_MAX);
    need_str(ck, rec, "", "body", true, BODY_MAX);
    check_fact(ck, rec, kind);
    check_str_array(ck, rec, "tags", NULL, NULL);
    check_str_array(ck, rec, "related", id_ok, &r->related);
    check_source(ck, rec, r);
    json_t *up = json_object_get(rec, "upstream");
    if (up && !json_is_object(up))
        bad(ck, "upstream", "expected an object; got %s", jtype_name(up));
    json_t *alias = json_object_get(up, "id"); /* the id upstream gave a mapped record */
    if (alias && (!json_is_string(alias) || !*json_string_value(alias) ||
                  strlen(json_string_value(alias)) > ALIAS_MAX))
        bad(ck, "upstream.id", "expected the upstream id, a string of 1..%d bytes", ALIAS_MAX);
    else if (alias && r->id && strcmp(json_string_value(alias), r->id) != 0)
        r->alias = aka_xstrdup(json_string_value(alias));
}

static void parse_one(struct checker *ck, const char *text, size_t len, json_t *rec, size_t *offset,
                      struct wiki_record_list *out)
{
    struct wiki_record r = {0};
    size_t before = ck->count;
    check_record(ck, rec, &r);
    /* No problems implies r.id is set; !r.id spells that out for static
     * analysis, which does not follow bad()'s count++ (a variadic call). */
    if (ck->count != before || !r.id) {
        wiki_record_release(&r);
        return;
    }
    index_text(rec, &r);
    struct strbuf js = STRBUF_INIT;
    aka_json_dump_compact(rec, &js);
    r.json = strbuf_detach(&js, NULL);
    r.file = aka_xstrdup(ck->file);
    r.line = wiki_line_of_id(text, len, r.id, offset);
    VEC_PUSH(*out, r);
}

size_t wiki_parse_records(const char *file, const char *text, size_t len,
                          struct wiki_record_list *out, struct strvec *problems)
{
    struct checker ck = {file, "", problems, 0};
    struct aka_err err = AKA_ERR_INIT;
    json_t *doc = NULL;
    size_t offset = 0;
    if (aka_json_load_buf(file, text, len, &doc, &err) < 0) {
        strvec_push(problems, err.msg);
        return 1;
    }
    if (json_is_array(doc)) {
        json_t *rec;
        size_t i;
        if (json_array_size(doc) == 0)
            bad(&ck, "", "an empty array holds no records");
        json_array_foreach(doc, i, rec)
        {
            snprintf(ck.prefix, sizeof(ck.prefix), "[%zu].", i);
            parse_one(&ck, text, len, rec, &offset, out);
        }
    } else {
        parse_one(&ck, text, len, doc, &offset, out);
    }
    json_decref(doc);
    return ck.count;
}

long wiki_line_of_id(const char *text, size_t len, const char *id, size_t *offset)
{
    size_t idlen = strlen(id);
    for (size_t i = *offset; i + 4 < len; i++) {
        if (memcmp(text + i, "\"id\"", 4) != 0)
            continue;
        size_t j = i + 4;
        while (j < len && isspace((unsigned char)text[j]))
            j++;
        if (j >= len || text[j++] != ':')
            continue;
        while (j < len && isspace((unsigned char)text[j]))
            j++;
        if (j + idlen + 2 > len || text[j] != '"' || memcmp(text + j + 1, id, idlen) != 0 ||
            text[j + 1 + idlen] != '"')
            continue;
        long line = 1;
        for (size_t k = 0; k < i; k++)
            line += text[k] == '\n';
        *offset = j + idlen + 2;
        return line;
    }
    return 0;
}

void wiki_record_release(struct wiki_record *r)
{
    char **fields[] = {&r->id,   &r->schema,    &r->kind,   &r->vendor, &r->arch,
                       &r->chip, &r->framework, &r->family, &r->title,  &r->tags,
                       &r->body, &r->scope,     &r->json,   &r->file,   &r->alias};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        free(*fields[i]);
        *fields[i] = NULL;
    }
    strvec_clear(&r->related);
}

void wiki_record_list_release(struct wiki_record_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        wiki_record_release(&l->v[i]);
    VEC_FREE(*l);
}

long aka_wiki_validate_buffer(const char *label, const char *buf, size_t len,
                              struct strvec *problems)
{
    struct wiki_record_list recs = {0};
    size_t n = wiki_parse_records(label, buf, len, &recs, problems);
    long count = n ? -1 : (long)recs.n;
    wiki_record_list_release(&recs);
    return count;
}
