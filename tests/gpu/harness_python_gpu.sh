#!/usr/bin/env bash
# harness_python_gpu.sh — the PyTorch-layout harness on a CUDA device.
#
# For the rmsnorm and silu_and_mul (Atrex-Bench) and rope (SOL) examples:
#   1. the reference and the Triton seed (examples/ops/<op>/seeds/Triton/kernel.py), and
#      silu_and_mul's CuteDSL and TileLang seeds where those packages are installed,
#      pass with --device cuda, with CUDA events and with --cuda-graph;
#   2. aka's per-shape median is compared with triton.testing.do_bench
#      (return_mode="median") on the same inputs: a table is printed;
#   3. a candidate that hides its work on a side stream is caught by the
#      stream check (diagnostic "work outside the current stream");
#   4. repeated evaluation of one kernel: per-shape CV is printed.
# Exits 0 with "SKIP: no CUDA device" when torch sees no GPU.
#
#   AKA_PYTHON   interpreter with torch (+ triton); default python3
#   AKA_GPU_REPS timed runs per shape (default 100)
set -uo pipefail
: "${AKA_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
src=$AKA_SOURCE_DIR
py=${AKA_PYTHON:-python3}
reps=${AKA_GPU_REPS:-100}
export PYTHONPATH="$src/runtime/harness/python"

if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "SKIP: no CUDA device"
  exit 0
fi
have_triton=1
"$py" -c 'import triton' 2>/dev/null || have_triton=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ops=$src/examples/ops
check=$src/tests/harness/python/check_result.py
failed=0; passed=0
"$py" -c 'import torch; p=torch.cuda.get_device_properties(0); print(f"device: {p.name}, L2 {p.L2_cache_size/2**20:.0f} MiB" if hasattr(p, "L2_cache_size") else f"device: {p.name}")'
echo "torch $("$py" -c 'import torch; print(torch.__version__)'), triton $("$py" -c 'import triton; print(triton.__version__)' 2>/dev/null || echo absent)"

# run NAME CHECK-FLAGS... -- HARNESS-ARGS...
run() {
  local name=$1; shift
  local flags=()
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  "$py" -m aka_harness --device cuda --timed-runs "$reps" --warmup 10 "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  if "$py" "$check" --name "$name" --stdout "$tmp/$name.out" --rc "$rc" "${flags[@]}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); tail -20 "$tmp/$name.err"
  fi
}

# kernels: NAME LAYOUT OP KERNEL [EXTRA...]
kernels=(
  "rmsnorm_ref atrex rmsnorm $ops/rmsnorm/reference.py"
  "silu_ref atrex silu_and_mul $ops/silu_and_mul/reference.py"
  "rope_ref sol rope $ops/rope/reference.py --no-dps"
)
if [ "$have_triton" = 1 ]; then
  kernels+=(
    "rmsnorm_triton atrex rmsnorm $ops/rmsnorm/seeds/Triton/kernel.py --framework Triton"
    "silu_triton atrex silu_and_mul $ops/silu_and_mul/seeds/Triton/kernel.py --framework Triton"
    "rope_triton sol rope $ops/rope/seeds/Triton/kernel.py --framework Triton"
  )
else
  echo "note: triton not installed: Triton candidates and the do_bench comparison are skipped"
fi
# The CuteDSL and TileLang seeds (issue 16), where their packages are installed.
for fw in CuteDSL:cutlass.cute TileLang:tilelang; do
  if "$py" -c "import ${fw#*:}" 2>/dev/null; then
    kernels+=("silu_${fw%%:*} atrex silu_and_mul $ops/silu_and_mul/seeds/${fw%%:*}/kernel.py --framework ${fw%%:*}")
  else
    echo "note: ${fw#*:} not installed: the ${fw%%:*} seed is skipped"
  fi
done

for k in "${kernels[@]}"; do
  read -r name layout op kernel extra <<<"$k"
  # shellcheck disable=SC2086
  run "$name" --pass --method cuda_event -- --layout "$layout" --op-dir "$ops/$op" \
    --kernel "$kernel" $extra
  # shellcheck disable=SC2086
  run "${name}_graph" --pass --method cuda_graph -- --layout "$layout" --op-dir "$ops/$op" \
    --kernel "$kernel" $extra --cuda-graph
done

# A candidate hiding its work on a side stream: caught by the stream check.
run side_stream --pass --diag-contains "work outside the current stream" -- --layout atrex \
  --op-dir "$ops/rmsnorm" --kernel "$src/tests/harness/python/wrong/gpu/side_stream.py" \
  --shape-id 3 --shape-id 4

# The lazy and unwritten candidates also fail on the GPU (allocator reuse is real there).
run rms_unwritten_gpu --fail --fail-shape 0 -- --layout atrex --op-dir "$ops/rmsnorm" \
  --kernel "$src/tests/harness/python/wrong/rmsnorm/unwritten.py"
run rms_lazy_gpu --fail --fail-shape 0 -- --layout atrex --op-dir "$ops/rmsnorm" \
  --kernel "$src/tests/harness/python/wrong/rmsnorm/lazy_view.py"

echo
echo "aka median vs triton.testing.do_bench(return_mode=\"median\"), same inputs:"
echo "| kernel | shape | aka us | do_bench us | diff | aka CV | |"
echo "|---|---|---|---|---|---|---|"
if [ "$have_triton" = 1 ]; then
  for k in "${kernels[@]}"; do
    read -r name layout op kernel extra <<<"$k"
    nodps=""; case "$extra" in *--no-dps*) nodps=--no-dps ;; esac
    [ -s "$tmp/$name.out" ] || continue
    "$py" "$src/tests/harness/python/bench_compare.py" --layout "$layout" --op-dir "$ops/$op" \
      --kernel "$kernel" --result "$tmp/$name.out" --label "$name" $nodps 2>>"$tmp/compare.err" \
      || { echo "compare failed for $name"; tail -5 "$tmp/compare.err"; }
  done
fi

echo
echo "repeatability: rmsnorm reference evaluated 3 times (per-shape median us)"
for i in 1 2 3; do
  "$py" -m aka_harness --device cuda --timed-runs "$reps" --layout atrex --op-dir "$ops/rmsnorm" \
    --kernel "$ops/rmsnorm/reference.py" 2>/dev/null \
    | "$py" -c 'import json,sys; d=json.loads(sys.stdin.read().split("=",1)[1]); print("  run", sys.argv[1], d["latency_us_by_shape"], "cv", d["timing"]["cv_by_shape"])' "$i"
done

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
