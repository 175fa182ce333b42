#!/bin/bash
# campaign_bootstrap.sh — a native C campaign from nothing to V1 with the built-in
# agent's seed, then resume semantics:
#   1. fresh start: workspace kernel_opt_vector_add_c_cpu, commits V0 source, V0
#      measurement (memory/v0.json points at the source commit), V1 kernel, V1 pin;
#      .aka/campaign.json pins the identity; memory/live.json exists and is ignored;
#   2. rerun with the same flags: no new commit (idempotent), same stop reason;
#   3. rerun with another agent or isolation: exit 2 naming the field, nothing changed;
#   4. a second supervisor on a locked workspace: exit 75.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-campaign.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OP=$SRC/examples/ops/vector_add
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
ARGS=(--op-dir "$OP" --platform cpu --framework C --agent-cli builtin --max-iters 1
      --workspace "$TMP" --sandbox-isolation "$ISO")
WS=$TMP/kernel_opt_vector_add_c_cpu
fail() { echo "FAIL: $*"; exit 1; }

# 1. fresh start
"$AKA" optimize "${ARGS[@]}" >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err"; fail "fresh start"; }
grep -q "budget: max-iters" "$TMP/out" || fail "no stop reason: $(cat "$TMP/out")"
grep -q "V0 recorded" "$TMP/err" && grep -q "V1 recorded" "$TMP/err" || fail "progress lines"
subjects=$(git -C "$WS" log --format=%s | tr '\n' '|')
want="v1: pin framework baseline $(git -C "$WS" rev-parse --short=8 HEAD~1)|v1: framework baseline (C) replacing the V0 baseline kernel|V0: record baseline measurement|V0: baseline kernel|"
[ "$subjects" = "$want" ] || fail "commits: $subjects"
src=$(git -C "$WS" rev-parse HEAD~3)
python3 - "$WS" "$src" <<'PY' || fail "memory records"
import json, sys
ws, src = sys.argv[1], sys.argv[2]
v0 = json.load(open(f"{ws}/memory/v0.json"))
v1 = json.load(open(f"{ws}/memory/v1.json"))
assert v0["version"] == "v0" and v0["status"] == "baseline", v0
assert v0["git_commit_hash"] == src, (v0["git_commit_hash"], src)
assert v0["performance"]["measurement_status"] == "complete"
assert set(v0["performance"]["latency_us_by_shape"]) == {"n1m", "n4k", "odd"}
assert v1["status"] == "framework_baseline" and v1["quality_gate"]["result"] == "PASS"
c = json.load(open(f"{ws}/.aka/campaign.json"))
for k, v in {"framework": "C", "platform": "cpu", "kernel": "kernel.c", "op_dir": None,
             "agent": "builtin", "mode": "leaderboard", "layout": "native"}.items():
    assert k in c and (v is None or c[k] == v), (k, c.get(k))
live = json.load(open(f"{ws}/memory/live.json"))
assert live["canonical"] is False
PY
[ -z "$(git -C "$WS" status --porcelain)" ] || fail "workspace not clean: $(git -C "$WS" status --porcelain)"
git -C "$WS" diff --quiet HEAD~3 HEAD -- reference.c operator.json || fail "evaluator inputs changed"
echo "ok: fresh start V0 + V1 with 4 commits and pinned campaign"

# 2. idempotent rerun
head=$(git -C "$WS" rev-parse HEAD)
"$AKA" optimize "${ARGS[@]}" >"$TMP/out2" 2>"$TMP/err2" || { cat "$TMP/err2"; fail "rerun"; }
[ "$(git -C "$WS" rev-parse HEAD)" = "$head" ] || fail "rerun made a commit"
grep -q "budget: max-iters" "$TMP/out2" || fail "rerun stop reason"
echo "ok: rerun is idempotent"

# 3. identity mismatch
rc=0
"$AKA" optimize "${ARGS[@]}" --framework-baseline never --agent-cli builtin \
    --notes x --sandbox-isolation none >/dev/null 2>"$TMP/err3" || rc=$?
if [ "$ISO" = none ]; then
    echo "note: isolation is already none; mismatch checked on the op_dir only"
else
    [ "$rc" = 2 ] || fail "isolation mismatch: exit $rc"
    grep -q "sandbox_isolation: the campaign pinned bwrap; this run has none" "$TMP/err3" \
        || fail "mismatch message: $(cat "$TMP/err3")"
    [ "$(git -C "$WS" rev-parse HEAD)" = "$head" ] || fail "mismatch changed HEAD"
    echo "ok: resume with another identity is refused naming the field"
fi

# 4. lock: hold the supervisor lock while a second supervisor starts
rc=0
flock "$WS/.aka/supervisor.lock" "$AKA" optimize "${ARGS[@]}" >/dev/null 2>"$TMP/err4" || rc=$?
[ "$rc" = 75 ] || fail "locked workspace: exit $rc $(cat "$TMP/err4")"
echo "ok: a locked campaign is refused (75)"


# 5. SOL V0: the reference wrapped in destination-passing style (the SOL evaluator
# calls run(*inputs, *outputs)); the V0 measurement itself needs a GPU, so on a
# machine without one the campaign stops at it (75) after the source commit.
rc=0
"$AKA" optimize --op-dir "$SRC/examples/ops/rope" --platform nvidia/h200 --framework Triton \
    --agent-cli builtin --max-iters 2 --workspace "$TMP/sol" --no-auto-recovery \
    >/dev/null 2>"$TMP/err5" || rc=$?
K=$(ls -d "$TMP"/sol/kernel_opt_rope_*)/kernel.py
[ -f "$K" ] || fail "SOL V0: no kernel.py ($(cat "$TMP/err5"))"
grep -q '^def _ref(q, cos, sin):' "$K" || fail "SOL V0: the reference entry was not renamed"
grep -q '^def run(q, cos, sin, out):' "$K" || fail "SOL V0: no destination-passing run"
python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' "$K" || fail "SOL V0: not Python"
[ -e /dev/nvidiactl ] || [ "$rc" = 75 ] || fail "SOL V0 without a GPU: exit $rc"
echo "ok: the SOL V0 kernel is the reference in destination-passing style"
