/*
 * plugin.c — plugin discovery, plugin.json manifests, fingerprints, and
 * loading a plugin's records whole or not at all.
 *
 * Discovery order is bundled, user, workspace (wiki.h). A directory in a
 * plugin location without a usable manifest is reported, not ignored: a user
 * who dropped a plugin there wants to know why it is not used. The fingerprint
 * covers every file of the plugin (hidden names excluded), so that pinning a
 * plugin pins its skills, instructions and tools too, not only its records.
 */
#include "base/fs.h"
#include "base/json.h"
#include "wiki/wiki_impl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WALK_MAX_DEPTH 16
#define WALK_MAX_FILES 16384
#define FILE_MAX       ((size_t)16 << 20)

const char *aka_wiki_origin_name(enum aka_wiki_origin origin)
{
    static const char *const names[] = {"bundled", "user", "workspace"};
    return names[origin];
}

void wiki_plugin_skip(struct aka_wiki_plugin *p, const char *fmt, ...)
{
    struct strbuf sb = STRBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    strbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    p->skipped = true;
    if (p->problems.n < WIKI_MAX_PROBLEMS)
        strvec_push(&p->problems, sb.buf);
    strbuf_release(&sb);
}

static void plugin_release(struct aka_wiki_plugin *p)
{
    free(p->name);
    free(p->version);
    free(p->root);
    strvec_clear(&p->record_dirs);
    strvec_clear(&p->skills);
    strvec_clear(&p->instructions);
    strvec_clear(&p->tools);
    strvec_clear(&p->problems);
}

void wiki_plugin_list_release(struct aka_wiki_plugin_list *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        plugin_release(&pl->v[i]);
    VEC_FREE(*pl);
}

/* Is path (resolved) inside root (resolved)? Symlinks may not lead out. */
static bool inside(const char *root_real, const char *path)
{
    struct strbuf r = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    size_t n = strlen(root_real);
    bool ok = aka_realpath(path, &r, &err) == 0 && strncmp(r.buf, root_real, n) == 0 &&
              (r.buf[n] == '/' || r.buf[n] == '\0');
    strbuf_release(&r);
    return ok;
}

/* Collect relative paths of regular files under dir (hidden names skipped). */
static int walk(const char *root_real, const char *dir, const char *rel, int depth,
                struct strvec *files, struct aka_err *err)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT, sub = STRBUF_INIT;
    int rc = depth > WALK_MAX_DEPTH ? aka_err_set(err, AKA_EXIT_USAGE, "%s: nested deeper than %d",
                                                  dir, WALK_MAX_DEPTH)
                                    : aka_list_dir(dir, &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        if (names.v[i][0] == '.')
            continue;
        aka_path_join(&path, dir, names.v[i]);
        strbuf_reset(&sub);
        strbuf_addf(&sub, "%s%s%s", rel, *rel ? "/" : "", names.v[i]);
        if (!inside(root_real, path.buf))
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: leads outside the plugin", path.buf);
        else if (aka_is_dir(path.buf))
            rc = walk(root_real, path.buf, sub.buf, depth + 1, files, err);
        else if (aka_is_file(path.buf))
            strvec_push(files, sub.buf);
        if (files->n > WALK_MAX_FILES)
            rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: more than %d files", dir, WALK_MAX_FILES);
    }
    strvec_clear(&names);
    strbuf_release(&path);
    strbuf_release(&sub);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_tree(const char *root, struct strvec *files, struct aka_err *err)
{
    struct strbuf real = STRBUF_INIT;
    int rc = aka_realpath(root, &real, err);
    if (rc == 0)
        rc = walk(real.buf, root, "", 0, files, err);
    if (rc == 0 && files->n)
        qsort(files->v, files->n, sizeof(char *), cmp_str);
    strbuf_release(&real);
    return rc;
}

/*
 * The cache key must be cheap: every query recomputes it over every plugin
 * file, and OpenSSL's start-up alone costs more than the whole query. So the
 * key is a 128-bit multiply-xorshift hash (two independent 64-bit lanes over
 * 8-byte words): not cryptographic, which a cache key need not be, but any
 * edit of any byte changes it. Fingerprints that pin a campaign stay sha256.
 */
struct fast_hash {
    uint64_t a, b;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dULL;
    return x ^ (x >> 33);
}

static void fast_update(struct fast_hash *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t w;
    for (; len >= 8; p += 8, len -= 8) {
        memcpy(&w, p, 8);
        h->a = (h->a ^ w) * 0x9e3779b97f4a7c15ULL;
        h->a ^= h->a >> 29;
        h->b = (h->b + w) * 0xc2b2ae3d27d4eb4fULL;
        h->b = (h->b << 31) | (h->b >> 33);
    }
    w = (uint64_t)len << 56; /* the tail, with its length so "a" != "a\0" */
    for (size_t i = 0; i < len; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h->a = (h->a ^ w) * 0x9e3779b97f4a7c15ULL;
    h->b = (h->b + w) * 0xc2b2ae3d27d4eb4fULL;
}

/* One file's contribution: its path, its length, its bytes. */
static void fast_file(struct fast_hash *h, const char *rel, const struct strbuf *data)
{
    uint64_t n = data->len;
    fast_update(h, rel, strlen(rel) + 1);
    fast_update(h, &n, sizeof(n));
    fast_update(h, data->buf, data->len);
}

void wiki_fast_hex(const void *data, size_t len, char out[33])
{
    struct fast_hash h = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
    fast_update(&h, data, len);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)mix64(h.a),
             (unsigned long long)mix64(h.b));
}

int wiki_hash_tree(const char *root, char *content_key, char *sha, struct aka_err *err)
{
    struct strvec files = STRVEC_INIT;
    struct strbuf lines = STRBUF_INIT, path = STRBUF_INIT, data = STRBUF_INIT;
    struct fast_hash h = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL};
    int rc = list_tree(root, &files, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        char hex[AKA_SHA256_HEX_LEN + 1];
        aka_path_join(&path, root, files.v[i]);
        strbuf_reset(&data);
        rc = aka_read_file(path.buf, &data, FILE_MAX, err);
        if (rc == 0)
            fast_file(&h, files.v[i], &data);
        if (rc == 0 && sha) {
            aka_sha256_hex(data.buf, data.len, hex);
            strbuf_addf(&lines, "%s %s\n", hex, files.v[i]);
        }
    }
    snprintf(content_key, 33, "%016llx%016llx", (unsigned long long)mix64(h.a),
             (unsigned long long)mix64(h.b ^ files.n));
    if (rc == 0 && sha)
        aka_sha256_hex(lines.buf, lines.len, sha);
    strvec_clear(&files);
    strbuf_release(&lines);
    strbuf_release(&path);
    strbuf_release(&data);
    return rc;
}

void wiki_fill_fingerprints(struct aka_wiki_plugin_list *pl)
{
    for (size_t i = 0; i < pl->n; i++) {
        struct aka_wiki_plugin *p = &pl->v[i];
        struct aka_err err = AKA_ERR_INIT;
        char key[33];
        if (!p->fingerprint[0] && wiki_hash_tree(p->root, key, p->fingerprint, &err) < 0)
            p->fingerprint[0] = '\0';
    }
}

/* A contributed path: relative, no "..", of the right type, inside the plugin. */
static int contributed_path(const struct jctx *c, const char *root, const char *field,
                            const char *rel, bool want_dir)
{
    struct strbuf path = STRBUF_INIT, real = STRBUF_INIT;
    int rc = 0;
    if (rel[0] == '/' || strstr(rel, ".."))
        rc = jfail(c, field, "expected a path inside the plugin; got \"%s\"", rel);
    aka_path_join(&path, root, rel);
    if (rc == 0 && !(want_dir ? aka_is_dir(path.buf) : aka_is_file(path.buf)))
        rc = jfail(c, field, "%s \"%s\" does not exist", want_dir ? "directory" : "file", rel);
    if (rc == 0 && (aka_realpath(root, &real, c->err) < 0 || !inside(real.buf, path.buf)))
        rc = jfail(c, field, "\"%s\" leads outside the plugin", rel);
    strbuf_release(&path);
    strbuf_release(&real);
    return rc;
}

/* contributes.<key>: an array of plugin-relative paths. */
static int path_list(const struct jctx *c, json_t *contrib, const char *root, const char *key,
                     bool want_dir, struct strvec *out)
{
    json_t *arr = NULL, *v;
    size_t i;
    struct strbuf f = STRBUF_INIT;
    int rc = jget_arr(c, contrib, "contributes", key, false, &arr);
    json_array_foreach(arr, i, v)
    {
        if (rc < 0)
            break;
        jpath_key(&f, "contributes", key);
        strbuf_addf(&f, "[%zu]", i);
        if (!json_is_string(v))
            rc = jfail(c, f.buf, "expected a path string; got %s", jtype_name(v));
        else
            rc = contributed_path(c, root, f.buf, json_string_value(v), want_dir);
        if (rc == 0)
            strvec_push(out, json_string_value(v));
    }
    strbuf_release(&f);
    return rc;
}

static bool valid_name(const char *s)
{
    if (!s || !(*s >= 'a' && *s <= 'z') || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return false;
    return true;
}

/* contributes.skills[i] must hold a SKILL.md. */
static int check_skills(const struct jctx *c, const struct aka_wiki_plugin *p)
{
    struct strbuf path = STRBUF_INIT, rel = STRBUF_INIT;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->skills.n; i++) {
        aka_path_join(&rel, p->skills.v[i], "SKILL.md");
        aka_path_join(&path, p->root, rel.buf);
        if (!aka_is_file(path.buf)) {
            strbuf_reset(&path);
            strbuf_addf(&path, "contributes.skills[%zu]", i);
            rc = jfail(c, path.buf, "\"%s\" has no SKILL.md", p->skills.v[i]);
        }
    }
    strbuf_release(&path);
    strbuf_release(&rel);
    return rc;
}

/* contributes.tools[i] = {name, description, command: [argv...]} */
static int tool_entry(const struct jctx *c, json_t *t, const char *field, struct aka_wiki_plugin *p)
{
    static const char *const keys[] = {"name", "description", "command", NULL};
    const char *name = NULL, *desc = NULL;
    json_t *cmd = NULL, *v;
    size_t i;
    if (jexpect_obj(c, t, field) < 0 || jcheck_keys(c, t, field, keys) < 0 ||
        jget_str(c, t, field, "name", true, &name) < 0 ||
        jget_str(c, t, field, "description", true, &desc) < 0 ||
        jget_arr(c, t, field, "command", true, &cmd) < 0)
        return -1;
    struct strbuf f = STRBUF_INIT;
    jpath_key(&f, field, "name");
    int rc = valid_name(name) ? 0 : jfail(c, f.buf, "\"%s\" must match ^[a-z][a-z0-9-]*$", name);
    jpath_key(&f, field, "command");
    if (rc == 0 && json_array_size(cmd) == 0)
        rc = jfail(c, f.buf, "expected a non-empty argv array");
    json_array_foreach(cmd, i, v) if (rc == 0 && (!json_is_string(v) || !*json_string_value(v)))
        rc = jfail(c, f.buf, "argv[%zu]: expected a non-empty string", i);
    strbuf_release(&f);
    if (rc == 0)
        strvec_push(&p->tools, name);
    return rc;
}

static int tools_list(const struct jctx *c, json_t *contrib, struct aka_wiki_plugin *p)
{
    json_t *arr = NULL, *t;
    size_t i;
    struct strbuf f = STRBUF_INIT;
    int rc = jget_arr(c, contrib, "contributes", "tools", false, &arr);
    json_array_foreach(arr, i, t)
    {
        if (rc < 0)
            break;
        strbuf_reset(&f);
        strbuf_addf(&f, "contributes.tools[%zu]", i);
        rc = tool_entry(c, t, f.buf, p);
    }
    strbuf_release(&f);
    return rc;
}

static int manifest_contributes(const struct jctx *c, json_t *doc, struct aka_wiki_plugin *p)
{
    static const char *const keys[] = {"records", "skills", "instructions", "tools", NULL};
    json_t *contrib = NULL;
    if (jget_obj(c, doc, "", "contributes", true, &contrib) < 0 ||
        jcheck_keys(c, contrib, "contributes", keys) < 0 ||
        path_list(c, contrib, p->root, "records", true, &p->record_dirs) < 0 ||
        path_list(c, contrib, p->root, "skills", true, &p->skills) < 0 ||
        path_list(c, contrib, p->root, "instructions", false, &p->instructions) < 0 ||
        check_skills(c, p) < 0 || tools_list(c, contrib, p) < 0)
        return -1;
    if (p->record_dirs.n + p->skills.n + p->instructions.n + p->tools.n == 0)
        return jfail(c, "contributes",
                     "contributes nothing (records, skills, instructions or "
                     "tools)");
    return 0;
}

static int parse_manifest(const char *path, struct aka_wiki_plugin *p, struct aka_err *err)
{
    static const char *const keys[] = {"name", "version", "description", "contributes", NULL};
    struct jctx c = {path, err};
    json_t *doc = NULL;
    const char *name = NULL, *version = NULL, *desc = NULL;
    int rc = aka_json_load_file(path, &doc, err);
    if (rc == 0 && (jexpect_obj(&c, doc, "") < 0 || jcheck_keys(&c, doc, "", keys) < 0 ||
                    jget_str(&c, doc, "", "name", true, &name) < 0 ||
                    jget_str(&c, doc, "", "version", true, &version) < 0 ||
                    jget_str(&c, doc, "", "description", false, &desc) < 0))
        rc = -1;
    if (rc == 0 && !valid_name(name))
        rc = jfail(&c, "name", "\"%s\" must match ^[a-z][a-z0-9-]*$ (64 bytes at most)", name);
    if (rc == 0 && !*version)
        rc = jfail(&c, "version", "expected a non-empty string");
    if (rc == 0) {
        p->name = aka_xstrdup(name);
        p->version = aka_xstrdup(version);
        rc = manifest_contributes(&c, doc, p);
    }
    json_decref(doc);
    return rc;
}

/* One candidate directory: fingerprint first (a broken plugin still has one,
 * so fixing it changes the cache key), then the manifest. */
static void add_candidate(struct aka_wiki_plugin_list *pl, const char *dir,
                          enum aka_wiki_origin origin)
{
    struct aka_wiki_plugin p = {0};
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf man = STRBUF_INIT;
    p.root = aka_xstrdup(dir);
    p.origin = origin;
    if (wiki_hash_tree(dir, p.content_key, NULL, &err) < 0)
        wiki_plugin_skip(&p, "%s", err.msg);
    aka_path_join(&man, dir, "plugin.json");
    if (!p.skipped && !aka_is_file(man.buf))
        wiki_plugin_skip(&p, "%s: no plugin.json manifest", dir);
    else if (!p.skipped && parse_manifest(man.buf, &p, &err) < 0)
        wiki_plugin_skip(&p, "%s", err.msg);
    for (size_t i = 0; !p.skipped && i < pl->n; i++)
        if (pl->v[i].name && !pl->v[i].skipped && strcmp(pl->v[i].name, p.name) == 0)
            wiki_plugin_skip(&p, "%s: name: plugin \"%s\" is already loaded from %s", man.buf,
                             p.name, pl->v[i].root);
    strbuf_release(&man);
    VEC_PUSH(*pl, p);
}

static void scan_location(struct aka_wiki_plugin_list *pl, const char *loc,
                          enum aka_wiki_origin origin)
{
    struct strvec names = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    if (!loc || !*loc || !aka_is_dir(loc) || aka_list_dir(loc, &names, &err) < 0)
        goto out;
    for (size_t i = 0; i < names.n; i++) {
        aka_path_join(&path, loc, names.v[i]);
        if (names.v[i][0] != '.' && aka_is_dir(path.buf))
            add_candidate(pl, path.buf, origin);
    }
out:
    strvec_clear(&names);
    strbuf_release(&path);
}

int wiki_discover(const struct aka_wiki_config *cfg, struct aka_wiki_plugin_list *pl,
                  struct aka_err *err)
{
    struct strbuf loc = STRBUF_INIT;
    if (cfg->repo_root) {
        aka_path_join(&loc, cfg->repo_root, "runtime/plugins");
        scan_location(pl, loc.buf, AKA_WIKI_BUNDLED);
    }
    const char *data = cfg->data_home ? cfg->data_home : getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    strbuf_reset(&loc);
    if (data && *data)
        strbuf_addf(&loc, "%s/aka/plugins", data);
    else if (home && *home)
        strbuf_addf(&loc, "%s/.local/share/aka/plugins", home);
    scan_location(pl, loc.buf, AKA_WIKI_USER);
    const char *ws = cfg->workspace ? cfg->workspace : getenv("ATREX_AKA_WORKSPACE");
    if (ws && *ws) {
        aka_path_join(&loc, ws, ".aka-plugins");
        scan_location(pl, loc.buf, AKA_WIKI_WORKSPACE);
    }
    strbuf_release(&loc);
    return 0;
}

int wiki_cache_dir(const struct aka_wiki_config *cfg, struct strbuf *out, struct aka_err *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    strbuf_reset(out);
    if (cfg->cache_dir && *cfg->cache_dir)
        strbuf_addstr(out, cfg->cache_dir);
    else if (xdg && *xdg)
        strbuf_addf(out, "%s/aka", xdg);
    else if (home && *home)
        strbuf_addf(out, "%s/.cache/aka", home);
    else
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "wiki: no cache directory: set --cache-dir, $XDG_CACHE_HOME or $HOME");
    return 0;
}

void wiki_set_fingerprint(const struct aka_wiki_plugin_list *pl, char out[AKA_SHA256_HEX_LEN + 1])
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->v[i].skipped)
            strbuf_addf(&sb, "%s %s %s\n", pl->v[i].name, pl->v[i].version, pl->v[i].fingerprint);
    aka_sha256_hex(sb.buf, sb.len, out);
    strbuf_release(&sb);
}

void wiki_cache_key(const struct aka_wiki_plugin_list *pl, char out[33])
{
    struct strbuf sb = STRBUF_INIT;
    strbuf_addf(&sb, "%s\n", WIKI_INDEX_FORMAT);
    for (size_t i = 0; i < pl->n; i++)
        strbuf_addf(&sb, "%s %s %s\n", aka_wiki_origin_name(pl->v[i].origin), pl->v[i].root,
                    pl->v[i].content_key);
    wiki_fast_hex(sb.buf, sb.len, out);
    strbuf_release(&sb);
}
