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
#     restarts once health returns (ready/ack handshake, phase running);
#   - that optimizer is SIGKILLed after V0 is recorded: the monitor goes back to polling
#     and restarts it again, and the campaign finishes (exit 0, phase completed);
#   - the crash test's invariant checker agrees: no episode lost or duplicated.
# The jobs run with --sandbox-isolation none: the probe runs as a job, and only without
# isolation does it see the flag file this test creates.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
SRC=${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-recovery.XXXXXX")
DIR=
cleanup() {
  # Whatever the test left running: the monitor and its optimizer, identity-checked.
  [ -z "$DIR" ] || [ ! -x "$DIR/stop-recovery.sh" ] || "$DIR/stop-recovery.sh" >/dev/null 2>&1 || true
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
[ "$rc" = 75 ] && grep -q "no recovery monitor started" "$TMP/err3" || fail "restarted while stopped"
[ "$(field monitor_running)" = False ] || fail "a monitor started while stopped"
touch "$FLAG"
echo "recovery: stop-recovery.sh keeps it stopped"

# --- recover.sh: restart once healthy, then a crash, then completion ----------------------
"$DIR/recover.sh" >/dev/null || fail "recover.sh failed"
"$DIR/recover.sh" >/dev/null || fail "recover.sh (twice) failed"
wait_for 20 "the restarted optimizer" phase_is running
grep -q '"handoff"' "$DIR/restart.ack" || fail "no ack"
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
