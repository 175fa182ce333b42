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
#   PROFILE  1 (default): the incumbent is also profiled on the largest shape (`aka profile
#            --level $PROFILE_LEVEL`, default survey: durations only, one pass per launch; Nsight Compute on a clean L2, --clock-control none) for a row from
#            the kernel's own duration: an event-timed 67 MB kernel carries ~3 us of events
#            and the flush's dirty-L2 write-back, which no kernel can hide (measurements.md)
#   AGENT_EVAL  --agent-eval of each campaign (default auto: the supervisor serves the
#            tuner's evaluations on a GPU; sandbox: nested in the agent sandbox)
#   ITERS    --max-iters of each campaign (default 6); STALL --max-stall (default 3)
#   CAMPAIGN_S  the wall-clock limit of each campaign (default 270): a device call lasts at
#            most 600 s, so pass one or two operators per call; a campaign cut by the limit
#            keeps its records and is reported from its incumbent so far.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-h200-bandwidth} root=$PWD
mkdir -p "$out"
. bench/lib_episode.sh
ncu_on_path
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
  timeout "${CAMPAIGN_S:-270}" aka optimize --op-dir "examples/ops/$op" --platform "$AKA_PLATFORM" --framework "$fw" \
    --agent-cli builtin --max-iters "${ITERS:-6}" --max-stall "${STALL:-3}" --workspace "$ws" \
    --agent-eval "${AGENT_EVAL:-auto}" \
    >"$out/$op/optimize.out" 2>"$out/$op/optimize.err"
  echo "exit $?, $(( $(date +%s) - s0 )) s" | tee -a "$out/summary.txt"
  camp=$(ls -d "$ws"/kernel_opt_* 2>/dev/null | head -1)
  [ -n "$camp" ] || { tail -5 "$out/$op/optimize.err" | tee -a "$out/summary.txt"; continue; }
  cp "$camp"/memory/v*.json "$out/$op/" 2>/dev/null
  aka status "$camp" | tee -a "$out/summary.txt"
  # No incumbent (V0 failed, or the limit came first): its row says so, and the next operator runs.
  commit=$(aka status "$camp" --json |
    python3 -c 'import json,sys; print((json.load(sys.stdin).get("incumbent") or {}).get("commit") or "")' 2>/dev/null)
  if [ -z "$commit" ]; then
    echo "| $op | no incumbent: $(cat "$camp"/memory/v0.failed.json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["quality_gate"]["failure_reason"][:160])' 2>/dev/null ||
      echo 'see its optimize.err') | | | | | |" | tee -a "$out/table.md" "$out/summary.txt"
    continue
  fi
  file=kernel.py && [ "$fw" = Cuda ] && file=kernel.cu
  mkdir -p "$out/$op/incumbent"
  git -C "$camp" show "$commit:$file" >"$out/$op/incumbent/$file"
  again=()
  # The native CUDA incumbent again, timed by kernel span (the campaign timed it by CUDA
  # events, whose ~3 us and the flush's dirty-L2 write-back a 67 MB kernel cannot hide).
  if [ "$fw" = Cuda ]; then
    aka eval --op-dir "examples/ops/$op" --kernel "$out/$op/incumbent/$file" --framework Cuda \
      --platform "$AKA_PLATFORM" --timing kernel-span --json >"$out/$op/span.json" 2>"$out/$op/span.err" &&
      again+=("$out/$op/span.json")
  fi
  if [ "${PROFILE:-1}" = 1 ]; then
    sid=$(python3 bench/bandwidth_table.py --largest "examples/ops/$op")
    re=$(case $op in row_sum_cuda) echo '^row_sum' ;; rmsnorm) echo _rmsnorm ;;
      silu_and_mul) echo _silu_and_mul ;; *) echo "_$op" ;; esac)
    episode "$op" "$out/$op/incumbent/$file" "$fw" "$AKA_PLATFORM" bwrap "$root/examples/ops/$op"
    (cd "$WT" && ATREX_AKA_WORKSPACE=$WS ATREX_AKA_EPISODE=e0001 timeout 240 aka profile \
      --shape-id "$sid" --level "${PROFILE_LEVEL:-survey}" --chip "$AKA_CHIP" --kernel-regex "$re" --json \
      >"$out/$op/profile.json" 2>"$out/$op/profile.err") && again+=("$out/$op/profile.json")
    tail -2 "$out/$op/profile.err" | tee -a "$out/summary.txt"
  fi
  python3 bench/bandwidth_table.py "examples/ops/$op" "$camp" "$d2d" "${again[@]}" 2>&1 |
    tee -a "$out/table.md" "$out/summary.txt"
done
cat "$out/table.md"
