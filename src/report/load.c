/*
 * load.c — finding a workspace and loading its summary: campaign.json (through
 * workspace/'s one parser), state.json, live.json, then the versions (versions.c).
 *
 * Read-only by construction: only aka_json_load_file and directory listings,
 * no lock, no git. A supervisor may be writing these files while we read;
 * every one of them is replaced atomically (temp + rename), so a read sees the
 * old document or the new one, never half of each.
 */
#include "base/fs.h"
#include "base/json.h"
#include "optimize/optimize.h"
#include "report/internal.h"
#include "workspace/workspace.h"

#include <stdlib.h>
#include <string.h>

/* ---- the workspace ------------------------------------------------------- */

static bool holds(const char *dir, const char *rel, bool want_dir)
{
    struct strbuf p = STRBUF_INIT;
    aka_path_join(&p, dir, rel);
    bool yes = want_dir ? aka_is_dir(p.buf) : aka_is_file(p.buf);
    strbuf_release(&p);
    return yes;
}

int aka_report_find_workspace(const char *arg, bool need_campaign, struct strbuf *out,
                              struct aka_err *err)
{
    const char *env = getenv("ATREX_AKA_WORKSPACE");
    const char *dir = arg, *from = "the workspace argument";
    if (!dir && env && *env) {
        dir = env;
        from = "$ATREX_AKA_WORKSPACE";
    }
    strbuf_reset(out);
    const char *campaign = aka_ws_rel(AKA_WS_CAMPAIGN), *memory = aka_ws_rel(AKA_WS_MEMORY);
    if (!dir) {
        if (!holds(".", campaign, false) && (need_campaign || !holds(".", memory, true)))
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "no workspace: pass WORKSPACE, set ATREX_AKA_WORKSPACE, or run in a "
                               "campaign workspace (the current directory holds no %s%s%s%s)",
                               campaign, need_campaign ? "" : " and no ",
                               need_campaign ? "" : memory, need_campaign ? "" : "/");
        dir = ".";
    } else if (!aka_is_dir(dir)) {
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not a directory (%s)", dir, from);
    } else if (need_campaign && !holds(dir, campaign, false)) {
        return aka_err_set(err, AKA_EXIT_USAGE, "%s: not an aka campaign workspace: no %s (%s)",
                           dir, campaign, from);
    }
    /* Absolute, so that every message names files a reader can open from anywhere. */
    return aka_realpath(dir, out, err);
}

/* ---- campaign.json ------------------------------------------------------- */

static int load_campaign(const char *ws, struct aka_report *r, struct aka_err *err)
{
    struct aka_ws_campaign c;
    struct aka_report_campaign *k = &r->campaign;
    int rc = aka_ws_campaign_load(ws, AKA_CF_ALL, &c, err);
    if (rc == 0) {
        r->campaign_doc = json_incref(c.doc); /* the strings below point into it */
        *k = (struct aka_report_campaign){
            .schema = c.schema,
            .mode = c.mode,
            .framework = c.framework,
            .platform = c.platform,
            .agent = c.agent,
            .op_name = c.op_name,
            .op_dir = c.op_dir,
            .layout = c.layout,
            .kernel = c.kernel,
            .isolation = c.sandbox_isolation,
            .created_at = c.created_at,
        };
    }
    r->has_campaign = rc == 0;
    aka_ws_campaign_release(&c);
    return rc;
}

/* ---- state.json ---------------------------------------------------------- */

static int get_count(const struct jctx *c, json_t *d, const char *key, long long *out)
{
    long long v = -1;
    if (jget_int(c, d, "", key, false, &v) < 0)
        return -1;
    if (json_object_get(d, key) && !json_is_null(json_object_get(d, key)) && v < 0)
        return jfail(c, key, "expected an integer >= 0; got %lld", v);
    *out = v;
    return 0;
}

static int load_submission(const struct jctx *c, json_t *state, struct aka_report_submission *out)
{
    const char *const *checks = aka_submission_check_names;
    json_t *o = json_object_get(state, "submission");
    int which = 0;
    if (!o)
        return 0;
    int rc = jexpect_obj(c, o, "submission");
    if (rc == 0)
        rc = jget_str(c, o, "submission", "path", true, &out->path);
    if (rc == 0)
        rc = jget_enum(c, o, "submission", "check", true, checks, &which);
    out->check = checks[which];
    if (rc == 0)
        rc = jget_str(c, o, "submission", "checked_by", false, &out->checked_by);
    if (rc == 0)
        rc = jget_str(c, o, "submission", "note", false, &out->note);
    if (rc == 0)
        rc = jget_str(c, o, "submission", "detail", false, &out->detail);
    out->present = rc == 0;
    return rc;
}

static int load_state(const char *ws, struct aka_report *r, struct aka_err *err)
{
    static const char *const keys[] = {"episodes", "accepted",          "rejected",
                                       "pivoted",  "blocked",           "interrupted",
                                       "tokens",   "protocol_failures", NULL};
    struct aka_report_state *s = &r->state;
    long long *slots[] = {&s->episodes, &s->accepted,    &s->rejected, &s->pivoted,
                          &s->blocked,  &s->interrupted, &s->tokens,   &s->protocol_failures};
    struct strbuf path = STRBUF_INIT;
    aka_ws_path(&path, ws, AKA_WS_STATE);
    struct jctx c = {path.buf, err};
    int rc = 0;
    if (aka_exists(path.buf)) {
        rc = aka_json_load_file(path.buf, &r->state_doc, err);
        json_t *d = r->state_doc;
        if (rc == 0)
            rc = jexpect_obj(&c, d, "");
        for (size_t i = 0; keys[i] && rc == 0; i++)
            rc = get_count(&c, d, keys[i], slots[i]);
        if (rc == 0)
            rc = get_count(&c, d, "consecutive_without_promotion", &s->stall);
        if (rc == 0)
            rc = jget_str(&c, d, "", "stop_reason", false, &s->stop_reason);
        if (rc == 0)
            rc = load_submission(&c, d, &s->submission);
        s->present = rc == 0;
    }
    strbuf_release(&path);
    return rc;
}

/* ---- live.json ----------------------------------------------------------- */

static int load_live(const char *ws, struct aka_report *r, struct aka_err *err)
{
    struct aka_report_live *l = &r->live;
    struct strbuf path = STRBUF_INIT;
    bool canonical = false;
    aka_ws_path(&path, ws, AKA_WS_LIVE);
    struct jctx c = {path.buf, err};
    int rc = 0;
    if (aka_exists(path.buf)) {
        rc = aka_json_load_file(path.buf, &r->live_doc, err);
        json_t *d = r->live_doc;
        if (rc == 0 &&
            (jexpect_obj(&c, d, "") < 0 || jget_str(&c, d, "", "phase", false, &l->phase) < 0 ||
             jget_str(&c, d, "", "updated_at", false, &l->updated_at) < 0 ||
             jget_int(&c, d, "", "latest_version", false, &l->latest_version) < 0 ||
             jget_bool(&c, d, "", "canonical", false, &canonical) < 0))
            rc = -1;
        /* A progress view claiming to be canonical contradicts DESIGN §4.4. */
        if (rc == 0 && canonical)
            rc = jfail(&c, "canonical", "expected false (live.json is never canonical); got true");
        l->present = rc == 0;
    }
    strbuf_release(&path);
    return rc;
}

/* ---- the report ---------------------------------------------------------- */

void aka_report_init(struct aka_report *r, const char *ws)
{
    memset(r, 0, sizeof(*r));
    r->workspace = aka_xstrdup(ws);
    r->incumbent = -1;
    r->live.latest_version = -1;
    struct aka_report_state *s = &r->state;
    s->episodes = s->accepted = s->rejected = s->pivoted = s->blocked = -1;
    s->protocol_failures = s->interrupted = s->tokens = s->stall = -1;
}

void aka_report_release(struct aka_report *r)
{
    for (size_t i = 0; i < r->versions.n; i++) {
        aka_memory_release(&r->versions.v[i].rec);
        free(r->versions.v[i].file);
    }
    VEC_FREE(r->versions);
    aka_report_release_episodes(r);
    aka_memory_release(&r->failed_v0);
    free(r->failed_v0_file);
    free(r->workspace);
    json_decref(r->campaign_doc);
    json_decref(r->state_doc);
    json_decref(r->live_doc);
    memset(r, 0, sizeof(*r));
    r->incumbent = -1;
}

/* Why the campaign stopped: the engine's own record first, then the live phase
 * the engine writes when it stops ("stop: <reason>"). */
static void derive_stop(struct aka_report *r)
{
    const char *phase = r->live.phase;
    if (r->state.stop_reason && *r->state.stop_reason)
        r->stop_reason = r->state.stop_reason;
    else if (phase && strncmp(phase, "stop: ", 6) == 0)
        r->stop_reason = phase + 6;
}

int aka_report_load(const char *ws, struct aka_report *out, struct aka_err *err)
{
    aka_report_init(out, ws);
    if (load_campaign(ws, out, err) < 0 || load_state(ws, out, err) < 0 ||
        load_live(ws, out, err) < 0 || aka_report_load_versions(ws, out, err) < 0) {
        aka_report_release(out);
        return aka_record_one_line(-1, err);
    }
    derive_stop(out);
    return 0;
}

int aka_report_load_memory(const char *ws, struct aka_report *out, struct aka_err *err)
{
    aka_report_init(out, ws);
    if (aka_report_load_versions(ws, out, err) < 0) {
        aka_report_release(out);
        return aka_record_one_line(-1, err);
    }
    return 0;
}
