/*
 * campaign.c — .aka/campaign.json: what a campaign is, pinned at its first start.
 *
 * The file is the campaign's identity (mode, framework, platform, agent,
 * operator, kernel file) and its pinned contracts (source-policy and
 * distributed decisions, runtime pins). `aka eval` inside a worktree reads
 * op_dir, framework, platform, kernel and sandbox_isolation from it
 * (sandbox/evaluate.h). On resume every pinned field must equal what the
 * current command line and environment say: a campaign never silently changes
 * what it optimizes, or for which evaluator runtime.
 */
#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/bootstrap.h"

#include <string.h>

/* Fields compared on resume, in the order a mismatch is reported. */
static const char *const pinned_fields[] = {
    "schema",        "mode",      "framework",    "platform", "agent",
    "op_dir",        "op_name",   "layout",       "kernel",   "sandbox_isolation",
    "agent_sandbox", "contracts", "runtime_pins", NULL};

json_t *aka_campaign_to_json(const struct aka_campaign *c)
{
    char now[AKA_TIMESTAMP_MAX];
    aka_record_now(now);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:o}, s:o, s:s}",
                     "schema", AKA_CAMPAIGN_SCHEMA, "mode", c->mode, "framework", c->framework,
                     "platform", c->platform, "agent", c->agent, "op_dir", c->op_dir, "op_name",
                     c->op_name, "layout", c->layout, "kernel", c->kernel, "sandbox_isolation",
                     c->sandbox_isolation, "agent_sandbox",
                     c->agent_sandbox ? c->agent_sandbox : "bwrap", "contracts", "benchmark",
                     aka_benchmark_contract_to_json(c->contract), "runtime_pins",
                     aka_runtime_pins_to_json(c->pins), "created_at", now);
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

int aka_campaign_pin_or_check(const char *ws, const struct aka_campaign *c, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *now = aka_campaign_to_json(c), *pinned = NULL;
    int rc;
    aka_path_join(&path, ws, ".aka/campaign.json");
    if (!aka_exists(path.buf))
        rc = aka_json_write_file(path.buf, now, err);
    else if (aka_json_load_file(path.buf, &pinned, err) < 0)
        rc = -1;
    else if (!json_is_object(pinned))
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: expected a JSON object", path.buf);
    else
        rc = compare(path.buf, pinned, now, err);
    json_decref(now);
    json_decref(pinned);
    strbuf_release(&path);
    return rc;
}
