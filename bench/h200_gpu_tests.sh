#!/usr/bin/env bash
# h200_gpu_tests.sh — the test suite's GPU parts, for real, on a lent H200:
# tests/integration/gpu_device.sh (guard against host GPU work, built-in
# campaigns on the three GPU example layouts, the SOL submission) and the
# agents' guard suite. Needs .devcarry/ (see bench/device_install.sh).
# Campaign records land in $OUT/gpu.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/device_install.sh
out=${OUT:-/tmp/aka-h200}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$out/gpu.txt"
export AKA_BIN=$PWD/.devcarry/bin/aka AKA_SOURCE_DIR=$PWD AKA_GPU_OUT=$out/gpu
status=0
for t in ${AKA_GPU_TESTS:-gpu_device agents_guard}; do
  echo "== $t"
  start=$(date +%s)
  bash "tests/integration/$t.sh" >"$out/$t.log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  echo "$t: exit status $rc, $(( $(date +%s) - start )) s"
  tail -40 "$out/$t.log"
done
exit $status
