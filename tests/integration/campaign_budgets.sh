#!/bin/bash
# campaign_budgets.sh — every stop rule of `aka optimize` with the Claude CLI fake
# on a native C operator on the CPU, and resume after each with a larger budget:
#   --max-iters     stops with "budget: max-iters (vN >= N)"; a rerun with the
#                   same budget stops at once, a larger one goes on;
#   --token-budget  the fake reports exactly 157 tokens per session, so the totals
#                   in .aka/state.json and the reason are exact numbers;
#   --max-stall     "stall: K episodes without promotion", checked on resume too;
#   goal episodes   --goal-after-episodes/--goal-after-stalls schedule a goal
#                   episode whose record says so and whose brief carries --goal;
#   --target-util   inactive (said once) while the wiki knows no CPU peak; with a
#                   workspace plugin giving a peak bandwidth, a promoted kernel
#                   above the target stops the campaign with the number the test
#                   recomputes from the record; a higher target goes on.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-budgets.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
# Only the bundled wiki and the workspace plugin below: no user plugins, own cache.
export XDG_DATA_HOME=$TMP/data XDG_CACHE_HOME=$TMP/cache

# vector_add with a slow reference (the V0 kernel): tests/lib/campaign_fixture.sh.
. "$SRC/tests/lib/campaign_fixture.sh"
OP=$TMP/op
slow_vector_add "$SRC" "$OP"

# The fake agent's files, the one directory of $TMP its sandbox shows it.
FK=$TMP/fake
agent_sandbox_setup "$FK"
# finish.py STATE: the journal finalized in STATE and the handoff, written directly.
write_finish_py "$FK/finish.py"

WS=$TMP/kernel_opt_vector_add_c_cpu
# 100 + 20 + 30 + 7 = 157 tokens per session, exactly (cache tokens count).
USAGE='{"usage":{"input":100,"output":20,"cache_read":30,"cache_write":7}}'
PIVOT='{"sh":"python3 '"$FK"'/finish.py pivot"}'

# campaign ACTIONS FLAGS...: one `aka optimize` run whose agent sessions play ACTIONS.
campaign() {
  local actions=$1; shift
  printf '{"turns":[{"actions":[%s,%s]}]}\n' "$USAGE" "$actions" >"$FK/scenario.json"
  AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
    "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
    --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" "$@" >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; fail "aka optimize $*"; }
}
# stopped REASON: the run ended with exactly this stop line.
stopped() {
  [ "$(cat "$TMP/out")" = "campaign stopped: $1" ] || fail "want stop '$1', got '$(cat "$TMP/out")'"
  grep -qxF "aka optimize: stop: $1" "$TMP/err" || fail "no progress stop line for '$1'"
}
latest() { ls "$WS/memory" | sed -n 's/^v\([0-9]*\)\.json$/\1/p' | sort -n | tail -1; }
state() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$WS/.aka/state.json" "$1"; }
status_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$WS/memory/v$1.json"; }

# ---- --max-iters ----------------------------------------------------------------------
campaign "$PIVOT" --max-iters 0
stopped "budget: max-iters (v0 >= 0)"
[ "$(latest)" = 0 ] || fail "max-iters 0 ran an episode"
campaign "$PIVOT" --max-iters 1 --fast-episodes 0
stopped "budget: max-iters (v1 >= 1)"
[ "$(latest)" = 1 ] && [ "$(status_of 1)" = pivot ] || fail "max-iters 1: v$(latest)"
grep -q "^aka optimize: episode 1/1 (full) exploring, best latency [0-9.]* us, speedup 1.00x vs V0: episode 1 -> v1" \
  "$TMP/err" || fail "progress line: $(grep 'episode' "$TMP/err")"
[ "$(grep -c 'target-util: inactive for this campaign: the GPU wiki has no peak' "$TMP/err")" = 1 ] ||
  fail "target-util inactive not said once: $(cat "$TMP/err")"
campaign "$PIVOT" --max-iters 1 --fast-episodes 0
stopped "budget: max-iters (v1 >= 1)"
[ "$(latest)" = 1 ] || fail "a resume with a spent max-iters ran an episode"

# ---- --token-budget -------------------------------------------------------------------
[ "$(state tokens)" = 157 ] || fail "tokens after one session: $(state tokens)"
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --token-budget 157
stopped "budget: token-budget (157 >= 157 tokens)"
[ "$(latest)" = 1 ] || fail "a spent token budget ran an episode"
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --token-budget 400
stopped "budget: token-budget (471 >= 400 tokens)"
[ "$(latest)" = 3 ] || fail "token budget 400: v$(latest)"
[ "$(state tokens)" = 471 ] || fail "tokens after three sessions: $(state tokens)"
# Plan reviewers spend the same budget through their own ledger (src/agents/reviewers.c).
printf '{"at":"2026-12-02T00:00:00Z","reviewer":"codex","purpose":"review","tokens":100,"usage":{},"episode":3}\n' \
  >>"$WS/.aka/reviewer_tokens.jsonl"
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --token-budget 560
stopped "budget: token-budget (571 >= 560 tokens)"
[ "$(latest)" = 3 ] || fail "reviewer tokens were not counted: v$(latest)"
rm "$WS/.aka/reviewer_tokens.jsonl"
[ "$(grep -c 'target-util: inactive' "$TMP/err")" = 1 ] || fail "target-util inactive said twice"

# ---- --max-stall ----------------------------------------------------------------------
[ "$(state consecutive_without_promotion)" = 3 ] || fail "stall counter"
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --max-stall 3
stopped "stall: 3 episodes without promotion"
[ "$(latest)" = 3 ] || fail "a resume with a spent stall budget ran an episode"
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --max-stall 4
stopped "stall: 4 episodes without promotion"
[ "$(latest)" = 4 ] || fail "max-stall 4: v$(latest)"

# ---- goal episode: 4 episodes done, 4 > 3 unpromoted in a row ---------------------------
GOAL="fuse both loads into one streaming pass"
campaign "$PIVOT" --max-iters 5 --fast-episodes 0 --goal-after-episodes 4 \
  --goal-after-stalls 3 --goal "$GOAL"
stopped "budget: max-iters (v5 >= 5)"
python3 - "$WS/memory/v5.json" <<'PY' || fail "v5 is not a goal episode"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["episode"]["kind"] == "goal" and m["long_horizon"]["mode"] == "goal", m["episode"]
PY
grep -qF "$GOAL" "$WS/.aka/episodes/e0005/BRIEF.md" || fail "the goal brief lacks --goal"
grep -q "^aka optimize: episode 5/5 (goal) " "$TMP/err" || fail "goal progress line"

# ---- --target-util ----------------------------------------------------------------------
# A peak bandwidth fact for this CPU, 50 times V0's achieved bandwidth (V0 at 2%), in a
# workspace plugin; vector_add moves 12 bytes per element (operator.json roofline).
python3 - "$WS" "$OP/operator.json" <<'PY'
import json, os, sys
ws, opf = sys.argv[1], sys.argv[2]
dims = {s["id"]: s["dims"]["N"] for s in json.load(open(opf))["shapes"]}
lat = json.load(open(ws + "/memory/v0.json"))["performance"]["latency_us_by_shape"]
bw = sum(12 * n for n in dims.values()) / (sum(lat[k] for k in dims) * 1e-6)
d = ws + "/.aka-plugins/test-peaks"
os.makedirs(d + "/records")
json.dump({"name": "test-peaks", "version": "1.0.0", "description": "test peak",
           "contributes": {"records": ["records"]}}, open(d + "/plugin.json", "w"))
json.dump({"schema": "aka.wiki.hardware.v1", "id": "cpu.test.memory-bandwidth", "kind": "fact",
           "scope": {"vendor": "cpu", "arch": "x86-64", "chip": "x86-cpu"},
           "title": "test host: peak memory bandwidth", "body": "50 times the V0 kernel's rate.",
           "fact": {"quantity": "memory_bandwidth", "value": bw * 50 / 1e9, "unit": "GB/s"},
           "source": {"kind": "measurement", "by": "campaign_budgets.sh", "date": "2026-01-01",
                      "method": "V0 achieved bandwidth times 50"}},
          open(d + "/records/peak.json", "w"))
PY
[ "$(uname -m)" = x86_64 ] || { echo "campaign_budgets: not x86-64, target-util part skipped"; exit 0; }
FAST=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$OP/seeds/C/kernel.c")
PROMOTE='{"write":"kernel.c","content":'"$FAST"'},{"sh":"aka eval >/dev/null 2>&1 || true"},{"commit":"candidate","paths":["kernel.c"]},{"sh":"python3 '"$FK"'/finish.py candidate_ready"}'
campaign "$PROMOTE" --max-iters 9 --fast-episodes 9 --fast-trials 1 --target-util 4
[ "$(status_of 6)" = promoted ] || fail "v6 not promoted: $(status_of 6)"
grep -q "^aka optimize: target-util: v0 at 2.0% of the roofline peak: bandwidth" "$TMP/err" ||
  fail "V0 utilization line: $(grep target-util "$TMP/err")"
pct=$(python3 - "$WS" "$OP/operator.json" <<'PY'
import json, sys
ws, opf = sys.argv[1], sys.argv[2]
dims = {s["id"]: s["dims"]["N"] for s in json.load(open(opf))["shapes"]}
peak = json.load(open(ws + "/.aka-plugins/test-peaks/records/peak.json"))["fact"]["value"] * 1e9
lat = json.load(open(ws + "/memory/v6.json"))["performance"]["latency_us_by_shape"]
pct = 100 * sum(12 * n for n in dims.values()) / peak / (sum(lat[k] for k in dims) * 1e-6)
st = json.load(open(ws + "/.aka/state.json"))["target_util"]
assert st["version"] == 6 and abs(st["pct"] - pct) < 1e-6 * pct, (st, pct)
assert st["flop_pct"] is None and "cpu.test.memory-bandwidth" in st["basis"], st
print("%.1f" % pct)
PY
) || fail "utilization record"
stopped "target-util: v6 reached $pct% of the roofline peak (>= 4%)"
# The same target on resume: stops at once; a higher one goes on.
campaign "$PIVOT" --max-iters 9 --fast-episodes 0 --target-util 4
stopped "target-util: v6 reached $pct% of the roofline peak (>= 4%)"
[ "$(latest)" = 6 ] || fail "a resume above the target ran an episode"
higher=$(python3 -c 'import sys; print(min(100, int(float(sys.argv[1])) + 1))' "$pct")
[ "$higher" -lt 100 ] || fail "the promoted kernel is at $pct%: raise the test's peak factor"
campaign "$PIVOT" --max-iters 7 --fast-episodes 0 --target-util "$higher"
stopped "budget: max-iters (v7 >= 7)"
[ "$(status_of 7)" = pivot ] || fail "v7 after raising --target-util"
echo "campaign_budgets: every stop rule stops with its reason and resumes with a larger budget"
