#!/bin/bash
# redteam_native.sh — hostile native C candidates through the real `aka eval`, each
# aimed at the judge, not at the kernel's own correctness: forging the verdict through
# harness code, descriptors or /proc, killing the judge, patching clocks (GOT, vDSO,
# interposition), output caches keyed on contents or shape, writing inputs during timed
# runs, threads left behind, and reporting "done" early. Every case must fail (exit 1,
# exactly one RESULT_JSON line, all_pass false) and name its specific reason.
#
# Every one of these candidates passed the single-process harness this judge replaced
# (docs/evaluator.md, "The judge"); the cases that use inline x86-64 system calls are
# skipped on other machines, and the ones that need the sandbox's PID namespace and
# dropped capabilities are skipped when bwrap cannot run here.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -u
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
OP=$SRC/examples/ops/vector_add
RED=$SRC/tests/redteam/native
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-redteam-native.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

ISO=bwrap
if ! "$AKA" sandbox run -- true >/dev/null 2>&1; then
    ISO=none
    echo "note: bwrap cannot run here; evaluating with --sandbox-isolation none"
fi
X86=0
[ "$(uname -m)" = x86_64 ] && X86=1

# Run flags per group: "fast" (few runs, every shape); "cache" (enough calls that a cache
# filled during the first 8 calls of a shape is used in timed runs; the two small shapes).
run_flags() {
    case $1 in
    fast) echo "--timed-runs 4 --warmup 1" ;;
    cache) echo "--timed-runs 12 --warmup 2 --shape-id n4k --shape-id odd" ;;
    esac
}

# name | group | needs (x86, bwrap, -) | text the result must contain
cases=(
    "forge_by_name|fast|x86|undefined reference to \`hx_emit_result'"
    "forge_by_address|fast|x86|never written: still the poison pattern"
    "forge_fd_write|fast|x86|sid=n4k: seed 0: the kernel ended its process with exit status 0"
    "forge_proc_fd|fast|x86|sid=n4k: seed 0: the kernel ended its process with exit status 0"
    "forge_ppid_fd|fast|x86 bwrap|never written: still the poison pattern"
    "forge_init_fd|fast|x86 bwrap|expected exactly one line starting with RESULT_JSON="
    "judge_mem|fast|x86 bwrap|never written: still the poison pattern"
    "kill_judge|fast|x86|sid=n4k: seed 0: the kernel ended its process with exit status 0"
    "got_clock|fast|x86|sid=n4k: timing tampered: the runner's own clock missed part of each call"
    "vdso_clock|fast|x86|sid=n4k: timing tampered: the runner's own clock missed part of each call"
    "interpose_clock|fast|-|kernel.c defines clock_gettime: functions of the C library or the runner may not be replaced (interposition)"
    "early_done|fast|x86|sid=n4k: timing tampered:"
    "content_cache|cache|-|sid=n4k: output of a timed run is wrong (shape n4k, timed run"
    "content_hash_cache|cache|-|sid=n4k: output of a timed run is wrong (shape n4k, timed run"
    "shape_cache|cache|-|sid=n4k: output of a timed run is wrong (shape n4k, timed run"
    "writes_input_timed|cache|-|sid=n4k: inputs modified during a timed run (shape n4k, timed run"
    "deferred_thread|fast|-|sid=n4k: seed 0: work deferred past timing: the kernel left 1 thread(s) running after the call returned"
)

# The case as the candidate it is: one self-contained kernel.c, with the text of
# redteam_x86.h (what several cases share) in place of its #include line.
case_source() {
    awk -v h="$RED/redteam_x86.h" '/^#include "redteam_x86.h"/ { while ((getline l < h) > 0) print l; next } { print }' \
        "$RED/$1.c" >"$TMP/$1.c"
}

# What a case that was not caught as expected got instead: its failures and, per shape, the
# timing cross-checks (candidate median, reference, limit), so a miss is diagnosable from the
# log alone.
show_why() {
    python3 - "$1" <<'EOF'
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("RESULT_JSON=")][0]
r = json.loads(line[len("RESULT_JSON="):])
for f in r.get("failures", []):
    print("    failure:", f[:300])
for sid, checks in sorted((r.get("judge") or {}).get("cross_check_by_shape", {}).items()):
    print("    cross-check", sid, json.dumps(checks, sort_keys=True))
EOF
}

# One case: exit 1, one RESULT_JSON line with all_pass false, the expected text in it.
run_case() {
    local name=$1 group=$2 want=$3 out=$TMP/$1.out
    case_source "$name"
    # shellcheck disable=SC2046 # the flags are words by design
    "$AKA" eval --sandbox-isolation "$ISO" --op-dir "$OP" --kernel "$TMP/$name.c" --framework C \
        --platform cpu $(run_flags "$group") >"$out" 2>"$TMP/$name.err"
    local got=$?
    if [ "$got" != 1 ]; then
        fail "$name: exit status $got, expected 1"
        grep -v '^RESULT_JSON=' "$TMP/$name.err" | tail -5 | sed 's/^/    /'
        return
    fi
    if ! python3 - "$out" <<'EOF'; then
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("RESULT_JSON=")]
assert len(lines) == 1, f"{len(lines)} RESULT_JSON lines"
r = json.loads(lines[0][len("RESULT_JSON="):])
assert r["all_pass"] is False and r["failures"], "not a failure"
EOF
        fail "$name: not exactly one failing RESULT_JSON line"
        return
    fi
    if grep '^RESULT_JSON=' "$out" | grep -qF -- "$want"; then
        ok "$name fails: $want"
    else
        fail "$name: the result does not say \"$want\""
        show_why "$out"
    fi
}

for entry in "${cases[@]}"; do
    IFS='|' read -r name group needs want <<<"$entry"
    if [[ " $needs " == *" x86 "* ]] && [ "$X86" = 0 ]; then
        echo "SKIP: $name uses inline x86-64 system calls"
        continue
    fi
    if [[ " $needs " == *" bwrap "* ]] && [ "$ISO" != bwrap ]; then
        echo "SKIP: $name needs the sandbox's PID namespace and dropped capabilities"
        continue
    fi
    run_case "$name" "$group" "$want"
done

# Work moved out of the judge's window in amounts below the "timing tampered" limit is
# charged to the run: early_done with 60 us of work after its forged "done" instead of 3 ms
# passes, and pays for those 60 us in its latency (without the charge: about 1 us).
if [ "$X86" = 1 ]; then
    sed 's/< 3000000)/< 60000)/' "$TMP/early_done.c" >"$TMP/early_done_small.c"
    if "$AKA" eval --sandbox-isolation "$ISO" --op-dir "$OP" --kernel "$TMP/early_done_small.c" \
        --framework C --platform cpu --timed-runs 12 --warmup 2 --shape-id n4k \
        >"$TMP/small.out" 2>"$TMP/small.err"; then
        lat=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split("=",1)[1]); print(r["latency_us_by_shape"]["n4k"])' "$TMP/small.out")
        # At least half: the charge is the excess less the pinger's cost (the median of its
        # recent answers), whose noise on a loaded machine is tens of us either way (56.7 us
        # seen at load 10; 27 us in CI when one ping was subtracted per run, before the median).
        if python3 -c "import sys; sys.exit(0 if $lat >= 30 else 1)"; then
            ok "early_done_small: the hidden 60 us are charged (n4k latency $lat us)"
        else
            fail "early_done_small: n4k latency $lat us, below the 60 us it hid"
        fi
    else
        fail "early_done_small: did not pass (it hides less than the tampering limit)"
        grep '^RESULT_JSON=' "$TMP/small.out" | cut -c1-500
    fi
fi

# The pinger's memory is closed to the runners: pinger_mem finds the pinger and tries to open
# /proc/<pinger>/mem for writing; it computes the right outputs only when it found the pinger
# and was refused, so a pass proves the refusal (against a pinger made dumpable again it
# failed here with NaN outputs).
if [ "$X86" = 1 ]; then
    case_source pinger_mem
    if "$AKA" eval --sandbox-isolation "$ISO" --op-dir "$OP" --kernel "$TMP/pinger_mem.c" \
        --framework C --platform cpu --timed-runs 4 --warmup 1 --shape-id n4k \
        >"$TMP/pinger_mem.out" 2>"$TMP/pinger_mem.err"; then
        ok "pinger_mem: the pinger was found and its memory refused to the runner"
    else
        fail "pinger_mem: the pinger was not found, or its memory was open to the runner"
        show_why "$TMP/pinger_mem.out"
    fi
fi

# The judge survived the kill: its own result names every shape.
if [ "$X86" = 1 ] && [ -s "$TMP/kill_judge.out" ]; then
    python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split("=",1)[1]); assert r["evaluator"]=="aka.native.c" and r["total"]==3, r' \
        "$TMP/kill_judge.out" && ok "kill_judge: the judge lived and reported all 3 shapes" ||
        fail "kill_judge: the result is not the judge's"
fi
if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all redteam_native checks passed"
