#!/usr/bin/env bash
# wiki_import_latency.sh — `aka wiki import` of a whole upstream-layout store with long
# ids, then the median wall time of `aka wiki query` on the result.
#
# Generates the store with tests/wiki/gen_upstream_wiki.py (850 kernel records of which
# 80 have ids longer than 128 bytes, 50 hardware sheets: 900 upstream records; upstream's
# real gpu-wiki is not reachable from here), imports it as a user plugin
# ($XDG_DATA_HOME/aka/plugins/upstream-gen), builds the index once (untimed warm-up),
# then times RUNS (default 60) runs of the real binary cycling through queries, two of
# them `aka wiki show` by an upstream long id (the alias path). Each run is timed with
# bash's $EPOCHREALTIME around fork+exec+exit of aka: process start, plugin discovery
# and hashing, the SQLite open and the query are all inside.
#
# usage: bench/wiki_import_latency.sh [AKA_BIN] [RUNS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
AKA_BIN=${1:-$SRC/build/aka}
RUNS=${2:-60}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-wiki-import-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME=$TMP/cache XDG_DATA_HOME=$TMP/data HOME=$TMP/home
unset ATREX_AKA_WORKSPACE ATREX_AKA_HOME
# AKA_WIKI_STORE: a real upstream gpu-wiki/ directory instead of the generated one (e.g.
# `git archive` of alibaba/atrex-kernel-agent's gpu-wiki, fetched where a network exists).
if [ -n "${AKA_WIKI_STORE:-}" ]; then
    ln -s "$AKA_WIKI_STORE" "$TMP/store"
else
    python3 "$SRC/tests/wiki/gen_upstream_wiki.py" "$TMP/store"
fi
mkdir -p "$XDG_DATA_HOME/aka/plugins"
t0=$EPOCHREALTIME
"$AKA_BIN" wiki --repo-root "$SRC" import "$TMP/store" --out "$XDG_DATA_HOME/aka/plugins/upstream-gen" \
    --name upstream-gen
t1=$EPOCHREALTIME
echo "import: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1000 }') ms"
records=$("$AKA_BIN" wiki --repo-root "$SRC" check --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')
long=$(python3 -c "import json; print(next(iter(json.load(open('$XDG_DATA_HOME/aka/plugins/upstream-gen/import-report.json'))['mapped'])))")
"$AKA_BIN" wiki --repo-root "$SRC" query warm up >/dev/null # builds the index; not timed

queries=("query H200 HBM bandwidth" "query swizzle register" "query gemm --framework triton --kind technique"
    "query rms norm --vendor amd" "show $long" "query tile pipeline --family gemm --limit 20")
load=$(cut -d' ' -f1-3 /proc/loadavg)
times=()
for ((r = 0; r < RUNS; r++)); do
    eval "set -- ${queries[$((r % ${#queries[@]}))]}"
    t0=$EPOCHREALTIME
    "$AKA_BIN" wiki --repo-root "$SRC" "$@" >/dev/null
    t1=$EPOCHREALTIME
    times+=("$t0 $t1")
done
printf '%s\n' "${times[@]}" | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' | sort -n |
    awk -v runs="$RUNS" -v total="$records" -v bin="$AKA_BIN" -v load="$load" -v cores="$(nproc)" '
    { t[NR] = $1 }
    END {
        med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        printf "aka wiki query/show after import: %d runs over %d records (%s)\n", runs, total, bin
        printf "  wall: median %.2f ms  p90 %.2f ms  min %.2f ms  max %.2f ms\n", med, t[int(NR * 0.9)], t[1], t[NR]
        printf "  load average before: %s on %d cores\n", load, cores
        exit (med < 10.0) ? 0 : 1
    }'
