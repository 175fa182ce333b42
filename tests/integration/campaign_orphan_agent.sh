#!/bin/bash
# campaign_orphan_agent.sh — DESIGN §7: a supervisor killed with SIGKILL leaves
# its agent alive (the agent runs in its own session); the active record names
# the agent's process group with its leader's start time while the agent runs,
# and the resume ends that group, identity checked, before it reads or archives
# the worktree.
#   1. the fake Claude agent sleeps, then would write a marker outside the
#      worktree and edit kernel.c; the supervisor is SIGKILLed mid-session;
#      the group is in .aka/active_episode.json and still alive;
#   2. the rerun ends it: the process is gone, v1 is `interrupted`, and
#      nothing the agent would have written afterwards appears;
#   3. an active record naming a live process whose start time differs (a
#      reused pid) leaves that process alone.
# Only an unconfined agent can outlive its supervisor (a confined one dies with it:
# tests/integration/agent_sandbox.sh), so this campaign runs --agent-sandbox none.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-orphan.XXXXXX")
SLEEPER=
cleanup() {
  [ -z "$SLEEPER" ] || kill "$SLEEPER" 2>/dev/null || true
  [ ! -s "$TMP/agent.pid" ] || kill -9 "$(cat "$TMP/agent.pid")" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA" sandbox run -- true >/dev/null 2>&1 || ISO=none
CHECK="python3 $SRC/tests/crash/check_invariants.py"
cp -r "$SRC/examples/ops/vector_add" "$TMP/op"
WS=$TMP/kernel_opt_vector_add_c_cpu
# exec: in the background the subshell becomes aka itself, so that $! is the supervisor.
optimize() {
  exec "$AKA" optimize --op-dir "$TMP/op" --platform cpu --framework C --agent-cli claude \
    --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$TMP" \
    --sandbox-isolation "$ISO" --agent-sandbox none --fast-episodes 5 --handoff-resumes 0 "$@"
}
# start ticks of a pid (/proc/<pid>/stat field 22), "" when gone or a zombie
ticks() { python3 - "$1" <<'PY'
import sys
try:
    s = open("/proc/%s/stat" % sys.argv[1]).read()
except OSError:
    sys.exit(0)
f = s[s.rindex(")") + 2:].split()
print("" if f[0] in "ZX" else f[19])
PY
}
# live (non-zombie) processes whose group or session is $1
members() { python3 - "$1" <<'PY'
import os, sys
for p in filter(str.isdigit, os.listdir("/proc")):
    try:
        s = open("/proc/%s/stat" % p).read()
    except OSError:
        continue
    f = s[s.rindex(")") + 2:].split()
    if f[0] not in "ZX" and sys.argv[1] in (f[2], f[3]):
        print(p)
PY
}
export AKA_FAKE_LOG="$TMP/fake.log" AKA_FAKE_STATE="$TMP"

(AKA_FAKE_SCENARIO=/dev/null optimize --max-iters 0) >"$TMP/out" 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "V0"; }

# 1. The agent: note its pid, sleep, then write outside and inside the worktree.
AGENT_SLEEP=4
printf '{"turns":[{"actions":[{"usage":{"input":10,"output":5}},{"sh":"echo $$ > %s/agent.pid; sleep %s; echo late > %s/late.marker; echo /*late*/ >> kernel.c"}]}]}\n' \
  "$TMP" "$AGENT_SLEEP" "$TMP" >"$TMP/scenario.json"
export AKA_FAKE_SCENARIO="$TMP/scenario.json"
(optimize --max-iters 1) >"$TMP/out" 2>"$TMP/err" &
sup=$!
for _ in $(seq 300); do [ -s "$TMP/agent.pid" ] && break; sleep 0.05; done
[ -s "$TMP/agent.pid" ] || fail "the agent never started"
started=$(date +%s.%N)
agent=$(cat "$TMP/agent.pid")
pgid=$(ps -o pgid= "$agent" | tr -d ' ')
# The group is in the write-ahead record while the agent runs, with its leader's start time.
python3 - "$WS/.aka/active_episode.json" "$pgid" "$(ticks "$pgid")" <<'PY' || fail "active record"
import json, sys
a = json.load(open(sys.argv[1]))
pgid, ticks = int(sys.argv[2]), int(sys.argv[3])
assert a["phase"] == "exploring", a
assert {"pgid": pgid, "start_ticks": ticks} in a["agent_groups"], (a["agent_groups"], pgid, ticks)
assert a["agent_pgid"] == pgid, a
PY
kill -9 "$sup"
{ wait "$sup" || true; } 2>/dev/null
kill -0 "$agent" 2>/dev/null || fail "the agent died with the supervisor (the test proves nothing)"

# 2. The rerun ends the group first, then records the episode as interrupted.
(optimize --max-iters 1) >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "resume"; }
grep -q "ended agent process group $pgid" "$TMP/err" || fail "no 'ended' line: $(cat "$TMP/err")"
[ -z "$(ticks "$agent")" ] || fail "the agent ($agent) is still running after the resume"
[ -z "$(members "$pgid")" ] || fail "group $pgid has live members: $(members "$pgid")"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["status"] == "interrupted", m["status"]' \
  "$WS/memory/v1.json" || fail "v1 is not interrupted"
# Wait past the moment the agent would have written, then look for its writes.
python3 -c 'import sys,time; time.sleep(max(0, float(sys.argv[1]) + float(sys.argv[2]) + 0.5 - time.time()))' \
  "$started" "$AGENT_SLEEP"
[ ! -e "$TMP/late.marker" ] || fail "the agent wrote after the resume"
if grep -rqs "late" "$WS/.aka/episodes/e0001/runtime" "$WS/kernel.c"; then
  fail "the agent's late edit reached the workspace"
fi
$CHECK "$WS" || fail "invariants after the resume"

# 3. A recorded group whose pid now belongs to another process (other start time): untouched.
setsid sleep 60 &
SLEEPER=$!
for _ in $(seq 100); do [ -n "$(ticks "$SLEEPER")" ] && break; sleep 0.02; done
python3 - "$WS" "$(git -C "$WS" rev-parse HEAD)" "$SLEEPER" "$(ticks "$SLEEPER")" <<'PY'
import json, sys
ws, base, pid, ticks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
json.dump({"schema": "aka.active_episode.v1", "episode": 2, "memory_version": 2,
           "base_commit": base, "episode_branch": "aka/e0002-00000000",
           "worktree": ws + "-gone", "mode": "fast", "phase": "exploring", "agent_pgid": pid,
           "agent_groups": [{"pgid": pid, "start_ticks": ticks - 1}]},
          open(ws + "/.aka/active_episode.json", "w"))
PY
(optimize --max-iters 2) >"$TMP/out" 2>"$TMP/err" || { cat "$TMP/err" >&2; fail "resume (reused pid)"; }
[ -n "$(ticks "$SLEEPER")" ] || fail "a process with another start time was killed"
! grep -q "ended agent process group" "$TMP/err" || fail "claims to have ended a group"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["status"] == "interrupted", m["status"]' \
  "$WS/memory/v2.json" || fail "v2 is not interrupted"
$CHECK "$WS" || fail "invariants after the reused-pid resume"
echo "campaign_orphan_agent: the orphaned agent was ended by identity, the reused pid spared"
