"""Command line, stdout discipline and the top-level flow of one evaluation.

This file owns:

* the flags (``python3 -m aka_harness --help``);
* stdout: file descriptor 1 is duplicated at start and then pointed at stderr,
  so prints from this process, from the runner processes it starts (which
  inherit the redirected descriptor, never the saved one) or from C extensions
  can never corrupt or forge the result; only ``RESULT_JSON=`` is written to
  the saved descriptor, exactly once, whatever happens;
* the judge's own hardening, first thing: no longer dumpable (confine.py);
* the flow: parse and check flags, then hand over to judge.py, which runs the
  reference and the candidate in separate processes and decides;
* exit codes: 0 iff all_pass; 1 when the candidate fails; 2 for usage or
  operator errors; 75 when the requested device is not available.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import sys
import time
from typing import Any, Optional

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_ENV = 0, 1, 2, 75


class UsageError(Exception):
    """A bad flag or flag combination (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # never exit from inside argparse
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python3 -m aka_harness",
                description="aka's PyTorch-layout evaluator: correctness and timing of one "
                            "candidate against an Atrex-Bench or SOL-ExecBench operator. "
                            "Prints exactly one RESULT_JSON= line on stdout; exit 0 iff all "
                            "cases pass.")
    p.add_argument("--layout", choices=("atrex", "sol"),
                   help="operator layout (default: detected from --op-dir)")
    p.add_argument("--op-dir", required=True, help="the operator directory")
    p.add_argument("--kernel", required=True,
                   help="candidate Python file; SOL accepts FILE::FUNCTION")
    p.add_argument("--framework", help="Triton, Gluon, CuteDSL, TileLang, FlyDSL, Cuda or "
                                       "PyTorch (default: guessed from the candidate's imports)")
    p.add_argument("--device", choices=("cpu", "cuda"),
                   help="evaluation device (default: cuda when available, else cpu)")
    p.add_argument("--shape-id", action="append", default=[],
                   help="evaluate only this shape id / workload uuid (repeatable)")
    p.add_argument("--multi-seed", type=int, default=1, metavar="N",
                   help="correctness for N base seeds: --seed, --seed+1, ... (default 1)")
    p.add_argument("--seed", type=int, default=0, help="first base seed (default 0)")
    p.add_argument("--cases", type=int, metavar="N",
                   help="correctness cases per seed and shape (default: atrex 1, sol 10)")
    p.add_argument("--timed-runs", type=int, default=100, metavar="N",
                   help="timed launches per shape after warm-up; 0 skips timing (default 100)")
    p.add_argument("--warmup", type=int, default=10, metavar="N",
                   help="untimed launches before timing (default 10)")
    p.add_argument("--official", action="store_true",
                   help="the operator owner's evaluator (Atrex-Bench run_eval.py, "
                        "sol-execbench) decides, when installed; else this judge does, and "
                        "says so. It runs the candidate in its own process: for comparing "
                        "numbers, never for promotion (official.py)")
    p.add_argument("--official-timeout-s", type=float, default=1800.0, metavar="S",
                   help="--official: the official evaluator's time limit (default 1800)")
    p.add_argument("--time-budget-ms", type=int, default=0, metavar="MS",
                   help="a shape's timed runs per runner fit in MS, judged from the "
                        "reference's slowest correctness call (at least 3 runs); 0: no "
                        "budget (default; aka eval passes its own)")
    p.add_argument("--cuda-graph", action="store_true",
                   help="time CUDA-graph replays of one captured launch")
    p.add_argument("--generalized", action="store_true",
                   help="mask per-case details (shape ids become case-<n>)")
    p.add_argument("--private-shapes", metavar="FILE",
                   help="shapes.json (atrex) or workload.jsonl (sol) that replaces the op dir's")
    p.add_argument("--probes", metavar="FILE",
                   help="the supervisor's numerical probe plan (aka writes it): one correctness "
                        "case per probe, compared by relative L2 error")
    p.add_argument("--eval-id", help="id recorded in the result (default: generated)")
    p.add_argument("--atol", type=float, help="atrex: absolute tolerance override")
    p.add_argument("--rtol", type=float, help="atrex: relative tolerance override")
    p.add_argument("--solution", metavar="FILE",
                   help="sol: solution.json for the entry point and destination-passing style "
                        "(default: the one beside the kernel, if any)")
    p.add_argument("--no-dps", action="store_true",
                   help="sol: the entry function returns its outputs (value-returning)")
    p.add_argument("--candidate-timeout-s", type=float, default=120.0,
                   help="limit per call of the candidate; 0 disables (default 120)")
    p.add_argument("--fresh-input-budget-mib", type=int, default=2048, metavar="MIB",
                   help="memory for the distinct input sets of one shape's timed runs; a "
                        "shape whose sets do not all fit reuses fewer sets in a secret "
                        "order (default 2048)")
    p.add_argument("--timed-inputs", choices=("auto", "seeded", "sent"), default="auto",
                   help="how a timed run gets its fresh inputs: 'seeded', the runner builds "
                        "them from a secret seed the judge sends with the run (nothing large "
                        "crosses the pipe); 'sent', the judge sends them; 'auto' (default): "
                        "seeded on a GPU when the operator's input builder is repeatable, "
                        "else sent")
    p.add_argument("--timing", choices=("auto", "events", "kernel-span"), default="auto",
                   help="how a GPU call is timed: 'events', CUDA events around the call; "
                        "'kernel-span', CUPTI's first kernel start to last kernel end "
                        "(SOL-ExecBench's method); 'auto' (default): kernel-span for "
                        "SOL-ExecBench operators, events otherwise. Without CUPTI a "
                        "kernel-span request falls back to events and the result says so")
    p.add_argument("--allow-unconfined", action="store_true",
                   help="run even when the candidate process cannot be confined (no Landlock); "
                        "its code could then reach the result channel: never for untrusted "
                        "candidates")
    return p


def detect_layout(op_dir: str) -> str:
    """sol when definition.json and workload.jsonl exist, atrex when shapes.json does."""
    has = lambda name: os.path.isfile(os.path.join(op_dir, name))  # noqa: E731
    if has("definition.json") and has("workload.jsonl"):
        return "sol"
    if has("reference.py") and has("input.py"):
        return "atrex"
    raise UsageError(f"{op_dir}: neither a SOL-ExecBench (definition.json + workload.jsonl) "
                     f"nor an Atrex-Bench (reference.py + input.py + shapes.json) operator; "
                     f"pass --layout")


def new_eval_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(4)


def sha256_file(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _redirect_stdout() -> Any:
    """Point fd 1 at stderr; return a file object on the real stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(saved, "w", encoding="utf-8")


def log(msg: str) -> None:
    print(f"[aka_harness] {msg}", file=sys.stderr, flush=True)


def _bare_result(evaluator: str, eval_id: str, kernel_sha: Optional[str], stage: str,
                 message: str) -> dict[str, Any]:
    """A result for a run that could not start: every field present, nothing measured."""
    from aka_harness.result import Failure, Result

    r = Result(evaluator=evaluator, eval_id=eval_id, kernel_sha256=kernel_sha, seeds=[],
               timing_method="none", warmup=0, reps=0, l2_flush=False, setup_failed=True)
    r.failures.append(Failure("*", stage, message))
    r.diagnose(stage, message)
    return r.to_json()


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:  # help is not an evaluation: no RESULT_JSON
        build_parser().print_help()
        return EXIT_OK
    from aka_harness.confine import harden_judge

    harden_judge()
    real_stdout = _redirect_stdout()
    try:
        code, payload = _run(argv)
    except Exception as exc:  # an internal error is still one well-formed result
        import traceback

        traceback.print_exc()
        code, payload = EXIT_FAIL, _bare_result("aka.python", new_eval_id(), None, "harness",
                                                f"internal harness error: "
                                                f"{type(exc).__name__}: {exc}")
    from aka_harness.result import emit

    if payload is not None:  # ranks other than 0 of a distributed run print nothing
        emit(payload, real_stdout)
    return code


def _run(argv: list[str]) -> tuple[int, Optional[dict[str, Any]]]:
    eval_id = new_eval_id()
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        return EXIT_USAGE, _bare_result("aka.python", eval_id, None, "usage", str(exc))
    eval_id = args.eval_id or eval_id
    kernel_path = args.kernel.split("::", 1)[0]
    kernel_sha = sha256_file(kernel_path)
    try:
        layout = args.layout or detect_layout(args.op_dir)
    except UsageError as exc:
        return EXIT_USAGE, _bare_result("aka.python", eval_id, kernel_sha, "usage", str(exc))
    evaluator = f"aka.python.{layout}"
    bad = _check_args(args, kernel_path)
    if bad:
        return EXIT_USAGE, _bare_result(evaluator, eval_id, kernel_sha, "usage", bad)
    if args.official:
        from aka_harness import official

        done = official.evaluate(args, layout, eval_id, kernel_sha)
        if done is not None:
            return done
    groups, confiner = _start_runners(args, layout)
    from aka_harness.judge import evaluate

    code, payload = evaluate(args, layout, evaluator, eval_id, kernel_path, kernel_sha,
                             confiner, groups)
    missing = getattr(args, "official_missing", None)
    if missing and payload is not None:  # the fallback is said, never silent
        payload["official_evaluator"] = "not installed"
        payload["actionable_diagnostics"].append(
            {"stage": "setup", "message": f"--official: {missing}; aka's judge decided"})
    return code, payload


def _start_runners(args: argparse.Namespace, layout: str) -> tuple[Any, Any]:
    """Import torch, once, and fork the reference and the candidate runner from here.

    This is the one moment a runner may be forked from the judge (spawn.py): torch
    and the harness's own modules are loaded, so neither runner pays for them again,
    but nothing secret exists yet (the timed-run seeds are drawn later, in judge.py),
    no operator or candidate code has run in this process and CUDA is not initialised
    (procs.can_fork checks). The candidate runner imports kernel.py only when the
    judge says so, after the reference runner has exited."""
    import json

    import torch  # noqa: F401  the only torch import of the evaluation

    from aka_harness import dist
    from aka_harness import runner  # noqa: F401  loaded once, before the fork
    from aka_harness.confine import Confiner
    from aka_harness.procs import RunnerGroup

    confiner = Confiner()
    if not (confiner.confines or args.allow_unconfined):
        return None, confiner
    world = 1
    if layout == "atrex":
        try:
            with open(os.path.join(args.op_dir, "metadata.json"), encoding="utf-8") as f:
                meta = json.load(f)
            world = dist.contract_world_size(meta) if isinstance(meta, dict) else 1
        except (OSError, ValueError):
            world = 1  # the plan reports a broken metadata.json properly
    return (RunnerGroup("reference", world, confiner, fork=True),
            RunnerGroup("candidate", world, confiner, fork=True)), confiner


def _check_args(args: argparse.Namespace, kernel_path: str) -> Optional[str]:
    if not os.path.isdir(args.op_dir):
        return f"--op-dir {args.op_dir}: not a directory"
    if not os.path.isfile(kernel_path):
        return f"--kernel {kernel_path}: no such file"
    if args.multi_seed < 1:
        return "--multi-seed must be at least 1"
    if args.timed_runs < 0 or args.warmup < 0:
        return "--timed-runs and --warmup must be non-negative"
    if not 0 <= args.time_budget_ms <= 3_600_000:
        return "--time-budget-ms must be in 0..3600000"
    if args.cases is not None and args.cases < 1:
        return "--cases must be at least 1"
    if args.fresh_input_budget_mib < 1:
        return "--fresh-input-budget-mib must be at least 1"
    if args.private_shapes and not os.path.isfile(args.private_shapes):
        return f"--private-shapes {args.private_shapes}: no such file"
    return None
