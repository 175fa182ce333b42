#!/usr/bin/env bash
# h200_hold_check.sh — the three GPU seeds (rmsnorm and silu_and_mul Triton, row_sum_cuda
# Cuda) through `aka eval` on a lent GPU, each one's exit, wall time and per-shape
# latencies (mean and median), with --platform nvidia/h200 as written; results in $OUT.
# Carry .devcarry (bench/make_devcarry.sh).
cd "$(dirname "$0")/.." || exit 1
: "${OUT:?OUT must name the results directory}"
. bench/device_install.sh
for spec in rmsnorm:seeds/Triton/kernel.py:Triton silu_and_mul:seeds/Triton/kernel.py:Triton row_sum_cuda:seeds/Cuda/kernel.cu:Cuda; do
  IFS=: read op k fw <<<"$spec"
  s=$(date +%s)
  aka eval --op-dir examples/ops/$op --kernel examples/ops/$op/$k --framework $fw --platform nvidia/h200 --json >$OUT/$op.json 2>$OUT/$op.err
  echo "$op exit $? $(( $(date +%s) - s )) s"
  python3 -c "
import json,sys; r=json.load(open('$OUT/$op.json'))['result']; print(r.get('latency_us_by_shape'), r.get('latency_median_us_by_shape'))"
done
