#!/usr/bin/env bash
# h200_official.sh — issue 16 must-show 1 and issue 15 must-show 1 on a lent H200, in one
# device call (carry .devcarry). Fill .devcarry first: bench/make_devcarry.sh, then for the
# parts that run the official tools, .devcarry/official/ with (a) the wheels, from `pip
# download --no-deps --only-binary=:all: --python-version 3.12 --platform
# manylinux2014_x86_64 --platform manylinux_2_28_x86_64 pydantic pydantic-core
# annotated-types typing-inspection typing-extensions rich markdown-it-py mdurl pygments
# click safetensors cupti-python pyelftools pyyaml`, (b) sol_execbench/ (src/sol_execbench
# of a NVIDIA/SOL-ExecBench checkout) and (c) atrex/ with src/, scripts/ and pyproject.toml
# of an alibaba/atrex-bench checkout. None of it is committed (they are the owners' code):
#   1. where CUPTI is on this machine, and bench/span_probe.py (kernel spans vs events);
#   2. rope (SOL-ExecBench) through `aka eval` timed by kernel span and by events, and
#      through the official `sol-execbench` (installed from the carried wheels into
#      /tmp/official, outside aka), for the Triton seed and the PyTorch solution.json;
#   3. rmsnorm and silu_and_mul (Atrex-Bench) through `aka eval` and the official
#      scripts/run_eval.py, Triton seeds;
#   5. (part red) hostile SOL candidates on rope, timed by kernel span;
#   4. `aka profile` (Nsight Compute, --clock-control none) next to `aka eval` on rmsnorm's
#      shape 3 (Atrex, events) and rope's largest workload (SOL, kernel span);
#   6. (part dsl) silu_and_mul's CuteDSL and TileLang seeds through `aka eval` and
#      tests/gpu/harness_python_gpu.sh, their wheels carried in parts (see the part);
#   7. (part box) `aka eval --evaluator official` inside the sandbox: the official tools
#      installed where the sandbox's python3 finds them (system site-packages, a
#      sol-execbench script in /usr/local/bin, Atrex-Bench's checkout under /usr/local/share
#      with a .pth to its src/), on rope and rmsnorm's Triton seeds.
# PARTS (default "probe sol atrex profile") picks parts. Lines go to $OUT/summary.txt,
# JSON and logs to $OUT/raw.tgz. Clocks, power and compute mode are never touched.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
src=$PWD out=${OUT:-/tmp/aka-h200-official} raw=/tmp/official-raw
mkdir -p "$out" "$raw"
note() { echo "== $* ($(date -u +%T))" | tee -a "$out/summary.txt"; }
pack() { tar -czf "$out/raw.tgz" -C "$raw" . 2>/dev/null; }
has() { case " ${PARTS:-probe sol method atrex span red native profile} " in *" $1 "*) return 0 ;; esac; return 1; }

# ev NAME ARGS...: one `aka eval --json`, one summary line.
ev() {
  local name=$1; shift
  local s0; s0=$(date +%s.%N)
  timeout "${EVAL_TIMEOUT:-240}" aka eval --platform "$AKA_PLATFORM" --json "$@" \
    >"$raw/$name.json" 2>"$raw/$name.err"
  python3 bench/official_compare.py aka "$name" "$?" "$s0" "$raw/$name.json" |
    tee -a "$out/summary.txt"
  pack
}

install_official() {
  [ -d /tmp/official ] && return 0
  pip install --no-index --no-deps --target /tmp/official .devcarry/official/*.whl \
    >"$raw/pip.log" 2>&1 || { tail -5 "$raw/pip.log"; return 1; }
  cp -r .devcarry/official/sol_execbench /tmp/official/
}

if has probe; then
  note "environment"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee -a "$out/summary.txt"
  python3 -c 'import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)' |
    tee -a "$out/summary.txt"
  find / -name 'libcupti.so*' -not -path '/proc/*' 2>/dev/null | head -8 | tee -a "$out/summary.txt"
  note "span probe"
  PYTHONPATH=runtime/harness/python timeout 180 python3 bench/span_probe.py 100 2>&1 |
    tee -a "$out/summary.txt"
  note "a launch-bound call's span, hot and after the timing thread slept"
  PYTHONPATH=runtime/harness/python timeout 120 python3 bench/span_probe.py 100 wake 2>&1 |
    tee -a "$out/summary.txt"
fi

if has sol; then
  install_official
  k=$src/examples/ops/rope/seeds/Triton/kernel.py
  sol=$src/examples/ops/rope/solution.json
  note "rope through aka eval"
  ev rope_triton_span --op-dir examples/ops/rope --kernel "$k" --framework Triton
  # A candidate laid out for bandwidth (issue 17: the seed it may replace is launch-bound).
  ev rope_rows_span --op-dir examples/ops/rope --kernel "$src/bench/candidates/rope_rows.py" \
    --framework Triton
  ev rope_triton_events --op-dir examples/ops/rope --kernel "$k" --framework Triton --timing events
  ev rope_pytorch_span --op-dir examples/ops/rope --kernel "$sol" --framework PyTorch
  note "rope through the official sol-execbench"
  python3 - "$k" "$raw/rope_triton_solution.json" <<'PY'
import json, sys
src = open(sys.argv[1]).read()
json.dump({"name": "aka-rope-triton-seed", "definition": "rope_neox_h8_d128", "author": "aka",
           "spec": {"languages": ["triton"], "target_hardware": ["LOCAL"],
                    "entry_point": "kernel.py::run", "destination_passing_style": True},
           "sources": [{"path": "kernel.py", "content": src}]}, open(sys.argv[2], "w"))
PY
  for s in triton pytorch; do
    sfile=$raw/rope_triton_solution.json
    [ "$s" = pytorch ] && sfile=$sol
    s0=$(date +%s.%N)
    PYTHONPATH=/tmp/official timeout 300 python3 -c 'import sys; from sol_execbench.cli import cli; sys.argv[0]="sol-execbench"; cli()' \
      examples/ops/rope --solution "$sfile" -o "$raw/rope_${s}_official.jsonl" \
      >"$raw/rope_${s}_official.out" 2>&1
    python3 bench/official_compare.py sol "rope_${s}_official" "$?" "$s0" \
      "$raw/rope_${s}_official.jsonl" | tee -a "$out/summary.txt"
    tail -3 "$raw/rope_${s}_official.out"
    pack
  done
fi

if has method; then
  install_official
  note "rope's PyTorch solution: the owner's CUPTI function and aka's RunTimer, plain processes"
  for t in 1 8192; do
    for m in ${METHOD_MODES:-official aka aka_inference official aka}; do
      PYTHONPATH=runtime/harness/python:/tmp/official timeout 120 \
        python3 bench/span_vs_official.py "$m" "$t" 2>&1 | tail -1 | tee -a "$out/summary.txt"
    done
  done
fi

if has atrex; then
  install_official
  for op in rmsnorm silu_and_mul; do
    k=$src/examples/ops/$op/seeds/Triton/kernel.py
    note "$op through aka eval and the official run_eval.py"
    ev "${op}_triton" --op-dir "examples/ops/$op" --kernel "$k" --framework Triton
    s0=$(date +%s.%N)
    PYTHONPATH=/tmp/official:$src/.devcarry/official/atrex/src timeout 400 \
      python3 .devcarry/official/atrex/scripts/run_eval.py --input "$k" \
      --reference-dir "$src/examples/ops/$op" --output "$raw/${op}_official" \
      >"$raw/${op}_official.out" 2>&1
    python3 bench/official_compare.py atrex "${op}_official" "$?" "$s0" \
      "$(find "$raw/${op}_official" -name eval_result.json | head -1)" | tee -a "$out/summary.txt"
    tail -3 "$raw/${op}_official.out"
    if [ -n "${ATREX_NO_ATTRIBUTION:-}" ]; then  # its bench loop without torch.profiler
      s0=$(date +%s.%N)
      PYTHONPATH=/tmp/official:$src/.devcarry/official/atrex/src timeout 400 \
        python3 .devcarry/official/atrex/scripts/run_eval.py --input "$k" \
        --reference-dir "$src/examples/ops/$op" --output "$raw/${op}_official_noattr" \
        --skip-kernel-attribution >"$raw/${op}_official_noattr.out" 2>&1
      python3 bench/official_compare.py atrex "${op}_official_noattr" "$?" "$s0" \
        "$(find "$raw/${op}_official_noattr" -name eval_result.json | head -1)" |
        tee -a "$out/summary.txt"
    fi
    pack
  done
fi

if has red; then  # hostile SOL candidates timed by kernel span
  note "hostile candidates on rope, kernel spans"
  for h in sol_patch_kernel_span sol_dps_skip_write; do
    ev "red_$h" --op-dir examples/ops/rope --kernel "$src/tests/redteam/python/$h.py" \
      --framework PyTorch --timed-runs 30 --shape-id 7d0c5a2e-0003-4a6b-9e41-000000000003 \
      --shape-id 7d0c5a2e-0004-4a6b-9e41-000000000004
  done
fi

if has span; then  # the native CUDA seed timed by kernel span and by events
  note "row_sum_cuda: kernel span and events"
  k=$src/examples/ops/row_sum_cuda/seeds/Cuda/kernel.cu
  ev row_sum_span --op-dir examples/ops/row_sum_cuda --kernel "$k" --framework Cuda \
    --timing kernel-span
  ev row_sum_events --op-dir examples/ops/row_sum_cuda --kernel "$k" --framework Cuda
fi

if has native; then  # the native CUDA seed: eval against a duration-only profile
  { command -v ninja; python3 -c 'import ninja; print("ninja module", ninja.__version__)';
    ls /usr/local/cuda/include/cupti_activity.h; } 2>&1 | tee -a "$out/summary.txt"
  note "row_sum_cuda: eval and profile --level survey"
  OUT=$out/native bash bench/h200_profile_ssh.sh native 2>&1 | tail -12 | tee -a "$out/summary.txt"
  note "ncu on x.sum(1): clean L2 against the harness's cache state"
  OUT=$out/native bash bench/h200_profile_ssh.sh cache 2>&1 | tail -6 | tee -a "$out/summary.txt"
  note "x.sum(1) after a written and a read flush"
  PYTHONPATH=runtime/harness/python timeout 120 python3 bench/span_probe.py 100 flush 2>&1 |
    tee -a "$out/summary.txt"
fi

if has dsl; then  # issue 16 must-show 4: silu_and_mul's CuteDSL and TileLang seeds
  # The wheels travel in parts: bench/dsl_wheels.sh DIR, then bench/carry_parts.sh split
  # DIR, each part carried by one call to the same warm machine. Installed system-wide on
  # the lent machine, so the sandbox's python3 imports them.
  note "CuteDSL and TileLang seeds"
  if bench/carry_parts.sh join /tmp/dslwheels >"$raw/dsl_join.log" 2>&1; then
    pip install --no-index --no-deps --break-system-packages /tmp/dslwheels/*.whl \
      >"$raw/dsl_pip.log" 2>&1 || tail -5 "$raw/dsl_pip.log" | tee -a "$out/summary.txt"
  else
    tail -3 "$raw/dsl_join.log" | tee -a "$out/summary.txt"
  fi
  python3 -c 'import cutlass.cute, tilelang; print("cutlass.cute and tilelang import")' 2>&1 |
    tail -2 | tee -a "$out/summary.txt"
  for fw in CuteDSL TileLang; do
    ev "silu_$fw" --op-dir examples/ops/silu_and_mul --framework "$fw" \
      --kernel "$src/examples/ops/silu_and_mul/seeds/$fw/kernel.py"
  done
  AKA_GPU_REPS=20 timeout 300 bash tests/gpu/harness_python_gpu.sh >"$raw/dsl_gpu.log" 2>&1
  grep -E "silu_(CuteDSL|TileLang)|passed|failed|note" "$raw/dsl_gpu.log" | tee -a "$out/summary.txt"
fi

if has box; then  # issue 16: the official evaluators as the authority, inside the sandbox
  note "--evaluator official inside the sandbox"
  site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  # typing_extensions stays the image's own (torch's).
  ls .devcarry/official/*.whl | grep -v typing_extensions |
    xargs pip install --no-index --no-deps --break-system-packages >"$raw/box_pip.log" 2>&1 ||
    tail -3 "$raw/box_pip.log" | tee -a "$out/summary.txt"
  cp -r .devcarry/official/sol_execbench "$site/"
  printf '#!/usr/bin/env python3\nimport sys\nfrom sol_execbench.cli import cli\nsys.argv[0] = "sol-execbench"\ncli()\n' \
    >/usr/local/bin/sol-execbench && chmod 755 /usr/local/bin/sol-execbench
  rm -rf /usr/local/share/atrex-bench && cp -r .devcarry/official/atrex /usr/local/share/atrex-bench
  echo /usr/local/share/atrex-bench/src >"$site/aka_atrex_bench_src.pth"
  ev rope_box --op-dir examples/ops/rope --kernel "$src/examples/ops/rope/seeds/Triton/kernel.py" \
    --framework Triton --evaluator official
  ev rmsnorm_box --op-dir examples/ops/rmsnorm --framework Triton --evaluator official \
    --kernel "$src/examples/ops/rmsnorm/seeds/Triton/kernel.py"
fi

if has profile; then
  note "profile against eval"
  OUT=$out/profile bash bench/h200_profile_ssh.sh triton 2>&1 | tail -40 |
    tee -a "$out/summary.txt"
fi
pack
exit 0
