#!/bin/bash
# evidence.sh — hostile campaign cases against the evidence the supervisor decides from
# (issue 10, "evidence pinned"; docs/security.md). Each case starts from the
# same V0 (tests/lib/hostile_campaign.sh), lets the fake agent attack during one fast
# episode, and requires: nothing promoted, and the reason named in the record or output.
#   1. tolerance    the agent loosens operator.json's tolerances in the ORIGINAL operator
#                   directory and hands off a wrong (fast) kernel: the campaign (and the
#                   agent's own `aka eval`) evaluates its V0 snapshot, so the kernel fails;
#                   the change is reported by name to the agent and in the record;
#   2. reference    the agent makes the ORIGINAL reference.c compute what its wrong kernel
#                   computes: the same, via the snapshot;
#   3. record       the agent edits the working copy of memory/v0.json to make V0 look
#                   1000x slower and hands off a kernel 2x slower than V0: the incumbent is
#                   read from the committed blob, the slower kernel loses, the edit is named;
#   4. replace      the same forgery through `git replace` of v0.json's blob in the
#                   canonical repository (the commit ids stay): the supervisor's git
#                   never substitutes objects;
#   5. unreadable   a committed memory/v1.json that does not parse (the commit recorded in
#                   the ledger, as a damaged record would be): the campaign fails closed
#                   naming HEAD:memory/v1.json, never falls back to v0;
#   6. inconsistent the same with a record that says v0 inside memory/v1.json.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
setup_hostile

# 1. the original operator's tolerances
case_tolerance() {
new_case tolerance
TOL=$(attack tolerance "python3 - '$OP/operator.json' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['tolerance'] = {'atol': 1e9, 'rtol': 1e9}
json.dump(d, open(sys.argv[1], 'w'))
PY")
AGENT_EVAL='{"sh":"aka eval >/dev/null 2>'"$TMP"'/agent-eval.err || true"}'
episode '{"write":"kernel.c","content":'"$(jstr "$WRONG_KERNEL")"'},'"$COMMIT,$TOL,$AGENT_EVAL,$FINISH"
[ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "tolerance: aka optimize exit $RC"; }
grep -q "aka eval: warning: the original operator changed ($OP/operator.json differs" \
  "$TMP/agent-eval.err" || fail "tolerance: the agent's aka eval did not say: $(cat "$TMP/agent-eval.err")"
grep -q "aka eval: FAIL" "$TMP/agent-eval.err" || fail "tolerance: the agent's aka eval passed"
no_promotion tolerance
[ "$(record_field 1 'm["status"]')" = rejected ] || fail "tolerance: v1 is not rejected"
grep -q "warning: the original operator directory changed ($OP/operator.json differs from the V0 snapshot)" \
  "$TMP/err" || fail "tolerance: the change is not reported: $(grep warning "$TMP/err")"
record_field 1 'm["verification"]["original_operator_changed"]' | grep -q "operator.json differs" ||
  fail "tolerance: the record does not name the changed file"
ok "1 tolerance: snapshot evaluated, operator.json change reported"
}

# 2. the original operator's reference
case_reference() {
new_case reference
REF=$(attack reference "sed -i 's/x\[i\] + y\[i\]/x[i] - y[i]/' '$OP/reference.c'; grep -q 'x\[i\] - y\[i\]' '$OP/reference.c'")
episode '{"write":"kernel.c","content":'"$(jstr "$MINUS_KERNEL")"'},'"$COMMIT,$REF,$EVAL,$FINISH"
[ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "reference: aka optimize exit $RC"; }
no_promotion reference
[ "$(record_field 1 'm["status"]')" = rejected ] || fail "reference: v1 is not rejected"
grep -q "$OP/reference.c differs from the V0 snapshot" "$TMP/err" ||
  fail "reference: the change is not reported"
ok "2 reference: snapshot evaluated, reference.c change reported"
}

# 3. the working copy of the incumbent's record
FORGE_V0="import json, sys
m = json.load(open(sys.argv[1]))
p = m['performance']
for k in ('latency_us', 'latency_us_geomean', 'latency_us_arith_mean'):
    p[k] *= 1000
p['latency_us_by_shape'] = {s: v * 1000 for s, v in p['latency_us_by_shape'].items()}
p['performance_score'] /= 1000
json.dump(m, open(sys.argv[2], 'w'), indent=2, sort_keys=True)"
case_record() {
new_case record
REC=$(attack record "python3 - \"$WS/memory/v0.json\" \"$WS/memory/v0.json\" <<'PY'
$FORGE_V0
PY")
episode '{"write":"kernel.c","content":'"$(jstr "$SLOW_KERNEL")"'},'"$COMMIT,$EVAL,$REC,$FINISH"
[ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "record: aka optimize exit $RC"; }
no_promotion record
[ "$(record_field 1 'm["status"]')" = rejected ] || fail "record: v1 is not rejected"
record_field 1 'm["episode"]["violation"]' | grep -Eq '^fast verification: -[0-9.]+% ' ||
  fail "record: $(record_field 1 'm["episode"]["violation"]')"
grep -q "memory/v0.json differs from its committed copy HEAD:memory/v0.json" "$TMP/err" ||
  fail "record: the edited working copy is not reported"
ok "3 record: decided from the committed v0.json, the edited copy named"
}

# 4. the same forgery as a replace ref in the canonical repository
case_replace() {
new_case replace
RPL=$(attack replace "cd \"$WS\"
git show HEAD:memory/v0.json >\"$TMP/v0.orig\"
python3 - \"$TMP/v0.orig\" \"$TMP/v0.forged\" <<'PY'
$FORGE_V0
PY
git replace \"\$(git rev-parse HEAD:memory/v0.json)\" \"\$(git hash-object -w \"$TMP/v0.forged\")\"
git show HEAD:memory/v0.json | cmp -s - \"$TMP/v0.forged\"")
episode '{"write":"kernel.c","content":'"$(jstr "$SLOW_KERNEL")"'},'"$COMMIT,$EVAL,$RPL,$FINISH"
[ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "replace: aka optimize exit $RC"; }
git -C "$WS" replace -l | grep -q . || fail "replace: the attack did not plant a replace ref"
no_promotion replace
record_field 1 'm["episode"]["violation"]' | grep -Eq '^fast verification: -[0-9.]+% ' ||
  fail "replace: $(record_field 1 'm["episode"]["violation"]')"
ok "4 replace: the replace ref is not honoured, the slower kernel rejected"
}

# 5, 6. a damaged committed record (its commit recorded in the ledger, as the supervisor's
# own would be): fail closed naming the file, no new version.
damaged() {
  local name=$1 content=$2
  new_case "$name"
  printf '%s' "$content" >"$WS/memory/v1.json"
  git -C "$WS" add memory/v1.json
  GIT_AUTHOR_NAME=aka-supervisor GIT_AUTHOR_EMAIL=aka-supervisor@localhost \
    GIT_COMMITTER_NAME=aka-supervisor GIT_COMMITTER_EMAIL=aka-supervisor@localhost \
    git -C "$WS" commit -qm "v1: episode 1 rejected"
  python3 - "$WS/.aka/commits.json" "$(git -C "$WS" rev-parse HEAD)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["commits"].append(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
  local head; head=$(git -C "$WS" rev-parse HEAD)
  episode "$EVAL,$FINISH"
  [ "$RC" = 1 ] || fail "$name: exit $RC, want 1 (fail closed)"
  grep -q "HEAD:memory/v1.json" "$TMP/err" || fail "$name: the file is not named: $(tail -1 "$TMP/err")"
  [ "$(git -C "$WS" rev-parse HEAD)" = "$head" ] || fail "$name: HEAD moved"
  no_promotion "$name"
}
case_unreadable() {
  damaged unreadable '{"version": "v1", "status": '
  ok "5 unreadable: fails closed naming HEAD:memory/v1.json"
}
case_inconsistent() {
  damaged inconsistent "$(git -C "$TMP/base/kernel_opt_vector_add_c_cpu" show HEAD:memory/v0.json)"
  grep -q 'version: expected "v1"; got "v0"' "$TMP/err" || fail "inconsistent: $(tail -1 "$TMP/err")"
  ok "6 inconsistent: fails closed naming HEAD:memory/v1.json"
}

run_cases tolerance reference record replace unreadable inconsistent
echo "evidence: all cases refused"
