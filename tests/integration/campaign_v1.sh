#!/bin/bash
# campaign_v1.sh — V1 written by an LLM agent (the Claude CLI fake, scenario
# language in tests/fakes/fakelib.py) on a native C operator on the CPU, with
# --framework-baseline always. Each run stops at --max-iters 1, right after V1:
#   1. refused   the candidate commit changes nothing (V1 equals V0);
#   2. refused   the candidate also edits reference.c (an evaluator input);
#   3. refused   the candidate computes the wrong thing (multi-seed evaluation fails);
#  3b. killed    the supervisor is SIGKILLed mid-session; its agent lives on and the
#                next run ends it (recorded group, identity checked) and its worktree;
#   4. accepted  the rerun retries and the seed-like kernel is pinned: memory/v1.json
#                has status framework_baseline, framework_baseline.json is committed,
#                memory/v1.failed.json is gone;
#   5. skipped   a rerun finds V1 pinned and starts no agent;
#   6. adopted   a V1 kernel commit without its pin (a supervisor killed between the
#                two commits) is measured and pinned without an agent session.
# After every refusal: exit 1 with the reason, HEAD still the V0 measurement
# commit, the reason in memory/v1.failed.json, no worktree left. Every session's
# tokens (150 each) are in .aka/state.json "tokens".
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-v1.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
# shellcheck source=tests/lib/campaign_fixture.sh
. "$SRC/tests/lib/campaign_fixture.sh"
FK=$TMP/fake # what the (confined) fake agent may see of $TMP besides its worktree
agent_sandbox_setup "$FK"

OP=$TMP/op
cp -r "$SRC/examples/ops/vector_add" "$OP"
GOOD_KERNEL=$(cat "$OP/seeds/C/kernel.c")
WRONG_KERNEL=${GOOD_KERNEL//x\[i + u\] + y\[i + u\]/x[i + u] - y[i + u]}
[ "$WRONG_KERNEL" != "$GOOD_KERNEL" ] || fail "could not derive the wrong kernel"

# finish.py: the journal finalized as candidate_ready with HEAD, then handoff.json.
cat >"$FK/finish.py" <<'PY'
import datetime, json, os, subprocess
wt = os.environ["ATREX_AKA_WORKTREE"]
jp, hp = os.path.join(wt, ".aka/journal.json"), os.path.join(wt, ".aka/handoff.json")
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
j = json.load(open(jp))
assert j["episode"] == 0 and j["memory_version"] == 1, j
j["experiments"].append({"name": "v1", "hypothesis": "h", "change": "c", "result": "r",
                         "decision": "keep_as_best", "timestamp": now})
head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=wt, check=True,
                      stdout=subprocess.PIPE, text=True).stdout.strip()
j.update(state="candidate_ready", finalized_at=now, candidate_commit=head,
         outcome={"summary": "v1", "next_directions": []})
json.dump(j, open(jp + ".tmp", "w")); os.rename(jp + ".tmp", jp)
json.dump({"status": "candidate_ready", "candidate_commit": head}, open(hp + ".tmp", "w"))
os.rename(hp + ".tmp", hp)
PY

WS=$TMP/kernel_opt_vector_add_c_cpu
USAGE='{"usage":{"input":100,"output":50,"cache_read":0,"cache_write":0}}'
jstr() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
FINISH='{"sh":"python3 '"$FK"'/finish.py"}'
COMMIT='{"commit":"v1 kernel","paths":["kernel.c"]}'

# v1run ACTIONS: one campaign run to --max-iters 1; the exit status goes to $rc.
v1run() {
  printf '{"turns":[{"actions":[%s,%s]}]}\n' "$USAGE" "$1" >"$FK/scenario.json"
  rc=0
  AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
    "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
    --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --framework-baseline always --max-iters 1 \
    --handoff-resumes 0 >"$TMP/out" 2>"$TMP/err" || rc=$?
}
tokens() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens"])' "$WS/.aka/state.json"; }
sessions() { [ -f "$FK/fake.log" ] && wc -l <"$FK/fake.log" || echo 0; }

# refused N REASON: the invariants after a refused V1 (N sessions so far).
refused() {
  [ "$rc" = 1 ] || { cat "$TMP/err" >&2; fail "V1 $1: exit $rc, expected 1"; }
  grep -q "V1 refused\|V1 failed" "$TMP/err" || fail "V1 $1: no refusal line: $(cat "$TMP/err")"
  grep -q -- "$2" "$TMP/err" || fail "V1 $1: stderr lacks '$2': $(cat "$TMP/err")"
  grep -q -- "$2" "$WS/memory/v1.failed.json" || fail "V1 $1: failure record lacks '$2'"
  [ "$(git -C "$WS" log -1 --format=%s)" = "V0: record baseline measurement" ] ||
    fail "V1 $1: HEAD moved: $(git -C "$WS" log -1 --format=%s)"
  [ ! -e "$WS/memory/v1.json" ] && [ ! -e "$WS/framework_baseline.json" ] || fail "V1 $1: v1 left"
  [ "$(git -C "$WS" worktree list | wc -l)" = 1 ] || fail "V1 $1: worktree left"
  [ "$(tokens)" = "$((150 * $(sessions)))" ] || fail "V1 $1: tokens $(tokens), sessions $(sessions)"
  echo "ok: V1 $1 refused"
}

# 1. equals V0: an empty commit handed off as the candidate
v1run '{"sh":"git commit -q --allow-empty -m same"},'"$FINISH"
refused equal-to-v0 "does not differ from V0"
# 2. edits reference.c too
v1run '{"write":"kernel.c","content":'"$(jstr "$GOOD_KERNEL")"'},{"sh":"echo >> reference.c"},{"commit":"v1","paths":["kernel.c","reference.c"]},'"$FINISH"
refused edits-reference "changes reference.c; only kernel.c may change"
# 3. numerically wrong
v1run '{"write":"kernel.c","content":'"$(jstr "$WRONG_KERNEL")"'},'"$COMMIT,$FINISH"
refused wrong-result "did not pass the evaluator"
[ "$(sessions)" = 3 ] || fail "sessions: $(sessions)"

# 3b. interrupted: the supervisor is SIGKILLed while its V1 agent still runs (the
# agent is in its own session, so it survives); the next run must end it, by the
# group recorded in .aka/v1/agent_groups.jsonl, before starting a new V1 session.
TAG="akav1orphan$$"
printf '{"turns":[{"actions":[{"spawn":["bash","-c","exec -a %s sleep 300"]},{"sleep":300}]}]}\n' \
  "$TAG" >"$FK/scenario.json"
AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
  "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --framework-baseline always --max-iters 1 \
  --handoff-resumes 0 >"$TMP/out" 2>"$TMP/err" &
sup=$!
for _ in $(seq 100); do pgrep -f "$TAG" >/dev/null && break; sleep 0.1; done
pgrep -f "$TAG" >/dev/null || fail "V1 interrupted: the agent never started"
kill -9 "$sup"; wait "$sup" 2>/dev/null || true
sleep 0.3
if [ "$ASB" = none ]; then
  pgrep -f "$TAG" >/dev/null || fail "V1 interrupted: the agent died with its supervisor (test is void)"
else # confined: the agent sandbox dies with its supervisor, nothing is left to end
  for _ in $(seq 20); do pgrep -f "$TAG" >/dev/null || break; sleep 0.1; done
  ! pgrep -f "$TAG" >/dev/null || fail "V1 interrupted: the confined agent outlived its supervisor"
fi
[ -s "$WS/.aka/v1/agent_groups.jsonl" ] || fail "V1 interrupted: no agent group recorded"
trap 'pkill -9 -f "$TAG" 2>/dev/null || true; rm -rf "$TMP"' EXIT

# 4. the rerun ends the orphan, retries; a correct kernel is accepted and pinned
v1run '{"write":"kernel.c","content":'"$(jstr "$GOOD_KERNEL")"'},{"sh":"aka eval >/dev/null 2>&1 || true"},'"$COMMIT,$FINISH"
[ "$rc" = 0 ] || { cat "$TMP/err" >&2; fail "V1 accepted: exit $rc"; }
grep -q "V1: ending what an interrupted V1 session left running" "$TMP/err" ||
  fail "V1 rerun: the interrupted session was not ended: $(cat "$TMP/err")"
for _ in $(seq 20); do pgrep -f "$TAG" >/dev/null || break; sleep 0.1; done
pgrep -f "$TAG" >/dev/null && fail "V1 rerun: the interrupted V1 agent still runs"
[ ! -e "$WS/.aka/v1/agent_groups.jsonl" ] || fail "V1 rerun: agent group ledger left"
python3 - "$WS" <<'PY' || fail "V1 accepted: records"
import json, sys, subprocess
ws = sys.argv[1]
m = json.load(open(ws + "/memory/v1.json"))
assert m["version"] == "v1" and m["status"] == "framework_baseline", m["status"]
assert m["quality_gate"]["result"] == "PASS" and m["optimization"]["action_category"] == "framework_baseline"
# How the latencies were timed: verification never compares two methods.
assert m["performance"]["timing_method"] in ("cpu_time", "cpu_monotonic"), m["performance"]
fb = json.load(open(ws + "/framework_baseline.json"))
assert fb["version"] == "v1" and fb["framework"] == "C" and fb["kernel_commit"] == m["git_commit_hash"], fb
assert fb["validated_stages"] == ["combined-base-performance+multi-seed-5"], fb
head = subprocess.run(["git", "-C", ws, "show", "HEAD:framework_baseline.json"], check=True,
                      stdout=subprocess.PIPE, text=True).stdout
assert json.loads(head) == fb
kernel = subprocess.run(["git", "-C", ws, "show", fb["kernel_commit"] + ":kernel.c"], check=True,
                        stdout=subprocess.PIPE, text=True).stdout
assert kernel == open(ws + "/kernel.c").read()
st = json.load(open(ws + "/.aka/state.json"))
assert st["tokens"] == 600 and st.get("episodes", 0) == 0, st
PY
[ ! -e "$WS/memory/v1.failed.json" ] || fail "V1 accepted: failure record left"
[ -z "$(git -C "$WS" status --porcelain)" ] || fail "V1 accepted: workspace dirty"
[ "$(git -C "$WS" worktree list | wc -l)" = 1 ] || fail "V1 accepted: worktree left"
[ -f "$WS/.aka/v1/BRIEF.md" ] && grep -q "Framework baseline for vector_add" "$WS/.aka/v1/BRIEF.md" ||
  fail "V1 accepted: brief not kept"
grep -q '"ATREX_AKA_EPISODE": "0"' "$FK/fake.log" || fail "V1 env: $(tail -1 "$FK/fake.log")"
grep -q -- '"--effort", "max"' "$FK/fake.log" || fail "V1 effort: $(tail -1 "$FK/fake.log")"
echo "ok: V1 accepted and pinned"

# 5. a rerun: already pinned, no session
v1run '{"text":"never runs"}'
[ "$rc" = 0 ] && grep -q "V1: already pinned" "$TMP/err" || fail "V1 rerun: $(cat "$TMP/err")"
[ "$(sessions)" = 5 ] || fail "V1 rerun started an agent"
echo "ok: V1 pinned is skipped"

# 6. adopt: drop the pin commit, as if the supervisor died between the two V1 commits
git -C "$WS" reset -q --hard HEAD~1
rm -f "$WS/memory/v1.json"
git -C "$WS" show HEAD:kernel.c >"$TMP/v1-kernel"
[ "$(git -C "$WS" log -1 --format=%s)" = "v1: framework baseline (C) replacing the V0 baseline kernel" ] ||
  fail "adopt setup: $(git -C "$WS" log -1 --format=%s)"
v1run '{"text":"never runs"}'
[ "$rc" = 0 ] || { cat "$TMP/err" >&2; fail "V1 adopt: exit $rc"; }
grep -q "V1: adopting" "$TMP/err" || fail "V1 adopt: no adopt line"
[ "$(sessions)" = 5 ] || fail "V1 adopt started an agent"
git -C "$WS" show HEAD:framework_baseline.json >/dev/null || fail "V1 adopt: not pinned"
git -C "$WS" show HEAD:kernel.c | cmp -s - "$TMP/v1-kernel" || fail "V1 adopt: kernel changed"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["status"] == "framework_baseline", m' \
  "$WS/memory/v1.json" || fail "V1 adopt: record"
echo "ok: V1 committed but unpinned is adopted"
echo "campaign_v1: all V1 paths"
