#!/bin/bash
# harness_crosscheck.sh — unit tests of the Python judge's timing cross-check
# (runtime/harness/python/aka_harness/crosscheck.py) on made-up samples:
# tests/harness/python/test_crosscheck.py. Needs torch only through the package's
# imports (crosscheck itself imports none); /usr/bin/python3 as in harness_python.sh.
set -eu
src=${AKA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${AKA_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
PYTHONPATH=$src/runtime/harness/python exec "$py" \
    "$src/tests/harness/python/test_crosscheck.py" -v 2>&1
