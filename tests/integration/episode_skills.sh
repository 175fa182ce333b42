#!/usr/bin/env bash
# episode_skills.sh — what a campaign gives an external agent before its first
# session, seen from inside the episode through the Claude fake:
#   - the skills and the subagent for its backend in the episode worktree
#     (.claude/skills/..., .claude/agents/...), which never show up in
#     `git status` nor in the candidate's commit, even after `git add .`
#     (the exclude file of the episode's own repository; the workspace's is untouched);
#   - the plan-reviewer probe, run once at campaign start (a fake codex that
#     answers, a qodercli that is not installed), cached in
#     .aka/plan_reviewers.json and handed to the session as
#     ATREX_PLAN_REVIEW_{CODEX,QODER}_{ENABLED,REASON}; a second campaign run
#     reuses the cache and probes nobody;
#   - `aka ask-codex` from inside the (confined) episode works, and its tokens
#     reach the workspace's ledger.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/aka-episode-skills.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA_BIN" sandbox run -- true >/dev/null 2>&1 || ISO=none
AKA=$AKA_BIN
# shellcheck source=tests/lib/campaign_fixture.sh
. "$AKA_SOURCE_DIR/tests/lib/campaign_fixture.sh"
F=$T/fake # the fake agent's files: the one directory of $T its sandbox shows it
agent_sandbox_setup "$F"
cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$T/op"
# The codex reviewer lives in the fake directory too: the agent's `aka ask-codex` starts it
# from inside the agent sandbox.
mkdir -p "$F/codex-home" "$F/codex-state"
cat >"$F/codex" <<SH
#!/bin/bash
AKA_FAKE_SCENARIO="$F/codex.json" AKA_FAKE_LOG="$F/codex.log" AKA_FAKE_STATE="$F/codex-state" \
  exec "$AKA_SOURCE_DIR/tests/fakes/fake-codex" "\$@"
SH
chmod +x "$F/codex"
REVIEW='CODEX_SUMMARY: s\nRISKS: r\nMISSING_REQUIREMENTS: m\nDIRECTION_RECOMMENDATIONS: d\nVALIDATION_RECOMMENDATIONS: v\nQUESTIONS_OR_ASSUMPTIONS: q'
cat >"$F/codex.json" <<JSON
{"turns": [{"actions": [{"usage": {"input": 30, "output": 7}}, {"say": "AKA_REVIEWER_READY"}]},
 {"actions": [{"usage": {"input": 400, "output": 100}}, {"say": "$REVIEW"}]}]}
JSON

# The episode: look around, then commit everything with `git add .` and pivot.
cat >"$F/look.sh" <<SH
#!/bin/bash
set -euo pipefail
find .claude -type f | sort >"$F/installed.txt"
env | grep '^ATREX_PLAN_REVIEW_' | sort >"$F/review-env.txt"
git status --porcelain --untracked-files=all >"$F/status.txt"
cp "\$(git rev-parse --git-path info/exclude)" "$F/exclude.txt"
echo '/* touched by the agent */' >>kernel.c
git add .
git -c user.name=a -c user.email=a@a commit -qm candidate
git show --name-only --format= HEAD >"$F/commit-files.txt"
printf '# plan\ntile it\n' >"$F/plan.md"
aka ask-codex --plan "$F/plan.md" >"$F/review.txt" 2>&1 || echo "ask-codex exit \$?" >>"$F/review.txt"
cd /
aka journal append --experiment-json "{\"name\": \"look\", \"episode\": \$ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"discard\"}"
aka journal finalize --state pivot --outcome-json '{"summary": "pivot", "next_directions": []}'
aka handoff --status pivot
SH
printf '{"turns":[{"actions":[{"usage":{"input":10,"output":5}},{"sh":"bash %s"}]}]}\n' "$F/look.sh" >"$F/scenario.json"

run_campaign() {
  CODEX_HOME="$F/codex-home" ATREX_CODEX_BIN="$F/codex" ATREX_QODER_BIN="$T/no-such-qodercli" \
  AKA_FAKE_SCENARIO="$F/scenario.json" AKA_FAKE_LOG="$F/fake.log" AKA_FAKE_STATE="$F" \
    "$AKA_BIN" optimize --op-dir "$T/op" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$AKA_SOURCE_DIR/tests/fakes/fake-claude" --workspace "$T" \
    --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters "$1" >"$T/out" 2>"$T/err" ||
    { cat "$T/err" >&2; fail "aka optimize failed"; }
}
run_campaign 1
WS=$(ls -d "$T"/kernel_opt_vector_add_*)

for f in .claude/skills/aka-protocol/SKILL.md .claude/skills/kernel-optimization/SKILL.md \
  .claude/skills/plan-review/SKILL.md .claude/agents/kernel-engineer.md; do
  grep -qx "$f" "$F/installed.txt" || fail "not installed in the worktree: $f ($(cat "$F/installed.txt"))"
done
[ ! -s "$F/status.txt" ] || fail "installed files show in git status: $(cat "$F/status.txt")"
[ "$(cat "$F/commit-files.txt")" = kernel.c ] ||
  fail "the candidate commit holds more than the kernel: $(cat "$F/commit-files.txt")"
grep -qx '/.claude/' "$F/exclude.txt" || fail "no exclude entry in the episode repository"
! grep -qx '/.claude/' "$WS/.git/info/exclude" 2>/dev/null ||
  fail "the episode wrote the workspace's exclude file: it shares the canonical repository"

python3 - "$WS/.aka/plan_reviewers.json" <<'PY' || fail "reviewer cache: $(cat "$WS/.aka/plan_reviewers.json")"
import json, sys
c = json.load(open(sys.argv[1]))["reviewers"]
assert c["codex"]["available"] and c["codex"]["status"] == "available", c
assert not c["qoder"]["available"] and c["qoder"]["status"] == "unavailable", c
assert "no-such-qodercli" in c["qoder"]["reason"], c
PY
grep -qx 'ATREX_PLAN_REVIEW_CODEX_ENABLED=1' "$F/review-env.txt" &&
  grep -qx 'ATREX_PLAN_REVIEW_QODER_ENABLED=0' "$F/review-env.txt" &&
  grep -q '^ATREX_PLAN_REVIEW_QODER_REASON=.*no-such-qodercli' "$F/review-env.txt" ||
  fail "session environment: $(cat "$F/review-env.txt")"
grep -q "plan reviewers: codex enabled (available), qoder disabled (unavailable)" "$T/out" "$T/err" ||
  fail "the probe was not reported: $(cat "$T/out" "$T/err")"
probes() { grep -c '"cwd": "[^"]*/aka-review-probe' "$F/codex.log" || true; }
[ "$(probes)" = 1 ] || fail "codex probed $(probes) times"
grep -q '"tokens":37' "$WS/.aka/reviewer_tokens.jsonl" || fail "probe tokens not recorded"
# The review the confined agent asked for: printed to it, its tokens in the workspace's
# ledger (taken back from the episode's view), its capture kept with the episode.
grep -q "^CODEX_SUMMARY: s" "$F/review.txt" || fail "ask-codex in the episode: $(cat "$F/review.txt")"
grep -q '"purpose":"review","reviewer":"codex","tokens":500' "$WS/.aka/reviewer_tokens.jsonl" ||
  fail "the episode's review tokens did not reach the ledger: $(cat "$WS/.aka/reviewer_tokens.jsonl")"
ls "$WS"/.aka/episodes/e0001/reviews/*-codex-*/prompt.md >/dev/null || fail "review capture not kept"

# A second run of the campaign: the cache is reused, nobody is probed again.
run_campaign 2
[ "$(probes)" = 1 ] || fail "codex probed again on the second run"
grep -q "plan reviewers:" "$T/out" "$T/err" && fail "the second run probed again"
echo "episode_skills: ok"
