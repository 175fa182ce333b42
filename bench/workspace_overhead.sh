#!/usr/bin/env bash
# workspace_overhead.sh — what pinned evidence and hardened git cost (docs/security.md).
#
# usage: bench/workspace_overhead.sh [BUILD_DIR] [RUNS]   (defaults: build, 50)
#
# Makes a vector_add campaign to V0 (aka optimize --max-iters 0), then runs
# bench/workspace_overhead.c against it (per-call means of aka_ws_eval_inputs, the drift
# checks, aka_ws_incumbent and one hardened `git rev-parse`), and for reference a bare
# `git rev-parse HEAD` and `git config --list` in the same repository (bash's
# $EPOCHREALTIME around RUNS calls each).
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-50}
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/aka-bench-ws.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cc -O2 -I"$SRC/src" "$SRC/bench/workspace_overhead.c" -o "$WORK/bench" \
  "$BUILD/libaka_workspace.a" "$BUILD/libaka_git.a" "$BUILD/libaka_contracts.a" \
  "$BUILD/libaka_base.a" $(pkg-config --libs jansson libcrypto libarchive) -lm
cp -r "$SRC/examples/ops/vector_add" "$WORK/op"
ISO=bwrap
"$BUILD/aka" sandbox run -- true >/dev/null 2>&1 || ISO=none
"$BUILD/aka" optimize --op-dir "$WORK/op" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" \
  --workspace "$WORK" --sandbox-isolation "$ISO" --max-iters 0 >/dev/null 2>&1
WS=$WORK/kernel_opt_vector_add_c_cpu
echo "asset tree: $(find "$SRC/runtime" -type f | wc -l) files, $(du -sk "$SRC/runtime" | cut -f1) KiB;" \
  "operator snapshot: $(find "$WS/.aka/operator" -type f | wc -l) files"
"$WORK/bench" "$WS" "$SRC" "$RUNS"
now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
for cmd in "rev-parse HEAD" "config --list --name-only -z"; do
  t0=$(now_us)
  for _ in $(seq "$RUNS"); do git -C "$WS" $cmd >/dev/null; done
  t1=$(now_us)
  awk -v d=$((t1 - t0)) -v n="$RUNS" -v c="$cmd" 'BEGIN { printf "bare git %-28s %.3f ms\n", c, d / n / 1000 }'
done
