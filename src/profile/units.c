/*
 * units.c — metric values and units as profilers print them, scaled to the
 * summary's units (ns, %, GB/s, bytes, counts). Nsight Compute prints SI
 * prefixes (Kbyte = 1000 bytes) and thousands separators ("12,352").
 */
#include "profile/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int aka_profile_number(const char *text, double *out)
{
    char buf[64];
    size_t n = 0;
    while (isspace((unsigned char)*text))
        text++;
    if (!*text || strcmp(text, "n/a") == 0 || strcmp(text, "N/A") == 0)
        return 1;
    for (const char *p = text; *p && n + 1 < sizeof(buf); p++)
        if (*p != ',') /* thousands separator */
            buf[n++] = *p;
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == buf || *end || errno == ERANGE || !isfinite(v) || strlen(text) >= sizeof(buf))
        return -1;
    *out = v;
    return 0;
}

struct unit_row {
    const char *unit;
    double scale;
};

static double lookup(const struct unit_row *t, const char *unit, int *ok)
{
    for (; t->unit; t++)
        if (strcmp(t->unit, unit) == 0)
            return t->scale;
    *ok = 0;
    return 1;
}

/* *ok is cleared for a unit this field cannot be in. */
double aka_profile_unit_scale(enum aka_profile_field f, const char *unit, int *ok)
{
    static const struct unit_row time[] = {
        {"nsecond", 1}, {"ns", 1},       {"usecond", 1e3}, {"us", 1e3}, {"msecond", 1e6},
        {"ms", 1e6},    {"second", 1e9}, {"s", 1e9},       {"", 1},     {NULL, 0}};
    /* ncu writes byte/second or byte/s (2025), byte or byte/block, by version. */
    static const struct unit_row rate[] = {{"byte/second", 1e-9},
                                           {"Kbyte/second", 1e-6},
                                           {"Mbyte/second", 1e-3},
                                           {"Gbyte/second", 1},
                                           {"Tbyte/second", 1e3},
                                           {"byte/s", 1e-9},
                                           {"Kbyte/s", 1e-6},
                                           {"Mbyte/s", 1e-3},
                                           {"Gbyte/s", 1},
                                           {"Tbyte/s", 1e3},
                                           {"B/s", 1e-9},
                                           {"GB/s", 1},
                                           {"TB/s", 1e3},
                                           {"", 1e-9}, /* no units row: byte/second */
                                           {NULL, 0}};
    static const struct unit_row bytes[] = {
        {"byte", 1},   {"Kbyte", 1e3},     {"Mbyte", 1e6},    {"KB", 1e3},          {"B", 1},
        {"KiB", 1024}, {"MiB", 1048576.0}, {"byte/block", 1}, {"Kbyte/block", 1e3}, {"", 1},
        {NULL, 0}};
    static const struct unit_row pct[] = {{"%", 1}, {"", 1}, {NULL, 0}};
    static const struct unit_row any[] = {{NULL, 0}};
    *ok = 1;
    switch (f) {
    case AKA_PF_DURATION_NS:
        return lookup(time, unit, ok);
    case AKA_PF_DRAM_GBPS:
        return lookup(rate, unit, ok);
    case AKA_PF_SMEM_BYTES:
        return lookup(bytes, unit, ok);
    case AKA_PF_COMPUTE_SOL_PCT:
    case AKA_PF_MEMORY_SOL_PCT:
    case AKA_PF_DRAM_PCT:
    case AKA_PF_OCCUPANCY_PCT:
        return lookup(pct, unit, ok);
    default: /* counts: registers/thread, instructions */
        (void)any;
        return 1;
    }
}
