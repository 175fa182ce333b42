/*
 * cpu_stand_in.c — a distributed operator's campaign on the CPU (docs/platforms.md,
 * "The CPU stand-in for a distributed operator").
 *
 * `--platform cpu` otherwise runs only native C kernels. A Python-layout operator whose
 * pinned benchmark contract is a valid distributed one (world_size >= 2, DESIGN §4.3) can
 * run there too with --framework PyTorch: the Python harness starts the contract's ranks
 * on the CPU with torch.distributed's Gloo backend instead of NCCL (aka_harness/dist.py),
 * and everything a campaign decides — correctness, numerical probes, the performance gate,
 * the distributed exception's skipped source inspection and reviewer — is decided as on
 * GPUs. Its purpose is to exercise the distributed exception where no GPU is (CI), not to
 * measure collectives: Gloo on loopback is not NCCL on NVLink.
 *
 * The contract is checked twice: on the original operator before anything is created,
 * and again on the campaign's snapshot once it is pinned, the only copy the campaign reads
 * from then on. A single-GPU Python operator on the CPU is refused (exit 2), because its
 * timings would stand for nothing a GPU campaign could use.
 */
#include "optimize/internal.h"
#include "platform/platform.h"

#include <string.h>

bool aka_cpu_stand_in(const char *platform, const char *arch, const struct aka_operator *op)
{
    struct aka_platform p;
    struct aka_err ignored = AKA_ERR_INIT;
    return op->layout != AKA_LAYOUT_NATIVE &&
           aka_platform_parse(platform, arch, &p, &ignored) == 0 && p.vendor == AKA_VENDOR_CPU;
}

int aka_cpu_stand_in_check(const struct aka_optimize_opts *o, const struct aka_operator *op,
                           const char *which, struct aka_err *err)
{
    const struct aka_benchmark_contract *c = &op->contract;
    if (!aka_cpu_stand_in(o->platform, o->arch, op))
        return 0;
    if (strcmp(o->framework, "PyTorch") != 0)
        return aka_err_set(err, AKA_EXIT_USAGE,
                           "--framework %s: the CPU stand-in of a distributed operator (%s) "
                           "runs PyTorch kernels only; use --framework PyTorch",
                           o->framework, op->dir);
    /* The exception and the rank count come together (benchmark.c): a contract that
     * grants one without the other is not one this campaign can stand in for. */
    if (!c->explicit_distributed || c->world_size < 2 || c->source_policy_inspection)
        return aka_err_set(
            err, AKA_EXIT_USAGE,
            "--platform cpu: %s (%s, layout %s): metadata.json: "
            "benchmark_contract.distributed_evaluation: expected {launcher: torchrun, backend: "
            "nccl, world_size: N >= 2}; got world_size %d (%s). On the CPU a Python operator "
            "runs only as the stand-in of a distributed one; other Python operators need a GPU "
            "--platform",
            which, op->dir, aka_layout_name(op->layout), c->world_size, c->reason);
    return 0;
}

json_t *aka_distributed_exception_json(const struct aka_benchmark_contract *c, bool stand_in)
{
    return json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:[s,s], s:[s,s,s]}", "kind", "distributed",
                     "world_size", c->world_size, "launcher", c->launcher, "backend", c->backend,
                     "ranks_backend", stand_in ? "gloo (CPU stand-in)" : c->backend, "reason",
                     c->reason, "skipped", "source_policy", "policy_reviewer", "enforced",
                     "correctness", "numerical_probes", "performance");
}
