#!/usr/bin/env bash
# cpu_timing_dispersion.sh — run-to-run dispersion of the native judge's CPU
# latency, by timing method (issue 17): the same kernel evaluated N times with
# "timing": "cpu_time" (the runner's CPU time) and N times with "timing": "wall"
# (the judge's window plus the excess charge), the two interleaved run by run,
# optionally with LOAD busy compile jobs beside them.
#
#   bench/cpu_timing_dispersion.sh AKA N LOAD [aka eval flags...]
#
# The kernel is examples/ops/matmul's seed with the configuration the README
# campaign reaches (the --tune flags below); LOAD is the number of
# `gcc -O2 -c` loops on a large generated C file run beside it (0: none).
# Prints per run each method's latency geomean, then per method the coefficient
# of variation of the geomeans over the N runs (the run-to-run dispersion) and
# the largest per-shape CV of the medians. Load average is printed before/after.
set -uo pipefail
aka=$1 n=$2 load=$3
shift 3
cd "$(dirname "$0")/.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-disp.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
for m in cpu_time wall; do
  cp -r examples/ops/matmul "$tmp/op_$m"
  python3 - "$tmp/op_$m/operator.json" "$m" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["timing"] = sys.argv[2]
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
done
if [ "$load" -gt 0 ]; then
  # A large translation unit: a few seconds of gcc -O2 each, in a loop.
  python3 -c "
for i in range(3000):
    print(f'double f{i}(double *a, int n) {{ double s = 0; for (int j = 0; j < n; j++) s += a[j] * {i} + j / (a[j] + 1.0); return s; }}')
" >"$tmp/big.c"
  for _ in $(seq 1 "$load"); do
    (while :; do gcc -O2 -c "$tmp/big.c" -o /dev/null; done) >/dev/null 2>&1 &
    pids+=($!)
  done
  sleep 3
fi
tune=(--tune AKA_CC_ARCH=native --tune AKA_CC_FMA=on --tune AKA_CC_OPT=O3 --tune MR=8 --tune NR=32)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), compile jobs beside: $load"
for i in $(seq 1 "$n"); do
  for m in cpu_time wall; do
    "$aka" eval --op-dir "$tmp/op_$m" --kernel examples/ops/matmul/seeds/C/kernel.c \
      --framework C --platform cpu "${tune[@]}" "$@" 2>/dev/null | grep '^RESULT_JSON=' |
      sed 's/^RESULT_JSON=//' >"$tmp/$m.$i.json"
  done
  python3 - "$tmp" "$i" <<'PY'
import json, sys
t, i = sys.argv[1], sys.argv[2]
out = []
for m in ("cpu_time", "wall"):
    try:
        r = json.load(open(f"{t}/{m}.{i}.json"))
        out.append(f"{m} {r['timing']['method']} geomean {r['latency_us_geomean']:.1f} us"
                   f" pass {r['all_pass']}")
    except Exception as e:
        out.append(f"{m} no result ({e})")
print(f"run {i}: " + "; ".join(out))
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp" "$n" <<'PY'
import json, statistics as st, sys
t, n = sys.argv[1], int(sys.argv[2])
for m in ("cpu_time", "wall"):
    rs = []
    for i in range(1, n + 1):
        try:
            r = json.load(open(f"{t}/{m}.{i}.json"))
            if r["all_pass"]:
                rs.append(r)
        except Exception:
            pass
    if len(rs) < 2:
        print(f"{m}: fewer than 2 passing runs"); continue
    g = [r["latency_us_geomean"] for r in rs]
    cv = st.pstdev(g) / st.mean(g)
    shapes = rs[0]["latency_us_by_shape"]
    per = {s: st.pstdev([r["latency_us_by_shape"][s] for r in rs]) /
              st.mean([r["latency_us_by_shape"][s] for r in rs]) for s in shapes}
    worst = max(per, key=per.get)
    print(f"{m}: {len(rs)} runs, geomean median {st.median(g):.1f} us, run-to-run CV of the "
          f"geomean {100 * cv:.2f}%, (max-min)/median {100 * (max(g) - min(g)) / st.median(g):.2f}%,"
          f" worst shape {worst} CV {100 * per[worst]:.2f}%")
PY
