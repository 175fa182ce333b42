/*
 * journal.c — the episode journal (journal.json): schema, validation, and the
 * create / append / finalize operations behind `aka journal`.
 *
 * The journal is the agent's structured account of an episode; the supervisor
 * reads it to build the memory record and checks it against the handoff. Its
 * shape is upstream's (schema_version 1; anchor-campaign.md §3.3) plus an
 * optional wiki_refs[] per experiment: the ids of the wiki records the
 * experiment used, which the supervisor checks exist (DESIGN §8).
 *
 * Every operation is load → validate → modify a copy → validate → atomic
 * replace, so a rejected append or finalize leaves the file byte-identical.
 */
#include "base/fs.h"
#include "contracts/records.h"

#include <ctype.h>
#include <string.h>

const char *const aka_journal_state_names[] = {"in_progress", "candidate_ready", "pivot", "blocked",
                                               NULL};

#define WIKI_REF_MAX 256

/* ---- pieces ----------------------------------------------------------------- */

static bool blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* A record id is copied from wiki output, never composed: one token. */
static bool wiki_ref_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > WIKI_REF_MAX)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7F)
            return false;
    return true;
}

static int check_wiki_refs(const struct jctx *c, json_t *exp, const char *path)
{
    json_t *refs = NULL, *id;
    size_t i;
    if (jget_arr(c, exp, path, "wiki_refs", false, &refs) < 0)
        return -1;
    json_array_foreach(refs, i, id)
    {
        if (json_is_string(id) && wiki_ref_ok(json_string_value(id)))
            continue;
        char p[128];
        snprintf(p, sizeof(p), "%s.wiki_refs[%zu]", path, i);
        return aka_record_expected(c, p, "a wiki record id (one token, as printed by aka wiki)",
                                   id);
    }
    return 0;
}

static int check_experiment(const struct jctx *c, json_t *exp, const char *path)
{
    const char *ts = NULL;
    if (!json_is_object(exp) || json_object_size(exp) == 0)
        return aka_record_expected(c, path, "a non-empty object", exp);
    if (jget_str(c, exp, path, "timestamp", false, &ts) < 0)
        return -1;
    return check_wiki_refs(c, exp, path);
}

static int check_experiments(const struct jctx *c, json_t *arr)
{
    json_t *exp;
    size_t i;
    json_array_foreach(arr, i, exp)
    {
        char path[48];
        snprintf(path, sizeof(path), "experiments[%zu]", i);
        if (check_experiment(c, exp, path) < 0)
            return -1;
    }
    return 0;
}

/* outcome = {summary: non-empty string, next_directions: [string]}. */
static int check_outcome(const struct jctx *c, json_t *outcome, const char *path,
                         const char **summary)
{
    json_t *dirs = NULL, *d;
    size_t i;
    struct strbuf p = STRBUF_INIT;
    if (jexpect_obj(c, outcome, path) < 0 ||
        jget_str(c, outcome, path, "summary", true, summary) < 0 ||
        jget_arr(c, outcome, path, "next_directions", false, &dirs) < 0)
        return -1;
    jpath_key(&p, path, "summary");
    if (blank(*summary)) {
        aka_record_expected(c, p.buf, "a non-empty summary", json_object_get(outcome, "summary"));
        strbuf_release(&p);
        return -1;
    }
    jpath_key(&p, path, "next_directions");
    json_array_foreach(dirs, i, d)
    {
        if (!json_is_string(d)) {
            aka_record_expected(c, p.buf, "a list of strings", dirs);
            strbuf_release(&p);
            return -1;
        }
    }
    strbuf_release(&p);
    return 0;
}

static int get_commit(const struct jctx *c, json_t *doc, const char *key, bool required,
                      const char **out)
{
    if (jget_str(c, doc, "", key, required, out) < 0)
        return -1;
    if (*out && !aka_record_is_hex(*out, AKA_COMMIT_HEX_LEN))
        return aka_record_expected(c, key, "a 40-digit lower-case commit id",
                                   json_object_get(doc, key));
    return 0;
}

static int get_time(const struct jctx *c, json_t *doc, const char *key, bool required,
                    const char **out)
{
    if (jget_str(c, doc, "", key, required, out) < 0)
        return -1;
    if (*out && !aka_record_is_timestamp(*out))
        return aka_record_expected(c, key, "an ISO-8601 time such as 2025-01-31T12:00:00Z",
                                   json_object_get(doc, key));
    return 0;
}

/* ---- validation --------------------------------------------------------------- */

static int get_header(const struct jctx *c, json_t *doc, struct aka_journal *j)
{
    long long schema = 0;
    int state = 0;
    if (jget_int(c, doc, "", "schema_version", true, &schema) < 0)
        return -1;
    if (schema != AKA_JOURNAL_SCHEMA_VERSION)
        return jfail(c, "schema_version", "expected %d; got %lld", AKA_JOURNAL_SCHEMA_VERSION,
                     schema);
    if (jget_int(c, doc, "", "episode", true, &j->ids.episode) < 0 ||
        jget_int(c, doc, "", "memory_version", true, &j->ids.memory_version) < 0 ||
        get_commit(c, doc, "base_commit", true, &j->ids.base_commit) < 0 ||
        jget_str(c, doc, "", "episode_branch", true, &j->ids.episode_branch) < 0 ||
        jget_enum(c, doc, "", "state", true, aka_journal_state_names, &state) < 0 ||
        get_time(c, doc, "created_at", true, &j->created_at) < 0 ||
        get_time(c, doc, "finalized_at", false, &j->finalized_at) < 0 ||
        get_commit(c, doc, "candidate_commit", false, &j->candidate_commit) < 0)
        return -1;
    j->state = (enum aka_journal_state)state;
    if (j->ids.episode < 0 || j->ids.memory_version < 0)
        return jfail(c, j->ids.episode < 0 ? "episode" : "memory_version",
                     "expected an integer >= 0; got %lld",
                     j->ids.episode < 0 ? j->ids.episode : j->ids.memory_version);
    if (blank(j->ids.episode_branch))
        return jfail(c, "episode_branch", "expected a branch name; got \"\"");
    return 0;
}

static int get_body(const struct jctx *c, json_t *doc, struct aka_journal *j)
{
    json_t *exps = NULL, *outcome = json_object_get(doc, "outcome");
    if (jget_arr(c, doc, "", "experiments", true, &exps) < 0 || check_experiments(c, exps) < 0)
        return -1;
    j->experiment_count = json_array_size(exps);
    if (outcome && !json_is_null(outcome) &&
        check_outcome(c, outcome, "outcome", &j->outcome_summary) < 0)
        return -1;
    return 0;
}

/* The state decides which of the end-of-episode fields must be set. */
static int check_state(const struct jctx *c, const struct aka_journal *j)
{
    const char *st = aka_journal_state_names[j->state];
    if (j->state == AKA_JOURNAL_IN_PROGRESS) {
        const char *set = j->finalized_at       ? "finalized_at"
                          : j->outcome_summary  ? "outcome"
                          : j->candidate_commit ? "candidate_commit"
                                                : NULL;
        return set ? jfail(c, set, "expected null while the journal is in_progress; got a value")
                   : 0;
    }
    if (!j->finalized_at)
        return jfail(c, "finalized_at", "expected a time when state is %s; got nothing", st);
    if (!j->outcome_summary)
        return jfail(c, "outcome",
                     "expected {summary, next_directions} when state is %s; got "
                     "nothing",
                     st);
    if (j->experiment_count == 0)
        return jfail(c, "experiments",
                     "expected at least one experiment when state is %s; got "
                     "none",
                     st);
    if (j->state == AKA_JOURNAL_CANDIDATE_READY && !j->candidate_commit)
        return jfail(c, "candidate_commit",
                     "expected the candidate's commit when state is candidate_ready; got nothing");
    if (j->state != AKA_JOURNAL_CANDIDATE_READY && j->candidate_commit)
        return jfail(c, "candidate_commit", "expected null when state is %s; got \"%s\"", st,
                     j->candidate_commit);
    return 0;
}

static int journal_from_json_impl(const char *label, json_t *doc, struct aka_journal *out,
                                  struct aka_err *err)
{
    struct jctx c = {label, err};
    memset(out, 0, sizeof(*out));
    if (jexpect_obj(&c, doc, "") < 0 || get_header(&c, doc, out) < 0 ||
        get_body(&c, doc, out) < 0 || check_state(&c, out) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    out->json = json_incref(doc);
    return 0;
}

static int journal_load_impl(const char *path, struct aka_journal *out, struct aka_err *err)
{
    json_t *doc = NULL;
    int rc;
    memset(out, 0, sizeof(*out));
    if (aka_json_load_file(path, &doc, err) < 0)
        return -1;
    rc = aka_journal_from_json(path, doc, out, err);
    json_decref(doc);
    return rc;
}

void aka_journal_release(struct aka_journal *j)
{
    json_decref(j->json);
    memset(j, 0, sizeof(*j));
}

/* ---- operations --------------------------------------------------------------- */

static const char *time_or_now(const char *now, char buf[AKA_TIMESTAMP_MAX])
{
    if (now)
        return now;
    aka_record_now(buf);
    return buf;
}

/* Validate the new document under the file's name, then replace the file. */
static int commit_doc(const char *path, json_t *doc, struct aka_err *err)
{
    struct aka_journal check;
    if (aka_journal_from_json(path, doc, &check, err) < 0)
        return -1;
    aka_journal_release(&check);
    return aka_json_write_file(path, doc, err);
}

static int journal_create_impl(const char *path, const struct aka_episode_ids *ids, const char *now,
                               struct aka_err *err)
{
    char buf[AKA_TIMESTAMP_MAX];
    json_t *doc;
    int rc;

    if (aka_exists(path))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: a journal already exists; refusing to "
                           "replace it",
                           path);
    doc = json_object();
    json_object_set_new(doc, "schema_version", json_integer(AKA_JOURNAL_SCHEMA_VERSION));
    json_object_set_new(doc, "episode", json_integer(ids->episode));
    json_object_set_new(doc, "memory_version", json_integer(ids->memory_version));
    json_object_set_new(doc, "base_commit", json_string(ids->base_commit ? ids->base_commit : ""));
    json_object_set_new(doc, "episode_branch",
                        json_string(ids->episode_branch ? ids->episode_branch : ""));
    json_object_set_new(doc, "state", json_string("in_progress"));
    json_object_set_new(doc, "experiments", json_array());
    json_object_set_new(doc, "outcome", json_null());
    json_object_set_new(doc, "created_at", json_string(time_or_now(now, buf)));
    json_object_set_new(doc, "finalized_at", json_null());
    json_object_set_new(doc, "candidate_commit", json_null());
    rc = commit_doc(path, doc, err);
    json_decref(doc);
    return rc;
}

/* Load the journal as a private, modifiable copy. */
static int load_copy(const char *path, struct aka_journal *j, json_t **copy, struct aka_err *err)
{
    if (aka_journal_load(path, j, err) < 0)
        return -1;
    *copy = json_deep_copy(j->json);
    return 0;
}

static int journal_append_impl(const char *path, json_t *experiment, const char *now,
                               struct aka_err *err)
{
    struct aka_journal j;
    struct jctx c = {"experiment", err};
    char buf[AKA_TIMESTAMP_MAX];
    json_t *doc = NULL, *exp;
    int rc = -1;

    if (check_experiment(&c, experiment, "") < 0 || load_copy(path, &j, &doc, err) < 0)
        return -1;
    if (j.state != AKA_JOURNAL_IN_PROGRESS) {
        aka_err_set(err, AKA_EXIT_USAGE,
                    "%s: state: expected in_progress to append an experiment; got %s", path,
                    aka_journal_state_names[j.state]);
        goto done;
    }
    exp = json_deep_copy(experiment);
    if (!json_object_get(exp, "timestamp"))
        json_object_set_new(exp, "timestamp", json_string(time_or_now(now, buf)));
    json_array_append_new(json_object_get(doc, "experiments"), exp);
    rc = commit_doc(path, doc, err);
done:
    json_decref(doc);
    aka_journal_release(&j);
    return rc;
}

static int check_finalize_args(const char *path, const struct aka_journal *j,
                               enum aka_journal_state state, const char *commit,
                               struct aka_err *err)
{
    const char *st = aka_journal_state_names[state];
    if (state == AKA_JOURNAL_IN_PROGRESS)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: state: expected candidate_ready, pivot or blocked; got in_progress",
                           path);
    if (j->state != AKA_JOURNAL_IN_PROGRESS && j->state != state)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: state: the journal is already finalized as %s; got %s", path,
                           aka_journal_state_names[j->state], st);
    if (state == AKA_JOURNAL_CANDIDATE_READY && !aka_record_is_hex(commit, AKA_COMMIT_HEX_LEN))
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: candidate_commit: expected a 40-digit lower-case commit id for "
                           "candidate_ready; got %s%s%s",
                           path, commit ? "\"" : "", commit ? commit : "nothing",
                           commit ? "\"" : "");
    if (state != AKA_JOURNAL_CANDIDATE_READY && commit)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s: candidate_commit: expected none when state is %s; got \"%s\"", path,
                           st, commit);
    return 0;
}

static int journal_finalize_impl(const char *path, enum aka_journal_state state, json_t *outcome,
                                 const char *candidate_commit, const char *now, struct aka_err *err)
{
    struct aka_journal j;
    struct jctx c = {path, err};
    const char *summary = NULL;
    char buf[AKA_TIMESTAMP_MAX];
    json_t *doc = NULL, *oc;
    int rc = -1;

    if (check_outcome(&c, outcome, "outcome", &summary) < 0 || load_copy(path, &j, &doc, err) < 0)
        return -1;
    if (check_finalize_args(path, &j, state, candidate_commit, err) < 0)
        goto done;
    oc = json_deep_copy(outcome);
    if (!json_is_array(json_object_get(oc, "next_directions")))
        json_object_set_new(oc, "next_directions", json_array());
    json_object_set_new(doc, "state", json_string(aka_journal_state_names[state]));
    json_object_set_new(doc, "outcome", oc);
    json_object_set_new(doc, "candidate_commit",
                        candidate_commit ? json_string(candidate_commit) : json_null());
    json_object_set_new(doc, "finalized_at", json_string(time_or_now(now, buf)));
    rc = commit_doc(path, doc, err);
done:
    json_decref(doc);
    aka_journal_release(&j);
    return rc;
}

static int journal_check_wiki_refs_impl(const char *label, const struct aka_journal *j,
                                        aka_wiki_ref_exists_fn exists, void *data,
                                        struct aka_err *err)
{
    struct jctx c = {label, err};
    json_t *exps = json_object_get(j->json, "experiments"), *exp, *id;
    size_t i, k;
    json_array_foreach(exps, i, exp)
    {
        json_array_foreach(json_object_get(exp, "wiki_refs"), k, id)
        {
            if (exists(json_string_value(id), data))
                continue;
            char p[96];
            snprintf(p, sizeof(p), "experiments[%zu].wiki_refs[%zu]", i, k);
            return aka_record_expected(&c, p, "the id of an existing wiki record", id);
        }
    }
    return 0;
}

/* ---- public entry points: every error leaves here as one line ---- */

int aka_journal_from_json(const char *label, json_t *doc, struct aka_journal *out,
                          struct aka_err *err)
{
    return aka_record_one_line(journal_from_json_impl(label, doc, out, err), err);
}

int aka_journal_load(const char *path, struct aka_journal *out, struct aka_err *err)
{
    return aka_record_one_line(journal_load_impl(path, out, err), err);
}

int aka_journal_create(const char *path, const struct aka_episode_ids *ids, const char *now,
                       struct aka_err *err)
{
    return aka_record_one_line(journal_create_impl(path, ids, now, err), err);
}

int aka_journal_append(const char *path, json_t *experiment, const char *now, struct aka_err *err)
{
    return aka_record_one_line(journal_append_impl(path, experiment, now, err), err);
}

int aka_journal_finalize(const char *path, enum aka_journal_state state, json_t *outcome,
                         const char *candidate_commit, const char *now, struct aka_err *err)
{
    return aka_record_one_line(
        journal_finalize_impl(path, state, outcome, candidate_commit, now, err), err);
}

int aka_journal_check_wiki_refs(const char *label, const struct aka_journal *j,
                                aka_wiki_ref_exists_fn exists, void *data, struct aka_err *err)
{
    return aka_record_one_line(journal_check_wiki_refs_impl(label, j, exists, data, err), err);
}
