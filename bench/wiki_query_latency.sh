#!/usr/bin/env bash
# wiki_query_latency.sh — median wall time of `aka wiki query` on 1,000 records.
#
# Generates a temporary user plugin ($XDG_DATA_HOME/aka/plugins/bench-generated)
# with enough synthetic records to bring bundled + generated to TOTAL (default
# 1000), builds the index once (warm-up, not timed), then times RUNS (default
# 60) invocations of the real binary, cycling through a few representative
# queries. Each time is measured around fork+exec+exit of aka with bash's
# $EPOCHREALTIME, so process start, plugin discovery and hashing, SQLite open
# and the query itself are all included.
#
# usage: bench/wiki_query_latency.sh [AKA_BIN] [RUNS] [TOTAL]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
AKA_BIN=${1:-$SRC/build-release/aka}
RUNS=${2:-60}
TOTAL=${3:-1000}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-wiki-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME=$TMP/cache XDG_DATA_HOME=$TMP/data HOME=$TMP/home
unset ATREX_AKA_WORKSPACE ATREX_AKA_HOME
aka() { "$AKA_BIN" wiki --repo-root "$SRC" "$@"; }

bundled=$(aka check --json | jq .records)
need=$((TOTAL - bundled))
plugin=$XDG_DATA_HOME/aka/plugins/bench-generated
mkdir -p "$plugin/records"
printf '{"name": "bench-generated", "version": "0.0.1", "contributes": {"records": ["records"]}}\n' \
    >"$plugin/plugin.json"

# Synthetic records: varied scope and vocabulary so the index is not degenerate.
vendors=(nvidia amd generic cpu)
fws=(cuda triton triton c)
fams=(elementwise reduction norm softmax gemm attention moe quantization rope)
words=(tile pipeline swizzle vector register shared occupancy warp bank latency fusion epilogue)
for ((f = 0; f * 100 < need; f++)); do
    {
        echo "["
        for ((i = f * 100; i < need && i < (f + 1) * 100; i++)); do
            v=$((i % 4)) fam=${fams[$((i % 9))]} a=${words[$((i % 12))]} b=${words[$(((i / 12) % 12))]}
            [ $i -gt $((f * 100)) ] && echo ","
            printf '{"schema": "aka.wiki.kernel.v1", "id": "bench.gen.%05d", "kind": "technique",' "$i"
            printf ' "scope": {"vendor": "%s", "framework": "%s", "family": "%s"},' \
                "${vendors[$v]}" "${fws[$v]}" "$fam"
            printf ' "title": "Generated %s %s note %d for %s",' "$a" "$b" "$i" "$fam"
            printf ' "body": "Synthetic benchmark record %d about %s and %s in %s kernels; it exists only to grow the index.",' \
                "$i" "$a" "$b" "$fam"
            printf ' "tags": ["%s", "%s"], "source": {"kind": "document", "title": "aka benchmark generator", "ref": "bench/wiki_query_latency.sh"}}\n' "$a" "$b"
        done
        echo "]"
    } >"$plugin/records/gen-$f.json"
done

total=$(aka check --json | jq .records)
[ "$total" -eq "$TOTAL" ] || { echo "expected $TOTAL records, have $total" >&2; exit 1; }
aka query warm up >/dev/null # builds the index; not timed

queries=("H200 HBM bandwidth" "online softmax" "gemm --framework triton --kind technique"
    "rms norm --vendor amd" "cute-dsl gemm --arch hopper" "swizzle bank --family gemm --limit 20")
# CPU seconds of finished children (user + sys), from bash's `times`.
# (`times` must run in this shell, not in a $(...) subshell, to see our children.)
child_cpu() {
    times >"$TMP/times"
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$TMP/times"
}
load=$(cut -d' ' -f1-3 /proc/loadavg)
child_cpu >"$TMP/cpu0"
times=()
for ((r = 0; r < RUNS; r++)); do
    eval "set -- ${queries[$((r % ${#queries[@]}))]}"
    t0=$EPOCHREALTIME
    "$AKA_BIN" wiki --repo-root "$SRC" query "$@" >/dev/null
    t1=$EPOCHREALTIME
    times+=("$t0 $t1") # converted after the loop: no extra process between runs
done
child_cpu >"$TMP/cpu1"
cpu0=$(cat "$TMP/cpu0") cpu1=$(cat "$TMP/cpu1")
printf '%s\n' "${times[@]}" | awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' | sort -n | awk -v runs="$RUNS" -v total="$total" -v bin="$AKA_BIN" \
    -v cpu="$(awk -v a="$cpu0" -v b="$cpu1" -v n="$RUNS" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }')" \
    -v load="$load" -v cores="$(nproc)" '
    { t[NR] = $1 }
    END {
        med = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        printf "aka wiki query latency: %d runs over %d records (%s)\n", runs, total, bin
        printf "  wall: median %.2f ms  p90 %.2f ms  min %.2f ms  max %.2f ms\n", med, t[int(NR * 0.9)], t[1], t[NR]
        printf "  cpu (user+sys) per run: %s ms; load average before: %s on %d cores\n", cpu, load, cores
        exit (med < 10.0) ? 0 : 1
    }'
