/*
 * finalize.c — what a stopped campaign leaves for people and benchmarks
 * (DESIGN §3 "packaging"): one summary line for every layout, and for a
 * SOL-ExecBench campaign the submission <workspace>/solution.json.
 *
 * The submission is the SOL solution format (reference/anchor-formats.md
 * §1.5) with the incumbent kernel's source inlined, so that it stands alone.
 * It is first written into a staging directory beside copies of the
 * workspace's definition.json and workload.jsonl and read back with the
 * contracts' own SOL reader (the same validation `aka inspect` applies to an
 * operator's solution.json); only bytes that passed are then put in place,
 * atomically. Nothing is written when any step fails.
 */
#include "base/fs.h"
#include "base/json.h"
#include "bootstrap/bootstrap.h"
#include "git/git.h"
#include "optimize/optimize.h"
#include "platform/platform.h"
#include "workspace/workspace.h"

#include <ctype.h>
#include <string.h>

/* What finalization needs of the campaign (strings into c's document), and the operator
 * directory it reads the solution layout from: the snapshot when the campaign has one. */
struct pinned {
    struct aka_ws_campaign c;
    const char *layout, *framework, *platform, *kernel;
    struct strbuf op_dir;
};

static int load_pinned(const char *ws, struct pinned *p, struct aka_err *err)
{
    unsigned need = AKA_CF_LAYOUT | AKA_CF_FRAMEWORK | AKA_CF_PLATFORM | AKA_CF_KERNEL;
    int rc = aka_ws_campaign_load(ws, need, &p->c, err);
    if (rc == 0) {
        p->layout = p->c.layout;
        p->framework = p->c.framework;
        p->platform = p->c.platform;
        p->kernel = p->c.kernel;
        if (p->c.operator_snapshot)
            aka_ws_path(&p->op_dir, ws, AKA_WS_OPERATOR);
        else if (p->c.op_dir)
            strbuf_addstr(&p->op_dir, p->c.op_dir);
    }
    return rc;
}

/* The incumbent and V0 as committed (workspace/: the one incumbent rule). */
static int find_incumbent(const char *ws, struct aka_finalize_summary *out, struct aka_err *err)
{
    struct aka_memory_record m;
    out->version = -1;
    int rc = aka_ws_incumbent(ws, &m, NULL, err);
    if (rc == 0) {
        out->version = m.version;
        snprintf(out->status, sizeof(out->status), "%s", aka_memory_status_names[m.status]);
        out->latency_us = aka_measured(m.latency_us_geomean) ? m.latency_us_geomean : 0;
        aka_memory_release(&m);
    }
    if (rc == 0 && aka_ws_memory_at_head(ws, 0, &m, err) == 0) {
        out->v0_latency_us = aka_measured(m.latency_us_geomean) ? m.latency_us_geomean : 0;
        aka_memory_release(&m);
    } else if (rc == 0) {
        rc = -1;
    }
    if (out->latency_us > 0 && out->v0_latency_us > 0)
        out->speedup_vs_v0 = out->v0_latency_us / out->latency_us;
    return rc < 0 ? -1 : 0;
}

/* ---- the SOL submission ------------------------------------------------------------------ */

/* SOL's spec.languages value and dependencies for a campaign framework. Frameworks SOL has
 * no language for (Cuda inline extensions, TileLang, FlyDSL) ship as Python-family
 * "pytorch" solutions: the entry file is Python either way. */
static const char *sol_language(const char *fw, json_t *deps)
{
    json_array_append_new(deps, json_string("torch"));
    if (strcmp(fw, "Triton") == 0 || strcmp(fw, "Gluon") == 0) {
        json_array_append_new(deps, json_string("triton"));
        return "triton";
    }
    if (strcmp(fw, "CuteDSL") == 0) {
        json_array_append_new(deps, json_string("nvidia-cutlass-dsl"));
        return "cute_dsl";
    }
    if (strcmp(fw, "TileLang") == 0 || strcmp(fw, "FlyDSL") == 0) {
        char lower[32];
        size_t i = 0;
        for (; fw[i] && i < sizeof(lower) - 1; i++)
            lower[i] = (char)tolower((unsigned char)fw[i]);
        lower[i] = '\0';
        json_array_append_new(deps, json_string(lower));
    }
    return "pytorch";
}

/* Entry function and destination passing, as the evaluator called the kernel: V0 is the
 * value-returning reference; later kernels follow the operator's solution.json, else the
 * harness default (run, destination-passing). */
static void entry_of(const struct pinned *p, const struct aka_finalize_summary *s,
                     struct strbuf *entry, bool *dps)
{
    struct strbuf path = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *sol = NULL;
    const char *fn = "run";
    *dps = strcmp(s->status, "baseline") != 0;
    if (p->op_dir.len && *dps) {
        aka_path_join(&path, p->op_dir.buf, "solution.json");
        if (aka_is_file(path.buf) && aka_json_load_file(path.buf, &sol, &ignored) == 0) {
            json_t *spec = json_object_get(sol, "spec");
            const char *ep = json_string_value(json_object_get(spec, "entry_point"));
            const char *sep = ep ? strstr(ep, "::") : NULL;
            json_t *d = json_object_get(spec, "destination_passing_style");
            fn = sep && sep[2] ? sep + 2 : fn;
            *dps = json_is_boolean(d) ? json_boolean_value(d) : true;
        }
    }
    strbuf_reset(entry);
    strbuf_addf(entry, "%s::%s", p->kernel, fn);
    json_decref(sol);
    strbuf_release(&path);
}

/* SOL's target_hardware names the B200 (and only it) besides LOCAL: an exact product match,
 * so a GB200 is not taken for one. */
static bool is_b200(const char *platform)
{
    struct aka_platform p;
    struct aka_err ignored = AKA_ERR_INIT;
    return aka_platform_parse(platform, NULL, &p, &ignored) == 0 && strcmp(p.product, "b200") == 0;
}

static int definition_name(const char *ws, struct strbuf *name, struct aka_err *err)
{
    struct strbuf path = STRBUF_INIT;
    json_t *def = NULL;
    aka_path_join(&path, ws, "definition.json");
    int rc = aka_json_load_file(path.buf, &def, err);
    const char *n = rc == 0 ? json_string_value(json_object_get(def, "name")) : NULL;
    if (rc == 0 && (!n || !*n))
        rc = aka_err_set(err, AKA_EXIT_USAGE, "%s: name: expected a non-empty string", path.buf);
    if (rc == 0)
        strbuf_addstr(name, n);
    if (rc < 0 && !err->code)
        err->code = AKA_EXIT_USAGE;
    json_decref(def);
    strbuf_release(&path);
    return rc;
}

static json_t *solution_doc(const struct pinned *p, const struct aka_finalize_summary *s,
                            const char *def_name, const char *source)
{
    struct strbuf name = STRBUF_INIT, slug = STRBUF_INIT, desc = STRBUF_INIT, entry = STRBUF_INIT;
    struct aka_err ignored = AKA_ERR_INIT;
    json_t *deps = json_array();
    bool dps = true;
    const char *lang = sol_language(p->framework, deps);
    entry_of(p, s, &entry, &dps);
    if (aka_slug(p->framework, &slug, &ignored) < 0)
        strbuf_addstr(&slug, "kernel");
    strbuf_addf(&name, "%s_v%ld_%s", def_name, s->version, slug.buf);
    strbuf_addf(&desc, "aka campaign incumbent v%ld (%s), %s on %s", s->version, s->status,
                p->framework, p->platform);
    json_t *doc = json_pack(
        "{s:s, s:s, s:s, s:s, s:{s:[s], s:o, s:s, s:o, s:b}, s:[{s:s, s:s}]}", "name", name.buf,
        "definition", def_name, "author", "atrex-aka", "description", desc.buf, "spec", "languages",
        lang, "target_hardware",
        is_b200(p->platform) ? json_pack("[s, s]", "B200", "LOCAL") : json_pack("[s]", "LOCAL"),
        "entry_point", entry.buf, "dependencies", deps, "destination_passing_style", dps, "sources",
        "path", p->kernel, "content", source);
    strbuf_release(&name);
    strbuf_release(&slug);
    strbuf_release(&desc);
    strbuf_release(&entry);
    return doc;
}

/* Stage the solution beside copies of the definition and workloads; read it back. */
static int stage_and_validate(const char *ws, const json_t *doc, struct strbuf *bytes,
                              struct aka_err *err)
{
    static const char *const inputs[] = {"definition.json", "workload.jsonl", NULL};
    struct strbuf stage = STRBUF_INIT, from = STRBUF_INIT, to = STRBUF_INIT;
    struct aka_operator op;
    struct aka_err ignored = AKA_ERR_INIT;
    aka_ws_path(&stage, ws, AKA_WS_SUBMISSION);
    int rc = aka_exists(stage.buf) ? aka_remove_tree(stage.buf, err) : 0;
    if (rc == 0)
        rc = aka_mkdir_p(stage.buf, 0755, err);
    for (size_t i = 0; rc == 0 && inputs[i]; i++) {
        strbuf_reset(&from);
        strbuf_reset(&to);
        aka_path_join(&from, ws, inputs[i]);
        aka_path_join(&to, stage.buf, inputs[i]);
        rc = aka_copy_file(from.buf, to.buf, err);
    }
    strbuf_reset(&to);
    aka_path_join(&to, stage.buf, "solution.json");
    if (rc == 0)
        rc = aka_json_write_file(to.buf, doc, err);
    if (rc == 0 && (rc = aka_operator_load(stage.buf, &op, err)) == 0) {
        if (op.layout != AKA_LAYOUT_SOL || !op.sol.has_solution)
            rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: not read back as a SOL solution", to.buf);
        aka_operator_release(&op);
    }
    if (rc == 0)
        rc = aka_read_file(to.buf, bytes, AKA_READ_LIMIT_DEFAULT, err);
    aka_remove_tree(stage.buf, &ignored);
    strbuf_release(&stage);
    strbuf_release(&from);
    strbuf_release(&to);
    return rc;
}

static int write_submission(const char *ws, const struct pinned *p, struct aka_finalize_summary *s,
                            struct aka_err *err)
{
    struct strbuf kernel = STRBUF_INIT, source = STRBUF_INIT, def = STRBUF_INIT;
    struct strbuf bytes = STRBUF_INIT;
    struct aka_git g;
    json_t *doc = NULL;
    strbuf_addf(&kernel, "%s: HEAD:%s", ws, p->kernel);
    aka_git_open(&g, ws);
    int rc = 0;
    if (s->version < 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: no incumbent version to submit", ws);
    /* The incumbent's committed bytes: the working copy is anyone's to edit. */
    else if (aka_git_show_blob(&g, "HEAD", p->kernel, &source, err) < 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: the incumbent kernel is missing", kernel.buf);
    aka_git_close(&g);
    if (rc == 0 && source.len == 0)
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: the incumbent kernel is empty", kernel.buf);
    if (rc == 0)
        rc = definition_name(ws, &def, err);
    if (rc == 0 && !(doc = solution_doc(p, s, def.buf, source.buf)))
        rc = aka_err_set(err, AKA_EXIT_FAILED, "%s: cannot build the solution (is it UTF-8?)",
                         kernel.buf);
    if (rc == 0)
        rc = stage_and_validate(ws, doc, &bytes, err);
    snprintf(s->submission, sizeof(s->submission), "%s/solution.json", ws);
    if (rc == 0)
        rc = aka_write_file_atomic(s->submission, bytes.buf, bytes.len, 0644, err);
    s->submission_written = rc == 0;
    json_decref(doc);
    strbuf_release(&kernel);
    strbuf_release(&source);
    strbuf_release(&def);
    strbuf_release(&bytes);
    return rc;
}

int aka_optimize_finalize(const char *ws, struct aka_finalize_summary *out, struct aka_err *err)
{
    struct pinned p = {.op_dir = STRBUF_INIT};
    memset(out, 0, sizeof(*out));
    out->version = -1;
    int rc = load_pinned(ws, &p, err);
    if (rc == 0)
        rc = find_incumbent(ws, out, err);
    if (rc == 0 && strcmp(p.layout, "sol") == 0)
        rc = write_submission(ws, &p, out, err);
    aka_ws_campaign_release(&p.c);
    strbuf_release(&p.op_dir);
    return rc;
}

const char *const aka_submission_check_names[] = {"unchecked", "passed", "failed", NULL};

static bool given(const char *s)
{
    return s && *s;
}

void aka_submission_check_text(const char *check, const char *checked_by, const char *note,
                               const char *detail, struct strbuf *out)
{
    if (!given(detail))
        detail = "no detail recorded";
    if (strcmp(check, "unchecked") == 0) {
        strbuf_addf(out, "not checked: %s", detail);
        return;
    }
    strbuf_addf(out, "checked by %s", given(checked_by) ? checked_by : "?");
    if (given(note))
        strbuf_addf(out, " (%s)", note);
    strbuf_addf(out, ": %s (%s)", strcmp(check, "passed") == 0 ? "PASS" : "FAIL", detail);
}

void aka_finalize_summary_line(const struct aka_finalize_summary *s, char *line, size_t len)
{
    char speed[64] = "no speedup vs V0 (unmeasured)";
    struct strbuf check = STRBUF_INIT;
    if (s->speedup_vs_v0 > 0)
        snprintf(speed, sizeof(speed), "%.2fx vs V0 (%.3f us)", s->speedup_vs_v0, s->v0_latency_us);
    if (s->submission_written) {
        strbuf_addf(&check, "; submission written: %s; %s", s->submission,
                    s->check == AKA_SUBMISSION_UNCHECKED ? "submission " : "");
        aka_submission_check_text(aka_submission_check_names[s->check], s->checked_by,
                                  s->check_note, s->check_detail, &check);
    }
    if (s->version < 0)
        snprintf(line, len, "final: no incumbent version recorded");
    else
        snprintf(line, len, "final: incumbent v%ld (%s), latency %.3f us, %s%s", s->version,
                 s->status, s->latency_us, speed, check.buf);
    strbuf_release(&check);
}
