/*
 * rocprof.c — rocprofv3's CSV output: counter_collection.csv (`--pmc`: one row
 * per counter per dispatch) or kernel_trace.csv (`--kernel-trace`: one row per
 * dispatch, no counters). Rows of one dispatch are gathered by Dispatch_Id;
 * the duration is End_Timestamp - Start_Timestamp (ns).
 *
 * Counters read: VALUBusy (compute SOL %), MemUnitBusy (memory SOL %),
 * OccupancyPercent, FETCH_SIZE + WRITE_SIZE (KiB moved to and from device
 * memory, over the duration: DRAM GB/s). rocprofv3 has no warp stall reasons.
 */
#include "profile/internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct counter {
    const char *name;
    enum aka_profile_field field;
    double scale; /* to the field's unit; DRAM: KiB to bytes, divided by ns below */
};

static const struct counter counters[] = {
    {"VALUBusy", AKA_PF_COMPUTE_SOL_PCT, 1},       {"MemUnitBusy", AKA_PF_MEMORY_SOL_PCT, 1},
    {"OccupancyPercent", AKA_PF_OCCUPANCY_PCT, 1}, {"FETCH_SIZE", AKA_PF_DRAM_GBPS, 1024},
    {"WRITE_SIZE", AKA_PF_DRAM_GBPS, 1024},
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

struct dispatch {
    char *id;
    struct aka_profile_kernel *k;
    double start, end, v[AKA_PF_COUNT];
    bool seen[AKA_PF_COUNT];
};

struct cols {
    const char *label;
    const struct aka_csv_row *header;
    long id, name, start, end, cname, cvalue, vgpr, lds;
};

static long first_col(const struct aka_csv_row *h, const char *a, const char *b)
{
    long c = aka_csv_column(h, a);
    return c >= 0 || !b ? c : aka_csv_column(h, b);
}

static int num(const struct cols *C, const struct aka_csv_row *r, long col, bool required,
               double *out, struct aka_err *err)
{
    int rc = col < 0 ? 1 : aka_profile_number(r->fields.v[col], out);
    if (rc < 0 || (rc > 0 && required))
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: expected a number; got '%s'", C->label,
                           r->line, C->header->fields.v[col], r->fields.v[col]);
    return rc;
}

static struct dispatch *dispatch_of(struct dispatch **v, size_t *n, const char *id)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].id, id) == 0)
            return &(*v)[i];
    *v = aka_xrealloc(*v, (*n + 1) * sizeof(**v));
    struct dispatch *d = &(*v)[(*n)++];
    memset(d, 0, sizeof(*d));
    d->id = aka_xstrdup(id);
    return d;
}

/* A dispatch's first row fixes its kernel, timestamps and resources. */
static int first_row(const struct cols *C, const struct aka_csv_row *r, struct dispatch *d,
                     struct aka_profile_summary *out, struct aka_err *err)
{
    double x;
    if (!*r->fields.v[C->name])
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: Kernel_Name: empty", C->label, r->line);
    d->k = aka_profile_kernel_get(out, r->fields.v[C->name], NULL);
    if (num(C, r, C->start, true, &d->start, err) < 0 || num(C, r, C->end, true, &d->end, err) < 0)
        return -1;
    if (d->end < d->start)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s:%zu: End_Timestamp: before Start_Timestamp (%.0f < %.0f)", C->label,
                           r->line, d->end, d->start);
    int rc = num(C, r, C->vgpr, false, &x, err);
    if (rc == 0)
        d->v[AKA_PF_REGISTERS] = x, d->seen[AKA_PF_REGISTERS] = true;
    int rc2 = rc < 0 ? -1 : num(C, r, C->lds, false, &x, err);
    if (rc2 == 0)
        d->v[AKA_PF_SMEM_BYTES] = x, d->seen[AKA_PF_SMEM_BYTES] = true;
    return rc < 0 || rc2 < 0 ? -1 : 0;
}

static int counter_row(const struct cols *C, const struct aka_csv_row *r, struct dispatch *d,
                       struct aka_err *err)
{
    double x;
    if (C->cname < 0)
        return 0;
    for (size_t i = 0; i < NCOUNTERS; i++) {
        if (strcmp(r->fields.v[C->cname], counters[i].name) != 0)
            continue;
        if (num(C, r, C->cvalue, true, &x, err) < 0)
            return -1;
        d->v[counters[i].field] += x * counters[i].scale;
        d->seen[counters[i].field] = true;
    }
    return 0;
}

static void flush(struct dispatch *v, size_t n, struct aka_profile_summary *out)
{
    for (size_t i = 0; i < n; i++) {
        struct dispatch *d = &v[i];
        double ns = d->end - d->start;
        d->v[AKA_PF_DURATION_NS] = ns;
        d->seen[AKA_PF_DURATION_NS] = true;
        if (d->seen[AKA_PF_DRAM_GBPS]) /* bytes per ns = GB/s */
            d->v[AKA_PF_DRAM_GBPS] = ns > 0 ? d->v[AKA_PF_DRAM_GBPS] / ns : 0;
        d->k->launches++;
        out->launches++;
        for (int f = 0; f < AKA_PF_COUNT; f++)
            if (d->seen[f])
                aka_profile_kernel_add(d->k, (enum aka_profile_field)f, d->v[f]);
    }
}

static int rows(const struct cols *C, const struct aka_csv *csv, struct aka_profile_summary *out,
                struct dispatch **v, size_t *n, struct aka_err *err)
{
    for (size_t i = 1; i < csv->rows.n; i++) {
        const struct aka_csv_row *r = &csv->rows.v[i];
        if (r->fields.n != C->header->fields.n)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s:%zu: row has %zu fields, the header (line %zu) has %zu "
                               "(truncated export?)",
                               C->label, r->line, r->fields.n, C->header->line,
                               C->header->fields.n);
        size_t before = *n;
        struct dispatch *d = dispatch_of(v, n, r->fields.v[C->id]);
        if ((*n > before && first_row(C, r, d, out, err) < 0) || counter_row(C, r, d, err) < 0)
            return -1;
    }
    return 0;
}

int aka_profile_parse_rocprof(const char *label, const struct aka_csv *csv,
                              struct aka_profile_summary *out, struct aka_err *err)
{
    const struct aka_csv_row *h = &csv->rows.v[0];
    struct cols C = {label,
                     h,
                     aka_csv_column(h, "Dispatch_Id"),
                     aka_csv_column(h, "Kernel_Name"),
                     aka_csv_column(h, "Start_Timestamp"),
                     aka_csv_column(h, "End_Timestamp"),
                     aka_csv_column(h, "Counter_Name"),
                     aka_csv_column(h, "Counter_Value"),
                     first_col(h, "VGPR_Count", "Arch_VGPR_Count"),
                     first_col(h, "LDS_Block_Size", "Group_Segment_Size")};
    const char *missing = C.id < 0                          ? "Dispatch_Id"
                          : C.start < 0                     ? "Start_Timestamp"
                          : C.end < 0                       ? "End_Timestamp"
                          : (C.cname < 0) != (C.cvalue < 0) ? "Counter_Name/Counter_Value"
                                                            : NULL;
    if (missing)
        return aka_err_set(err, AKA_EXIT_USAGE, "%s:%zu: %s: required column missing", label,
                           h->line, missing);
    struct dispatch *v = NULL;
    size_t n = 0;
    out->tool = "rocprofv3";
    int rc = rows(&C, csv, out, &v, &n, err);
    if (rc == 0)
        flush(v, n, out);
    for (size_t i = 0; i < n; i++)
        free(v[i].id);
    free(v);
    return rc;
}
