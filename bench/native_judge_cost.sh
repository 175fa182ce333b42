#!/usr/bin/env bash
# native_judge_cost.sh — issue 10 must-show 2 for the native judge on a lent GPU: `aka eval`
# wall time of the row_sum_cuda seed with harness trees side by side, interleaved in rounds
# (bench/eval_wall.sh, one evaluation per variant and round).
#
#   bench/native_judge_cost.sh ROUNDS VARIANT...
#
# A variant is a directory holding runtime/ (the ATREX_AKA_HOME the evaluation runs with)
# and optionally its own aka binary (before the judge, c5ea6a2, the binary differs); "."
# is this checkout. Fill them here with `git archive REV runtime | tar -x -C DIR` (and a
# build of REV's aka for DIR/aka). Needs .devcarry (bench/make_devcarry.sh). Clocks are
# never touched. Ends with one `aka eval -v` of this checkout (where the time went).
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
rounds=$1
shift
for round in $(seq 1 "$rounds"); do
  for v in "$@"; do
    home=$(cd "$v" && pwd) bin=$PWD/.devcarry/bin/aka
    [ -x "$home/aka" ] && bin=$home/aka
    ATREX_AKA_HOME=$home bench/eval_wall.sh "$bin" 1 row_sum_cuda seeds/Cuda/kernel.cu Cuda \
      "$AKA_PLATFORM" | sed "s|^|$v r$round |"
  done
done
# Then where this checkout's evaluation spends its time: one `aka eval -v`, its stage lines
# and each schedule's cost line (runs, prepare / runner / checks ms, and how many threads the
# judge's input fills and compares ran on, of how many CPUs).
echo "== aka eval -v of this checkout"
ATREX_AKA_HOME=$PWD .devcarry/bin/aka eval -v --op-dir examples/ops/row_sum_cuda \
  --kernel examples/ops/row_sum_cuda/seeds/Cuda/kernel.cu --framework Cuda \
  --platform "$AKA_PLATFORM" 2>&1 >/dev/null | grep -E 'aka-native: at=|schedule shape=|done at='
