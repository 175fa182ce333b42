#!/usr/bin/env bash
# profile_parsers.sh — `aka profile --from-report` on the exports of
# tests/fixtures/profile (hand-written, see its README):
#   1. ncu raw page (sol and survey), PPU acu CSV, rocprofv3 counter and
#      kernel-trace CSV: per-kernel summaries checked field by field (launches
#      averaged, units scaled, thousands separators, bound, top stalls);
#   2. roofline context from the wiki's hardware records with --chip;
#   3. --kernel-regex and --top-kernels select; a bad regex exits 2;
#   4. truncated and malformed exports exit 2 with one line naming file:line
#      and the field;
#   5. a live profile on a machine without ncu or without a GPU exits 75;
#   and the exports recorded on the H200 (h200/): raw page summarized and consistent,
#   details page named, cut copies refused.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
: "${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}"
FIX="$AKA_SOURCE_DIR/tests/fixtures/profile"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-profile.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CACHE_HOME="$TMP/cache" XDG_DATA_HOME="$TMP/data" ATREX_AKA_WORKSPACE=""
unset ATREX_AKA_WORKTREE
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {
    local want=$1 got=0
    shift
    "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
    [ "$got" = "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}
check() { python3 -c "import json,sys,math; d=json.load(open('$TMP/out')); $1" || fail "$2"; }
near() { echo "abs(($1)-($2)) <= 1e-6*max(1,abs($2))"; }

# 1. ncu sol: the add kernel's two launches are averaged; base units; commas stripped.
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --json
check "k={x['name'].split('(')[0]:x for x in d['kernels']}; a=k['void add_kernel<float, 4>']; \
assert d['tool']=='ncu' and d['launches']==4 and a['launches']==2; \
assert $(near "a['duration_ns']" 12352) and $(near "a['dram_gbps']" 4080.2325); \
assert a['bound']=='memory' and a['registers']==16 and a['smem_bytes']==0; \
assert [s['reason'] for s in a['top_stalls']]==['long_scoreboard','short_scoreboard','barrier']; \
g=k['gemm_tile_kernel']; assert g['bound']=='compute' and g['smem_bytes']==50176; \
assert $(near "g['flop']" '33554432+2*1073741824+16777216'); \
assert k['reduce_rows_kernel']['bound']=='latency'; \
assert [x['duration_ns'] for x in d['kernels']]==sorted([x['duration_ns'] for x in d['kernels']],reverse=True)" \
    "ncu sol summary"
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_survey.csv" --json
check "assert all(k['bound']=='unknown' and k['memory_sol_pct'] is None for k in d['kernels'])" \
    "survey has durations only"
expect 0 "$AKA" profile --from-report "$FIX/ppu_acu.csv" --json
check "k=d['kernels'][0]; assert d['tool']=='ppu-acu' and k['launches']==2 and k['bound']=='memory'; \
assert $(near "k['compute_sol_pct']" 10.97) and $(near "k['occupancy_pct']" 81.18)" "ppu summary"
expect 0 "$AKA" profile --from-report "$FIX/rocprofv3_counter_collection.csv" --json
check "k={x['name']:x for x in d['kernels']}; a=k['add_kernel']; assert d['tool']=='rocprofv3'; \
assert a['launches']==2 and $(near "a['duration_ns']" 14400) and a['bound']=='memory'; \
assert $(near "a['dram_gbps']" '(49152*1024/14500+49152*1024/14300)/2'); \
assert a['registers']==24 and k['softmax_kernel']['smem_bytes']==8192 and k['softmax_kernel']['bound']=='latency'" \
    "rocprofv3 counters"
expect 0 "$AKA" profile --from-report "$FIX/rocprofv3_kernel_trace.csv" --json
check "assert [k['duration_ns'] for k in d['kernels']]==[41000,14500]" "rocprofv3 kernel trace"

# 2. Roofline from the wiki, with the record and its source.
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --chip H200 --json
check "r=[k for k in d['kernels'] if k['name'].startswith('void add')][0]['roofline']['dram']; \
assert r['record']=='nvidia.h200.hbm-bandwidth' and r['ceiling_gbps']==4800 and 'H200' in r['source']; \
assert $(near "r['pct_of_ceiling']" '100*4080.2325/4800')" "roofline"
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --chip H200
grep -q "roofline: DRAM 4080 of 4800 GB/s (85.0%; wiki nvidia.h200.hbm-bandwidth" "$TMP/out" ||
    fail "text roofline"
expect 2 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --chip H999

# 3. Selection.
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --kernel-regex 'add|reduce' --json
check "assert len(d['kernels'])==2 and d['kernels_left_out']==1" "kernel regex"
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --top-kernels 1 --json
check "assert [k['name'][:4] for k in d['kernels']]==['gemm']" "top kernels"
expect 2 "$AKA" profile --from-report "$FIX/ncu_raw_sol.csv" --kernel-regex '('
grep -q "kernel-regex" "$TMP/err" || fail "bad regex message"
expect 0 "$AKA" profile --from-report "$FIX/ncu_raw_survey.csv" --raw
grep -q "^--- raw export" "$TMP/out" || fail "--raw prints the export"

# 4. Malformed and truncated exports: exit 2, one line naming file:line and field.
bad() { # FILE PATTERN
    expect 2 "$AKA" profile --from-report "$FIX/$1"
    [ "$(wc -l <"$TMP/err")" = 1 ] || fail "$1: more than one line: $(cat "$TMP/err")"
    grep -qE -- "$FIX/$1$2" "$TMP/err" || fail "$1: expected '$2' in: $(cat "$TMP/err")"
    [ ! -s "$TMP/out" ] || fail "$1: printed a summary"
}
bad ncu_truncated.csv ':7: row has 13 fields, the header \(line 3\) has 28'
bad ncu_unterminated.csv ':7: unterminated quoted field'
bad ncu_bad_number.csv ":4: gpu__time_duration.sum: expected a number; got '12.4us'"
bad ncu_bad_unit.csv ":2: gpu__time_duration.sum: unexpected unit 'cycle'"
bad ncu_no_duration.csv ':1: gpu__time_duration.sum: required column missing'
bad ncu_header_only.csv ': no kernel rows'
bad not_a_profile.csv ":1: header: expected a profiler export"
bad rocprofv3_truncated.csv ':9: row has 9 fields, the header \(line 1\) has 19'
bad rocprofv3_bad_value.csv ":6: Counter_Value: expected a number; got 'lots'"
expect 2 "$AKA" profile --from-report "$TMP/missing.csv"

# 4b. Exports recorded on the H200 (tests/fixtures/profile/h200, ncu 2025.3, untouched): the
#     raw page parses (units byte/s and byte/block; gpu__dram_throughput); the rmsnorm
#     kernel's memory SOL agrees with its DRAM bytes over time against the wiki's 4.8 TB/s;
#     launches with other grids stay apart; the details page is named; cut copies fail.
H=$FIX/h200
expect 0 "$AKA" profile --from-report "$H/ncu_raw.csv" --chip H200 --json
check "k={x['name']:x for x in d['kernels'] if x['name']=='_rmsnorm_row'}['_rmsnorm_row']; \
assert d['launches']==4 and len(d['kernels'])==3 and k['launches']==2 and k['bound']=='memory'; \
assert $(near "k['duration_ns']" '(66720+65312)/2') and k['registers']==88 and k['smem_bytes']==16; \
assert k['top_stalls'][0]['reason']=='long_scoreboard' and k['dram_pct'] is not None; \
r=k['roofline']['dram']; assert abs(r['pct_of_ceiling']-k['memory_sol_pct']) < 2, (r, k['memory_sol_pct'])" \
    "H200 raw export"
expect 2 "$AKA" profile --from-report "$H/ncu_details.csv"
grep -q "ncu_details.csv:4: header: this is ncu's details page" "$TMP/err" || fail "details page: $(cat "$TMP/err")"
head -c 30000 "$H/ncu_raw.csv" >"$TMP/h200_cut.csv"
expect 2 "$AKA" profile --from-report "$TMP/h200_cut.csv"
grep -qE "h200_cut.csv:[0-9]+: (row has [0-9]+ fields|unterminated quoted field)" "$TMP/err" ||
    fail "cut H200 export: $(cat "$TMP/err")"
head -4 "$H/ncu_raw.csv" >"$TMP/h200_header.csv"
expect 2 "$AKA" profile --from-report "$TMP/h200_header.csv"
grep -q "h200_header.csv: no kernel rows" "$TMP/err" || fail "header-only H200 export: $(cat "$TMP/err")"

# 5. Live profiles need ncu and a GPU here (exit 75), a GPU platform and, for deep, a regex.
mkdir -p "$TMP/bin"
ln -s "$(command -v python3)" "$TMP/bin/python3"
expect 75 env PATH="$TMP/bin" "$AKA" profile --platform H200
grep -q "ncu not found on PATH" "$TMP/err" || fail "no-ncu message"
if [ ! -e /dev/nvidia0 ]; then
    printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/ncu" && chmod +x "$TMP/bin/ncu"
    expect 75 env PATH="$TMP/bin:$PATH" "$AKA" profile --platform H200
    grep -q "nvidia" "$TMP/err" || fail "no-GPU message"
fi
expect 2 "$AKA" profile --platform cpu
expect 2 "$AKA" profile --platform H200 --level deep
grep -q "needs --kernel-regex" "$TMP/err" || fail "deep without regex"
expect 2 "$AKA" profile --level medium
echo "profile_parsers: ok"
