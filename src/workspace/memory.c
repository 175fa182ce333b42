/*
 * memory.c — canonical memory records (DESIGN §3, §4.4): written here, and read by the
 * supervisor from committed blobs only.
 *
 * memory/v<N>.json in the working tree is a file anyone with a shell in the workspace
 * can edit; the committed blob HEAD:memory/v<N>.json is what the supervisor recorded
 * and proved (aka_ws_check_canonical after every version commit). So every decision —
 * the incumbent a candidate must beat, the version an episode makes, the stop rules —
 * reads blobs, and the incumbent is found by one rule in one function. A record that
 * cannot be read or does not parse fails closed naming the file; it is never skipped
 * in favour of an older version.
 */
#include "base/fs.h"
#include "base/json.h"
#include "workspace/workspace.h"

#include <stdlib.h>
#include <string.h>

/* N of "memory/v<N>.json" (canonical: no leading zero), else -1. */
static long version_of(const char *name)
{
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    size_t n = strlen(base);
    if (n < 7 || base[0] != 'v' || strcmp(base + n - 5, ".json") != 0 ||
        strspn(base + 1, "0123456789") != n - 6 || (base[1] == '0' && n > 7))
        return -1;
    return strtol(base + 1, NULL, 10);
}

static bool has_head(const struct aka_git *g)
{
    char oid[AKA_GIT_OID_HEX + 1];
    struct aka_err ignored = AKA_ERR_INIT;
    return aka_git_rev_parse(g, "HEAD", oid, &ignored) == 0;
}

/* The versions committed at HEAD, ascending. */
static int head_versions(const char *ws, struct aka_memory_listing *l, struct aka_err *err)
{
    struct aka_git g;
    struct strvec names = STRVEC_INIT;
    int rc = 0;
    memset(l, 0, sizeof(*l));
    aka_git_open(&g, ws);
    if (has_head(&g))
        rc = aka_git_ls_names(&g, "HEAD", aka_ws_rel(AKA_WS_MEMORY), &names, err);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        long v = version_of(names.v[i]);
        if (v >= 0)
            VEC_PUSH(l->versions, v);
    }
    for (size_t i = 1; i < l->versions.n; i++) /* ls-tree sorts by name: v10 before v2 */
        for (size_t j = i; j > 0 && l->versions.v[j - 1] > l->versions.v[j]; j--) {
            long t = l->versions.v[j];
            l->versions.v[j] = l->versions.v[j - 1];
            l->versions.v[j - 1] = t;
        }
    strvec_clear(&names);
    aka_git_close(&g);
    return rc;
}

int aka_ws_latest_version(const char *ws, long *latest, struct aka_err *err)
{
    struct aka_memory_listing l;
    int rc = head_versions(ws, &l, err);
    *latest = rc == 0 ? aka_memory_latest(&l) : -1;
    aka_memory_listing_release(&l);
    return rc;
}

int aka_ws_memory_at_head(const char *ws, long version, struct aka_memory_record *m,
                          struct aka_err *err)
{
    struct aka_git g;
    struct strbuf rel = STRBUF_INIT, label = STRBUF_INIT, blob = STRBUF_INIT;
    json_t *doc = NULL;
    aka_ws_memory_rel(&rel, version);
    strbuf_addf(&label, "%s: HEAD:%s", ws, rel.buf);
    aka_git_open(&g, ws);
    struct aka_err why = AKA_ERR_INIT;
    int rc = aka_git_show_blob(&g, "HEAD", rel.buf, &blob, &why);
    if (rc < 0)
        aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot be read: %s", label.buf, why.msg);
    if (rc == 0)
        rc = aka_json_load_buf(label.buf, blob.buf, blob.len, &doc, err);
    if (rc == 0)
        rc = aka_memory_from_json(label.buf, doc, m, err);
    if (rc == 0 && m->version != version) {
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: version: expected \"v%ld\"; got \"v%ld\"",
                         label.buf, version, m->version);
        aka_memory_release(m);
    }
    if (rc < 0) /* a canonical record the supervisor cannot trust is a failed campaign */
        err->code = AKA_EXIT_FAILED;
    json_decref(doc);
    aka_git_close(&g);
    strbuf_release(&rel);
    strbuf_release(&label);
    strbuf_release(&blob);
    return rc;
}

static bool incumbent_status(enum aka_memory_status s)
{
    return s == AKA_MEM_BASELINE || s == AKA_MEM_FRAMEWORK_BASELINE || s == AKA_MEM_PROMOTED;
}

int aka_ws_incumbent(const char *ws, struct aka_memory_record *m, long *latest, struct aka_err *err)
{
    struct aka_memory_listing l;
    int rc = head_versions(ws, &l, err) < 0 ? -1 : 1;
    if (latest)
        *latest = aka_memory_latest(&l);
    for (size_t i = l.versions.n; rc == 1 && i-- > 0;) {
        if (aka_ws_memory_at_head(ws, l.versions.v[i], m, err) < 0)
            rc = -1;
        else if (incumbent_status(m->status))
            rc = 0;
        else
            aka_memory_release(m);
    }
    if (rc == 1 && l.versions.n > 0) /* records, but none an incumbent: V0 is missing */
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "%s: no committed baseline, V1 or promoted record among %zu versions; "
                         "refusing to guess the incumbent",
                         ws, l.versions.n);
    aka_memory_listing_release(&l);
    return rc;
}

int aka_ws_memory_write(const char *ws, json_t *doc, struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT;
    aka_ws_path(&dir, ws, AKA_WS_MEMORY);
    int rc = aka_mkdir_p(dir.buf, 0755, err) < 0 ? -1 : aka_memory_write(dir.buf, doc, err);
    strbuf_release(&dir);
    return rc;
}

int aka_ws_check_canonical(const char *ws, long version, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT, disk = STRBUF_INIT, head = STRBUF_INIT, rel = STRBUF_INIT;
    struct aka_memory_record m;
    struct aka_git g;
    aka_git_open(&g, ws);
    aka_ws_memory_rel(&rel, version);
    aka_path_join(&path, ws, rel.buf);
    int rc = aka_memory_load(path.buf, &m, err);
    if (rc == 0) {
        aka_memory_release(&m);
        rc = aka_read_file(path.buf, &disk, AKA_READ_LIMIT_DEFAULT, err);
    }
    if (rc == 0)
        rc = aka_git_show_blob(&g, "HEAD", rel.buf, &head, err);
    if (rc == 0 && (disk.len != head.len || memcmp(disk.buf, head.buf, disk.len) != 0))
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "%s: differs from its committed copy HEAD:%s; refusing to advance",
                         path.buf, rel.buf);
    if (rc < 0 && err->code == AKA_EXIT_USAGE)
        err->code = AKA_EXIT_FAILED;
    aka_git_close(&g);
    strbuf_release(&path);
    strbuf_release(&disk);
    strbuf_release(&head);
    strbuf_release(&rel);
    return rc;
}

bool aka_ws_memory_unchanged(const char *ws, struct strbuf *what)
{
    struct aka_memory_listing l;
    struct aka_err ignored = AKA_ERR_INIT;
    struct aka_git g;
    struct strbuf rel = STRBUF_INIT, path = STRBUF_INIT, disk = STRBUF_INIT, blob = STRBUF_INIT;
    bool same = true;
    strbuf_reset(what);
    aka_git_open(&g, ws);
    if (head_versions(ws, &l, &ignored) < 0)
        l.versions.n = 0;
    for (size_t i = 0; same && i < l.versions.n; i++) {
        aka_ws_memory_rel(&rel, l.versions.v[i]);
        aka_path_join(&path, ws, rel.buf);
        strbuf_reset(&disk);
        strbuf_reset(&blob);
        bool readable = aka_read_file(path.buf, &disk, AKA_READ_LIMIT_DEFAULT, &ignored) == 0;
        if (aka_git_show_blob(&g, "HEAD", rel.buf, &blob, &ignored) == 0 &&
            (!readable || disk.len != blob.len || memcmp(disk.buf, blob.buf, disk.len) != 0)) {
            strbuf_addf(what, "%s %s its committed copy HEAD:%s", path.buf,
                        readable ? "differs from" : "is unreadable, unlike", rel.buf);
            same = false;
        }
    }
    aka_memory_listing_release(&l);
    aka_git_close(&g);
    strbuf_release(&rel);
    strbuf_release(&path);
    strbuf_release(&disk);
    strbuf_release(&blob);
    return same;
}
