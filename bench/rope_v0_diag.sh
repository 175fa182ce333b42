#!/usr/bin/env bash
# rope_v0_diag.sh — issue 17: why the rope campaign's V0 failed "timing tampered" on an H100
# (2026-12-06: the Python judge's GPU gap check, 1,808 against the reference process's
# 1,284 us on the 37-token shape, three timings in one process). On a lent GPU (carry
# .devcarry; bench/make_devcarry.sh fills it), in one call of about two minutes:
#   1. the campaign's own V0 step: `aka optimize --max-iters 0` (V0 measured, nothing
#      else), its verdict, and the V0 kernel it wrote (the reference in destination-passing
#      style, workspace.c sol_v0_text);
#   2. that kernel through `aka eval` RUNS times (default 2) and the Triton seed once, each
#      line with the verdict, the latencies, how many timings were repeated (each in a
#      fresh candidate process) and every shape's cross-check (gap against the reference's).
# Lines go to $OUT/summary.txt, the JSON results beside it. Clocks are never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-rope-v0} ws=/tmp/aka-rope-v0-ws
rm -rf "$ws" && mkdir -p "$out" "$ws"
note() { echo "== $* ($(date -u +%T))" | tee -a "$out/summary.txt"; }

# show FILE LABEL: one evaluation's verdict and cross-checks.
show() {
  python3 - "$1" "$2" <<'EOF' | tee -a "$out/summary.txt"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    sys.exit(print(f"{sys.argv[2]}: no result ({exc})"))
r = r.get("result", r)
j = r.get("judge") or {}
print(f"{sys.argv[2]}: pass={r.get('all_pass')} lat={r.get('latency_us_by_shape')} "
      f"retimed={j.get('cross_check_retimed')}")
for f in r.get("failures") or []:
    print("  failure:", str(f)[:300])
for sid, xc in sorted((j.get("cross_check_by_shape") or {}).items()):
    print("  cross-check", sid[-4:], json.dumps(xc, sort_keys=True)[:1200])
EOF
}

note "the campaign's V0 step (aka optimize --max-iters 0)"
aka optimize --op-dir examples/ops/rope --platform "$AKA_PLATFORM" --framework Triton \
  --agent-cli builtin --max-iters 0 --workspace "$ws" >"$out/optimize.out" 2>"$out/optimize.err"
echo "exit $?" | tee -a "$out/summary.txt"
camp=$(ls -d "$ws"/kernel_opt_* 2>/dev/null | head -1)
[ -n "$camp" ] || { tail -5 "$out/optimize.err" | tee -a "$out/summary.txt"; exit 1; }
grep -h '"failure_reason"\|"latency_us_by_shape"' "$camp"/memory/v0*.json | tee -a "$out/summary.txt"
cp "$camp"/memory/v0*.json "$out/" 2>/dev/null
# The V0 kernel as its record's commit holds it (the working tree's kernel.py is the
# framework seed by now: V1 is measured in the same run).
v0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["git_commit_hash"])' \
  "$camp/memory/v0.json" 2>/dev/null)
git -C "$camp" show "$v0:kernel.py" >"$out/v0_kernel.py" ||
  { echo "no V0 commit in $camp/memory/v0.json" | tee -a "$out/summary.txt"; exit 1; }

for i in $(seq "${RUNS:-2}"); do
  note "aka eval of the V0 kernel, run $i"
  aka eval --op-dir examples/ops/rope --kernel "$out/v0_kernel.py" --framework PyTorch \
    --platform "$AKA_PLATFORM" --json >"$out/v0_eval$i.json" 2>"$out/v0_eval$i.err"
  show "$out/v0_eval$i.json" "V0 run $i"
done
note "aka eval of the Triton seed"
aka eval --op-dir examples/ops/rope --kernel examples/ops/rope/seeds/Triton/kernel.py \
  --framework Triton --platform "$AKA_PLATFORM" --json >"$out/seed.json" 2>"$out/seed.err"
show "$out/seed.json" "Triton seed"
