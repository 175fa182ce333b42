/*
 * test_report.c — the report model behind `aka status` and `aka memory`:
 * loading fixture workspaces written by hand, numeric version order (v2 before
 * v10), speedup vs V0 over common shapes (missing shapes never invented),
 * verification numbers, malformed input as one "FILE: FIELD: ..." line, the
 * JSON shape, and workspace resolution.
 */
#include "aka_test.h"

#include "base/fs.h"
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define C1 "0123456789abcdef0123456789abcdef01234567"
#define C2 "89abcdef0123456789abcdef0123456789abcdef"
#define C3 "fedcba9876543210fedcba9876543210fedcba98"

/* ---- fixtures ------------------------------------------------------------ */

struct fx {
    struct strbuf ws;
};

static void write_at(const struct fx *f, const char *rel, const char *text)
{
    struct strbuf p = STRBUF_INIT, dir = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, f->ws.buf, rel);
    strbuf_addstr(&dir, p.buf);
    *strrchr(dir.buf, '/') = '\0';
    assert_int_equal(aka_mkdir_p(dir.buf, 0755, &err), 0);
    FILE *fp = fopen(p.buf, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    strbuf_release(&p);
    strbuf_release(&dir);
}

#define CAMPAIGN                                                                                   \
    "{\"schema\":\"aka.campaign.v1\",\"mode\":\"leaderboard\",\"framework\":\"C\","                \
    "\"platform\":\"cpu\",\"agent\":\"builtin\",\"op_name\":\"vector_add\",\"op_dir\":\"/ops/"     \
    "va\","                                                                                        \
    "\"layout\":\"native\",\"kernel\":\"kernel.c\",\"sandbox_isolation\":\"none\"}"

/* A passing record (baseline / framework_baseline / promoted) with per-shape latencies. */
static void passing(const struct fx *f, int n, const char *status, const char *commit,
                    const char *shapes, double geomean, const char *extra)
{
    char rel[64], doc[2048];
    snprintf(rel, sizeof(rel), "memory/v%d.json", n);
    snprintf(doc, sizeof(doc),
             "{\"version\":\"v%d\",\"status\":\"%s\",\"timestamp\":\"2025-01-0%dT00:00:00Z\","
             "\"git_commit_hash\":\"%s\",\"correctness\":{\"status\":\"PASS\"},"
             "\"quality_gate\":{\"result\":\"PASS\",\"failure_reason\":null},"
             "\"performance\":{\"latency_us\":%g,\"latency_us_geomean\":%g,"
             "\"latency_us_by_shape\":{%s},\"measurement_status\":\"complete\"}%s}",
             n, status, n % 9 + 1, commit, geomean, geomean, shapes, extra);
    write_at(f, rel, doc);
}

/* A non-promoted outcome record (describes the unchanged incumbent). */
static void outcome(const struct fx *f, int n, const char *status, const char *perf,
                    const char *extra)
{
    char rel[64], doc[2048];
    snprintf(rel, sizeof(rel), "memory/v%d.json", n);
    snprintf(doc, sizeof(doc),
             "{\"version\":\"v%d\",\"status\":\"%s\",\"timestamp\":\"2025-02-01T00:00:00Z\","
             "\"git_commit_hash\":null,\"correctness\":{\"status\":\"UNKNOWN\"},"
             "\"quality_gate\":{\"result\":\"FAIL\",\"failure_reason\":\"slower\"},"
             "\"performance\":{%s}%s}",
             n, status, perf, extra);
    write_at(f, rel, doc);
}

static int fx_setup(void **state)
{
    struct fx *f = aka_xcalloc(1, sizeof(*f));
    struct aka_err err = AKA_ERR_INIT;
    strbuf_init(&f->ws, 0);
    assert_int_equal(aka_make_temp_dir(NULL, "aka-report", &f->ws, &err), 0);
    write_at(f, ".aka/campaign.json", CAMPAIGN);
    unsetenv("ATREX_AKA_WORKSPACE");
    *state = f;
    return 0;
}

static int fx_teardown(void **state)
{
    struct fx *f = *state;
    struct aka_err err = AKA_ERR_INIT;
    aka_remove_tree(f->ws.buf, &err);
    strbuf_release(&f->ws);
    free(f);
    return 0;
}

/* A campaign: V0, V1, a rejected v2 carrying v1's numbers, a full-episode
 * promotion v10 with verification numbers and only two of the three shapes. */
static void campaign(const struct fx *f)
{
    passing(f, 0, "baseline", C1, "\"a\":100,\"b\":10,\"c\":1", 10, "");
    passing(f, 1, "framework_baseline", C2, "\"a\":50,\"b\":5,\"c\":0.5", 5,
            ",\"optimization\":{\"action_description\":\"seed\"}");
    outcome(f, 2, "rejected",
            "\"latency_us_geomean\":5,\"latency_us_by_shape\":{\"a\":50,\"b\":5,\"c\":0.5},"
            "\"measurement_status\":\"complete\",\"carried_from_version\":\"v1\"",
            ",\"long_horizon\":{\"mode\":\"fast\"}");
    passing(f, 10, "promoted", C3, "\"a\":50,\"b\":1.25", 7.91,
            ",\"long_horizon\":{\"mode\":\"full\"},\"verification\":{\"method\":"
            "\"same_allocation_abba\",\"abba_pairs\":5,\"improvement_pct\":12.5,"
            "\"ci_low_pct\":3.25,\"ci_high_pct\":20,\"dispersion_pct\":0.75}");
    write_at(f, "memory/v01.json", "not canonical, must be skipped");
}

/* ---- speedup ------------------------------------------------------------- */

static void set_map(struct aka_shape_map *m, const char *ids, const double *vals)
{
    char buf[2] = {0};
    for (size_t i = 0; ids[i]; i++) {
        buf[0] = ids[i];
        aka_shape_map_set(m, buf, vals[i]);
    }
}

static void test_speedup(void **state)
{
    struct aka_shape_map base = {0}, v = {0}, other = {0};
    size_t common, of;
    (void)state;
    set_map(&base, "abc", (const double[]){100, 10, 1});
    set_map(&v, "ab", (const double[]){50, 1.25}); /* 2x and 8x: geomean 4x */
    assert_true(fabs(aka_report_speedup(&base, &v, &common, &of) - 4.0) < 1e-12);
    assert_int_equal(common, 2);
    assert_int_equal(of, 3);
    assert_true(fabs(aka_report_speedup(&base, &base, &common, &of) - 1.0) < 1e-12);
    assert_int_equal(common, 3);
    /* No common shape: missing, never 0 or 1. */
    set_map(&other, "xy", (const double[]){1, 2});
    assert_false(aka_measured(aka_report_speedup(&base, &other, &common, &of)));
    assert_int_equal(common, 0);
    assert_int_equal(of, 5);
    /* A shape the version did not measure is not a shape it was fast on. */
    aka_shape_map_set(&other, "a", AKA_MISSING);
    assert_false(aka_measured(aka_report_speedup(&base, &other, &common, &of)));
    aka_shape_map_release(&base);
    aka_shape_map_release(&v);
    aka_shape_map_release(&other);
}

static void test_parse_version(void **state)
{
    (void)state;
    assert_int_equal(aka_report_parse_version("v0"), 0);
    assert_int_equal(aka_report_parse_version("v10"), 10);
    assert_int_equal(aka_report_parse_version("7"), 7);
    assert_int_equal(aka_report_parse_version("v07"), -1);
    assert_int_equal(aka_report_parse_version("v-1"), -1);
    assert_int_equal(aka_report_parse_version("v"), -1);
    assert_int_equal(aka_report_parse_version("v1x"), -1);
    assert_int_equal(aka_report_parse_version(""), -1);
    assert_int_equal(aka_report_parse_version(NULL), -1);
}

/* ---- the model ----------------------------------------------------------- */

static void test_load_campaign(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    campaign(f);
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    assert_string_equal(r.campaign.framework, "C");
    assert_string_equal(r.campaign.isolation, "none");
    /* Numeric order: v2 before v10; v01.json is not canonical. */
    assert_int_equal(r.versions.n, 4);
    long want[] = {0, 1, 2, 10};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(r.versions.v[i].rec.version, want[i]);
    /* The incumbent is the last version that moved HEAD, not the last version. */
    assert_int_equal(r.incumbent, 3);
    assert_true(fabs(r.versions.v[1].speedup_vs_v0 - 2.0) < 1e-12);
    const struct aka_report_version *v2 = &r.versions.v[2], *v10 = &r.versions.v[3];
    assert_string_equal(v2->kind, "fast");
    assert_string_equal(v2->carried_from, "v1");
    assert_null(v2->rec.git_commit_hash);
    assert_false(v2->verify.present);
    assert_string_equal(v10->kind, "full");
    assert_true(fabs(v10->speedup_vs_v0 - 4.0) < 1e-12);
    assert_int_equal(v10->speedup_shapes, 2);
    assert_int_equal(v10->speedup_of, 3);
    assert_true(v10->verify.present);
    assert_int_equal(v10->verify.abba_pairs, 5);
    assert_true(v10->verify.ci_low_pct == 3.25 && v10->verify.dispersion_pct == 0.75);
    assert_string_equal(r.versions.v[1].description, "seed");
    assert_false(r.state.present);
    assert_null(r.stop_reason);
    aka_report_release(&r);
}

static void test_state_and_live(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    campaign(f);
    write_at(
        f, "memory/live.json",
        "{\"schema\":\"aka.live.v1\",\"canonical\":false,\"phase\":\"stop: budget: "
        "max-iters (v10 >= 10)\",\"latest_version\":10,\"updated_at\":\"2025-03-01T00:00:00Z\"}");
    write_at(f, ".aka/state.json",
             "{\"episodes\":9,\"accepted\":1,\"rejected\":7,\"pivoted\":0,\"blocked\":1,"
             "\"tokens\":12345,\"consecutive_without_promotion\":0,\"attempts\":[],\"x\":1}");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    assert_true(r.state.present);
    assert_int_equal(r.state.episodes, 9);
    assert_int_equal(r.state.tokens, 12345);
    assert_int_equal(r.state.interrupted, -1); /* absent: unknown, not 0 */
    assert_string_equal(r.stop_reason, "budget: max-iters (v10 >= 10)");
    aka_report_release(&r);
    /* The engine's own stop record wins over the live phase. */
    write_at(f, ".aka/state.json", "{\"episodes\":9,\"stop_reason\":\"budget: max-stall\"}");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    assert_string_equal(r.stop_reason, "budget: max-stall");
    aka_report_release(&r);
}

static void expect_bad(const struct fx *f, const char *rel, const char *want);

/* The SOL submission finalization recorded: shown by status (text and JSON) as written;
 * absent, nothing is said; malformed, the field is named (code 2). */
static void test_submission(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    campaign(f);
    write_at(f, ".aka/state.json",
             "{\"episodes\":2,\"submission\":{\"path\":\"/ws/solution.json\",\"check\":"
             "\"passed\",\"checked_by\":\"aka.python.sol\",\"note\":\"no official evaluator in "
             "the sandbox runtime\",\"detail\":\"4/4 workloads passed\"}}");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    aka_report_render_header(&r, &out);
    assert_non_null(strstr(out.buf, "submission: /ws/solution.json, checked by aka.python.sol (no "
                                    "official evaluator in the sandbox runtime): PASS (4/4 "
                                    "workloads passed)"));
    json_t *doc = aka_report_to_json(&r);
    json_t *sub = json_object_get(doc, "submission");
    assert_string_equal(json_string_value(json_object_get(sub, "check")), "passed");
    assert_string_equal(json_string_value(json_object_get(sub, "detail")), "4/4 workloads passed");
    json_decref(doc);
    aka_report_release(&r);
    write_at(f, ".aka/state.json",
             "{\"submission\":{\"path\":\"/ws/solution.json\",\"check\":\"unchecked\","
             "\"detail\":\"not evaluated: no GPU\"}}");
    strbuf_reset(&out);
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    aka_report_render_header(&r, &out);
    assert_non_null(
        strstr(out.buf, "submission: /ws/solution.json (not checked: not evaluated: no GPU)"));
    aka_report_release(&r);
    write_at(f, ".aka/state.json", "{\"episodes\":2}");
    strbuf_reset(&out);
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    aka_report_render_header(&r, &out);
    assert_null(strstr(out.buf, "submission:"));
    doc = aka_report_to_json(&r);
    assert_true(json_is_null(json_object_get(doc, "submission")));
    json_decref(doc);
    aka_report_release(&r);
    strbuf_release(&out);
    write_at(f, ".aka/state.json",
             "{\"submission\":{\"path\":\"/ws/solution.json\",\"check\":\"maybe\"}}");
    expect_bad(f, ".aka/state.json", "submission.check");
    write_at(f, ".aka/state.json", "{\"submission\":{\"check\":\"passed\"}}");
    expect_bad(f, ".aka/state.json", "submission.path");
}

/* Without V0 nothing has a speedup, and a failed V0 is shown, not counted. */
static void test_failed_v0(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    write_at(f, "memory/v0.failed.json",
             "{\"version\":\"v0\",\"status\":\"failed\",\"timestamp\":\"2025-01-01T00:00:00Z\","
             "\"git_commit_hash\":null,\"correctness\":{\"status\":\"FAIL\"},\"quality_gate\":"
             "{\"result\":\"FAIL\",\"failure_reason\":\"compile error\"},\"performance\":"
             "{\"measurement_status\":\"incomplete\",\"latency_us_by_shape\":{}}}");
    passing(f, 1, "framework_baseline", C2, "\"a\":1", 1, "");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    assert_true(r.has_failed_v0);
    assert_int_equal(r.versions.n, 1);
    assert_false(aka_measured(r.versions.v[0].speedup_vs_v0));
    aka_report_release(&r);
}

static void test_empty_memory(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    assert_int_equal(r.versions.n, 0);
    assert_int_equal(r.incumbent, -1);
    aka_report_render_header(&r, &out);
    aka_report_render_table(&r, &out);
    assert_non_null(strstr(out.buf, "incumbent:  none"));
    assert_non_null(strstr(out.buf, "no canonical version recorded yet"));
    strbuf_release(&out);
    aka_report_release(&r);
}

/* ---- malformed input ----------------------------------------------------- */

/* Load must fail with code 2 and a one-line message naming rel and containing want. */
static void expect_bad(const struct fx *f, const char *rel, const char *want)
{
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    if (aka_report_load(f->ws.buf, &r, &err) == 0)
        fail_msg("%s: expected an error containing '%s'", rel, want);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    if (!strstr(err.msg, rel) || !strstr(err.msg, want))
        fail_msg("expected '%s' and '%s' in: %s", rel, want, err.msg);
    assert_null(strchr(err.msg, '\n'));
}

static void test_bad_campaign(void **state)
{
    struct fx *f = *state;
    write_at(f, ".aka/campaign.json", "{\"schema\":\"aka.campaign.v1\",\"mode\":\"leaderboard\"}");
    expect_bad(f, ".aka/campaign.json: framework:", "required field is missing");
    write_at(f, ".aka/campaign.json", "{\"schema\":");
    expect_bad(f, ".aka/campaign.json:1:", "invalid JSON");
    write_at(f, ".aka/campaign.json", "[1]");
    expect_bad(f, ".aka/campaign.json", "expected an object");
}

static void test_bad_schema(void **state)
{
    struct fx *f = *state;
    char doc[1024];
    snprintf(doc, sizeof(doc), "%s", CAMPAIGN);
    memcpy(strstr(doc, "v1\""), "v9", 2);
    write_at(f, ".aka/campaign.json", doc);
    expect_bad(f, ".aka/campaign.json: schema:", "expected \"aka.campaign.v1\"");
}

static void test_bad_records(void **state)
{
    struct fx *f = *state;
    campaign(f);
    write_at(f, "memory/v2.json", "{\"version\": \"v2\",\n  garbage");
    expect_bad(f, "memory/v2.json:2:", "invalid JSON");
    campaign(f);
    passing(f, 10, "promoted", C3, "\"a\":1", 1, "");
    write_at(f, "memory/v3.json", "");
    expect_bad(f, "memory/v3.json", "");
    write_at(f, "memory/v3.json", "{}");
    expect_bad(f, "memory/v3.json: version:", "required field is missing");
    /* A record whose version disagrees with its file name. */
    char path[512];
    snprintf(path, sizeof(path), "%s/memory/v3.json", f->ws.buf);
    unlink(path);
    passing(f, 3, "promoted", C3, "\"a\":1", 1, "");
    snprintf(path, sizeof(path), "%s/memory/v3.json", f->ws.buf);
    char moved[512];
    snprintf(moved, sizeof(moved), "%s/memory/v4.json", f->ws.buf);
    assert_int_equal(rename(path, moved), 0);
    expect_bad(f, "memory/v4.json: version:", "expected \"v4\"");
}

static void test_bad_extras(void **state)
{
    struct fx *f = *state;
    campaign(f);
    passing(f, 10, "promoted", C3, "\"a\":1", 1, ",\"verification\":{\"abba_pairs\":\"five\"}");
    expect_bad(f, "memory/v10.json: verification.abba_pairs:", "expected an integer");
    passing(f, 10, "promoted", C3, "\"a\":1", 1, ",\"verification\":{\"dispersion_pct\":-1}");
    expect_bad(f, "memory/v10.json: verification.dispersion_pct:", ">= 0");
    passing(f, 10, "promoted", C3, "\"a\":1", 1, ",\"long_horizon\":{\"mode\":3}");
    expect_bad(f, "memory/v10.json: long_horizon.mode:", "expected a string");
    passing(f, 10, "promoted", C3, "\"a\":1", 1, "");
    write_at(f, ".aka/state.json", "{\"episodes\":-3}");
    expect_bad(f, ".aka/state.json: episodes:", ">= 0");
    write_at(f, ".aka/state.json", "{}");
    write_at(f, "memory/live.json", "{\"canonical\":true}");
    expect_bad(f, "memory/live.json: canonical:", "never canonical");
}

/* ---- JSON and text ------------------------------------------------------- */

static void test_json_shape(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    campaign(f);
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    json_t *doc = aka_report_to_json(&r);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), AKA_STATUS_SCHEMA);
    static const char *const keys[] = {"workspace",  "campaign",    "incumbent", "budget",
                                       "stopped",    "stop_reason", "live",      "failed_v0",
                                       "submission", "versions",    NULL};
    for (size_t i = 0; keys[i]; i++)
        assert_non_null(json_object_get(doc, keys[i]));
    json_t *vs = json_object_get(doc, "versions");
    assert_int_equal(json_array_size(vs), 4);
    json_t *v2 = json_array_get(vs, 2), *v10 = json_array_get(vs, 3);
    assert_string_equal(json_string_value(json_object_get(v10, "version")), "v10");
    assert_true(json_is_null(json_object_get(v2, "commit")));
    assert_true(json_is_null(json_object_get(v2, "verification")));
    json_t *ver = json_object_get(v10, "verification");
    assert_int_equal(json_integer_value(json_object_get(ver, "abba_pairs")), 5);
    assert_true(json_is_null(json_object_get(doc, "stop_reason")));
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "incumbent"), "version")), "v10");
    assert_true(json_is_null(json_object_get(json_object_get(doc, "budget"), "episodes")));
    json_decref(doc);
    aka_report_release(&r);
}

static void test_missing_number_is_null(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    passing(f, 0, "baseline", C1, "\"a\":2", 2, "");
    outcome(f, 1, "blocked", "\"measurement_status\":\"not_evaluated_or_incomplete\"", "");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    json_t *v1 = aka_report_version_to_json(&r.versions.v[1]);
    assert_true(json_is_null(json_object_get(v1, "latency_us_geomean")));
    assert_true(json_is_null(json_object_get(v1, "speedup_vs_v0")));
    json_decref(v1);
    struct strbuf out = STRBUF_INIT;
    aka_report_render_table(&r, &out);
    /* v1's row: latency and speedup are dashes, not 0 or 1. */
    const char *row = strstr(out.buf, "\nv1 ");
    assert_non_null(row);
    assert_null(strstr(row, "0.000"));
    assert_non_null(strstr(row, "\xe2\x80\x94"));
    strbuf_release(&out);
    aka_report_release(&r);
}

/* The character (not byte) at index i of the line, or NULL past its end. */
static const char *char_at(const char *line, long i)
{
    for (const char *p = line; *p && *p != '\n'; p++)
        if (((unsigned char)*p & 0xC0) != 0x80 && i-- == 0)
            return p;
    return NULL;
}

static long char_index(const char *line, const char *at)
{
    long n = 0;
    for (const char *p = line; p < at; p++)
        n += ((unsigned char)*p & 0xC0) != 0x80;
    return n;
}

/* Columns line up by characters although "—" and "µ" take two bytes each:
 * "verification" starts, and the right-aligned "vs V0" ends, at the same
 * character on every row. */
static void test_table_alignment(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    campaign(f);
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    aka_report_render_table(&r, &out);
    assert_non_null(strstr(out.buf, "5 ABBA pairs, CI low +3.25%, disp 0.75%"));
    assert_non_null(strstr(out.buf, "4.000x (2/3)"));
    assert_non_null(strstr(out.buf, "measurement carried from v1"));
    assert_true(strstr(out.buf, "\nv2 ") < strstr(out.buf, "\nv10 "));
    long ver = char_index(out.buf, strstr(out.buf, "verification"));
    long vs_end = char_index(out.buf, strstr(out.buf, "vs V0")) + 5;
    size_t rows = 0;
    for (const char *line = out.buf; *line; line = strchr(line, '\n') + 1, rows++) {
        const char *c = char_at(line, ver), *e = char_at(line, vs_end - 1);
        assert_non_null(c);
        assert_true(*c != ' ' && c[-1] == ' ' && c[-2] == ' ');
        assert_non_null(e);
        assert_true(*e != ' ' && e[1] == ' ');
    }
    assert_int_equal(rows, 5);
    strbuf_release(&out);
    aka_report_release(&r);
}

/* Text from records cannot add lines to the header or the table: control characters
 * are shown escaped. */
static void test_one_line_cells(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    write_at(f, "memory/v0.failed.json",
             "{\"version\":\"v0\",\"status\":\"failed\",\"timestamp\":\"2025-01-01T00:00:00Z\","
             "\"correctness\":{\"status\":\"FAIL\"},\"quality_gate\":{\"result\":\"FAIL\","
             "\"failure_reason\":\"line one\\nincumbent:  forged\"},\"performance\":{}}");
    passing(f, 1, "framework_baseline", C2, "\"a\":1", 1,
            ",\"long_horizon\":{\"mode\":\"fast\\nv9  forged\"}");
    assert_int_equal(aka_report_load(f->ws.buf, &r, &err), 0);
    aka_report_render_header(&r, &out);
    aka_report_render_table(&r, &out);
    assert_non_null(strstr(out.buf, "line one\\nincumbent:  forged"));
    assert_non_null(strstr(out.buf, "fast\\nv9  forged"));
    assert_null(strstr(out.buf, "\nv9"));
    assert_null(strstr(out.buf, "\nincumbent:  forged"));
    strbuf_release(&out);
    aka_report_release(&r);
}

static void test_render_list(void **state)
{
    struct fx *f = *state;
    struct aka_report r;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf out = STRBUF_INIT;
    campaign(f);
    write_at(f, ".aka/campaign.json", "garbage: memory list does not need it");
    assert_int_equal(aka_report_load_memory(f->ws.buf, &r, &err), 0);
    aka_report_render_list(&r, &out);
    size_t lines = 0;
    for (const char *p = out.buf; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4);
    assert_true(strncmp(out.buf, "v0 ", 3) == 0);
    assert_non_null(strstr(out.buf, "seed"));
    strbuf_release(&out);
    aka_report_release(&r);
}

/* ---- single records and the workspace ------------------------------------ */

static void test_records(void **state)
{
    struct fx *f = *state;
    struct aka_memory_record m;
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_report_load_latest(f->ws.buf, &m, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_FAILED);
    campaign(f);
    assert_int_equal(aka_report_load_latest(f->ws.buf, &m, &err), 0);
    assert_int_equal(m.version, 10);
    aka_memory_release(&m);
    /* Masked records are hidden from `latest`. */
    passing(f, 10, "promoted", C3, "\"a\":1", 1, ",\"masked\":true");
    assert_int_equal(aka_report_load_latest(f->ws.buf, &m, &err), 0);
    assert_int_equal(m.version, 2);
    aka_memory_release(&m);
    assert_int_equal(aka_report_load_record(f->ws.buf, 1, &m, &err), 0);
    assert_int_equal(m.version, 1);
    aka_memory_release(&m);
    assert_int_equal(aka_report_load_record(f->ws.buf, 7, &m, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "memory/v7.json: no such memory record"));
    assert_non_null(strstr(err.msg, "the latest v10"));
}

static void test_find_workspace(void **state)
{
    struct fx *f = *state;
    struct strbuf out = STRBUF_INIT, real = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(aka_realpath(f->ws.buf, &real, &err), 0);
    assert_int_equal(aka_report_find_workspace(f->ws.buf, true, &out, &err), 0);
    assert_string_equal(out.buf, real.buf);
    setenv("ATREX_AKA_WORKSPACE", f->ws.buf, 1);
    assert_int_equal(aka_report_find_workspace(NULL, true, &out, &err), 0);
    assert_string_equal(out.buf, real.buf);
    unsetenv("ATREX_AKA_WORKSPACE");
    assert_int_equal(chdir(f->ws.buf), 0);
    assert_int_equal(aka_report_find_workspace(NULL, true, &out, &err), 0);
    assert_string_equal(out.buf, real.buf);
    assert_int_equal(chdir("/"), 0);
    assert_int_equal(aka_report_find_workspace(NULL, true, &out, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "ATREX_AKA_WORKSPACE"));
    assert_int_equal(aka_report_find_workspace("/nonexistent-aka-ws", false, &out, &err), -1);
    assert_non_null(strstr(err.msg, "not a directory"));
    assert_int_equal(aka_report_find_workspace("/", true, &out, &err), -1);
    assert_non_null(strstr(err.msg, "no .aka/campaign.json"));
    assert_int_equal(chdir(cwd), 0);
    strbuf_release(&out);
    strbuf_release(&real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedup),
        cmocka_unit_test(test_parse_version),
        cmocka_unit_test_setup_teardown(test_load_campaign, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_state_and_live, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_failed_v0, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_submission, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_empty_memory, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_campaign, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_schema, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_records, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_bad_extras, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_json_shape, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_missing_number_is_null, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_table_alignment, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_one_line_cells, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_render_list, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_records, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_find_workspace, fx_setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
