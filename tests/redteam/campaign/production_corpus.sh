#!/bin/bash
# production_corpus.sh — must-show 1 of issue 14 in real production campaigns, for the
# framework a CPU host can run (native C): every hostile native C source of tests/policy/
# is the candidate of one episode and must be rejected for its named rule, file and line
# (policy-expect on its first line); every clean native C kernel of tests/policy/clean must
# pass the source gate (the record's policy.source is "clean"; most of them compute another
# operator than the campaign's vector_add, so the verification after the gate may reject
# them: what is checked is that the policy never does). Triton and CUDA sources go through
# the same gate (episode_policy.c calls the same aka_policy_check on the committed blob);
# tests/integration/policy_check.sh checks all three corpora with `aka policy check`.
# The numerical-probe entry of must-show 1 (a kernel correct on the evaluator's inputs but
# wrong at scale 1e3) is tests/redteam/campaign/probes.sh.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
HOSTILE_MODE=production
setup_hostile

PASS=$(reviewer_pass_step)
candidate_episode() { # NAME FILE
  new_case "$1"
  REVIEWER=$PASS
  episode '{"write":"kernel.c","content":'"$(jstr "$(cat "$2")")"'},'"$COMMIT,$EVAL,$FINISH"
  REVIEWER=
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "$1: aka optimize exit $RC"; }
}

case_hostile() {
  local n=0 k rule why
  for k in "$SRC"/tests/policy/hostile/c_*.c; do
    rule=$(head -2 "$k" | sed -n 's/.*policy-expect: \([a-z-]*\).*/\1/p' | head -1)
    [ -n "$rule" ] || fail "$k: no policy-expect header"
    candidate_episode "hostile_$(basename "$k" .c)" "$k"
    no_promotion "$k"
    why=$(record_field 1 'm["episode"]["violation"]')
    grep -qE "^production policy: rule $rule at kernel\.c:[0-9]+:[0-9]+: " <<<"$why" ||
      fail "$k: expected rule $rule named with file and line, got: $why"
    n=$((n + 1))
  done
  [ "$n" -ge 15 ] || fail "only $n hostile native C sources"
  ok "hostile: $n native C sources, none promoted, each rejected for its named rule"
}

case_clean() {
  local n=0 k src
  for k in "$SRC"/tests/policy/clean/c_*.c; do
    candidate_episode "clean_$(basename "$k" .c)" "$k"
    src=$(record_field 1 'm["policy"]["source"]')
    [ "$src" = clean ] || fail "$k: the source gate said $src: $(record_field 1 'm["episode"]["violation"]')"
    record_field 1 'm["episode"]["violation"]' | grep -q "production policy" &&
      fail "$k: rejected by the policy: $(record_field 1 'm["episode"]["violation"]')"
    n=$((n + 1))
  done
  [ "$n" -ge 10 ] || fail "only $n clean native C kernels"
  ok "clean: $n native C kernels, none rejected by the source gate"
}

run_cases hostile clean
