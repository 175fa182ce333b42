/*
 * commits.c — the supervisor's commits on the incumbent branch, each recorded before it
 * is made, and the proof that HEAD's history holds nothing else (DESIGN §1.4, §1.8, §7).
 *
 * .aka/commits.json is the ledger: the id of every commit the supervisor made, and the
 * intent of the one it is about to make (parent, tree, subject), written atomically
 * before the commit. The commit is then made exactly as recorded — `git commit-tree` of
 * the recorded tree on the recorded parent, and HEAD moved only while it still is that
 * parent — and its id added. A supervisor killed between the two leaves a HEAD that
 * matches the intent exactly; anything else on HEAD's first-parent line that the ledger
 * does not name was not made by this supervisor — a forged version commit, a commit an
 * agent slipped onto the branch — and a resume refuses it by id and subject. Matching
 * what the commit is (tree and parent), not who it claims to be by, is the point: an
 * author name is one environment variable away for anyone.
 */
#include "base/fs.h"
#include "base/json.h"
#include "workspace/workspace.h"

#include <string.h>

#define LEDGER_SCHEMA "aka.commits.v1"

/* The ledger, or a new empty one when none exists yet; code 1 when it cannot be read. */
static int load_ledger(const char *ws, json_t **doc, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    int rc = 0;
    aka_ws_path(&path, ws, AKA_WS_COMMITS);
    *doc = NULL;
    if (!aka_exists(path.buf))
        *doc = json_pack("{s:s, s:[], s:n}", "schema", LEDGER_SCHEMA, "commits", "intent");
    else if (aka_json_load_file(path.buf, doc, err) < 0)
        rc = -1;
    else if (!json_is_array(json_object_get(*doc, "commits")))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: commits: expected an array", path.buf);
    if (rc < 0) {
        err->code = AKA_EXIT_FAILED;
        json_decref(*doc);
        *doc = NULL;
    }
    strbuf_release(&path);
    return rc;
}

static int save_ledger(const char *ws, const json_t *doc, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    aka_ws_path(&path, ws, AKA_WS_STATE_DIR);
    int rc = aka_mkdir_p(path.buf, 0755, err);
    aka_ws_path(&path, ws, AKA_WS_COMMITS);
    if (rc == 0)
        rc = aka_json_write_file(path.buf, doc, err);
    strbuf_release(&path);
    return rc;
}

json_t *aka_ws_intent_to_json(const struct aka_commit_intent *in)
{
    return json_pack("{s:s, s:s, s:s}", "parent", in->parent, "tree", in->tree, "subject",
                     in->subject);
}

bool aka_ws_intent_from_json(const json_t *j, struct aka_commit_intent *in)
{
    const char *p = json_string_value(json_object_get(j, "parent"));
    const char *t = json_string_value(json_object_get(j, "tree"));
    const char *s = json_string_value(json_object_get(j, "subject"));
    memset(in, 0, sizeof(*in));
    if (!p || !t || !s || (*p && strlen(p) != AKA_GIT_OID_HEX) || strlen(t) != AKA_GIT_OID_HEX ||
        strlen(s) >= sizeof(in->subject))
        return false;
    memcpy(in->parent, p, strlen(p) + 1);
    memcpy(in->tree, t, AKA_GIT_OID_HEX + 1);
    memcpy(in->subject, s, strlen(s) + 1);
    return true;
}

static bool listed(const json_t *commits, const char *oid);
static int foreign(const char *ws, const struct aka_git *g, const char *oid, struct aka_err *err);

/* The parent must be a recorded commit too: a commit slipped onto the branch since is found
 * at the supervisor's next commit, not only at the next resume. */
int aka_ws_commit_prepare(const char *ws, const struct aka_commit_subject *s,
                          struct aka_commit_intent *in, struct aka_err *err)
{
    struct aka_git g;
    struct strbuf subject = STRBUF_INIT;
    struct aka_err none = AKA_ERR_INIT;
    json_t *ledger = NULL;
    memset(in, 0, sizeof(*in));
    aka_ws_subject_format(s, &subject);
    snprintf(in->subject, sizeof(in->subject), "%s", subject.buf);
    aka_git_open(&g, ws);
    if (aka_git_rev_parse(&g, "HEAD", in->parent, &none) < 0)
        in->parent[0] = '\0'; /* the root commit */
    int rc = aka_git_write_tree(&g, in->tree, err) < 0 ? -1 : load_ledger(ws, &ledger, err);
    if (rc == 0 && in->parent[0] && !listed(json_object_get(ledger, "commits"), in->parent))
        rc = foreign(ws, &g, in->parent, err);
    if (rc == 0) {
        json_object_set_new(ledger, "intent", aka_ws_intent_to_json(in));
        rc = save_ledger(ws, ledger, err);
    }
    json_decref(ledger);
    aka_git_close(&g);
    strbuf_release(&subject);
    return rc;
}

/* Add oid to the ledger and clear the intent it fulfils. */
static int record(const char *ws, const char *oid, struct aka_err *err)
{
    json_t *ledger = NULL;
    int rc = load_ledger(ws, &ledger, err);
    if (rc == 0) {
        json_array_append_new(json_object_get(ledger, "commits"), json_string(oid));
        json_object_set_new(ledger, "intent", json_null());
        rc = save_ledger(ws, ledger, err);
    }
    json_decref(ledger);
    return rc;
}

int aka_ws_commit_make(const char *ws, const struct aka_commit_intent *in, char *oid,
                       struct aka_err *err)
{
    struct aka_git g;
    aka_git_open(&g, ws);
    int rc = aka_git_commit_tree(&g, in->tree, in->parent, in->subject, oid, err);
    if (rc == 0)
        rc = aka_git_update_ref(&g, "HEAD", oid, in->parent, err);
    aka_git_close(&g);
    return rc < 0 ? -1 : record(ws, oid, err);
}

int aka_ws_commit(const char *ws, const struct aka_commit_subject *s, char *oid,
                  struct aka_err *err)
{
    struct aka_commit_intent in;
    if (aka_ws_commit_prepare(ws, s, &in, err) < 0)
        return -1;
    return aka_ws_commit_make(ws, &in, oid, err);
}

static bool same_commit(const struct aka_git_commit_info *ci, const struct aka_commit_intent *in)
{
    return ci->parents == (in->parent[0] ? 1 : 0) && strcmp(ci->parent, in->parent) == 0 &&
           strcmp(ci->tree, in->tree) == 0 && strcmp(ci->subject, in->subject) == 0 &&
           strcmp(ci->author, AKA_GIT_NAME) == 0;
}

int aka_ws_commit_matches(const char *ws, const char *rev, const struct aka_commit_intent *in,
                          bool *yes, struct aka_err *err)
{
    struct aka_git g;
    struct aka_git_commit_info ci;
    aka_git_open(&g, ws);
    int rc = aka_git_commit_info(&g, rev, &ci, err);
    *yes = rc == 0 && same_commit(&ci, in);
    aka_git_close(&g);
    return rc;
}

/* A subject as it goes into a one-line message: control characters shown as '?'. */
static void printable(const char *in, char *out, size_t n)
{
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++)
        out[i] = (unsigned char)in[i] < 0x20 || in[i] == 0x7f ? '?' : in[i];
    out[i] = '\0';
}

static int foreign(const char *ws, const struct aka_git *g, const char *oid, struct aka_err *err)
{
    struct aka_git_commit_info ci;
    char subject[sizeof(ci.subject)];
    if (aka_git_commit_info(g, oid, &ci, err) < 0)
        return -1;
    printable(ci.subject, subject, sizeof(subject));
    return aka_err_set(err, AKA_EXIT_FAILED,
                       "%s: commit %s \"%s\" on the incumbent branch was not made by this "
                       "supervisor (it is not in %s/%s); refusing to resume: remove it (git "
                       "reset) or start a new workspace",
                       ws, oid, subject, ws, aka_ws_rel(AKA_WS_COMMITS));
}

static bool listed(const json_t *commits, const char *oid)
{
    for (size_t i = 0; i < json_array_size(commits); i++) {
        const char *v = json_string_value(json_array_get(commits, i));
        if (v && strcmp(v, oid) == 0)
            return true;
    }
    return false;
}

int aka_ws_history_check(const char *ws, struct aka_err *err)
{
    struct aka_git g;
    struct strvec line = STRVEC_INIT;
    struct aka_commit_intent in;
    struct aka_err none = AKA_ERR_INIT;
    json_t *ledger = NULL;
    char head[AKA_GIT_OID_HEX + 1];
    aka_git_open(&g, ws);
    bool empty = aka_git_rev_parse(&g, "HEAD", head, &none) < 0;
    int rc = empty ? 0 : aka_git_first_parents(&g, "HEAD", &line, err);
    if (rc == 0 && !empty)
        rc = load_ledger(ws, &ledger, err);
    json_t *commits = json_object_get(ledger, "commits");
    bool pending = aka_ws_intent_from_json(json_object_get(ledger, "intent"), &in);
    for (size_t i = 0; rc == 0 && i < line.n; i++) {
        bool yes = false;
        if (listed(commits, line.v[i]))
            continue;
        if (i == 0 && pending && aka_ws_commit_matches(ws, line.v[i], &in, &yes, err) < 0)
            rc = -1;
        else if (yes) /* made, then the supervisor stopped before recording it */
            rc = record(ws, line.v[i], err);
        else
            rc = foreign(ws, &g, line.v[i], err);
    }
    json_decref(ledger);
    strvec_clear(&line);
    aka_git_close(&g);
    return rc;
}
