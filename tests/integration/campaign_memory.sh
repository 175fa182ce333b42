#!/usr/bin/env bash
# campaign_memory.sh — what a campaign learns reaches the next episode (issue 15), with
# the Claude fake on the CPU (vector_add), three fast episodes in one campaign run:
#   1. the agent profiles twice (`aka profile --from-report` of a hand-written ncu export,
#      then of a rocprofv3 one: the summaries are kept as .aka/profiles/p0001.json and
#      p0002.json), records a dead end citing the first ("profile": "p0001") with its
#      evidence, and a kept experiment, and pivots with two next directions;
#   2. records a failed experiment (reverted) and one direction, and pivots;
#   3. cites a wiki id that no record has and writes its handoff directly (`aka handoff`
#      would refuse it): the supervisor's completion check makes it invalid_handoff,
#      naming the id.
# Checked: episode 1's memory record carries experience (compacted), open_directions and
# profile_evidence (the cited ncu summary's bound, not the newer rocprofv3 one); the profile summary is archived under the
# episode's profiles/ and never committed; the brief of episode 2 shows episode 1's
# directions and dead end with its evidence; the brief of episode 3 shows both earlier
# episodes; episode 3's record names the made-up id; `aka wiki cited` joins each cited id
# to the citing experiment's decision and the episode's outcome.
set -euo pipefail
: "${AKA_BIN:?}" "${AKA_SOURCE_DIR:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/aka-campaign-memory.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ISO=bwrap
"$AKA_BIN" sandbox run -- true >/dev/null 2>&1 || ISO=none
AKA=$AKA_BIN
# shellcheck source=tests/lib/campaign_fixture.sh
. "$AKA_SOURCE_DIR/tests/lib/campaign_fixture.sh"
F=$T/fake
agent_sandbox_setup "$F"
cp -r "$AKA_SOURCE_DIR/examples/ops/vector_add" "$T/op"
cp "$AKA_SOURCE_DIR/tests/fixtures/profile/ncu_raw_sol.csv" "$F/ncu.csv"
cp "$AKA_SOURCE_DIR/tests/fixtures/profile/rocprofv3_counter_collection.csv" "$F/rocprof.csv"

cat >"$F/ep.sh" <<SH
#!/bin/bash
set -euo pipefail
n=\$ATREX_AKA_EPISODE
cp .aka/BRIEF.md "$F/brief-\$n.md"
aka eval >/dev/null 2>&1 || true
cd /
append() { aka journal append --experiment-json "\$1" >/dev/null; }
case \$n in
1)
  aka profile --from-report "$F/ncu.csv" --chip H200 >"$F/profile-1.txt" 2>&1
  aka profile --from-report "$F/rocprof.csv" >/dev/null 2>&1
  append '{"name": "vector width 8", "hypothesis": "wider loads", "change": "float4 x2",
    "profile": "p0001",
    "result": "1.9x slower than the incumbent", "decision": "reject",
    "evidence": "aka eval e1: 41 us vs 22 us", "wiki_refs": ["nvidia.h200.hbm-bandwidth"]}'
  append '{"name": "unroll 4", "hypothesis": "ilp", "change": "unroll", "result": "same",
    "decision": "keep", "notes": {"k": 1}}'
  dirs='["fuse the two loads into one 128-bit load", "try a persistent grid"]' ;;
2)
  append '{"name": "grid stride loop", "hypothesis": "fewer blocks", "change": "grid stride",
    "result": "failed correctness on shape 3", "decision": "revert", "evidence": "max_abs_err 2.0"}'
  dirs='["check the tail handling"]' ;;
3)
  append '{"name": "cite", "hypothesis": "h", "change": "c", "result": "r", "decision": "keep",
    "wiki_refs": ["nvidia.h200.made-up"]}'
  aka journal finalize --state pivot --outcome-json '{"summary": "pivot", "next_directions": []}'
  printf '{"status": "pivot"}\n' >"\$ATREX_AKA_WORKTREE/.aka/handoff.json"
  exit 0 ;;
esac
aka journal finalize --state pivot --outcome-json "{\"summary\": \"pivot \$n\", \"next_directions\": \$dirs}"
aka handoff --status pivot
SH
printf '{"turns":[{"actions":[{"usage":{"input":10,"output":5}},{"sh":"bash %s"}]}]}\n' "$F/ep.sh" >"$F/scenario.json"

AKA_FAKE_SCENARIO="$F/scenario.json" AKA_FAKE_LOG="$F/fake.log" AKA_FAKE_STATE="$F" \
  "$AKA_BIN" optimize --op-dir "$T/op" --platform cpu --framework C --agent-cli claude \
  --agent-cli-path "$AKA_SOURCE_DIR/tests/fakes/fake-claude" --workspace "$T" \
  --sandbox-isolation "$ISO" "${AGENT_FLAGS[@]}" --max-iters 3 --fast-trials 1 \
  --max-stall 10 >"$T/out" 2>"$T/err" || { cat "$T/err" >&2; fail "aka optimize failed"; }
WS=$(ls -d "$T"/kernel_opt_vector_add_*)
grep -q "summary kept as .*/.aka/profiles/p0001.json" "$F/profile-1.txt" ||
  fail "profile not kept: $(cat "$F/profile-1.txt")"

python3 - "$WS" "$F" <<'PY' || fail "memory records / briefs"
import glob, json, os, sys
ws, f = sys.argv[1:]
recs = {}
for p in glob.glob(ws + "/memory/v*.json"):
    m = json.load(open(p))
    if m.get("episode", {}).get("number"):
        recs[m["episode"]["number"]] = m
assert sorted(recs) == [1, 2, 3], sorted(recs)
r1 = recs[1]
ex = r1["experience"]
assert ex["experiment_count"] == 2 and ex["recorded_experiment_count"] == 2, ex
e0, e1 = ex["experiments"]
assert e0["index"] == 1 and e0["decision"] == "reject" and e0["evidence"].startswith("aka eval e1"), e0
assert "wiki_refs" in e0["details"] and e1["details"] == '{"notes":{"k":1}}', (e0, e1)
assert [d["direction"] for d in r1["open_directions"]] == [
    "fuse the two loads into one 128-bit load", "try a persistent grid"], r1["open_directions"]
pe = r1["profile_evidence"]
assert pe["tool_used"] == "ncu" and pe["bottleneck_type"] == "compute", pe
assert pe["evidence_chain"][0]["name"].startswith("gemm_tile_kernel"), pe
assert "roofline: DRAM" in pe["evidence_summary"], pe
assert recs[2]["profile_evidence"]["bottleneck_type"] == "not_profiled", recs[2]["profile_evidence"]
assert recs[3]["status"] == "invalid_handoff", recs[3]["status"]
assert "nvidia.h200.made-up" in recs[3]["quality_gate"]["failure_reason"], recs[3]["quality_gate"]
b2, b3 = (open(f"{f}/brief-{n}.md").read() for n in (2, 3))
for want in ("direction: fuse the two loads into one 128-bit load", "direction: try a persistent grid",
             "dead end: vector width 8: 1.9x slower than the incumbent (evidence: aka eval e1: 41 us vs 22 us)",
             "profile: compute, ncu"):
    assert want in b2 and want in b3, (want, b2)
assert "unroll 4" not in b2, b2  # kept, not a dead end
for want in ("direction: check the tail handling",
             "dead end: grid stride loop: failed correctness on shape 3 (evidence: max_abs_err 2.0)"):
    assert want in b3 and want not in b2, (want, b3)
assert b3.index("check the tail handling") < b3.index("fuse the two loads"), "newest first"
b1 = open(f"{f}/brief-1.md").read()
assert "- v0: baseline" in b1 and "dead end:" not in b1 and "direction:" not in b1, b1
archived = glob.glob(ws + "/.aka/episodes/*1/profiles/p0001.json")
assert archived and json.load(open(archived[0]))["tool"] == "ncu", archived
PY
# Which records helped: citations joined to the citing episode's outcome.
"$AKA_BIN" wiki cited --workspace "$WS" --json >"$T/cited.json" || fail "aka wiki cited"
python3 - "$T/cited.json" <<'PY' || fail "wiki cited: $(cat "$T/cited.json")"
import json, sys
c = {e["id"]: e for e in json.load(open(sys.argv[1]))}
h = c["nvidia.h200.hbm-bandwidth"]
assert h["cited"] == 1 and h["outcomes"] == {"pivot": 1} and h["dispositions"] == {"reject": 1}, h
assert c["nvidia.h200.made-up"]["outcomes"] == {"invalid_handoff": 1}, c
PY
"$AKA_BIN" wiki cited --workspace "$WS" >"$T/cited.txt"
grep -q "^nvidia.h200.hbm-bandwidth: cited 1 time(s); outcomes: pivot x1; dispositions: reject x1" \
  "$T/cited.txt" || fail "wiki cited text: $(cat "$T/cited.txt")"
! git -C "$WS" log --all --name-only --format= | grep -q 'profiles/' || fail "a profile was committed"
echo "campaign_memory: ok"
