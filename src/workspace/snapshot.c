/*
 * snapshot.c — the evidence an evaluation reads, pinned (DESIGN §1.5, §1.8):
 *
 *   operator   at a campaign's first start the original operator directory is copied
 *              to .aka/operator/ and the sha256 of every copied file goes into a
 *              manifest written atomically last (.aka/operator.json); every later
 *              evaluation uses the copy, verified against the manifest first. The
 *              original stays where an agent or a person can edit it: a change there
 *              is reported, never used;
 *   assets     the files aka ships from <repo_root>/runtime/ (harness, prompts,
 *              skills, guard, schemas, plugins) are hashed into campaign.json at its
 *              creation and re-hashed on resume and before every evaluation job.
 *
 * A mismatch in either is exit 2 naming the file: the campaign's own evidence changed
 * under it, which no rerun fixes (75 would hand the campaign to the environment
 * monitor, which would only retry). Directories named __pycache__ (Python's byte-code
 * cache, written by anyone who imports a file) and .git are not evidence and are
 * skipped; a symbolic link is refused (aka_list_files).
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "workspace/workspace.h"

#include <string.h>

#define SNAPSHOT_SCHEMA "aka.operator_snapshot.v1"

static const char *const skip_dirs[] = {".git", "__pycache__", NULL};

/* {prefix + rel: sha256} of every file below dir. */
static json_t *hash_tree(const char *dir, const char *prefix, struct aka_err *err)
{
    struct strvec files = STRVEC_INIT;
    struct strbuf path = STRBUF_INIT, key = STRBUF_INIT;
    char hex[AKA_SHA256_HEX_LEN + 1];
    json_t *m = json_object();
    int rc = aka_list_files(dir, skip_dirs, &files, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        aka_path_join(&path, dir, files.v[i]);
        strbuf_reset(&key);
        strbuf_addf(&key, "%s%s", prefix, files.v[i]);
        rc = aka_sha256_file(path.buf, hex, err);
        if (rc == 0)
            json_object_set_new(m, key.buf, json_string(hex));
    }
    strvec_clear(&files);
    strbuf_release(&path);
    strbuf_release(&key);
    if (rc < 0) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* The first difference of two {name: sha256} maps: its name and how ("differs", "was
 * added", "is missing"). False when they are equal. */
static bool first_difference(const json_t *want, const json_t *have, const char **name,
                             const char **how)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)want, k, v)
    {
        json_t *h = json_object_get(have, k);
        if (!h || !json_equal(h, v)) {
            *name = k;
            *how = h ? "differs" : "is missing";
            return true;
        }
    }
    json_object_foreach((json_t *)have, k, v)
    {
        if (!json_object_get(want, k)) {
            *name = k;
            *how = "was added";
            return true;
        }
    }
    return false;
}

/* ---- the operator snapshot ------------------------------------------------------------------ */

static int copy_tree(const char *from, const char *to, struct aka_err *err)
{
    struct strvec files = STRVEC_INIT;
    struct strbuf src = STRBUF_INIT, dst = STRBUF_INIT;
    int rc = aka_list_files(from, skip_dirs, &files, err);
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        aka_path_join(&src, from, files.v[i]);
        aka_path_join(&dst, to, files.v[i]);
        char *slash = strrchr(dst.buf, '/');
        *slash = '\0';
        rc = aka_mkdir_p(dst.buf, 0755, err);
        *slash = '/';
        if (rc == 0)
            rc = aka_copy_file(src.buf, dst.buf, err);
    }
    strvec_clear(&files);
    strbuf_release(&src);
    strbuf_release(&dst);
    return rc;
}

/* Copy, hash the copies, write the manifest last: without a manifest there is no snapshot. */
static int make_snapshot(const char *ws, const char *original, const char *dir, struct aka_err *err)
{
    struct strbuf manifest = STRBUF_INIT;
    json_t *files = NULL, *doc = NULL;
    aka_ws_path(&manifest, ws, AKA_WS_OPERATOR_MANIFEST);
    int rc = aka_remove_tree(manifest.buf, err) < 0 || aka_remove_tree(dir, err) < 0 ||
                     aka_mkdir_p(dir, 0755, err) < 0 || copy_tree(original, dir, err) < 0
                 ? -1
                 : 0;
    if (rc == 0 && !(files = hash_tree(dir, "", err)))
        rc = -1;
    if (rc == 0) {
        doc = json_pack("{s:s, s:s, s:O}", "schema", SNAPSHOT_SCHEMA, "source", original, "files",
                        files);
        rc = aka_json_write_file(manifest.buf, doc, err);
    }
    json_decref(files);
    json_decref(doc);
    strbuf_release(&manifest);
    return rc;
}

/* The manifest's {file: sha256}; code 2 naming it when it is missing or malformed. */
static json_t *load_manifest(const char *ws, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *doc = NULL, *files = NULL, *out = NULL;
    const char *schema = NULL;
    aka_ws_path(&path, ws, AKA_WS_OPERATOR_MANIFEST);
    struct jctx jc = {path.buf, err};
    if (aka_json_load_file(path.buf, &doc, err) == 0 && jexpect_obj(&jc, doc, "") == 0 &&
        jget_str(&jc, doc, "", "schema", true, &schema) == 0 &&
        jget_obj(&jc, doc, "", "files", true, &files) == 0) {
        if (strcmp(schema, SNAPSHOT_SCHEMA) != 0)
            jfail(&jc, "schema", "expected \"%s\"; got \"%s\"", SNAPSHOT_SCHEMA, schema);
        else
            out = json_incref(files);
    }
    json_decref(doc);
    strbuf_release(&path);
    return out;
}

int aka_ws_operator_verify(const char *ws, struct strbuf *dir, struct aka_err *err)
{
    const char *name = NULL, *how = NULL;
    aka_ws_path(dir, ws, AKA_WS_OPERATOR);
    json_t *want = load_manifest(ws, err), *have = NULL;
    int rc = want ? 0 : -1;
    if (rc == 0 && !(have = hash_tree(dir->buf, "", err)))
        rc = -1;
    if (rc == 0 && first_difference(want, have, &name, &how))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s/%s: %s from the operator snapshot's manifest %s/%s (the snapshot "
                         "taken at V0 never changes); refusing to evaluate",
                         dir->buf, name, how, ws, aka_ws_rel(AKA_WS_OPERATOR_MANIFEST));
    json_decref(want);
    json_decref(have);
    return rc;
}

int aka_ws_operator_snapshot(const char *ws, const char *original, struct strbuf *dir,
                             struct aka_err *err)
{
    struct strbuf campaign = STRBUF_INIT;
    aka_ws_path(&campaign, ws, AKA_WS_CAMPAIGN);
    aka_ws_path(dir, ws, AKA_WS_OPERATOR);
    /* Before campaign.json exists nothing was evaluated: a partial snapshot is redone. */
    bool fresh = !aka_exists(campaign.buf);
    strbuf_release(&campaign);
    if (fresh && make_snapshot(ws, original, dir->buf, err) < 0)
        return -1;
    return aka_ws_operator_verify(ws, dir, err);
}

int aka_ws_operator_snapshot_into(const char *ws, const char *original, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    aka_ws_path(&dir, ws, AKA_WS_OPERATOR);
    int rc = make_snapshot(ws, original, dir.buf, err);
    strbuf_release(&dir);
    return rc;
}

bool aka_ws_operator_unchanged(const char *ws, const char *original, struct strbuf *what)
{
    struct aka_err err = AKA_ERR_INIT;
    const char *name = NULL, *how = NULL;
    json_t *want = load_manifest(ws, &err), *have = want ? hash_tree(original, "", &err) : NULL;
    bool same = true;
    strbuf_reset(what);
    if (!have) {
        strbuf_addf(what, "%s cannot be read (%s)", original, err.msg);
        same = false;
    } else if (first_difference(want, have, &name, &how)) {
        strbuf_addf(what, "%s/%s %s from the V0 snapshot", original, name,
                    strcmp(how, "is missing") == 0 ? "was removed" : how);
        same = false;
    }
    json_decref(want);
    json_decref(have);
    return same;
}

/* ---- the asset tree ------------------------------------------------------------------------- */

json_t *aka_ws_assets_manifest(const char *repo_root, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    aka_path_join(&dir, repo_root, "runtime");
    json_t *m = hash_tree(dir.buf, "runtime/", err);
    strbuf_release(&dir);
    return m;
}

int aka_ws_assets_verify(const json_t *pinned, const char *repo_root, const char *pinned_in,
                         struct aka_err *err)
{
    const char *name = NULL, *how = NULL;
    json_t *now = aka_ws_assets_manifest(repo_root, err);
    int rc = now ? 0 : -1;
    if (rc == 0 && first_difference(pinned, now, &name, &how))
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s/%s: %s since the campaign pinned the asset tree (%s: assets); "
                         "refusing: a campaign evaluates with the harness, prompts and skills "
                         "it started with (to use this tree, start a new campaign: another "
                         "--workspace, or move that campaign's directory away)",
                         repo_root, name, how, pinned_in);
    json_decref(now);
    return rc;
}
