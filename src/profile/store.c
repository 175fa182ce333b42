/*
 * store.c — summaries an agent's `aka profile` produced in an episode, kept in
 * the worktree's .aka/profiles/ (never committed: .aka/ is ignored, and a
 * promotion stages the kernel file only). Files are p0001.json, p0002.json,
 * ... in order, so the newest is the one the agent saw last; the supervisor
 * cites it in the memory record's profile_evidence and archives the directory
 * under the episode's profiles/.
 */
#include "base/fs.h"
#include "profile/profile.h"
#include "workspace/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long newest(const char *dir, struct strbuf *name)
{
    struct strvec names = STRVEC_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    long best = 0;
    if (aka_is_dir(dir) && aka_list_dir(dir, &names, &ignored) == 0)
        for (size_t i = 0; i < names.n; i++) {
            long n = 0;
            char tail[8] = "";
            if (sscanf(names.v[i], "p%4ld.%5s", &n, tail) == 2 && strcmp(tail, "json") == 0 &&
                n > best) {
                best = n;
                strbuf_reset(name);
                strbuf_addstr(name, names.v[i]);
            }
        }
    strvec_clear(&names);
    return best;
}

int aka_profile_save(const char *worktree, const json_t *summary, struct strbuf *saved,
                     struct aka_err *err)
{
    struct strbuf dir = STRBUF_INIT, last = STRBUF_INIT, file = STRBUF_INIT;
    aka_wt_path(&dir, worktree, AKA_WT_PROFILES);
    int rc = aka_mkdir_p(dir.buf, 0755, err);
    long n = newest(dir.buf, &last) + 1;
    char *text = rc == 0 ? json_dumps(summary, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    if (rc == 0 && n > 9999)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: 9999 profiles already; start a new episode",
                         dir.buf);
    if (rc == 0) {
        strbuf_addf(&file, "%s/p%04ld.json", dir.buf, n);
        rc = aka_write_file_atomic(file.buf, text, strlen(text), 0644, err);
    }
    if (rc == 0 && saved)
        strbuf_addstr(saved, file.buf);
    free(text);
    strbuf_release(&dir);
    strbuf_release(&last);
    strbuf_release(&file);
    return rc;
}

/* The summary an experiment cites ("profile": "p0002"), if it is one of this worktree's. */
json_t *aka_profile_cited(const char *worktree, const char *name)
{
    struct strbuf path = STRBUF_INIT;
    long n = 0;
    char tail = 0;
    json_t *doc = NULL;
    if (name && strlen(name) == 5 && sscanf(name, "p%4ld%c", &n, &tail) == 1 && n > 0) {
        aka_wt_path(&path, worktree, AKA_WT_PROFILES);
        strbuf_addf(&path, "/%s.json", name);
        doc = json_load_file(path.buf, 0, NULL);
        if (doc && !json_is_object(doc)) {
            json_decref(doc);
            doc = NULL;
        }
    }
    strbuf_release(&path);
    return doc;
}

json_t *aka_profile_latest(const char *worktree)
{
    struct strbuf dir = STRBUF_INIT, name = STRBUF_INIT, path = STRBUF_INIT;
    aka_wt_path(&dir, worktree, AKA_WT_PROFILES);
    json_t *doc = NULL;
    if (newest(dir.buf, &name) > 0) {
        aka_path_join(&path, dir.buf, name.buf);
        doc = json_load_file(path.buf, 0, NULL);
        if (doc && !json_is_object(doc)) { /* the agent's file: anything else is no citation */
            json_decref(doc);
            doc = NULL;
        }
    }
    strbuf_release(&dir);
    strbuf_release(&name);
    strbuf_release(&path);
    return doc;
}
