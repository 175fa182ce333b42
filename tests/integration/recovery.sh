#!/bin/bash
# recovery.sh — environment recovery end to end (DESIGN §7, docs/recovery.md), with the
# built-in agent on vector_add and a --sandbox-health-command that fails until a flag
# file appears:
#   - the campaign stops with exit 75 before V0, writes .aka/environment-failure.json,
#     records nothing, and starts the detached monitor (phase polling);
#   - --no-auto-recovery: 75 and the marker, but no monitor;
#   - stop-recovery.sh ends the monitor and keeps it stopped: with the flag present,
#     nothing restarts within 3 poll intervals;
#   - recover.sh resumes (a second one starts no second monitor); the optimizer
#     restarts once health returns (ready/ack handshake, phase running); a second
#     optimizer meeting the campaign's lock (75, not the machine) starts no recovery;
#   - that optimizer is SIGKILLed after V0 is recorded: the monitor goes back to polling
#     and restarts it again, and the campaign finishes (exit 0, phase completed);
#   - the crash test's invariant checker agrees: no episode lost or duplicated;
#   - an episode the environment stops (a fake Claude whose first turn hands off a wrong
#     kernel just as the machine goes down) is recorded against nobody: exit 75 with the
#     marker naming the episode, no version recorded, and after recovery the same
#     episode number runs again (later turns pivot) and the campaign finishes.
# The jobs run with --sandbox-isolation none: the probe runs as a job, and only without
# isolation does it see the flag file this test creates.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-recovery.XXXXXX")
DIR=''
DIRS=()
cleanup() {
  # Whatever the test left running: the monitors and their optimizers, identity-checked.
  for d in "${DIRS[@]}" "$DIR"; do
    [ -z "$d" ] || [ ! -x "$d/stop-recovery.sh" ] || "$d/stop-recovery.sh" >/dev/null 2>&1 || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  [ -z "$DIR" ] || { echo "--- monitor.log" >&2; cat "$DIR/monitor.log" >&2 || true
    echo "--- restart.log" >&2; tail -20 "$DIR/restart.log" >&2 || true; }
  exit 1
}
. "$SRC/tests/lib/campaign_fixture.sh"
OP=$TMP/op
slow_vector_add "$SRC" "$OP"
FLAG=$TMP/healthy
PARENT=$TMP/p
WS=$PARENT/kernel_opt_vector_add_c_cpu
mkdir -p "$PARENT"
args=(optimize --op-dir "$OP" --platform cpu --framework C --workspace "$PARENT"
  --sandbox-isolation none --verify-repeats 1 --verify-run-timeout 60 --max-dispersion-pct 90
  --agent-sandbox none --agent-cli builtin --max-iters 2 --environment-poll-interval 1
  --sandbox-health-command "test -e $FLAG")

field() { # field KEY: from `aka recovery status --json`
  "$AKA" recovery status "$WS" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...: until the command succeeds
  local until=$(($(date +%s) + $1)) what=$2
  shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$until" ] || fail "timed out waiting for $what"
    sleep 0.2
  done
}
phase_is() { [ "$(field phase)" = "$1" ]; }

# --- 75 before V0, the marker, nothing recorded ------------------------------------------
rc=0
"$AKA" "${args[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 75 ] || { cat "$TMP/err"; fail "exit $rc, expected 75"; }
grep -q "recovery monitor started" "$TMP/err" || fail "no monitor announced: $(cat "$TMP/err")"
python3 - "$WS/.aka/environment-failure.json" <<'PY' || fail "marker"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["schema"] == "aka.environment_failure.v1" and m["reason"] == "health_failed", m
assert m["detected_at"] and m["episode"] is None, m
PY
! ls "$WS"/memory/v*.json >/dev/null 2>&1 || fail "a version was recorded before the machine was healthy"
DIR=$(ls -d "$PARENT"/.aka-environment/*)
DIRS+=("$DIR")
[ "$(stat -c %a "$DIR")" = 700 ] || fail "state directory mode $(stat -c %a "$DIR")"
for f in restart.json state.json stop-recovery.sh recover.sh; do
  [ -e "$DIR/$f" ] || fail "$DIR/$f missing"
done
wait_for 10 "the monitor" bash -c "[ \"\$(\"$AKA\" recovery status \"$WS\" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"monitor_running\"], d[\"last_probe\"][\"at\"] != \"\")')\" = 'True True' ]"
phase_is polling || fail "phase $(field phase), expected polling"
echo "recovery: exit 75, marker, monitor polling"

# --- --no-auto-recovery: 75 and the marker, no monitor -----------------------------------
rc=0
"$AKA" "${args[@]}" --workspace "$TMP/q" --no-auto-recovery >/dev/null 2>"$TMP/err2" || rc=$?
[ "$rc" = 75 ] || fail "--no-auto-recovery: exit $rc"
[ -f "$TMP/q/kernel_opt_vector_add_c_cpu/.aka/environment-failure.json" ] || fail "no marker (q)"
[ ! -e "$TMP/q/.aka-environment" ] || fail "--no-auto-recovery started a monitor"
rc=0
"$AKA" recovery status "$TMP/q/kernel_opt_vector_add_c_cpu" >/dev/null 2>"$TMP/err2" || rc=$?
[ "$rc" = 2 ] && grep -q "no recovery state for this workspace" "$TMP/err2" ||
  fail "status without recovery state: exit $rc: $(cat "$TMP/err2")"

# --- stop-recovery.sh stops everything and keeps it stopped ------------------------------
"$DIR/stop-recovery.sh" >/dev/null || fail "stop-recovery.sh failed"
phase_is stopped || fail "phase $(field phase) after stop"
[ "$(field monitor_running)" = False ] || fail "the monitor survived stop-recovery.sh"
[ "$(field stopped)" = True ] || fail "auto-recovery not disabled"
touch "$FLAG"
sleep 3.5 # three poll intervals with a healthy machine
phase_is stopped || fail "phase $(field phase): something restarted after stop-recovery.sh"
[ "$(field attempts)" = 0 ] && [ ! -e "$DIR/restart.log" ] || fail "an optimizer was restarted"
# A campaign that meets 75 again while stopped starts no monitor either.
rm "$FLAG"
rc=0
"$AKA" "${args[@]}" >/dev/null 2>"$TMP/err3" || rc=$?
[ "$rc" = 75 ] && grep -q "no recovery monitor started" "$TMP/err3" ||
  fail "restarted while stopped: exit $rc: $(tail -5 "$TMP/err3")"
[ "$(field monitor_running)" = False ] || fail "a monitor started while stopped"
touch "$FLAG"
echo "recovery: stop-recovery.sh keeps it stopped"

# --- recover.sh: restart once healthy, then a crash, then completion ----------------------
"$DIR/recover.sh" >/dev/null || fail "recover.sh failed"
"$DIR/recover.sh" >/dev/null || fail "recover.sh (twice) failed"
wait_for 20 "the restarted optimizer" phase_is running
grep -q '"handoff"' "$DIR/restart.ack" || fail "no ack"
# A second optimizer on the running campaign meets its lock (75), which is not the machine:
# no marker, no monitor.
rc=0
"$AKA" "${args[@]}" >/dev/null 2>"$TMP/err4" || rc=$?
[ "$rc" = 75 ] && grep -q "held by pid" "$TMP/err4" || fail "second optimizer: exit $rc: $(cat "$TMP/err4")"
! grep -q "recovery monitor" "$TMP/err4" || fail "a held lock started recovery: $(cat "$TMP/err4")"
[ ! -e "$WS/.aka/environment-failure.json" ] || fail "a held lock wrote the marker"
wait_for 60 "V0" test -f "$WS/memory/v0.json"
pid=$(field optimizer_pid)
[ "$pid" -gt 1 ] || fail "no optimizer pid"
kill -KILL "$pid"
wait_for 20 "the second restart" bash -c "[ \"\$(\"$AKA\" recovery status \"$WS\" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"attempts\"])')\" -ge 2 ]"
grep -q "optimizer exited with status 137" "$DIR/monitor.log" || fail "the crash was not seen"
wait_for 150 "completion" bash -c "grep -q '\"phase\": \"completed\"' \"$DIR/state.json\""
[ "$(field last_exit)" = 0 ] || fail "last exit $(field last_exit)"
[ "$(field monitor_running)" = False ] || fail "the monitor outlived the completed recovery"
[ "$(grep -c 'monitor [0-9]* started' "$DIR/monitor.log")" = 2 ] ||
  fail "expected one monitor per recover.sh that found none running"
[ ! -e "$WS/.aka/environment-failure.json" ] || fail "the marker outlived the resume"
grep -q "campaign stopped: budget: max-iters" "$DIR/restart.log" || fail "the campaign did not finish"
python3 -S "$SRC/tests/crash/check_invariants.py" "$WS" || fail "invariants"
python3 - "$WS" <<'PY' || fail "episodes"
import json, os, sys
ws = sys.argv[1]
st = json.load(open(os.path.join(ws, ".aka/state.json")))
assert st["episodes"] == 1 and st["interrupted"] <= 1, st
PY
echo "recovery: restarted, crashed, restarted, completed; invariants hold"

# --- an episode stopped by the environment runs again --------------------------------------
FK=$TMP/fake
agent_sandbox_setup "$FK"
DOWN=$FK/down # the machine is down while it exists (the agent creates it)
cp "$OP/seeds/C/kernel.c" "$FK/fast.c"
sed 's/x\[i + u\] + y\[i + u\]/x[i + u] - y[i + u]/' "$FK/fast.c" >"$FK/wrong.c"
cmp -s "$FK/fast.c" "$FK/wrong.c" && fail "could not derive the wrong kernel"
write_finish_py "$FK/finish.py"
cat >"$FK/agent.sh" <<EOF
#!/bin/bash
set -u
n=\$(( \$(cat $FK/turns 2>/dev/null || echo 0) + 1 )); echo \$n >$FK/turns
if [ \$n = 1 ]; then # a wrong kernel, and the machine goes down before it is judged
  cp $FK/wrong.c kernel.c
  aka eval >/dev/null 2>&1 || true
  git add kernel.c && git -c user.name=fake -c user.email=fake@localhost commit -qm candidate
  touch $DOWN
  python3 -S $FK/finish.py candidate_ready
else
  aka eval >/dev/null 2>&1 || true
  python3 -S $FK/finish.py pivot
fi
EOF
printf '{"turns":[{"actions":[{"usage":{"input":100,"output":50}},{"sh":"bash %s/agent.sh"}]}]}\n' \
  "$FK" >"$FK/scenario.json"
export AKA_FAKE_SCENARIO="$FK/scenario.json" AKA_FAKE_LOG=/dev/null AKA_FAKE_STATE="$FK"
PARENT=$TMP/e
WS=$PARENT/kernel_opt_vector_add_c_cpu
mkdir -p "$PARENT"
eargs=(optimize --op-dir "$OP" --platform cpu --framework C --workspace "$PARENT"
  --sandbox-isolation none --verify-repeats 1 --verify-run-timeout 60 --max-dispersion-pct 90
  "${AGENT_FLAGS[@]}" --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude"
  --fast-episodes 3 --fast-trials 1 --handoff-resumes 0 --max-iters 2
  --environment-poll-interval 1 --sandbox-health-command "test ! -e $DOWN")
rc=0
"$AKA" "${eargs[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
[ "$rc" = 75 ] || { cat "$TMP/err"; fail "episode: exit $rc, expected 75"; }
DIR=$(ls -d "$PARENT"/.aka-environment/*)
DIRS+=("$DIR")
python3 - "$WS" <<'PY' || fail "episode: marker or records"
import json, os, sys
ws = sys.argv[1]
m = json.load(open(os.path.join(ws, ".aka/environment-failure.json")))
assert m["reason"] == "health_failed" and m["episode"] == 1, m
assert not os.path.exists(os.path.join(ws, "memory/v1.json")), "the episode was recorded"
sp = os.path.join(ws, ".aka/state.json")
st = json.load(open(sp)) if os.path.exists(sp) else {}
assert st.get("episodes", 0) == 0 and st.get("rejected", 0) == 0, st
wt = json.load(open(os.path.join(ws, ".aka/active_episode.json")))["worktree"]
assert os.path.isdir(wt), "the worktree was not kept"
PY
wait_for 10 "the episode's monitor" grep -q 'health probe failed' "$DIR/monitor.log"
rm "$DOWN"
wait_for 150 "the episode's completion" grep -q '"phase": "completed"' "$DIR/state.json"
grep -q "episode 1: stopped by an environment failure" "$DIR/restart.log" ||
  fail "episode: not discarded on resume"
python3 -S "$SRC/tests/crash/check_invariants.py" "$WS" || fail "episode: invariants"
python3 - "$WS" <<'PY' || fail "episode: records"
import json, os, sys
ws = sys.argv[1]
st = json.load(open(os.path.join(ws, ".aka/state.json")))
# V1 is skipped (leaderboard): episodes 1 and 2 make v1 and v2, both pivots
assert st["episodes"] == 2 and st["rejected"] == 0 and st["pivoted"] == 2, st
for v in (1, 2):
    rec = json.load(open(os.path.join(ws, "memory/v%d.json" % v)))
    assert rec["status"] == "pivot", (v, rec["status"])
PY
[ "$(cat "$FK/turns")" = 3 ] || fail "episode: $(cat "$FK/turns") agent turns, expected 3"
echo "recovery: an episode the environment stopped ran again; nothing recorded against it"
