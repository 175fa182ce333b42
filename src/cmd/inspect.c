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
#include "cmd/cmd.h"
#include "contracts/operator.h"
#include "contracts/pins.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: aka inspect --op-dir DIR [--json]\n\n"
            "Detect the operator layout of DIR (SOL-ExecBench, Atrex-Bench or aka native),\n"
            "validate every file it carries, and print what a campaign would pin:\n"
            "inputs/outputs with dtypes, shape count, tolerances, the distributed-evaluation\n"
            "and source-policy decisions, and the runtime pins in force. Nothing is written.\n\n"
            "  --op-dir DIR   the operator directory (required)\n"
            "  --json         print one JSON object instead of text\n"
            "  --help         show this help\n\n"
            "Exit status: 0 when everything is valid; 2 on bad input, with one line naming\n"
            "the file and field (see docs/layouts.md).\n");
}

static int parse_args(int argc, char **argv, const char **op_dir, bool *json, bool *help)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            *help = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            *json = true;
        } else if (strcmp(argv[i], "--op-dir") == 0 && i + 1 < argc) {
            *op_dir = argv[++i];
        } else if (strncmp(argv[i], "--op-dir=", 9) == 0) {
            *op_dir = argv[i] + 9;
        } else {
            fprintf(stderr, "aka inspect: %s: %s\n", argv[i],
                    strcmp(argv[i], "--op-dir") == 0 ? "expected a directory after it"
                                                     : "unknown argument");
            return -1;
        }
    }
    if (!*help && (!*op_dir || !**op_dir)) {
        fprintf(stderr, "aka inspect: --op-dir: required (see aka inspect --help)\n");
        return -1;
    }
    return 0;
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
    printf("runtime pins:  atrex-bench version %s; requirements file %s (%zu line(s))\n",
           pins->bench_version ? pins->bench_version : "not pinned",
           pins->requirements_file ? pins->requirements_file : "not pinned", pins->requirements.n);
}

static int print_json(const struct aka_operator *op, const struct aka_runtime_pins *pins)
{
    json_t *doc = aka_operator_to_json(op);
    if (!doc) {
        fprintf(stderr, "aka inspect: could not render %s as JSON\n", op->dir);
        return AKA_EXIT_FAILED;
    }
    json_object_set_new(doc, "pins", aka_runtime_pins_to_json(pins));
    json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    printf("\n");
    json_decref(doc);
    return 0;
}

int cmd_inspect(int argc, char **argv, const struct aka_app_ctx *ctx)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_operator op;
    struct aka_runtime_pins pins = {0};
    const char *op_dir = NULL;
    bool json = false, help = false;
    int rc;

    (void)ctx;
    if (parse_args(argc, argv, &op_dir, &json, &help) < 0)
        return AKA_EXIT_USAGE;
    if (help) {
        usage(stdout);
        return 0;
    }
    if (aka_operator_load(op_dir, &op, &err) < 0)
        return aka_err_report(&err);
    if (aka_runtime_pins_from_env(&pins, &err) < 0) {
        aka_operator_release(&op);
        return aka_err_report(&err);
    }
    if (json) {
        rc = print_json(&op, &pins);
    } else {
        print_text(&op, &pins);
        rc = 0;
    }
    aka_runtime_pins_release(&pins);
    aka_operator_release(&op);
    return rc;
}
