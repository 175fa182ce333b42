#!/usr/bin/env bash
# harness_python.sh — the PyTorch-layout evaluator (runtime/harness/python) on CPU.
#
# For every PyTorch-layout example in examples/ops/ (Atrex-Bench and SOL) the
# reference submitted as the candidate must pass; planted wrong candidates
# (tests/harness/python/wrong/, fixtures/) must fail with a failure that names
# the shape; every RESULT_JSON must carry every DESIGN §4.6 field with the
# right type, and the exit code must be 0 iff all_pass.
#
# Needs Debian's python3-torch: /usr/bin/python3 is used on purpose (a pyenv
# python3 first on PATH usually has no torch). AKA_PYTHON overrides it. When
# torch cannot be imported the script prints "SKIP: ..." and exits 0.
# Runs two harness processes at a time and stays small (selected shapes,
# 3 timed runs) so that it finishes in well under a minute on 2 cores.
set -uo pipefail
: "${AKA_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
src=$AKA_SOURCE_DIR
py=${AKA_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)

if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "SKIP: torch cannot be imported by $py (install Debian's python3-torch)"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Candidates that keep state across the processes of one evaluation (loaded_first_timing.py)
# keep it in the temporary directory: this run's own.
export TMPDIR=$tmp
export PYTHONPATH="$src/runtime/harness/python"
export OMP_NUM_THREADS=1
wrong="$src/tests/harness/python/wrong"
fix="$src/tests/harness/python/fixtures"
check="$src/tests/harness/python/check_result.py"
start=$(date +%s)
names=()

# case_ NAME CHECK-FLAGS... -- HARNESS-ARGS... : run the harness in the background
# (two at a time); the check flags (for check_result.py) are kept one per line.
case_() {
  local name=$1; shift
  names+=("$name")
  : >"$tmp/$name.check"
  while [ "$1" != "--" ]; do printf '%s\n' "$1" >>"$tmp/$name.check"; shift; done
  shift
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n; done
  (
    "$py" -m aka_harness --device cpu --timed-runs 3 --warmup 1 "$@" \
      >"$tmp/$name.out" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.rc"
  ) &
}

small() { "$py" "$src/tests/harness/python/small_shapes.py" "$1" "${2:-2}"; }

# ---- every PyTorch-layout example: the reference as the candidate passes -----------------
n_examples=0
for dir in "$src"/examples/ops/*/; do
  dir=${dir%/}; op=$(basename "$dir")
  if [ -f "$dir/definition.json" ] && [ -f "$dir/workload.jsonl" ]; then
    n_examples=$((n_examples + 1))
    # The SOL reference is value-returning: evaluated with --no-dps.
    case_ "example_${op}_reference" --pass -- --layout sol --op-dir "$dir" \
      --kernel "$dir/reference.py" --no-dps --cases 2 $(small "$dir")
    if [ -f "$dir/solution.json" ]; then
      case_ "example_${op}_solution" --pass -- --layout sol --op-dir "$dir" \
        --kernel "$dir/solution.json" --cases 2 $(small "$dir")
    fi
  elif [ -f "$dir/reference.py" ] && [ -f "$dir/input.py" ] && [ -f "$dir/shapes.json" ]; then
    n_examples=$((n_examples + 1))
    case_ "example_${op}_reference" --pass -- --layout atrex --op-dir "$dir" \
      --kernel "$dir/reference.py" $(small "$dir")
  fi
done
[ "$n_examples" -gt 0 ] || { echo "FAIL: no PyTorch-layout example in $src/examples/ops"; exit 1; }

# ---- planted wrong candidates against the rmsnorm example (Atrex-Bench) -------------------
rms=$src/examples/ops/rmsnorm
if [ -d "$rms" ]; then
  ids="--shape-id 0 --shape-id 1"
  case_ rms_off_by_one --fail --fail-shape 0 --fail-shape 1 --contains 'index [0, 1]' -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/off_by_one.py" $ids
  case_ rms_wrong_one_shape --fail --fail-shape 1 --pass-shape 0 -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/wrong_one_shape.py" $ids
  case_ rms_nan_one --fail --fail-shape 0 --contains NaN -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/nan_one.py" $ids
  case_ rms_lazy_view --fail --fail-shape 0 --contains subclass -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/lazy_view.py" $ids
  case_ rms_unwritten --fail --fail-shape 0 --fail-shape 1 -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/unwritten.py" $ids
  case_ rms_rename_cache --pass --field 'latency_statistic="median"' -- \
    --op-dir "$rms" --kernel "$src/tests/harness/python/honest/rename_cache.py" $ids
  case_ rms_loaded_first_timing --pass --field judge.cross_check_retimed=2 -- \
    --op-dir "$rms" --kernel "$src/tests/harness/python/honest/loaded_first_timing.py" $ids \
    --cases 1
  # Each evaluation that keeps state across its processes gets its own temporary directory.
  mkdir -p "$tmp/first_process" "$tmp/import_once"
  TMPDIR=$tmp/first_process AKA_TEST_BURN_WHEN=first_process case_ rms_slow_first_process --pass \
    --field judge.cross_check_retimed=1 --diag-contains 'in a fresh candidate process' -- \
    --op-dir "$rms" --kernel "$src/tests/harness/python/honest/loaded_first_timing.py" $ids \
    --cases 1
  TMPDIR=$tmp/import_once AKA_TEST_BURN_WHEN=first_process AKA_TEST_IMPORT_ONCE=1 \
    case_ rms_repeat_cannot_start \
    --fail --stage candidate_runtime --contains 'did not start again for a repeated timing' -- \
    --op-dir "$rms" --kernel "$src/tests/harness/python/honest/loaded_first_timing.py" \
    --shape-id 0 --cases 1
  case_ rms_slow_now_and_then --pass --diag-contains 'the mean carries them' -- \
    --op-dir "$rms" --kernel "$src/tests/harness/python/honest/slow_now_and_then.py" \
    --shape-id 0 --cases 1 --timed-runs 20
  # A reference that takes over 300 ms per call: a 1000 ms budget leaves the fewest runs, 3.
  slow="$tmp/rmsnorm_slow"
  cp -r "$rms" "$slow"
  sed -i 's/^import torch$/import time\nimport torch/; s/^\(    def forward(self.*\)$/\1\n        time.sleep(0.3)/' \
    "$slow/reference.py"
  grep -q 'time.sleep(0.3)' "$slow/reference.py" || { echo "FAIL: could not slow the reference"; exit 1; }
  case_ rms_time_budget --pass --field timing.time_budget_ms=1000 \
    --field 'timing.reps_by_shape={"0":3}' -- --op-dir "$slow" --shape-id 0 \
    --kernel "$rms/reference.py" --timed-runs 20 --time-budget-ms 1000
  # --official without an official evaluator installed: the judge decides, and says so.
  case_ rms_official_fallback --pass --field 'official_evaluator="not installed"' -- \
    --op-dir "$rms" --kernel "$rms/reference.py" --shape-id 0 --official
  case_ rms_patch_timer --fail --stage integrity -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/patch_timer.py" $ids
  case_ rms_generalized --fail --generalized --fail-shape case-1 -- \
    --op-dir "$rms" --kernel "$wrong/rmsnorm/wrong_one_shape.py" --generalized $ids
  case_ rms_syntax_error --fail --stage compile_import --contains SyntaxError --rc-is 1 -- \
    --op-dir "$rms" --kernel "$wrong/generic/syntax_error.py" $ids
  case_ rms_missing_module --fail --stage compile_import --contains aka_no_such_module_xyz -- \
    --op-dir "$rms" --kernel "$wrong/generic/missing_module.py" $ids
  case_ rms_no_tilelang --fail --stage environment --contains 'framework TileLang is not installed' -- \
    --op-dir "$rms" --kernel "$wrong/generic/needs_tilelang.py" $ids
  if ! "$py" -c 'import triton' >/dev/null 2>&1; then
    case_ rms_no_triton --fail --stage environment --contains 'framework Triton is not installed' -- \
      --op-dir "$rms" --kernel "$wrong/generic/needs_triton.py" --framework Triton $ids
  fi
  case_ rms_bad_shape_id --fail --stage usage --rc-is 2 -- \
    --op-dir "$rms" --kernel "$rms/reference.py" --shape-id no-such-shape
  if ! "$py" -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    case_ rms_no_cuda --fail --stage environment --rc-is 75 --contains 'device nodes: none' -- \
      --op-dir "$rms" --kernel "$rms/reference.py" $ids --device cuda
  fi
fi

# ---- numerical probes (--probes, issue 14) on the distributed allreduce_sum (two Gloo ranks)
ar=$src/examples/ops/allreduce_sum
if [ -d "$ar" ]; then
  pj=$src/tests/harness/python/fixtures/probes.json
  case_ ar_probes_honest --pass --field 'seeds=[1001,2,3]' --field 'probes.5.status="passed"' \
    --field 'probes.5.id="constant_rows@2#rank1"' --field 'probes.5.metric="rel_l2"' -- \
    --op-dir "$ar" --kernel "$ar/reference.py" --probes "$pj" --shape-id 2 --timed-runs 0
  case_ ar_probes_saturating --fail --fail-shape 2 --stage numerical_probe \
    --contains 'numerical probe magnitude_1e3' --field 'probes.2.status="failed"' \
    --field 'probes.2.distribution="magnitude_1e3"' --field 'probes.0.status="passed"' -- \
    --op-dir "$ar" --kernel "$wrong/allreduce_sum/saturating.py" --probes "$pj" --shape-id 2 \
    --timed-runs 0
  case_ ar_probes_bad_plan --fail --stage usage --rc-is 2 --contains 'cases[0]' -- \
    --op-dir "$ar" --kernel "$ar/reference.py" --probes "${pj%.json}_bad.json" --shape-id 2
  case_ ar_saturating_without_probes --pass -- \
    --op-dir "$ar" --kernel "$wrong/allreduce_sum/saturating.py" --shape-id 2
fi

# ---- planted wrong candidates against the rope example (SOL, destination passing) ----------
rope=$src/examples/ops/rope
if [ -d "$rope" ]; then
  w1=7d0c5a2e-0001-4a6b-9e41-000000000001
  w2=7d0c5a2e-0002-4a6b-9e41-000000000002
  ids="--shape-id $w1 --shape-id $w2 --cases 1"
  case_ rope_never_writes --fail --fail-shape $w1 --fail-shape $w2 --contains NaN -- \
    --op-dir "$rope" --kernel "$wrong/rope/dps_never_writes.py" $ids
  case_ rope_nan_one --fail --fail-shape $w1 --contains NaN -- \
    --op-dir "$rope" --kernel "$wrong/rope/dps_nan_one.py" $ids
  case_ rope_wrong_one_shape --fail --fail-shape $w2 --pass-shape $w1 -- \
    --op-dir "$rope" --kernel "$wrong/rope/dps_wrong_one_shape.py" $ids
  case_ rope_partial_write --fail --fail-shape $w1 --fail-shape $w2 -- \
    --op-dir "$rope" --kernel "$wrong/rope/dps_partial_write.py" $ids
  # SOL's matched ratio (0.99 by default) accepts one wrong element out of
  # 1024: that is SOL's rule, and the result says so in a diagnostic.
  case_ rope_off_by_one_tolerated --pass --diag-contains 'accepted by the required matched ratio' -- \
    --op-dir "$rope" --kernel "$wrong/rope/dps_off_by_one.py" $ids
  case_ rope_reference_as_dps --fail --stage candidate_runtime --contains destination-passing -- \
    --op-dir "$rope" --kernel "$rope/reference.py" $ids
fi

# ---- our own fixtures: dict outputs, random init, private shapes, integer outputs ---------
an=$fix/atrex_add_norm
case_ fx_atrex_reference --pass --field 'seeds=[0,1,2]' -- \
  --op-dir "$an" --kernel "$an/reference.py" --multi-seed 3
case_ fx_atrex_wrong_keys --fail --fail-shape 0 --fail-shape 10 --stage structure -- \
  --op-dir "$an" --kernel "$an/wrong_keys.py"
case_ fx_atrex_lower_precision --fail --fail-shape 1 --contains 'first mismatch at index' -- \
  --op-dir "$an" --kernel "$an/lower_precision.py"
case_ fx_atrex_lower_precision_again --fail -- \
  --op-dir "$an" --kernel "$an/lower_precision.py"
case_ fx_atrex_private_generalized --fail --generalized --fail-shape case-0 --fail-shape case-1 -- \
  --op-dir "$an" --kernel "$an/lower_precision.py" --generalized \
  --private-shapes "$an/private_shapes.json"
case_ fx_atrex_private_pass --pass --generalized -- \
  --op-dir "$an" --kernel "$an/reference.py" --generalized \
  --private-shapes "$an/private_shapes.json" --shape-id case-1
case_ fx_atrex_cuda_graph_on_cpu --pass --method cpu_monotonic -- \
  --op-dir "$an" --kernel "$an/reference.py" --cuda-graph --shape-id 10
case_ fx_atrex_no_timing --pass --method none -- \
  --op-dir "$an" --kernel "$an/reference.py" --timed-runs 0 --shape-id 10
sr=$fix/sol_rowmax
case_ fx_sol_kernel --pass -- --op-dir "$sr" --kernel "$sr/kernel.py" --cases 3
case_ fx_sol_solution_json --pass -- --op-dir "$sr" --kernel "$sr/solution.json" --cases 2
case_ fx_sol_reference_value_returning --pass -- \
  --op-dir "$sr" --kernel "$sr/reference.py::run" --no-dps --cases 2
case_ fx_sol_partial_int_output --fail --fail-shape w-small --contains 'never written' -- \
  --op-dir "$sr" --kernel "$sr/partial_indices.py" --cases 1
case_ fx_sol_off_by_one_strict --fail --fail-shape w-strict --pass-shape w-small --pass-shape w-loose -- \
  --op-dir "$sr" --kernel "$sr/off_by_one.py" --cases 2
wait

# ---- check every run ----------------------------------------------------------------------
failed=0; passed=0
for name in "${names[@]}"; do
  mapfile -t args <"$tmp/$name.check"
  if "$py" "$check" --name "$name" --stdout "$tmp/$name.out" --rc "$(cat "$tmp/$name.rc")" "${args[@]}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "---- stderr of $name (last 15 lines)"; tail -15 "$tmp/$name.err"
  fi
done

# Same seed, same inputs: the two lower-precision runs report identical errors.
e1=$("$py" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().split("=",1)[1]); print(d["max_abs_err"], [f.get("first_mismatch_index") for f in d["failures"]])' "$tmp/fx_atrex_lower_precision.out")
e2=$("$py" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().split("=",1)[1]); print(d["max_abs_err"], [f.get("first_mismatch_index") for f in d["failures"]])' "$tmp/fx_atrex_lower_precision_again.out")
if [ "$e1" = "$e2" ] && [ -n "$e1" ]; then
  echo "ok   determinism: two runs with seed 0 report the same errors ($e1)"; passed=$((passed + 1))
else
  echo "FAIL determinism: '$e1' vs '$e2'"; failed=$((failed + 1))
fi

# --help prints usage and no RESULT_JSON.
if "$py" -m aka_harness --help >"$tmp/help.out" 2>&1 && grep -q -- "--multi-seed" "$tmp/help.out" \
   && ! grep -q "^RESULT_JSON={" "$tmp/help.out"; then
  echo "ok   help"; passed=$((passed + 1))
else
  echo "FAIL help"; failed=$((failed + 1))
fi

echo "harness_python: $(( $(date +%s) - start )) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
