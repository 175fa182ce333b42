#!/bin/bash
# distributed_gpus.sh — a distributed operator's evaluation asks for its pinned world_size
# GPUs (issue 13), checked on a host without GPUs through a fake nvidia-smi first on PATH
# (never a real one):
#   1. examples/ops/allreduce_sum (world_size 2) with nvidia-smi listing one GPU: exit 75,
#      "the job needs 2 GPUs (the operator's pinned world_size); this host shows 1";
#   2. with two GPUs listed, the job gets past the choice and fails on this host's missing
#      device node instead (exit 75, /dev/nvidia0), never as the candidate's;
#   3. a single-GPU operator (rmsnorm) asks for one GPU: no world_size message.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-dist-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -e /dev/nvidia0 ] && { echo "SKIP: this host has a GPU; the fake nvidia-smi would lie"; exit 77; }
mkdir -p "$TMP/bin" "$TMP/cwd"
fake_smi() { printf '#!/bin/sh\nprintf "%s"\n' "$1" >"$TMP/bin/nvidia-smi"; chmod +x "$TMP/bin/nvidia-smi"; }
ev() { # OP -> $rc, output in $TMP/out
    rc=0
    (cd "$TMP/cwd" && PATH="$TMP/bin:$PATH" "$AKA" eval --op-dir "$1" --kernel "$1/reference.py" \
        --framework PyTorch --platform nvidia/h200) >"$TMP/out" 2>&1 || rc=$?
}

DIST=$SRC/examples/ops/allreduce_sum
fake_smi '0\n'
ev "$DIST"
[ "$rc" = 75 ] || { cat "$TMP/out"; fail "one GPU for world_size 2: exit $rc, expected 75"; }
grep -qF "the job needs 2 GPUs (the operator's pinned world_size); this host shows 1" "$TMP/out" ||
    fail "one GPU for world_size 2: $(cat "$TMP/out")"
echo "ok: world_size 2 on a host showing one GPU is exit 75, said plainly"

fake_smi '0\n1\n'
ev "$DIST"
[ "$rc" = 75 ] || { cat "$TMP/out"; fail "two GPUs listed: exit $rc, expected 75"; }
grep -q "/dev/nvidia0 not found" "$TMP/out" || fail "two GPUs listed: $(cat "$TMP/out")"
! grep -q "pinned world_size" "$TMP/out" || fail "two GPUs listed, still short: $(cat "$TMP/out")"
echo "ok: with two GPUs listed the job takes them (and this host's missing /dev/nvidia0 is 75)"

fake_smi ''
ev "$SRC/examples/ops/rmsnorm"
[ "$rc" = 75 ] || { cat "$TMP/out"; fail "single-GPU operator: exit $rc, expected 75"; }
! grep -q "pinned world_size" "$TMP/out" || fail "a single-GPU operator asked for more: $(cat "$TMP/out")"
echo "ok: a single-GPU operator asks for one GPU"
[ -z "$(ls -A "$TMP/cwd")" ] || fail "files written in the current directory: $(ls -A "$TMP/cwd")"
echo PASS
