# campaign_fixture.sh — sourced by the campaign integration tests (not a test itself).
#
# slow_vector_add SRC DIR: copy examples/ops/vector_add from the source tree SRC to DIR
#   with a reference (the V0 kernel) that stores every element six times through a
#   volatile pointer: correct, but far slower than the seed kernel on any CPU, so
#   "faster" is a large, deterministic margin.
# slow_seed KERNEL: patch a copy of vector_add's seed (seeds/C/kernel.c) so that its
#   default UNROLL (4) repeats its work 8 times through a volatile pointer: every other
#   configuration the built-in tuner tries is several times faster, so a built-in episode
#   always has a candidate that beats the incumbent and goes on to verification (the plain
#   seed's neighbours can land within 1% of it on a loaded machine, and the episode then
#   ends as a pivot).
# write_finish_py PATH: a script `python3 PATH STATE` that leaves what `aka journal` +
#   `aka handoff` would (one experiment, the journal finalized in STATE, the handoff),
#   written directly: for tests about the engine rather than the agent-facing commands.

slow_vector_add() {
  cp -r "$1/examples/ops/vector_add" "$2"
  python3 - "$2/reference.c" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    for (int64_t i = 0; i < n; i++)\n        z[i] = x[i] + y[i];\n"
assert old in s, "examples/ops/vector_add/reference.c changed: update tests/lib/campaign_fixture.sh"
s = s.replace(old, "    volatile float *vz = z; /* slow on purpose: no vectorization */\n"
                   "    for (int rep = 0; rep < 6; rep++)\n"
                   "        for (int64_t i = 0; i < n; i++)\n"
                   "            vz[i] = x[i] + y[i];\n")
open(p, "w").write(s)
PY
}

slow_seed() {
  python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "    int64_t i = 0;\n"
assert old in s, "examples/ops/vector_add/seeds/C/kernel.c changed: update tests/lib/campaign_fixture.sh"
s = s.replace(old, old + """#if UNROLL == 4
    volatile float *slow = z;
    for (int rep = 0; rep < 8; rep++)
        for (int64_t k = 0; k < n; k++)
            slow[k] = x[k] + y[k];
#endif
""")
open(p, "w").write(s)
PY
}

write_finish_py() {
  cat >"$1" <<'PY'
import datetime, json, os, subprocess, sys
state = sys.argv[1]
wt = os.environ["ATREX_AKA_WORKTREE"]
jp, hp = os.path.join(wt, ".aka/journal.json"), os.path.join(wt, ".aka/handoff.json")
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
j = json.load(open(jp))
j["experiments"].append({"name": "trial 1", "hypothesis": "h", "change": "c",
                         "result": "r", "decision": "keep_as_best", "timestamp": now})
head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=wt, check=True,
                      stdout=subprocess.PIPE, text=True).stdout.strip()
j.update(state=state, finalized_at=now, outcome={"summary": "episode " + state, "next_directions": []},
         candidate_commit=head if state == "candidate_ready" else None)
json.dump(j, open(jp + ".tmp", "w")); os.rename(jp + ".tmp", jp)
h = {"status": state}
if state == "candidate_ready":
    h["candidate_commit"] = head
json.dump(h, open(hp + ".tmp", "w")); os.rename(hp + ".tmp", hp)
PY
}

# agent_sandbox_setup FAKEDIR: ASB, the --agent-sandbox this host can run (bwrap when
#   `aka sandbox run` works, else none), and AGENT_FLAGS, the flags of a campaign whose
#   fake agent keeps its scenario, log, turn counter and helper scripts in FAKEDIR
#   (created): the one host directory it may write besides its worktree. Needs $AKA.
agent_sandbox_setup() {
  mkdir -p "$1"
  ASB=bwrap
  "$AKA" sandbox run -- true >/dev/null 2>&1 || ASB=none
  AGENT_FLAGS=(--agent-sandbox "$ASB" --agent-writable-path "$1")
}

# reviewer_pass_step: the fake reviewer's step that writes a complete pass verdict (every
# check of runtime/prompts/policy_review.md passing), as one JSON line for FAKE_*_STEPS.
reviewer_pass_step() {
    python3 - <<'PY'
import json
checks = ["framework_compliance", "compute_provenance", "dependency_inventory",
          "external_code_loading", "solution_manifest"]
v = {"verdict": "pass", "summary": "reviewed: pass",
     "checks": [{"category": c, "decision": "pass", "reason": "r",
                 "evidence": ["candidate/kernel.c:1"]} for c in checks]}
print(json.dumps({"write": "verdict.json", "content": json.dumps(v)}))
PY
}
