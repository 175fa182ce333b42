/*
 * parse.c — reading an export: recognise its format from the header, hand it
 * to the matching parser, refuse one without kernel rows; then selection by
 * kernel name and count.
 */
#include "base/fs.h"
#include "profile/internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* ncu writes "==PROF==" / "==WARNING==" lines before the CSV when they share a stream. */
static bool log_line(const struct aka_csv_row *r)
{
    return r->fields.n && strncmp(r->fields.v[0], "==", 2) == 0;
}

static int dispatch(const char *label, const struct aka_csv *csv, struct aka_profile_summary *out,
                    struct aka_err *err)
{
    for (size_t i = 0; i < csv->rows.n; i++) {
        const struct aka_csv_row *r = &csv->rows.v[i];
        if (log_line(r))
            continue;
        if (aka_csv_column(r, "Kernel Name") >= 0 && aka_csv_column(r, "Metric Name") >= 0)
            return aka_err_set(err, AKA_EXIT_USAGE,
                               "%s:%zu: header: this is ncu's details page (a 'Metric Name' "
                               "column); aka reads the raw page: ncu --csv --page raw",
                               label, r->line);
        if (aka_csv_column(r, "Kernel Name") >= 0)
            return aka_profile_parse_ncu(label, csv, i, out, err);
        if (i == 0 && aka_csv_column(r, "Kernel_Name") >= 0)
            return aka_profile_parse_rocprof(label, csv, out, err);
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "%s:%zu: header: expected a profiler export with a 'Kernel Name' "
                           "column (ncu --csv --page raw) or 'Kernel_Name' (rocprofv3 CSV)",
                           label, r->line);
    }
    return aka_err_set(err, AKA_EXIT_USAGE, "%s: empty export (no header row)", label);
}

int aka_profile_parse_buffer(const char *label, const char *buf, size_t len,
                             struct aka_profile_summary *out, struct aka_err *err)
{
    struct aka_csv csv;
    aka_profile_summary_init(out);
    if (aka_csv_parse(label, buf, len, &csv, err) < 0)
        return -1;
    int rc = dispatch(label, &csv, out, err);
    aka_csv_release(&csv);
    if (rc == 0 && out->launches == 0)
        rc = aka_err_set(err, AKA_EXIT_USAGE,
                         "%s: no kernel rows (an empty or truncated export, or no kernel matched "
                         "the profiler's filter)",
                         label);
    if (rc < 0) {
        aka_profile_summary_release(out);
        return -1;
    }
    out->source = aka_xstrdup(label);
    aka_profile_finalize(out);
    return 0;
}

int aka_profile_parse_file(const char *path, struct aka_profile_summary *out, struct aka_err *err)
{
    struct strbuf buf = STRBUF_INIT;
    aka_profile_summary_init(out);
    int rc = aka_read_file(path, &buf, AKA_READ_LIMIT_DEFAULT, err);
    if (rc == 0)
        rc = aka_profile_parse_buffer(path, buf.buf, buf.len, out, err);
    strbuf_release(&buf);
    return rc;
}

static void drop_kernel(struct aka_profile_summary *s, size_t i)
{
    struct aka_profile_kernel *k = &s->kernels.v[i];
    for (size_t j = 0; j < k->stalls.n; j++)
        free(k->stalls.v[j].name);
    free(k->stalls.v);
    free(k->name);
    free(k->launch);
    memmove(k, k + 1, (s->kernels.n - i - 1) * sizeof(*k));
    s->kernels.n--;
    s->dropped++;
}

int aka_profile_select(struct aka_profile_summary *s, const char *regex, size_t top,
                       struct aka_err *err)
{
    regex_t re;
    if (regex && regcomp(&re, regex, REG_EXTENDED | REG_NOSUB) != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--kernel-regex: expected a POSIX extended regular expression; got "
                           "'%s'",
                           regex);
    for (size_t i = s->kernels.n; regex && i-- > 0;)
        if (regexec(&re, s->kernels.v[i].name, 0, NULL, 0) != 0)
            drop_kernel(s, i);
    if (regex)
        regfree(&re);
    while (top && s->kernels.n > top)
        drop_kernel(s, s->kernels.n - 1);
    return 0;
}
