/*
 * handoff.c — handoff.json: how an agent ends an episode, and the terminal
 * validation that checks it against the episode journal.
 *
 * The handoff is the one thing an agent writes that makes the supervisor act,
 * so each way it can be wrong gets its own diagnosis (these go back to the
 * agent in a resume turn): missing, empty, invalid JSON with line and column,
 * not an object, unknown status, a candidate without a commit, a commit where
 * none belongs. A candidate_ready handoff is only acceptable with a journal
 * finalized as candidate_ready naming the very same commit: the journal is the
 * agent's record of what it measured, the handoff only points at it.
 */
#include "base/fs.h"
#include "contracts/records.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

const char *const aka_handoff_status_names[] = {"candidate_ready", "pivot", "blocked", NULL};

/* Upstream trims handoff strings; we do the same so " pivot\n" is not an error. */
static void trimmed(const char *s, char *out, size_t size)
{
    size_t n;
    while (isspace((unsigned char)*s))
        s++;
    n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    snprintf(out, size, "%.*s", (int)n, s);
}

/* An optional commit field: absent, null or "" mean none; otherwise 40 hex. */
static int get_commit(const struct jctx *c, json_t *doc, const char *key, char *out)
{
    const char *s = NULL;
    char buf[128];
    out[0] = '\0';
    if (jget_str(c, doc, "", key, false, &s) < 0)
        return -1;
    if (!s)
        return 0;
    trimmed(s, buf, sizeof(buf));
    if (!buf[0])
        return 0;
    if (!aka_record_is_hex(buf, AKA_COMMIT_HEX_LEN))
        return aka_record_expected(c, key, "a 40-digit lower-case commit id",
                                   json_object_get(doc, key));
    memcpy(out, buf, AKA_COMMIT_HEX_LEN + 1);
    return 0;
}

static int get_status(const struct jctx *c, json_t *doc, enum aka_handoff_status *out)
{
    const char *s = NULL;
    char buf[64];
    int idx;
    if (jget_str(c, doc, "", "status", true, &s) < 0)
        return -1;
    trimmed(s, buf, sizeof(buf));
    idx = jenum_index(buf, aka_handoff_status_names);
    if (idx < 0)
        return aka_record_expected(c, "status", "one of candidate_ready, pivot, blocked",
                                   json_object_get(doc, "status"));
    *out = (enum aka_handoff_status)idx;
    return 0;
}

static int check_commit_rule(const struct jctx *c, const struct aka_handoff *h)
{
    if (h->status == AKA_HANDOFF_CANDIDATE_READY && !h->candidate_commit[0])
        return jfail(c, "candidate_commit",
                     "expected a 40-digit lower-case commit id when status is candidate_ready; "
                     "got nothing");
    if (h->status != AKA_HANDOFF_CANDIDATE_READY && h->candidate_commit[0])
        return jfail(c, "candidate_commit", "expected none when status is %s; got \"%s\"",
                     aka_handoff_status_names[h->status], h->candidate_commit);
    return 0;
}

static int handoff_from_json_impl(const char *label, json_t *doc, struct aka_handoff *out,
                                  struct aka_err *err)
{
    static const char *const keys[] = {"status", "candidate_commit", "last_trial_commit", NULL};
    struct jctx c = {label, err};
    memset(out, 0, sizeof(*out));
    if (jexpect_obj(&c, doc, "") < 0 || jcheck_keys(&c, doc, "", keys) < 0 ||
        get_status(&c, doc, &out->status) < 0 ||
        get_commit(&c, doc, "candidate_commit", out->candidate_commit) < 0 ||
        get_commit(&c, doc, "last_trial_commit", out->last_trial_commit) < 0 ||
        check_commit_rule(&c, out) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

static bool only_space(const struct strbuf *sb)
{
    for (size_t i = 0; i < sb->len; i++)
        if (!isspace((unsigned char)sb->buf[i]))
            return false;
    return true;
}

static int handoff_load_impl(const char *path, struct aka_handoff *out, struct aka_err *err)
{
    struct strbuf text = STRBUF_INIT;
    struct stat st;
    json_t *doc = NULL;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (lstat(path, &st) < 0 && errno == ENOENT)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: no handoff was written (the file does not "
                           "exist)",
                           path);
    if (aka_read_file(path, &text, (size_t)1 << 20, err) < 0)
        goto done;
    if (only_space(&text)) {
        aka_err_set(err, AKA_EXIT_USAGE, "%s: the handoff file is empty", path);
        goto done;
    }
    if (aka_json_load_buf(path, text.buf, text.len, &doc, err) < 0)
        goto done;
    rc = aka_handoff_from_json(path, doc, out, err);
done:
    json_decref(doc);
    strbuf_release(&text);
    return rc;
}

json_t *aka_handoff_to_json(const struct aka_handoff *h)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(aka_handoff_status_names[h->status]));
    json_object_set_new(o, "candidate_commit",
                        h->candidate_commit[0] ? json_string(h->candidate_commit) : json_null());
    if (h->last_trial_commit[0])
        json_object_set_new(o, "last_trial_commit", json_string(h->last_trial_commit));
    return o;
}

/* ---- terminal validation ------------------------------------------------------- */

static int check_identity(const struct jctx *jc, const struct aka_journal *j,
                          const struct aka_episode_ids *expect)
{
    if (!expect)
        return 0;
    if (j->ids.episode != expect->episode)
        return jfail(jc, "episode", "expected %lld (this episode); got %lld", expect->episode,
                     j->ids.episode);
    if (expect->base_commit && strcmp(j->ids.base_commit, expect->base_commit) != 0)
        return jfail(jc, "base_commit", "expected %s (this episode's base); got %s",
                     expect->base_commit, j->ids.base_commit);
    if (expect->episode_branch && strcmp(j->ids.episode_branch, expect->episode_branch) != 0)
        return jfail(jc, "episode_branch", "expected \"%s\" (this episode's branch); got \"%s\"",
                     expect->episode_branch, j->ids.episode_branch);
    return 0;
}

/* Journal state for a handoff status: the enums differ by in_progress only. */
static enum aka_journal_state journal_state_for(enum aka_handoff_status s)
{
    switch (s) {
    case AKA_HANDOFF_CANDIDATE_READY:
        return AKA_JOURNAL_CANDIDATE_READY;
    case AKA_HANDOFF_PIVOT:
        return AKA_JOURNAL_PIVOT;
    case AKA_HANDOFF_BLOCKED:
        return AKA_JOURNAL_BLOCKED;
    }
    return AKA_JOURNAL_IN_PROGRESS;
}

static int handoff_check_journal_impl(const char *handoff_label, const struct aka_handoff *h,
                                      const char *journal_label, const struct aka_journal *j,
                                      const struct aka_episode_ids *expect, struct aka_err *err)
{
    struct jctx jc = {journal_label, err}, hc = {handoff_label, err};
    enum aka_journal_state want = journal_state_for(h->status);
    if (check_identity(&jc, j, expect) < 0)
        return -1;
    if (j->state != want)
        return jfail(&jc, "state",
                     "expected %s (the handoff's status; finalize the journal "
                     "first); got %s",
                     aka_journal_state_names[want], aka_journal_state_names[j->state]);
    /* A loaded finalized journal already has finalized_at, an outcome and >= 1
     * experiment (aka_journal_from_json); a hand-built struct might not. */
    if (!j->finalized_at || !j->outcome_summary || j->experiment_count == 0)
        return jfail(&jc, "finalized_at",
                     "expected a finalized journal with experiments and an outcome; got an "
                     "incomplete one");
    if (h->status == AKA_HANDOFF_CANDIDATE_READY &&
        (!j->candidate_commit || strcmp(j->candidate_commit, h->candidate_commit) != 0))
        return jfail(&hc, "candidate_commit", "expected %s (the candidate_commit in %s); got %s",
                     j->candidate_commit ? j->candidate_commit : "(none)", journal_label,
                     h->candidate_commit);
    return 0;
}

static int handoff_submit_impl(const char *handoff_path, const char *journal_path,
                               const struct aka_handoff *h, const struct aka_episode_ids *expect,
                               aka_wiki_ref_exists_fn exists, void *data, struct aka_err *err)
{
    struct aka_handoff check;
    struct aka_journal j;
    json_t *doc = aka_handoff_to_json(h);
    int rc = -1;

    /* Round-trip through the parser so a hand-built struct obeys the same rules. */
    if (aka_handoff_from_json(handoff_path, doc, &check, err) < 0)
        goto done;
    if (aka_journal_load(journal_path, &j, err) < 0)
        goto done;
    rc = aka_handoff_check_journal(handoff_path, &check, journal_path, &j, expect, err);
    if (rc == 0 && exists) /* a made-up citation makes the handoff invalid */
        rc = aka_journal_check_wiki_refs(journal_path, &j, exists, data, err);
    aka_journal_release(&j);
    if (rc == 0)
        rc = aka_json_write_file(handoff_path, doc, err);
done:
    json_decref(doc);
    return rc;
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_handoff_from_json(const char *label, json_t *doc, struct aka_handoff *out,
                          struct aka_err *err)
{
    return aka_record_one_line(handoff_from_json_impl(label, doc, out, err), err);
}

int aka_handoff_load(const char *path, struct aka_handoff *out, struct aka_err *err)
{
    return aka_record_one_line(handoff_load_impl(path, out, err), err);
}

int aka_handoff_check_journal(const char *handoff_label, const struct aka_handoff *h,
                              const char *journal_label, const struct aka_journal *j,
                              const struct aka_episode_ids *expect, struct aka_err *err)
{
    return aka_record_one_line(
        handoff_check_journal_impl(handoff_label, h, journal_label, j, expect, err), err);
}

int aka_handoff_submit(const char *handoff_path, const char *journal_path,
                       const struct aka_handoff *h, const struct aka_episode_ids *expect,
                       struct aka_err *err)
{
    return aka_record_one_line(
        handoff_submit_impl(handoff_path, journal_path, h, expect, NULL, NULL, err), err);
}

int aka_handoff_submit_cited(const char *handoff_path, const char *journal_path,
                             const struct aka_handoff *h, const struct aka_episode_ids *expect,
                             aka_wiki_ref_exists_fn exists, void *data, struct aka_err *err)
{
    return aka_record_one_line(
        handoff_submit_impl(handoff_path, journal_path, h, expect, exists, data, err), err);
}
