/*
 * internal.h — what the profile module's files share and nobody else uses: the CSV
 * reader (csv.c), value and unit parsing (units.c), per-kernel accumulation (kernel.c)
 * and the two parsers (ncu.c, rocprof.c).
 */
#ifndef AKA_PROFILE_INTERNAL_H
#define AKA_PROFILE_INTERNAL_H

#include "profile/profile.h"

struct aka_csv_row {
    size_t line; /* 1-based line where the row starts */
    struct strvec fields;
};
struct aka_csv {
    struct {
        struct aka_csv_row *v;
        size_t n, alloc;
    } rows;
};
int aka_csv_parse(const char *label, const char *buf, size_t len, struct aka_csv *out,
                  struct aka_err *err);
void aka_csv_release(struct aka_csv *c);
long aka_csv_column(const struct aka_csv_row *header, const char *name);

/* A metric value: "" and "n/a" are not collected (1), a number is 0 (thousands
 * separators allowed), anything else -1. `unit` scales to the summary's units. */
int aka_profile_number(const char *text, double *out);
double aka_profile_unit_scale(enum aka_profile_field f, const char *unit, int *ok);

/* The kernel of that name and launch configuration (NULL: none known), added when new. */
struct aka_profile_kernel *aka_profile_kernel_get(struct aka_profile_summary *s, const char *name,
                                                  const char *launch);
void aka_profile_kernel_add(struct aka_profile_kernel *k, enum aka_profile_field f, double v);
void aka_profile_kernel_stall(struct aka_profile_kernel *k, const char *reason, double v);
void aka_profile_finalize(struct aka_profile_summary *s);

int aka_profile_parse_ncu(const char *label, const struct aka_csv *csv, size_t header,
                          struct aka_profile_summary *out, struct aka_err *err);
int aka_profile_parse_rocprof(const char *label, const struct aka_csv *csv,
                              struct aka_profile_summary *out, struct aka_err *err);

#endif
