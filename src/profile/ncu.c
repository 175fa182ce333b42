/*
 * ncu.c — Nsight Compute's raw page (`ncu --csv --page raw`) and the PPU
 * vendor profiler's CSV, which has the same layout with its own metric names
 * (gpu__ -> ppu__, sm__ -> cu__; anchor-sandbox §14.5).
 *
 * Layout: a header row ("ID", ..., "Kernel Name", ..., one column per metric),
 * then a units row (empty ID), then one row per profiled launch. The raw page
 * is used rather than the details page because it has one row per launch with
 * every collected metric under its stable metric name, whatever section
 * collected it.
 */
#include "profile/internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct metric {
    enum aka_profile_field field;
    const char *ncu, *ppu;
    double weight;
    const char *alt; /* another ncu version's name, read when `ncu` is absent */
};

/* A field is the weighted sum of the columns present (shared memory: static +
 * dynamic; FLOPs: add + mul + 2 fma, in FP16, FP32 and FP64). */
static const struct metric metrics[] = {
    {AKA_PF_DURATION_NS, "gpu__time_duration.sum", "ppu__time_duration.sum", 1, NULL},
    {AKA_PF_COMPUTE_SOL_PCT, "sm__throughput.avg.pct_of_peak_sustained_elapsed",
     "cu__throughput.avg.pct_of_peak_sustained_elapsed", 1, NULL},
    {AKA_PF_MEMORY_SOL_PCT, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
     "ppu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 1, NULL},
    {AKA_PF_DRAM_PCT, "dram__throughput.avg.pct_of_peak_sustained_elapsed",
     "ppu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 1,
     "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    {AKA_PF_DRAM_GBPS, "dram__bytes.sum.per_second", NULL, 1, NULL},
    {AKA_PF_OCCUPANCY_PCT, "sm__warps_active.avg.pct_of_peak_sustained_active",
     "cu__warps_active.avg.pct_of_peak_sustained_active", 1, NULL},
    {AKA_PF_REGISTERS, "launch__registers_per_thread", NULL, 1, NULL},
    {AKA_PF_SMEM_BYTES, "launch__shared_mem_per_block_static", NULL, 1, NULL},
    {AKA_PF_SMEM_BYTES, "launch__shared_mem_per_block_dynamic", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", NULL, 2, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", NULL, 2, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", NULL, 1, NULL},
    {AKA_PF_FLOP, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", NULL, 2, NULL},
};
#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

#define STALL_PREFIX "smsp__average_warps_issue_stalled_"
#define STALL_SUFFIX "_per_issue_active.ratio"

struct layout {
    const char *label;
    const struct aka_csv_row *header, *units;
    long name_col, grid_col, block_col;
    long col[NMETRICS]; /* -1: not in this export */
};

static const char *column_name(const struct layout *L, size_t col)
{
    return L->header->fields.v[col];
}

static const char *unit_of(const struct layout *L, size_t col)
{
    return L->units && col < L->units->fields.n ? L->units->fields.v[col] : "";
}

/* One cell into *out, scaled; 1 when not collected. */
static int cell(const struct layout *L, const struct aka_csv_row *r, size_t col,
                enum aka_profile_field f, double *out, struct aka_err *err)
{
    int ok = 1;
    int rc = aka_profile_number(r->fields.v[col], out);
    if (rc < 0)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: expected a number; got '%s'", L->label,
                           r->line, column_name(L, col), r->fields.v[col]);
    double scale = aka_profile_unit_scale(f, unit_of(L, col), &ok);
    if (!ok)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: unexpected unit '%s' for %s", L->label,
                           L->units ? L->units->line : r->line, column_name(L, col),
                           unit_of(L, col), aka_profile_field_names[f]);
    *out *= scale;
    return rc;
}

static int add_fields(const struct layout *L, const struct aka_csv_row *r,
                      struct aka_profile_kernel *k, struct aka_err *err)
{
    double sum[AKA_PF_COUNT] = {0};
    bool seen[AKA_PF_COUNT] = {false};
    for (size_t m = 0; m < NMETRICS; m++) {
        double v;
        int rc = L->col[m] < 0 ? 1 : cell(L, r, (size_t)L->col[m], metrics[m].field, &v, err);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            sum[metrics[m].field] += metrics[m].weight * v;
            seen[metrics[m].field] = true;
        }
    }
    if (!seen[AKA_PF_DURATION_NS])
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: no duration for kernel '%s'", L->label,
                           r->line, column_name(L, (size_t)L->col[0]), k->name);
    for (int f = 0; f < AKA_PF_COUNT; f++)
        if (seen[f])
            aka_profile_kernel_add(k, (enum aka_profile_field)f, sum[f]);
    return 0;
}

static int add_stalls(const struct layout *L, const struct aka_csv_row *r,
                      struct aka_profile_kernel *k, struct aka_err *err)
{
    size_t pl = strlen(STALL_PREFIX), sl = strlen(STALL_SUFFIX);
    for (size_t c = 0; c < L->header->fields.n; c++) {
        const char *h = column_name(L, c);
        size_t n = strlen(h);
        double v;
        if (n <= pl + sl || strncmp(h, STALL_PREFIX, pl) || strcmp(h + n - sl, STALL_SUFFIX))
            continue;
        int rc = aka_profile_number(r->fields.v[c], &v);
        if (rc < 0)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: expected a number; got '%s'",
                               L->label, r->line, h, r->fields.v[c]);
        if (rc == 0) {
            char reason[96];
            snprintf(reason, sizeof(reason), "%.*s", (int)(n - pl - sl), h + pl);
            aka_profile_kernel_stall(k, reason, v);
        }
    }
    return 0;
}

static int layout_of(const char *label, const struct aka_csv *csv, size_t header, struct layout *L,
                     struct aka_err *err)
{
    bool ppu = aka_csv_column(&csv->rows.v[header], "ppu__time_duration.sum") >= 0;
    memset(L, 0, sizeof(*L));
    L->label = label;
    L->header = &csv->rows.v[header];
    L->name_col = aka_csv_column(L->header, "Kernel Name");
    L->grid_col = aka_csv_column(L->header, "Grid Size");
    L->block_col = aka_csv_column(L->header, "Block Size");
    for (size_t m = 0; m < NMETRICS; m++) {
        const char *name = ppu && metrics[m].ppu ? metrics[m].ppu : metrics[m].ncu;
        L->col[m] = aka_csv_column(L->header, name);
        if (L->col[m] < 0 && metrics[m].alt) /* ncu 2025 */
            L->col[m] = aka_csv_column(L->header, metrics[m].alt);
    }
    if (L->col[0] < 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s:%zu: %s: required column missing (profile with at least the "
                           "survey level)",
                           label, L->header->line, ppu ? metrics[0].ppu : metrics[0].ncu);
    /* The units row: the first row after the header, with an empty ID. */
    if (header + 1 < csv->rows.n && csv->rows.v[header + 1].fields.n &&
        !*csv->rows.v[header + 1].fields.v[0])
        L->units = &csv->rows.v[header + 1];
    return 0;
}

int aka_profile_parse_ncu(const char *label, const struct aka_csv *csv, size_t header,
                          struct aka_profile_summary *out, struct aka_err *err)
{
    struct layout L;
    if (layout_of(label, csv, header, &L, err) < 0)
        return -1;
    out->tool = aka_csv_column(L.header, "ppu__time_duration.sum") >= 0 ? "ppu-acu" : "ncu";
    for (size_t i = header + 1 + (L.units != NULL); i < csv->rows.n; i++) {
        const struct aka_csv_row *r = &csv->rows.v[i];
        if (r->fields.n != L.header->fields.n)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s:%zu: row has %zu fields, the header (line %zu) has %zu "
                               "(truncated export?)",
                               label, r->line, r->fields.n, L.header->line, L.header->fields.n);
        const char *name = r->fields.v[L.name_col];
        if (!*name)
            return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: Kernel Name: empty", label, r->line);
        struct strbuf launch = STRBUF_INIT;
        if (L.grid_col >= 0 && L.block_col >= 0)
            strbuf_addf(&launch, "grid %s block %s", r->fields.v[L.grid_col],
                        r->fields.v[L.block_col]);
        struct aka_profile_kernel *k =
            aka_profile_kernel_get(out, name, launch.len ? launch.buf : NULL);
        strbuf_release(&launch);
        k->launches++;
        out->launches++;
        if (add_fields(&L, r, k, err) < 0 || add_stalls(&L, r, k, err) < 0)
            return -1;
    }
    return 0;
}
