/*
 * state.c — the supervisor's own state files and its lock (DESIGN §4.4, §7):
 * .aka/state.json (counters and latches; what the keys mean belongs to optimize/) and
 * .aka/active_episode.json (the write-ahead record of the episode in flight).
 *
 * Both are replaced atomically (temp file, fsync, rename, fsync of the directory, via
 * aka_json_write_file), so a supervisor killed at any instruction leaves either the old
 * or the new file, never a torn one; the active record's removal is made durable before
 * the next episode may write its own.
 */
#include "base/fs.h"
#include "base/json.h"
#include "workspace/workspace.h"

int aka_ws_lock(const char *ws, struct aka_lock *lk, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, ws, AKA_WS_STATE_DIR);
    int rc = aka_mkdir_p(p.buf, 0755, err);
    if (rc == 0) {
        aka_ws_path(&p, ws, AKA_WS_LOCK);
        rc = aka_lock_acquire(lk, p.buf, false, err);
        if (rc < 0)
            aka_err_prefix(err, "another aka optimize runs this campaign");
    }
    strbuf_release(&p);
    return rc;
}

json_t *aka_ws_state_doc(const char *ws)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *doc = NULL;
    aka_ws_path(&p, ws, AKA_WS_STATE);
    if (!aka_is_file(p.buf) || aka_json_load_file(p.buf, &doc, &ignored) < 0 ||
        !json_is_object(doc)) {
        json_decref(doc);
        doc = NULL;
    }
    strbuf_release(&p);
    return doc;
}

int aka_ws_state_write(const char *ws, const json_t *doc, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, ws, AKA_WS_STATE);
    int rc = aka_json_write_file(p.buf, doc, err);
    strbuf_release(&p);
    return rc;
}

int aka_ws_active_write(const char *ws, const json_t *doc, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, ws, AKA_WS_ACTIVE_EPISODE);
    int rc = aka_json_write_file(p.buf, doc, err);
    strbuf_release(&p);
    return rc;
}

int aka_ws_active_load(const char *ws, json_t **doc, struct strbuf *path, struct aka_err *err)
{
    aka_ws_path(path, ws, AKA_WS_ACTIVE_EPISODE);
    *doc = NULL;
    int rc = aka_json_load_file(path->buf, doc, err);
    if (rc < 0)
        err->code = AKA_EXIT_FAILED;
    return rc;
}

bool aka_ws_active_exists(const char *ws)
{
    struct strbuf p = STRBUF_INIT;
    aka_ws_path(&p, ws, AKA_WS_ACTIVE_EPISODE);
    bool yes = aka_exists(p.buf);
    strbuf_release(&p);
    return yes;
}

int aka_ws_active_clear(const char *ws, struct aka_err *err)
{
    struct strbuf p = STRBUF_INIT, dir = STRBUF_INIT;
    aka_ws_path(&p, ws, AKA_WS_ACTIVE_EPISODE);
    aka_ws_path(&dir, ws, AKA_WS_STATE_DIR);
    /* The removal must be durable before the next episode writes its own record. */
    int rc = aka_remove_tree(p.buf, err) < 0 ? -1 : aka_fsync_dir(dir.buf, err);
    strbuf_release(&p);
    strbuf_release(&dir);
    return rc;
}
