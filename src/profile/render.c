/*
 * render.c — a summary as JSON (what `aka profile --json` prints and a memory
 * record's profile_evidence holds) and as the short text an agent reads, with
 * the roofline context: achieved DRAM bandwidth and FLOP rate against the
 * target's ceilings from the wiki, naming the records they came from.
 */
#include "profile/profile.h"

#include <math.h>
#include <string.h>

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

/* Achieved FLOP rate in TFLOP/s (FLOPs per launch over the launch's time). */
static double tflops(const struct aka_profile_kernel *k)
{
    double f = k->v[AKA_PF_FLOP], ns = k->v[AKA_PF_DURATION_NS];
    return isnan(f) || !(ns > 0) ? NAN : f / ns / 1e3;
}

static json_t *roofline_json(const struct aka_profile_kernel *k,
                             const struct aka_profile_ceilings *c)
{
    double bw = k->v[AKA_PF_DRAM_GBPS], tf = tflops(k);
    json_t *o = json_object();
    json_object_set_new(o, "chip", json_string(c->chip));
    if (c->dram_gbps > 0 && !isnan(bw))
        json_object_set_new(o, "dram",
                            json_pack("{s:f, s:f, s:f, s:s, s:s}", "achieved_gbps", bw,
                                      "ceiling_gbps", c->dram_gbps, "pct_of_ceiling",
                                      100.0 * bw / c->dram_gbps, "record", c->dram_record, "source",
                                      c->dram_source ? c->dram_source : ""));
    if (c->tflops > 0 && !isnan(tf))
        json_object_set_new(o, "flop",
                            json_pack("{s:f, s:f, s:f, s:s, s:s}", "achieved_tflops", tf,
                                      "ceiling_tflops", c->tflops, "pct_of_ceiling",
                                      100.0 * tf / c->tflops, "record", c->flop_record, "source",
                                      c->flop_source ? c->flop_source : ""));
    return o;
}

static json_t *kernel_json(const struct aka_profile_kernel *k, const struct aka_profile_ceilings *c)
{
    json_t *o = json_pack("{s:s, s:s?, s:I, s:s}", "name", k->name, "launch", k->launch, "launches",
                          (json_int_t)k->launches, "bound", aka_profile_bound_names[k->bound]);
    for (int f = 0; f < AKA_PF_COUNT; f++)
        json_object_set_new(o, aka_profile_field_names[f], num_or_null(k->v[f]));
    json_object_set_new(o, "tflops", num_or_null(tflops(k)));
    json_t *st = json_array();
    for (size_t i = 0; i < k->stalls.n && i < AKA_PROFILE_TOP_STALLS; i++)
        json_array_append_new(st, json_pack("{s:s, s:f}", "reason", k->stalls.v[i].name,
                                            "cycles_per_issue", k->stalls.v[i].value));
    json_object_set_new(o, "top_stalls", st);
    if (c && c->chip)
        json_object_set_new(o, "roofline", roofline_json(k, c));
    return o;
}

json_t *aka_profile_to_json(const struct aka_profile_summary *s,
                            const struct aka_profile_ceilings *c)
{
    struct strbuf text = STRBUF_INIT;
    json_t *arr = json_array();
    for (size_t i = 0; i < s->kernels.n; i++)
        json_array_append_new(arr, kernel_json(&s->kernels.v[i], c));
    aka_profile_format(s, c, &text);
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:s}", "tool", s->tool, "source", s->source,
                          "launches", (json_int_t)s->launches, "kernels_left_out",
                          (json_int_t)s->dropped, "kernels", arr, "text", text.buf);
    strbuf_release(&text);
    return o;
}

static void add_value(struct strbuf *out, const char *label, double v, const char *unit)
{
    if (!isnan(v))
        strbuf_addf(out, "; %s %.1f%s", label, v, unit);
}

static void format_roofline(const struct aka_profile_kernel *k,
                            const struct aka_profile_ceilings *c, struct strbuf *out)
{
    double bw = k->v[AKA_PF_DRAM_GBPS], tf = tflops(k);
    if (!c || !c->chip)
        return;
    if (c->dram_gbps > 0 && !isnan(bw))
        strbuf_addf(out, "\n   roofline: DRAM %.0f of %.0f GB/s (%.1f%%; wiki %s, %s)", bw,
                    c->dram_gbps, 100.0 * bw / c->dram_gbps, c->dram_record,
                    c->dram_source ? c->dram_source : "no source");
    if (c->tflops > 0 && !isnan(tf))
        strbuf_addf(out, "\n   roofline: %.3f of %.1f TFLOP/s (%.1f%%; wiki %s, %s)", tf, c->tflops,
                    100.0 * tf / c->tflops, c->flop_record,
                    c->flop_source ? c->flop_source : "no source");
}

static void format_kernel(size_t i, const struct aka_profile_kernel *k,
                          const struct aka_profile_ceilings *c, struct strbuf *out)
{
    strbuf_addf(out, "%zu. ", i + 1);
    strbuf_addf_escaped(out, "%s", k->name);
    if (k->launch)
        strbuf_addf(out, " [%s]", k->launch);
    strbuf_addf(out, ": %.2f us x%ld, %s-bound", k->v[AKA_PF_DURATION_NS] / 1e3, k->launches,
                aka_profile_bound_names[k->bound]);
    add_value(out, "compute SOL", k->v[AKA_PF_COMPUTE_SOL_PCT], "%");
    add_value(out, "memory SOL", k->v[AKA_PF_MEMORY_SOL_PCT], "%");
    add_value(out, "DRAM", k->v[AKA_PF_DRAM_GBPS], " GB/s");
    add_value(out, "DRAM peak", k->v[AKA_PF_DRAM_PCT], "%");
    add_value(out, "occupancy", k->v[AKA_PF_OCCUPANCY_PCT], "%");
    if (!isnan(k->v[AKA_PF_REGISTERS]))
        strbuf_addf(out, "; %.0f regs/thread", k->v[AKA_PF_REGISTERS]);
    if (!isnan(k->v[AKA_PF_SMEM_BYTES]))
        strbuf_addf(out, "; %.0f B shared/block", k->v[AKA_PF_SMEM_BYTES]);
    for (size_t j = 0; j < k->stalls.n && j < AKA_PROFILE_TOP_STALLS; j++)
        strbuf_addf(out, "%s%s %.2f", j ? ", " : "; top stalls: ", k->stalls.v[j].name,
                    k->stalls.v[j].value);
    format_roofline(k, c, out);
    strbuf_addch(out, '\n');
}

void aka_profile_format(const struct aka_profile_summary *s, const struct aka_profile_ceilings *c,
                        struct strbuf *out)
{
    strbuf_addf(out, "%s profile (", s->tool);
    strbuf_addf_escaped(out, "%s", s->source);
    strbuf_addf(out, "): %zu kernel(s), %zu launch(es), by duration", s->kernels.n, s->launches);
    if (s->dropped)
        strbuf_addf(out, "; %zu kernel(s) left out by the selection", s->dropped);
    strbuf_addch(out, '\n');
    for (size_t i = 0; i < s->kernels.n; i++)
        format_kernel(i, &s->kernels.v[i], c, out);
    if (c && c->chip && !(c->dram_gbps > 0))
        strbuf_addf(out, "roofline: the wiki has no DRAM bandwidth record for %s\n", c->chip);
}
