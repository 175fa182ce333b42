#!/bin/bash
# production.sh — production mode's source gate in a real campaign (issue 14; docs/production.md):
# the deterministic source policy on the committed candidate, then the policy reviewer (the
# fake Claude CLI's second invocation of the episode), fail closed. Each case starts from the
# same production V0 (tests/lib/hostile_campaign.sh, HOSTILE_MODE=production) and requires the
# named outcome in the episode's record:
#   1. policy       a fast kernel that also calls system(): rejected by the deterministic
#                   policy, rule, file and line named; the reviewer never asked;
#   2. pass         a fast, clean kernel and a complete "pass" verdict: promoted, the verdict
#                   kept in the record and the cache;
#   3. missing      the reviewer writes no verdict: rejected "missing";
#   4. malformed    a verdict without its checks: rejected "malformed";
#   5. rejects      a complete verdict of "reject": rejected with its summary;
#   6. mutating     the reviewer edits the candidate and says "pass": rejected "mutating";
#   7. late         the reviewer outlives --production-review-timeout: rejected "late";
#   8. builtin      the built-in agent (no reviewer backend): nothing promoted, and why said;
#   9. claims_exception  the agent writes a metadata.json with a valid world_size 2 contract
#                   (the distributed exception) into its worktree and the original operator
#                   directory, with a kernel that calls system(): rejected by the source
#                   policy, and again in a second run of the campaign (the contract is pinned
#                   at campaign start from the snapshot; DESIGN §4.3).
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
HOSTILE_MODE=production
setup_hostile

FAST=$(jstr "$FAST_KERNEL")
verdict() { # VERDICT [CHECK_DECISION]: a complete verdict document as JSON text
  python3 - "$1" "${2:-$1}" <<'PY'
import json, sys
checks = ["framework_compliance", "compute_provenance", "dependency_inventory",
          "external_code_loading", "solution_manifest"]
print(json.dumps({"verdict": sys.argv[1], "summary": "reviewed: " + sys.argv[1],
                  "checks": [{"category": c, "decision": sys.argv[2], "reason": "r",
                              "evidence": ["candidate/kernel.c:1"]} for c in checks]}))
PY
}
write_verdict() { echo '{"write":"verdict.json","content":'"$(jstr "$1")"'}'; }
outcome() { record_field 1 'm["policy"]["reviewer"]["outcome"]'; }
reviewed_case() { # NAME EXPECTED_OUTCOME REVIEWER_ACTIONS [optimize flags...]
  local name=$1 want=$2
  REVIEWER=$3
  shift 3
  new_case "$name"
  episode '{"write":"kernel.c","content":'"$FAST"'},'"$COMMIT,$EVAL,$FINISH" "$@"
  REVIEWER=
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "$name: aka optimize exit $RC"; }
  [ "$(outcome)" = "$want" ] || fail "$name: reviewer outcome $(outcome), expected $want"
}

case_policy() {
  new_case policy
  local k="#include <stdlib.h>
int aka_hostile_helper(void) { return system(\"true\"); }
$FAST_KERNEL"
  REVIEWER=$(write_verdict "$(verdict pass)")
  episode '{"write":"kernel.c","content":'"$(jstr "$k")"'},'"$COMMIT,$EVAL,$FINISH"
  REVIEWER=
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "policy: aka optimize exit $RC"; }
  no_promotion policy
  record_field 1 'm["episode"]["violation"]' | grep -q "production policy: rule process at kernel.c:2:" ||
    fail "policy: the violation does not name rule, file and line: $(record_field 1 'm["episode"]["violation"]')"
  [ "$(record_field 1 'm["policy"].get("reviewer")')" = None ] || fail "policy: the reviewer was asked"
  ok "1 policy: system() rejected by rule, file and line"
}

case_pass() {
  reviewed_case pass pass "$(write_verdict "$(verdict pass)")"
  [ "$(record_field 1 'm["status"]')" = promoted ] || fail "pass: v1 not promoted"
  ls "$WS/.aka/policy_reviews/"*.json >/dev/null || fail "pass: the verdict was not cached"
  ok "2 pass: a complete pass verdict promotes, and is cached"
}

case_missing() {
  reviewed_case missing missing '{"text":"looks fine"}'
  no_promotion missing
  ok "3 missing: no verdict file rejects"
}

case_malformed() {
  reviewed_case malformed malformed "$(write_verdict '{"verdict": "pass", "summary": "ok"}')"
  no_promotion malformed
  record_field 1 'm["episode"]["violation"]' | grep -q "checks" || fail "malformed: the reason does not say why"
  ok "4 malformed: a verdict without checks rejects"
}

case_rejects() {
  reviewed_case rejects reject "$(write_verdict "$(verdict reject)")"
  no_promotion rejects
  record_field 1 'm["episode"]["violation"]' | grep -q "reviewed: reject" || fail "rejects: no summary"
  ok "5 rejects: the reviewer's reject is final"
}

case_mutating() {
  reviewed_case mutating mutating '{"sh":"echo \"/* reviewed */\" >> candidate/kernel.c"},'"$(write_verdict "$(verdict pass)")"
  no_promotion mutating
  ok "6 mutating: a reviewer that edits the candidate rejects"
}

case_late() {
  reviewed_case late late '{"sleep":20},'"$(write_verdict "$(verdict pass)")" --production-review-timeout 3
  no_promotion late
  ok "7 late: a reviewer past its timeout rejects"
}

case_builtin() {
  new_case builtin # (a fresh operator; the campaign is a new one: its agent is pinned)
  # A seed whose default configuration is slow (tests/lib/campaign_fixture.sh): the
  # episode has a candidate to stop at the gate even on a loaded machine.
  slow_seed "$OP/seeds/C/kernel.c"
  mkdir -p "$TMP/builtin-ws"
  RC=0
  # V1 (the seed, whose knobs the tuner turns) then one fast episode: v2.
  "$AKA" optimize --optimization-mode production --op-dir "$OP" --platform cpu --framework C \
    --agent-cli builtin --workspace "$TMP/builtin-ws" --sandbox-isolation "$ISO" \
    --agent-sandbox none --max-iters 2 >"$TMP/out" 2>"$TMP/err" || RC=$?
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "builtin: aka optimize exit $RC"; }
  WS=$TMP/builtin-ws/kernel_opt_vector_add_c_cpu_production
  local st
  st=$(record_field 2 'm["status"]')
  [ "$st" = rejected ] || fail "builtin: v2 is $st, expected rejected: $(tail -3 "$TMP/err")"
  record_field 2 'm["episode"]["violation"]' | grep -q "no policy reviewer can run" ||
    fail "builtin: the reason is not said: $(record_field 2 'm["episode"]["violation"]')"
  grep -q '"policy_reviewer": "none"' "$WS/.aka/campaign.json" || fail "builtin: not pinned"
  ok "8 builtin: no reviewer backend, the candidate rejected and why said"
}

case_claims_exception() {
  new_case claims_exception
  cat >"$TMP/meta.json" <<'JSON'
{"hardware": {"required_gpus": 2},
 "benchmark_contract": {"distributed_evaluation":
   {"launcher": "torchrun", "backend": "nccl", "world_size": 2}}}
JSON
  local k="#include <stdlib.h>
int aka_hostile_helper(void) { return system(\"true\"); }
$FAST_KERNEL" v
  for v in 1 2; do
    REVIEWER=$(write_verdict "$(verdict pass)")
    episode '{"sh":"cp '"$TMP"'/meta.json metadata.json && cp '"$TMP"'/meta.json '"$OP"'/metadata.json"},{"write":"kernel.c","content":'"$(jstr "$k")"'},'"$COMMIT,$EVAL,$FINISH"
    REVIEWER=
    [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "claims_exception: aka optimize exit $RC"; }
    [ -f "$OP/metadata.json" ] || fail "claims_exception: the agent's write did not land"
    record_field "$v" 'm["episode"]["violation"]' | grep -q "production policy: rule process at kernel.c:2:" ||
      fail "claims_exception: v$v: $(record_field "$v" 'm["episode"]["violation"]')"
  done
  no_promotion claims_exception
  grep -q '"source_policy_inspection": true' "$WS/.aka/campaign.json" ||
    fail "claims_exception: campaign.json does not pin inspection on"
  ok "9 claims_exception: a written distributed contract changes nothing (pinned at start)"
}

run_cases policy pass missing malformed rejects mutating late builtin claims_exception
