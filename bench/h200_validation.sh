#!/usr/bin/env bash
# h200_validation.sh — issue 3's GPU evidence, in one call on a lent H200.
#
# Expects, relative to the repository root, a folder .devcarry/ with an aka
# binary built on the development machine, Debian's bwrap, and jansson's
# header and libraries (the H200 image has neither bwrap nor jansson; the
# native harness links jansson inside the sandbox). Installs those into the
# throwaway machine, then:
#   1. `aka eval` end to end (bwrap sandbox, one GPU) on the native CUDA
#      example's seed kernel and the three Triton seed kernels;
#   2. bench/gpu_timing_agreement.py: aka vs do_bench vs ncu, run-to-run CV.
# Results land in $OUT. Never touches clocks, power or compute mode.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-/tmp/aka-h200}
mkdir -p "$out"

. bench/device_install.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"

evaluate() { # NAME OP KERNEL FRAMEWORK [extra...]
  local name=$1 op=$2 kernel=$3 fw=$4; shift 4
  aka eval --op-dir "examples/ops/$op" --kernel "examples/ops/$op/$kernel" --framework "$fw" \
    --platform nvidia/h200 --json "$@" >"$out/eval_$name.json" 2>"$out/eval_$name.err"
  local rc=$?
  echo "eval $name: exit $rc; $(tail -2 "$out/eval_$name.err" | tr '\n' ' ' | cut -c1-300)"
}
evaluate row_sum_cuda_seed row_sum_cuda seeds/Cuda/kernel.cu Cuda
evaluate rmsnorm_triton rmsnorm seeds/Triton/kernel.py Triton
evaluate silu_triton silu_and_mul seeds/Triton/kernel.py Triton
evaluate rope_triton rope seeds/Triton/kernel.py Triton
# Repeated evaluation of the native CUDA seed for the run-to-run spread.
for i in 1 2 3; do evaluate "row_sum_cuda_seed_rep$i" row_sum_cuda seeds/Cuda/kernel.cu Cuda; done

python3 bench/gpu_timing_agreement.py --runs "${AKA_RUNS:-3}" --reps "${AKA_REPS:-100}" \
  --out "$out" 2>"$out/agreement.err" | tee "$out/agreement.md"
tail -5 "$out/agreement.err"
