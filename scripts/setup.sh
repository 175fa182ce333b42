#!/usr/bin/env bash
# setup.sh — README's first command: install dependencies, build aka, and run
# it on every bundled example operator.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

echo
echo "== aka $(./build/aka --version | cut -d' ' -f2): inspecting the bundled example operators =="
status=0
for op in examples/ops/*/; do
  echo
  echo "-- ${op%/}"
  ./build/aka inspect --op-dir "$op" || status=1
done
exit $status
