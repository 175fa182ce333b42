#!/bin/bash
# optimize_usage.sh — `aka optimize` usage errors exit 2 and write nothing:
# no workspace, no file in the current directory (nor a --workspace that is a
# file); --help documents the flags.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-optimize-usage.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OP=$SRC/examples/ops/vector_add
BASE=(--op-dir "$OP" --platform cpu --framework C --agent-cli builtin --workspace "$TMP/ws")

expect_usage() {
    local name=$1 want=$2
    shift 2
    local rc=0
    (cd "$TMP/cwd" && "$AKA" optimize "$@") >"$TMP/out" 2>"$TMP/err" || rc=$?
    if [ "$rc" != 2 ]; then
        echo "FAIL: $name: exit $rc, expected 2"; cat "$TMP/err"; exit 1
    fi
    grep -q -- "$want" "$TMP/err" || { echo "FAIL: $name: stderr does not name $want"; cat "$TMP/err"; exit 1; }
    if [ -e "$TMP/ws" ] || [ -n "$(ls -A "$TMP/cwd")" ]; then
        echo "FAIL: $name: files were written on a usage error"; exit 1
    fi
    echo "ok: $name"
}
mkdir -p "$TMP/cwd"

expect_usage missing-op-dir --op-dir --platform cpu --workspace "$TMP/ws"
expect_usage bad-iters --max-iters "${BASE[@]}" --max-iters -3
# One I C C I block per remote job: 4*150+30 = 630 s does not fit the 600 s maximum.
expect_usage allocation-fit --sandbox-timeout "${BASE[@]}" --sandbox ssh --sandbox-ssh u@h \
    --sandbox-ssh-gpu 0 --verify-run-timeout 150
expect_usage url-and-profile "mutually exclusive" "${BASE[@]}" --sandbox-url http://x --sandbox-profile pre
expect_usage ssh-without-gpu --sandbox-ssh-gpu "${BASE[@]}" --sandbox-ssh u@h
expect_usage too-many-resumes --handoff-resumes "${BASE[@]}" --handoff-resumes 33
expect_usage token-budget-not-a-number --token-budget "${BASE[@]}" --token-budget 1e6
expect_usage target-util-above-100 --target-util "${BASE[@]}" --target-util 100.5
expect_usage unknown-flag --frobnicate "${BASE[@]}" --frobnicate 1
expect_usage missing-agent "--agent-cli claude" "${BASE[@]}" --agent-cli claude
expect_usage wrong-framework-for-layout "--framework" --op-dir "$OP" --platform nvidia/h200 \
    --framework Triton --agent-cli builtin --workspace "$TMP/ws"
expect_usage no-such-op-dir --op-dir --op-dir "$TMP/none" --platform cpu --framework C \
    --agent-cli builtin --workspace "$TMP/ws"
# PyTorch kernels only on the CPU stand-in of a distributed operator (docs/platforms.md):
# not on a GPU platform, not for a single-GPU Python operator; other Python frameworks
# not on the CPU at all.
OPS=$SRC/examples/ops
expect_usage pytorch-on-gpu "--framework PyTorch: only with --platform cpu" --op-dir \
    "$OPS/allreduce_sum" --platform nvidia/h200 --framework PyTorch --agent-cli builtin \
    --workspace "$TMP/ws"
expect_usage triton-on-cpu "--framework Triton: --platform cpu runs C kernels" --op-dir \
    "$OPS/allreduce_sum" --platform cpu --framework Triton --agent-cli builtin --workspace "$TMP/ws"
expect_usage stand-in-single-gpu \
    "rmsnorm, layout atrex): metadata.json: benchmark_contract.distributed_evaluation: expected" \
    --op-dir "$OPS/rmsnorm" --platform cpu --framework PyTorch --agent-cli builtin \
    --workspace "$TMP/ws"
expect_usage stand-in-native-op "native operator whose kernels are C" --op-dir "$OP" \
    --platform cpu --framework PyTorch --agent-cli builtin --workspace "$TMP/ws"
# --workspace naming an existing regular file: refused before anything is written.
echo "not a directory" >"$TMP/wsfile"
expect_usage workspace-is-a-file "--workspace $TMP/wsfile: not a directory" --op-dir "$OP" \
    --platform cpu --framework C --agent-cli builtin --workspace "$TMP/wsfile"
[ "$(cat "$TMP/wsfile")" = "not a directory" ] || { echo "FAIL: the --workspace file changed"; exit 1; }

# Through core's --repo-root and -- separator the same checks apply.
rc=0
(cd "$TMP/cwd" && "$AKA" optimize --repo-root "$SRC" -- "${BASE[@]}" --fast-trials 0) \
    >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] && [ ! -e "$TMP/ws" ] || { echo "FAIL: --repo-root/-- usage error: $rc"; exit 1; }
echo "ok: usage error through --repo-root --"

"$AKA" optimize --help >"$TMP/help"
for flag in --op-dir --platform --framework --agent-cli --optimization-mode --max-iters \
    --fast-episodes --fast-trials --token-budget --target-util --max-stall --convert-after \
    --min-improvement-pct --verify-repeats --framework-baseline --workspace --arch --notes \
    --goal --goal-after-episodes --goal-after-stalls --sandbox --sandbox-url \
    --sandbox-hardware --sandbox-timeout --sandbox-ssh --sandbox-ssh-gpu \
    --sandbox-ssh-runtime-bind --sandbox-ssh-init --sandbox-health-command \
    --environment-poll-interval --slurm-partition --max-shape-regression-pct; do
    grep -q -- "$flag " "$TMP/help" || { echo "FAIL: --help lacks $flag"; exit 1; }
done
echo "ok: --help documents every flag"
