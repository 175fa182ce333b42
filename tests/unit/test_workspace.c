/*
 * test_workspace.c — the workspace module (src/workspace/): its paths, the six commit
 * subjects (format, parse, round trip, near misses refused), the one campaign.json
 * parser, the operator snapshot and asset pin (a changed file is named), canonical
 * records read from committed blobs only (no fallback past an unreadable one), and the
 * commit ledger (a commit it did not record is refused by id and subject; a HEAD that
 * is exactly the pending intent is adopted).
 */
#include "aka_test.h"

#include "base/json.h"
#include "bootstrap/bootstrap.h"
#include "git/git.h"
#include "workspace/workspace.h"

#include <math.h>
#include <string.h>

static void put(const char *dir, const char *rel, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, dir, rel);
    char *slash = strrchr(p.buf, '/');
    *slash = '\0';
    assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0);
    *slash = '/';
    assert_int_equal(aka_write_file_atomic(p.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&p);
}

/* A fresh directory under the scratch directory. */
static void fresh(struct strbuf *out, const char *name)
{
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(out, aka_scratch_dir(), name);
    assert_int_equal(aka_remove_tree(out->buf, &err), 0);
    assert_int_equal(aka_mkdir_p(out->buf, 0755, &err), 0);
}

static void expect_err(const struct aka_err *err, int code, const char *a, const char *b)
{
    if (err->code != code || !strstr(err->msg, a) || (b && !strstr(err->msg, b)))
        fail_msg("expected code %d with '%s' and '%s'; got %d: %s", code, a, b ? b : "", err->code,
                 err->msg);
    assert_null(strchr(err->msg, '\n'));
}

/* ---- paths -------------------------------------------------------------------------------- */

static void paths(void **state)
{
    struct strbuf p = STRBUF_INIT;
    (void)state;
    assert_string_equal(aka_ws_rel(AKA_WS_CAMPAIGN), ".aka/campaign.json");
    assert_string_equal(aka_ws_rel(AKA_WS_STATE), ".aka/state.json");
    assert_string_equal(aka_ws_rel(AKA_WS_ACTIVE_EPISODE), ".aka/active_episode.json");
    assert_string_equal(aka_ws_rel(AKA_WS_LIVE), "memory/live.json");
    assert_string_equal(aka_ws_rel(AKA_WS_OPERATOR), ".aka/operator");
    for (int f = 0; f < AKA_WS_FILE_COUNT; f++) { /* every file is somewhere, and once */
        assert_non_null(aka_ws_rel((enum aka_ws_file)f));
        for (int g = 0; g < f; g++)
            assert_string_not_equal(aka_ws_rel((enum aka_ws_file)f),
                                    aka_ws_rel((enum aka_ws_file)g));
    }
    aka_ws_path(&p, "/w/ws", AKA_WS_COMMITS);
    assert_string_equal(p.buf, "/w/ws/.aka/commits.json");
    aka_ws_memory_rel(&p, 12);
    assert_string_equal(p.buf, "memory/v12.json");
    aka_ws_memory_path(&p, "/w/ws", 0);
    assert_string_equal(p.buf, "/w/ws/memory/v0.json");
    aka_ws_episode_dir(&p, "/w/ws", 7);
    assert_string_equal(p.buf, "/w/ws/.aka/episodes/e0007");
    aka_ws_worktree_path(&p, "/w/kernel_opt_x", "e0001-abcd0123");
    assert_string_equal(p.buf, "/w/.aka-worktrees/kernel_opt_x/e0001-abcd0123");
    aka_ws_candidate_ref(&p, "e0007");
    assert_string_equal(p.buf, "refs/aka/candidates/e0007");
    aka_wt_path(&p, "/t/wt", AKA_WT_EVALUATIONS);
    assert_string_equal(p.buf, "/t/wt/.aka/evaluations.jsonl");
    assert_string_equal(aka_wt_name(AKA_WT_JOURNAL), "journal.json");
    assert_non_null(strstr(aka_ws_gitignore(), ".aka/\nmemory/live.json\n"));
    strbuf_release(&p);
}

/* ---- subjects ----------------------------------------------------------------------------- */

static void subject_round_trips(void **state)
{
    const struct {
        struct aka_commit_subject s;
        const char *text;
    } rows[] = {
        {{.kind = AKA_COMMIT_V0_SOURCE}, "V0: baseline kernel"},
        {{.kind = AKA_COMMIT_V0_MEASUREMENT}, "V0: record baseline measurement"},
        {{.kind = AKA_COMMIT_V1_KERNEL, .framework = "Triton"},
         "v1: framework baseline (Triton) replacing the V0 baseline kernel"},
        {{.kind = AKA_COMMIT_V1_PIN, .kernel_commit = "0123abcd"},
         "v1: pin framework baseline 0123abcd"},
        {{.kind = AKA_COMMIT_PROMOTION, .episode = 12}, "episode 12: promote verified candidate"},
        {{.kind = AKA_COMMIT_OUTCOME, .version = 9, .episode = 8, .status = AKA_MEM_REJECTED},
         "v9: episode 8 rejected"},
        {{.kind = AKA_COMMIT_OUTCOME, .version = 3, .episode = 2, .status = AKA_MEM_INTERRUPTED},
         "v3: episode 2 interrupted"},
    };
    struct strbuf out = STRBUF_INIT;
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct aka_commit_subject back;
        aka_ws_subject_format(&rows[i].s, &out);
        assert_string_equal(out.buf, rows[i].text);
        assert_true(aka_ws_subject_parse(rows[i].text, &back));
        assert_int_equal(back.kind, rows[i].s.kind);
        aka_ws_subject_format(&back, &out);
        assert_string_equal(out.buf, rows[i].text);
    }
    strbuf_release(&out);
}

static void subject_near_misses(void **state)
{
    static const char *const bad[] = {
        "V0: baseline kernel ",
        "v0: baseline kernel",
        "v1: framework baseline () replacing the V0 baseline kernel",
        "v1: framework baseline (C) replacing the V0 kernel",
        "v1: pin framework baseline 0123ABCD",
        "v1: pin framework baseline 0123abc",
        "episode 012: promote verified candidate",
        "episode -1: promote verified candidate",
        "episode 3: promote verified candidate!",
        "v4: episode 3 promoted", /* a promotion has its own subject */
        "v4: episode 3 baseline",
        "v4: episode 3 rejected\n",
        "v4:episode 3 rejected",
        "candidate",
        "",
    };
    struct aka_commit_subject s;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (aka_ws_subject_parse(bad[i], &s))
            fail_msg("parsed a subject aka never writes: \"%s\"", bad[i]);
}

/* ---- campaign.json ------------------------------------------------------------------------ */

static void campaign_parser(void **state)
{
    struct strbuf ws = STRBUF_INIT;
    struct aka_ws_campaign c;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    fresh(&ws, "campaign");
    put(ws.buf, ".aka/campaign.json",
        "{\"framework\": \"C\", \"platform\": \"cpu\", \"kernel\": \"kernel.c\", \"op_dir\": "
        "\"op\"}");
    assert_int_equal(aka_ws_campaign_load(ws.buf, AKA_CF_KERNEL | AKA_CF_OP_DIR, &c, &err), 0);
    assert_string_equal(c.kernel, "kernel.c");
    assert_null(c.assets);
    assert_false(c.operator_snapshot);
    aka_ws_campaign_release(&c);
    assert_int_equal(aka_ws_campaign_load(ws.buf, AKA_CF_ALL, &c, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, ".aka/campaign.json: schema:", "required field is missing");
    aka_ws_campaign_release(&c);
    put(ws.buf, ".aka/campaign.json", "{\"schema\": \"aka.campaign.v9\"}");
    assert_int_equal(aka_ws_campaign_load(ws.buf, 0, &c, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "schema:", "expected \"aka.campaign.v1\"");
    aka_ws_campaign_release(&c);
    put(ws.buf, ".aka/campaign.json", "{\"kernel\": \"../kernel.c\"}");
    assert_int_equal(aka_ws_campaign_load(ws.buf, 0, &c, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "kernel:", "relative to the worktree");
    aka_ws_campaign_release(&c);
    put(ws.buf, ".aka/campaign.json", "{\"operator_snapshot\": \"/tmp/elsewhere\"}");
    assert_int_equal(aka_ws_campaign_load(ws.buf, 0, &c, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "operator_snapshot:", "expected \".aka/operator\"");
    aka_ws_campaign_release(&c);
    put(ws.buf, ".aka/campaign.json", "{\"assets\": {\"runtime/x\": \"abc\"}}");
    assert_int_equal(aka_ws_campaign_load(ws.buf, 0, &c, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "assets:", "runtime/x: expected a sha256");
    aka_ws_campaign_release(&c);
    put(ws.buf, ".aka/campaign.json", "[1]");
    assert_int_equal(aka_ws_campaign_load(ws.buf, 0, &c, &err), -1);
    aka_ws_campaign_release(&c);
    strbuf_release(&ws);
}

/* ---- pinned evidence ---------------------------------------------------------------------- */

static void operator_snapshot(void **state)
{
    struct strbuf ws = STRBUF_INIT, op = STRBUF_INIT, dir = STRBUF_INIT, what = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    fresh(&ws, "snap-ws");
    fresh(&op, "snap-op");
    put(op.buf, "operator.json", "{\"tolerance\": 1e-5}\n");
    put(op.buf, "reference.c", "int ref;\n");
    put(op.buf, "seeds/C/kernel.c", "int k;\n");
    put(op.buf, "__pycache__/x.pyc", "cache"); /* not evidence: skipped */
    assert_int_equal(aka_ws_operator_snapshot(ws.buf, op.buf, &dir, &err), 0);
    assert_non_null(strstr(dir.buf, "/.aka/operator"));
    assert_true(aka_ws_operator_unchanged(ws.buf, op.buf, &what));
    /* an edited original is reported by name, and the snapshot is still good */
    put(op.buf, "operator.json", "{\"tolerance\": 1e9}\n");
    assert_false(aka_ws_operator_unchanged(ws.buf, op.buf, &what));
    assert_non_null(strstr(what.buf, "operator.json differs from the V0 snapshot"));
    put(ws.buf, ".aka/campaign.json", "{}"); /* the campaign exists: no new snapshot */
    assert_int_equal(aka_ws_operator_snapshot(ws.buf, op.buf, &dir, &err), 0);
    put(op.buf, "extra.py", "x");
    assert_false(aka_ws_operator_unchanged(ws.buf, op.buf, &what));
    /* an edited snapshot is refused by name */
    put(dir.buf, "reference.c", "int ref2;\n");
    assert_int_equal(aka_ws_operator_verify(ws.buf, &dir, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "/.aka/operator/reference.c: differs", "refusing");
    put(dir.buf, "reference.c", "int ref;\n");
    assert_int_equal(aka_ws_operator_verify(ws.buf, &dir, &err), 0);
    put(dir.buf, "planted.c", "x");
    assert_int_equal(aka_ws_operator_verify(ws.buf, &dir, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "planted.c: was added", NULL);
    strbuf_release(&ws);
    strbuf_release(&op);
    strbuf_release(&dir);
    strbuf_release(&what);
}

static void asset_pin(void **state)
{
    struct strbuf root = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    fresh(&root, "assets");
    put(root.buf, "runtime/harness/native/harness.c", "int main(void) { return 0; }\n");
    put(root.buf, "runtime/prompts/fast.md", "brief\n");
    json_t *pin = aka_ws_assets_manifest(root.buf, &err);
    assert_non_null(pin);
    assert_int_equal(json_object_size(pin), 2);
    assert_int_equal(aka_ws_assets_verify(pin, root.buf, "campaign.json", &err), 0);
    put(root.buf, "runtime/harness/native/harness.c", "int main(void) { return 1; }\n");
    assert_int_equal(aka_ws_assets_verify(pin, root.buf, "campaign.json", &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "runtime/harness/native/harness.c: differs",
               "campaign.json: assets");
    json_decref(pin);
    strbuf_release(&root);
}

/* The agent's view: the workspace's pin checks pass on it, op_dir is the view's snapshot
 * for a confined agent and the original for an unconfined one, and harvest takes back
 * only what the session appended to the ledger. */
static void view_copies_pinned_inputs(void **state)
{
    struct strbuf ws = STRBUF_INIT, op = STRBUF_INIT, dir = STRBUF_INIT, view = STRBUF_INIT;
    struct strbuf p = STRBUF_INIT, ep = STRBUF_INIT;
    struct strvec w = STRVEC_INIT;
    struct aka_ws_campaign c;
    struct aka_err err = AKA_ERR_INIT;
    (void)state;
    fresh(&ws, "view-ws");
    fresh(&op, "view-op");
    fresh(&ep, "view-ep");
    aka_path_join(&view, aka_scratch_dir(), "view-ws.view");
    put(op.buf, "operator.json", "{\"tolerance\": 1e-5}\n");
    assert_int_equal(aka_ws_operator_snapshot(ws.buf, op.buf, &dir, &err), 0);
    strbuf_reset(&p);
    strbuf_addf(&p,
                "{\"schema\": \"aka.campaign.v1\", \"op_dir\": \"%s\", "
                "\"operator_snapshot\": \".aka/operator\"}",
                op.buf);
    put(ws.buf, ".aka/campaign.json", p.buf);
    put(ws.buf, "memory/v0.json", "{}");
    put(ws.buf, ".aka/reviewer_tokens.jsonl", "{\"a\": 1}\n");
    put(ws.buf, ".aka/state.json", "{}"); /* supervisor state: never in the view */
    assert_int_equal(aka_ws_view_create(ws.buf, view.buf, false, &err), 0);
    assert_int_equal(aka_ws_eval_inputs(view.buf, aka_scratch_dir(), &dir, &err), 0);
    aka_ws_path(&p, view.buf, AKA_WS_OPERATOR);
    assert_string_equal(dir.buf, p.buf);
    assert_int_equal(aka_ws_campaign_load(view.buf, 0, &c, &err), 0);
    assert_string_equal(c.op_dir, p.buf);
    aka_ws_campaign_release(&c);
    aka_ws_path(&p, view.buf, AKA_WS_STATE);
    assert_false(aka_exists(p.buf));
    aka_ws_path(&p, view.buf, AKA_WS_MEMORY);
    assert_true(aka_is_dir(p.buf));
    aka_ws_view_writable(view.buf, &w);
    assert_int_equal(w.n, 2);
    /* the session appends one line and one non-object: only the object comes back */
    put(view.buf, ".aka/reviewer_tokens.jsonl", "{\"a\": 1}\n{\"b\": 2}\n[3]\n");
    aka_ws_view_harvest(ws.buf, view.buf, ep.buf);
    aka_ws_path(&p, ws.buf, AKA_WS_REVIEWER_TOKENS);
    struct strbuf text = STRBUF_INIT;
    assert_int_equal(aka_read_file(p.buf, &text, 4096, &err), 0);
    assert_non_null(strstr(text.buf, "\"b\""));
    assert_null(strstr(text.buf, "[3]"));
    /* unconfined: the original stays named, so a changed original is reported */
    assert_int_equal(aka_ws_view_create(ws.buf, view.buf, true, &err), 0);
    assert_int_equal(aka_ws_campaign_load(view.buf, 0, &c, &err), 0);
    assert_string_equal(c.op_dir, op.buf);
    aka_ws_campaign_release(&c);
    /* an edited snapshot in the view is refused as in the workspace */
    aka_ws_path(&p, view.buf, AKA_WS_OPERATOR);
    put(p.buf, "operator.json", "{\"tolerance\": 1e9}\n");
    assert_int_equal(aka_ws_eval_inputs(view.buf, aka_scratch_dir(), &dir, &err), -1);
    expect_err(&err, AKA_EXIT_USAGE, "operator.json: differs", NULL);
    strvec_clear(&w);
    strbuf_release(&text);
    strbuf_release(&ws);
    strbuf_release(&op);
    strbuf_release(&dir);
    strbuf_release(&view);
    strbuf_release(&p);
    strbuf_release(&ep);
}

/* ---- committed records and the ledger ----------------------------------------------------- */

static json_t *record_doc(long v, enum aka_memory_status st, double us)
{
    struct aka_result r = {.all_pass = st != AKA_MEM_REJECTED,
                           .latency_us_geomean = us,
                           .latency_us_arith_mean = us,
                           .speedup_vs_ref_geomean = 1.0,
                           .performance_score = 1.0,
                           .max_abs_err = NAN,
                           .max_rel_err = NAN};
    aka_shape_map_set(&r.latency_us_by_shape, "s", us);
    json_t *doc = aka_memory_doc_from_result(
        v, st, &r, st == AKA_MEM_REJECTED ? NULL : "0123456789abcdef0123456789abcdef01234567",
        "test", "t");
    aka_shape_map_release(&r.latency_us_by_shape);
    return doc;
}

/* Write, stage and commit memory/v<N>.json through the ledger (subject s). */
static void commit_record(const char *ws, json_t *doc, const struct aka_commit_subject *s,
                          char *oid)
{
    struct aka_git g;
    struct aka_err err = AKA_ERR_INIT;
    aka_git_open(&g, ws);
    assert_int_equal(aka_ws_memory_write(ws, doc, &err), 0);
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_ws_commit(ws, s, oid, &err), 0);
    aka_git_close(&g);
    json_decref(doc);
}

static void new_repo(struct strbuf *ws, const char *name)
{
    struct aka_err err = AKA_ERR_INIT;
    fresh(ws, name);
    assert_int_equal(aka_git_init(ws->buf, "main", &err), 0);
    put(ws->buf, ".gitignore", aka_ws_gitignore());
}

static void records_from_blobs(void **state)
{
    struct strbuf ws = STRBUF_INIT, p = STRBUF_INIT;
    struct aka_memory_record m;
    struct aka_err err = AKA_ERR_INIT;
    char oid[AKA_GIT_OID_HEX + 1];
    long latest = -2;
    (void)state;
    new_repo(&ws, "records");
    assert_int_equal(aka_ws_incumbent(ws.buf, &m, &latest, &err), 1); /* nothing yet */
    assert_int_equal(latest, -1);
    commit_record(ws.buf, record_doc(0, AKA_MEM_BASELINE, 20.0),
                  &(struct aka_commit_subject){.kind = AKA_COMMIT_V0_MEASUREMENT}, oid);
    commit_record(
        ws.buf, record_doc(1, AKA_MEM_REJECTED, 5.0),
        &(struct aka_commit_subject){
            .kind = AKA_COMMIT_OUTCOME, .version = 1, .episode = 1, .status = AKA_MEM_REJECTED},
        oid);
    /* the working copy says V0 took 2000 us: the committed 20 us decides */
    aka_ws_memory_path(&p, ws.buf, 0);
    json_t *forged = record_doc(0, AKA_MEM_BASELINE, 2000.0);
    assert_int_equal(aka_json_write_file(p.buf, forged, &err), 0);
    json_decref(forged);
    assert_int_equal(aka_ws_incumbent(ws.buf, &m, &latest, &err), 0);
    assert_int_equal(m.version, 0);
    assert_int_equal(latest, 1);
    assert_true(fabs(m.latency_us_geomean - 20.0) < 1e-9);
    aka_memory_release(&m);
    assert_false(aka_ws_memory_unchanged(ws.buf, &p));
    assert_non_null(strstr(p.buf, "memory/v0.json differs from its committed copy"));
    /* a committed record that does not parse fails closed, naming it: no fallback to v0 */
    struct aka_git g;
    aka_git_open(&g, ws.buf);
    put(ws.buf, "memory/v1.json", "{\"version\": \"v1\"");
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_ws_commit(ws.buf,
                                   &(struct aka_commit_subject){.kind = AKA_COMMIT_OUTCOME,
                                                                .version = 1,
                                                                .episode = 1,
                                                                .status = AKA_MEM_BLOCKED},
                                   oid, &err),
                     0);
    aka_git_close(&g);
    assert_int_equal(aka_ws_incumbent(ws.buf, &m, &latest, &err), -1);
    expect_err(&err, AKA_EXIT_FAILED, "HEAD:memory/v1.json", NULL);
    strbuf_release(&ws);
    strbuf_release(&p);
}

/* v10 after v9 (ls-tree lists names, "v10" before "v2"), and a rejected latest record is
 * read on the way to the incumbent. */
static void versions_in_numeric_order(void **state)
{
    struct strbuf ws = STRBUF_INIT;
    struct aka_memory_record m;
    struct aka_err err = AKA_ERR_INIT;
    char oid[AKA_GIT_OID_HEX + 1];
    long latest = -1;
    (void)state;
    new_repo(&ws, "numeric");
    commit_record(ws.buf, record_doc(0, AKA_MEM_BASELINE, 20.0),
                  &(struct aka_commit_subject){.kind = AKA_COMMIT_V0_MEASUREMENT}, oid);
    for (long v = 1; v <= 11; v++) {
        const struct aka_commit_subject s = {
            .kind = AKA_COMMIT_OUTCOME, .version = v, .episode = v, .status = AKA_MEM_REJECTED};
        commit_record(ws.buf, record_doc(v, v == 2 ? AKA_MEM_PROMOTED : AKA_MEM_REJECTED, 10.0 + v),
                      &s, oid);
    }
    assert_int_equal(aka_ws_latest_version(ws.buf, &latest, &err), 0);
    assert_int_equal(latest, 11);
    assert_int_equal(aka_ws_incumbent(ws.buf, &m, &latest, &err), 0);
    assert_int_equal(m.version, 2);
    aka_memory_release(&m);
    assert_int_equal(aka_ws_memory_at_head(ws.buf, 10, &m, &err), 0);
    assert_int_equal(m.version, 10);
    aka_memory_release(&m);
    assert_int_equal(aka_ws_memory_at_head(ws.buf, 12, &m, &err), -1);
    expect_err(&err, AKA_EXIT_FAILED, "HEAD:memory/v12.json: cannot be read", NULL);
    strbuf_release(&ws);
}

static void ledger_refuses_foreign_commits(void **state)
{
    struct strbuf ws = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_git g;
    struct aka_commit_intent in;
    char oid[AKA_GIT_OID_HEX + 1], head[AKA_GIT_OID_HEX + 1];
    bool yes = false;
    (void)state;
    new_repo(&ws, "ledger");
    aka_git_open(&g, ws.buf);
    put(ws.buf, "kernel.c", "int k;\n");
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_ws_commit(ws.buf,
                                   &(struct aka_commit_subject){.kind = AKA_COMMIT_V0_SOURCE}, oid,
                                   &err),
                     0);
    assert_int_equal(aka_ws_history_check(ws.buf, &err), 0);
    /* a pending intent whose commit was made but not recorded: adopted */
    put(ws.buf, "kernel.c", "int k2;\n");
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    const struct aka_commit_subject promo = {.kind = AKA_COMMIT_PROMOTION, .episode = 1};
    assert_int_equal(aka_ws_commit_prepare(ws.buf, &promo, &in, &err), 0);
    assert_string_equal(in.parent, oid);
    assert_int_equal(aka_git_commit_tree(&g, in.tree, in.parent, in.subject, head, &err), 0);
    assert_int_equal(aka_git_update_ref(&g, "HEAD", head, in.parent, &err), 0);
    assert_int_equal(aka_ws_commit_matches(ws.buf, "HEAD", &in, &yes, &err), 0);
    assert_true(yes);
    assert_int_equal(aka_ws_history_check(ws.buf, &err), 0);
    /* a commit with the supervisor's name and a valid subject, but not recorded: refused */
    put(ws.buf, "kernel.c", "int forged;\n");
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_git_commit(&g, "episode 2: promote verified candidate", head, &err), 0);
    assert_int_equal(aka_ws_commit_matches(ws.buf, "HEAD", &in, &yes, &err), 0);
    assert_false(yes);
    assert_int_equal(aka_ws_history_check(ws.buf, &err), -1);
    expect_err(&err, AKA_EXIT_FAILED, head, "\"episode 2: promote verified candidate\"");
    /* and the next supervisor commit on top of it is refused too */
    put(ws.buf, "kernel.c", "int k3;\n");
    assert_int_equal(aka_git_add(&g, NULL, &err), 0);
    assert_int_equal(aka_ws_commit_prepare(ws.buf, &promo, &in, &err), -1);
    expect_err(&err, AKA_EXIT_FAILED, head, "not made by this supervisor");
    aka_git_close(&g);
    strbuf_release(&ws);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths),
        cmocka_unit_test(subject_round_trips),
        cmocka_unit_test(subject_near_misses),
        cmocka_unit_test(campaign_parser),
        cmocka_unit_test(operator_snapshot),
        cmocka_unit_test(asset_pin),
        cmocka_unit_test(view_copies_pinned_inputs),
        cmocka_unit_test(records_from_blobs),
        cmocka_unit_test(versions_in_numeric_order),
        cmocka_unit_test(ledger_refuses_foreign_commits),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
