#!/bin/bash
# native_fill.sh — the native judge's timed-input generator filled by several threads:
# tests/harness/native/fill_test.c built with the judge's data and I/O files, as
# run_native.sh builds the judge (-pthread). Environment: AKA_SOURCE_DIR.
set -eu
src=${AKA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
h=$src/runtime/harness/native
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -std=c11 -O2 -Wall -Wextra -Werror -pthread -I"$h" -o "$tmp/fill_test" \
  "$src/tests/harness/native/fill_test.c" "$h/harness_data.c" "$h/harness_io.c" -lm
"$tmp/fill_test"
