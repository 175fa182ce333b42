#!/usr/bin/env bash
# rope_layouts.sh — issue 17 must-show 3, before the rope campaign: the rope Triton seed's
# layouts side by side on a lent GPU (carry .devcarry). Each configuration is the bundled
# seed with its knobs set by sed, evaluated by `aka eval` on every workload; one line each
# (bench/official_compare.py's aka line: verdict, timing method, per-shape latencies).
#   "T W"    one layout for every call (LARGE_FROM 0): BLOCK_TOKENS T (0 = one program per
#            (token, head), T > 0 = one program per T tokens, all heads), NUM_WARPS W
#   "T W H"  the seed's own small layout below 256 tokens, and from 256 tokens (the 1,024-
#            and 8,192-token workloads) LARGE_BLOCK_TOKENS T, LARGE_WARPS W,
#            LARGE_HEAD_BLOCK H (0 = all heads in one program, else H heads per program)
# Every layout has been checked against a numpy rope with bench/triton_standin (a numpy
# stand-in for the Triton calls the seed makes), not only on a GPU.
#
#   bench/rope_layouts.sh ["T W [H]" ...]     default: "0 1" "2 4" "4 4" "8 4"
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-rope-layouts}
mkdir -p "$out"
[ $# -gt 0 ] || set -- "0 1" "2 4" "4 4" "8 4"
for c in "$@"; do
  read -r t w h <<<"$c"
  k=/tmp/rope_t${t}_w${w}_h${h:-all}.py
  if [ -z "$h" ]; then
    edit="s/^LARGE_FROM = [0-9]*/LARGE_FROM = 0/; s/^BLOCK_TOKENS = [0-9]*/BLOCK_TOKENS = $t/"
    edit="$edit; s/^NUM_WARPS = [0-9]*/NUM_WARPS = $w/"
    want="^(LARGE_FROM = 0|BLOCK_TOKENS = $t|NUM_WARPS = $w)$"
  else
    edit="s/^LARGE_FROM = [0-9]*/LARGE_FROM = 256/; s/^LARGE_BLOCK_TOKENS = [0-9]*/LARGE_BLOCK_TOKENS = $t/"
    edit="$edit; s/^LARGE_WARPS = [0-9]*/LARGE_WARPS = $w/; s/^LARGE_HEAD_BLOCK = [0-9]*/LARGE_HEAD_BLOCK = $h/"
    want="^(LARGE_FROM = 256|LARGE_BLOCK_TOKENS = $t|LARGE_WARPS = $w|LARGE_HEAD_BLOCK = $h)$"
  fi
  sed -E "$edit" examples/ops/rope/seeds/Triton/kernel.py >"$k"
  [ "$(grep -cE "$want" "$k")" = "$([ -z "$h" ] && echo 3 || echo 4)" ] ||
    { echo "$c: the seed's knob lines did not take the edit"; continue; }
  s0=$(date +%s.%N)
  timeout "${EVAL_TIMEOUT:-180}" aka eval --op-dir examples/ops/rope --kernel "$k" --framework Triton \
    --platform "$AKA_PLATFORM" --json >"$out/$(basename "$k" .py).json" 2>"$out/$(basename "$k" .py).err"
  python3 bench/official_compare.py aka "T=$t W=$w H=${h:-all}" "$?" "$s0" "$out/$(basename "$k" .py).json" |
    tee -a "$out/summary.txt"
done
