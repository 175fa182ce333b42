/*
 * fuzz_benchmark.c — libFuzzer target: metadata.json → benchmark contract.
 *
 * Oracles: an accepted contract is one of the two legal decisions (single GPU
 * with inspection, or torchrun/nccl on >= 2 GPUs without it), and its pinned
 * form reads back to the same decision.
 */
#include "base/json.h"
#include "contracts/benchmark.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_decision(const struct aka_benchmark_contract *c)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract back;
    bool dist = c->world_size >= 2;
    if (dist != c->explicit_distributed || dist == c->source_policy_inspection)
        abort();
    if (dist && (strcmp(c->launcher, "torchrun") || strcmp(c->backend, "nccl")))
        abort();
    if (!dist && c->world_size != 1)
        abort();
    json_t *pinned = aka_benchmark_contract_to_json(c);
    if (aka_benchmark_contract_from_pinned("campaign.json", "benchmark", pinned, &back, &err) < 0 ||
        aka_benchmark_contract_check_same(c, &back, "fuzz", &err) < 0)
        abort();
    json_decref(pinned);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct aka_err err = AKA_ERR_INIT;
    struct aka_benchmark_contract c;
    json_t *meta = NULL;
    if (aka_json_load_buf("metadata.json", (const char *)data, size, &meta, &err) < 0)
        return 0;
    if (aka_benchmark_contract_from_json("metadata.json", meta, &c, &err) == 0)
        check_decision(&c);
    else if (err.code != AKA_EXIT_USAGE || strchr(err.msg, '\n'))
        abort(); /* every refusal is one line with exit code 2 */
    json_decref(meta);
    return 0;
}
