#!/usr/bin/env bash
# abba_trials.sh — issue 17's second must-show: does a full (ABBA) verification
# promote a real ~5% improvement and refuse an identical candidate, with the
# native judge's CPU timing, while compile jobs load the machine?
#
#   bench/abba_trials.sh BUILD_DIR TRIALS LOAD [REPEATS]
#
# Incumbent: examples/ops/matmul's seed at the configuration the README campaign
# reaches (-O3, -march=native, FMA, MR 8, NR 32), plus a real extra cost: the
# product of its first ~4% of rows (rounded up to MR rows) is computed again
# (AKA_BENCH_EXTRA_PERMILLE, 40 unless EXTRA_PERMILLE says otherwise, compiled in by this
# script). "Better" candidate:
# the same kernel without the extra cost (about 5% less work; the improvement the
# runs measured is printed). "Identical" candidate: the incumbent's exact bytes.
# Each trial is what a full episode does: REPEATS (default 2, `aka optimize
# --verify-repeats`) blocks of `aka eval` runs in the order I C C I with the
# evaluator's defaults, then the campaign's own decision code (bench/abba_decide.c
# links src/optimize/verify_stats.c) with aka optimize's default limits. The two
# kinds of trial alternate. LOAD `gcc -O2 -c` loops on a large file run beside it.
# Prints one line per trial and the promotion counts; the load average is shown.
set -uo pipefail
build=$(realpath "$1") trials=$2 load=$3 repeats=${4:-2}
cd "$(dirname "$0")/.."
src=$PWD
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aka-abba.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through cleanup: the compile loops stop with the script
cc -O2 -I"$src/src" bench/abba_decide.c src/optimize/verify_stats.c -o "$tmp/abba_decide" \
  "$build/libaka_base.a" $(pkg-config --libs jansson libcrypto libarchive) -lm || exit 1
# The kernels: knobs fixed by #define, so every `aka eval` compiles the same bytes.
python3 - examples/ops/matmul/seeds/C/kernel.c "$tmp" "${EXTRA_PERMILLE:-40}" <<'PY'
import re, sys
src, out = open(sys.argv[1]).read(), sys.argv[2]
for k, v in {"AKA_CC_ARCH": "native", "AKA_CC_FMA": "on", "AKA_CC_OPT": "O3", "MR": "8",
             "NR": "32"}.items():
    src, n = re.subn(rf"#define {k} \S+", f"#define {k} {v}", src)
    assert n == 1, k
extra = """#ifdef AKA_BENCH_EXTRA_PERMILLE
    /* bench/abba_trials.sh: the product of the first rows again, a real extra cost. */
    int64_t mx = CEIL_DIV(m * AKA_BENCH_EXTRA_PERMILLE / 1000, MR) * MR;
    mx = min64(mx, m);
    memset(c, 0, (size_t)(mx * n) * sizeof(float));
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
        int64_t kc = min64(KC, k - p0);
        pack_b(b, n, p0, kc, bp);
        for (int64_t i0 = 0; i0 < mx; i0 += MC) {
            int64_t mc = min64(MC, mx - i0);
            pack_a(a, k, i0, mc, p0, kc, ap);
            block(ap, bp, c + i0 * n, n, mc, kc);
        }
    }
#endif
    return AKA_OK;
}"""
tail = "    return AKA_OK;\n}"
i = src.rindex(tail)
better = src[:i] + extra + src[i + len(tail):]
open(f"{out}/better.c", "w").write(better)
open(f"{out}/incumbent.c", "w").write(f"#define AKA_BENCH_EXTRA_PERMILLE {sys.argv[3]}\n" + better)
PY
if [ "$load" -gt 0 ]; then
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
ev() { # KERNEL OUT: one evaluation with the evaluator's defaults, as a full episode runs it
  "$build/aka" eval --op-dir examples/ops/matmul --kernel "$1" --framework C --platform cpu \
    2>/dev/null | grep '^RESULT_JSON=' | sed 's/^RESULT_JSON=//' >"$2"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); compile jobs beside: $load; repeats: $repeats"
prom_better=0 prom_same=0 n_better=0 n_same=0
for t in $(seq 1 "$trials"); do
  for kind in better identical; do
    cand=$tmp/better.c
    [ "$kind" = identical ] && cand=$tmp/incumbent.c
    for r in $(seq 1 "$repeats"); do
      ev "$tmp/incumbent.c" "$tmp/$t.$kind.$r.0"
      ev "$cand" "$tmp/$t.$kind.$r.1"
      ev "$cand" "$tmp/$t.$kind.$r.2"
      ev "$tmp/incumbent.c" "$tmp/$t.$kind.$r.3"
    done
    python3 - "$tmp" "$t" "$kind" "$repeats" >"$tmp/$t.$kind.json" <<'PY' || { echo "trial $t $kind: a run failed"; continue; }
import json, sys
d, t, kind, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
runs = [[json.load(open(f"{d}/{t}.{kind}.{r}.{s}")) for s in range(4)] for r in range(1, reps + 1)]
assert all(x["all_pass"] for rr in runs for x in rr), "a run did not pass"
shapes = sorted(runs[0][0]["latency_us_by_shape"])
lat = [x["latency_us_by_shape"][s] for rr in runs for x in rr for s in shapes]
print(json.dumps({"repeats": reps, "shapes": len(shapes), "lat": lat,
                  "method": runs[0][0]["timing"]["method"]}))
PY
    out=$("$tmp/abba_decide" "$tmp/$t.$kind.json")
    echo "trial $t $kind: $out (load $(cut -d' ' -f1 /proc/loadavg))"
    if [ "$kind" = better ]; then
      n_better=$((n_better + 1))
      [ "${out%% *}" = promote ] && prom_better=$((prom_better + 1))
    else
      n_same=$((n_same + 1))
      [ "${out%% *}" = promote ] && prom_same=$((prom_same + 1))
    fi
  done
done
echo "method: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["method"])' "$tmp/1.better.json" 2>/dev/null)"
echo "5% better candidate promoted in $prom_better of $n_better trials;" \
  "identical candidate promoted in $prom_same of $n_same trials"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
