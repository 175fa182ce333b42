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

/* The records committed at HEAD: versions ascending, each with its blob id. */
struct head_records {
    struct {
        long *v;
        size_t n, alloc;
    } versions;
    struct strvec oids; /* parallel to versions */
};

static void head_records_release(struct head_records *h)
{
    VEC_FREE(h->versions);
    strvec_clear(&h->oids);
}

static bool has_head(const struct aka_git *g)
{
    char oid[AKA_GIT_OID_HEX + 1];
    struct aka_err ignored = AKA_ERR_INIT;
    return aka_git_rev_parse(g, "HEAD", oid, &ignored) == 0;
}

/* Insert (v, oid) keeping versions ascending (ls-tree sorts by name: v10 before v2). */
static void insert_sorted(struct head_records *h, long v, const char *oid)
{
    size_t i = h->versions.n;
    VEC_PUSH(h->versions, v);
    strvec_push(&h->oids, oid);
    for (; i > 0 && h->versions.v[i - 1] > v; i--) {
        char *t = h->oids.v[i];
        h->versions.v[i] = h->versions.v[i - 1];
        h->oids.v[i] = h->oids.v[i - 1];
        h->oids.v[i - 1] = t;
    }
    h->versions.v[i] = v;
}

/* One `git ls-tree` of memory/ at HEAD (no HEAD yet: no records). */
static int head_records(const char *ws, struct head_records *h, struct aka_err *err)
{
    struct aka_git g;
    struct strvec names = STRVEC_INIT, oids = STRVEC_INIT;
    struct aka_err why = AKA_ERR_INIT;
    memset(h, 0, sizeof(*h));
    aka_git_open(&g, ws);
    int rc = aka_git_ls_blobs(&g, "HEAD", aka_ws_rel(AKA_WS_MEMORY), &names, &oids, &why);
    if (rc < 0 && !has_head(&g))
        rc = 0; /* a fresh repository: nothing committed */
    else if (rc < 0)
        aka_err_set(err, why.code, "%s", why.msg);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        long v = version_of(names.v[i]);
        if (v >= 0)
            insert_sorted(h, v, oids.v[i]);
    }
    strvec_clear(&names);
    strvec_clear(&oids);
    aka_git_close(&g);
    return rc;
}

/* Blob bytes by id, read once per process: a blob id names its content, so a cached copy
 * can never be stale (replace objects are off in git/), and a loop top, a verification
 * and every progress line do not each re-read every record. */
static struct {
    struct {
        char oid[AKA_GIT_OID_HEX + 1];
        struct strbuf bytes;
    } * v;
    size_t n, alloc;
} blobs;

static int blob_bytes(const char *ws, const char *oid, const struct strbuf **out,
                      struct aka_err *err)
{
    struct aka_git g;
    struct strbuf bytes = STRBUF_INIT;
    for (size_t i = 0; i < blobs.n; i++)
        if (strcmp(blobs.v[i].oid, oid) == 0) {
            *out = &blobs.v[i].bytes;
            return 0;
        }
    aka_git_open(&g, ws);
    const char *args[] = {"cat-file", "blob", oid, NULL};
    int rc = aka_git_run(&g, args, &bytes, err);
    aka_git_close(&g);
    if (rc < 0) {
        strbuf_release(&bytes);
        return -1;
    }
    VEC_GROW(blobs, blobs.n + 1);
    snprintf(blobs.v[blobs.n].oid, sizeof(blobs.v[blobs.n].oid), "%s", oid);
    blobs.v[blobs.n].bytes = bytes;
    *out = &blobs.v[blobs.n++].bytes;
    return 0;
}

int aka_ws_latest_version(const char *ws, long *latest, struct aka_err *err)
{
    struct head_records h;
    int rc = head_records(ws, &h, err);
    *latest = rc == 0 && h.versions.n ? h.versions.v[h.versions.n - 1] : -1;
    head_records_release(&h);
    return rc;
}

/* Record `version` from its blob (oid; NULL: not committed). Failures name
 * HEAD:memory/v<N>.json, code 1. */
static int parse_record(const char *ws, long version, const char *oid, struct aka_memory_record *m,
                        struct aka_err *err)
{
    struct strbuf rel = STRBUF_INIT, label = STRBUF_INIT;
    struct aka_err why = AKA_ERR_INIT;
    const struct strbuf *bytes = NULL;
    json_t *doc = NULL;
    aka_ws_memory_rel(&rel, version);
    strbuf_addf(&label, "%s: HEAD:%s", ws, rel.buf);
    int rc = !oid ? aka_err_set(&why, AKA_EXIT_FAILED, "not committed")
                  : blob_bytes(ws, oid, &bytes, &why);
    if (rc < 0)
        aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot be read: %s", label.buf, why.msg);
    if (rc == 0 && bytes)
        rc = aka_json_load_buf(label.buf, bytes->buf, bytes->len, &doc, err);
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
    strbuf_release(&rel);
    strbuf_release(&label);
    return rc;
}

static const char *oid_of(const struct head_records *h, long version)
{
    for (size_t i = 0; i < h->versions.n; i++)
        if (h->versions.v[i] == version)
            return h->oids.v[i];
    return NULL;
}

int aka_ws_memory_at_head(const char *ws, long version, struct aka_memory_record *m,
                          struct aka_err *err)
{
    struct head_records h;
    int rc = head_records(ws, &h, err);
    if (rc == 0)
        rc = parse_record(ws, version, oid_of(&h, version), m, err);
    head_records_release(&h);
    return rc;
}

static bool incumbent_status(enum aka_memory_status s)
{
    return s == AKA_MEM_BASELINE || s == AKA_MEM_FRAMEWORK_BASELINE || s == AKA_MEM_PROMOTED;
}

int aka_ws_incumbent(const char *ws, struct aka_memory_record *m, long *latest, struct aka_err *err)
{
    struct head_records h;
    int rc = head_records(ws, &h, err) < 0 ? -1 : 1;
    if (latest)
        *latest = h.versions.n ? h.versions.v[h.versions.n - 1] : -1;
    for (size_t i = h.versions.n; rc == 1 && i-- > 0;) {
        if (parse_record(ws, h.versions.v[i], h.oids.v[i], m, err) < 0)
            rc = -1;
        else if (incumbent_status(m->status))
            rc = 0;
        else
            aka_memory_release(m);
    }
    if (rc == 1 && h.versions.n > 0) /* records, but none an incumbent: V0 is missing */
        rc = aka_err_set(err, AKA_EXIT_FAILED,
                         "%s: no committed baseline, V1 or promoted record among %zu versions; "
                         "refusing to guess the incumbent",
                         ws, h.versions.n);
    head_records_release(&h);
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
    struct head_records h;
    struct aka_err ignored = AKA_ERR_INIT;
    struct strbuf rel = STRBUF_INIT, path = STRBUF_INIT, disk = STRBUF_INIT;
    const struct strbuf *blob = NULL;
    bool same = true;
    strbuf_reset(what);
    if (head_records(ws, &h, &ignored) < 0)
        h.versions.n = 0;
    for (size_t i = 0; same && i < h.versions.n; i++) {
        aka_ws_memory_rel(&rel, h.versions.v[i]);
        aka_path_join(&path, ws, rel.buf);
        strbuf_reset(&disk);
        bool readable = aka_read_file(path.buf, &disk, AKA_READ_LIMIT_DEFAULT, &ignored) == 0;
        if (blob_bytes(ws, h.oids.v[i], &blob, &ignored) == 0 &&
            (!readable || disk.len != blob->len || memcmp(disk.buf, blob->buf, disk.len) != 0)) {
            strbuf_addf(what, "%s %s its committed copy HEAD:%s", path.buf,
                        readable ? "differs from" : "is unreadable, unlike", rel.buf);
            same = false;
        }
    }
    head_records_release(&h);
    strbuf_release(&rel);
    strbuf_release(&path);
    strbuf_release(&disk);
    return same;
}
