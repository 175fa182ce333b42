#!/usr/bin/env bash
# plan_reviewers.sh — external plan reviewers (reference §9) through the fake
# CLIs: the campaign-start probe (codex answers, qoder fails) is cached and
# never repeated; `aka ask-codex` prints the review and records its tokens
# exactly; a disabled reviewer gets the disabled line (exit 0) and is never
# started; the campaign's own backend is skipped; a reviewer that edits its
# inputs is rejected and disabled; a failed review disables the reviewer;
# a review without its sections is rejected; both reviewers answering through
# their fakes are both enabled; bad input exits 2.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
FAKES="$AKA_SOURCE_DIR/tests/fakes"
mkdir -p "$T/bin" "$T/codex-home" "$T/ws/.aka" "$T/codex-state"
export CODEX_HOME="$T/codex-home"
unset ATREX_AGENT_CLI ATREX_AKA_WORKSPACE ATREX_PLAN_REVIEW_CODEX_ENABLED ATREX_PLAN_REVIEW_QODER_ENABLED

# The reviewer CLIs: fake-codex playing one scenario turn per invocation, and
# a qodercli that fails the way an unauthenticated one does. Both log calls.
cat >"$T/bin/codex" <<SH
#!/bin/bash
AKA_FAKE_SCENARIO="$T/codex.json" AKA_FAKE_LOG="$T/codex.log" AKA_FAKE_STATE="$T/codex-state" \
  exec "$FAKES/fake-codex" "\$@"
SH
cat >"$T/bin/qodercli" <<SH
#!/bin/bash
echo call >>"$T/qoder.calls"
echo "qodercli:   authentication   required" >&2
exit 1
SH
chmod +x "$T/bin/codex" "$T/bin/qodercli"
export ATREX_CODEX_BIN="$T/bin/codex" ATREX_QODER_BIN="$T/bin/qodercli"
REVIEW='CODEX_SUMMARY: tile by 64\nRISKS: bank conflicts\nMISSING_REQUIREMENTS: none\nDIRECTION_RECOMMENDATIONS: try 128\nVALIDATION_RECOMMENDATIONS: all shapes\nQUESTIONS_OR_ASSUMPTIONS: fp32 only'
cat >"$T/codex.json" <<EOF2
{"turns": [
 {"actions": [{"usage": {"input": 100, "output": 20, "cache_read": 50}}, {"say": "AKA_REVIEWER_READY"}]},
 {"actions": [{"usage": {"input": 1000, "output": 300, "cache_read": 700}}, {"usage": {"input": 400, "output": 100}}, {"say": "$REVIEW"}]},
 {"actions": [{"usage": {"input": 10, "output": 5}}, {"say": "CODEX_SUMMARY: short\\nRISKS: none"}]},
 {"actions": [{"usage": {"input": 10, "output": 5}}, {"write": "inputs/plan-plan.md", "content": "rewritten"}, {"say": "$REVIEW"}]}
]}
EOF2
printf '# Plan\nTile the matmul by 64 and vectorize the inner loop.\n' >"$T/plan.md"
printf 'profile: 80%% of time in the inner loop\n' >"$T/evidence.txt"
cp "$T/plan.md" "$T/plan.orig"
lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }

# 1. the probe: codex answers, qoder fails; both recorded, the cache written.
"$AKA_BIN" plan-reviewers --workspace "$T/ws" --agent-cli claude >"$T/probe1.out" ||
  fail "probe: $(cat "$T/probe1.out")"
python3 - "$T/ws/.aka/plan_reviewers.json" <<'PY' || fail "probe cache: $(cat "$T/ws/.aka/plan_reviewers.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["schema_version"] == 1 and c["agent_cli"] == "claude" and c["probe_timeout_seconds"] == 120, c
cx, q = c["reviewers"]["codex"], c["reviewers"]["qoder"]
assert cx == {"available": True, "status": "available", "reason": "startup probe completed"}, cx
assert q["available"] is False and q["status"] == "unavailable_exit_1", q
assert q["reason"] == "qodercli: authentication required", q
PY
grep -q "probed: yes" "$T/probe1.out" || fail "probe: not reported as probed"
[ "$(lines "$T/codex.log")" = 1 ] && [ "$(lines "$T/qoder.calls")" = 1 ] || fail "probe: calls"
python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readline()); assert r['cwd'] != sys.argv[2] and '/aka-review-probe' in r['cwd'], r" \
  "$T/codex.log" "$T/ws" || fail "probe: codex did not run in a scratch directory"

# 2. a rerun (a restarted campaign) reuses the cache: nobody is started again.
"$AKA_BIN" plan-reviewers --workspace "$T/ws" --agent-cli claude >"$T/probe2.out"
grep -q "probed: no (cached)" "$T/probe2.out" || fail "rerun: probed again"
[ "$(lines "$T/codex.log")" = 1 ] && [ "$(lines "$T/qoder.calls")" = 1 ] || fail "rerun: a reviewer was started"

# 3. ask codex: the review is printed; tokens recorded exactly (codex: input + output).
out=$(ATREX_AKA_WORKSPACE="$T/ws" ATREX_AKA_EPISODE=3 "$AKA_BIN" ask-codex --plan "$T/plan.md" \
  --evidence "$T/evidence.txt") || fail "ask-codex failed: $out"
for s in CODEX_SUMMARY: RISKS: MISSING_REQUIREMENTS: DIRECTION_RECOMMENDATIONS: \
  VALIDATION_RECOMMENDATIONS: QUESTIONS_OR_ASSUMPTIONS:; do
  grep -q "^$s" <<<"$out" || fail "ask-codex: no $s in: $out"
done
python3 - "$T/ws/.aka/reviewer_tokens.jsonl" "$T/codex.log" <<'PY' || fail "ledger: $(cat "$T/ws/.aka/reviewer_tokens.jsonl")"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [(r["reviewer"], r["purpose"], r["tokens"]) for r in recs] == \
    [("codex", "probe", 120), ("codex", "review", 1800)], recs
assert recs[1]["episode"] == 3 and recs[1]["usage"]["cache_read_tokens"] == 700, recs[1]
call = [json.loads(l) for l in open(sys.argv[2])][1]
assert call["effort"] == "max" and call["cwd"].split("/")[-1].startswith("aka-review"), call
PY
prompt=$(cat "$T"/ws/.aka/reviews/*-codex-*/prompt.md)
grep -q "^--- PLAN: inputs/plan-plan.md ---" <<<"$prompt" && grep -q "Tile the matmul by 64" <<<"$prompt" &&
  grep -q "^--- EVIDENCE: inputs/evidence-1-evidence.txt ---" <<<"$prompt" &&
  grep -q "80% of time" <<<"$prompt" || fail "review prompt: $prompt"
"$AKA_BIN" plan-reviewers --workspace "$T/ws" --agent-cli claude | grep -q "^tokens: 1920$" ||
  fail "reviewer tokens: not 1920"

# 4. qoder is disabled: the disabled line and its reason, exit 0, never started.
out=$(ATREX_AKA_WORKSPACE="$T/ws" "$AKA_BIN" ask-qoder --plan "$T/plan.md") || fail "ask-qoder exit $?"
[ "$out" = "ASK_QODER_DISABLED: qodercli: authentication required" ] || fail "ask-qoder: $out"
[ "$(lines "$T/qoder.calls")" = 1 ] || fail "ask-qoder: the disabled reviewer was started"
# ... and through the session environment alone (no workspace).
out=$(ATREX_PLAN_REVIEW_QODER_ENABLED=0 ATREX_PLAN_REVIEW_QODER_REASON="probe timed out" \
  "$AKA_BIN" ask-qoder --plan "$T/plan.md")
[ "$out" = "ASK_QODER_DISABLED: probe timed out" ] || fail "ask-qoder (env): $out"

# 5. the campaign's own backend is skipped, never started.
out=$(ATREX_AGENT_CLI=codex ATREX_AKA_WORKSPACE="$T/ws" "$AKA_BIN" ask-codex --plan "$T/plan.md")
grep -q "^ASK_CODEX_SKIPPED: " <<<"$out" || fail "skip: $out"
[ "$(lines "$T/codex.log")" = 2 ] || fail "skip: codex was started"

# 6. a review without all its sections is rejected (exit 3) but the reviewer stays enabled.
set +e
ATREX_AKA_WORKSPACE="$T/ws" "$AKA_BIN" ask-codex --plan "$T/plan.md" >"$T/o6" 2>"$T/e6"; rc=$?
set -e
[ "$rc" = 3 ] && grep -q "ASK_CODEX_REJECTED: the review lacks the sections MISSING_REQUIREMENTS:" "$T/e6" ||
  fail "sections: rc=$rc $(cat "$T/e6")"
grep -q '"available": true' <(python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['reviewers']['codex']))" "$T/ws/.aka/plan_reviewers.json") ||
  fail "sections: codex was disabled"

# 7. a reviewer that edits its inputs: rejected (exit 3), disabled, never asked again.
set +e
ATREX_AKA_WORKSPACE="$T/ws" "$AKA_BIN" ask-codex --plan "$T/plan.md" >"$T/o7" 2>"$T/e7"; rc=$?
set -e
[ "$rc" = 3 ] && grep -q "ASK_CODEX_REJECTED: the review changed its input .*plan-plan.md" "$T/e7" ||
  fail "edit: rc=$rc $(cat "$T/e7")"
[ ! -s "$T/o7" ] || fail "edit: the rejected review was printed"
cmp -s "$T/plan.md" "$T/plan.orig" || fail "edit: the caller's plan changed"
out=$(ATREX_AKA_WORKSPACE="$T/ws" "$AKA_BIN" ask-codex --plan "$T/plan.md")
grep -q "^ASK_CODEX_DISABLED: the review changed its input" <<<"$out" || fail "edit: not disabled: $out"
[ "$(lines "$T/codex.log")" = 4 ] || fail "edit: the disabled codex was started again"

# 8. a review that fails disables the reviewer for the rest of the campaign.
mkdir -p "$T/ws2/.aka"
printf '{"turns": [{"actions": [{"say": "AKA_REVIEWER_READY"}]}, {"actions": [], "exit": 1}]}\n' >"$T/codex.json"
rm -f "$T/codex-state/fake-invocations"
"$AKA_BIN" plan-reviewers --workspace "$T/ws2" --agent-cli pi >/dev/null
set +e
ATREX_AKA_WORKSPACE="$T/ws2" "$AKA_BIN" ask-codex --plan "$T/plan.md" >"$T/o8" 2>"$T/e8"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "^ASK_CODEX_FAILED: " "$T/e8" || fail "failed review: rc=$rc $(cat "$T/e8")"
out=$(ATREX_AKA_WORKSPACE="$T/ws2" "$AKA_BIN" ask-codex --plan "$T/plan.md")
grep -q "^ASK_CODEX_DISABLED: " <<<"$out" || fail "failed review: not disabled: $out"
# With a builtin campaign nobody is probed; with a codex campaign codex is its own backend.
mkdir -p "$T/ws3" "$T/ws4"
"$AKA_BIN" plan-reviewers --workspace "$T/ws3" --agent-cli builtin | grep -q "^codex: disabled (not_used)" ||
  fail "builtin: codex probed"
"$AKA_BIN" plan-reviewers --workspace "$T/ws4" --agent-cli codex | grep -q "^codex: enabled (current_backend)" ||
  fail "codex campaign: not current_backend"

# 9. both reviewers answer (fake-codex, fake-qodercli: a Claude-like stream whose
#    tokens include cache reads): both enabled, cached, not probed again.
mkdir -p "$T/ws6/.aka" "$T/qoder-state" "$T/codex2-state"
cat >"$T/bin/codex2" <<SH
#!/bin/bash
AKA_FAKE_SCENARIO="$T/codex2.json" AKA_FAKE_LOG="$T/codex2.log" AKA_FAKE_STATE="$T/codex2-state" \
  exec "$FAKES/fake-codex" "\$@"
SH
chmod +x "$T/bin/codex2"
printf '{"turns": [{"actions": [{"usage": {"input": 3, "output": 1}}, {"say": "AKA_REVIEWER_READY"}]}]}\n' >"$T/codex2.json"
export ATREX_CODEX_BIN="$T/bin/codex2"
cat >"$T/bin/qodercli-fake" <<SH
#!/bin/bash
AKA_FAKE_SCENARIO="$T/qoder.json" AKA_FAKE_LOG="$T/qoder.log" AKA_FAKE_STATE="$T/qoder-state" \
  exec "$FAKES/fake-qodercli" "\$@"
SH
chmod +x "$T/bin/qodercli-fake"
QREVIEW=${REVIEW//CODEX_SUMMARY/QODER_SUMMARY}
cat >"$T/qoder.json" <<EOF2
{"turns": [
 {"actions": [{"usage": {"input": 5, "output": 2}}, {"say": "AKA_REVIEWER_READY"}]},
 {"actions": [{"usage": {"input": 50, "output": 20, "cache_read": 30, "cache_write": 10}}, {"say": "$QREVIEW"}]}
]}
EOF2
for run in 1 2; do
  ATREX_QODER_BIN="$T/bin/qodercli-fake" "$AKA_BIN" plan-reviewers --workspace "$T/ws6" \
    --agent-cli claude >"$T/probe6.out"
  grep -q "^codex: enabled (available)" "$T/probe6.out" && grep -q "^qoder: enabled (available)" \
    "$T/probe6.out" || fail "both probed (run $run): $(cat "$T/probe6.out")"
  [ "$(lines "$T/codex2.log")" = 1 ] && [ "$(lines "$T/qoder.log")" = 1 ] || fail "re-probed (run $run)"
done
grep -q "probed: no (cached)" "$T/probe6.out" || fail "second run probed"
out=$(ATREX_QODER_BIN="$T/bin/qodercli-fake" ATREX_AKA_WORKSPACE="$T/ws6" "$AKA_BIN" ask-qoder \
  --plan "$T/plan.md") || fail "ask-qoder: $out"
grep -q "^QODER_SUMMARY: tile by 64" <<<"$out" || fail "ask-qoder review: $out"
"$AKA_BIN" plan-reviewers --workspace "$T/ws6" --agent-cli claude | grep -q "^tokens: 121$" ||
  fail "qoder tokens: $(cat "$T/ws6/.aka/reviewer_tokens.jsonl")"

# 10. bad input: one line naming the flag or file, exit 2, nothing written.
bad() {
  local want=$1; shift
  set +e
  "$@" >"$T/bo" 2>"$T/be"; local rc=$?
  set -e
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/be")" = 1 ] && grep -q -- "$want" "$T/be" ||
    fail "bad input ($*): rc=$rc $(cat "$T/be")"
}
: >"$T/empty.md"
bad "--plan: required" "$AKA_BIN" ask-codex
bad "--plan $T/missing.md: not a readable regular file" "$AKA_BIN" ask-codex --plan "$T/missing.md"
bad "--plan $T/empty.md: the file is empty" "$AKA_BIN" ask-qoder --plan "$T/empty.md"
bad "--evidence $T/missing.txt" "$AKA_BIN" ask-codex --plan "$T/plan.md" --evidence "$T/missing.txt"
bad "ask-codex: --timeout: expected an integer in \\[1, " "$AKA_BIN" ask-codex --plan "$T/plan.md" --timeout 0
bad "ATREX_ASK_CODEX_TIMEOUT=\"soon\"" env ATREX_ASK_CODEX_TIMEOUT=soon "$AKA_BIN" ask-codex --plan "$T/plan.md"
mkdir -p "$T/ws5"
bad "ATREX_PLAN_REVIEW_PROBE_TIMEOUT=\"-1\"" env ATREX_PLAN_REVIEW_PROBE_TIMEOUT=-1 \
  "$AKA_BIN" plan-reviewers --workspace "$T/ws5" --agent-cli claude
[ ! -e "$T/ws5/.aka/plan_reviewers.json" ] || fail "bad probe timeout: a cache was written"

echo "plan_reviewers: ok"
