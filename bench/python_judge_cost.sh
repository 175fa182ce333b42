#!/usr/bin/env bash
# python_judge_cost.sh — what the Python judge adds to `aka eval` on the CPU (issue 10,
# must-show 2): the same evaluation through an older aka (single-process harness) and
# this tree's, interleaved run by run, N runs each, optionally under background load.
#
#   bench/python_judge_cost.sh OLD_AKA OLD_HOME N LOAD
#
# OLD_AKA: an aka binary built from the tree before the judge (e.g. commit c5ea6a2),
# OLD_HOME: that tree (its runtime/ is used through ATREX_AKA_HOME). LOAD: how many
# busy loops (`sh -c 'while :; do :; done'`) run beside the evaluations (0: none); the
# script starts them and stops exactly those. Two evaluations: examples/ops/rmsnorm
# (Atrex-Bench, reference.py as the candidate, shapes 0 and 1) and examples/ops/rope
# (SOL-ExecBench, its solution's kernel, two workloads); defaults otherwise (100 timed
# runs, 10 warm-up). Prints each run's wall time (date +%s.%N around `aka eval`) and
# exit status, the load average at the start of each pair, then per evaluation the
# median wall time of each side and the change.
set -uo pipefail
old_aka=$1 old_home=$2 n=$3 load=$4
here=$(cd "$(dirname "$0")/.." && pwd)
new_aka=$here/build/aka
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq 1 "$load"); do sh -c 'while :; do :; done' & pids+=($!); done
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["sources"][0]["content"], end="")' \
  "$here/examples/ops/rope/solution.json" >"$tmp/rope_kernel.py"
rms=(--op-dir examples/ops/rmsnorm --kernel examples/ops/rmsnorm/reference.py --shape-id 0
     --shape-id 1)
rope=(--op-dir examples/ops/rope --kernel "$tmp/rope_kernel.py"
      --shape-id 7d0c5a2e-0001-4a6b-9e41-000000000001
      --shape-id 7d0c5a2e-0002-4a6b-9e41-000000000002)

one() {  # one(side name aka home args...) -> "wall rc"
  local side=$1 name=$2 aka=$3 home=$4; shift 4
  local start end rc
  start=$(date +%s.%N)
  (cd "$home" && ATREX_AKA_HOME=$home "$aka" eval --platform cpu --framework PyTorch "$@" \
    >"$tmp/out" 2>"$tmp/err")
  rc=$?
  end=$(date +%s.%N)
  echo "$name $side $(python3 -c "print(f'{$end-$start:.3f}')") $rc" | tee -a "$tmp/all"
}

for i in $(seq 1 "$n"); do
  for name in rmsnorm rope; do
    if [ "$name" = rmsnorm ]; then args=("${rms[@]}"); else args=("${rope[@]}"); fi
    echo "# pair $i $name load $(cut -d' ' -f1 /proc/loadavg)"
    if [ $((i % 2)) -eq 1 ]; then
      one old "$name" "$old_aka" "$old_home" "${args[@]}"
      one new "$name" "$new_aka" "$here" "${args[@]}"
    else
      one new "$name" "$new_aka" "$here" "${args[@]}"
      one old "$name" "$old_aka" "$old_home" "${args[@]}"
    fi
  done
done
python3 - "$tmp/all" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for name in ("rmsnorm", "rope"):
    w = {s: [float(r[2]) for r in rows if r[0] == name and r[1] == s] for s in ("old", "new")}
    bad = [r for r in rows if r[0] == name and r[3] != "0"]
    o, n = statistics.median(w["old"]), statistics.median(w["new"])
    print(f"{name}: old median {o:.2f} s, new median {n:.2f} s, change {100 * (n - o) / o:+.1f}% "
          f"({len(w['old'])} runs each; non-zero exits: {len(bad)})")
PY
