#!/usr/bin/env bash
# journal_handoff.sh — the agent-facing `aka journal append|finalize` and
# `aka handoff` (DESIGN §4.5) in an episode-like worktree:
#   1. --help on both prints its usage line first;
#   2. without a journal every command exits 2 and writes nothing;
#   3. in a git repo with .aka/journal.json as the supervisor creates it, two
#      experiments are appended (found via the current directory, then via
#      $ATREX_AKA_WORKTREE), the journal is finalized as candidate_ready with
#      HEAD, and the handoff names HEAD; python3 checks both files; the receipt
#      shows the summary's ESC sequence and newline escaped;
#   4. bad input (malformed JSON, unknown status or state, a missing or
#      mismatched candidate commit, an unfinalized journal, unknown flags)
#      exits 2 with one line "FILE/FLAG: FIELD: ..." and leaves the journal and
#      handoff byte-identical.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
AKA=${AKA_BIN:?AKA_BIN must name the aka binary}
: "${AKA_SOURCE_DIR:?AKA_SOURCE_DIR must name the source tree}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/aka-journal.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd -P)
unset ATREX_AKA_WORKTREE
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE CMD...: run CMD, require its exit code; stdout in $TMP/out, stderr in $TMP/err.
expect() {
    local want=$1 got=0
    shift
    "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
    [ "$got" = "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $got, expected $want"; }
}
# expect_bad PATTERN CMD...: exit 2, one stderr line matching PATTERN, nothing changed.
expect_bad() {
    local pat=$1 before
    shift
    before=$(state_hash)
    expect 2 "$@"
    [ "$(wc -l <"$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "'$*': expected one error line"; }
    grep -qE -- "$pat" "$TMP/err" || fail "'$*': error '$(cat "$TMP/err")' does not match '$pat'"
    [ ! -s "$TMP/out" ] || fail "'$*' printed on stdout: $(cat "$TMP/out")"
    [ "$(state_hash)" = "$before" ] || fail "'$*' changed .aka/"
}
state_hash() { (cd "$WT/.aka" && ls -la --time-style=+ . | sed 1d && { cat ./* 2>/dev/null || true; }) | sha256sum; }

# 1. help
for app in journal handoff; do
    expect 0 "$AKA" "$app" --help
    head -1 "$TMP/out" | grep -q "^usage: aka $app " || fail "$app --help: $(head -1 "$TMP/out")"
done

# An episode worktree: a git repo with a commit and .aka/.
WT=$TMP/wt
mkdir -p "$WT/.aka"
git -C "$WT" init -q -b aka/episode-3
echo 'kernel v1' >"$WT/kernel.c"
git -C "$WT" add kernel.c
git -C "$WT" -c user.name=t -c user.email=t@t commit -q -m base
BASE=$(git -C "$WT" rev-parse HEAD)
echo 'kernel v2' >"$WT/kernel.c"
git -C "$WT" -c user.name=t -c user.email=t@t commit -q -am candidate
HEAD=$(git -C "$WT" rev-parse HEAD)
cd "$WT"

# 2. no journal: exit 2, naming the journal, nothing written
expect_bad 'journal.json: no journal' "$AKA" journal append --experiment-json '{"idea":"x"}'
expect_bad 'journal.json: no journal' "$AKA" journal finalize --state pivot --outcome-json '{"summary":"s"}'
expect_bad 'journal.json: no journal' "$AKA" handoff --status pivot
[ -z "$(ls -A .aka)" ] || fail "a command without a journal wrote $(ls -A .aka)"

# 3. the journal as the supervisor creates it (src/optimize/episode.c: aka_journal_create).
cat >.aka/journal.json <<EOF
{"schema_version": 1, "episode": 3, "memory_version": 4, "base_commit": "$BASE",
 "episode_branch": "aka/episode-3", "state": "in_progress", "experiments": [],
 "outcome": null, "created_at": "2026-01-01T00:00:00Z", "finalized_at": null,
 "candidate_commit": null}
EOF

expect 0 "$AKA" journal append --experiment-json '{"idea":"unroll by 4","eval_id":"e1","outcome":"1.2x"}'
grep -q 'experiment 1' "$TMP/out" || fail "append receipt: $(cat "$TMP/out")"
# Found through $ATREX_AKA_WORKTREE from elsewhere.
(cd "$TMP" && ATREX_AKA_WORKTREE=$WT expect 0 "$AKA" journal append \
    --experiment-json '{"idea":"vectorize","timestamp":"2026-01-01T01:00:00Z","wiki_refs":["nvidia.h200.hbm-bandwidth"]}')
grep -q 'experiment 2' "$TMP/out" || fail "append receipt: $(cat "$TMP/out")"

# 4a. bad input while in progress
expect_bad '^aka: --experiment-json:1:[0-9]+: invalid JSON' "$AKA" journal append --experiment-json '{"idea":'
expect_bad 'experiment: expected a non-empty object' "$AKA" journal append --experiment-json '{}'
expect_bad 'experiment: expected a non-empty object' "$AKA" journal append --experiment-json '[1]'
expect_bad 'wiki_refs\[0\]: expected a wiki record id' "$AKA" journal append --experiment-json '{"a":1,"wiki_refs":["two words"]}'
expect_bad '--experiment-json: required' "$AKA" journal append
expect_bad '--experiment-json: expected a value' "$AKA" journal append --experiment-json
expect_bad 'frob: unknown action' "$AKA" journal frob
expect_bad 'journal: --bogus: unknown flag' "$AKA" journal append --bogus
expect_bad '--state: expected candidate_ready, pivot or blocked; got "done"' \
    "$AKA" journal finalize --state done --outcome-json '{"summary":"s"}'
expect_bad '--state: expected candidate_ready, pivot or blocked; got "in_progress"' \
    "$AKA" journal finalize --state in_progress --outcome-json '{"summary":"s"}'
expect_bad '^aka: --outcome-json:1:[0-9]+: invalid JSON' "$AKA" journal finalize --state pivot --outcome-json 'summary'
expect_bad 'journal.json: outcome.summary: expected a non-empty summary' \
    "$AKA" journal finalize --state pivot --outcome-json '{"summary":" "}'
expect_bad 'journal.json: candidate_commit: expected a 40-digit' \
    "$AKA" journal finalize --state candidate_ready --outcome-json '{"summary":"s"}'
expect_bad 'journal.json: state: expected pivot .*got in_progress' "$AKA" handoff --status pivot
expect_bad '--status: expected candidate_ready, pivot or blocked; got "done"' "$AKA" handoff --status done
expect_bad '--status: required' "$AKA" handoff
[ ! -e .aka/handoff.json ] || fail "a rejected handoff wrote handoff.json"

expect 0 "$AKA" journal finalize --state candidate_ready --candidate-commit "$HEAD" \
    --outcome-json '{"summary":"vectorized loads: 1.3x","next_directions":["tensor cores"]}'
grep -q "candidate_ready" "$TMP/out" || fail "finalize receipt: $(cat "$TMP/out")"

# 4b. bad input once finalized
expect_bad 'state: expected in_progress to append' "$AKA" journal append --experiment-json '{"late":true}'
expect_bad 'already finalized as candidate_ready' "$AKA" journal finalize --state pivot --outcome-json '{"summary":"s"}'
expect_bad 'handoff.json: candidate_commit: expected a 40-digit .*got nothing' "$AKA" handoff --status candidate_ready
expect_bad '--candidate-commit: expected a 40-digit' "$AKA" handoff --status candidate_ready --candidate-commit "${HEAD:0:12}"
expect_bad "handoff.json: candidate_commit: expected $HEAD" \
    "$AKA" handoff --status candidate_ready --candidate-commit "$BASE"
expect_bad 'journal.json: state: expected blocked .*got candidate_ready' "$AKA" handoff --status blocked
expect_bad 'handoff.json: candidate_commit: expected none when status is pivot' \
    "$AKA" handoff --status pivot --candidate-commit "$HEAD"
[ ! -e .aka/handoff.json ] || fail "a rejected handoff wrote handoff.json"

# The agent's summary carries an ESC sequence and a newline: the receipt shows them escaped.
expect 0 "$AKA" handoff --status candidate_ready --candidate-commit "$HEAD" \
    --summary $'1.3x \e[31mred\nhandoff: forged'
grep -q "candidate_ready $HEAD" "$TMP/out" || fail "handoff receipt: $(cat "$TMP/out")"
[ "$(wc -l <"$TMP/out")" = 1 ] && ! grep -q $'\e' "$TMP/out" &&
    grep -qF ': 1.3x \x1b[31mred\nhandoff: forged' "$TMP/out" ||
    fail "handoff receipt: the summary was not escaped: $(cat -A "$TMP/out")"

python3 - "$WT/.aka" "$BASE" "$HEAD" <<'EOF'
import json, sys
d, base, head = sys.argv[1:]
j = json.load(open(d + "/journal.json"))
h = json.load(open(d + "/handoff.json"))
def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}: journal={j} handoff={h}")
check(j["state"] == "candidate_ready" and j["candidate_commit"] == head, "journal state/commit")
check(j["episode"] == 3 and j["memory_version"] == 4 and j["base_commit"] == base, "journal ids")
check([e.get("idea") for e in j["experiments"]] == ["unroll by 4", "vectorize"], "experiments")
check(all(e.get("timestamp") for e in j["experiments"]), "timestamps")
check(j["experiments"][1]["timestamp"] == "2026-01-01T01:00:00Z", "given timestamp kept")
check(j["experiments"][1]["wiki_refs"] == ["nvidia.h200.hbm-bandwidth"], "wiki_refs kept")
check(j["outcome"] == {"summary": "vectorized loads: 1.3x", "next_directions": ["tensor cores"]},
      "outcome")
check(j["finalized_at"], "finalized_at")
check(h == {"status": "candidate_ready", "candidate_commit": head}, "handoff")
EOF

# A handoff already written: a rejected one leaves it byte-identical.
expect_bad 'journal.json: state: expected pivot' "$AKA" handoff --status pivot
# 5. A journal citing a wiki id that no record has: the handoff is invalid, naming the id,
#    and nothing is written (the supervisor's completion check applies the same rule).
WT2=$TMP/wt2
mkdir -p "$WT2/.aka"
cat >"$WT2/.aka/journal.json" <<EOF
{"schema_version": 1, "episode": 3, "memory_version": 4, "base_commit": "$BASE",
 "episode_branch": "aka/episode-3", "state": "pivot", "experiments": [{"idea": "x",
 "timestamp": "2026-01-01T01:00:00Z", "wiki_refs": ["nvidia.h200.hbm-bandwidth", "nvidia.h200.made-up"]}],
 "outcome": {"summary": "s", "next_directions": []}, "created_at": "2026-01-01T00:00:00Z",
 "finalized_at": "2026-01-01T02:00:00Z", "candidate_commit": null}
EOF
ATREX_AKA_WORKTREE=$WT2 expect 2 "$AKA" handoff --status pivot
grep -q 'experiments\[0\].wiki_refs\[1\]: expected the id of an existing wiki record; got "nvidia.h200.made-up"' \
    "$TMP/err" || fail "missing wiki id: $(cat "$TMP/err")"
[ ! -e "$WT2/.aka/handoff.json" ] || fail "a handoff citing a missing wiki id was written"
echo "journal_handoff: ok"
