#!/usr/bin/env python3
"""report_synth.py TEMPLATE OUT N — a synthetic campaign workspace of N versions for
`aka report` tests (not a test itself).

TEMPLATE is a real workspace that a short built-in-agent campaign left (V0, V1 and at
least one episode: memory/v2.json, .aka/episodes/e0001/). OUT receives a copy of it
(without .git: the report reads no git) whose memory/ holds v0, v1 and then v2..v<N-1>
made from v2's record: every 5th version promoted with a full ABBA verification (8 runs,
interval, threshold), the others rejected, pivot or blocked in turn, each carrying the
incumbent's measurement forward as the engine does; one .aka/episodes/e<NNNN>/ per
episode with the journal and session copied from e0001 and renumbered. Latencies are
made up (a slow, deterministic descent): the records are valid, the numbers are not a
measurement of anything. `aka status OUT` must load the result (the tests check it).
"""
import copy
import hashlib
import json
import os
import shutil
import sys

tmpl, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copytree(tmpl, out, ignore=shutil.ignore_patterns(".git"), symlinks=True)
mem = os.path.join(out, "memory")
for f in os.listdir(mem):
    if f.startswith("v") and f[1:-5].isdigit() and int(f[1:-5]) >= 2:
        os.remove(os.path.join(mem, f))
shutil.rmtree(os.path.join(out, ".aka/episodes"))
v2 = json.load(open(os.path.join(tmpl, "memory/v2.json")))
ep1 = os.path.join(tmpl, ".aka/episodes/e0001")
journal = json.load(open(os.path.join(ep1, "runtime/journal.json")))
session = json.load(open(os.path.join(ep1, "agent/session.json")))
statuses = ["rejected", "pivot", "blocked", "rejected"]


def dump(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def abba(k, lat):
    runs = []
    for rep in range(2):
        for slot, side in enumerate(["incumbent", "candidate", "candidate", "incumbent"]):
            f = 1.0 if side == "incumbent" else 0.97
            runs.append({"repeat": rep, "revision": side, "all_pass": True,
                         "latency_us_geomean": lat * f * (1 + 0.002 * slot),
                         "eval_id": "synth-%d-%d-%d" % (k, rep, slot)})
    return {"method": "same_allocation_abba", "abba_pairs": 2, "improvement_pct": 3.0,
            "ci_low_pct": 1.2, "ci_high_pct": 4.9, "dispersion_pct": 0.4,
            "min_improvement_pct": 1.0, "passed": True, "decision": "promote", "runs": runs}


def record(k, inc_k, inc_rec):
    st = "promoted" if k % 5 == 2 else statuses[k % 4]
    r = copy.deepcopy(v2)
    r.update(version="v%d" % k, status=st, timestamp="2026-01-01T00:%02d:%02dZ" % (k // 60, k % 60))
    r["episode"] = dict(r["episode"], number=k - 1, kind="full", tokens=1000 + k)
    r["long_horizon"] = {"mode": "full", "status": st}
    r["optimization"] = {"action_category": "synthetic", "action_description": "synthetic v%d" % k}
    if st == "promoted":
        r["performance"] = copy.deepcopy(inc_rec["performance"])
        perf = r["performance"]
        perf["latency_us_by_shape"] = {s: v * 0.99 for s, v in perf["latency_us_by_shape"].items()}
        perf["latency_us_geomean"] = perf["latency_us"] = perf["latency_us_geomean"] * 0.99
        r["git_commit_hash"] = hashlib.sha1(b"synthetic %d" % k).hexdigest()
        r["verification"] = abba(k, perf["latency_us_geomean"])
        r["quality_gate"] = {"result": "PASS", "failure_reason": None}
    else:
        r["performance"] = dict(copy.deepcopy(inc_rec["performance"]),
                                carried_from_version="v%d" % inc_k)
        r["git_commit_hash"] = None
        r["quality_gate"] = {"result": "FAIL", "failure_reason": "synthetic " + st}
        r.pop("verification", None)
    return r


inc_k, inc = 1, json.load(open(os.path.join(mem, "v1.json")))
for k in range(2, n):
    r = record(k, inc_k, inc)
    dump(os.path.join(mem, "v%d.json" % k), r)
    if r["status"] == "promoted":
        inc_k, inc = k, r
    e = os.path.join(out, ".aka/episodes/e%04d" % (k - 1))
    j = dict(journal, episode=k - 1, memory_version=k)
    j["outcome"] = dict(j["outcome"], summary="synthetic episode %d" % (k - 1))
    dump(os.path.join(e, "runtime/journal.json"), j)
    dump(os.path.join(e, "agent/session.json"), session)
state = json.load(open(os.path.join(out, ".aka/state.json")))
recs = [json.load(open(os.path.join(mem, "v%d.json" % k)))["status"] for k in range(2, n)]
state.update(episodes=n - 2, accepted=recs.count("promoted"), rejected=recs.count("rejected"),
             pivoted=recs.count("pivot"), blocked=recs.count("blocked"),
             tokens=sum(1000 + k for k in range(2, n)))
dump(os.path.join(out, ".aka/state.json"), state)
live = json.load(open(os.path.join(mem, "live.json")))
live.update(latest_version=n - 1, phase="stop: budget: max-iters (v%d >= %d)" % (n - 1, n - 1))
dump(os.path.join(mem, "live.json"), live)
