#!/usr/bin/env bash
# python_judge_h200.sh — the Python judge on a lent H200, through the real `aka eval`:
#   1. the Triton seeds of rmsnorm, silu_and_mul (Atrex) and rope (SOL), twice each
#      (per-shape medians, the judge's gap figures, wall time of `aka eval`);
#   2. the same seeds with the harness before the judge (.devcarry/base/runtime, run
#      directly and through aka with ATREX_AKA_HOME pointing at it): timing agreement
#      and the judge's added cost;
#   3. hostile candidates of tests/redteam/python on the GPU (timer patching incl.
#      Event.elapsed_time, pointer cache, deferred work, input writes, judge reads).
# Needs .devcarry/ (bench/device_install.sh) and .devcarry/base/ (a tree with the old
# runtime/ and an examples link). Results land in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
final=${OUT:-/tmp/aka-h200-judge}
out=$final/raw
mkdir -p "$out"
src=$PWD
{
  uname -r
  python3 -c 'import ctypes; print("landlock abi", ctypes.CDLL(None).syscall(444, None, 0, 1))'
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} | tee "$out/env.txt"

ev() {  # NAME HOME ARGS... : aka eval with ATREX_AKA_HOME=HOME, JSON and stderr kept
  local name=$1 home=$2; shift 2
  local t0; t0=$(date +%s.%N)
  ATREX_AKA_HOME=$home aka eval -v --platform nvidia/h200 --json "$@" >"$out/$name.json" \
    2>"$out/$name.err"
  local rc=$?
  echo "$name rc=$rc wall=$(python3 -c "import sys,time; print(round(time.time()-float(sys.argv[1]),2))" "$t0")" \
    | tee -a "$out/summary.txt"
}

for op in rmsnorm silu_and_mul rope; do
  k=$src/examples/ops/$op/seeds/Triton/kernel.py
  for i in 1 2; do
    ev "new_${op}_$i" "$src" --op-dir "$src/examples/ops/$op" --kernel "$k" --framework Triton
    ev "old_${op}_$i" "$src/.devcarry/base" --op-dir "$src/examples/ops/$op" --kernel "$k" \
      --framework Triton
  done
done

red=$src/tests/redteam/python
rms=(--op-dir "$src/examples/ops/rmsnorm" --framework PyTorch --shape-id 2 --shape-id 3)
for h in patch_timers cache_data_ptr defer_thread modify_inputs read_judge forge_proc_fd \
         patch_gc_objects; do
  ev "red_$h" "$src" --kernel "$red/$h.py" "${rms[@]}" --timed-runs 30
done
ev red_side_stream "$src" --kernel "$src/tests/harness/python/wrong/gpu/side_stream.py" \
  "${rms[@]}" --timed-runs 30

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "*.json"))):
    try:
        d = json.load(open(f))
    except ValueError:
        print(os.path.basename(f), "unreadable"); continue
    r = d.get("result", {})
    j = r.get("judge", {})
    print(os.path.basename(f), "pass" if r.get("all_pass") else "FAIL",
          r.get("latency_us_by_shape"), "ref", r.get("reference_latency_us_by_shape"),
          "cv", r.get("timing", {}).get("cv_by_shape"), "s", d.get("seconds"))
    if j:
        print("   judge:", j.get("confinement"), j.get("cross_check"), j.get("gap_us_by_shape"))
    for fl in (r.get("failures") or [])[:3]:
        print("   failure:", fl[:220])
    for dg in (r.get("actionable_diagnostics") or [])[:2]:
        print("   diag:", str(dg.get("message"))[:200])
PY
grep -h REDTEAM-ESCAPED "$out"/red_*.err | sort | uniq -c
tar -czf "$final/raw.tgz" -C "$out" . && rm -rf "$out"
exit 0
