#!/bin/bash
# harness_units.sh — unit tests of the Python judge's pieces on made-up data: every
# tests/harness/python/test_*.py (the timing cross-check, the comparison messages).
# /usr/bin/python3 on purpose, as in harness_python.sh (it has Debian's torch).
set -eu
src=${AKA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${AKA_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
if ! "$py" -c 'import torch' 2>/dev/null; then
  echo "SKIP: torch cannot be imported by $py (install Debian's python3-torch)"; exit 0
fi
for t in "$src"/tests/harness/python/test_*.py; do
  PYTHONPATH=$src/runtime/harness/python "$py" "$t" -v 2>&1
done
