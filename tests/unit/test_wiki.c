/*
 * test_wiki.c — unit tests of the wiki module: record validation, plugin
 * discovery from the three locations, whole-plugin skipping, cache rebuilds,
 * attribution, pinning, citations, filters and import. Every test builds its
 * own plugins in temporary directories; nothing reads the user's home.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "wiki/wiki.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct env {
    struct strbuf top, repo, data, ws, cache;
};

static void put(const char *dir, const char *rel, const char *text)
{
    struct strbuf path = STRBUF_INIT, parent = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&path, dir, rel);
    strbuf_addstr(&parent, path.buf);
    *strrchr(parent.buf, '/') = '\0';
    assert_int_equal(aka_mkdir_p(parent.buf, 0755, &err), 0);
    assert_int_equal(aka_write_file_atomic(path.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&path);
    strbuf_release(&parent);
}

static const char manifest_fmt[] = "{\"name\": \"%s\", \"version\": \"0.1\", \"contributes\": "
                                   "{\"records\": [\"records\"]}}\n";

/* A kernel record with the given id and title, as JSON text. */
static void record(struct strbuf *out, const char *id, const char *vendor, const char *fw,
                   const char *title)
{
    strbuf_addf(out,
                "{\n  \"schema\": \"aka.wiki.kernel.v1\",\n  \"id\": \"%s\",\n"
                "  \"kind\": \"technique\",\n  \"scope\": {\"vendor\": \"%s\", \"framework\": "
                "\"%s\", \"family\": \"gemm\"},\n  \"title\": \"%s\",\n  \"body\": \"Body of "
                "%s.\",\n  \"tags\": [\"CuteDSL\"],\n  \"source\": {\"kind\": \"document\", "
                "\"title\": \"Doc\", \"url\": \"https://example.org/doc\"}\n}",
                id, vendor, fw, title, id);
}

/* A plugin NAME under location LOC with one record file holding ID. */
static void plugin(const char *loc, const char *name, const char *id, const char *vendor,
                   const char *fw, const char *title)
{
    struct strbuf m = STRBUF_INIT, r = STRBUF_INIT, rel = STRBUF_INIT;
    strbuf_addf(&m, manifest_fmt, name);
    strbuf_addf(&rel, "%s/plugin.json", name);
    put(loc, rel.buf, m.buf);
    record(&r, id, vendor, fw, title);
    strbuf_reset(&rel);
    strbuf_addf(&rel, "%s/records/a.json", name);
    put(loc, rel.buf, r.buf);
    strbuf_release(&m);
    strbuf_release(&r);
    strbuf_release(&rel);
}

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_make_temp_dir(NULL, "aka-test-wiki", &e->top, &err), 0);
    strbuf_addf(&e->repo, "%s/repo", e->top.buf);
    strbuf_addf(&e->data, "%s/data", e->top.buf);
    strbuf_addf(&e->ws, "%s/ws", e->top.buf);
    strbuf_addf(&e->cache, "%s/cache", e->top.buf);
    struct strbuf loc = STRBUF_INIT;
    strbuf_addf(&loc, "%s/runtime/plugins", e->repo.buf);
    plugin(loc.buf, "bundled-one", "t.bundled.gemm", "nvidia", "cutedsl", "Bundled tiling");
    strbuf_reset(&loc);
    strbuf_addf(&loc, "%s/aka/plugins", e->data.buf);
    plugin(loc.buf, "user-one", "t.user.gemm", "amd", "triton", "User swizzle");
    strbuf_reset(&loc);
    strbuf_addf(&loc, "%s/.aka-plugins", e->ws.buf);
    plugin(loc.buf, "ws-one", "t.ws.gemm", "generic", "any", "Workspace split");
    strbuf_release(&loc);
    unsetenv("ATREX_AKA_WORKSPACE");
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(e->top.buf, &err);
    strbuf_release(&e->top);
    strbuf_release(&e->repo);
    strbuf_release(&e->data);
    strbuf_release(&e->ws);
    strbuf_release(&e->cache);
    free(e);
    return 0;
}

static struct aka_wiki_config config(const struct env *e)
{
    struct aka_wiki_config c = {e->repo.buf, e->ws.buf, e->data.buf, e->cache.buf, true};
    return c;
}

static struct aka_wiki *open_ok(const struct aka_wiki_config *c)
{
    struct aka_wiki *w = NULL;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_wiki_open(c, &w, &err) < 0)
        fail_msg("open: %s", err.msg);
    return w;
}

static const struct aka_wiki_plugin *find_plugin(struct aka_wiki *w, const char *root_part)
{
    const struct aka_wiki_plugin_list *pl = aka_wiki_plugins(w);
    for (size_t i = 0; i < pl->n; i++)
        if (strstr(pl->v[i].root, root_part))
            return &pl->v[i];
    return NULL;
}

static void t_discovery_three_locations(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    const struct aka_wiki_plugin_list *pl = aka_wiki_plugins(w);
    assert_int_equal(pl->n, 3);
    assert_int_equal(pl->v[0].origin, AKA_WIKI_BUNDLED);
    assert_string_equal(pl->v[0].name, "bundled-one");
    assert_int_equal(pl->v[1].origin, AKA_WIKI_USER);
    assert_int_equal(pl->v[2].origin, AKA_WIKI_WORKSPACE);
    assert_int_equal(aka_wiki_record_count(w), 3);
    assert_true(aka_sha256_is_hex(pl->v[2].fingerprint));
    aka_wiki_close(w);
}

/* Same discovery, but the user and workspace locations come from the environment. */
static void t_discovery_from_env(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = {e->repo.buf, NULL, NULL, e->cache.buf, true};
    setenv("XDG_DATA_HOME", e->data.buf, 1);
    setenv("ATREX_AKA_WORKSPACE", e->ws.buf, 1);
    struct aka_wiki *w = open_ok(&c);
    assert_int_equal(aka_wiki_plugins(w)->n, 3);
    assert_non_null(find_plugin(w, "/ws/.aka-plugins/ws-one"));
    aka_wiki_close(w);
    unsetenv("ATREX_AKA_WORKSPACE");
    unsetenv("XDG_DATA_HOME");
}

static void t_attribution(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    struct aka_wiki_query q = {.text = "swizzle"};
    struct aka_wiki_result res;
    struct aka_err err = AKA_ERR_INIT;
    aka_wiki_result_init(&res);
    assert_int_equal(aka_wiki_query(w, &q, &res, &err), 0);
    assert_int_equal(res.hits.n, 1);
    struct aka_wiki_hit *h = &res.hits.v[0];
    assert_string_equal(h->plugin, "user-one");
    assert_string_equal(h->plugin_version, "0.1");
    assert_non_null(strstr(h->file, "user-one/records/a.json"));
    assert_int_equal(h->line, 3); /* the line of "id" in the file written by record() */
    json_t *j = aka_wiki_hit_json(h);
    json_t *a = json_object_get(j, "attribution");
    assert_string_equal(json_string_value(json_object_get(a, "record_id")), "t.user.gemm");
    assert_string_equal(json_string_value(json_object_get(json_object_get(a, "source"), "url")),
                        "https://example.org/doc");
    json_decref(j);
    aka_wiki_result_release(&res);
    aka_wiki_close(w);
}

static bool has_problem(const struct strvec *sv, const char *needle)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strstr(sv->v[i], needle))
            return true;
    return false;
}

static void t_validation_errors(void **state)
{
    static const char bad[] =
        "[{\"schema\": \"aka.wiki.kernel.v1\", \"id\": \"ok.one\", \"kind\": \"technique\","
        " \"scope\": {\"vendor\": \"generic\"}, \"title\": \"t\", \"body\": \"b\"},"
        " {\"schema\": \"aka.wiki.hardware.v1\", \"id\": \"Bad Id\", \"kind\": \"fact\","
        " \"scope\": {\"vendor\": \"nvdia\"}, \"title\": \"t\", \"body\": \"b\","
        " \"source\": {\"kind\": \"paper\"}},"
        " {\"schema\": \"aka.wiki.kernel.v1\", \"id\": \"x.y\", \"kind\": \"technique\","
        " \"scope\": {\"vendor\": \"amd\", \"framework\": \"cute-dsl\"}, \"title\": \"t\","
        " \"body\": \"b\", \"colour\": 1, \"source\": {\"kind\": \"measurement\", \"by\": \"me\","
        " \"date\": \"yesterday\", \"method\": \"m\"}}]";
    struct strvec p = STRVEC_INIT;
    (void)state;
    assert_int_equal(aka_wiki_validate_buffer("f.json", bad, strlen(bad), &p), -1);
    assert_true(has_problem(&p, "f.json: [0].source: required field is missing"));
    assert_true(has_problem(&p, "f.json: [1].id:"));
    assert_true(has_problem(&p, "[1].scope.vendor: unknown value \"nvdia\" (did you mean "
                                "\"nvidia\""));
    assert_true(has_problem(&p, "[1].fact: required for kind \"fact\""));
    assert_true(has_problem(&p, "[1].source.kind: expected one of document, measurement"));
    assert_true(has_problem(&p, "[2].colour: unknown field"));
    assert_true(has_problem(&p, "[2].scope.framework: write the canonical value \"cutedsl\""));
    assert_true(has_problem(&p, "[2].source.date: expected YYYY-MM-DD"));
    strvec_clear(&p);
    assert_int_equal(aka_wiki_validate_buffer("g.json", "{", 1, &p), -1);
    assert_true(has_problem(&p, "g.json:1:"));
    strvec_clear(&p);
}

static void t_malformed_plugin_skipped_whole(void **state)
{
    struct env *e = *state;
    struct strbuf loc = STRBUF_INIT, good = STRBUF_INIT;
    strbuf_addf(&loc, "%s/aka/plugins", e->data.buf);
    plugin(loc.buf, "half", "t.half.good", "nvidia", "triton", "Half good");
    put(loc.buf, "half/records/b.json",
        "{\"schema\": \"aka.wiki.kernel.v1\", \"id\": \"t.half.bad\", \"kind\": \"technique\","
        " \"scope\": {\"vendor\": \"nvidia\"}, \"title\": \"t\", \"body\": \"b\"}");
    put(loc.buf, "nover/plugin.json", "{\"name\": \"nover\", \"contributes\": {}}");
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    const struct aka_wiki_plugin *half = find_plugin(w, "/half");
    const struct aka_wiki_plugin *nover = find_plugin(w, "/nover");
    assert_true(half->skipped);
    assert_true(has_problem(&half->problems, "half/records/b.json: source: required field"));
    assert_true(nover->skipped);
    assert_true(has_problem(&nover->problems, "nover/plugin.json: version: required field"));
    struct strvec missing = STRVEC_INIT;
    const char *ids[] = {"t.half.good", "t.user.gemm"};
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_wiki_check_refs(w, ids, 2, &missing, &err), 0);
    assert_int_equal(missing.n, 1); /* the good record of the bad plugin is not loaded */
    assert_string_equal(missing.v[0], "t.half.good");
    strvec_clear(&missing);
    strbuf_release(&loc);
    strbuf_release(&good);
    aka_wiki_close(w);
}

static void t_duplicate_id_across_plugins(void **state)
{
    struct env *e = *state;
    struct strbuf loc = STRBUF_INIT;
    strbuf_addf(&loc, "%s/.aka-plugins", e->ws.buf);
    plugin(loc.buf, "zz-dup", "t.bundled.gemm", "nvidia", "cuda", "Duplicate");
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    const struct aka_wiki_plugin *dup = find_plugin(w, "zz-dup");
    assert_true(dup->skipped);
    assert_true(has_problem(&dup->problems, "\"t.bundled.gemm\" is already defined"));
    aka_wiki_close(w);
    struct aka_wiki_check_report rep;
    struct aka_err err = AKA_ERR_INIT;
    aka_wiki_check_report_init(&rep);
    assert_int_equal(aka_wiki_check(&c, &rep, &err), 0);
    assert_true(has_problem(&rep.problems, "already defined"));
    aka_wiki_check_report_release(&rep);
    strbuf_release(&loc);
}

static void t_cache_rebuilt_on_change(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    assert_true(aka_wiki_cache_rebuilt(w));
    char *first = strdup(aka_wiki_cache_path(w));
    aka_wiki_close(w);
    w = open_ok(&c);
    assert_false(aka_wiki_cache_rebuilt(w));
    aka_wiki_close(w);
    struct strbuf loc = STRBUF_INIT, r = STRBUF_INIT;
    strbuf_addf(&loc, "%s/runtime/plugins", e->repo.buf);
    record(&r, "t.bundled.gemm", "nvidia", "cutedsl", "Renamed persistent tiles");
    put(loc.buf, "bundled-one/records/a.json", r.buf);
    w = open_ok(&c);
    assert_true(aka_wiki_cache_rebuilt(w));
    assert_string_equal(aka_wiki_cache_path(w), first);
    struct aka_wiki_query q = {.text = "persistent"};
    struct aka_wiki_result res;
    struct aka_err err = AKA_ERR_INIT;
    aka_wiki_result_init(&res);
    assert_int_equal(aka_wiki_query(w, &q, &res, &err), 0);
    assert_int_equal(res.hits.n, 1);
    aka_wiki_result_release(&res);
    aka_wiki_close(w);
    free(first);
    strbuf_release(&loc);
    strbuf_release(&r);
}

static void t_pin(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c), *w2 = NULL;
    struct aka_err err = AKA_ERR_INIT;
    json_t *pin = aka_wiki_pin(w);
    aka_wiki_close(w);
    assert_int_equal(aka_wiki_open_pinned(&c, pin, &w2, &err), 0);
    aka_wiki_close(w2);
    struct strbuf loc = STRBUF_INIT;
    strbuf_addf(&loc, "%s/.aka-plugins", e->ws.buf);
    put(loc.buf, "ws-one/skills/x/SKILL.md", "changed\n");
    assert_int_equal(aka_wiki_open_pinned(&c, pin, &w2, &err), -1);
    assert_non_null(strstr(err.msg, "plugin ws-one"));
    assert_non_null(strstr(err.msg, "changed since it was pinned"));
    json_decref(pin);
    strbuf_release(&loc);
}

static void t_filters(void **state)
{
    struct env *e = *state;
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    struct aka_wiki_result res;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki_query bad = {.text = "x", .vendor = "nvdia"};
    aka_wiki_result_init(&res);
    assert_int_equal(aka_wiki_query(w, &bad, &res, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "did you mean \"nvidia\""));
    aka_wiki_result_release(&res);
    /* Spelling variants fold: CuTe-DSL filter and "cute dsl" text. */
    struct aka_wiki_query fw = {.text = "cute dsl", .framework = "CuTe-DSL", .vendor = "NVIDIA"};
    aka_wiki_result_init(&res);
    assert_int_equal(aka_wiki_query(w, &fw, &res, &err), 0);
    assert_true(res.hits.n >= 1);
    assert_string_equal(json_string_value(json_object_get(res.hits.v[0].record, "id")),
                        "t.bundled.gemm");
    aka_wiki_result_release(&res);
    /* Cross-vendor isolation and the empty-result diagnosis. */
    struct aka_wiki_query amd = {.text = "tiling", .vendor = "amd"};
    aka_wiki_result_init(&res);
    assert_int_equal(aka_wiki_query(w, &amd, &res, &err), 0);
    assert_int_equal(res.hits.n, 0);
    assert_true(has_problem(&res.empty_because, "--vendor amd emptied it"));
    aka_wiki_result_release(&res);
    aka_wiki_close(w);
}

static void t_import_fixture(void **state)
{
    struct env *e = *state;
    struct aka_wiki_import_report rep;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    strbuf_addf(&out, "%s/.aka-plugins/imported", e->ws.buf);
    aka_wiki_import_report_init(&rep);
    assert_int_equal(aka_wiki_import(AKA_SOURCE_DIR "/tests/fixtures/wiki-upstream", out.buf,
                                     "imported", &rep, &err),
                     0);
    assert_true(rep.kernel_in >= 3);
    assert_true(rep.hardware_in >= 2);
    aka_wiki_import_report_release(&rep);
    struct aka_wiki_config c = config(e);
    struct aka_wiki *w = open_ok(&c);
    const struct aka_wiki_plugin *imp = find_plugin(w, "imported");
    assert_non_null(imp);
    assert_false(imp->skipped);
    assert_true(imp->record_count >= 5);
    aka_wiki_close(w);
    strbuf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_discovery_three_locations, setup, teardown),
        cmocka_unit_test_setup_teardown(t_discovery_from_env, setup, teardown),
        cmocka_unit_test_setup_teardown(t_attribution, setup, teardown),
        cmocka_unit_test(t_validation_errors),
        cmocka_unit_test_setup_teardown(t_malformed_plugin_skipped_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(t_duplicate_id_across_plugins, setup, teardown),
        cmocka_unit_test_setup_teardown(t_cache_rebuilt_on_change, setup, teardown),
        cmocka_unit_test_setup_teardown(t_pin, setup, teardown),
        cmocka_unit_test_setup_teardown(t_filters, setup, teardown),
        cmocka_unit_test_setup_teardown(t_import_fixture, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
