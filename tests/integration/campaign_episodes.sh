#!/bin/bash
# campaign_episodes.sh — the episode engine end to end with the Claude CLI fake
# (tests/fakes/fake-claude, scenario language in tests/fakes/fakelib.py), one
# `aka optimize` run per episode on a native C operator on the CPU. The fake
# ends its part as a real agent does, with `aka journal append|finalize` and
# `aka handoff` (finish.sh below); only the broken handoffs that those commands
# refuse to produce (7, 9) are written directly.
#   1. promoted     fast episode of --fast-trials 2: the agent runs both trials
#                   (a variant, then a correct faster kernel; each committed,
#                   `aka eval`ed and journalled) and hands off the last one
#                   candidate_ready;
#   2. rejected     the candidate computes the wrong thing (its evaluation fails);
#   3. pivot        a finalized pivot journal and handoff;
#   4. invalid      no handoff at all (after the same-thread resume turns), and
#                   --max-stall 3 stops the campaign after it (--token-budget
#                   is checked after episode 1);
#   5. invalid      a candidate that also edits reference.c;
#   6. blocked      a valid blocked handoff;
#   7. invalid      garbled handoff JSON;
#   8. invalid      the candidate left uncommitted;
#   9. invalid      handoff status contradicts the journal state;
#  10. invalid      the agent dies (SIGKILL) before handing off;
#  11. full         ABBA verification of a near-identical variant (promoted or
#                   rejected as the statistics say; the numbers are recorded);
#  12. interrupted  the supervisor is SIGKILLed mid-session (a confined agent dies
#                   with it; an unconfined one is ended here); the rerun records it;
#  13. recovery     a crash after the version commit: proven, only cleanup runs;
#  14. refused      an active record whose base is not HEAD's parent;
#  15. promoted     a fresh campaign whose first episode is full: ABBA promotion;
#  16. rejected     (twice) the only `aka eval` record is of a shape subset, or
#                   of --tune knobs: it cannot vouch for the committed bytes;
#  17. rejected     a correct candidate far slower than the promoted incumbent (and
#                   case 21: the same with its evaluation record forged to look fast)
#                   (fast verification: a large negative improvement);
#  18. invalid      --agent-timeout 1: every turn outlives it; the timed-out turn
#                   is resumed once on the same thread, the episode's reason
#                   says it timed out, and none of the fake's processes survive
#                   (found by name when confined: their pids are the sandbox's);
#  19. invalid      the fast completion gate: --fast-trials 3, the agent hands
#                   off a valid candidate after one trial; the handoff does not
#                   complete the session, the resume turn adds nothing, and the
#                   record carries the gate's diagnosis;
#  20. late handoff (a campaign of its own with --agent-sandbox none, the only way an
#                   agent outlives its supervisor) the supervisor is SIGKILLed
#                   while the agent works; the agent then finishes a valid
#                   candidate handoff on its own; the rerun assesses and verifies
#                   it (rejected as slower than V0 here, a deterministic verdict)
#                   instead of recording `interrupted`, and the record says
#                   `recovered_terminal_handoff`; campaign.json records `none`;
#  21. rejected     a forged evaluation record (the supervisor's own run decides).
# The agent runs under the agent sandbox (bwrap when this host runs it): it sees
# its worktree (a repository of its own), the episode's view as
# ATREX_AKA_WORKSPACE, and the fake's directory $TMP/fake, nothing else of $TMP.
# Fast episodes run --fast-trials 1 unless the case is about the gate (the
# gate needs that many journal experiments and `aka eval` records of the
# episode for any handoff but blocked, so the pivot and invalid cases also
# evaluate once).
# After each: exactly one new committed memory/v<N>.json with the expected
# status, HEAD's kernel changed only on promotion, no worktree and no
# active_episode.json left, state.json counters agree with the records.
# The operator is vector_add with a deliberately slow reference (the V0 kernel),
# so that "faster" is a large, deterministic margin on any CPU.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-episodes.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
# shellcheck source=tests/lib/campaign_fixture.sh
. "$SRC/tests/lib/campaign_fixture.sh"
# The fake's scenario, log, counter and helper scripts: the agent sandbox shows it this
# directory (writable) and nothing else of $TMP, which holds the workspace and operator.
FK=$TMP/fake
agent_sandbox_setup "$FK"

# The operator: vector_add whose reference adds each element through a volatile
# pointer several times over (correct, but far slower than the seed kernel).
OP=$TMP/op
cp -r "$SRC/examples/ops/vector_add" "$OP"
python3 - "$OP/reference.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for (int64_t i = 0; i < n; i++)\n        z[i] = x[i] + y[i];\n"
assert old in s
s = s.replace(old, "    volatile float *vz = z; /* slow on purpose: no vectorization */\n"
                   "    for (int rep = 0; rep < 6; rep++)\n"
                   "        for (int64_t i = 0; i < n; i++)\n"
                   "            vz[i] = x[i] + y[i];\n")
open(p, "w").write(s)
PY
FAST_KERNEL=$(cat "$OP/seeds/C/kernel.c")
WRONG_KERNEL=${FAST_KERNEL//x\[i + u\] + y\[i + u\]/x[i + u] - y[i + u]}
[ "$WRONG_KERNEL" != "$FAST_KERNEL" ] || fail "could not derive the wrong kernel"

# finish.sh STATE: how an agent ends its part of an episode — one experiment,
# the journal finalized in STATE, the handoff — through the agent-facing
# commands (`aka` is first on the PATH the supervisor gives the agent) and
# nothing but the environment the supervisor sets: it runs from / so that the
# commands find the worktree through ATREX_AKA_WORKTREE alone. Any refusal
# exits nonzero and leaves no handoff, which the episode's record would show.
cat >"$FK/finish.sh" <<'SH'
#!/bin/bash
set -euo pipefail
state=$1
: "${ATREX_AKA_WORKSPACE:?}" "${ATREX_AKA_WORKTREE:?}" "${ATREX_AKA_EPISODE:?}" "${ATREX_AKA_HOME:?}"
[ -d "$ATREX_AKA_HOME/runtime/prompts" ] || { echo "finish: bad ATREX_AKA_HOME" >&2; exit 3; }
# The worktree is a repository of its own (never a Git worktree of the canonical one), and
# the agent's aka commands read the episode's view, not the canonical workspace.
[ "$(git -C "$ATREX_AKA_WORKTREE" rev-parse --absolute-git-dir)" = "$ATREX_AKA_WORKTREE/.git" ] ||
  { echo "finish: the worktree shares another repository" >&2; exit 3; }
[ "$ATREX_AKA_WORKSPACE" = "$ATREX_AKA_WORKTREE.view" ] && [ -f "$ATREX_AKA_WORKSPACE/.aka/campaign.json" ] ||
  { echo "finish: ATREX_AKA_WORKSPACE is not the episode's view" >&2; exit 3; }
cd /
commit=()
if [ "$state" = candidate_ready ]; then
  commit=(--candidate-commit "$(git -C "$ATREX_AKA_WORKTREE" rev-parse HEAD)")
fi
aka journal append --experiment-json "{\"name\": \"last trial\", \"episode\": $ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"keep_as_best\"}"
aka journal finalize --state "$state" "${commit[@]}" \
  --outcome-json "{\"summary\": \"episode $state\", \"next_directions\": []}"
aka handoff --status "$state" "${commit[@]}"
SH

WS=$TMP/kernel_opt_vector_add_c_cpu
USAGE='{"usage":{"input":100,"output":50,"cache_read":0,"cache_write":0}}'
jstr() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
FINISH="bash $FK/finish.sh"
# trial.sh NAME: journal one experiment of a trial that is not the last.
cat >"$FK/trial.sh" <<'SH'
#!/bin/bash
set -euo pipefail
cd /
aka journal append --experiment-json "{\"name\": \"$1\", \"episode\": $ATREX_AKA_EPISODE,
  \"hypothesis\": \"h\", \"change\": \"c\", \"result\": \"r\", \"decision\": \"reject_and_continue\"}"
SH

# episode N SCENARIO_ACTIONS [extra optimize flags]: one campaign run to --max-iters N.
# Every turn plays SCENARIO_ACTIONS, or with RESUME_ACTIONS set, the resume turns play those.
episode() {
  local n=$1 actions=$2; shift 2
  local turns="{\"actions\":[$USAGE,$actions]}"
  [ -z "${RESUME_ACTIONS:-}" ] || turns="$turns,{\"actions\":[$USAGE,$RESUME_ACTIONS]}"
  printf '{"turns":[%s]}\n' "$turns" >"$FK/scenario.json"
  rm -f "$FK/fake-invocations" # the fake's turn counter: this episode starts at turn 0
  before_head=$(git -C "$WS" rev-parse HEAD)
  AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
    "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "${PARENT:-$TMP}" \
    --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters "${MAXI:-$n}" --fast-trials "${FT:-1}" "$@" \
    >"$TMP/out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; fail "episode v$n: aka optimize failed"; }
}

# expect N STATUS KERNEL_CHANGED: the invariants after the episode that made vN.
expect() {
  local n=$1 status=$2 moved=$3
  local changed; changed=$(git -C "$WS" diff --name-only "$before_head" HEAD | sort | tr '\n' ' ')
  local want="memory/v$n.json "
  [ "$moved" = yes ] && want="kernel.c memory/v$n.json "
  [ "$changed" = "$want" ] || fail "v$n: HEAD changed [$changed], want [$want]"
  [ "$(git -C "$WS" rev-list --count "$before_head..HEAD")" = 1 ] || fail "v$n: not one commit"
  [ -z "$(git -C "$WS" status --porcelain)" ] || fail "v$n: workspace dirty"
  [ ! -e "$WS/.aka/active_episode.json" ] || fail "v$n: active_episode.json left"
  [ "$(git -C "$WS" worktree list | wc -l)" = 1 ] || fail "v$n: worktree left"
  git -C "$WS" show "HEAD:memory/v$n.json" | cmp -s - "$WS/memory/v$n.json" ||
    fail "v$n: memory differs from HEAD"
  python3 - "$WS" "$n" "$status" <<'PY' || fail "v$n: record"
import json, sys, os
ws, n, status = sys.argv[1], int(sys.argv[2]), sys.argv[3]
m = json.load(open(f"{ws}/memory/v{n}.json"))
assert m["version"] == f"v{n}" and m["status"] == status, (m["status"], m.get("episode"))
assert m["episode"]["number"] == n and m["long_horizon"]["status"] == status, m["episode"]
st = json.load(open(f"{ws}/.aka/state.json"))
assert st["episodes"] == n and st["tokens"] >= int(os.environ.get("MIN_TOKENS", 150)) * n, st
assert not os.path.exists(f"{ws}/memory/v{n + 1}.json")
if status == "promoted":
    assert m["quality_gate"]["result"] == "PASS" and m["git_commit_hash"], m
    v = m["verification"]
    assert v["passed"] is True and v["improvement_pct"] > 0, v
    assert st["consecutive_without_promotion"] == 0, st
else:
    assert m["quality_gate"]["result"] == "FAIL" and m["git_commit_hash"] is None, m
PY
}

EVAL='{"sh":"aka eval >/dev/null 2>&1 || true"}'
COMMIT='{"commit":"candidate","paths":["kernel.c"]}'

# V0 only, no episode yet.
AKA_FAKE_SCENARIO=/dev/null "$AKA" optimize --op-dir "$OP" --platform cpu --framework C \
  --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters 0 --fast-episodes 5 >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "V0"; }

# 1. promoted (fast, both of its 2 trials run; the last one is handed off)
FT=2 episode 1 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 2/')"'},'"$COMMIT,$EVAL"',{"sh":"bash '"$FK"'/trial.sh \"trial 1\""},{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL")"'},'"$COMMIT,$EVAL"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 1 promoted yes
python3 - "$WS" <<'PY' || fail "v1 verification object"
import json, sys
v = json.load(open(sys.argv[1] + "/memory/v1.json"))["verification"]
assert v["method"] == "single_evaluator" and v["abba_pairs"] == 0, v
for k in ("improvement_pct", "ci_low_pct", "ci_high_pct", "dispersion_pct"):
    assert k in v, k
PY
[ -f "$WS/.aka/episodes/e0001/BRIEF.md" ] || fail "brief not kept"
# The journal and handoff came from the agent-facing commands: the command
# stamped the experiment, and the receipts are in the agent's tool output.
python3 - "$WS/.aka/episodes/e0001" <<'PY' || fail "v1: journal/handoff not from the aka commands"
import json, sys
d = sys.argv[1]
j, h = json.load(open(d + "/runtime/journal.json")), json.load(open(d + "/runtime/handoff.json"))
e = j["experiments"]
assert [x["name"] for x in e] == ["trial 1", "last trial"], e
assert all(x["episode"] == 1 and x["timestamp"] for x in e), e
assert j["state"] == h["status"] == "candidate_ready" and j["candidate_commit"] == h["candidate_commit"]
out = open(d + "/agent/invocation-1/stdout.jsonl").read()
for receipt in ("journal: experiment 2 appended", "journal: finalized as candidate_ready",
                "handoff: candidate_ready " + h["candidate_commit"] + " written"):
    assert receipt in out, receipt
PY
"$AKA" status "$WS" | grep -E '^v1 +promoted +fast ' >/dev/null || fail "aka status: $("$AKA" status "$WS")"
grep -q '"ATREX_AKA_WORKSPACE": "'"$TMP"'/.aka-worktrees/kernel_opt_vector_add_c_cpu/e0001-[0-9a-f]*.view"' "$FK/fake.log" ||
  fail "agent env: $(tail -1 "$FK/fake.log")"
grep -q '"ATREX_AKA_AGENT_SANDBOX": "'"$ASB"'"' "$FK/fake.log" || fail "agent env: no ATREX_AKA_AGENT_SANDBOX"
git -C "$WS" cat-file -e "refs/aka/candidates/e0001^{commit}" || fail "v1: the candidate was not fetched by hash"
[ "$(git -C "$WS" for-each-ref refs/heads | wc -l)" = 1 ] || fail "v1: an episode branch reached the workspace"

# token budget: 150 tokens used >= 100: stop before any episode, with the reason
before=$(git -C "$WS" rev-parse HEAD)
"$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" \
  --max-iters 9 --token-budget 100 >"$TMP/out" 2>"$TMP/err" || fail "token budget run"
grep -q "budget: token-budget (150 >= 100 tokens)" "$TMP/out" || fail "token budget: $(cat "$TMP/out")"
[ "$(git -C "$WS" rev-parse HEAD)" = "$before" ] || fail "token budget: HEAD moved"

# 2. rejected: wrong results
episode 2 '{"write":"kernel.c","content":'"$(jstr "$WRONG_KERNEL")"'},'"$EVAL,$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 2 rejected no
grep -q "no complete passing" "$WS/memory/v2.json" || fail "v2 reason"

# 3. pivot, its agent's `aka eval` and `aka profile` served by the supervisor (--agent-eval
# broker: the supervisor's own job on this host, the agent sandbox holding no device). A cpu
# campaign has no profiler: the supervisor's answer says so, and its progress line shows the
# profile reached it (a profile the agent ran itself would leave no such line).
PROFILE='{"sh":"aka profile --shape-id n4k >/dev/null 2>&1 || true"}'
episode 3 "$EVAL,$PROFILE"',{"sh":"'"$FINISH"' pivot"}' --fast-episodes 5 --agent-eval broker
expect 3 pivot no
python3 - "$WS" "$ASB" <<'PY' || fail "v3: where the agent's evaluations ran"
import json, sys
ws, confined = sys.argv[1], sys.argv[2] == "bwrap"
def evals(n):
    return [json.loads(l) for l in open(f"{ws}/.aka/episodes/e{n:04d}/runtime/evaluations.jsonl")]
def where(n):
    return json.load(open(f"{ws}/memory/v{n}.json"))["episode"]["agent_eval"]
one, three = evals(1), evals(3)
assert one and not any(r["brokered"] for r in one), one
assert where(1) == "sandbox", where(1)
# Unconfined (no bwrap here), the agent's `aka eval` has no broker to ask and runs its own job.
assert three and all(r["brokered"] is confined and r["transport"] == "local" for r in three), three
assert where(3) == ("broker" if confined else "sandbox"), where(3)
PY
[ "$ASB" != bwrap ] || grep -Eq "agent evaluation [0-9a-f]{16}: (PASS|FAIL).*\(local, " "$TMP/err" ||
  fail "v3: no progress line for a brokered evaluation: $(tail -5 "$TMP/err")"
[ "$ASB" != bwrap ] || grep -Eq "agent profile [0-9a-f]{16}: error: --platform: cpu has no kernel profiler" "$TMP/err" ||
  fail "v3: the agent's profile did not reach the supervisor: $(tail -5 "$TMP/err")"
# The record says why, in the agent's words: the finalized journal's summary.
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["episode"]["violation"] == "episode pivot" and m["quality_gate"]["failure_reason"] == "episode pivot", m["episode"]' \
  "$WS/memory/v3.json" || fail "v3: the pivot's summary is not in the record"

# 4. invalid handoff: none written (the resume turns do not write one either)
MAXI=9 episode 4 '{"text":"thinking"}' --fast-episodes 5 --max-stall 3
expect 4 invalid_handoff no
grep -q "stall: 3 episodes without promotion" "$TMP/out" || fail "max-stall: $(cat "$TMP/out")"

# 5. invalid handoff: the candidate also edits reference.c
episode 5 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 8/')"'},{"sh":"echo >> reference.c"},{"commit":"candidate","paths":["kernel.c","reference.c"]},'"$EVAL"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 5 invalid_handoff no
grep -q "protected path reference.c" "$WS/memory/v5.json" || fail "v5 reason"

# 6. blocked: a valid blocked handoff
episode 6 '{"sh":"'"$FINISH"' blocked"}' --fast-episodes 20
expect 6 blocked no

# 7. invalid handoff: garbled JSON. `aka handoff` never writes such a file, so
# the fake overwrites the valid handoff directly: that is the case under test.
episode 7 '{"sh":"'"$FINISH"' pivot; printf %s \"{\\\"status\\\": \" > .aka/handoff.json"}' --fast-episodes 20 --handoff-resumes 0
expect 7 invalid_handoff no
grep -q "invalid JSON" "$WS/memory/v7.json" || fail "v7 reason: $(grep -o '"violation[^}]*' "$WS/memory/v7.json")"

# 8. invalid handoff: the candidate is left uncommitted in the worktree
episode 8 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 2/')"'},'"$EVAL"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 20
expect 8 invalid_handoff no
grep -q "uncommitted changes" "$WS/memory/v8.json" || fail "v8 reason"

# 9. invalid handoff: the handoff contradicts the journal (pivot journal, blocked
# handoff). `aka handoff --status blocked` refuses a pivot journal, so the fake
# writes handoff.json directly: that is the case under test.
episode 9 '{"sh":"'"$FINISH"' pivot; echo {\\\"status\\\":\\\"blocked\\\"} > .aka/handoff.json"}' --fast-episodes 20 --handoff-resumes 0
expect 9 invalid_handoff no
grep -q "expected blocked" "$WS/memory/v9.json" || fail "v9 reason"

# 10. invalid handoff: the agent crashes (SIGKILL) before handing off
episode 10 '{"signal":"KILL"}' --fast-episodes 20
expect 10 invalid_handoff no
grep -q "agent session ended badly (exit=137" "$WS/memory/v10.json" || fail "v10 reason"

python3 - "$WS" <<'PY' || fail "counters"
import json, sys
st = json.load(open(sys.argv[1] + "/.aka/state.json"))
want = dict(episodes=10, accepted=1, rejected=1, pivoted=1, blocked=1, protocol_failures=6,
            consecutive_without_promotion=9)
assert all(st[k] == v for k, v in want.items()), st
PY

# 11. full episode: a still-correct variant of the incumbent (UNROLL 8), verified by
# same-allocation ABBA. Whether it wins is for the statistics to say; either way
# the record carries the ABBA numbers and the invariants hold.
episode 11 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 8/')"'},'"$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 10 --verify-repeats 3 --verify-run-timeout 30
s11=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$WS/memory/v11.json")
expect 11 "$s11" "$([ "$s11" = promoted ] && echo yes || echo no)"
python3 - "$WS" <<'PY' || fail "v11 ABBA record"
import json, sys
m = json.load(open(sys.argv[1] + "/memory/v11.json"))
v = m["verification"]
assert m["status"] in ("promoted", "rejected"), m["status"]
assert v["method"] == "same_allocation_abba" and v["abba_pairs"] == 3, v
assert len(v["runs"]) == 12 and all(r["all_pass"] for r in v["runs"]), v["runs"]
assert [r["revision"][0] for r in v["runs"][:4]] == list("icci"), v["runs"]
for k in ("improvement_pct", "ci_low_pct", "ci_high_pct", "dispersion_pct"):
    assert isinstance(v[k], (int, float)), (k, v)
PY
# 12. interrupted: the supervisor is killed (SIGKILL) while the agent works; the
# rerun records the episode as interrupted before anything else. The killed run's agent
# evaluated through the broker; the rerun, without --agent-eval, records what ran.
printf '{"turns":[{"actions":[%s,{"sh":"echo $PPID > %s/agent.pid; sleep 30.12"}]}]}\n' "$USAGE" "$FK" \
  >"$FK/scenario.json"
rm -f "$FK/agent.pid"
before_head=$(git -C "$WS" rev-parse HEAD)
AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
  "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" \
  --max-iters 12 --fast-episodes 20 --agent-eval broker >"$TMP/out" 2>"$TMP/err" &
sup=$!
for _ in $(seq 300); do [ -s "$FK/agent.pid" ] && break; sleep 0.1; done
[ -s "$FK/agent.pid" ] || fail "v12: the agent never started"
kill -9 "$sup"; wait "$sup" 2>/dev/null || true
if [ "$ASB" = none ]; then # an unconfined agent outlives its supervisor: end it here
  agent_pgid=$(ps -o pgid= "$(cat "$FK/agent.pid")" | tr -d ' ')
  [ -n "$agent_pgid" ] && kill -- "-$agent_pgid" 2>/dev/null || true
else # a confined one dies with it (--die-with-parent, its own PID namespace)
  for _ in $(seq 50); do pgrep -f "sleep 30[.]12" >/dev/null || break; sleep 0.1; done
  ! pgrep -f "sleep 30[.]12" >/dev/null || fail "v12: the confined agent outlived its supervisor"
fi
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert a["episode"] == 12 and a["phase"] == "exploring" and a["fast_trials"] == 5 and a["agent_eval"] == ("broker" if sys.argv[2] == "bwrap" else "sandbox"), a' \
  "$WS/.aka/active_episode.json" "$ASB" || fail "v12: active record"
episode 12 '{"text":"never runs"}' --fast-episodes 20
expect 12 interrupted no
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["episode"]; assert e["agent_eval"] == ("broker" if sys.argv[2] == "bwrap" else "sandbox"), e' \
  "$WS/memory/v12.json" "$ASB" || fail "v12: the record does not say where the agent's evaluations ran"
grep -q "recovering after an interrupted supervisor" "$TMP/err" || fail "v12: no recovery line"

# 13. a crash after the version commit: the commit is proven and only the cleanup runs
# (the active record and the state are put back as they were right after the commit: the
# record announces the commit it was about to make, as the supervisor writes it ahead).
python3 - "$WS" "$(git -C "$WS" rev-parse HEAD~1)" "$(git -C "$WS" rev-parse 'HEAD^{tree}')" \
  "$(git -C "$WS" log -1 --format=%s HEAD)" <<'PY'
import json, sys
ws, base, tree, subject = sys.argv[1:5]
st = json.load(open(ws + "/.aka/state.json"))
st["episodes"] = 11; st["interrupted"] -= 1; st["consecutive_without_promotion"] -= 1
json.dump(st, open(ws + "/.aka/state.json", "w"))
json.dump({"schema": "aka.active_episode.v1", "episode": 12, "memory_version": 12, "base_commit": base,
           "episode_branch": "aka/e0012-00000000", "worktree": ws + "-gone", "mode": "fast",
           "phase": "recording", "agent_pgid": None,
           "version_commit": {"parent": base, "tree": tree, "subject": subject}},
          open(ws + "/.aka/active_episode.json", "w"))
PY
head=$(git -C "$WS" rev-parse HEAD)
episode 12 '{"text":"never runs"}' --fast-episodes 20
[ "$(git -C "$WS" rev-parse HEAD)" = "$head" ] || fail "v12 proof: HEAD moved"
[ ! -e "$WS/.aka/active_episode.json" ] || fail "v12 proof: active record left"
python3 - "$WS" <<'PY' || fail "v12 proof: counters"
import json, sys
st = json.load(open(sys.argv[1] + "/.aka/state.json"))
assert st["episodes"] == 12 and st["interrupted"] == 1 and st["consecutive_without_promotion"] == 11, st
PY

# 14. an active record whose base is not HEAD's parent: refused, nothing changed
head=$(git -C "$WS" rev-parse HEAD)
python3 - "$WS" "$(git -C "$WS" rev-parse HEAD~3)" <<'PY'
import json, sys
ws, base = sys.argv[1], sys.argv[2]
json.dump({"episode": 13, "memory_version": 13, "base_commit": base, "episode_branch": "aka/x",
           "worktree": ws + "-gone", "mode": "fast", "phase": "recording"},
          open(ws + "/.aka/active_episode.json", "w"))
PY
if AKA_FAKE_SCENARIO=/dev/null "$AKA" optimize --op-dir "$OP" --platform cpu --framework C \
  --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters 13 >"$TMP/out" 2>"$TMP/err"; then
  fail "v13: an unproven HEAD advance was accepted"
fi
grep -q "refusing to resume" "$TMP/err" || fail "v13: $(cat "$TMP/err")"
[ "$(git -C "$WS" rev-parse HEAD)" = "$head" ] || fail "v13: HEAD moved"
rm "$WS/.aka/active_episode.json"

# 15. a fresh campaign whose first episode is full: the seed kernel against the slow
# V0 is promoted on ABBA evidence (dispersion limit relaxed: a shared CPU is noisy).
WS=$TMP/full/kernel_opt_vector_add_c_cpu
mkdir -p "$TMP/full"
AKA_FAKE_SCENARIO=/dev/null "$AKA" optimize --op-dir "$OP" --platform cpu --framework C \
  --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP/full" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters 0 >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "V0 (full)"; }
PARENT=$TMP/full
episode 1 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL")"'},'"$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' \
  --fast-episodes 0 --verify-repeats 3 --verify-run-timeout 30 --max-dispersion-pct 90
expect 1 promoted yes
python3 - "$WS" <<'PY' || fail "full promotion record"
import json, sys
v = json.load(open(sys.argv[1] + "/memory/v1.json"))["verification"]
assert v["method"] == "same_allocation_abba" and v["ci_low_pct"] > 0, v
PY
# 16. fast verification only trusts a record of the committed bytes on every
# shape: an `aka eval` of a shape subset, or with --tune knobs (other code from
# the same file), cannot vouch for the candidate.
SUBSET='{"sh":"aka eval --shape-id n4k >/dev/null 2>&1 || true"}'
episode 2 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 2/')"'},'"$SUBSET,$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 2 rejected no
grep -q "no complete passing" "$WS/memory/v2.json" || fail "v2 (shape subset) reason"
KNOBS='{"sh":"aka eval --tune UNROLL=8 >/dev/null 2>&1 || true"}'
episode 3 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 2/')"'},'"$KNOBS,$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 3 rejected no
grep -q "no complete passing" "$WS/memory/v3.json" || fail "v3 (tuned record) reason"

# 17. rejected as slower: a correct candidate that stores every element a dozen
# times through a volatile pointer (twice the slow reference's work) against
# the promoted seed kernel; its own passing `aka eval` record loses by far more
# than any noise on a loaded CPU.
SLOW_KERNEL=${FAST_KERNEL//z\[i + u\] = /for (int rep = 0; rep < 12; rep++) ((volatile float *)z)[i + u] = }
[ "$SLOW_KERNEL" != "$FAST_KERNEL" ] || fail "could not derive the slow kernel"
episode 4 '{"write":"kernel.c","content":'"$(jstr "$SLOW_KERNEL")"'},'"$EVAL,$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 5
expect 4 rejected no
python3 - "$WS" <<'PY' || fail "v4 (slower) record"
import json, re, sys
m = json.load(open(sys.argv[1] + "/memory/v4.json"))
v, why = m["verification"], json.dumps(m)
assert v["incumbent_version"] == 1 and v["improvement_pct"] < -40, v
assert re.search(r"fast verification: -[0-9.]+% \([a-z_]+\) is not above", why), why
PY

# 18. agent timeout: every turn outlives --agent-timeout 1 (a background sleep
# in the fake's process group included); the timed-out turn is resumed once on
# the same thread, that turn times out too, and the episode is invalid with a
# reason that says so. Nothing of the fake survives.
printf '{"turns":[{"actions":[%s,{"sh":"sleep 60.18 & echo $PPID $$ $! $(ps -o pgid= -p $$) >> %s/timeout.pids; wait"}]}]}\n' \
  "$USAGE" "$FK" >"$FK/scenario.json"
rm -f "$FK/timeout.pids"
before_head=$(git -C "$WS" rev-parse HEAD)
log_lines=$(wc -l <"$FK/fake.log")
SECONDS=0
AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
  "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$PARENT" --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" \
  --max-iters 5 --fast-episodes 5 --agent-timeout 1 --handoff-resumes 1 >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "v5 (timeout): aka optimize failed"; }
[ "$SECONDS" -lt 40 ] || fail "v5 (timeout): took ${SECONDS}s; the 1 s limit was not enforced"
expect 5 invalid_handoff no
grep -q "exit=124, timed out): the turn hit its time limit" "$WS/memory/v5.json" || fail "v5 reason: $(grep -o '"violation[^}]*' "$WS/memory/v5.json")"
[ "$(wc -l <"$FK/timeout.pids")" = 2 ] || fail "v5: $(wc -l <"$FK/timeout.pids") turns, want 2"
tail -n +"$((log_lines + 1))" "$FK/fake.log" | python3 -c '
import json, sys
modes = [json.loads(l)["mode"] for l in sys.stdin]
assert modes == ["--session-id", "--resume"], modes' || fail "v5: not one fresh turn and one resume"
# live PGID: the group's members that are not zombies (a zombie is dead, and
# whether someone reaps it at once depends on the container's init).
live() { ps -e -o pgid=,pid=,stat= | awk -v g="$1" '$1 == g && $3 !~ /^Z/ {print $2}'; }
! pgrep -f "sleep 60[.]18" >/dev/null || fail "v5: the fake's background sleep survived the timeout"
# Unconfined, the recorded ids are host pids: check each group. Confined, they are ids in
# the agent sandbox's own PID namespace, which died with it (checked by name above).
[ "$ASB" = none ] || : >"$FK/timeout.pids.host"
[ "$ASB" != none ] || cp "$FK/timeout.pids" "$FK/timeout.pids.host"
while read -r fake sh bg pgid; do
  [ "$pgid" = "$fake" ] || fail "v5: the fake $fake is not its group leader ($pgid)"
  [ -z "$(live "$pgid")" ] || fail "v5: group $pgid survived the timeout: $(live "$pgid")"
  for pid in "$sh" "$bg"; do # in the group when recorded; they must not have left it alive
    ! ps -o stat= -p "$pid" | grep -qv '^Z' || fail "v5: fake process $pid survived the timeout"
  done
done <"$FK/timeout.pids.host"

# 19. the fast completion gate: with --fast-trials 3, a valid candidate handed off after
# one trial does not complete the session; the resume turn adds nothing, so the episode is
# invalid with the gate's diagnosis (and HEAD stays, though the candidate was faster).
log_lines=$(wc -l <"$FK/fake.log")
RESUME_ACTIONS='{"text":"no more trials"}' FT=3 episode 6 '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL" | sed 's/UNROLL 4/UNROLL 2/')"'},'"$COMMIT,$EVAL"',{"sh":"'"$FINISH"' candidate_ready"}' \
  --fast-episodes 10 --handoff-resumes 1
expect 6 invalid_handoff no
grep -q "no valid handoff after 2 invocation(s): fast episode needs 3 trials: journal has 1 experiments, evaluations.jsonl has 1 records of this episode" \
  "$WS/memory/v6.json" || fail "v6 (gate) reason: $(grep -o '"violation[^}]*' "$WS/memory/v6.json")"
tail -n +"$((log_lines + 1))" "$FK/fake.log" | python3 -c '
import json, sys
modes = [json.loads(l)["mode"] for l in sys.stdin]
assert modes == ["--session-id", "--resume"], modes' || fail "v6: not one fresh turn and one resume"

# 20. a late handoff, which only an unconfined agent can make (a confined one dies with its
# supervisor: case 12), so in a campaign of its own pinned to --agent-sandbox none, whose
# incumbent is V0. The agent's one tool command waits for late.go, so the supervisor is
# surely dead (SIGKILL) before the command commits the slow kernel, evaluates it and hands
# it off: a tool command that was running when its supervisor died goes on to the end (the
# CLI itself would die at its next event on stdout, whose reader is gone). The rerun ends no
# agent (it is done), finds the valid handoff and takes it through assessment and
# verification.
SAVED_FLAGS=("${AGENT_FLAGS[@]}") SAVED_PARENT=$PARENT SAVED_WS=$WS
AGENT_FLAGS=(--agent-sandbox none --agent-writable-path "$FK") PARENT=$TMP/late
WS=$PARENT/kernel_opt_vector_add_c_cpu
mkdir -p "$PARENT"
AKA_FAKE_SCENARIO=/dev/null "$AKA" optimize --op-dir "$OP" --platform cpu --framework C \
  --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$PARENT" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters 0 >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "V0 (late)"; }
grep -q "warning: --agent-sandbox none is unsafe" "$TMP/err" || fail "none: no warning"
# The incumbent here is V0 (the slow reference: six volatile stores per element), so the
# candidate must be far slower than that for "< -20%" to hold on a loaded machine: 48.
printf '%s' "${SLOW_KERNEL//rep < 12/rep < 48}" >"$FK/slow.c"
grep -q "rep < 48" "$FK/slow.c" || fail "could not derive the late handoff's slow kernel"
rm -f "$FK"/late.* "$FK/fake-invocations"
LATE="echo \$PPID > $FK/late.pid; while [ ! -e $FK/late.go ]; do sleep 0.1; done"
LATE="$LATE; cp $FK/slow.c kernel.c && git add kernel.c"
LATE="$LATE && git -c user.name=fake -c user.email=fake@localhost commit -qm candidate"
LATE="$LATE && { aka eval >/dev/null 2>&1 || true; } && $FINISH candidate_ready; touch $FK/late.done"
printf '{"turns":[{"actions":[%s,{"sh":%s}]}]}\n' "$USAGE" "$(jstr "$LATE")" >"$FK/scenario.json"
before_head=$(git -C "$WS" rev-parse HEAD)
AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG="$FK/fake.log" AKA_FAKE_STATE="$FK" \
  "$AKA" optimize --op-dir "$OP" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$PARENT" --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" \
  --max-iters 1 --fast-episodes 10 --fast-trials 1 >"$TMP/out" 2>"$TMP/err" &
sup=$!
for _ in $(seq 300); do [ -s "$FK/late.pid" ] && break; sleep 0.1; done
[ -s "$FK/late.pid" ] || fail "late: the agent never started"
kill -9 "$sup"; wait "$sup" 2>/dev/null || true
touch "$FK/late.go"
for _ in $(seq 600); do [ -e "$FK/late.done" ] && break; sleep 0.1; done
[ -e "$FK/late.done" ] || fail "late: the agent did not finish after its supervisor died"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); assert a["episode"] == 1 and a["phase"] == "exploring" and a["fast_trials"] == 1, a' \
  "$WS/.aka/active_episode.json" || fail "late: active record"
# --fast-trials 5 now: the episode keeps the 1 it started with (its handoff has one trial).
FT=5 episode 1 '{"text":"never runs"}' --fast-episodes 10
MIN_TOKENS=0 expect 1 rejected no # the session's usage died with its supervisor
grep -q "recovering after an interrupted supervisor" "$TMP/err" || fail "late: no recovery line"
python3 - "$WS" <<'PY' || fail "late handoff record"
import json, sys
m = json.load(open(sys.argv[1] + "/memory/v1.json"))
e, v = m["episode"], m["verification"]
assert e["recovered_terminal_handoff"] is True and e["candidate_commit"], e
assert e["agent_sandbox"] == "none", e
assert v["method"] == "single_evaluator" and v["improvement_pct"] < -20, v
PY
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["agent_sandbox"] == "none"' \
  "$WS/.aka/campaign.json" || fail "late: campaign.json does not record --agent-sandbox none"
AGENT_FLAGS=("${SAVED_FLAGS[@]}") PARENT=$SAVED_PARENT WS=$SAVED_WS
# 21. a forged evaluation record: the agent evaluates the slow kernel, then rewrites its
# record to claim a 100x faster run. The record still hash-matches the committed bytes, so it
# passes as evidence, but the supervisor's own evaluation decides: rejected as slower.
cat >"$FK/forge.py" <<'PY'
import json, os
p = os.path.join(os.environ["ATREX_AKA_WORKTREE"], ".aka/evaluations.jsonl")
lines = open(p).read().splitlines()
rec = json.loads(lines[-1])
r = rec["result"]
for k in ("latency_us", "latency_us_geomean", "latency_us_arith_mean"):
    if isinstance(r.get(k), (int, float)):
        r[k] /= 100
r["latency_us_by_shape"] = {s: v / 100 for s, v in r["latency_us_by_shape"].items()}
if isinstance(r.get("performance_score"), (int, float)):
    r["performance_score"] *= 100
lines[-1] = json.dumps(rec)
open(p, "w").write("\n".join(lines) + "\n")
PY
episode 7 '{"write":"kernel.c","content":'"$(jstr "$SLOW_KERNEL")"'},'"$EVAL"',{"sh":"python3 '"$FK"'/forge.py"},'"$COMMIT"',{"sh":"'"$FINISH"' candidate_ready"}' --fast-episodes 10
expect 7 rejected no
python3 - "$WS" <<'PY' || fail "v7 (forged record) was not decided by the supervisor's own run"
import json, sys
v = json.load(open(sys.argv[1] + "/memory/v7.json"))["verification"]
assert v["supervisor_eval_id"] and v["improvement_pct"] < -40, v
PY
echo "campaign_episodes: all episode paths recorded"
