/*
 * import.c — `aka wiki import DIR --out PLUGIN_DIR`: walk a store in upstream
 * gpu-wiki format, convert each record (import_map.c), and write a plugin.
 *
 * The written plugin is validated with the same validator the loader uses
 * before anything is written, so an import either produces a plugin that
 * loads or fails naming the record that would not. Related ids that point
 * outside the imported set are dropped (and counted in the notes) rather than
 * left dangling for `aka wiki check` to trip on.
 */
#include "base/fs.h"
#include "base/json.h"
#include "wiki/wiki_impl.h"

#include <string.h>

void aka_wiki_import_report_init(struct aka_wiki_import_report *rep)
{
    memset(rep, 0, sizeof(*rep));
}

void aka_wiki_import_report_release(struct aka_wiki_import_report *rep)
{
    strvec_clear(&rep->notes);
    json_decref(rep->id_map);
    rep->id_map = NULL;
}

#define MAPPED_PREFIX 111 /* + "-" + 16 hex = 128, the id limit */

static bool id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static bool valid_here(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 128 || !((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= '0' && id[0] <= '9')))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!id_char(id[i]))
            return false;
    return true;
}

/* Deterministic: the same upstream id maps to the same id in every import. */
static void map_id(const char *up, struct strbuf *out)
{
    char hex[AKA_SHA256_HEX_LEN + 1];
    strbuf_reset(out);
    for (const char *p = up; *p && out->len < MAPPED_PREFIX; p++) {
        char c = (*p >= 'A' && *p <= 'Z') ? (char)(*p - 'A' + 'a') : *p;
        strbuf_addch(out, id_char(c) ? c : '-');
    }
    while (out->len && !((out->buf[out->len - 1] >= 'a' && out->buf[out->len - 1] <= 'z') ||
                         (out->buf[out->len - 1] >= '0' && out->buf[out->len - 1] <= '9')))
        strbuf_setlen(out, out->len - 1);
    if (!out->len ||
        !((out->buf[0] >= 'a' && out->buf[0] <= 'z') || (out->buf[0] >= '0' && out->buf[0] <= '9')))
        strbuf_addstr(out, "x"); /* an empty or punctuation-led prefix */
    aka_sha256_hex(up, strlen(up), hex);
    strbuf_addf(out, "-%.16s", hex);
}

/* Rename every record whose id is not valid here; keep the original as upstream.id. */
static void map_ids(json_t *const *lists, struct aka_wiki_import_report *rep)
{
    struct strbuf id = STRBUF_INIT;
    rep->id_map = json_object();
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *r;
        json_array_foreach(lists[l], i, r)
        {
            const char *up = json_string_value(json_object_get(r, "id"));
            if (!up || valid_here(up))
                continue;
            map_id(up, &id);
            json_object_set_new(rep->id_map, up, json_string(id.buf));
            json_t *u = json_object_get(r, "upstream");
            if (!json_is_object(u))
                json_object_set_new(r, "upstream", u = json_object());
            json_object_set_new(u, "id", json_string(up));
            json_object_set_new(r, "id", json_string(id.buf));
        }
    }
    rep->mapped = json_object_size(rep->id_map);
    strbuf_release(&id);
}

/* Related ids that name a mapped record follow it. */
static void remap_related(json_t *const *lists, const json_t *id_map)
{
    for (int l = 0; l < 2; l++) {
        size_t i, k;
        json_t *r, *v;
        json_array_foreach(lists[l], i, r)
        {
            json_array_foreach(json_object_get(r, "related"), k, v)
            {
                json_t *to = json_object_get(id_map, json_string_value(v));
                if (to)
                    json_string_set(v, json_string_value(to));
            }
        }
    }
}

static bool is_record_file(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0 && strcmp(name, "index.json") &&
           strcmp(name, "query_intent.json") && strcmp(name, "schema.json");
}

static void convert_file(const char *path, const char *rel, json_t *kernel, json_t *hw,
                         struct aka_wiki_import_report *rep)
{
    struct aka_err err = AKA_ERR_INIT;
    json_t *doc = NULL;
    if (aka_json_load_file(path, &doc, &err) < 0) {
        strvec_push(&rep->notes, err.msg);
        rep->skipped++;
        return;
    }
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    int rc = -1;
    if (schema && strcmp(schema, "clean-1.3") == 0) {
        rep->kernel_in++;
        rc = wiki_import_kernel(doc, rel, kernel, &rep->notes);
    } else if (schema && strcmp(schema, "hw-1.0") == 0) {
        rep->hardware_in++;
        rc = wiki_import_hardware(doc, rel, hw, &rep->notes);
    } else {
        strvec_pushf(&rep->notes, "%s: skipped: schema is neither clean-1.3 nor hw-1.0", rel);
    }
    if (rc < 0)
        rep->skipped++;
    json_decref(doc);
}

static int walk(const char *dir, const char *rel, int depth, json_t *kernel, json_t *hw,
                struct aka_wiki_import_report *rep, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT, sub = STRBUF_INIT;
    int rc = depth > 16 ? aka_err_set(err, AKA_EXIT_USAGE, "%s: nested too deep", dir)
                        : aka_list_dir(dir, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        if (names.v[i][0] == '.')
            continue;
        aka_path_join(&path, dir, names.v[i]);
        strbuf_reset(&sub);
        strbuf_addf(&sub, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
        if (aka_is_dir(path.buf))
            rc = walk(path.buf, sub.buf, depth + 1, kernel, hw, rep, err);
        else if (is_record_file(names.v[i]) && aka_is_file(path.buf))
            convert_file(path.buf, sub.buf, kernel, hw, rep);
    }
    strvec_clear(&names);
    strbuf_release(&path);
    strbuf_release(&sub);
    return rc;
}

static bool has_id(json_t *const *lists, const char *id)
{
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *r;
        json_array_foreach(lists[l], i, r)
        {
            const char *rid = json_string_value(json_object_get(r, "id"));
            if (rid && strcmp(rid, id) == 0)
                return true;
        }
    }
    return false;
}

/* Drop related ids that no imported record has. */
static void prune_related(json_t *const *lists, struct aka_wiki_import_report *rep)
{
    size_t dropped = 0;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *r;
        json_array_foreach(lists[l], i, r)
        {
            json_t *rel = json_object_get(r, "related");
            for (size_t k = json_array_size(rel); k-- > 0;)
                if (!has_id(lists, json_string_value(json_array_get(rel, k)))) {
                    json_array_remove(rel, k);
                    dropped++;
                }
        }
    }
    if (dropped)
        strvec_pushf(&rep->notes, "%zu related id(s) pointed outside the store and were dropped",
                     dropped);
}

/* Validate a list the way the loader will, before anything is written. */
static int validate_list(json_t *list, const char *label, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    struct strvec problems = STRVEC_INIT;
    if (json_array_size(list) == 0)
        return 0;
    aka_json_dump_compact(list, &text);
    long n = aka_wiki_validate_buffer(label, text.buf, text.len, &problems);
    int rc = n >= 0 ? 0
                    : aka_err_set(err, AKA_EXIT_FAILED, "import produced an invalid record: %s",
                                  problems.n ? problems.v[0] : "?");
    strbuf_release(&text);
    strvec_clear(&problems);
    return rc;
}

static int write_plugin(const char *out_dir, const char *name, json_t *kernel, json_t *hw,
                        json_t *id_map, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *manifest = json_pack("{s:s, s:s, s:s, s:{s:[s]}}", "name", name, "version", "1.0.0",
                                 "description", "Records imported from an upstream gpu-wiki store",
                                 "contributes", "records", "records");
    aka_path_join(&path, out_dir, "records");
    int rc = aka_mkdir_p(path.buf, 0755, err);
    if (rc == 0 && json_array_size(kernel)) {
        aka_path_join(&path, out_dir, "records/kernel.json");
        rc = aka_json_write_file(path.buf, kernel, err);
    }
    if (rc == 0 && json_array_size(hw)) {
        aka_path_join(&path, out_dir, "records/hardware.json");
        rc = aka_json_write_file(path.buf, hw, err);
    }
    aka_path_join(&path, out_dir, "plugin.json");
    if (rc == 0)
        rc = aka_json_write_file(path.buf, manifest, err);
    if (rc == 0 && json_object_size(id_map)) {
        json_t *report = json_pack("{s:s, s:O}", "note",
                                   "upstream ids that are not valid wiki ids here, and the ids "
                                   "they were mapped to (the original is each record's "
                                   "upstream.id, an alias)",
                                   "mapped", id_map);
        aka_path_join(&path, out_dir, "import-report.json");
        rc = aka_json_write_file(path.buf, report, err);
        json_decref(report);
    }
    json_decref(manifest);
    strbuf_release(&path);
    return rc;
}

int aka_wiki_import(const char *src_dir, const char *out_dir, const char *plugin_name,
                    struct aka_wiki_import_report *rep, struct aka_err *err)
{
    json_t *lists[2] = {json_array(), json_array()}; /* kernel, hardware */
    int rc = 0;
    if (!aka_is_dir(src_dir))
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: not a directory", src_dir);
    if (rc == 0)
        rc = walk(src_dir, "", 0, lists[0], lists[1], rep, err);
    if (rc == 0 && json_array_size(lists[0]) + json_array_size(lists[1]) == 0)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: no clean-1.3 or hw-1.0 records found", src_dir);
    if (rc == 0) {
        map_ids(lists, rep);
        remap_related(lists, rep->id_map);
        prune_related(lists, rep);
        rc = validate_list(lists[0], "kernel records", err);
    }
    if (rc == 0)
        rc = validate_list(lists[1], "hardware records", err);
    if (rc == 0)
        rc = write_plugin(out_dir, plugin_name, lists[0], lists[1], rep->id_map, err);
    rep->records_out = json_array_size(lists[0]) + json_array_size(lists[1]);
    json_decref(lists[0]);
    json_decref(lists[1]);
    return rc;
}
