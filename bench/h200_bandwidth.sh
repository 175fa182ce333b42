#!/usr/bin/env bash
# h200_bandwidth.sh — issue 17 must-show 3 on a lent H200, in one device call (carry
# .devcarry; bench/make_devcarry.sh fills it): the device-to-device copy bandwidth
# (bench/d2d_bandwidth.py), then a built-in-agent campaign on each bundled memory-bound
# GPU operator and its incumbent's bandwidth on the largest shape against that copy
# bandwidth (bench/bandwidth_table.py). Lines go to $OUT/summary.txt, the campaigns'
# records to $OUT/<op>/. Clocks, power and compute mode are never touched.
#
#   OPS      which, as op:framework (default: row_sum_cuda:Cuda rmsnorm:Triton
#            silu_and_mul:Triton rope:Triton)
#   ITERS    --max-iters of each campaign (default 6); STALL --max-stall (default 3)
#   CAMPAIGN_S  the wall-clock limit of each campaign (default 270): a device call lasts at
#            most 600 s, so pass one or two operators per call; a campaign cut by the limit
#            keeps its records and is reported from its incumbent so far.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-h200-bandwidth}
mkdir -p "$out"
note() { echo "== $* ($(date -u +%T))" | tee -a "$out/summary.txt"; }

note "device-to-device copy"
python3 bench/d2d_bandwidth.py | tee -a "$out/summary.txt"
# The 2 GiB copy's median: the ceiling every row is compared with.
d2d=$(sed -n 's/^d2d copy 2 GiB: median [0-9.]* ms, \([0-9.]*\) GB\/s.*/\1/p' "$out/summary.txt")
[ -n "$d2d" ] || { echo "no copy bandwidth measured" | tee -a "$out/summary.txt"; exit 1; }

echo "| operator | incumbent | largest shape | bytes | latency (method) | bandwidth | of the copy |" \
  >"$out/table.md"
echo "|---|---|---|---|---|---|---|" >>"$out/table.md"
for spec in ${OPS:-row_sum_cuda:Cuda rmsnorm:Triton silu_and_mul:Triton rope:Triton}; do
  op=${spec%%:*} fw=${spec#*:} ws=/tmp/aka-bw/$op
  note "campaign: $op ($fw)"
  rm -rf "$ws" && mkdir -p "$ws" "$out/$op"
  s0=$(date +%s)
  timeout "${CAMPAIGN_S:-270}" aka optimize --op-dir "examples/ops/$op" --platform nvidia/h200 --framework "$fw" \
    --agent-cli builtin --max-iters "${ITERS:-6}" --max-stall "${STALL:-3}" --workspace "$ws" \
    >"$out/$op/optimize.out" 2>"$out/$op/optimize.err"
  echo "exit $?, $(( $(date +%s) - s0 )) s" | tee -a "$out/summary.txt"
  camp=$(ls -d "$ws"/kernel_opt_* 2>/dev/null | head -1)
  [ -n "$camp" ] || { tail -5 "$out/$op/optimize.err" | tee -a "$out/summary.txt"; continue; }
  cp "$camp"/memory/v*.json "$out/$op/" 2>/dev/null
  aka status "$camp" | tee -a "$out/summary.txt"
  # The native CUDA incumbent again, timed by kernel span (the campaign timed it by CUDA
  # events, whose ~3 us and the flush's dirty-L2 write-back a 67 MB kernel cannot hide).
  again=()
  if [ "$fw" = Cuda ]; then
    commit=$(aka status "$camp" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["incumbent"]["commit"])')
    git -C "$camp" show "$commit:kernel.cu" >"$out/$op/incumbent.cu"
    aka eval --op-dir "examples/ops/$op" --kernel "$out/$op/incumbent.cu" --framework Cuda \
      --platform nvidia/h200 --timing kernel-span --json >"$out/$op/span.json" 2>"$out/$op/span.err" &&
      again=("$out/$op/span.json")
  fi
  python3 bench/bandwidth_table.py "examples/ops/$op" "$camp" "$d2d" "${again[@]}" 2>&1 |
    tee -a "$out/table.md" "$out/summary.txt"
done
cat "$out/table.md"
