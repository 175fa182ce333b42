"""``--official``: the operator owner's evaluator as the correctness and timing authority.

This file owns finding the official evaluators inside the sandbox runtime, running them
on the candidate, and turning what they write into the same RESULT_JSON the judge writes
(result.py), so that aka reads either the same way:

* Atrex-Bench: ``scripts/run_eval.py`` (from ``ATREX_BENCH_ROOT``, else beside the
  installed ``atrex_bench`` package in a source checkout), run as ``run_eval.py --input
  KERNEL --reference-dir OP --output DIR --num-correctness-cases N``; it writes
  ``DIR/<timestamp>/<operator>/eval_result.json`` and prints ``[OUTPUT] <path>``. Its
  timing is ``triton.testing.do_bench``'s mean; it does not time the reference, so the
  result has no speedup.
* SOL-ExecBench: the ``sol-execbench`` console script, run as ``sol-execbench OP
  --solution SOLUTION.json -o traces.jsonl``; one trace per workload. Its latency is
  CUPTI's median over the kernels' span, with the reference timed the same way.

The formats are the ones recorded in the project's reference notes; they are checked
against fakes and against what the real tools wrote on an H200 (session 11,
tests/harness/python/test_official.py with fixtures/official/).

What this gives up, and why it is not the default: both official evaluators run the
candidate in their own process, beside their timer and their reference outputs. None of
the judge's defences (separate processes, fresh secret inputs per timed run, the timing
cross-checks) applies, so a hostile candidate can forge what they report. ``aka eval
--evaluator official`` is for comparing numbers with the owners' leaderboards; campaigns
never use it to promote. When the tool is not installed the judge runs instead and says
so in the diagnostics.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any, Optional

from aka_harness.result import Failure, Result, ShapeRecord

# SOL-ExecBench trace statuses → the judge's failure stages.
_SOL_STAGES = {"COMPILE_ERROR": "compile_import", "RUNTIME_ERROR": "candidate_runtime",
               "TIMEOUT": "candidate_runtime", "INCORRECT_SHAPE": "structure",
               "INCORRECT_DTYPE": "structure", "INCORRECT_NUMERICAL": "correctness",
               "REWARD_HACK": "integrity", "INVALID_REFERENCE": "reference_runtime"}
_LOG_TAIL = 2000  # characters of an official log kept in a failure message


def find_atrex() -> tuple[Optional[str], str]:
    """(path of Atrex-Bench's run_eval.py, where it was looked for)."""
    root = os.environ.get("ATREX_BENCH_ROOT")
    if root:
        path = os.path.join(root, "scripts", "run_eval.py")
        return (path if os.path.isfile(path) else None), f"ATREX_BENCH_ROOT={root}"
    spec = importlib.util.find_spec("atrex_bench")
    if spec is None or not spec.origin:
        return None, "ATREX_BENCH_ROOT unset and no atrex_bench package"
    # A source checkout: <root>/src/atrex_bench/__init__.py next to <root>/scripts/.
    root = os.path.dirname(os.path.dirname(os.path.dirname(spec.origin)))
    path = os.path.join(root, "scripts", "run_eval.py")
    return (path if os.path.isfile(path) else None), f"the atrex_bench package at {root}"


def find_sol() -> tuple[Optional[str], str]:
    """(path of the sol-execbench console script, where it was looked for)."""
    path = shutil.which("sol-execbench")
    return path, "sol-execbench on PATH"


def _run(argv: list[str], timeout_s: float) -> tuple[int, str]:
    """Run an official tool; (exit code, its stdout). Its stderr goes to ours (the log)."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=sys.stderr, text=True,
                           timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return 124, ""
    return p.returncode, p.stdout


def _record(result: Result, sid: str) -> ShapeRecord:
    rec = ShapeRecord(sid)
    result.shapes.append(rec)
    return rec


def _fail(result: Result, rec: ShapeRecord, stage: str, message: str) -> None:
    rec.passed = False
    rec.latency_us = None
    result.failures.append(Failure(rec.shape_id, stage, message))
    result.diagnose(stage, message, rec.shape_id)


def _fail_all(result: Result, stage: str, message: str) -> None:
    """A run that produced nothing per shape: every field present, nothing measured."""
    result.setup_failed = True
    result.failures.append(Failure("*", stage, message))
    result.diagnose(stage, message)


def _ok(status: Any) -> bool:
    return status is True or str(status).lower() in ("passed", "pass", "ok", "true")


# ---- Atrex-Bench ------------------------------------------------------------------------


def atrex_result(doc: dict[str, Any], result: Result, wanted: list[str]) -> None:
    """Atrex-Bench's eval_result.json into result: per shape, compile and correctness
    status, the worst output errors, and the latency (mean of the samples, as do_bench
    reports; the median kept beside it)."""
    if doc.get("error"):
        _fail_all(result, "candidate_runtime", f"the official evaluator: {doc['error']}")
        return
    passed = doc.get("passed") or {}
    compile_ = passed.get("compile") or {}
    correct = passed.get("correctness") or {}
    cases = (doc.get("correctness") or {}).get("shapes") or {}
    perf = (doc.get("performance") or {}).get("shapes") or {}
    ids = [s for s in wanted if s in correct or s in perf] if wanted else sorted(correct)
    for sid in ids:
        rec = _record(result, sid)
        # passed.compile is per shape, or one {status, reason} for the whole module.
        comp = compile_.get(sid, compile_) if isinstance(compile_, dict) else {}
        if comp and "status" in comp and not _ok(comp["status"]):
            _fail(result, rec, "compile_import", f"shape {sid}: {comp.get('reason')}")
            continue
        _atrex_errors(result, cases.get(sid) or {})
        verdict = correct.get(sid) or {}
        if not _ok(verdict.get("status")):
            _fail(result, rec, "correctness", f"shape {sid}: {verdict.get('reason')}")
            continue
        _atrex_latency(result, rec, perf.get(sid) or {})


def _atrex_errors(result: Result, shape: dict[str, Any]) -> None:
    for case in shape.get("cases") or []:
        for out in case.get("outputs") or []:
            result.note_errors(out.get("max_elementwise_abs_diff"),
                               out.get("max_elementwise_rel_diff"))


def _atrex_latency(result: Result, rec: ShapeRecord, perf: dict[str, Any]) -> None:
    samples = [1e3 * float(s["end_to_end_time_ms"]) for s in perf.get("samples") or []
               if isinstance(s.get("end_to_end_time_ms"), (int, float))
               and s["end_to_end_time_ms"] > 0]
    if perf.get("error") or not samples:
        _fail(result, rec, "timing", f"shape {rec.shape_id}: no latency: "
                                     f"{perf.get('error') or 'no positive sample'}")
        return
    rec.mean_us, rec.median_us = statistics.fmean(samples), statistics.median(samples)
    rec.latency_us = rec.mean_us


def run_atrex(args: argparse.Namespace, run_eval: str, result: Result) -> int:
    with tempfile.TemporaryDirectory(prefix="aka_official_") as out:
        argv = [sys.executable, run_eval, "--input", os.path.abspath(args.kernel),
                "--reference-dir", os.path.abspath(args.op_dir), "--output", out,
                "--num-correctness-cases", str(max(1, args.multi_seed))]
        code, stdout = _run(argv, args.official_timeout_s)
        found = [ln.split("]", 1)[1].strip() for ln in stdout.splitlines()
                 if ln.startswith("[OUTPUT]")]
        paths = found or sorted(glob.glob(os.path.join(out, "**", "eval_result.json"),
                                          recursive=True))
        if not paths or not os.path.isfile(paths[-1]):
            _fail_all(result, "candidate_runtime",
                      f"the official evaluator (exit {code}) wrote no eval_result.json")
            return code
        with open(paths[-1], encoding="utf-8") as f:
            atrex_result(json.load(f), result, args.shape_id)
        result.timing_method = "cuda_event"
        return code


# ---- SOL-ExecBench ----------------------------------------------------------------------


def sol_solution(args: argparse.Namespace, definition: str, where: str) -> str:
    """The candidate as a solution JSON: its own when it is one, else kernel.py wrapped
    (entry ``kernel.py::run``; DPS unless --no-dps), written under ``where``."""
    kernel = args.kernel.split("::", 1)[0]
    if kernel.endswith(".json"):
        return os.path.abspath(kernel)
    with open(kernel, encoding="utf-8") as f:
        source = f.read()
    entry = args.kernel.split("::", 1)[1] if "::" in args.kernel else "run"
    language = (args.framework or "pytorch").lower().replace("cutedsl", "cute_dsl")
    doc = {"name": "aka-candidate", "definition": definition, "author": "aka",
           "spec": {"languages": [language], "target_hardware": ["LOCAL"],
                    "entry_point": f"kernel.py::{entry}",
                    "destination_passing_style": not args.no_dps},
           "sources": [{"path": "kernel.py", "content": source}]}
    path = os.path.join(where, "solution.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return path


def sol_result(traces: list[dict[str, Any]], result: Result, wanted: list[str]) -> None:
    """SOL-ExecBench traces into result: one shape per workload uuid."""
    for trace in traces:
        sid = str((trace.get("workload") or {}).get("uuid") or "?")
        if wanted and sid not in wanted:
            continue
        rec = _record(result, sid)
        ev = trace.get("evaluation") or {}
        status = str(ev.get("status") or "missing")
        corr = ev.get("correctness") or {}
        result.note_errors(corr.get("max_absolute_error"), corr.get("max_relative_error"))
        if status != "PASSED":
            log = str(ev.get("log") or "")[-_LOG_TAIL:]
            _fail(result, rec, _SOL_STAGES.get(status, "candidate_runtime"),
                  f"workload {sid}: {status}" + (f": {log}" if log else ""))
            continue
        perf = ev.get("performance") or {}
        rec.latency_us = rec.median_us = 1e3 * float(perf.get("latency_ms") or 0) or None
        ref = 1e3 * float(perf.get("reference_latency_ms") or 0)
        rec.ref_latency_us = ref if ref > 0 else None
        if rec.latency_us is None:
            _fail(result, rec, "timing", f"workload {sid}: no latency in the trace")


def run_sol(args: argparse.Namespace, sol: str, result: Result) -> int:
    with open(os.path.join(args.op_dir, "definition.json"), encoding="utf-8") as f:
        definition = str(json.load(f).get("name", ""))
    with tempfile.TemporaryDirectory(prefix="aka_official_") as out:
        solution = sol_solution(args, definition, out)
        traces_path = os.path.join(out, "traces.jsonl")
        code, _ = _run([sol, os.path.abspath(args.op_dir), "--solution", solution, "-o",
                        traces_path], args.official_timeout_s)
        traces = []
        if os.path.isfile(traces_path):
            with open(traces_path, encoding="utf-8") as f:
                traces = [json.loads(ln) for ln in f if ln.strip().startswith("{")]
        if not traces:
            _fail_all(result, "candidate_runtime",
                      f"the official evaluator (exit {code}) wrote no traces")
            return code
        sol_result(traces, result, args.shape_id)
        result.timing_method = "cupti_kernel_span"  # the official timing module's method
        return code


def evaluate(args: argparse.Namespace, layout: str, eval_id: str,
             kernel_sha: Optional[str]) -> Optional[tuple[int, dict[str, Any]]]:
    """(exit code, result) from the owner's evaluator; None when it is not installed (the
    caller falls back to the judge and says why)."""
    tool, where = find_atrex() if layout == "atrex" else find_sol()
    if tool is None:
        args.official_missing = f"no official {layout} evaluator ({where})"
        return None
    name = "atrex-bench" if layout == "atrex" else "sol-execbench"
    result = Result(evaluator=f"official.{name}", eval_id=eval_id, kernel_sha256=kernel_sha,
                    seeds=[0], timing_method="none", warmup=0, reps=1, l2_flush=True,
                    latency_statistic="mean" if layout == "atrex" else "median")
    code = (run_atrex if layout == "atrex" else run_sol)(args, tool, result)
    out = result.to_json()
    if code != 0 and out["all_pass"]:  # a clean-looking result from a failed run
        result.failures.append(Failure("*", "candidate_runtime",
                                       f"the official evaluator exited {code}"))
        out = result.to_json()
    return (0 if out["all_pass"] else 1), out
