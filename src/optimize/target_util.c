/*
 * target_util.c — how close a version is to the roofline, for --target-util.
 *
 * Two halves: peaks (hardware facts from the GPU wiki, each with the record it
 * came from: DESIGN §8 forbids numbers from memory) and work (the operator's
 * roofline: a native operator's "roofline" expressions over its dims, an Atrex
 * operator's roofline.json per shape, a SOL-ExecBench operator's inputs and outputs read
 * and written once each, from its definition's shapes and dtypes). A side whose work or peak is
 * unknown is left out rather than guessed; with neither side known the utilization is unknown and
 * the caller says so instead of stopping.
 */
#include "contracts/operator.h"
#include "contracts/records.h"
#include "evaluator/evaluator.h"
#include "optimize/optimize.h"
#include "platform/platform.h"
#include "wiki/wiki.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- peaks ------------------------------------------------------------------------------ */

static const char *const bandwidth_quantities[] = {"hbm_bandwidth", "memory_bandwidth",
                                                   "dram_bandwidth", NULL};

struct unit {
    const char *name;
    double scale;
    bool bandwidth;
};

static const struct unit units[] = {
    {"TB/s", 1e12, true},   {"GB/s", 1e9, true},      {"MB/s", 1e6, true},
    {"B/s", 1.0, true},     {"TFLOPS", 1e12, false},  {"GFLOPS", 1e9, false},
    {"FLOP/s", 1.0, false}, {"TFLOP/s", 1e12, false}, {"GFLOP/s", 1e9, false},
    {NULL, 0, false},
};

static bool is_bandwidth(const char *quantity)
{
    for (int i = 0; bandwidth_quantities[i]; i++)
        if (strcmp(quantity, bandwidth_quantities[i]) == 0)
            return true;
    return false;
}

/* FLOP-rate quantities per element type: the wiki's names (runtime/plugins/gpu-wiki). */
static const char *const *flop_quantities(const char *type)
{
    static const char *const fp32[] = {"fp32_tflops", NULL};
    static const char *const fp64[] = {"fp64_tflops", "fp64_tensor_tflops", "fp64_matrix_tflops",
                                       NULL};
    static const char *const fp16[] = {"dense_fp16_tflops", NULL};
    static const char *const bf16[] = {"dense_bf16_tflops", NULL};
    static const char *const tf32[] = {"dense_tf32_tflops", NULL};
    static const char *const fp8[] = {"dense_fp8_tflops", NULL};
    static const struct {
        const char *type;
        const char *const *q;
    } map[] = {
        {"float32", fp32},   {"fp32", fp32},         {"float64", fp64},    {"fp64", fp64},
        {"float16", fp16},   {"fp16", fp16},         {"bfloat16", bf16},   {"bf16", bf16},
        {"fp32_tf32", tf32}, {"float8_e4m3fn", fp8}, {"float8_e5m2", fp8}, {"fp8_e4m3", fp8},
        {"fp8_e5m2", fp8},   {NULL, NULL},
    };
    for (int i = 0; map[i].type; i++)
        if (strcmp(map[i].type, type) == 0)
            return map[i].q;
    return NULL;
}

static bool is_flop_rate(const char *quantity)
{
    static const char *const types[] = {"fp32",      "fp64",     "fp16", "bf16",
                                        "fp32_tf32", "fp8_e4m3", NULL};
    for (int i = 0; types[i]; i++)
        for (const char *const *q = flop_quantities(types[i]); q && *q; q++)
            if (strcmp(*q, quantity) == 0)
                return true;
    return false;
}

static const struct aka_hw_peak *find_peak(const struct aka_hw_peaks *p, const char *quantity)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].quantity, quantity) == 0)
            return &p->v[i];
    return NULL;
}

bool aka_hw_peaks_add_record(struct aka_hw_peaks *p, const json_t *record)
{
    const json_t *fact = json_object_get(record, "fact");
    const char *q = json_string_value(json_object_get(fact, "quantity"));
    const char *unit = json_string_value(json_object_get(fact, "unit"));
    const char *id = json_string_value(json_object_get(record, "id"));
    double value = json_number_value(json_object_get(fact, "value"));
    if (!q || !unit || !id || !(value > 0) || !isfinite(value) || p->n >= AKA_HW_PEAKS_MAX ||
        find_peak(p, q) || !(is_bandwidth(q) || is_flop_rate(q)))
        return false;
    for (const struct unit *u = units; u->name; u++) {
        if (strcasecmp(u->name, unit) != 0 || u->bandwidth != is_bandwidth(q))
            continue;
        struct aka_hw_peak *k = &p->v[p->n++];
        snprintf(k->quantity, sizeof(k->quantity), "%s", q);
        snprintf(k->record, sizeof(k->record), "%s", id);
        k->per_s = value * u->scale;
        return true;
    }
    return false;
}

/* The wiki filters for a platform, and which scopes a record may have. A record
 * for another chip of the same architecture is not this machine's peak. */
struct scope {
    const char *vendor, *arch, *chip;
};

static void platform_scope(const struct aka_platform *pl, struct scope *s, char chip[48])
{
    memset(s, 0, sizeof(*s));
    if (pl->vendor == AKA_VENDOR_CPU) {
        s->vendor = "cpu";
#if defined(__x86_64__)
        s->chip = "x86-cpu"; /* the wiki's one x86-64 host chip */
#endif
        return;
    }
    s->vendor = aka_vendor_name(pl->vendor);
    if (pl->product[0]) {
        snprintf(chip, 48, "%s", pl->product);
        s->chip = chip;
    } else {
        s->arch = pl->arch;
    }
}

static bool scope_fits(const json_t *record, const struct scope *s)
{
    const json_t *sc = json_object_get(record, "scope");
    const char *chip = json_string_value(json_object_get(sc, "chip"));
    const char *arch = json_string_value(json_object_get(sc, "arch"));
    bool chip_ok = !chip || strcmp(chip, "any") == 0 || (s->chip && strcmp(chip, s->chip) == 0);
    /* Without a chip or arch filter, only architecture-neutral records describe us. */
    bool arch_ok = s->chip || s->arch || !arch || strcmp(arch, "any") == 0;
    return chip_ok && arch_ok;
}

static void take_hits(struct aka_hw_peaks *p, const struct aka_wiki_result *res,
                      const struct scope *s)
{
    for (size_t i = 0; i < res->hits.n; i++)
        if (scope_fits(res->hits.v[i].record, s))
            aka_hw_peaks_add_record(p, res->hits.v[i].record);
}

void aka_hw_peaks_load(const char *repo_root, const char *workspace, const char *platform,
                       struct aka_hw_peaks *p)
{
    struct aka_platform pl;
    struct aka_err err = AKA_ERR_INIT;
    struct aka_wiki *w = NULL;
    struct aka_wiki_config cfg = {.repo_root = repo_root, .workspace = workspace, .quiet = true};
    struct aka_wiki_result res;
    struct scope s;
    char chip[48] = "";
    memset(p, 0, sizeof(*p));
    aka_wiki_result_init(&res);
    if (aka_platform_parse(platform, NULL, &pl, &err) == 0) {
        platform_scope(&pl, &s, chip);
        struct aka_wiki_query q = {.vendor = s.vendor,
                                   .arch = s.arch,
                                   .chip = s.chip,
                                   .kind = "fact",
                                   .limit = AKA_WIKI_LIMIT_MAX};
        if (aka_wiki_open(&cfg, &w, &err) == 0 && aka_wiki_query(w, &q, &res, &err) == 0)
            take_hits(p, &res, &s);
    }
    if (p->n == 0 && err.msg[0])
        snprintf(p->why, sizeof(p->why), "%s", err.msg);
    else if (p->n == 0)
        snprintf(p->why, sizeof(p->why),
                 "the GPU wiki has no peak bandwidth or FLOP-rate fact for platform %s", platform);
    aka_wiki_result_release(&res);
    aka_wiki_close(w);
}

/* ---- work ------------------------------------------------------------------------------- */

/* One shape's roofline work: bytes moved, and FLOPs per element type. */
struct work {
    double bytes; /* < 0: unknown */
    struct {
        const char *type;
        double flops;
    } f[8];
    size_t nf;
    bool flops_known;
};

static double eval_expr(const char *expr, const struct aka_shape *s)
{
    long long v = 0;
    char why[128];
    if (!expr || aka_shape_expr_eval(expr, &s->dims, &v, why, sizeof(why)) < 0 || v < 0)
        return -1;
    return (double)v;
}

static void native_work(const struct aka_operator *op, const struct aka_shape *s, struct work *w)
{
    const char *type = op->outputs.n ? aka_dtype_name(op->outputs.v[0].dtype) : NULL;
    double flops = eval_expr(op->native.roofline_flops, s);
    w->bytes = eval_expr(op->native.roofline_bytes, s);
    w->flops_known = flops >= 0 && type;
    if (w->flops_known) {
        w->f[0].type = type; /* the FLOP rate is the output's element type's */
        w->f[0].flops = flops;
        w->nf = 1;
    }
}

static void atrex_work(const struct aka_operator *op, const struct aka_shape *s, struct work *w)
{
    const json_t *sh = json_object_get(json_object_get(op->atrex.roofline, "shapes"), s->id);
    const json_t *rd = json_object_get(sh, "semantic_Q_read_bytes");
    const json_t *wr = json_object_get(sh, "semantic_Q_write_bytes");
    const json_t *wf = json_object_get(sh, "semantic_W_flops"), *v;
    const char *type;
    w->bytes = rd && wr ? json_number_value(rd) + json_number_value(wr) : -1;
    w->flops_known = json_is_object(wf);
    json_object_foreach((json_t *)wf, type, v)
    {
        if (w->nf == sizeof(w->f) / sizeof(w->f[0])) {
            w->flops_known = false;
            break;
        }
        w->f[w->nf].type = type;
        w->f[w->nf++].flops = json_number_value(v);
    }
}

/* A SOL-ExecBench definition declares no work, only its tensors: the bytes are every input
 * read once and every output written once (scalars carry none), the least any kernel
 * moves when it touches every element. An operator that reads only part of an input (a
 * cache indexed by position) moves less, so its percentage then reads high. */
static double tensor_bytes(const struct aka_tensor_specs *t, const struct aka_shape *s)
{
    double sum = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct aka_tensor_spec *ts = &t->v[i];
        if (ts->is_scalar)
            continue;
        double n = aka_dtype_bytes(ts->dtype);
        if (!ts->shape_declared || n < 0)
            return -1;
        for (size_t d = 0; d < ts->shape.n; d++) {
            double dim = eval_expr(ts->shape.v[d], s);
            if (dim < 0)
                return -1;
            n *= dim;
        }
        sum += n;
    }
    return sum;
}

static void sol_work(const struct aka_operator *op, const struct aka_shape *s, struct work *w)
{
    double in = tensor_bytes(&op->inputs, s), out = tensor_bytes(&op->outputs, s);
    w->bytes = in < 0 || out < 0 ? -1 : in + out;
}

static void shape_work(const struct aka_operator *op, const struct aka_shape *s, struct work *w)
{
    memset(w, 0, sizeof(*w));
    w->bytes = -1;
    if (op->layout == AKA_LAYOUT_NATIVE)
        native_work(op, s, w);
    else if (op->layout == AKA_LAYOUT_ATREX && op->atrex.roofline)
        atrex_work(op, s, w);
    else if (op->layout == AKA_LAYOUT_SOL)
        sol_work(op, s, w);
}

/* Seconds this shape would take at the FLOP peaks (a type with FLOPs but no peak: -1). */
static double flop_seconds(const struct work *w, const struct aka_hw_peaks *p, const char **used)
{
    double t = 0;
    for (size_t i = 0; i < w->nf; i++) {
        if (w->f[i].flops <= 0)
            continue;
        const struct aka_hw_peak *k = NULL;
        const char *const *qs = flop_quantities(w->f[i].type);
        for (; qs && *qs && !k; qs++)
            k = find_peak(p, *qs);
        if (!k)
            return -1;
        *used = k->record;
        t += w->f[i].flops / k->per_s;
    }
    return t;
}

/* ---- utilization ------------------------------------------------------------------------ */

struct totals {
    double seconds, bytes, flop_seconds, flops;
    bool bytes_known, flops_known, flop_counts_known;
    const char *flop_record;
};

static int add_shape(const struct aka_operator *op, const struct aka_shape *s,
                     const struct aka_shape_map *lat, const struct aka_hw_peaks *p,
                     struct totals *t, struct aka_utilization *u)
{
    struct work w;
    double us = aka_shape_map_get(lat, s->id);
    if (!(us > 0) || !isfinite(us)) {
        snprintf(u->why, sizeof(u->why), "no latency for shape %s", s->id);
        return -1;
    }
    shape_work(op, s, &w);
    double fs = w.flops_known ? flop_seconds(&w, p, &t->flop_record) : -1;
    t->seconds += us * 1e-6;
    t->bytes += w.bytes;
    t->flop_seconds += fs;
    for (size_t i = 0; i < w.nf; i++)
        t->flops += w.f[i].flops;
    t->flop_counts_known = t->flop_counts_known && w.flops_known;
    t->bytes_known = t->bytes_known && w.bytes >= 0;
    t->flops_known = t->flops_known && fs >= 0;
    return 0;
}

static void describe(const struct totals *t, const struct aka_hw_peak *bw,
                     struct aka_utilization *u)
{
    int n = 0;
    if (u->bandwidth_pct >= 0)
        n = snprintf(u->basis, sizeof(u->basis), "bandwidth %.1f%% of %s %.6g B/s (%s)",
                     u->bandwidth_pct, bw->quantity, bw->per_s, bw->record);
    if (u->flop_pct >= 0 && n >= 0 && (size_t)n < sizeof(u->basis))
        snprintf(u->basis + n, sizeof(u->basis) - (size_t)n, "%sFLOP rate %.1f%% (%s)",
                 n ? ", " : "", u->flop_pct, t->flop_record ? t->flop_record : "no FLOPs");
}

void aka_utilization_of(const struct aka_operator *op, const struct aka_shape_map *lat_us,
                        const struct aka_hw_peaks *p, struct aka_utilization *u)
{
    struct totals t = {.bytes_known = true, .flops_known = true, .flop_counts_known = true};
    const struct aka_hw_peak *bw = NULL;
    memset(u, 0, sizeof(*u));
    u->flop_pct = u->bandwidth_pct = -1;
    u->flops_per_s = u->bytes_per_s = u->peak_flops_per_s = u->peak_bytes_per_s = -1;
    for (int i = 0; bandwidth_quantities[i] && !bw; i++)
        bw = find_peak(p, bandwidth_quantities[i]);
    for (size_t i = 0; i < op->shapes.n; i++)
        if (add_shape(op, &op->shapes.v[i], lat_us, p, &t, u) < 0)
            return;
    if (op->shapes.n == 0 || !(t.seconds > 0)) {
        snprintf(u->why, sizeof(u->why), "the operator has no measured shape");
        return;
    }
    if (t.bytes_known)
        u->bytes_per_s = t.bytes / t.seconds;
    if (t.bytes_known && bw) {
        u->bandwidth_pct = 100.0 * t.bytes / bw->per_s / t.seconds;
        u->peak_bytes_per_s = bw->per_s;
    }
    if (t.flop_counts_known && t.flops > 0)
        u->flops_per_s = t.flops / t.seconds;
    if (t.flops_known && t.flop_record) { /* some FLOPs met a peak: the FLOP side is real */
        u->flop_pct = 100.0 * t.flop_seconds / t.seconds;
        u->peak_flops_per_s = t.flop_seconds > 0 ? t.flops / t.flop_seconds : -1;
    }
    u->known = u->bandwidth_pct >= 0 || u->flop_pct >= 0;
    u->pct = fmax(u->bandwidth_pct, u->flop_pct);
    if (u->known)
        describe(&t, bw, u);
    else if (p->n == 0)
        snprintf(u->why, sizeof(u->why), "%s", p->why);
    else if (!t.bytes_known && !t.flops_known)
        snprintf(u->why, sizeof(u->why), "the operator declares no roofline");
    else
        snprintf(u->why, sizeof(u->why),
                 "the wiki has no peak for this roofline (a bandwidth, or a FLOP rate for "
                 "the operator's element type)");
}

/* ---- the roofline of a version, for records and status ---------------------------------- */

static json_t *num_or_null(double v, double scale)
{
    return v >= 0 && isfinite(v) ? json_real(v / scale) : json_null();
}

json_t *aka_roofline_json(const struct aka_utilization *u)
{
    if (!u->known && !(u->flops_per_s >= 0) && !(u->bytes_per_s >= 0))
        return json_pack("{s:s}", "unknown", u->why);
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:s}", "gflop_per_s",
                     num_or_null(u->flops_per_s, 1e9), "gb_per_s", num_or_null(u->bytes_per_s, 1e9),
                     "peak_gflop_per_s", num_or_null(u->peak_flops_per_s, 1e9), "peak_gb_per_s",
                     num_or_null(u->peak_bytes_per_s, 1e9), "flop_pct", num_or_null(u->flop_pct, 1),
                     "bandwidth_pct", num_or_null(u->bandwidth_pct, 1), "basis",
                     u->known ? u->basis : u->why);
}

static void side(struct strbuf *out, const json_t *r, const char *got, const char *peak,
                 const char *pct, const char *unit)
{
    const json_t *g = json_object_get(r, got), *p = json_object_get(r, peak);
    const json_t *c = json_object_get(r, pct);
    if (json_is_number(g))
        strbuf_addf(out, "%.1f %s", json_number_value(g), unit);
    else
        strbuf_addf(out, "— %s", unit);
    if (json_is_number(p) && json_is_number(c))
        strbuf_addf(out, " of %.1f (%.1f%%)", json_number_value(p), json_number_value(c));
}

void aka_roofline_line(const json_t *roofline, struct strbuf *out)
{
    const char *unknown = json_string_value(json_object_get(roofline, "unknown"));
    if (!json_is_object(roofline)) {
        strbuf_addstr(out, "—");
        return;
    }
    if (unknown) {
        strbuf_addf(out, "— (%s)", unknown);
        return;
    }
    side(out, roofline, "gflop_per_s", "peak_gflop_per_s", "flop_pct", "GFLOP/s");
    strbuf_addstr(out, " · ");
    side(out, roofline, "gb_per_s", "peak_gb_per_s", "bandwidth_pct", "GB/s");
}

json_t *aka_roofline_of(const char *repo_root, const char *workspace, const char *platform,
                        const struct aka_operator *op, const json_t *performance, bool measure)
{
    struct aka_shape_map lat = {0};
    struct aka_hw_peaks p;
    struct aka_utilization u;
    struct aka_platform pl;
    struct aka_err ignored = AKA_ERR_INIT;
    const char *id;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(performance, "latency_us_by_shape"), id, v)
    {
        if (json_is_number(v))
            aka_shape_map_set(&lat, id, json_number_value(v));
    }
    memset(&p, 0, sizeof(p));
    snprintf(p.why, sizeof(p.why), "no ceilings read (the wiki is not opened here)");
    if (repo_root) /* opening the wiki may build its cache: never from a read-only command */
        aka_hw_peaks_load(repo_root, workspace, platform, &p);
    if (aka_platform_parse(platform, NULL, &pl, &ignored) == 0 && pl.vendor == AKA_VENDOR_CPU)
        aka_cpu_ceilings(measure, &p);
    aka_utilization_of(op, &lat, &p, &u);
    aka_shape_map_release(&lat);
    return aka_roofline_json(&u);
}
