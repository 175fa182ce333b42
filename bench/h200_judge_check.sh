#!/usr/bin/env bash
# h200_judge_check.sh — the judges' timing and cost on a lent H200, in one call that
# fits a few minutes (issue 10, must-show 2). Every evaluation goes through `aka eval`
# in the bwrap sandbox; "old" runs use the aka and runtime of commit c5ea6a2 (the
# harness before the judge, .devcarry/before), "new" this tree (.devcarry/bin);
# "sent" this tree with --timed-inputs sent (the judge sends every timed run's inputs).
#   1. the native CUDA seed of row_sum_cuda and the Triton seeds of rmsnorm,
#      silu_and_mul and rope, old then new, NEW_REPS times each: per-shape medians
#      (compare with docs/measurements.md) and wall time of `aka eval`;
#   2. hostile Python candidates on the GPU (tests/redteam/python).
# One line per evaluation goes to stdout and $OUT/summary.txt; every JSON and stderr
# is packed into $OUT/raw.tgz after each evaluation (so a run cut short still
# returns what it did). Clocks are never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-h200-judge}
raw=/tmp/judge-raw
mkdir -p "$out" "$raw"
src=$PWD
ev() { # NAME AKA HOME ARGS...
  local name=$1 bin=$2 home=$3; shift 3
  local t0=$SECONDS s0; s0=$(date +%s.%N)
  ATREX_AKA_HOME=$home timeout "${EVAL_TIMEOUT:-150}" "$bin" eval --platform nvidia/h200 \
    --json "$@" >"$raw/$name.json" 2>"$raw/$name.err"
  local rc=$?
  python3 - "$raw/$name.json" "$name" "$rc" "$s0" <<'PY' | tee -a "$out/summary.txt"
import json, sys, time
path, name, rc, s0 = sys.argv[1:5]
wall = time.time() - float(s0)
try:
    d = json.load(open(path)); r = d.get("result", d)
except ValueError:
    print(f"{name} rc={rc} wall={wall:.1f}s (no JSON)"); sys.exit()
lat = {k: round(v, 2) for k, v in (r.get("latency_us_by_shape") or {}).items()}
gaps = {k: (g.get("gap_us"), g.get("ref_gap_us"), g.get("limit_us"), "out", g.get("out_us"),
            g.get("ref_out_us"), "stage", g.get("stage_us"), g.get("ref_stage_us"))
        for k, g in ((r.get("judge") or {}).get("gap_us_by_shape") or {}).items()}
fails = [str(f)[:160] for f in (r.get("failures") or [])[:2]]
fresh = (r.get("judge") or {}).get("fresh_inputs")
print(f"{name} rc={rc} wall={wall:.1f}s pass={r.get('all_pass')} lat={lat} "
      f"geo={r.get('latency_us_geomean')} fresh={fresh} gaps={gaps} fail={fails}")
PY
  tar -czf "$out/raw.tgz" -C "$raw" .
}
old=$src/.devcarry/before/aka new=$src/.devcarry/bin/aka
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$out/summary.txt"
for rep in $(seq 1 "${NEW_REPS:-1}"); do
  ev "old_row_sum_$rep" "$old" "$src/.devcarry/before" --op-dir examples/ops/row_sum_cuda \
    --kernel examples/ops/row_sum_cuda/seeds/Cuda/kernel.cu --framework Cuda
  ev "new_row_sum_$rep" "$new" "$src" --op-dir examples/ops/row_sum_cuda \
    --kernel examples/ops/row_sum_cuda/seeds/Cuda/kernel.cu --framework Cuda
done
for op in rmsnorm silu_and_mul rope; do
  k=$src/examples/ops/$op/seeds/Triton/kernel.py
  ev "old_$op" "$old" "$src/.devcarry/before" --op-dir "$src/examples/ops/$op" --kernel "$k" \
    --framework Triton
  ev "new_$op" "$new" "$src" --op-dir "$src/examples/ops/$op" --kernel "$k" --framework Triton
  [ -n "${SKIP_SENT:-}" ] || ev "sent_$op" "$new" "$src" --op-dir "$src/examples/ops/$op" \
    --kernel "$k" --framework Triton --timed-inputs sent
done
red=$src/tests/redteam/python
rms=(--op-dir "$src/examples/ops/rmsnorm" --framework PyTorch --shape-id 2 --shape-id 3
     --timed-runs 30)
for h in ${RED_CASES:-patch_timers cache_data_ptr defer_thread patch_input_builder}; do
  ev "red_$h" "$new" "$src" --kernel "$red/$h.py" "${rms[@]}"
done
ev red_side_stream "$new" "$src" --kernel "$src/tests/harness/python/wrong/gpu/side_stream.py" \
  "${rms[@]}"
exit 0
