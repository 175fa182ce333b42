#!/usr/bin/env bash
# h200_issue10.sh — issue 10's device evidence in one call on a lent H200:
#   1. bench/h200_validation.sh: the native CUDA and Triton seeds through `aka eval`
#      (compare with docs/measurements.md, "Evaluator timing on the H200") and the
#      timing agreement with do_bench and ncu;
#   2. bench/python_judge_h200.sh: the Python judge against the harness before it
#      (.devcarry/base) and hostile Python candidates on the GPU;
#   3. the native judge's added cost on the GPU: `aka eval` wall time of the
#      row_sum_cuda seed with this tree and with the harness before the judge
#      (.devcarry/before: aka and runtime of commit c5ea6a2), alternating in rounds.
# Needs .devcarry/ (bench/make_devcarry.sh, plus base/ and before/). Every part's
# output is packed into one file under $OUT. Clocks are never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
final=${OUT:-/tmp/aka-h200-issue10}
mkdir -p "$final"
part() { # NAME SCRIPT...: run a part with its own OUT, time it, pack its files
  local name=$1; shift
  local start=$SECONDS
  mkdir -p "/tmp/parts/$name"
  OUT=/tmp/parts/$name "$@" >"/tmp/parts/$name/stdout.txt" 2>&1
  echo "== $name: exit $?, $((SECONDS - start)) s"
  tail -${TAIL:-25} "/tmp/parts/$name/stdout.txt"
  tar -czf "$final/$name.tgz" -C /tmp/parts "$name"
}
native_cost() {
  . bench/device_install.sh
  local round
  for round in 1 2 3; do
    ATREX_AKA_HOME=$PWD/.devcarry/before bench/eval_wall.sh "$PWD/.devcarry/before/aka" 2 \
      row_sum_cuda seeds/Cuda/kernel.cu Cuda nvidia/h200 | sed "s/^/old r$round /"
    bench/eval_wall.sh "$PWD/.devcarry/bin/aka" 2 row_sum_cuda seeds/Cuda/kernel.cu Cuda \
      nvidia/h200 | sed "s/^/new r$round /"
  done
}
part validation bench/h200_validation.sh
part judge bench/python_judge_h200.sh
part native_cost native_cost
