#!/usr/bin/env bash
# eval_wall.sh — wall time of whole `aka eval` runs, for measuring what a change
# of the evaluator costs (issue 10: the judge's added cost).
#
#   bench/eval_wall.sh AKA N OP KERNEL FRAMEWORK PLATFORM [extra aka eval flags...]
#
# Runs `AKA eval` N times on examples/ops/OP with KERNEL (relative to the op dir)
# and prints one line per run (wall seconds, exit status, latency geomean µs from
# RESULT_JSON), then the median wall time and the median geomean. Needs python3
# for the JSON. Nothing is changed on the machine (clocks are never touched).
set -uo pipefail
aka=$1 n=$2 op=$3 kernel=$4 fw=$5 platform=$6
shift 6
cd "$(dirname "$0")/.."
walls=() geos=()
for i in $(seq 1 "$n"); do
  start=$(date +%s.%N)
  line=$("$aka" eval --op-dir "examples/ops/$op" --kernel "examples/ops/$op/$kernel" \
    --framework "$fw" --platform "$platform" "$@" 2>/dev/null | grep '^RESULT_JSON=')
  rc=$?
  end=$(date +%s.%N)
  wall=$(python3 -c "print(f'{$end-$start:.3f}')")
  geo=$(printf '%s' "${line#RESULT_JSON=}" | python3 -c \
    'import json,sys
try: print(json.load(sys.stdin).get("latency_us_geomean"))
except Exception: print("none")')
  echo "run $i: wall ${wall}s rc $rc geomean_us $geo"
  walls+=("$wall") geos+=("$geo")
done
python3 - "${walls[*]}" "${geos[*]}" <<'PY'
import statistics, sys
w = [float(x) for x in sys.argv[1].split()]
g = [float(x) for x in sys.argv[2].split() if x not in ("none", "None")]
print(f"median wall {statistics.median(w):.3f}s over {len(w)} runs;"
      f" median geomean {statistics.median(g) if g else float('nan'):.3f} us")
PY
