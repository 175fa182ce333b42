/*
 * campaign.c — .aka/campaign.json: what a campaign is, pinned at its first start, and
 * the one function that parses it.
 *
 * The file is the campaign's identity (mode, framework, platform, agent, operator,
 * kernel file), its pinned contracts (source-policy and distributed decisions, runtime
 * pins), the content hash of every asset-tree file aka ships from runtime/ (harness,
 * prompts, skills, guard, ...) and the marker that the campaign evaluates its operator
 * snapshot. On resume every pinned field must equal what the current command line and
 * environment say, and the asset tree must still hash as pinned: a campaign never
 * silently changes what it optimizes, for which evaluator runtime, or with which
 * harness. Readers (`aka eval` in an episode, `aka status`, finalization, the tuner)
 * all go through aka_ws_campaign_load, each naming the fields it requires; before an
 * evaluation job, aka_ws_eval_inputs checks the pins (through snapshot.c's hashes).
 */
#include "base/fs.h"
#include "base/json.h"
#include "base/sha256.h"
#include "contracts/operator.h"
#include "workspace/workspace.h"

#include <stdlib.h>
#include <string.h>

/* Fields compared on resume, in the order a mismatch is reported. */
static const char *const pinned_fields[] = {"schema",
                                            "mode",
                                            "framework",
                                            "platform",
                                            "agent",
                                            "op_dir",
                                            "op_name",
                                            "layout",
                                            "kernel",
                                            "sandbox_isolation",
                                            "agent_sandbox",
                                            "policy_reviewer",
                                            "contracts",
                                            "runtime_pins",
                                            "operator_snapshot",
                                            "generalized",
                                            "agent_problem_sha256",
                                            NULL};

/* Written only when they apply: absent on both sides is equal (campaigns made before them). */
static bool optional_field(const char *name)
{
    return strcmp(name, "policy_reviewer") == 0 || strcmp(name, "generalized") == 0 ||
           strcmp(name, "agent_problem_sha256") == 0;
}

json_t *aka_campaign_to_json(const struct aka_campaign *c, struct aka_err *err)
{
    char now[AKA_TIMESTAMP_MAX];
    json_t *assets = aka_ws_assets_manifest(c->repo_root, err);
    if (!assets)
        return NULL;
    aka_record_now(now);
    json_t *doc = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:o}, s:o, s:s, "
        "s:s, s:o}",
        "schema", AKA_CAMPAIGN_SCHEMA, "mode", c->mode, "framework", c->framework, "platform",
        c->platform, "agent", c->agent, "op_dir", c->op_dir, "op_name", c->op_name, "layout",
        c->layout, "kernel", c->kernel, "sandbox_isolation", c->sandbox_isolation, "agent_sandbox",
        c->agent_sandbox ? c->agent_sandbox : "bwrap", "contracts", "benchmark",
        aka_benchmark_contract_to_json(c->contract), "runtime_pins",
        aka_runtime_pins_to_json(c->pins), "created_at", now, "operator_snapshot",
        aka_ws_rel(AKA_WS_OPERATOR), "assets", assets);
    /* Only when given: a campaign without --arch keeps the document it always had. */
    if (doc && c->cuda_arch && *c->cuda_arch)
        json_object_set_new(doc, "cuda_arch", json_string(c->cuda_arch));
    /* Checked on resume by the caller (optimize/), which can open the wiki and name the
     * plugin that changed; here it is only written. */
    if (doc && c->plugins)
        json_object_set_new(doc, "plugins", json_deep_copy(c->plugins));
    /* Production only: who reviews a candidate's source (episode_policy.c). */
    if (doc && c->policy_reviewer)
        json_object_set_new(doc, "policy_reviewer", json_string(c->policy_reviewer));
    if (doc && c->generalized) {
        json_object_set_new(doc, "generalized", json_true());
        json_object_set_new(doc, "agent_problem_sha256", json_string(c->agent_problem_sha256));
    }
    return doc;
}

static void render(const json_t *v, struct strbuf *out)
{
    strbuf_reset(out);
    if (!v)
        strbuf_addstr(out, "nothing");
    else if (json_is_string(v))
        strbuf_addstr(out, json_string_value(v));
    else
        aka_json_dump_compact(v, out);
}

static int compare(const char *path, json_t *pinned, json_t *now, struct aka_err *err)
{
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; pinned_fields[i] && rc == 0; i++) {
        json_t *x = json_object_get(pinned, pinned_fields[i]);
        json_t *y = json_object_get(now, pinned_fields[i]);
        if (x && json_equal(x, y))
            continue;
        if (!x && !y && optional_field(pinned_fields[i]))
            continue;
        render(x, &a);
        render(y, &b);
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: %s: the campaign pinned %s; this run has %s (a campaign's identity "
                         "and contracts never change: start a new workspace instead)",
                         path, pinned_fields[i], a.buf, b.buf);
    }
    strbuf_release(&a);
    strbuf_release(&b);
    return rc;
}

/* Resume: the pinned identity, then the asset tree against its pin. */
static int check(const char *ws, const struct aka_campaign *c, json_t *now, struct aka_err *err)
{
    struct aka_ws_campaign pinned;
    int rc = aka_ws_campaign_load(ws, 0, &pinned, err);
    if (rc == 0)
        rc = compare(pinned.path, pinned.doc, now, err);
    if (rc == 0 && !pinned.assets)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: assets: the campaign pinned no asset tree; this run has one (start "
                         "a new workspace instead)",
                         pinned.path);
    if (rc == 0)
        rc = aka_ws_assets_verify(pinned.assets, c->repo_root, pinned.path, err);
    aka_ws_campaign_release(&pinned);
    return rc;
}

int aka_campaign_pin_or_check(const char *ws, const struct aka_campaign *c, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *now = aka_campaign_to_json(c, err);
    int rc = now ? 0 : -1;
    aka_ws_path(&path, ws, AKA_WS_CAMPAIGN);
    if (rc == 0 && !aka_exists(path.buf))
        rc = aka_json_write_file(path.buf, now, err);
    else if (rc == 0)
        rc = check(ws, c, now, err);
    json_decref(now);
    strbuf_release(&path);
    return rc;
}

/* ---- the one parser ------------------------------------------------------------------------ */

struct field {
    const char *key;
    unsigned bit;
    size_t off;
};

#define F(k, b, m)                                                                                 \
    {                                                                                              \
        k, b, offsetof(struct aka_ws_campaign, m)                                                  \
    }
/* In the order a missing field is reported. */
static const struct field fields[] = {
    F("schema", AKA_CF_SCHEMA, schema),
    F("mode", AKA_CF_MODE, mode),
    F("framework", AKA_CF_FRAMEWORK, framework),
    F("platform", AKA_CF_PLATFORM, platform),
    F("agent", AKA_CF_AGENT, agent),
    F("op_name", AKA_CF_OP_NAME, op_name),
    F("op_dir", AKA_CF_OP_DIR, op_dir),
    F("layout", AKA_CF_LAYOUT, layout),
    F("kernel", AKA_CF_KERNEL, kernel),
    F("sandbox_isolation", AKA_CF_ISOLATION, sandbox_isolation),
    F("agent_sandbox", 0, agent_sandbox),
    F("cuda_arch", 0, cuda_arch),
    F("created_at", 0, created_at),
    {NULL, 0, 0},
};
#undef F

static const char **slot(struct aka_ws_campaign *c, size_t off)
{
    return (const char **)(void *)((char *)c + off);
}

/* assets: {"runtime/...": 64 hex}; operator_snapshot: exactly the snapshot's own path. */
static int evidence_fields(const struct jctx *jc, struct aka_ws_campaign *c)
{
    const char *snap = NULL, *key;
    json_t *assets = NULL, *v;
    if (jget_obj(jc, c->doc, "", "assets", false, &assets) < 0 ||
        jget_str(jc, c->doc, "", "operator_snapshot", false, &snap) < 0)
        return -1;
    json_object_foreach(assets, key, v)
    {
        if (!json_is_string(v) || !aka_sha256_is_hex(json_string_value(v)))
            return jfail(jc, "assets", "%s: expected a sha256 (64 lower-case hex digits)", key);
    }
    if (snap && strcmp(snap, aka_ws_rel(AKA_WS_OPERATOR)) != 0)
        return jfail(jc, "operator_snapshot", "expected \"%s\"; got \"%s\"",
                     aka_ws_rel(AKA_WS_OPERATOR), snap);
    c->assets = assets;
    c->operator_snapshot = snap != NULL;
    return jget_bool(jc, c->doc, "", "generalized", false, &c->generalized);
}

static int parse(struct aka_ws_campaign *c, unsigned required, struct aka_err *err)
{
    struct jctx jc = {c->path, err};
    if (jexpect_obj(&jc, c->doc, "") < 0)
        return -1;
    for (size_t i = 0; fields[i].key; i++)
        if (jget_str(&jc, c->doc, "", fields[i].key, (required & fields[i].bit) != 0,
                     slot(c, fields[i].off)) < 0)
            return -1;
    /* Another schema may name the same fields with other meanings: refuse it. */
    if (c->schema && strcmp(c->schema, AKA_CAMPAIGN_SCHEMA) != 0)
        return jfail(&jc, "schema", "expected \"%s\"; got \"%s\"", AKA_CAMPAIGN_SCHEMA, c->schema);
    if (c->kernel && !aka_is_safe_relpath(c->kernel))
        return jfail(&jc, "kernel", "expected a path relative to the worktree; got \"%s\"",
                     c->kernel);
    return evidence_fields(&jc, c);
}

int aka_ws_campaign_load(const char *ws, unsigned required, struct aka_ws_campaign *c,
                         struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    memset(c, 0, sizeof(*c));
    aka_ws_path(&path, ws, AKA_WS_CAMPAIGN);
    c->path = strbuf_detach(&path, NULL);
    if (aka_json_load_file(c->path, &c->doc, err) < 0)
        return -1;
    return parse(c, required, err);
}

void aka_ws_campaign_release(struct aka_ws_campaign *c)
{
    json_decref(c->doc);
    free(c->path);
    memset(c, 0, sizeof(*c));
}

/* ---- before an evaluation ------------------------------------------------------------------- */

static void resolve_op_dir(const char *ws, const char *op_dir, struct strbuf *out)
{
    if (op_dir[0] == '/') {
        strbuf_reset(out);
        strbuf_addstr(out, op_dir);
    } else {
        aka_path_join(out, ws, op_dir);
    }
}

int aka_ws_eval_inputs(const char *ws, const char *repo_root, struct strbuf *op_dir,
                       struct aka_err *err)
{
    struct aka_ws_campaign c;
    int rc = aka_ws_campaign_load(ws, 0, &c, err);
    if (rc == 0 && c.assets)
        rc = aka_ws_assets_verify(c.assets, repo_root, c.path, err);
    if (rc == 0 && c.operator_snapshot)
        rc = aka_ws_operator_verify(ws, op_dir, err);
    else if (rc == 0 && !c.op_dir)
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: op_dir: required field is missing", c.path);
    else if (rc == 0)
        resolve_op_dir(ws, c.op_dir, op_dir);
    aka_ws_campaign_release(&c);
    return rc;
}
