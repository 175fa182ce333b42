#!/bin/bash
# native_span.sh — the native CUDA runner's kernel-span code (runner_cuda.cu) against a
# fake libcupti (tests/harness/python/fakes/fake_cupti.c), on a machine without a GPU:
# tests/harness/native/span_test.cu includes the runner and drives its CUPTI callbacks.
# SKIP without nvcc. Environment: AKA_SOURCE_DIR.
set -eu
src=${AKA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v nvcc >/dev/null || { echo "SKIP: no nvcc"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -shared -fPIC -o "$tmp/libfakecupti.so" "$src/tests/harness/python/fakes/fake_cupti.c"
nvcc -std=c++17 -Xcompiler -Wall,-Wextra,-Werror -o "$tmp/span_test" \
  "$src/tests/harness/native/span_test.cu"
"$tmp/span_test" "$tmp/libfakecupti.so"
