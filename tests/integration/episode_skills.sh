#!/usr/bin/env bash
# episode_skills.sh — what a campaign gives an external agent before its first
# session, seen from inside the episode through the Claude fake:
#   - the skills and the subagent for its backend in the episode worktree
#     (.claude/skills/..., .claude/agents/...), which never show up in
#     `git status` nor in the candidate's commit, even after `git add .`
#     (the worktree's exclude file is the workspace's $GIT_COMMON_DIR/info/exclude);
#   - the plan-reviewer probe, run once at campaign start (a fake codex that
#     answers, a qodercli that is not installed), cached in
#     .aka/plan_reviewers.json and handed to the session as
#     ATREX_PLAN_REVIEW_{CODEX,QODER}_{ENABLED,REASON}; a second campaign run
#     reuses the cache and probes nobody.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/aka-episode-skills.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA_BIN" sandbox run -- true >/dev/null 2>&1 || ISO=none
cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$T/op"
mkdir -p "$T/codex-home" "$T/codex-state"
cat >"$T/codex" <<SH
#!/bin/bash
AKA_FAKE_SCENARIO="$T/codex.json" AKA_FAKE_LOG="$T/codex.log" AKA_FAKE_STATE="$T/codex-state" \
  exec "$AKA_SOURCE_DIR/tests/fakes/fake-codex" "\$@"
SH
chmod +x "$T/codex"
printf '{"turns": [{"actions": [{"usage": {"input": 30, "output": 7}}, {"say": "AKA_REVIEWER_READY"}]}]}\n' >"$T/codex.json"

# The episode: look around, then commit everything with `git add .` and pivot.
cat >"$T/look.sh" <<SH
#!/bin/bash
set -euo pipefail
find .claude -type f | sort >"$T/installed.txt"
env | grep '^ATREX_PLAN_REVIEW_' | sort >"$T/review-env.txt"
git status --porcelain --untracked-files=all >"$T/status.txt"
echo '/* touched by the agent */' >>kernel.c
git add .
git -c user.name=a -c user.email=a@a commit -qm candidate
git show --name-only --format= HEAD >"$T/commit-files.txt"
cd /
aka journal append --experiment-json "{\"name\": \"look\", \"episode\": \$ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"discard\"}"
aka journal finalize --state pivot --outcome-json '{"summary": "pivot", "next_directions": []}'
aka handoff --status pivot
SH
printf '{"turns":[{"actions":[{"usage":{"input":10,"output":5}},{"sh":"bash %s"}]}]}\n' "$T/look.sh" >"$T/scenario.json"

run_campaign() {
  CODEX_HOME="$T/codex-home" ATREX_CODEX_BIN="$T/codex" ATREX_QODER_BIN="$T/no-such-qodercli" \
  AKA_FAKE_SCENARIO="$T/scenario.json" AKA_FAKE_LOG="$T/fake.log" AKA_FAKE_STATE="$T" \
    "$AKA_BIN" optimize --op-dir "$T/op" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$AKA_SOURCE_DIR/tests/fakes/fake-claude" --workspace "$T" \
    --sandbox-isolation "$ISO" --max-iters "$1" >"$T/out" 2>"$T/err" ||
    { cat "$T/err" >&2; fail "aka optimize failed"; }
}
run_campaign 1
WS=$(ls -d "$T"/kernel_opt_vector_add_*)

for f in .claude/skills/aka-protocol/SKILL.md .claude/skills/kernel-optimization/SKILL.md \
  .claude/skills/plan-review/SKILL.md .claude/agents/kernel-engineer.md; do
  grep -qx "$f" "$T/installed.txt" || fail "not installed in the worktree: $f ($(cat "$T/installed.txt"))"
done
[ ! -s "$T/status.txt" ] || fail "installed files show in git status: $(cat "$T/status.txt")"
[ "$(cat "$T/commit-files.txt")" = kernel.c ] ||
  fail "the candidate commit holds more than the kernel: $(cat "$T/commit-files.txt")"
grep -qx '/.claude/' "$WS/.git/info/exclude" || fail "no exclude entry in the workspace"

python3 - "$WS/.aka/plan_reviewers.json" <<'PY' || fail "reviewer cache: $(cat "$WS/.aka/plan_reviewers.json")"
import json, sys
c = json.load(open(sys.argv[1]))["reviewers"]
assert c["codex"]["available"] and c["codex"]["status"] == "available", c
assert not c["qoder"]["available"] and c["qoder"]["status"] == "unavailable", c
assert "no-such-qodercli" in c["qoder"]["reason"], c
PY
grep -qx 'ATREX_PLAN_REVIEW_CODEX_ENABLED=1' "$T/review-env.txt" &&
  grep -qx 'ATREX_PLAN_REVIEW_QODER_ENABLED=0' "$T/review-env.txt" &&
  grep -q '^ATREX_PLAN_REVIEW_QODER_REASON=.*no-such-qodercli' "$T/review-env.txt" ||
  fail "session environment: $(cat "$T/review-env.txt")"
grep -q "plan reviewers: codex enabled (available), qoder disabled (unavailable)" "$T/out" "$T/err" ||
  fail "the probe was not reported: $(cat "$T/out" "$T/err")"
[ "$(wc -l <"$T/codex.log")" = 1 ] || fail "codex probed $(wc -l <"$T/codex.log") times"
grep -q '"tokens":37' "$WS/.aka/reviewer_tokens.jsonl" || fail "probe tokens not recorded"

# A second run of the campaign: the cache is reused, nobody is probed again.
run_campaign 2
[ "$(wc -l <"$T/codex.log")" = 1 ] || fail "codex probed again on the second run"
grep -q "plan reviewers:" "$T/out" "$T/err" && fail "the second run probed again"
echo "episode_skills: ok"
