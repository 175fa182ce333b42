#!/bin/bash
# eval_native.sh — `aka eval` end to end on the native C examples, through the
# sandbox (bwrap when it works here, else --sandbox-isolation none, said so).
#
#   1. every native C example: the reference submitted as the candidate passes,
#      the seed kernel passes, and the RESULT_JSON carries every DESIGN §4.6
#      field with the right type;
#   2. every planted wrong candidate in tests/redteam/native/ fails, with the
#      failure naming the shape (or the forbidden call / compiler error);
#   3. episode mode appends one line per evaluation, with the kernel's sha256, to
#      the worktree's .aka/evaluations.jsonl; standalone appends only with --record;
#   4. bad input exits 2, a failing reference exits 2, a missing GPU exits 75;
#   5. the harness sources compile warning-free, and the CUDA harness builds with
#      nvcc (skipped with a message when nvcc is missing);
#   6. SIGINT / SIGTERM while the candidate runs exit 130 / 143 with no job
#      directory and no job process left and nothing recorded; --record naming a
#      directory or a path in a missing directory is a usage error before any job
#      runs; an unusable --sandbox-tmp is 75; control characters in shape ids are
#      escaped in every message; run_native.sh's --profiler with a bad count is a
#      usage error.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -u
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
OPS=$SRC/examples/ops
RED=$SRC/tests/redteam/native
HARNESS=$SRC/runtime/harness/native
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-eval-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
FAST=(--timed-runs 4 --warmup 1)

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

ISO=bwrap
if ! "$AKA" sandbox run -- true >/dev/null 2>&1; then
    ISO=none
    echo "note: bwrap cannot run here; evaluating with --sandbox-isolation none"
fi

# ev NAME EXPECTED_STATUS ARGS... : run aka eval; output in $TMP/NAME.{out,err}
ev() {
    local name=$1 want=$2
    shift 2
    "$AKA" eval --sandbox-isolation "$ISO" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    local got=$?
    if [ "$got" != "$want" ]; then
        fail "$name: exit status $got, expected $want"
        sed 's/^/    /' "$TMP/$name.err" | head -20
        return 1
    fi
    return 0
}

# check_result NAME PASS(true|false): every §4.6 field, typed; for a pass, measured.
check_result() {
    python3 - "$TMP/$1.out" "$2" "$ISO" <<'EOF' || fail "$1: RESULT_JSON fields"
import json, re, sys
path, want_pass, iso = sys.argv[1], sys.argv[2] == "true", sys.argv[3]
lines = [l for l in open(path) if l.startswith("RESULT_JSON=")]
assert len(lines) == 1, f"{len(lines)} RESULT_JSON lines"
r = json.loads(lines[0][len("RESULT_JSON="):])
num = (int, float)
opt = lambda v: v is None or isinstance(v, num)
types = {"all_pass": bool, "total": int, "passed": int, "failures": list,
         "latency_us_by_shape": dict, "evaluator": str, "eval_id": str,
         "kernel_sha256": str, "seeds": list, "timing": dict,
         "actionable_diagnostics": list, "sandbox_isolation": str}
for k, t in types.items():
    assert isinstance(r.get(k), t), f"{k}: {r.get(k)!r} is not {t.__name__}"
for k in ("latency_us_geomean", "latency_us_arith_mean", "speedup_vs_ref_geomean",
          "speedup_vs_ref_mean", "performance_score", "max_abs_err", "max_rel_err"):
    assert k in r and opt(r[k]), f"{k}: {r.get(k)!r}"
t = r["timing"]
assert isinstance(t["method"], str) and isinstance(t["warmup"], int)
assert isinstance(t["reps"], int) and isinstance(t["l2_flush"], bool)
assert isinstance(t["cv_by_shape"], dict)
assert re.fullmatch(r"[0-9a-f]{64}", r["kernel_sha256"])
assert all(isinstance(s, int) for s in r["seeds"]) and r["seeds"]
assert all(isinstance(f, str) for f in r["failures"])
assert all(isinstance(d, dict) and "stage" in d and "message" in d
           for d in r["actionable_diagnostics"])
assert r["sandbox_isolation"] == iso
assert r["all_pass"] == want_pass, f"all_pass {r['all_pass']}"
if want_pass:
    assert r["passed"] == r["total"] > 0 and not r["failures"]
    # No real kernel takes under 50 ns: a clock that reads a running process's CPU time
    # only at ticks once reported a 4k vector_add at 0.001 us.
    assert all(isinstance(v, num) and v > 0.05 for v in r["latency_us_by_shape"].values()), r
    for k in ("latency_us_geomean", "speedup_vs_ref_mean", "performance_score"):
        assert isinstance(r[k], num) and r[k] > 0, k
    assert r["evaluator"] == "aka.native.c" and t["method"] == "cpu_time", t
EOF
}

result_has() { grep '^RESULT_JSON=' "$TMP/$1.out" | grep -qF -- "$2"; }

# The two smallest shapes of an operator (by elements over all dims), as --shape-id flags:
# the larger ones only make the naive references slow, not the checks stronger.
small_shapes() {
    python3 - "$1/operator.json" <<'EOF'
import json, math, sys
op = json.load(open(sys.argv[1]))
size = lambda s: math.prod(s["dims"].values())
for s in sorted(op["shapes"], key=size)[:2]:
    print("--shape-id=" + s["id"])
EOF
}

# ---- 1. every native C example: reference as candidate, seed kernel ------------------------
for opdir in "$OPS"/*/; do
    op=$(basename "$opdir")
    grep -q '"language": *"c"' "$opdir/operator.json" 2>/dev/null || continue
    mapfile -t SHAPES < <(small_shapes "$opdir")
    # The reference as a candidate: same code under the candidate's entry name.
    sed 's/\baka_reference\b/aka_kernel/g' "$opdir/reference.c" >"$TMP/$op-ref-kernel.c"
    if ev "$op-ref" 0 --op-dir "$opdir" --kernel "$TMP/$op-ref-kernel.c" --framework C \
        --platform cpu "${FAST[@]}" "${SHAPES[@]}"; then
        check_result "$op-ref" true && ok "$op: the reference as candidate passes (${SHAPES[*]})"
    fi
    if ev "$op-seed" 0 --op-dir "$opdir" --kernel "$opdir/seeds/C/kernel.c" --framework C \
        --platform cpu "${FAST[@]}" "${SHAPES[@]}" --multi-seed 2; then
        check_result "$op-seed" true && ok "$op: the seed kernel passes (2 seeds)"
    fi
done

# ---- time budget: a reference that takes 200 ms per call -------------------------------------
# 25 timed runs and 3 warm-ups would take 5.6 s per runner on this shape; the default budget
# (2000 ms of timed runs per shape and runner) cuts the schedule from the reference's
# correctness call, and the result records the budget and the count.
cp -r "$OPS/vector_add" "$TMP/va_slow"
cat >"$TMP/va_slow/reference.c" <<'EOF_C'
/* vector_add, but every call first waits 200 ms: a slow reference. */
#define _POSIX_C_SOURCE 199309L
#include "aka_native_abi.h"
#include <time.h>

int aka_reference(const aka_tensor *inputs, int n_in, aka_tensor *outputs, int n_out,
                  const aka_params *params)
{
    struct timespec t0, t;
    (void)params;
    if (n_in != 2 || n_out != 1)
        return AKA_ERR_SHAPE;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000000L);
    const float *x = (const float *)inputs[0].data, *y = (const float *)inputs[1].data;
    float *z = (float *)outputs[0].data;
    for (int64_t i = 0; i < outputs[0].shape[0]; i++)
        z[i] = x[i] + y[i];
    return AKA_OK;
}
EOF_C
t0=$(date +%s)
if ATREX_AKA_HEARTBEAT_S=1 ev va-slow 0 --op-dir "$TMP/va_slow" \
    --kernel "$TMP/va_slow/seeds/C/kernel.c" --framework C --platform cpu --shape-id n4k; then
    # A job of several seconds: the heartbeat said so every second, on stderr only.
    grep -q '^aka eval: the job is still running ([0-9]* s)$' "$TMP/va-slow.err" &&
        ! grep -q 'still running' "$TMP/va-slow.out" &&
        ok "heartbeat: a long job is said to be running, on stderr" ||
        fail "heartbeat: no 'still running' line on stderr"
    took=$(($(date +%s) - t0))
    python3 - "$TMP/va-slow.out" "$took" <<'EOF_PY' && ok "time budget: the 200 ms reference's schedule was cut (${took} s)" || fail "time budget: $(cat "$TMP/va-slow.err" | tail -3)"
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("RESULT_JSON=")][0]
t = json.loads(line[len("RESULT_JSON="):])["timing"]
assert t["time_budget_ms"] == 2000, t
reps = t["reps_by_shape"]["n4k"]
# 2000 ms / (200 ms and the judge's window around it): 9 or 10 runs, never the plan's 25.
assert 3 <= reps <= 10 and t["reps"] == 25, t
assert int(sys.argv[2]) < 60, f"took {sys.argv[2]} s"
EOF_PY
fi

# ---- aka eval -v: where the time went, and whether the judge's fill helpers ran --------------
# A tensor of three 2^20-element chunks is filled by min(CPUs, 8, 3) threads; inside the
# sandbox the helpers must really start (on a device they once seemed not to help).
cp -r "$OPS/vector_add" "$TMP/va_big"
python3 - "$TMP/va_big/operator.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["shapes"] = [{"id": "n3m", "dims": {"N": 3 << 20}}]
json.dump(d, open(sys.argv[1], "w"))
EOF
if ev va-verbose 0 -v --op-dir "$TMP/va_big" --kernel "$TMP/va_big/seeds/C/kernel.c" \
    --framework C --platform cpu "${FAST[@]}"; then
    python3 - "$TMP/va-verbose.err" <<'EOF' && ok "aka eval -v: stage times and per-schedule costs; the fill helpers ran" || fail "aka eval -v: $(grep -m2 'schedule shape=' "$TMP/va-verbose.err")"
import re, sys
log = open(sys.argv[1]).read()
assert re.search(r"^aka-native: at=\d+ms", log, re.M), "no stage times"
roles = re.findall(r"schedule shape=n3m (reference|candidate): 5 runs, prepare \d+ ms, runner \d+ ms, "
                   r"checks \d+ ms \(\d+ with inputs compared; fills and compares on up to "
                   r"(\d+) of (\d+) CPUs\)", log)
assert sorted(r[0] for r in roles) == ["candidate", "reference"], roles
for _, used, cpus in roles:
    assert int(used) == min(int(cpus), 8, 3), (used, cpus)
EOF
    # The pinger (forked from the judge before the secret exists) answered a request before
    # every timed run of both roles: 2 x (1 warm-up + 4 timed), at least.
    python3 - "$TMP/va-verbose.out" <<'EOF' && ok "the pinger answered every run's calibration request; the judge block as documented" || fail "the pinger: $(grep -m1 'pinger' "$TMP/va-verbose.err")"
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("RESULT_JSON=")][0]
judge = json.loads(line[len("RESULT_JSON="):])["judge"]
assert judge["pinger_requests"] >= 10, judge["pinger_requests"]
# The block as docs/evaluator.md lists it (CPU: no prep/fetch checks).
assert set(judge) == {"processes", "fresh_inputs", "timed_runs", "pinger_requests",
                      "checked_timed_runs_by_shape", "runner_reported_latency_us_by_shape",
                      "cross_check_by_shape"}, sorted(judge)
cross = judge["cross_check_by_shape"]["n3m"]
assert set(cross) == {"attempts", "clean_runs", "reference_clean_runs", "gap", "excess_cpu",
                      "latency_statistic"}, cross
for check in ("gap", "excess_cpu"):
    assert set(cross[check]) == {"candidate_median_us", "reference_us", "limit_us"}, cross[check]
EOF
fi

# A heartbeat interval that is not whole seconds is bad input: exit 2, the variable named.
if ATREX_AKA_HEARTBEAT_S=1m ev heartbeat-bad 2 --op-dir "$OPS/vector_add" \
    --kernel "$OPS/vector_add/seeds/C/kernel.c" --framework C --platform cpu --shape-id n4k; then
    grep -qF "ATREX_AKA_HEARTBEAT_S: expected an integer in [0, 86400]; got '1m'" \
        "$TMP/heartbeat-bad.err" &&
        ok "heartbeat: ATREX_AKA_HEARTBEAT_S=1m is refused (exit 2)" ||
        fail "heartbeat: the bad value's error does not name the variable"
fi

# ---- 2. planted wrong candidates ----------------------------------------------------------
# The timing method is the operator's: "cpu_time" (the default: the runner's CPU time, read
# while it sleeps) is recorded as such above; "wall" (the judge's window) as cpu_monotonic.
# A 4k-float add on inputs fresh from memory takes microseconds. When the judge read the
# running runner's process clock (it lags until a tick or a context switch), this shape
# measured 0.001 us; read with the runner asleep it is 4-5 us here.
n4k() {
    grep '^RESULT_JSON=' "$TMP/$1.out" | sed 's/^RESULT_JSON=//' |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["latency_us_by_shape"]["n4k"])'
}
cp -r "$OPS/vector_add" "$TMP/va_wall"
python3 - "$TMP/va_wall/operator.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["timing"] = "wall"; json.dump(d, open(sys.argv[1], "w"))
EOF
for v in va-cpu va-wall; do
    dir=$OPS/vector_add method=cpu_time
    [ "$v" = va-wall ] && dir=$TMP/va_wall method=cpu_monotonic
    ev "$v" 0 --op-dir "$dir" --kernel "$dir/seeds/C/kernel.c" --framework C --platform cpu \
        --shape-id n4k "${FAST[@]}" || continue
    result_has "$v" "\"method\":\"$method\"" && ok "timing of $v: method $method" ||
        fail "timing of $v: the result does not say method $method"
    lat=$(n4k "$v")
    python3 -c "import sys; sys.exit(0 if float('$lat') > 0.5 else 1)" &&
        ok "timing of $v: n4k measured $lat us (> 0.5 us)" ||
        fail "timing of $v: n4k measured $lat us; the CPU clock was read while it lagged"
done
# Compiler knobs: a value outside the closed table is bad input, and nothing runs.
if ev cc-ofast 2 --op-dir "$OPS/matmul" --kernel "$OPS/matmul/seeds/C/kernel.c" --framework C \
    --platform cpu --tune AKA_CC_OPT=Ofast "${FAST[@]}"; then
    grep -q "AKA_CC_OPT: expected one of O2, O3; got 'Ofast'" "$TMP/cc-ofast.err" &&
        ok "AKA_CC_OPT=Ofast is refused (exit 2)" || fail "cc-ofast: $(cat "$TMP/cc-ofast.err")"
fi

# name | text the RESULT_JSON must contain
cases=(
    "off_by_one|sid=n4k: seed 0: output 'z'[4095]"
    "wrong_on_one_shape|sid=odd: seed 0: output 'z'[50001]"
    "nan_one_element|sid=n4k: seed 0: output 'z'[1365] (flat 1365) = nan"
    "never_writes|never written: still the poison pattern"
    "lazy_after_warmup|sid=n4k: output of a timed run is wrong (shape n4k, timed run"
    "pointer_cache|sid=n4k: output of a timed run is wrong (shape n4k, timed run"
    "modifies_input|sid=n4k: seed 0: the kernel modified input 'x'"
    "crashes|sid=odd: seed 0: the kernel crashed with signal 11"
    "reads_file|kernel.c calls fopen"
    "reads_clock|kernel.c calls clock_gettime"
    "forges_result|kernel.c calls exit"
    "does_not_compile|compile: kernel.c:7:"
)
for entry in "${cases[@]}"; do
    name=${entry%%|*} want=${entry#*|}
    if ev "red-$name" 1 --op-dir "$OPS/vector_add" --kernel "$RED/$name.c" --framework C \
        --platform cpu "${FAST[@]}"; then
        check_result "red-$name" false
        if result_has "red-$name" "$want"; then
            ok "red team $name fails: $want"
        else
            fail "red team $name: the result does not say \"$want\""
            grep '^RESULT_JSON=' "$TMP/red-$name.out" | cut -c1-600
        fi
    fi
done
# Only the shape it is wrong on fails.
python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().split("=",1)[1]); assert (r["passed"], r["total"]) == (2, 3), r' \
    "$TMP/red-wrong_on_one_shape.out" && ok "wrong_on_one_shape: 2 of 3 cases pass" ||
    fail "wrong_on_one_shape: expected 2 of 3 cases to pass"
grep -q '"stage":"compile"' "$TMP/red-does_not_compile.out" &&
    ok "compile errors come back as actionable diagnostics" ||
    fail "does_not_compile: no compile diagnostic"
# 15 s: compiling three programs and the reference phase must fit before the candidate
# spins, also on a loaded 2-core CI runner (6 s did not, at load 6).
if ev red-spins 1 --op-dir "$OPS/vector_add" --kernel "$RED/spins.c" --framework C \
    --platform cpu "${FAST[@]}" --shape-id odd --timeout 15; then
    result_has red-spins "timed out after 15 s during candidate shape=odd" &&
        ok "an endless kernel times out, naming the shape" || fail "spins: no timeout naming odd"
fi

# ---- 3. records -----------------------------------------------------------------------------
ws=$TMP/ws wt=$TMP/wt
mkdir -p "$ws/.aka" "$wt/src"
echo "gitdir: $ws/.git/worktrees/e0001" >"$wt/.git"
cp "$OPS/vector_add/seeds/C/kernel.c" "$wt/kernel.c"
printf '{"op_dir": "%s", "framework": "C", "platform": "cpu", "kernel": "kernel.c", "sandbox_isolation": "%s", "mode": "development"}\n' \
    "$OPS/vector_add" "$ISO" >"$ws/.aka/campaign.json"
for i in 1 2; do
    (cd "$wt/src" && ATREX_AKA_WORKSPACE=$ws ATREX_AKA_EPISODE=e0001 \
        "$AKA" eval --shape-id n4k "${FAST[@]}" >"$TMP/episode$i.out" 2>"$TMP/episode$i.err") ||
        fail "episode eval $i: exit status $?"
done
sha=$(sha256sum "$wt/kernel.c" | cut -d' ' -f1)
python3 - "$wt/.aka/evaluations.jsonl" "$sha" <<'EOF' && ok "episode mode: 2 evaluations.jsonl lines with the kernel sha256" || fail "episode evaluations.jsonl"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, len(lines)
for l in lines:
    rec = json.loads(l)
    assert rec["kernel_sha256"] == sys.argv[2] == rec["result"]["kernel_sha256"], rec["kernel_sha256"]
    assert rec["episode"] == "e0001" and rec["all_pass"] is True and rec["result"]["all_pass"]
    assert rec["shape_ids"] == ["n4k"] and rec["framework"] == "C" and rec["platform"] == "cpu"
EOF
(cd "$wt" && ATREX_AKA_WORKSPACE=$ws "$AKA" eval --op-dir "$OPS/vector_add" >/dev/null 2>&1)
[ $? = 2 ] && ok "episode mode refuses --op-dir" || fail "episode mode accepted --op-dir"
mkdir -p "$TMP/rec"
if ev standalone-record 0 --op-dir "$OPS/vector_add" --kernel "$OPS/vector_add/seeds/C/kernel.c" \
    --framework C --platform cpu --shape-id n4k "${FAST[@]}" --record "$TMP/rec/evals.jsonl"; then
    [ "$(wc -l <"$TMP/rec/evals.jsonl")" = 1 ] && ok "--record appends one line" ||
        fail "--record: expected one line"
fi

# ---- 4. bad input and environment ------------------------------------------------------------
k=$OPS/vector_add/seeds/C/kernel.c
ev bad-shape 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu --shape-id nope &&
    grep -q 'no such shape' "$TMP/bad-shape.err" && ok "unknown shape id: exit 2"
ev bad-framework 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework Triton --platform cpu &&
    ok "framework that does not fit the operator: exit 2"
ev bad-platform 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform tpu &&
    ok "unknown platform: exit 2"
ev bad-knob 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu --tune 'UNROLL=4;id' &&
    ok "knob value with shell characters: exit 2"
ev unknown-knob 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu --tune TILE=4 &&
    ok "knob the operator does not declare: exit 2"
ev knob 0 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu --tune UNROLL=8 \
    --shape-id odd "${FAST[@]}" && ok "--tune UNROLL=8 builds and passes"
cp -r "$OPS/vector_add" "$TMP/badref"
sed -i 's/    int64_t n = outputs\[0\].shape\[0\];/    int64_t n = outputs[0].shape[0];\n    if (n == 4096)\n        return AKA_ERR_UNSUPPORTED;/' \
    "$TMP/badref/reference.c"
ev bad-reference 2 --op-dir "$TMP/badref" --kernel "$k" --framework C --platform cpu "${FAST[@]}" &&
    grep -q "reference failed" "$TMP/bad-reference.err" && ok "a failing reference is exit 2, not the candidate's failure"
cp -r "$OPS/vector_add" "$TMP/longid"
long=$(printf 'n%.0s' $(seq 1 130))
sed -i "s/\"id\": \"n4k\"/\"id\": \"$long\"/" "$TMP/longid/operator.json"
ev long-shape-id 2 --op-dir "$TMP/longid" --kernel "$k" --framework C --platform cpu --shape-id "$long" \
    "${FAST[@]}" && grep -q 'names must be shorter than 128 bytes' "$TMP/long-shape-id.err" &&
    ok "a shape id too long for the runner's descriptor: exit 2, named"
if [ ! -e /dev/nvidiactl ]; then
    ev no-gpu 75 --op-dir "$OPS/row_sum_cuda" --kernel "$OPS/row_sum_cuda/seeds/Cuda/kernel.cu" \
        --framework Cuda --platform nvidia/h200 && ok "CUDA operator without a GPU: exit 75"
fi

# ---- 5. the harness builds cleanly -------------------------------------------------------------
(cd "$HARNESS" && for f in harness_plan.c harness_data.c harness_io.c harness_flow.c harness_timing.c \
    harness_result.c judge_runner.c judge.c runner_loop.c runner_cpu.c; do
    cc -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -c "$f" -o "$TMP/$f.o" || exit 1
done && cat harness_plan.c harness_data.c harness_io.c harness_flow.c harness_timing.c \
    harness_result.c judge_runner.c judge.c >"$TMP/judge_all.c" &&
    cc -std=c11 -O2 -Wall -Wextra -Werror -Wshadow -I. -c "$TMP/judge_all.c" -o "$TMP/judge_all.o") &&
    ok "native judge and runner: warning-free with -Wall -Wextra -Werror (the judge's files one by one and as one unit)" ||
    fail "native harness warnings"
if command -v nvcc >/dev/null 2>&1; then
    mkdir -p "$TMP/cuda" && cp "$HARNESS"/* "$OPS/row_sum_cuda/reference.cu" "$TMP/cuda/" &&
        cp "$OPS/row_sum_cuda/seeds/Cuda/kernel.cu" "$TMP/cuda/"
    if (cd "$TMP/cuda" &&
        nvcc -std=c++17 -arch=sm_90 -O2 -Xcompiler -Wall,-Wextra -c runner_cuda.cu -o runner_target.o &&
        nvcc -std=c++17 -arch=sm_90 -O3 -c reference.cu -o reference.o &&
        nvcc -std=c++17 -arch=sm_90 -O3 -DBLOCK=128 -c kernel.cu -o kernel.o &&
        cc -std=c11 -O2 -c runner_loop.c -o runner_loop.o &&
        objcopy --redefine-sym aka_kernel=aka_runner_entry kernel.o kernel.r.o &&
        nvcc -arch=sm_90 -o candrun runner_loop.o runner_target.o kernel.r.o -lm) >"$TMP/nvcc.log" 2>&1; then
        ok "CUDA runner and row_sum_cuda compile and link with nvcc -arch=sm_90"
    else
        fail "CUDA runner does not compile"
        tail -20 "$TMP/nvcc.log"
    fi
else
    echo "SKIP: nvcc is not installed; the CUDA runner build check did not run"
fi

# ---- 6. stop signals, --record, --sandbox-tmp, escaping ----------------------------------------
SIGT=$TMP/sigtmp
mkdir -p "$SIGT"
SIGT=$(cd "$SIGT" && pwd -P)
# Live processes of a job under $SIGT: every job process has HOME=<its job dir>.
job_procs() {
    local f st
    for f in $(grep -lsa "HOME=$SIGT/" /proc/[0-9]*/environ 2>/dev/null); do
        st=$(sed 's/.*) //' "${f%/environ}/stat" 2>/dev/null | cut -c1)
        [ -n "$st" ] && [ "$st" != Z ] && echo "${f%/environ}"
    done
}
harness_running() {
    local d
    for d in $(job_procs); do [ "$(cat "$d/comm" 2>/dev/null)" = candrun ] && return 0; done
    return 1
}
for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    "$AKA" eval --sandbox-isolation "$ISO" --op-dir "$OPS/vector_add" --kernel "$RED/spins.c" \
        --framework C --platform cpu "${FAST[@]}" --timeout 120 --sandbox-tmp "$SIGT" \
        --record "$TMP/sig.jsonl" >"$TMP/sig.out" 2>"$TMP/sig.err" &
    pid=$!
    for _ in $(seq 600); do harness_running && break; sleep 0.1; done
    harness_running || fail "SIG$sig: the spinning candidate never started"
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" = "$want" ] && ok "SIG$sig while the candidate runs: exit $want" ||
        fail "SIG$sig: exit $rc, expected $want"
    grep -q "interrupted by SIG$sig" "$TMP/sig.err" || fail "SIG$sig: no 'interrupted' message"
    for _ in $(seq 50); do [ -z "$(job_procs)" ] && break; sleep 0.1; done
    [ -z "$(job_procs)" ] && ok "SIG$sig: no process of the job survives" ||
        fail "SIG$sig: job processes left: $(job_procs)"
    [ -z "$(ls -A "$SIGT")" ] && ok "SIG$sig: no job directory left" ||
        fail "SIG$sig: left in the temp directory: $(ls -A "$SIGT")"
    [ ! -e "$TMP/sig.jsonl" ] && ok "SIG$sig: nothing recorded" || fail "SIG$sig: a record was written"
done

mkdir -p "$TMP/recdir"
t0=$(date +%s)
ev record-dir 2 --op-dir "$OPS/vector_add" --kernel "$RED/spins.c" --framework C --platform cpu \
    --timeout 60 --sandbox-tmp "$SIGT" --record "$TMP/recdir" &&
    { grep -qF -- "--record $TMP/recdir: is a directory" "$TMP/record-dir.err" &&
        ok "--record DIR: exit 2 naming it" || fail "--record DIR: $(cat "$TMP/record-dir.err")"; }
ev record-no-parent 2 --op-dir "$OPS/vector_add" --kernel "$RED/spins.c" --framework C \
    --platform cpu --timeout 60 --sandbox-tmp "$SIGT" --record "$TMP/nodir/evals.jsonl" &&
    { grep -qF "directory $TMP/nodir does not exist" "$TMP/record-no-parent.err" &&
        ok "--record in a missing directory: exit 2 naming it" ||
        fail "--record in a missing directory: $(cat "$TMP/record-no-parent.err")"; }
# The candidate spins until the 60 s limit: a usage error that ran it would take that long.
[ $(($(date +%s) - t0)) -lt 30 ] && ! grep -q "^aka eval: " "$TMP/record-dir.err" \
    "$TMP/record-no-parent.err" && [ ! -e "$TMP/nodir" ] && [ -z "$(ls -A "$TMP/recdir")" ] &&
    ok "--record errors come before any evaluation" || fail "--record: an evaluation ran first"

ev eval-tmp 75 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu \
    --sandbox-tmp "$TMP/no-such-tmp" &&
    { grep -qF "sandbox temp directory $TMP/no-such-tmp (--sandbox-tmp): No such file or directory" \
        "$TMP/eval-tmp.err" && ok "an unusable --sandbox-tmp: exit 75 naming it" ||
        fail "--sandbox-tmp: $(cat "$TMP/eval-tmp.err")"; }

# An ESC sequence and a newline in a shape id: shown escaped, on one line, in the
# usage error and in the failure lines of the summary (the JSON escapes it itself).
esc_clean() { ! grep -q $'\e' "$1" && grep -qF -- "$2" "$1"; }
ev esc-shape-flag 2 --op-dir "$OPS/vector_add" --kernel "$k" --framework C --platform cpu \
    --shape-id $'n4k\e[2J\nforged' &&
    { [ "$(wc -l <"$TMP/esc-shape-flag.err")" = 1 ] &&
        esc_clean "$TMP/esc-shape-flag.err" 'n4k\x1b[2J\nforged: no such shape' &&
        ok "a shape id with ESC and a newline is escaped in the error line" ||
        fail "shape id not escaped: $(cat -A "$TMP/esc-shape-flag.err")"; }
cp -r "$OPS/vector_add" "$TMP/escop"
python3 - "$TMP/escop/operator.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["shapes"]:
    if s["id"] == "n4k":
        s["id"] = "n4k\x1b[31m\nforged"
json.dump(d, open(sys.argv[1], "w"), indent=2)
EOF
ev esc-shape-op 1 --op-dir "$TMP/escop" --kernel "$RED/off_by_one.c" --framework C --platform cpu \
    "${FAST[@]}" &&
    { esc_clean "$TMP/esc-shape-op.err" "aka eval: sid=n4k\x1b[31m\nforged: seed 0: output 'z'[4095]" &&
        ! grep -q '^forged' "$TMP/esc-shape-op.err" &&
        ok "a failure naming a shape id with ESC and a newline is escaped in the summary" ||
        fail "failure line not escaped: $(cat -A "$TMP/esc-shape-op.err" | head -3)"; }

# run_native.sh's --profiler (aka profile): a count that is not a number, or one past the
# words given, is a usage error (exit 2) before anything builds or runs.
for bad in "--profiler x c" "--profiler 3 /bin/true c" "--profiler 0 c"; do
    # shellcheck disable=SC2086 # the words are meant to split
    (cd "$TMP" && bash "$HARNESS/run_native.sh" $bad >"$TMP/prof.out" 2>&1)
    rc=$?
    [ "$rc" = 2 ] && grep -q 'usage error (--profiler N WORD...)' "$TMP/prof.out" &&
        ok "run_native.sh $bad: usage error" || fail "run_native.sh $bad: exit $rc: $(cat "$TMP/prof.out")"
done

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all eval_native checks passed"
