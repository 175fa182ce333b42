"""Test helper: check one harness run's stdout, stderr and exit code.

Used by tests/integration/harness_python.sh. It owns the definition of a
well-formed result: exactly one ``RESULT_JSON=`` line on stdout and nothing
else there, every DESIGN §4.6 field with the right type, exit code 0 iff
all_pass, and the expectations a test case states (which shapes pass, which
fail, what a failure message must say). Prints one line per problem and exits
1 on any.

    check_result.py --name NAME --stdout F --rc N [--pass | --fail]
                    [--fail-shape ID]... [--pass-shape ID]... [--contains TEXT]...
                    [--stage STAGE] [--generalized] [--diag-contains TEXT]
                    [--method M] [--rc-is N] [--print-json]
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

NUM = (int, float)
OPT_NUM = (int, float, type(None))

FIELDS: dict[str, tuple[type, ...]] = {
    "all_pass": (bool,), "total": (int,), "passed": (int,), "failures": (list,),
    "latency_us_by_shape": (dict,), "latency_us_geomean": OPT_NUM,
    "latency_us_arith_mean": OPT_NUM, "speedup_vs_ref_geomean": OPT_NUM,
    "speedup_vs_ref_mean": OPT_NUM, "performance_score": OPT_NUM, "max_abs_err": OPT_NUM,
    "max_rel_err": OPT_NUM, "evaluator": (str,), "eval_id": (str,),
    "kernel_sha256": (str, type(None)), "seeds": (list,), "timing": (dict,),
    "actionable_diagnostics": (list,),
}
TIMING: dict[str, tuple[type, ...]] = {
    "method": (str,), "warmup": (int,), "reps": (int,), "l2_flush": (bool,),
    "cv_by_shape": (dict,),
}


def schema_problems(d: dict[str, Any]) -> list[str]:
    out = []
    for key, types in FIELDS.items():
        if key not in d:
            out.append(f"missing field {key}")
        elif not isinstance(d[key], types) or (bool not in types and isinstance(d[key], bool)):
            out.append(f"field {key} has type {type(d[key]).__name__}")
    timing = d.get("timing") if isinstance(d.get("timing"), dict) else {}
    for key, types in TIMING.items():
        if key not in timing or not isinstance(timing[key], types):
            out.append(f"timing.{key} missing or mistyped")
    if timing.get("method") not in ("cuda_event", "cuda_graph", "cpu_monotonic", "none"):
        out.append(f"timing.method {timing.get('method')!r}")
    for k, v in (d.get("latency_us_by_shape") or {}).items():
        if not isinstance(v, NUM) or isinstance(v, bool) or v <= 0:
            out.append(f"latency_us_by_shape[{k}] = {v!r} is not a positive number")
    for f in d.get("failures") or []:
        if not isinstance(f, dict) or not isinstance(f.get("message"), str) \
                or not isinstance(f.get("shape_id"), str) or not isinstance(f.get("stage"), str):
            out.append(f"malformed failure {f!r}")
    for x in d.get("actionable_diagnostics") or []:
        if not isinstance(x, dict) or not isinstance(x.get("message"), str):
            out.append(f"malformed diagnostic {x!r}")
    if not all(isinstance(s, int) for s in d.get("seeds") or []):
        out.append("seeds must be integers")
    sha = d.get("kernel_sha256")
    if isinstance(sha, str) and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        out.append(f"kernel_sha256 {sha!r} is not a sha256 hex digest")
    if d.get("all_pass") and (d.get("failures") or d.get("passed") != d.get("total")):
        out.append("all_pass with failures or passed != total")
    if d.get("all_pass") and d.get("timing", {}).get("reps", 0) > 0:
        for key in ("latency_us_geomean", "latency_us_arith_mean", "performance_score"):
            if not isinstance(d.get(key), NUM):
                out.append(f"all_pass and timed, but {key} is {d.get(key)!r}")
        if len(d.get("latency_us_by_shape") or {}) != d.get("total"):
            out.append("all_pass and timed, but not every shape has a latency")
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--name", required=True)
    p.add_argument("--stdout", required=True)
    p.add_argument("--rc", type=int, required=True)
    p.add_argument("--pass", dest="want_pass", action="store_true")
    p.add_argument("--fail", dest="want_fail", action="store_true")
    p.add_argument("--fail-shape", action="append", default=[])
    p.add_argument("--pass-shape", action="append", default=[])
    p.add_argument("--contains", action="append", default=[])
    p.add_argument("--stage")
    p.add_argument("--generalized", action="store_true")
    p.add_argument("--diag-contains", action="append", default=[])
    p.add_argument("--method")
    p.add_argument("--rc-is", type=int)
    p.add_argument("--field", action="append", default=[], help="KEY=JSONVALUE (KEY may be dotted)")
    a = p.parse_args()

    problems: list[str] = []
    with open(a.stdout, encoding="utf-8") as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    if len(lines) != 1 or not lines[0].startswith("RESULT_JSON="):
        print(f"FAIL {a.name}: stdout must be exactly one RESULT_JSON line, got {lines[:3]!r}")
        return 1
    try:
        d = json.loads(lines[0][len("RESULT_JSON="):])
    except json.JSONDecodeError as exc:
        print(f"FAIL {a.name}: RESULT_JSON does not parse: {exc}")
        return 1
    problems += schema_problems(d)
    if (a.rc == 0) != bool(d.get("all_pass")):
        problems.append(f"exit code {a.rc} but all_pass={d.get('all_pass')}")
    if a.rc_is is not None and a.rc != a.rc_is:
        problems.append(f"exit code {a.rc}, expected {a.rc_is}")
    if a.want_pass and not d.get("all_pass"):
        problems.append(f"expected a pass; failures: {[f.get('message') for f in d['failures']][:4]}")
    if a.want_fail and d.get("all_pass"):
        problems.append("expected a failure, got all_pass")
    failed_ids = {f.get("shape_id") for f in d.get("failures") or []}
    messages = [f.get("message", "") for f in d.get("failures") or []]
    for sid in a.fail_shape:
        if sid not in failed_ids:
            problems.append(f"no failure for shape {sid} (failed: {sorted(failed_ids)})")
        elif not a.generalized and not any(sid in m for f, m in zip(d["failures"], messages)
                                           if f.get("shape_id") == sid):
            problems.append(f"the failure for shape {sid} does not name it in its message")
    for sid in a.pass_shape:
        if sid in failed_ids:
            problems.append(f"shape {sid} failed but should pass")
        if sid not in d.get("latency_us_by_shape", {}) and d["timing"]["reps"] > 0:
            problems.append(f"shape {sid} passed but has no latency")
    for text in a.contains:
        if not any(text in m for m in messages):
            problems.append(f"no failure message contains {text!r}: {messages[:3]!r}")
    if a.stage and not any(f.get("stage") == a.stage for f in d.get("failures") or []):
        problems.append(f"no failure has stage {a.stage}")
    diags = [x.get("message", "") for x in d.get("actionable_diagnostics") or []]
    for text in a.diag_contains:
        if not any(text in m for m in diags):
            problems.append(f"no diagnostic contains {text!r}: {diags[:3]!r}")
    if a.method and d["timing"].get("method") != a.method:
        problems.append(f"timing.method {d['timing'].get('method')}, expected {a.method}")
    if a.generalized:
        if d.get("hidden_case_details") is not True:
            problems.append("generalized result without hidden_case_details")
        for f in d.get("failures") or []:
            if not str(f.get("shape_id", "")).startswith("case-") and f.get("shape_id") != "*":
                problems.append(f"generalized failure names a real shape id: {f}")
            for key in ("first_mismatch_index", "max_abs_err", "max_rel_err"):
                if key in f:
                    problems.append(f"generalized failure carries {key}")
        for k in d.get("latency_us_by_shape", {}):
            if not k.startswith("case-"):
                problems.append(f"generalized latency keyed by a real id {k}")
    for item in a.field:  # KEY may be dotted (judge.cross_check_retimed), a part a list index
        key, _, raw = item.partition("=")
        got: object = d
        for part in key.split("."):
            if isinstance(got, list) and part.isdigit():
                got = got[int(part)] if int(part) < len(got) else None
            else:
                got = got.get(part) if isinstance(got, dict) else None
        if got != json.loads(raw):
            problems.append(f"{key} = {got!r}, expected {raw}")
    if problems:
        for pr in problems:
            print(f"FAIL {a.name}: {pr}")
        return 1
    print(f"ok   {a.name}: all_pass={d['all_pass']} passed={d['passed']}/{d['total']} "
          f"geomean_us={d['latency_us_geomean']} failures={len(d['failures'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
