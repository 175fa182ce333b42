"""One evaluation from parsed flags to the result object.

This file owns the setup order: device check, operator load, shape selection,
framework check, isolated candidate import, the integrity snapshot, then the
driver over every selected shape. Each step that can fail produces a complete
result with a failure and an actionable diagnostic rather than a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Optional

import torch

from aka_harness import loader
from aka_harness import seeds as sd
from aka_harness import dist
from aka_harness.atrex import AtrexOperator, LayoutError
from aka_harness.cli import EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_USAGE, log
from aka_harness.driver import Driver
from aka_harness.integrity import snapshot
from aka_harness.result import Failure, Result
from aka_harness.sol import SolOperator
from aka_harness.timing import Timer

_SOL_LANGUAGE_FRAMEWORK = {"pytorch": "PyTorch", "triton": "Triton", "cute_dsl": "CuteDSL",
                           "tilelang": "TileLang", "gluon": "Gluon", "flydsl": "FlyDSL"}


def _device(requested: Optional[str]) -> tuple[Optional[torch.device], Optional[str]]:
    if requested == "cpu":
        return torch.device("cpu"), None
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device()), None
    if requested == "cuda":
        return None, "--device cuda: no CUDA device is visible to torch in this sandbox"
    return torch.device("cpu"), None


def _framework(args: argparse.Namespace, source: str, languages: list[str]) -> tuple[str, Optional[str]]:
    """The candidate's framework name, or an error for an unknown --framework."""
    if args.framework:
        name = loader.canonical_framework(args.framework)
        if name is None:
            return "", (f"--framework {args.framework}: unknown; one of "
                        f"{', '.join(loader.FRAMEWORKS)}")
        return name, None
    for lang in languages:
        if lang in _SOL_LANGUAGE_FRAMEWORK and lang != "pytorch":
            return _SOL_LANGUAGE_FRAMEWORK[lang], None
    return loader.guess_framework(source), None


def _select_shapes(ids: list[str], wanted: list[str], generalized: bool) -> tuple[list[str], Optional[str]]:
    if not wanted:
        return ids, None
    opaque = {f"case-{n}": i for n, i in enumerate(ids)} if generalized else {}
    picked: list[str] = []
    for w in wanted:
        real = w if w in ids else opaque.get(w)
        if real is None:
            shown = "" if generalized else f" (known: {', '.join(ids[:20])})"
            return [], f"--shape-id {w}: no such shape{shown}"
        if real not in picked:
            picked.append(real)
    return [i for i in ids if i in picked], None


def _merge_ranks(result: Result, coll: dist.Collective) -> None:
    """Rank 0 takes every rank's verdicts: a shape passes only if it passed everywhere."""
    mine = {"passed": {r.shape_id: r.passed for r in result.shapes},
            "failures": result.failures, "diagnostics": result.diagnostics,
            "errors": (result.max_abs_err, result.max_rel_err)}
    if not coll.active:
        return
    everyone = coll.gather(mine)
    if coll.rank != 0:
        return
    result.failures, result.diagnostics = [], []
    for rank, theirs in enumerate(everyone):
        for rec in result.shapes:
            rec.passed = rec.passed and theirs["passed"].get(rec.shape_id, False)
        for f in theirs["failures"]:
            f.message = f"rank {rank}: {f.message}"
            result.failures.append(f)
        for d in theirs["diagnostics"]:
            result.diagnose(d["stage"], f"rank {rank}: {d['message']}", d.get("shape_id"))
        result.note_errors(*theirs["errors"])
    result.extra["world_size"] = coll.world


def _relaunched(argv: list[str], world: int, result: Result) -> tuple[int, dict[str, Any]]:
    """Run under torchrun and pass rank 0's result through (or a failure if none came)."""
    log(f"distributed contract: world_size {world}; starting {world} ranks")
    code, payload, cmd = dist.relaunch(argv, world)
    if payload is not None:
        return code, payload
    result.setup_failed = True
    msg = f"the distributed run ({cmd}) exited {code} without a result"
    result.failures.append(Failure("*", "environment", msg))
    result.diagnose("environment", msg)
    return (code or EXIT_FAIL), result.to_json()


def evaluate(args: argparse.Namespace, layout: str, evaluator: str, eval_id: str,
             kernel_path: str, kernel_sha: Optional[str],
             argv: Optional[list[str]] = None) -> tuple[int, Optional[dict[str, Any]]]:
    """The whole evaluation; the payload is None on ranks other than 0."""
    device, why = _device(args.device)
    coll = dist.Collective()
    if device is not None and dist.under_launcher():
        device = coll.init(device.type, "nccl")
    base = sd.base_seeds(args.seed, args.multi_seed)
    timer = Timer(device or torch.device("cpu"), args.warmup, args.timed_runs, args.cuda_graph,
                  coll)
    result = Result(evaluator=evaluator, eval_id=eval_id, kernel_sha256=kernel_sha, seeds=base,
                    timing_method=timer.method if args.timed_runs > 0 else "none",
                    warmup=args.warmup, reps=args.timed_runs, l2_flush=timer.l2_flush,
                    generalized=args.generalized)
    result.extra["layout"] = layout

    def abort(code: int, stage: str, message: str) -> tuple[int, dict[str, Any]]:
        result.setup_failed = True
        result.failures.append(Failure("*", stage, message))
        result.diagnose(stage, message)
        log(f"{stage}: {message}")
        return code, result.to_json()

    if device is None:
        return abort(EXIT_ENV, "environment", why or "no device")
    result.extra["device"] = (torch.cuda.get_device_name(device) if device.type == "cuda"
                              else "cpu")
    result.extra["torch_version"] = torch.__version__
    try:
        if layout == "atrex":
            op: Any = AtrexOperator(args.op_dir, device, args.private_shapes, args.atol, args.rtol)
            languages: list[str] = []
        else:
            op = SolOperator(args.op_dir, device, args.private_shapes, args.kernel,
                             args.solution, False if args.no_dps else None)
            languages = op.languages
    except LayoutError as exc:
        return abort(EXIT_USAGE, "setup", f"operator: {exc}")
    world = dist.contract_world_size(op.metadata) if layout == "atrex" else 1
    if world > 1 and not dist.under_launcher():
        return _relaunched(argv or [], world, result)
    ids, bad = _select_shapes(op.shape_ids(), args.shape_id, args.generalized)
    if bad:
        return abort(EXIT_USAGE, "usage", bad)
    result.extra["tolerance"] = op.tolerance_summary()

    if layout == "sol":
        kernel_path = op.kernel_file  # a solution.json's entry file, materialized
    with open(kernel_path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    fw_name, bad = _framework(args, source, languages)
    if bad:
        return abort(EXIT_USAGE, "usage", bad)
    result.extra["framework"] = fw_name
    fw = loader.FRAMEWORKS[fw_name]
    problem = loader.framework_problem(fw, device.type)
    if problem:
        return abort(EXIT_FAIL, "environment", problem)
    loader.prepare_framework_env(fw, device.type)

    check = snapshot()
    try:
        module = loader.import_isolated(kernel_path, "candidate")
        op.attach_candidate(module)
    except loader.LoadError as exc:
        return abort(EXIT_FAIL, exc.stage, exc.message)
    tampered = check()
    if tampered:
        return abort(EXIT_FAIL, "integrity", tampered)

    cases = args.cases or (10 if layout == "sol" else 1)
    result.extra["cases_per_seed"] = cases
    driver = Driver(result, timer, device, base, cases, args.candidate_timeout_s,
                    os.path.abspath(kernel_path), check, coll)
    for sid in ids:
        log(f"shape {sid}: evaluating")
        driver.run_shape(op.shape(sid))
    _merge_ranks(result, coll)
    rank = coll.rank
    coll.close()
    out = result.to_json()
    if rank != 0:
        return (EXIT_OK if out["all_pass"] else EXIT_FAIL), None
    log(f"{out['passed']}/{out['total']} shapes passed; geomean latency "
        f"{out['latency_us_geomean']} us; speedup {out['speedup_vs_ref_geomean']}")
    return (EXIT_OK if out["all_pass"] else EXIT_FAIL), out


if __name__ == "__main__":  # pragma: no cover - use `python3 -m aka_harness`
    sys.exit("run as: python3 -m aka_harness")
