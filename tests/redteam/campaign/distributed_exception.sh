#!/bin/bash
# distributed_exception.sh — the distributed exception in a real production campaign (issue 14
# must-show 3; DESIGN §4.3; docs/production.md). The operator is examples/ops/allreduce_sum
# (a valid world_size 2 contract) made small and given a slow reference (below), run on the
# CPU stand-in (docs/platforms.md): --platform cpu --framework PyTorch, the two ranks on
# Gloo. Each case starts from the same production V0 with the fake Claude CLI as agent and
# requires the named outcome in the episode's record:
#   1. unreviewed  a fast kernel that is plain PyTorch compute on the forward path (what the
#                  source policy refuses: `aka policy check` says so first) and no reviewer
#                  verdict at all: promoted; the record's typed exception entry and its
#                  source and reviewer "skipped" with the contract's reason; the reviewer
#                  never started; the judge's probes ran and passed;
#   2. wrong       the sum negated: rejected by verification (correctness);
#   3. probe       the sum clamped to [-16, 16]: exact on the evaluator's inputs, wrong at
#                  x1e3: rejected by the numerical probes, the probe named;
#   4. slow        the right sum after 40 ms of busy waiting: not promoted (the gate);
#   5. metadata    the agent writes a metadata.json without the distributed contract
#                  (world_size 1) into its worktree and the original operator directory,
#                  with a kernel that is right only for one rank (no all_reduce): rejected by
#                  correctness on the pinned two ranks; the record's exception still says
#                  world_size 2; and a second start of the campaign, whose original now
#                  says single-GPU, still runs on the pinned contract.
# Skipped (77) without the sandbox's python3 with torch and Gloo, or without bwrap.
# Environment: AKA_BIN (the aka binary), AKA_SOURCE_DIR (the source tree).
set -euo pipefail
. "${AKA_SOURCE_DIR:?}/tests/lib/hostile_campaign.sh"
# The sandbox resolves python3 from the caller's PATH: the system one, which has torch
# (scripts/deps.sh installs python3-torch), as tests/integration/eval_python.sh does.
export PATH=/usr/local/bin:/usr/bin:/bin
python3 -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
  { echo "SKIP: no torch with Gloo for the sandbox's python3"; exit 77; }
HOSTILE_MODE=production FRAMEWORK=PyTorch KERNEL=kernel.py WS_BASE=kernel_opt_op_pytorch_cpu
hostile_common
"$AKA" sandbox run -- true >/dev/null 2>&1 || { echo "SKIP: no bwrap sandbox here"; exit 77; }

# The operator: two small shapes (the probes take the smallest and the largest), and a
# reference that busy-waits 6 ms per call after its all_reduce, so "faster" and "slower"
# are margins of milliseconds against the collective's own jitter on a loaded CPU.
cp -r "$SRC/examples/ops/allreduce_sum" "$OP_PRISTINE"
python3 - "$OP_PRISTINE" <<'PY'
import json, os, sys
d = sys.argv[1]
def edit(name, f):
    p = os.path.join(d, name)
    doc = json.load(open(p))
    f(doc)
    json.dump(doc, open(p, "w"), indent=2)
shapes = {"0": 256, "1": 4096}
json.dump({k: {"init_kwargs": None, "input_kwargs": {"num_elements": n}} for k, n in shapes.items()},
          open(os.path.join(d, "shapes.json"), "w"), indent=2)
edit("metadata.json", lambda m: m.update(shapes={k: {"description": "small"} for k in shapes}))
edit("roofline.json", lambda r: r.update(shapes={k: r["shapes"][k] for k in shapes}))
p = os.path.join(d, "reference.py")
s = open(p).read()
old = "        return out\n"
assert s.count(old) == 1, "examples/ops/allreduce_sum/reference.py changed: update this test"
s = "import time\n" + s.replace(old, "        t = time.perf_counter()  # slow on purpose\n"
                                      "        while time.perf_counter() - t < 0.006:\n"
                                      "            pass\n" + old)
open(p, "w").write(s)
PY
cp -r "$OP_PRISTINE" "$OP"
base_campaign

model() { # FORWARD_BODY: a candidate kernel.py whose forward is the given lines
  printf '%s\n' "import time" "import torch" "import torch.distributed as dist" \
    "import torch.nn as nn" "" "" "class Model(nn.Module):" "    def __init__(self):" \
    "        super().__init__()" "" "    def forward(self, x: torch.Tensor) -> torch.Tensor:" \
    "$1"
}
REDUCE='        out = x.clone()
        dist.all_reduce(out, op=dist.ReduceOp.SUM)'
FAST=$(model "$REDUCE
        return out")
candidate() { # KERNEL_TEXT [ACTIONS_BEFORE]: one episode that commits it, evaluates, hands off
  episode "${2:+$2,}"'{"write":"kernel.py","content":'"$(jstr "$1")"'},'"$COMMIT,$EVAL,$FINISH"
  [ "$RC" = 0 ] || { cat "$TMP/err" >&2; fail "aka optimize exit $RC"; }
}
violation() { record_field "${2:-1}" 'm["episode"]["violation"]'; }
check_exception() { # NAME [V]: the record's typed exception entry and both skips
  local v=${2:-1}
  [ "$(record_field "$v" 'm["exception"]["kind"]')" = distributed ] || fail "$1: no exception entry"
  [ "$(record_field "$v" 'm["exception"]["world_size"]')" = 2 ] || fail "$1: exception world_size"
  [ "$(record_field "$v" '",".join(m["exception"]["enforced"])')" = \
    correctness,numerical_probes,performance ] || fail "$1: exception enforced list"
  [ "$(record_field "$v" 'm["policy"]["source"]["skipped"]')" = "distributed exception" ] ||
    fail "$1: source policy not recorded as skipped"
  [ "$(record_field "$v" 'm["policy"]["reviewer"]["outcome"]')" = skipped ] ||
    fail "$1: reviewer not recorded as skipped"
  record_field "$v" 'm["policy"]["reviewer"]["reason"]' | grep -q "world_size 2" ||
    fail "$1: the reviewer's skip has no reason"
  [ "$(cat "$TMP/fake-invocations")" = 1 ] || fail "$1: the fake CLI ran again (a reviewer)"
}

judged_wrong() { # NAME V: rejected because the judge's run of this very kernel on both
  # ranks failed correctness (the evaluation record aka eval wrote, which fast verification
  # requires to pass)
  local v=$2 n commit sha
  violation "$v" | grep -q "fast verification: no complete passing \`aka eval\` record" ||
    fail "$1: v$v not rejected by verification: $(violation "$v")"
  n=$(record_field "$v" 'm["episode"]["number"]')
  commit=$(record_field "$v" 'm["episode"]["candidate_commit"]')
  sha=$(git -C "$WS" show "$commit:$KERNEL" | sha256sum | cut -d' ' -f1)
  python3 - "$WS/.aka/episodes/e$(printf %04d "$n")/runtime/evaluations.jsonl" "$sha" <<'PY' ||
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mine = [r for r in recs if r.get("kernel_sha256") == sys.argv[2]]
assert mine, "no evaluation of the committed kernel"
for r in mine:
    res = r["result"]
    assert not r["all_pass"] and res["world_size"] == 2, (r["all_pass"], res.get("world_size"))
    text = " ".join(res["failures"])
    assert "rank 0" in text and "rank 1" in text and "outside atol" in text, text
PY
    fail "$1: v$v: the judge's evaluation is not a correctness failure on two ranks"
}

case_unreviewed() {
  new_case unreviewed
  printf '%s\n' "$FAST" >"$TMP/fast.py"
  local rc=0
  "$AKA" policy check --framework Triton --kernel "$TMP/fast.py" >"$TMP/policy" 2>&1 || rc=$?
  [ "$rc" = 1 ] && grep -q torch-compute "$TMP/policy" ||
    fail "unreviewed: the candidate is not one the source policy refuses (exit $rc)"
  candidate "$FAST"
  [ "$(record_field 1 'm["status"]')" = promoted ] || fail "unreviewed: not promoted: $(violation)"
  check_exception unreviewed
  [ "$(record_field 1 'm["probes"]["result"]["passed"]')" = True ] || fail "unreviewed: probes"
  # The judge's own probes[] in the record: every case of the plan on every shape, per rank.
  [ "$(record_field 1 'len(m["probes"]["result"]["probes"]) == 2 * len(m["probes"]["plan"]["cases"]) * len(m["probes"]["plan"]["shapes"]) and {p["id"].split("#")[1] for p in m["probes"]["result"]["probes"]} == {"rank0", "rank1"}')" = True ] ||
    fail "unreviewed: the record lacks the judge's probes on both ranks"
  ok "1 unreviewed: a PyTorch-compute kernel promoted, inspection and reviewer skipped, probes run"
}

case_wrong() {
  new_case wrong
  candidate "$(model "$REDUCE
        return -out")"
  no_promotion wrong
  check_exception wrong
  judged_wrong wrong 1
  ok "2 wrong: the negated sum rejected by correctness"
}

case_probe() {
  new_case probe
  candidate "$(model "$REDUCE
        return out.clamp(-16.0, 16.0)")"
  no_promotion probe
  check_exception probe
  [ "$(record_field 1 'm["verification"]["passed"]')" = True ] ||
    fail "probe: the ordinary verification did not pass (the test needs it to)"
  violation | grep -q "numerical probes: .*numerical probe magnitude_1e3" ||
    fail "probe: the violation does not name the probe: $(violation)"
  ok "3 probe: correct at scale 1, rejected by the magnitude_1e3 probe"
}

case_slow() {
  new_case slow
  candidate "$(model "$REDUCE
        t = time.perf_counter()
        while time.perf_counter() - t < 0.040:
            pass
        return out")"
  no_promotion slow
  check_exception slow
  # Correct (the judge passed it) and stopped by the gate alone.
  violation | grep -q "fast verification: .* (performance_score) is not above" ||
    fail "slow: not stopped by the performance gate: $(violation)"
  [ "$(record_field 1 'm["verification"]["candidate_latency_us"] > m["verification"]["incumbent_latency_us"]')" = True ] ||
    fail "slow: the verification did not measure it slower"
  ok "4 slow: the right sum, 40 ms later, not promoted by the performance gate"
}

case_metadata() {
  new_case metadata
  cat >"$TMP/meta.json" <<'JSON'
{"hardware": {"required_gpus": 1}}
JSON
  local one_rank v
  one_rank=$(model "        return x.clone()")
  for v in 1 2; do
    candidate "$one_rank" '{"sh":"cp '"$TMP"'/meta.json metadata.json && cp '"$TMP"'/meta.json '"$OP"'/metadata.json"}'
    cmp -s "$TMP/meta.json" "$OP/metadata.json" || fail "metadata: the agent's write did not land"
    check_exception metadata "$v"
    judged_wrong metadata "$v" # on one rank, the kernel would have been right
  done
  no_promotion metadata
  grep -q '"world_size": 2' "$WS/.aka/campaign.json" || fail "metadata: campaign.json changed"
  ok "5 metadata: a candidate's metadata.json changes nothing; two starts ran on two ranks"
}

run_cases unreviewed wrong probe slow metadata
