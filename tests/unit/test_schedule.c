/*
 * test_schedule.c — the campaign's scheduling and stop arithmetic as pure
 * functions: which kind an episode gets (fast, full, goal), every transition of
 * the Triton→Gluon latch and its 5% parity rule, the Gluon structure check, and
 * the roofline utilization behind --target-util (peaks from wiki fact records,
 * work from a native operator's roofline expressions).
 */
#include "aka_test.h"

#include "base/fs.h"
#include "base/json.h"
#include "contracts/operator.h"
#include "contracts/records.h"
#include "optimize/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct aka_optimize_opts opts(void)
{
    struct aka_optimize_opts o;
    aka_optimize_opts_init(&o);
    o.framework = "Triton";
    return o;
}

static void test_kind_fast_full_goal(void **state)
{
    (void)state;
    struct aka_optimize_opts o = opts();
    struct aka_episode_counters c = {0};
    assert_int_equal(aka_episode_kind_for(&o, 1, &c), AKA_EPISODE_FAST);
    assert_int_equal(aka_episode_kind_for(&o, 2, &c), AKA_EPISODE_FAST);
    assert_int_equal(aka_episode_kind_for(&o, 3, &c), AKA_EPISODE_FULL);
    /* goal: at least 50 episodes done AND more than 3 unpromoted in a row */
    c.episodes = 50;
    c.consecutive = 3;
    assert_int_equal(aka_episode_kind_for(&o, 51, &c), AKA_EPISODE_FULL);
    c.consecutive = 4;
    assert_int_equal(aka_episode_kind_for(&o, 51, &c), AKA_EPISODE_GOAL);
    c.episodes = 49;
    assert_int_equal(aka_episode_kind_for(&o, 50, &c), AKA_EPISODE_FULL);
    /* the flags move both thresholds; a goal outranks a fast slot */
    o.goal_after_episodes = 1;
    o.goal_after_stalls = 0;
    c.episodes = 1;
    c.consecutive = 1;
    assert_int_equal(aka_episode_kind_for(&o, 2, &c), AKA_EPISODE_GOAL);
    c.consecutive = 0;
    assert_int_equal(aka_episode_kind_for(&o, 2, &c), AKA_EPISODE_FAST);
    o.fast_episodes = 0;
    assert_int_equal(aka_episode_kind_for(&o, 1, &c), AKA_EPISODE_FULL);
}

static void test_latch_transitions(void **state)
{
    (void)state;
    struct aka_optimize_opts o = opts();
    struct aka_episode_counters c = {.episodes = 5, .consecutive = 2};
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_NONE);
    c.consecutive = 3; /* --convert-after 3 (default) reached */
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_PENDING);
    /* monotone: a pending latch stays even when the counter would say otherwise */
    c.consecutive = 0;
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_PENDING, &c), AKA_CONVERSION_PENDING);
    /* failed conversions keep it pending; a promotion latches Gluon for good */
    assert_int_equal(aka_conversion_after(AKA_CONVERSION_PENDING, AKA_MEM_REJECTED),
                     AKA_CONVERSION_PENDING);
    assert_int_equal(aka_conversion_after(AKA_CONVERSION_PENDING, AKA_MEM_INVALID_HANDOFF),
                     AKA_CONVERSION_PENDING);
    assert_int_equal(aka_conversion_after(AKA_CONVERSION_PENDING, AKA_MEM_PROMOTED),
                     AKA_CONVERSION_GLUON);
    assert_int_equal(aka_conversion_after(AKA_CONVERSION_GLUON, AKA_MEM_REJECTED),
                     AKA_CONVERSION_GLUON);
    c.consecutive = 9;
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_GLUON, &c), AKA_CONVERSION_GLUON);
    /* a promotion without a latch changes nothing */
    assert_int_equal(aka_conversion_after(AKA_CONVERSION_NONE, AKA_MEM_PROMOTED),
                     AKA_CONVERSION_NONE);
}

static void test_latch_only_triton(void **state)
{
    (void)state;
    struct aka_optimize_opts o = opts();
    struct aka_episode_counters c = {.episodes = 9, .consecutive = 9};
    o.framework = "triton"; /* spelled as a user may */
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_PENDING);
    o.convert_after = 0; /* off */
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_NONE);
    o.convert_after = 3;
    static const char *const others[] = {"Cuda", "C", "Gluon", "CuteDSL", "TileLang", NULL};
    for (int i = 0; others[i]; i++) {
        o.framework = others[i];
        assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_NONE);
    }
    o.framework = "Triton";
    o.agent_cli = "builtin"; /* the tuner ports nothing: no latch, however long the stall */
    assert_int_equal(aka_conversion_next(&o, AKA_CONVERSION_NONE, &c), AKA_CONVERSION_NONE);
    assert_string_equal(aka_conversion_names[AKA_CONVERSION_PENDING], "pending");
    assert_string_equal(aka_conversion_names[AKA_CONVERSION_GLUON], "gluon");
}

static void test_parity(void **state)
{
    (void)state;
    assert_true(aka_conversion_parity(100.0, 100.0));
    assert_true(aka_conversion_parity(105.0, 100.0)); /* exactly 5% slower */
    assert_true(aka_conversion_parity(80.0, 100.0));
    assert_false(aka_conversion_parity(105.01, 100.0));
    assert_false(aka_conversion_parity(0.0, 100.0));
    assert_false(aka_conversion_parity(10.0, 0.0));
    assert_false(aka_conversion_parity(NAN, 100.0));
}

static void test_gluon_import(void **state)
{
    (void)state;
    assert_true(aka_kernel_imports_gluon("import torch\nfrom triton.experimental import gluon\n"));
    assert_true(aka_kernel_imports_gluon("import triton.experimental.gluon.language as gl\n"));
    assert_true(aka_kernel_imports_gluon("  from triton.experimental.gluon import jit"));
    assert_false(aka_kernel_imports_gluon("import triton\nimport triton.language as tl\n"));
    assert_false(aka_kernel_imports_gluon("# from triton.experimental import gluon\n"));
    assert_false(aka_kernel_imports_gluon("x = 'import gluon'\n"));
    assert_false(aka_kernel_imports_gluon("from mypkg import gluonic\n"));
    assert_false(aka_kernel_imports_gluon("import my_gluon\n"));
    assert_false(aka_kernel_imports_gluon(""));
}

static json_t *fact(const char *id, const char *quantity, double value, const char *unit)
{
    return json_pack("{s:s, s:{s:s, s:f, s:s}}", "id", id, "fact", "quantity", quantity, "value",
                     value, "unit", unit);
}

static bool add(struct aka_hw_peaks *p, json_t *rec)
{
    bool ok = aka_hw_peaks_add_record(p, rec);
    json_decref(rec);
    return ok;
}

static void test_peaks_from_facts(void **state)
{
    (void)state;
    struct aka_hw_peaks p = {0};
    assert_true(add(&p, fact("a.bw", "hbm_bandwidth", 4.8, "TB/s")));
    assert_true(add(&p, fact("a.fp32", "fp32_tflops", 67, "TFLOPS")));
    assert_false(add(&p, fact("b.bw", "hbm_bandwidth", 3.35, "TB/s"))); /* first one wins */
    assert_false(add(&p, fact("a.l2", "l2_cache", 50, "MB")));          /* not a peak */
    assert_false(add(&p, fact("a.x", "dense_bf16_tflops", 1, "GB/s"))); /* unit of a bandwidth */
    assert_false(add(&p, fact("a.y", "memory_bandwidth", -1, "GB/s"))); /* not positive */
    assert_true(add(&p, fact("a.bf16", "dense_bf16_tflops", 989.5, "TFLOPS")));
    assert_int_equal(p.n, 3);
    assert_string_equal(p.v[0].record, "a.bw");
    assert_true(fabs(p.v[0].per_s - 4.8e12) < 1);
    assert_true(fabs(p.v[1].per_s - 67e12) < 1);
}

static void load_vector_add(struct aka_operator *op)
{
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    strbuf_addf(&dir, "%s/examples/ops/vector_add", AKA_SOURCE_DIR);
    assert_int_equal(aka_operator_load(dir.buf, op, &err), 0);
    strbuf_release(&dir);
}

/* vector_add: 12 bytes and 1 float32 FLOP per element over n4k, n1m, odd. */
static void latencies(struct aka_shape_map *m, double n4k, double n1m, double odd)
{
    aka_shape_map_set(m, "n4k", n4k);
    aka_shape_map_set(m, "n1m", n1m);
    aka_shape_map_set(m, "odd", odd);
}

static void test_utilization(void **state)
{
    (void)state;
    struct aka_operator op;
    struct aka_shape_map lat = {0};
    struct aka_hw_peaks p = {0};
    struct aka_utilization u;
    load_vector_add(&op);
    latencies(&lat, 1.0, 100.0, 20.0); /* 121 us in all */
    double bytes = 12.0 * (4096 + 1048576 + 100003), flops = 4096 + 1048576 + 100003;
    /* no peak at all: unknown, with the wiki's reason */
    snprintf(p.why, sizeof(p.why), "no facts");
    aka_utilization_of(&op, &lat, &p, &u);
    assert_false(u.known);
    assert_string_equal(u.why, "no facts");
    /* bandwidth only: bytes / peak / time */
    add(&p, fact("t.bw", "memory_bandwidth", 200, "GB/s"));
    aka_utilization_of(&op, &lat, &p, &u);
    assert_true(u.known);
    double want_bw = 100.0 * bytes / 200e9 / 121e-6;
    assert_true(fabs(u.bandwidth_pct - want_bw) < 1e-9 * want_bw);
    assert_true(u.flop_pct < 0);
    assert_true(fabs(u.pct - want_bw) < 1e-9 * want_bw);
    assert_non_null(strstr(u.basis, "t.bw"));
    /* with a float32 FLOP peak the larger side wins */
    add(&p, fact("t.fp32", "fp32_tflops", 0.001, "TFLOPS"));
    aka_utilization_of(&op, &lat, &p, &u);
    double want_f = 100.0 * flops / 1e9 / 121e-6;
    assert_true(fabs(u.flop_pct - want_f) < 1e-9 * want_f);
    assert_true(fabs(u.pct - fmax(want_f, want_bw)) < 1e-9 * want_f);
    /* a shape without a latency: unknown, naming it */
    struct aka_shape_map part = {0};
    aka_shape_map_set(&part, "n4k", 1.0);
    aka_utilization_of(&op, &part, &p, &u);
    assert_false(u.known);
    assert_non_null(strstr(u.why, "n1m"));
    aka_shape_map_release(&part);
    aka_shape_map_release(&lat);
    aka_operator_release(&op);
}

/* A SOL-ExecBench operator declares no work: its bytes are its inputs read and its outputs
 * written once. rope: q and out are tokens x 8 x 128 bfloat16, cos and sin tokens x 64
 * float32, so 4,608 bytes per token over 1 + 37 + 1,024 + 8,192 tokens. */
static void test_utilization_sol_bytes(void **state)
{
    (void)state;
    struct aka_operator op;
    struct aka_shape_map lat = {0};
    struct aka_hw_peaks p = {0};
    struct aka_utilization u;
    struct aka_err err = AKA_ERR_INIT;
    struct strbuf dir = STRBUF_INIT;
    strbuf_addf(&dir, "%s/examples/ops/rope", AKA_SOURCE_DIR);
    assert_int_equal(aka_operator_load(dir.buf, &op, &err), 0);
    for (size_t i = 0; i < op.shapes.n; i++)
        aka_shape_map_set(&lat, op.shapes.v[i].id, 1.0); /* 4 us in all */
    add(&p, fact("t.bw", "hbm_bandwidth", 1000, "GB/s"));
    aka_utilization_of(&op, &lat, &p, &u);
    double bytes = 4608.0 * (1 + 37 + 1024 + 8192);
    assert_true(u.known);
    assert_true(fabs(u.bytes_per_s - bytes / 4e-6) < 1e-6 * u.bytes_per_s);
    assert_true(fabs(u.bandwidth_pct - 100.0 * bytes / 1e12 / 4e-6) < 1e-6);
    assert_true(u.flop_pct < 0); /* no FLOPs declared */
    assert_float_equal(aka_dtype_bytes(aka_dtype_parse("bfloat16")), 2.0, 0);
    assert_float_equal(aka_dtype_bytes(aka_dtype_parse("float4_e2m1")), 0.5, 0);
    assert_true(aka_dtype_bytes(AKA_DTYPE_NONE) < 0);
    aka_shape_map_release(&lat);
    aka_operator_release(&op);
    strbuf_release(&dir);
}

/* The roofline a record carries and `aka status` prints: achieved rates beside the
 * ceilings; this host's CPU ceilings come first from the per-user cache. */
static void test_roofline_record_and_line(void **state)
{
    (void)state;
    struct aka_operator op;
    struct aka_shape_map lat = {0};
    struct aka_hw_peaks p = {0};
    struct aka_utilization u;
    struct strbuf line = STRBUF_INIT, cache = STRBUF_INIT, file = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    char host[256] = "", tmpl[] = "/tmp/aka-ceil.XXXXXX";
    load_vector_add(&op);
    latencies(&lat, 1.0, 100.0, 20.0);
    double flops = 4096 + 1048576 + 100003;
    /* No ceiling: the achieved rates are still known, the percentages are not. */
    aka_utilization_of(&op, &lat, &p, &u);
    json_t *r = aka_roofline_json(&u);
    assert_true(fabs(json_number_value(json_object_get(r, "gflop_per_s")) - flops / 121e-6 / 1e9) <
                1e-6);
    assert_true(json_is_null(json_object_get(r, "flop_pct")));
    aka_roofline_line(r, &line);
    assert_string_equal(line.buf, "9.5 GFLOP/s \xc2\xb7 114.3 GB/s");
    json_decref(r);
    /* A cached measurement for this host and CPU is used, without measuring. */
    assert_non_null(mkdtemp(tmpl));
    strbuf_addf(&cache, "%s/aka", tmpl);
    assert_int_equal(aka_mkdir_p(cache.buf, 0755, &err), 0);
    strbuf_addf(&file, "%s/cpu_ceilings.json", cache.buf);
    gethostname(host, sizeof(host) - 1);
    setenv("XDG_CACHE_HOME", tmpl, 1);
    assert_int_equal(aka_cpu_ceilings(false, &p), -1); /* nothing cached, nothing measured */
    assert_non_null(strstr(p.why, "not measured yet"));
    json_t *doc =
        json_pack("{s:s, s:s, s:s, s:f, s:f}", "schema", "aka.cpu_ceilings.v1", "host", host, "cpu",
                  "unknown", "fp32_flops_per_s", 19e9, "copy_bytes_per_s", 2e12);
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    char buf[4096], *model = NULL;
    while (cpuinfo && !model && fgets(buf, sizeof(buf), cpuinfo))
        if (strncmp(buf, "model name", 10) == 0 && (model = strchr(buf, ':')))
            model[strcspn(model, "\n")] = '\0', model += 2;
    if (cpuinfo)
        fclose(cpuinfo);
    json_object_set_new(doc, "cpu", json_string(model ? model : "unknown"));
    assert_int_equal(aka_json_write_file(file.buf, doc, &err), 0);
    json_decref(doc);
    assert_int_equal(aka_cpu_ceilings(false, &p), 0);
    aka_utilization_of(&op, &lat, &p, &u);
    r = aka_roofline_json(&u);
    strbuf_reset(&line);
    aka_roofline_line(r, &line);
    assert_string_equal(line.buf,
                        "9.5 GFLOP/s of 19.0 (50.1%) \xc2\xb7 114.3 GB/s of 2000.0 (5.7%)");
    assert_non_null(strstr(json_string_value(json_object_get(r, "basis")), "measured"));
    json_decref(r);
    unsetenv("XDG_CACHE_HOME");
    struct aka_err ignored = AKA_ERR_INIT;
    aka_remove_tree(tmpl, &ignored);
    strbuf_release(&line);
    strbuf_release(&cache);
    strbuf_release(&file);
    aka_shape_map_release(&lat);
    aka_operator_release(&op);
}

static void test_utilization_wrong_type(void **state)
{
    (void)state;
    struct aka_operator op;
    struct aka_shape_map lat = {0};
    struct aka_hw_peaks p = {0};
    struct aka_utilization u;
    load_vector_add(&op);
    latencies(&lat, 1.0, 100.0, 20.0);
    /* a bf16 peak says nothing about a float32 kernel */
    add(&p, fact("t.bf16", "dense_bf16_tflops", 100, "TFLOPS"));
    aka_utilization_of(&op, &lat, &p, &u);
    assert_false(u.known);
    assert_non_null(strstr(u.why, "no peak"));
    aka_shape_map_release(&lat);
    aka_operator_release(&op);
}

/* The bundled wiki: an H200's peaks come from its own records; a bare sm_90 has no
 * chip, so chip-specific records of other Hopper parts must not be taken. */
static void test_peaks_from_wiki(void **state)
{
    (void)state;
    struct aka_hw_peaks p;
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/cache", aka_scratch_dir());
    setenv("XDG_CACHE_HOME", dir, 1);
    snprintf(dir, sizeof(dir), "%s/data", aka_scratch_dir());
    setenv("XDG_DATA_HOME", dir, 1); /* no user plugins */
    aka_hw_peaks_load(AKA_SOURCE_DIR, "", "nvidia/h200", &p);
    bool bw = false, bf16 = false;
    for (size_t i = 0; i < p.n; i++) {
        bw = bw || (strcmp(p.v[i].record, "nvidia.h200.hbm-bandwidth") == 0 &&
                    fabs(p.v[i].per_s - 4.8e12) < 1);
        bf16 = bf16 || (strcmp(p.v[i].record, "nvidia.h200.bf16-dense") == 0 &&
                        fabs(p.v[i].per_s - 989.5e12) < 1);
        assert_null(strstr(p.v[i].record, "h100"));
    }
    assert_true(bw && bf16);
    aka_hw_peaks_load(AKA_SOURCE_DIR, "", "nvidia/sm_90", &p);
    for (size_t i = 0; i < p.n; i++) /* no record of one chip (nvidia.h100.*, ...) */
        assert_true(strncmp(p.v[i].record, "nvidia.h1", 9) != 0 &&
                    strncmp(p.v[i].record, "nvidia.h2", 9) != 0 &&
                    strncmp(p.v[i].record, "nvidia.h8", 9) != 0);
    aka_hw_peaks_load(AKA_SOURCE_DIR, "", "cpu", &p);
    assert_int_equal(p.n, 0);
    assert_non_null(strstr(p.why, "platform cpu"));
}

/* ---- the latch's persistence and its effect on the stop rules (stops.c) ------------------- */

static char said[2048];

static void capture(const char *line, void *data)
{
    (void)data;
    snprintf(said + strlen(said), sizeof(said) - strlen(said), "%s\n", line);
}

static void write_file(const char *ws, const char *name, const char *text)
{
    struct strbuf p = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    aka_path_join(&p, ws, name);
    assert_int_equal(aka_write_file_atomic(p.buf, text, strlen(text), 0644, &err), 0);
    strbuf_release(&p);
}

/* A minimal valid memory record: kernels carry their commit, outcomes do not. Committed,
 * as a campaign's are: the stop rules read the committed records only. */
static void record(const char *ws, long v, const char *status)
{
    struct aka_git g;
    struct aka_err err = AKA_ERR_INIT;
    char name[32], text[640];
    bool kernel = strcmp(status, "baseline") == 0 || strcmp(status, "promoted") == 0;
    snprintf(name, sizeof(name), "memory/v%ld.json", v);
    snprintf(text, sizeof(text),
             "{\"version\": \"v%ld\", \"status\": \"%s\", \"timestamp\": "
             "\"2026-01-01T00:00:00Z\", \"git_commit_hash\": %s, \"quality_gate\": "
             "{\"result\": \"%s\"}, \"correctness\": {\"status\": \"PASS\"}, \"masked\": "
             "false, \"performance\": {\"latency_us\": 10, \"latency_us_geomean\": 10, "
             "\"measurement_status\": \"complete\", \"latency_us_by_shape\": {\"a\": 10}}}",
             v, status, kernel ? "\"0123456789abcdef0123456789abcdef01234567\"" : "null",
             kernel ? "PASS" : "FAIL");
    write_file(ws, name, text);
    aka_git_open(&g, ws);
    assert_int_equal(aka_git_add(&g, (const char *const[]){name, NULL}, &err), 0);
    assert_int_equal(aka_git_commit(&g, name, NULL, &err), 0);
    aka_git_close(&g);
}

/* Through episode_state.c, which keeps the other keys (the latch) as a campaign does. */
static void counters(const char *ws, long long episodes, long long consecutive)
{
    struct aka_episode_counters c = {
        .episodes = episodes, .consecutive = consecutive, .tokens = 10};
    struct aka_err err = AKA_ERR_INIT;
    assert_int_equal(aka_state_save(ws, &c, &err), 0);
}

static int check(struct aka_run *r, const struct aka_optimize_opts *o, struct aka_stops *s,
                 char *reason, struct aka_err *err)
{
    struct aka_episode_counters c;
    aka_state_load(r->ws.buf, &c);
    return aka_stops_check(r, o, s, &c, reason, 256, err);
}

static void test_latch_persists(void **state)
{
    (void)state;
    struct aka_optimize_opts o = opts();
    struct aka_run r = {.ws = STRBUF_INIT, .env = {.progress = capture}};
    struct aka_stops s;
    struct aka_err err = AKA_ERR_INIT;
    char reason[256] = "";
    aka_path_join(&r.ws, aka_scratch_dir(), "latch");
    assert_int_equal(aka_git_init(r.ws.buf, "main", &err), 0);
    for (const char *d = "memory"; d; d = strcmp(d, "memory") == 0 ? ".aka" : NULL) {
        struct strbuf p = STRBUF_INIT;
        aka_path_join(&p, r.ws.buf, d);
        assert_int_equal(aka_mkdir_p(p.buf, 0755, &err), 0);
        strbuf_release(&p);
    }
    record(r.ws.buf, 0, "baseline");
    record(r.ws.buf, 1, "rejected");
    record(r.ws.buf, 2, "rejected");
    counters(r.ws.buf, 2, 2);
    o.convert_after = 2;
    o.max_stall = 1;
    o.target_util = 0;
    aka_stops_init(&s, r.ws.buf);
    /* latched: the stall budget (1) is suppressed while the conversion is pending */
    assert_int_equal(check(&r, &o, &s, reason, &err), 0);
    assert_int_equal(s.conversion, AKA_CONVERSION_PENDING);
    assert_non_null(strstr(said, "Triton->Gluon latched"));
    /* persisted: a resumed campaign starts latched */
    assert_int_equal(aka_conversion_load(r.ws.buf), AKA_CONVERSION_PENDING);
    aka_stops_init(&s, r.ws.buf);
    assert_int_equal(s.conversion, AKA_CONVERSION_PENDING);
    assert_int_equal(s.conversion_since, 2);
    /* a failed conversion (v3 rejected, counter reset by hand) keeps it pending */
    record(r.ws.buf, 3, "rejected");
    counters(r.ws.buf, 3, 0);
    assert_int_equal(check(&r, &o, &s, reason, &err), 0);
    assert_int_equal(aka_conversion_load(r.ws.buf), AKA_CONVERSION_PENDING);
    /* a budget running out while pending is an error, not a stop */
    o.max_iters = 3;
    assert_int_equal(check(&r, &o, &s, reason, &err), -1);
    assert_int_equal(err.code, AKA_EXIT_FAILED);
    assert_non_null(strstr(err.msg, "mandatory Triton->Gluon conversion"));
    assert_non_null(strstr(err.msg, "budget: max-iters (v3 >= 3)"));
    /* a promotion after the latch: Gluon for good, and the stall rule is back */
    record(r.ws.buf, 4, "promoted");
    counters(r.ws.buf, 4, 0);
    o.max_iters = 9;
    assert_int_equal(check(&r, &o, &s, reason, &err), 0);
    assert_int_equal(aka_conversion_load(r.ws.buf), AKA_CONVERSION_GLUON);
    assert_non_null(strstr(said, "stays Gluon"));
    record(r.ws.buf, 5, "rejected");
    counters(r.ws.buf, 5, 1);
    assert_int_equal(check(&r, &o, &s, reason, &err), 1);
    assert_string_equal(reason, "stall: 1 episodes without promotion");
    assert_int_equal(aka_conversion_load(r.ws.buf), AKA_CONVERSION_GLUON);
    /* the next admission would be a goal episode (5 done, 1 > 0 unpromoted): goal
     * admission takes precedence over --max-stall, as upstream */
    o.goal_after_episodes = 5;
    o.goal_after_stalls = 0;
    reason[0] = '\0';
    assert_int_equal(check(&r, &o, &s, reason, &err), 0);
    assert_string_equal(reason, "");
    strbuf_release(&r.ws);
}

/* The episode hooks (conversion.c): brief directive, Gluon check, parity acceptance. */
static void test_conversion_hooks(void **state)
{
    (void)state;
    struct aka_run r = {.ws = STRBUF_INIT, .conversion = AKA_CONVERSION_PENDING};
    struct aka_optimize_opts o = opts();
    struct aka_episode ep = {.worktree = STRBUF_INIT, .status = AKA_MEM_PROMOTED};
    struct strbuf brief = STRBUF_INIT;
    struct aka_err err = AKA_ERR_INIT;
    r.camp.kernel = "kernel.py";
    r.env.repo_root = AKA_SOURCE_DIR;
    strbuf_addstr(&brief, "# Episode 7 (full)\n");
    assert_int_equal(aka_conversion_brief(&r, &o, &brief, &err), 0);
    assert_int_equal(strncmp(brief.buf, "# Episode 7 (full)\n", 19), 0); /* appended */
    assert_non_null(strstr(brief.buf, "port the incumbent to Gluon"));
    assert_non_null(strstr(brief.buf, "`kernel.py`"));
    assert_non_null(strstr(brief.buf, "at most 5% slower"));
    /* the candidate's kernel file decides */
    aka_path_join(&ep.worktree, aka_scratch_dir(), "wt");
    assert_int_equal(aka_mkdir_p(ep.worktree.buf, 0755, &err), 0);
    write_file(ep.worktree.buf, "kernel.py", "import triton\nimport triton.language as tl\n");
    aka_conversion_check_candidate(&r, &ep);
    assert_int_equal(ep.status, AKA_MEM_REJECTED);
    assert_non_null(strstr(ep.violation, "not a committed Gluon kernel"));
    write_file(ep.worktree.buf, "kernel.py", "from triton.experimental import gluon\n");
    ep.status = AKA_MEM_PROMOTED;
    aka_conversion_check_candidate(&r, &ep);
    assert_int_equal(ep.status, AKA_MEM_PROMOTED);
    /* latched to Gluon: dropping Gluon is rejected; no latch: nothing is checked */
    r.conversion = AKA_CONVERSION_GLUON;
    write_file(ep.worktree.buf, "kernel.py", "import triton\n");
    aka_conversion_check_candidate(&r, &ep);
    assert_non_null(strstr(ep.violation, "latched to Gluon"));
    r.conversion = AKA_CONVERSION_NONE;
    ep.status = AKA_MEM_PROMOTED;
    aka_conversion_check_candidate(&r, &ep);
    assert_int_equal(ep.status, AKA_MEM_PROMOTED);
    /* parity only while pending, recorded in the verification object */
    json_t *v = json_object();
    assert_false(aka_conversion_accepts(&r, 100, 100, v));
    r.conversion = AKA_CONVERSION_PENDING;
    assert_true(aka_conversion_accepts(&r, 104, 100, v));
    assert_true(json_is_true(json_object_get(json_object_get(v, "conversion_parity"), "accepted")));
    assert_false(aka_conversion_accepts(&r, 106, 100, v));
    assert_true(
        json_is_false(json_object_get(json_object_get(v, "conversion_parity"), "accepted")));
    strbuf_reset(&brief);
    r.conversion = AKA_CONVERSION_GLUON; /* the directive is for the pending port only */
    assert_int_equal(aka_conversion_brief(&r, &o, &brief, &err), 0);
    assert_int_equal(brief.len, 0);
    json_decref(v);
    strbuf_release(&brief);
    strbuf_release(&ep.worktree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_fast_full_goal),
        cmocka_unit_test(test_latch_transitions),
        cmocka_unit_test(test_latch_only_triton),
        cmocka_unit_test(test_parity),
        cmocka_unit_test(test_gluon_import),
        cmocka_unit_test(test_peaks_from_facts),
        cmocka_unit_test(test_utilization),
        cmocka_unit_test(test_utilization_wrong_type),
        cmocka_unit_test(test_utilization_sol_bytes),
        cmocka_unit_test(test_roofline_record_and_line),
        cmocka_unit_test(test_peaks_from_wiki),
        cmocka_unit_test(test_latch_persists),
        cmocka_unit_test(test_conversion_hooks),
    };
    return cmocka_run_group_tests(tests, aka_scratch_setup, aka_scratch_teardown);
}
