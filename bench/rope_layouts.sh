#!/usr/bin/env bash
# rope_layouts.sh — issue 17 must-show 3, before the rope campaign: the rope Triton seed's two
# layouts side by side on a lent GPU (carry .devcarry). Each configuration is the bundled
# seed with its BLOCK_TOKENS and NUM_WARPS knobs set by sed (0 = one program per (token,
# head), T > 0 = one program per T tokens, all heads), evaluated by `aka eval` on every
# workload; one line each (bench/official_compare.py's aka line: verdict, timing method,
# per-shape latencies).
# The layout T > 0 has been checked only under TRITON_INTERPRET (bit-identical to T = 0).
#
#   bench/rope_layouts.sh ["T W" ...]     default: "0 1" "2 4" "4 4" "8 4"
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-rope-layouts}
mkdir -p "$out"
[ $# -gt 0 ] || set -- "0 1" "2 4" "4 4" "8 4"
for c in "$@"; do
  read -r t w <<<"$c"
  k=/tmp/rope_t${t}_w$w.py
  sed "s/^BLOCK_TOKENS = [0-9]*/BLOCK_TOKENS = $t/; s/^NUM_WARPS = [0-9]*/NUM_WARPS = $w/" \
    examples/ops/rope/seeds/Triton/kernel.py >"$k"
  grep -q "^BLOCK_TOKENS = $t$" "$k" && grep -q "^NUM_WARPS = $w$" "$k" ||
    { echo "T=$t W=$w: the seed's knob lines did not take the edit"; continue; }
  s0=$(date +%s.%N)
  timeout "${EVAL_TIMEOUT:-180}" aka eval --op-dir examples/ops/rope --kernel "$k" --framework Triton \
    --platform "$AKA_PLATFORM" --json >"$out/t${t}_w$w.json" 2>"$out/t${t}_w$w.err"
  python3 bench/official_compare.py aka "T=$t W=$w" "$?" "$s0" "$out/t${t}_w$w.json" |
    tee -a "$out/summary.txt"
done
