/*
 * benchmark.h — the benchmark contract of an operator and the decisions pinned from it.
 *
 * DESIGN §4.3. The contract lives in the evaluator's private metadata
 * (`metadata.json` → `benchmark_contract.distributed_evaluation`) of the
 * original operator directory, or, on resume, in the metadata committed with
 * V0. Two decisions are derived from it once per campaign and never again:
 *
 *   - distributed evaluation: single GPU, or torchrun/nccl on world_size ≥ 2 GPUs;
 *   - source-policy inspection: on, unless a valid distributed contract grants
 *     the exception.
 *
 * Nothing a candidate writes, and no operator name, can change either.
 */
#ifndef AKA_CONTRACTS_BENCHMARK_H
#define AKA_CONTRACTS_BENCHMARK_H

#include "base/error.h"
#include <jansson.h>
#include <stdbool.h>

struct aka_benchmark_contract {
    bool has_metadata;             /* a metadata file was read */
    bool explicit_distributed;     /* benchmark_contract.distributed_evaluation was present */
    int world_size;                /* GPUs the evaluator runs on; 1 when single-GPU */
    char launcher[32];             /* "torchrun" when distributed, "" otherwise */
    char backend[32];              /* "nccl" when distributed, "" otherwise */
    bool source_policy_inspection; /* false only under the distributed exception */
    char reason[256];              /* one sentence: why these decisions were made */
};

/*
 * Derive the contract from a parsed metadata object. `file` names it in errors.
 * metadata may be NULL (no metadata.json): single GPU, inspection on.
 * Any invalid distributed contract is an error (exit code 2) naming the field.
 */
int aka_benchmark_contract_from_json(const char *file, json_t *metadata,
                                     struct aka_benchmark_contract *out, struct aka_err *err);

/* Same, reading the file; a missing file is not an error (see above). */
int aka_benchmark_contract_load(const char *metadata_path, struct aka_benchmark_contract *out,
                                struct aka_err *err);

/* {"world_size", "launcher", "backend", "explicit", "source_policy_inspection", "reason"} */
json_t *aka_benchmark_contract_to_json(const struct aka_benchmark_contract *c);

/*
 * Read back the object written by aka_benchmark_contract_to_json (as pinned in
 * campaign.json at `path`, e.g. "contracts.benchmark"). The decision must be
 * self-consistent: single GPU with inspection on, or torchrun/nccl on N >= 2
 * GPUs with inspection off.
 */
int aka_benchmark_contract_from_pinned(const char *file, const char *path, json_t *pinned,
                                       struct aka_benchmark_contract *out, struct aka_err *err);

/*
 * The pinned decision re-read on resume must equal the one recorded in
 * campaign.json; a difference is an error naming both values.
 */
int aka_benchmark_contract_check_same(const struct aka_benchmark_contract *pinned,
                                      const struct aka_benchmark_contract *now, const char *where,
                                      struct aka_err *err);

#endif
