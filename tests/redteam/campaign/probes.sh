#!/bin/bash
# probes.sh — production's numerical probes in a real campaign (issue 14; docs/production.md).
# Each case starts from the same production V0 (tests/lib/hostile_campaign.sh) with the fake
# Claude CLI as agent and as a reviewer that passes; what decides is the judge's run of the
# supervisor's probe plan after verification:
#   1. saturating  a kernel that clamps every sum to [-16, 16]: exact on the evaluator's
#                  inputs (uniform on [-1, 1)), so verification passes, but wrong once the
#                  inputs are scaled x1e3: rejected, the probe named in the violation and
#                  in the next episode's brief (what the agent reads);
#   2. honest      the fast seed kernel: every probe passes, promoted, plan and result in
#                  the record (smallest, largest and a rotating shape, six probes); the
#                  next episode's (a blocked one) record does not inherit them;
#   3. restart     the honest kernel, the supervisor killed (SIGKILL) while the probes run:
#                  the resume runs the plan the active record kept (plan_from "active
#                  record", the same plan) and promotes.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
HOSTILE_MODE=production
setup_hostile

PASS_VERDICT=$(reviewer_pass_step)
SAT_KERNEL=$(python3 -c '
import sys
k = sys.argv[1]
k = k.replace("x[i + u] + y[i + u]", "AKA_SAT(x[i + u] + y[i + u])")
k = k.replace("x[i] + y[i]", "AKA_SAT(x[i] + y[i])")
k = k.replace("#include \"aka_native_abi.h\"\n", "#include \"aka_native_abi.h\"\n"
              "/* Saturating add: the sums of the evaluator inputs never reach the bounds. */\n"
              "#define AKA_SAT(v) ((v) > 16.0f ? 16.0f : (v) < -16.0f ? -16.0f : (v))\n")
print(k)' "$FAST_KERNEL")
[[ "$SAT_KERNEL" == *"define AKA_SAT"*"AKA_SAT(x[i] + y[i])"* ]] || fail "could not derive the saturating kernel"

candidate() { # KERNEL_TEXT: one episode that commits it, evaluates, hands off
  REVIEWER=$PASS_VERDICT
  episode '{"write":"kernel.c","content":'"$(jstr "$1")"'},'"$COMMIT,$EVAL,$FINISH"
  REVIEWER=
}

case_saturating() {
  new_case saturating
  candidate "$SAT_KERNEL"
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "saturating: aka optimize exit $RC"; }
  no_promotion saturating
  [ "$(record_field 1 'm["verification"]["passed"]')" = True ] ||
    fail "saturating: the ordinary verification did not pass (the test needs it to)"
  local why
  why=$(record_field 1 'm["episode"]["violation"]')
  echo "$why" | grep -q "numerical probes: .*numerical probe magnitude_1e3" ||
    fail "saturating: the violation does not name the probe: $why"
  [ "$(record_field 1 'm["probes"]["result"]["passed"]')" = False ] || fail "saturating: result"
  # The next episode's brief carries the failure back to the agent, probe named.
  episode '{"sh":"bash '"$TMP"'/finish.sh pivot"}'
  grep -q "numerical probe magnitude_1e3" "$WS/.aka/episodes/e0002/BRIEF.md" ||
    fail "saturating: the next episode's brief does not name the failed probe"
  ok "1 saturating: correct at scale 1, rejected by the magnitude_1e3 probe, named to the agent"
}

check_plan() { # NAME: the record's plan is the supervisor's
  local n
  n=$(record_field 1 'len(m["probes"]["plan"]["cases"])')
  [ "$n" = 6 ] || fail "$1: $n probe cases, expected 6"
  record_field 1 '",".join(c["name"] for c in m["probes"]["plan"]["cases"])' |
    grep -q "magnitude_1e-3,magnitude_1e3,constant_rows,large_negative,near_zero_variance" ||
    fail "$1: the plan's probes: $(record_field 1 'm["probes"]["plan"]["cases"]')"
  [ "$(record_field 1 'len(m["probes"]["plan"]["shapes"])')" = 3 ] || fail "$1: not 3 shapes"
}

case_honest() {
  new_case honest
  candidate "$FAST_KERNEL"
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "honest: aka optimize exit $RC"; }
  [ "$(record_field 1 'm["status"]')" = promoted ] ||
    fail "honest: not promoted: $(record_field 1 'm["episode"]["violation"]')"
  [ "$(record_field 1 'm["probes"]["result"]["passed"]')" = True ] || fail "honest: probes"
  check_plan honest
  # A later episode that is not promoted keeps no probes: its record starts as a copy of the
  # incumbent's, whose probes it did not run.
  episode '{"sh":"bash '"$TMP"'/finish.sh blocked"}'
  [ "$(record_field 2 'm["status"]')" = blocked ] || fail "honest: v2 is $(record_field 2 'm["status"]')"
  [ "$(record_field 2 'm.get("probes")')" = None ] || fail "honest: v2 carries v1's probes"
  ok "2 honest: every probe passes, promoted, plan and result recorded (and not inherited)"
}

case_restart() {
  new_case restart
  REVIEWER=$PASS_VERDICT
  printf '{"turns":[{"actions":[%s,%s]},{"actions":[%s,%s]}]}\n' "$USAGE" \
    '{"write":"kernel.c","content":'"$(jstr "$FAST_KERNEL")"'},'"$COMMIT,$EVAL,$FINISH" \
    "$USAGE" "$PASS_VERDICT" >"$TMP/scenario.json"
  REVIEWER=
  local active=$WS/.aka/active_episode.json pid plan=""
  rm -f "$TMP/fake-invocations"
  AKA_FAKE_SCENARIO="$TMP/scenario.json" AKA_FAKE_LOG="$TMP/fake.log" AKA_FAKE_STATE="$TMP" \
    setsid "$AKA" optimize "${MODE_FLAGS[@]}" --op-dir "$OP" --platform cpu --framework C \
    --agent-cli claude --agent-cli-path "$SRC/tests/fakes/fake-claude" --workspace "$PARENT" \
    --sandbox-isolation "$ISO" --agent-sandbox none --max-iters 1 --fast-trials 1 \
    --fast-episodes 5 --handoff-resumes 0 >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  for _ in $(seq 1 6000); do
    if [ -f "$active" ] && grep -q '"phase": "probing"' "$active" 2>/dev/null; then
      plan=$(python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["probes"]["plan"], sort_keys=True))' "$active")
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$plan" ] || { cat "$TMP/err" >&2; fail "restart: the probing phase was never seen"; }
  episode '{"text":"unused"}'
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "restart: the resume exit $RC"; }
  [ "$(record_field 1 'm["status"]')" = promoted ] ||
    fail "restart: not promoted: $(record_field 1 'm["episode"]["violation"]')"
  [ "$(record_field 1 'm["probes"]["plan_from"]')" = "active record" ] ||
    fail "restart: the plan was not taken from the active record"
  [ "$(record_field 1 'json.dumps(m["probes"]["plan"], sort_keys=True)')" = "$plan" ] ||
    fail "restart: the plan changed across the restart"
  check_plan restart
  ok "3 restart: killed while probing, the resume ran the recorded plan and promoted"
}

run_cases saturating honest restart
