/*
 * inspect.c — `aka inspect --op-dir DIR [--json]`: show what aka makes of an operator.
 *
 * Parses flags, loads the operator (contracts/operator.h) and the runtime pins
 * in force (contracts/pins.h), and prints them. It is the dry run of
 * everything a campaign would pin at its start, so it must never write: not
 * into the op dir, not anywhere else. Bad input exits 2 with the loader's
 * one-line message.
 */
#include "base/json.h"
#include "base/opts.h"
#include "cmd/cmd.h"
#include "contracts/operator.h"
#include "contracts/pins.h"
#include "platform/platform.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] =
    "usage: aka inspect --op-dir DIR [--platform P [--arch A]] [--json]\n"
    "       aka inspect --platform P [--arch A] [--json]\n\n"
    "Detect the operator layout of DIR (SOL-ExecBench, Atrex-Bench or aka native),\n"
    "validate every file it carries, and print what a campaign would pin:\n"
    "inputs/outputs with dtypes, shape count, tolerances, the distributed-evaluation\n"
    "and source-policy decisions, and the runtime pins in force. With --platform,\n"
    "also what aka makes of the platform: vendor, architecture, the device nodes a\n"
    "job on GPU 0 gets, frameworks, timing, clock policy and whether this project\n"
    "has run on that hardware (\"not validated on hardware\" otherwise). Nothing is\n"
    "written.\n\n";
static const char notes_text[] =
    "\nExit status: 0 when everything is valid; 2 on bad input, with one line naming\n"
    "the file and field (see docs/layouts.md) or the flag and value.\n";

struct inspect_args {
    const char *op_dir, *platform, *arch;
    bool json;
};

#define OFF(f) offsetof(struct inspect_args, f)

static const struct aka_opt flags[] = {
    {.name = "--op-dir", .off = OFF(op_dir), .metavar = "DIR", .help = "the operator directory"},
    {.name = "--platform",
     .off = OFF(platform),
     .metavar = "P",
     .help = "a platform name (docs/platforms.md)"},
    {.name = "--arch",
     .off = OFF(arch),
     .metavar = "A",
     .help = "its architecture instead of the table's"},
    {.name = "--json",
     .off = OFF(json),
     .kind = AKA_OPT_BOOL,
     .help = "print one JSON object instead of text"},
    {.name = NULL},
};

/* 0 parsed, 1 help printed, -1 usage error. */
static int parse_args(int argc, char **argv, struct inspect_args *a, struct aka_err *err)
{
    struct aka_opt_group groups[] = {{.table = flags, .base = a}, {0}};
    static const struct aka_opt_doc doc = {"inspect", usage_text, notes_text};
    struct aka_opt_cmd c = {.doc = &doc, .groups = groups};
    int rc = aka_opts_parse(&c, argc, argv, 1, err);
    if (rc == 0 && (!a->op_dir || !*a->op_dir) && !a->platform)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "inspect: --op-dir: required (see aka inspect --help)");
    if (rc == 0 && a->arch && !a->platform)
        return aka_err_set(err, AKA_EXIT_USAGE, "inspect: --arch: needs --platform");
    return rc;
}

static void print_platform(const struct aka_platform *p)
{
    static const char *const from[] = {"none", "--arch", "the platform table",
                                       "to be probed on the machine"};
    struct aka_dev_nodes nodes;
    struct aka_err ignored = AKA_ERR_INIT;
    int gpu0 = 0;
    printf("platform:      %s (%s), %s\n", p->name, aka_vendor_label(p->vendor),
           aka_platform_validation(p));
    if (p->arch_from == AKA_ARCH_NONE)
        printf("architecture:  none\n");
    else
        printf("architecture:  %s (from %s)\n", p->arch, from[p->arch_from]);
    printf("device nodes:  ");
    if (aka_platform_dev_nodes(p->vendor, &gpu0, p->vendor != AKA_VENDOR_CPU, &nodes, &ignored) <
            0 ||
        nodes.n == 0)
        printf("none\n");
    for (size_t i = 0; i < nodes.n; i++)
        printf("/dev/%s%s%s", nodes.v[i].name, nodes.v[i].required ? "" : " (if present)",
               i + 1 < nodes.n ? ", " : " (for GPU 0)\n");
    printf("frameworks:    %s\n", aka_platform_frameworks_text(p));
    printf("timing:        %s\n", aka_timing_name(aka_platform_timing(p)));
    printf("clocks:        %s\n",
           aka_platform_may_touch_clocks(p) ? "may be locked for timing" : "never touched");
}

static void print_specs(const char *title, const struct aka_tensor_specs *s)
{
    printf("%s:%s\n", title, s->n ? "" : " (not declared by this layout)");
    for (size_t i = 0; i < s->n; i++) {
        const struct aka_tensor_spec *t = &s->v[i];
        printf("  %-16s %s", t->name, t->dtype_name);
        if (t->is_scalar) {
            printf("%*sscalar", (int)(11 - strlen(t->dtype_name) % 11), "");
        } else if (t->shape_declared) {
            printf("%*s[", (int)(11 - strlen(t->dtype_name) % 11), "");
            for (size_t d = 0; d < t->shape.n; d++)
                printf("%s%s", d ? ", " : "", t->shape.v[d]);
            printf("]");
        }
        printf("\n");
    }
}

static void print_tolerances(const struct aka_operator *op)
{
    size_t per_shape = 0;
    printf("tolerance:     atol %g, rtol %g", op->tolerance.atol, op->tolerance.rtol);
    if (op->tolerance.matched_ratio < 1.0)
        printf(", matched ratio %g", op->tolerance.matched_ratio);
    printf("\n");
    for (size_t i = 0; i < op->shapes.n; i++)
        per_shape += op->shapes.v[i].has_tolerance;
    if (per_shape)
        printf("               %zu shape(s) set their own tolerance\n", per_shape);
    for (size_t i = 0; i < op->outputs.n; i++)
        if (op->outputs.v[i].has_tolerance)
            printf("               output %s: atol %g, rtol %g\n", op->outputs.v[i].name,
                   op->outputs.v[i].tolerance.atol, op->outputs.v[i].tolerance.rtol);
}

static void print_text(const struct aka_operator *op, const struct aka_runtime_pins *pins)
{
    const struct aka_benchmark_contract *c = &op->contract;
    printf("layout:        %s\n", aka_layout_name(op->layout));
    printf("name:          %s\n", op->name);
    printf("directory:     %s\n", op->dir);
    print_specs("inputs", &op->inputs);
    print_specs("outputs", &op->outputs);
    printf("shapes:        %zu\n", op->shapes.n);
    print_tolerances(op);
    if (c->explicit_distributed && c->world_size >= 2)
        printf("distributed:   %s/%s on %d GPUs\n", c->launcher, c->backend, c->world_size);
    else
        printf("distributed:   no (single GPU)\n");
    printf("source policy: inspection %s\n", c->source_policy_inspection ? "on" : "off");
    printf("               %s\n", c->reason);
    /* The Atrex-Bench version means something for Atrex-Bench operators only. */
    if (op->layout == AKA_LAYOUT_ATREX)
        printf("runtime pins:  atrex-bench version %s; requirements file %s (%zu line(s))\n",
               pins->bench_version ? pins->bench_version : "not pinned",
               pins->requirements_file ? pins->requirements_file : "not pinned",
               pins->requirements.n);
    else
        printf("runtime pins:  requirements file %s (%zu line(s))\n",
               pins->requirements_file ? pins->requirements_file : "not pinned",
               pins->requirements.n);
}

/* op NULL: the platform alone; p NULL: the operator alone. */
static int print_json(const struct aka_operator *op, const struct aka_runtime_pins *pins,
                      const struct aka_platform *p)
{
    json_t *doc = op ? aka_operator_to_json(op) : json_object();
    if (!doc) {
        fprintf(stderr, "aka inspect: could not render %s as JSON\n", op ? op->dir : "it");
        return AKA_EXIT_FAILED;
    }
    if (op)
        json_object_set_new(doc, "pins", aka_runtime_pins_to_json(pins));
    if (p)
        json_object_set_new(doc, "platform", aka_platform_to_json(p));
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("\n");
    json_decref(doc);
    return 0;
}

static int inspect_operator(const struct inspect_args *a, const struct aka_platform *p)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;
    struct aka_runtime_pins pins = {0};
    int rc = 0;
    if (aka_operator_load(a->op_dir, &op, &err) < 0)
        return aka_err_report(&err);
    if (aka_runtime_pins_from_env(&pins, &err) < 0) {
        aka_operator_release(&op);
        return aka_err_report(&err);
    }
    if (a->json) {
        rc = print_json(&op, &pins, p);
    } else {
        print_text(&op, &pins);
        if (p)
            print_platform(p);
    }
    aka_runtime_pins_release(&pins);
    aka_operator_release(&op);
    return rc;
}

int cmd_inspect(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct inspect_args a = {0};
    struct aka_platform p;
    int rc = parse_args(argc, argv, &a, &err);

    (void)ctx;
    if (rc != 0)
        return rc < 0 ? aka_err_report(&err) : 0;
    if (!a.platform)
        return inspect_operator(&a, NULL);
    if (aka_platform_parse(a.platform, a.arch, &p, &err) < 0)
        return aka_err_report(&err);
    if (a.op_dir)
        return inspect_operator(&a, &p);
    if (a.json)
        return print_json(NULL, NULL, &p);
    print_platform(&p);
    return 0;
}
