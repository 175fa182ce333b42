#!/usr/bin/env bash
# setup.sh — README's first command: install dependencies, build aka, run a
# short campaign on the bundled native C matmul with the built-in agent, and
# inspect every bundled example operator.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

# The main job: a short campaign on the bundled native C matmul, on the CPU,
# driven by the built-in tuner (no LLM, no network): V0, V1 from the seed
# kernel, then up to eight tuning episodes (--max-iters 9: v2..v9), stopping
# early after four in a row without a promotion; a rerun resumes. A campaign keeps
# the harness it started with: after an update that changed runtime/, a rerun is
# refused (exit 2) until AKA_SETUP_WORKSPACE names a new workspace or the old one
# is moved away.
ws=${AKA_SETUP_WORKSPACE:-$PWD/build/campaigns}
mkdir -p "$ws"
echo
echo "== aka optimize: examples/ops/matmul, CPU, built-in agent (workspace under $ws) =="
./build/aka optimize --op-dir examples/ops/matmul --platform cpu --framework C \
  --agent-cli builtin --max-iters "${AKA_SETUP_MAX_ITERS:-9}" --max-stall 4 --workspace "$ws"
./build/aka status "$ws/kernel_opt_matmul_c_cpu"

echo
echo "== aka $(./build/aka --version | cut -d' ' -f2): inspecting the bundled example operators =="
status=0
for op in examples/ops/*/; do
  echo
  echo "-- ${op%/}"
  ./build/aka inspect --op-dir "$op" || status=1
done
exit $status
