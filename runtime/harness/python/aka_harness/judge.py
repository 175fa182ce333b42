"""The judge: one evaluation, decided in a process where no operator or candidate code runs.

This file owns the order of an evaluation and every verdict in it:

1. The plan, from data files only (shapes, workloads, metadata, tolerances);
   seeds for correctness are derived as before, and a secret seed
   (os.urandom) picks the inputs of the timed runs and which of them are
   checked. Nothing outside this process ever learns it.
2. The reference runner (runner.py) builds every correctness input, runs the
   reference on it, generates the timed-run inputs from the secret seeds with
   the operator's own input distribution, computes the reference outputs of
   the sampled timed runs, and is timed through the same request path the
   candidate will use. The judge keeps a copy of every input and output it
   checks. The reference runner then exits, and is waited for, before the
   candidate runner starts.
3. The candidate runner imports kernel.py and answers requests: every
   correctness case (outputs compared, inputs checked unchanged), then per
   shape a warm-up and the timed runs, one request each with a fresh input set;
   after each run the inputs are checked unchanged and, for the secretly
   sampled runs, the outputs compared with the reference's. The reported
   latencies are cross-checked against the judge's clock (crosscheck.py).
   A timed run's fresh inputs either cross the pipe ("sent") or, on a GPU by
   default, are built by the runner from the run's secret seed ("seeded"):
   tens of MiB per run no longer cross two processes and a device copy, which
   was most of an evaluation's wall time on an H200. The seed is sent with the
   run, so the runner cannot prepare for it; a runner that builds something else
   (a patched builder, a cached set) is caught on the sampled runs, whose inputs
   the judge built itself through the reference runner and compares, and whose
   outputs must match the reference's on those inputs. Which runs are sampled
   the runner learns only after its latency reply, as before.
4. The result (result.py) is printed by cli.py, by this process alone.

A candidate runner's replies are data to this process, never code, and never
decide an exit code other than 0 or 1: only the plan and the reference can
make an evaluation a usage (2) or environment (75) error.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import secrets
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

import torch

from aka_harness import compare as cmp
from aka_harness import crosscheck as xc
from aka_harness import dist, loader
from aka_harness import probes as pr
from aka_harness import seeds as sd
from aka_harness.atrex import AtrexPlan, LayoutError
from aka_harness.cli import EXIT_ENV, EXIT_FAIL, EXIT_OK, EXIT_USAGE, log
from aka_harness.confine import Confiner
from aka_harness.procs import RunnerGroup, RunnerLost
from aka_harness.result import Failure, Result, ShapeRecord
from aka_harness.sol import SolPlan
from aka_harness.timing import method_name
from aka_harness.wire import ChannelError, Message

_SOL_LANGUAGE_FRAMEWORK = {"pytorch": "PyTorch", "triton": "Triton", "cute_dsl": "CuteDSL",
                           "tilelang": "TileLang", "gluon": "Gluon", "flydsl": "FlyDSL"}

CHECK_FRACTION = 0.1  # of the timed runs whose outputs are compared (at least 2)
CALL_GRACE_S = 10.0  # the judge's deadline: the runner's own limit plus this
POOL_MESSAGE_BYTES = 64 << 20  # timed-run input sets per reply, at most about this much
BUDGET_MIN_REPS = 3  # the fewest timed runs a time budget leaves a shape
# A shape's timing is called tampered only when this many timings in a row fail the
# cross-check. The reference was timed minutes earlier, under whatever load the machine
# had then; a burst of load during one candidate timing can put an honest runner past a
# limit once, while a runner whose clock misses work misses it on every timing.
TIMING_ATTEMPTS = 3
OUTLIER_FACTOR = 10.0  # a timed run this many times the median is named (_note_outliers)
_RUN_KEYS = ("ready", "us", "outputs", "inputs")  # the replies of one timed run, in order


class Abort(Exception):
    """The evaluation cannot go on: exit code, stage and message."""

    def __init__(self, code: int, stage: str, message: str) -> None:
        super().__init__(message)
        self.code, self.stage, self.message = code, stage, message


@dataclass
class Case:
    base: int
    case: int
    inputs: list[Any]  # per rank
    ref: list[dict[str, Any]]  # per rank


@dataclass
class ShapeData:
    """What the reference phase left for the candidate phase, for one shape."""

    sid: str
    spec: dict[str, Any]
    failed: bool = False
    cases: list[Case] = field(default_factory=list)
    pool: list[list[Any]] = field(default_factory=list)  # input sets, per rank
    # Pool index of each timed run; None for a seeded run the judge holds no set of.
    order: list[Optional[int]] = field(default_factory=list)
    run_seeds: list[int] = field(default_factory=list)  # seeded: each timed run's seed
    sampled: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # run → ref outputs
    ref_timed: Optional["Timed"] = None
    reps: int = 0  # this shape's timed runs: --timed-runs, cut to the time budget
    ref_call_us: float = 0.0  # the reference's slowest correctness request, judge's clock
    ref_bases: list[Optional[xc.Baseline]] = field(default_factory=list)  # CPU, per rank


@dataclass
class Timed:
    """What the judge saw of one role's timed runs of a shape."""

    wall: list[xc.Samples]  # per rank
    # CPU device: the group's CPU time inside and outside the judge's window, per run (µs).
    inside: list[float] = field(default_factory=list)
    outside: list[float] = field(default_factory=list)


@dataclass
class JudgeStats:
    timed_runs: int = 0
    distinct_inputs: int = 0
    seeded_shapes: int = 0  # shapes whose timed runs built their inputs from seeds
    checked_timed_runs: int = 0
    checked_calls: int = 0
    cross_checked: int = 0
    cross_failed: int = 0
    retimed: int = 0  # candidate timings repeated after a failed cross-check
    unchecked: int = 0


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


def _value(group: RunnerGroup, msg: Message, **kw: Any) -> Any:
    """A reply's decoded value; a malformed one loses the group (never a verdict)."""
    try:
        return msg.value(**kw)
    except ChannelError as exc:
        group.kill()
        raise RunnerLost(f"sent a malformed reply ({exc})")


def _replies(group: RunnerGroup, msgs: list[Message]) -> list[dict[str, Any]]:
    out = []
    for m in msgs:
        value = _value(group, m)
        out.append(value if isinstance(value, dict) else
                   {"error": "protocol", "message": "a reply is not an object"})
    return out


def _first_error(replies: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    for rank, r in enumerate(replies):
        if r.get("error"):
            return dict(r, rank=rank)
    return None


def _rank(err: dict[str, Any], world: int) -> str:
    return f"rank {err['rank']}: " if world > 1 else ""


def _tree_bytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(_tree_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_tree_bytes(v) for v in value)
    return 0


def _slowest(per_rank: list[xc.Samples], statistic: str = "median") -> tuple[Optional[float],
                                                                             Optional[float]]:
    """A shape's latency by a statistic of its runs ("median" or "mean") and its CV: the
    slowest rank's, None when a rank has none."""
    stats = [s.mean_us if statistic == "mean" else s.median_us for s in per_rank]
    cvs = [s.cv for s in per_rank]
    lat = max(m for m in stats if m is not None) if stats and None not in stats else None
    cv = max(c for c in cvs if c is not None) if cvs and None not in cvs else None
    return lat, cv


def _median(values: list[float]) -> Optional[float]:
    return statistics.median(values) if values else None


def _round1(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(v, 1)


class Judge:
    """Runs one evaluation through the runner processes and fills a Result."""

    def __init__(self, args: argparse.Namespace, plan: Any, result: Result, ids: list[str],
                 kernel_path: str, world: int, confiner: Confiner) -> None:
        self.args = args
        self.plan = plan
        self.result = result
        self.ids = ids
        self.kernel_path = os.path.abspath(kernel_path)
        self.world = world
        self.seeds = result.seeds
        self.cases = args.cases or (10 if plan.layout == "sol" else 1)
        self.reps = args.timed_runs
        result.time_budget_ms = args.time_budget_ms
        self.rng = secrets.SystemRandom()
        self.confiner = confiner
        self.device = "cpu"
        self.shapes: dict[str, ShapeData] = {}
        self.records: dict[str, ShapeRecord] = {}
        self.stats = JudgeStats()
        self.gaps: dict[str, dict[str, Optional[float]]] = {}
        self.cand: Optional[RunnerGroup] = None
        self.cand_idle: Optional[RunnerGroup] = None  # started, kernel.py not yet imported
        # Kernel spans (timing.py): None until the reference runner said whether CUPTI
        # started in it; the fallback flag when it was asked and did not.
        self.span_achieved: Optional[bool] = None
        self.span_fallback = False
        self.span_noted: set[str] = set()
        self.cand_broken: Optional[str] = None
        self.framework: Any = None
        self.probe_plan: Optional[pr.ProbePlan] = None  # --probes: the supervisor's plan
        self.probe_entries: list[dict[str, Any]] = []  # the result's probes[]
        self.phase_s: dict[str, float] = {}  # where the evaluation's time went (summary)

    @contextlib.contextmanager
    def _phase(self, name: str) -> Iterator[None]:
        """Add the time spent inside to phase ``name`` of the summary's ``seconds``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.phase_s[name] = self.phase_s.get(name, 0.0) + time.perf_counter() - t0

    # ---- plumbing ---------------------------------------------------------------------

    def _deadline(self, factor: float = 1.0) -> Optional[float]:
        t = self.args.candidate_timeout_s
        return time.monotonic() + t * factor + CALL_GRACE_S if t > 0 else None

    def _init_msg(self, kernel: Optional[str]) -> dict[str, Any]:
        backend = "gloo"
        if self.world > 1:
            de = (self.plan.metadata.get("benchmark_contract") or {}).get("distributed_evaluation")
            backend = str((de or {}).get("backend") or "nccl")
        env = loader.framework_env(self.framework, self.device) if kernel else {}
        return {"op": "init", "cfg": self.plan.runner_config(), "kernel": kernel, "env": env,
                "device": self.device if kernel else self.args.device,
                "timeout_s": self.args.candidate_timeout_s, "warmup": self.args.warmup,
                "backend": backend, "timing": self._timing_asked()}

    def _timing_asked(self) -> str:
        """What the runners are asked to time with: "kernel_span" (--timing kernel-span, or
        auto on a SOL-ExecBench operator, whose evaluator times that way) or "events". The
        candidate is asked for what the reference runner achieved, so that both roles go
        through the same path (crosscheck.py compares their gaps): when the reference fell
        back to events, "events_unheld" (events without the hold, as the reference ran)."""
        if self.span_achieved is not None:
            if self.span_achieved:
                return "kernel_span"
            return "events_unheld" if self.span_fallback else "events"
        mode = getattr(self.args, "timing", "auto")
        want = mode == "kernel-span" or (mode == "auto" and self.plan.layout == "sol")
        return "kernel_span" if want else "events"

    def _fail(self, sid: str, failure: Failure) -> None:
        self.records[sid].passed = False
        self.result.failures.append(failure)

    # ---- the reference phase ----------------------------------------------------------

    def start_reference(self, early: Optional[RunnerGroup]) -> RunnerGroup:
        """Start the reference runner; learn the device from it (75 when it has none)."""
        group = early
        if group is None or group.world != self.world:
            if group is not None:
                group.kill()
            group = RunnerGroup("reference", self.world, self.confiner)
        try:
            replies = _replies(group, group.request([self._init_msg(None)]))
        except RunnerLost as exc:
            raise Abort(EXIT_USAGE, "setup", f"operator: the reference process {exc.why} while "
                        f"loading the operator")
        err = _first_error(replies)
        if err:
            group.close()
            code = EXIT_ENV if err["error"] == "env" else EXIT_USAGE
            stage = "environment" if code == EXIT_ENV else "setup"
            prefix = "" if code == EXIT_ENV else "operator: "
            raise Abort(code, stage, prefix + str(err.get("message")))
        self.device = str(replies[0]["device"])
        self.result.extra["device"] = str(replies[0].get("device_name"))
        self.result.extra["torch_version"] = str(replies[0].get("torch_version"))
        self._note_span(replies[0], "reference")
        self.span_achieved = bool(replies[0].get("kernel_span"))
        self.span_fallback = bool(replies[0].get("kernel_span_why"))
        self.result.timing_method = (method_name(torch.device(self.device), self.args.cuda_graph,
                                                 self.span_achieved)
                                     if self.reps > 0 else "none")
        self.result.l2_flush = self.device == "cuda"
        self.result.latency_statistic = self._statistic()
        return group

    def reference_phase(self, group: RunnerGroup) -> None:
        # The candidate runner was forked with this one (cli.py), or starts now; it
        # imports kernel.py only once this group has exited (below).
        if self.cand_idle is None:
            self.cand_idle = RunnerGroup("candidate", self.world, self.confiner)
        try:
            for sid in self.ids:
                log(f"shape {sid}: reference")
                self.records[sid] = ShapeRecord(sid)
                self.result.shapes.append(self.records[sid])
                with self._phase("reference"):  # timed_inputs and reference_timing included
                    self.shapes[sid] = self._reference_shape(group, sid)
        except RunnerLost as exc:
            raise Abort(EXIT_USAGE, "reference_runtime",
                        f"the reference process {exc.why}: the operator's reference or input "
                        f"builder, not the candidate, failed")
        finally:
            group.close()  # exits, and is waited for, before any candidate code runs

    def _case_seeds(self, sid: str) -> list[tuple[int, int, int, Optional[dict[str, Any]]]]:
        """(base seed, case, derived seed, probe transform) of every correctness case."""
        if self.probe_plan is not None:
            return [(p.seed, i, sd.derive_seed(sd.STAGE_PROBE, p.seed, sid, 0), p.wire())
                    for i, p in enumerate(self.probe_plan.cases)]
        return [(base, case, sd.derive_seed(sd.STAGE_CORRECTNESS, base, sid, case), None)
                for base in self.seeds for case in range(self.cases)]

    def _reference_shape(self, group: RunnerGroup, sid: str) -> ShapeData:
        data = ShapeData(sid, self.plan.shape_spec(sid))
        init = sd.derive_seed("init", self.seeds[0], sid, 0)
        err = _first_error(_replies(group, group.request(
            [{"op": "setup", "sid": sid, "spec": data.spec, "seed": init}])))
        if err:
            data.failed = True
            self._fail(sid, Failure(sid, "reference_runtime", f"shape {sid}: {_rank(err, self.world)}"
                                    f"setting up the reference failed: {err.get('message')}"))
            return data
        for base, case, seed, probe in self._case_seeds(sid):
            t0 = time.perf_counter_ns()
            msgs = group.request([{"op": "case", "sid": sid, "seed": seed, "probe": probe}])
            replies = _replies(group, msgs)
            data.ref_call_us = max(data.ref_call_us, (time.perf_counter_ns() - t0) / 1e3)
            err = _first_error(replies)
            if err:
                data.failed = True
                self._fail(sid, Failure(sid, "reference_runtime", f"shape {sid}: "
                                        f"{_rank(err, self.world)}the reference or its input "
                                        f"builder raised {err.get('message')}", seed=base,
                                        case=case))
                return data
            data.cases.append(Case(base, case, [r["inputs"] for r in replies],
                                   [r["outputs"] for r in replies]))
        if self.reps > 0:
            data.reps = self._budget_reps(data)
            if self.args.time_budget_ms > 0:
                self.records[sid].reps = data.reps
            self._reference_timing(group, data)
        return data

    def _budget_reps(self, data: ShapeData) -> int:
        """The shape's timed runs within --time-budget-ms: from the reference's slowest
        correctness request (the judge's clock; it builds the inputs too, so the cut errs
        towards fewer runs), at least BUDGET_MIN_REPS, at most --timed-runs. Both runner
        groups run this count, so a candidate cannot shorten its own schedule."""
        budget_us = self.args.time_budget_ms * 1e3
        if budget_us <= 0 or data.ref_call_us <= 0:
            return self.reps
        fit = int(budget_us // data.ref_call_us)
        reps = min(self.reps, max(min(BUDGET_MIN_REPS, self.reps), fit))
        if reps < self.reps:
            log(f"shape {data.sid}: {reps} timed runs of {self.reps} fit the "
                f"{self.args.time_budget_ms} ms budget (the reference's call: "
                f"{data.ref_call_us / 1e3:.1f} ms)")
        return reps

    def _fresh_pool(self, group: RunnerGroup, data: ShapeData) -> None:
        """The timed runs' inputs, from secret seeds, and which runs are checked.

        Seeded (``--timed-inputs``, _seeded_runs): each run's seed goes to the runner,
        which builds the inputs itself; the judge holds the sets of the sampled runs
        only. Sent: the judge holds every set and sends it; as many distinct sets as
        --fresh-input-budget-mib holds. Either way the reference's outputs of the
        sampled runs are computed now, and no runner learns which runs they are."""
        n_check = min(data.reps, max(2, math.ceil(CHECK_FRACTION * data.reps)))
        runs = sorted(self.rng.sample(range(data.reps), n_check))
        if self._seeded_runs(group, data, runs):
            return
        self._sent_pool(group, data)
        replies = _replies(group, group.request(
            [{"op": "call", "sid": data.sid, "many": True,
              "inputs": [data.pool[data.order[run]][r] for run in runs]}
             for r in range(self.world)]))
        err = _first_error(replies)
        if err:
            raise RuntimeError(f"the reference raised {err.get('message')}")
        for k, run in enumerate(runs):
            data.sampled[run] = [r["outputs"][k] for r in replies]

    def _seeded_runs(self, group: RunnerGroup, data: ShapeData, runs: list[int]) -> bool:
        """Seeded timed inputs, when chosen and sound: a secret seed per run, the sets of
        the sampled ``runs`` built by the reference. Sound means every runner builds the
        same set from a seed: the builder does not need the reference (seedable), and it
        gave the same set twice for one seed here (else a candidate's honest inputs would
        read as modified). False, with a note when it was wanted, means sent inputs."""
        mode = self.args.timed_inputs
        if mode == "sent" or (mode == "auto" and self.device == "cpu"):
            return False
        seeds = [self._secret_seed() for _ in range(data.reps)]
        wanted = [seeds[run] for run in runs]
        # One request: the sampled sets, the reference's outputs of each, and whether the
        # first one repeats (the trusted reference runner compares; nothing crosses twice).
        replies = _replies(group, group.request([{"op": "case", "sid": data.sid,
                                                  "seeds": wanted, "outputs": True,
                                                  "repeat": True}]))
        err = _first_error(replies)
        if err:
            raise RuntimeError(f"building timed-run inputs failed: {err.get('message')}")
        why = None
        if not all(r.get("seedable") for r in replies):
            why = "its inputs come from the reference's own builder"
        elif any(r.get("repeat_change") for r in replies):
            why = "its input builder gave two different sets for one seed"
        if why:
            self.result.diagnose("timing", f"shape {data.sid}: timed-run inputs are sent by "
                                 f"the judge, not built by the runner from a seed: {why}",
                                 data.sid)
            return False
        data.run_seeds = seeds
        data.pool = [[r["sets"][k] for r in replies] for k in range(len(runs))]
        data.order = [None] * data.reps
        for k, run in enumerate(runs):
            data.order[run] = k
            data.sampled[run] = [r["outputs"][k] for r in replies]
        return True

    @staticmethod
    def _secret_seed() -> int:
        return int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF

    def _sent_pool(self, group: RunnerGroup, data: ShapeData) -> None:
        """Every timed run's inputs built by the reference, for the judge to send."""
        budget = self.args.fresh_input_budget_mib << 20
        want, chunk = data.reps, 1
        while len(data.pool) < want:
            n = min(chunk, want - len(data.pool))
            seeds = [self._secret_seed() for _ in range(n)]
            replies = _replies(group, group.request([{"op": "case", "sid": data.sid,
                                                      "seeds": seeds}]))
            err = _first_error(replies)
            if err:
                raise RuntimeError(f"building timed-run inputs failed: {err.get('message')}")
            for k in range(n):
                data.pool.append([r["sets"][k] for r in replies])
            if len(data.pool) == n:  # the first set tells the size of all
                size = max(1, sum(_tree_bytes(s) for s in data.pool[0]))
                want = min(data.reps, max(1, budget // size))
                chunk = max(1, POOL_MESSAGE_BYTES // size)
        if len(data.pool) == data.reps:
            data.order = list(range(data.reps))
        else:
            data.order = [self.rng.randrange(len(data.pool)) for _ in range(data.reps)]

    def _reference_timing(self, group: RunnerGroup, data: ShapeData) -> None:
        sid = data.sid
        try:
            with self._phase("timed_inputs"):
                self._fresh_pool(group, data)
        except RuntimeError as exc:
            data.failed = True
            self._fail(sid, Failure(sid, "reference_runtime", f"shape {sid}: {exc}"))
            return
        try:
            with self._phase("reference_timing"):
                timed, why = self._timed_runs(group, data, "reference")
        except _JudgeFailure as exc:
            timed, why = Timed([]), str(exc)
        if why:
            self.result.diagnose("timing", f"shape {sid}: timing the reference failed: {why}", sid)
            return
        if self.device == "cpu":  # the reference is its own baseline
            data.ref_bases = [xc.baseline(s, timed.inside, timed.outside) for s in timed.wall]
        self._latencies(timed, data.ref_bases)
        data.ref_timed = timed

    def _latencies(self, timed: Timed, bases: list[Optional[xc.Baseline]]) -> None:
        """The latency of each run the verdict uses: on a CPU from the judge's clocks
        (crosscheck.cpu_latencies), on a device the runner's events (cross-checked)."""
        for r, s in enumerate(timed.wall):
            s.latency = (xc.cpu_latencies(s, timed.inside, timed.outside,
                                          bases[r] if bases else None)
                         if self.device == "cpu" else list(s.reported))

    # ---- timed runs (both roles) ------------------------------------------------------

    def _prepare(self, group: RunnerGroup, data: ShapeData, role: str) -> Optional[str]:
        warm = data.cases[0].inputs
        factor = self.args.warmup + 25
        msgs = group.request(
            [{"op": "prepare", "sid": data.sid, "inputs": warm[r], "graph": self.args.cuda_graph}
             for r in range(self.world)], self._deadline(factor) if role == "candidate" else None)
        replies = _replies(group, msgs)
        err = _first_error(replies)
        if err:
            return f"{_rank(err, self.world)}{err.get('message')}"
        if role == "candidate":  # the warm-up calls must leave their inputs alone too
            self._check_inputs(group, data, warm, "warm-up", msgs, "inputs")
        for note in replies[0].get("notes") or []:
            self.result.diagnose("timing", f"shape {data.sid}: {role}: {str(note)[:2000]}",
                                 data.sid)
        return None

    def _timed_runs(self, group: RunnerGroup, data: ShapeData,
                    role: str) -> tuple[Timed, Optional[str]]:
        """Warm up, then every timed run on its fresh inputs; (what was seen, error)."""
        timed = Timed([xc.Samples() for _ in range(self.world)])
        why = self._prepare(group, data, role)
        if why:
            return timed, why
        cand = role == "candidate"
        meter = _CpuMeter(group) if self.device == "cpu" else None
        for run in range(data.reps):
            deadline = self._deadline() if cand else None
            fetch = self._fetches(data, run)
            t0 = time.perf_counter_ns()
            group.send(self._run_requests(data, run), deadline)
            phases, t_go, why = self._run_replies(group, deadline, meter, fetch)
            if why:
                return timed, why
            if meter is not None:
                inside, outside = meter.split_us()
                timed.inside.append(inside)
                timed.outside.append(outside)
            self._take_run(group, data, run, phases, (t0, t_go), timed, role)
        return timed, None

    def _run_requests(self, data: ShapeData, run: int) -> list[dict[str, Any]]:
        """A timed run's request to each rank: its seed, or its input set."""
        if data.run_seeds:
            return [{"op": "run", "seed": data.run_seeds[run]} for _ in range(self.world)]
        inputs = data.pool[data.order[run]]
        return [{"op": "run", "inputs": inputs[r]} for r in range(self.world)]

    def _fetches(self, data: ShapeData, run: int) -> bool:
        """Whether a timed run's outputs and inputs come back to the judge.

        On a GPU only the secretly sampled runs': every run's would cost two device-to-host
        copies and two pipe transfers of the tensors (on an H200 most of an evaluation's
        wall time for large shapes). The runner learns it only after its latency reply;
        work deferred past that reply shows on the sampled runs, whose "out" times alone
        the cross-check compares (crosscheck.py). On a CPU every run's: the CPU time
        charged outside the window is a median over all runs, which work skipped on
        unsampled runs would otherwise leave untouched."""
        return self.device == "cpu" or run in data.sampled

    def _run_replies(self, group: RunnerGroup, deadline: Optional[float],
                     meter: Optional["_CpuMeter"],
                     fetch: bool) -> tuple[list[list[Message]], int, Optional[str]]:
        """The replies of a timed run from every rank: ready, (after the judge's go, whose
        sending time is returned) latency, (after its "more") outputs, inputs.

        A rank that fails sends one error instead of the rest; the others are still read
        to the end so that every rank stays in step. A reply without its expected key
        (a message the candidate wrote into its pipe itself) loses the group."""
        alive = list(range(self.world))
        phases: list[list[Message]] = []
        why, t_go = None, 0
        for key in _RUN_KEYS:
            msgs = group.recv(deadline, alive)
            values = _replies(group, msgs)
            keep = []
            for r, m, v in zip(alive, msgs, values):
                if v.get("error"):
                    why = why or f"{_rank(dict(v, rank=r), self.world)}{v.get('message')}"
                elif key not in v:
                    group.kill()
                    raise RunnerLost(f"sent a reply without '{key}' where it was expected")
                else:
                    keep.append(m)
            alive = [r for r, v in zip(alive, values) if not v.get("error")]
            phases.append(keep)
            if not alive:
                break
            if meter is not None:
                meter.mark(key)
            if key == "ready":
                t_go = time.perf_counter_ns()
                group.send_some(alive, {"op": "go"}, deadline)
            elif key == "us":
                group.send_some(alive, {"op": "more", "fetch": fetch}, deadline)
        return phases, t_go, why

    def _take_run(self, group: RunnerGroup, data: ShapeData, run: int,
                  phases: list[list[Message]], starts: tuple[int, int], timed: Timed,
                  role: str) -> None:
        """Record one timed run; for the candidate, check its inputs and sampled outputs."""
        ready, done, outs, back = phases
        for r in range(self.world):
            rep = _value(group, done[r])
            us = rep.get("us")
            if not xc.valid_report(us):
                raise _Tampered(f"timing tampered: shape {data.sid}: timed run {run} "
                                f"reported {str(us)[:40]!r} as its latency")
            (t0, t_go), t1 = starts, ready[r].arrived_ns
            t2, t3 = done[r].arrived_ns, outs[r].arrived_ns
            timed.wall[r].add(float(us), (t1 - t0) / 1000.0, (t2 - t_go) / 1000.0,
                              (t3 - t2) / 1000.0, self._fetches(data, run))
            timed.wall[r].paths.append(xc.path_account(rep.get("path")))
        if role != "candidate":
            return
        self.stats.timed_runs += 1
        k = data.order[run]
        if self._fetches(data, run) and k is not None:  # seeded: the sampled runs only
            self._check_inputs(group, data, data.pool[k], f"timed run {run}", back, "inputs")
        if run in data.sampled:
            self.stats.checked_timed_runs += 1
            for r, m in enumerate(outs):
                got = _value(group, m, strict=True, device=self.device).get("outputs")
                bad = self._output_problem(data.sid, data.sampled[run][r], got)
                if bad:
                    raise _WrongTimed(f"output of a timed run is wrong: shape {data.sid}, timed "
                                      f"run {run}: {bad}")

    def _check_inputs(self, group: RunnerGroup, data: ShapeData, judge_copy: list[Any],
                      what: str, msgs: list[Message], key: str) -> None:
        for r, m in enumerate(msgs):
            after = _value(group, m, strict=True, device=self.device).get(key)
            why = cmp.input_change(judge_copy[r], after)
            if why:
                raise _Modified(f"inputs modified during a call: shape {data.sid}, {what}: {why}")
        self.stats.checked_calls += 1

    # ---- the candidate phase ----------------------------------------------------------

    def _candidate(self) -> Optional[RunnerGroup]:
        """The candidate group, (re)started and loaded when needed; None when it cannot load."""
        if self.cand is not None or self.cand_broken:
            return self.cand
        group, self.cand_idle = self.cand_idle, None
        if group is None:
            group = RunnerGroup("candidate", self.world, self.confiner)
        try:
            replies = _replies(group, group.request([self._init_msg(self.kernel_path)]))
        except RunnerLost as exc:
            self.cand_broken = f"the candidate process {exc.why} while importing kernel.py"
            return None
        err = _first_error(replies)
        if err:
            group.kill()
            stage = str(err.get("stage") or "compile_import") if err["error"] == "load" \
                else "compile_import"
            self.cand_broken = f"{stage}\0{err.get('message')}"
            return None
        self._note_span(replies[0], "candidate")
        self.cand = group
        return group

    def _broken(self) -> tuple[str, str]:
        """(stage, message) of why the candidate cannot load: cand_broken holds the stage and
        the message joined by a NUL, or a bare message whose stage is candidate_runtime."""
        stage, _, msg = (self.cand_broken or "").partition("\0")
        return (stage, msg) if msg else ("candidate_runtime", stage)

    def _note_span(self, reply: dict[str, Any], role: str) -> None:
        """Say why a runner asked for kernel spans times with events instead."""
        why = reply.get("kernel_span_why")
        if why and not reply.get("kernel_span") and role not in self.span_noted:
            self.span_noted.add(role)
            self.result.diagnose("timing", f"{role}: CUPTI kernel spans unavailable ({why}); "
                                 f"timed with CUDA events instead (no hold)")

    def candidate_phase(self) -> None:
        with self._phase("candidate_start"):
            started = self._candidate()
        if started is None:  # kernel.py does not load: the whole evaluation fails
            raise Abort(EXIT_FAIL, *self._broken())
        for sid in self.ids:
            data = self.shapes[sid]
            if data.failed:
                continue
            log(f"shape {sid}: candidate")
            group = self._candidate()
            if group is None:
                stage, msg = self._broken()
                if not self.result.failures or self.result.failures[-1].message != msg:
                    self.result.diagnose(stage, msg)
                self._fail(sid, Failure(sid, stage, msg))
                continue
            try:
                self._candidate_shape(group, data)
            except RunnerLost as exc:
                self.cand = None
                msg = (f"candidate call exceeded {self.args.candidate_timeout_s:g} s"
                       if exc.why == "timeout" else f"the candidate process {exc.why}")
                self._fail(sid, Failure(sid, "candidate_runtime", f"shape {sid}: {msg}"))
            except _JudgeFailure as exc:
                self._fail(sid, Failure(sid, exc.stage, exc.args[0]))
                self.records[sid].latency_us = self.records[sid].cv = None
        if self.cand is not None:
            self.cand.close()

    def _setup_shape(self, group: RunnerGroup, data: ShapeData) -> Optional[str]:
        """Tell the candidate group which shape comes next; the error it replied, or None."""
        init = sd.derive_seed("init", self.seeds[0], data.sid, 0)
        err = _first_error(_replies(group, group.request(
            [{"op": "setup", "sid": data.sid, "spec": data.spec, "seed": init}],
            self._deadline())))
        return str(err.get("message")) if err else None

    def _candidate_shape(self, group: RunnerGroup, data: ShapeData) -> None:
        sid = data.sid
        msg = self._setup_shape(group, data)
        if msg is not None:
            self._fail(sid, Failure(sid, "candidate_runtime", f"shape {sid}: {msg}"))
            self.result.diagnose("candidate_runtime", msg, sid)
            return
        with self._phase("candidate_cases"):
            for i, case in enumerate(data.cases):
                if not self._candidate_case(group, data, case, i == 0):
                    return
        if self.records[sid].passed and self.reps > 0:
            with self._phase("candidate_timing"):
                self._candidate_timing(group, data)

    def _call(self, group: RunnerGroup, data: ShapeData, case: Case,
              variant: int) -> Optional[list[Any]]:
        """One correctness call per rank; the outputs, or None after recording a failure."""
        sid = data.sid
        msgs = group.request([{"op": "call", "sid": sid, "inputs": case.inputs[r],
                               "variant": variant} for r in range(self.world)], self._deadline())
        replies = _replies(group, msgs)
        err = _first_error(replies)
        if err:
            msg = str(err.get("message"))
            if err["error"] == "timeout":
                text = f"shape {sid}: {_rank(err, self.world)}{msg}"
            else:
                text = f"shape {sid}: {_rank(err, self.world)}candidate raised {msg}"
                self.result.diagnose("candidate_runtime", msg, sid)
            self._fail(sid, Failure(sid, "candidate_runtime", text, seed=case.base, case=case.case))
            return None
        outs = []
        for r, m in enumerate(msgs):
            got = _value(group, m, strict=True, device=self.device)
            why = cmp.input_change(case.inputs[r], got.get("inputs"))
            if why:
                raise _Modified(f"inputs modified during a call: shape {sid}, seed {case.base}, "
                                f"case {case.case}: {why}")
            outs.append(got.get("outputs"))
        self.stats.checked_calls += 1
        return outs

    def _candidate_case(self, group: RunnerGroup, data: ShapeData, case: Case, first: bool) -> bool:
        """One correctness case on every rank; False when the shape must stop."""
        outs = self._call(group, data, case, 0)
        if outs is None:
            return False
        if first and self.plan.dps_non_float_outputs(data.sid):
            again = self._call(group, data, case, 1)
            if again is None:
                return False
            if not self._same_non_float(data, case, outs[0], again[0]):
                return False
        go_on = True
        for r in range(self.world):
            go_on = self._compare_outputs(data, case.ref[r], outs[r], case, r) and go_on
        return go_on

    def _same_non_float(self, data: ShapeData, case: Case, out: Any, again: Any) -> bool:
        if not isinstance(out, dict) or not isinstance(again, dict):
            return True  # the comparison reports the structure
        for name, value in out.items():
            other = again.get(name)
            if (isinstance(value, torch.Tensor) and not value.is_floating_point()
                    and isinstance(other, torch.Tensor) and not cmp.bitwise_equal(value, other)):
                self._fail(data.sid, Failure(data.sid, "correctness", f"shape {data.sid}: output "
                                             f"'{name}' depends on the poison written before the "
                                             f"call: some elements are never written",
                                             output=name, seed=case.base, case=case.case))
                return False
        return True

    def _output_problem(self, sid: str, ref: dict[str, Any], out: Any) -> Optional[str]:
        """Why timed-run outputs differ from the reference's (None when they match)."""
        if not isinstance(out, dict) or set(out) != set(ref):
            return "the outputs have the wrong structure"
        for name in ref:
            v = cmp.compare(ref[name], out[name], self.plan.tolerance(sid, name),
                            torch.device("cpu"))
            if not v.ok:
                return f"output '{name}': {v.reason}"
        return None

    def _compare_outputs(self, data: ShapeData, ref: dict[str, Any], out: Any, case: Case,
                         rank: int) -> bool:
        sid = data.sid
        where = f"rank {rank}: " if self.world > 1 else ""
        if not isinstance(out, dict) or (list(ref) != list(out) and set(ref) != set(out)):
            got = sorted(map(str, out)) if isinstance(out, dict) else type(out).__name__
            self._fail(sid, Failure(sid, "structure", f"shape {sid}: {where}the candidate "
                                    f"returned outputs {got}, the reference {sorted(ref)}",
                                    seed=case.base, case=case.case))
            return False
        if self.probe_plan is not None:
            return self._probe_outputs(data, ref, out, case, where)
        go_on = True
        for name in ref:
            v = cmp.compare(ref[name], out[name], self.plan.tolerance(sid, name),
                            torch.device("cpu"))
            self.result.note_errors(v.max_abs_err, v.max_rel_err)
            if v.ok and v.bad_count:
                # SOL's matched ratio accepted some misses; say so, a probe may care.
                self.result.diagnose("tolerance", f"shape {sid}, output '{name}': {v.bad_count} "
                                     f"of {v.numel} elements outside atol/rtol were accepted "
                                     f"by the required matched ratio (first at "
                                     f"{v.first_bad_index})", sid)
            if v.ok:
                continue
            structural = v.max_abs_err is None and v.first_bad_index is None and not v.bad_count
            msg = f"shape {sid}, {where}output '{name}', seed {case.base}, case {case.case}: {v.reason}"
            if v.max_abs_err is not None:
                msg += f"; max abs err {v.max_abs_err:.4g}, max rel err {v.max_rel_err:.4g}"
            if v.first_bad_index is not None:
                msg += f"; first mismatch at index {v.first_bad_index}"
            self._fail(sid, Failure(sid, "structure" if structural else "correctness", msg,
                                    output=name, seed=case.base, case=case.case,
                                    max_abs_err=v.max_abs_err, max_rel_err=v.max_rel_err,
                                    first_mismatch_index=v.first_bad_index,
                                    mismatch_count=v.bad_count or None))
            go_on = go_on and not structural
        return go_on

    def _probe_outputs(self, data: ShapeData, ref: dict[str, Any], out: Any, case: Case,
                       where: str) -> bool:
        """A probe case: every output within the plan's relative L2 threshold; the worst
        output is the case's entry in the result's probes[] (DESIGN §4.6)."""
        assert self.probe_plan is not None
        p = self.probe_plan.cases[case.case]
        m = pr.worst(self.probe_plan, ref, out)
        rank = where.rstrip(": ").replace(" ", "") if where else ""
        self.probe_entries.append({
            "id": f"{p.name}@{data.sid}" + (f"#{rank}" if rank else ""),
            "status": "failed" if m.why else "passed", "distribution": p.name,
            "shape_id": data.sid, "seed": p.seed, "metric": "rel_l2",
            "value": m.value if math.isfinite(m.value) else None, "threshold": m.threshold,
            "detail": m.output})
        if m.why:
            rows = ", constant rows" if p.pattern == "constant_rows" else ""
            self._fail(data.sid, Failure(
                data.sid, "numerical_probe",
                f"numerical probe {p.name} (seed {p.seed}, inputs x{p.scale:g}{p.offset:+g}"
                f"{rows}): shape {data.sid}, {where}output '{m.output}' has {m.why}",
                output=m.output, seed=case.base, case=case.case))
            return False
        return True

    def _candidate_timing(self, group: RunnerGroup, data: ShapeData) -> None:
        """Time the candidate on the shape's fresh inputs and cross-check it; a failed
        cross-check is confirmed by timing again (TIMING_ATTEMPTS) before it is named."""
        sid = data.sid
        rec = self.records[sid]
        self.stats.distinct_inputs += len(data.run_seeds) or len(data.pool)
        self.stats.seeded_shapes += bool(data.run_seeds)
        for attempt in range(1, TIMING_ATTEMPTS + 1):
            if attempt > 1:
                group = self._fresh_candidate(data)
            timed, why = self._timed_runs(group, data, "candidate")
            if why:
                self._fail(sid, Failure(sid, "timing", f"shape {sid}: timing the candidate "
                                        f"failed: {why}"))
                self.result.diagnose("timing", why, sid)
                return
            self._latencies(timed, data.ref_bases)
            tampered = self._cross_check(data, timed)
            if tampered is None:
                break
            if attempt == TIMING_ATTEMPTS:
                self.stats.cross_failed += 1
                raise _Tampered(tampered)
            self.stats.retimed += 1
            log(f"shape {sid}: cross-check failed on timing {attempt} of {TIMING_ATTEMPTS}; "
                f"timing again in a fresh candidate process")
            self.result.diagnose("timing", f"shape {sid}: timing {attempt} of "
                                 f"{TIMING_ATTEMPTS} failed the cross-check and was repeated "
                                 f"in a fresh candidate process (a loaded machine or one "
                                 f"process's state can fail it once; a runner that misses "
                                 f"work fails every time): {tampered}", sid)
        rec.median_us, rec.cv = _slowest(timed.wall, "median")
        rec.mean_us, _ = _slowest(timed.wall, "mean")
        self._note_outliers(sid, timed)
        rec.latency_us = rec.mean_us if self._statistic() == "mean" else rec.median_us
        if data.ref_timed:
            rec.ref_latency_us, rec.ref_cv = _slowest(data.ref_timed.wall, self._statistic())

    def _fresh_candidate(self, data: ShapeData) -> RunnerGroup:
        """A new candidate process group for a repeated timing, set up for the shape.

        A repeated timing samples what varies honestly between timings, and the host's
        path around a launch-bound call varies from one process to the next as much as
        over time: the same rope call's span moved by up to 1.8x between plain processes
        (docs/measurements.md, 2026-12-04), and on 2026-12-06 the rope operator's own
        reference, wrapped as its V0 kernel, failed the GPU gap check three times in one
        candidate process against the reference process (1,808 against 1,284 us). A
        runner that misses work misses it in every process, so this costs a cheat
        nothing it had; the fresh process is started as a restart after a timeout is
        (exec'd, inheriting none of the judge's memory) and never runs the correctness
        cases again, but its sampled timed runs' outputs and inputs are checked as
        before."""
        if self.cand is not None:
            self.cand.kill()
            self.cand = None
        group = self._candidate()
        if group is None:
            raise RunnerLost(f"did not start again for a repeated timing: {self._broken()[1]}")
        msg = self._setup_shape(group, data)
        if msg is not None:
            raise RunnerLost(f"could not be set up again for a repeated timing: {msg}")
        return group

    def _note_outliers(self, sid: str, timed: Timed) -> None:
        """Name the slowest runs when a few of them carry the mean (OUTLIER_FACTOR x the
        median): the owner's statistic may be the mean, and where they fell tells a
        preempted host or a stalled launch from a slow kernel."""
        lat = timed.wall[0].latency
        med = _median(lat)
        if not med or med <= 0:
            return
        slow = sorted(((us, run) for run, us in enumerate(lat) if us > OUTLIER_FACTOR * med),
                      reverse=True)
        if slow:
            runs = ", ".join(f"run {run}: {us:.1f} us" for us, run in slow[:3])
            self.result.diagnose("timing", f"shape {sid}: {len(slow)} of {len(lat)} timed runs "
                                 f"took over {OUTLIER_FACTOR:g}x the median {med:.2f} us "
                                 f"({runs}); the mean carries them", sid)

    def _statistic(self) -> str:
        """The statistic of a shape's timed runs its latency and score use: the owner's.
        Atrex-Bench reports the mean of its GPU timings, SOL-ExecBench the median. On a
        CPU the median for both: the mean would carry a shared host's neighbours (and
        Atrex-Bench does not time on a CPU)."""
        return "mean" if self.plan.layout == "atrex" and self.device != "cpu" else "median"

    def _cross_check(self, data: ShapeData, timed: Timed) -> Optional[str]:
        """The reported latencies against the judge's clock, and on a CPU its CPU count:
        why the timing looks tampered, or None."""
        sid, ref = data.sid, data.ref_timed
        if self.device == "cpu":
            verdicts = [xc.cpu_check(timed.wall[r], timed.inside, timed.outside,
                                     data.ref_bases[r] if data.ref_bases else None)
                        for r in range(self.world)]
        else:
            verdicts = [xc.check(timed.wall[r], ref.wall[r] if ref else None, self.device)
                        for r in range(self.world)]
        if sid not in self.gaps:
            self.stats.cross_checked += 1
            self.stats.unchecked += ref is None
        self._record_gaps(data, timed, verdicts[0])
        for r, verdict in enumerate(verdicts):
            if not verdict.ok:
                head, _, rest = verdict.reason.partition(": ")
                where = f"rank {r}: " if self.world > 1 else ""
                return f"{head}: shape {sid}: {where}{rest}"
        return None

    def _record_gaps(self, data: ShapeData, timed: Timed, verdict: xc.Verdict) -> None:
        """What the summary shows of the shape's cross-check (rank 0, last timing)."""
        sid, ref = data.sid, data.ref_timed
        w0 = timed.wall[0]
        self.gaps[sid] = {"gap_us": _round1(verdict.gap_us),
                          "ref_gap_us": _round1(verdict.ref_gap_us),
                          "limit_us": _round1(verdict.limit_us),
                          "runner_reported_us": _round1(w0.median_reported),
                          "out_us": _round1(_median(w0.fetched_out)),
                          "ref_out_us": _round1(_median(ref.wall[0].fetched_out) if ref else None),
                          "ack_us": _round1(_median(w0.acked_out)),
                          "ref_ack_us": _round1(_median(ref.wall[0].acked_out) if ref else None),
                          "stage_us": _round1(_median(w0.stage)),
                          "ref_stage_us": _round1(_median(ref.wall[0].stage) if ref else None)}
        if self.device != "cpu":
            # The runners' own account of the path around the call (host launch,
            # synchronize, CUPTI's flush): untrusted, for explaining a gap, in no check.
            self.gaps[sid].update({
                "runner_path_us": xc.path_medians(w0),
                "ref_runner_path_us": xc.path_medians(ref.wall[0]) if ref else {}})
        else:
            base = data.ref_bases[0] if data.ref_bases else None
            self.gaps[sid].update({
                "outside_cpu_us": _round1(_median(timed.outside)),
                "ref_outside_cpu_us": _round1(base.outside if base else None),
                "charged_us": _round1(max(0.0, (_median(timed.outside) or 0.0)
                                          - (base.outside if base else 0.0)))})

    def summary(self) -> dict[str, Any]:
        s = self.stats
        if not s.cross_checked:
            cross = "not run"
        elif s.cross_failed:
            cross = "failed"
        elif s.unchecked:
            cross = "partial (no reference timing for some shapes)"
        else:
            cross = "passed"
        limits: dict[str, Any] = {k: {"abs_us": v[0], "rel": v[1], "out": xc.OUT_LIMITS[k],
                                      "ack": xc.ACK_LIMITS[k],
                                      "stage": xc.STAGE_LIMITS[k]}
                                  for k, v in xc.GAP_LIMITS.items() if k == self.device}
        if self.device == "cpu":  # the latency is the judge's; these only name tampering
            limits["cpu"] = {"latency": "judge window - reference path + charged CPU",
                             "floor_us": xc.CPU_FLOOR_US, "rel": xc.CPU_REL,
                             "window_rel": xc.CPU_WINDOW_REL,
                             "spread_k": xc.CPU_SPREAD_K}
        return {"separate_processes": True, "confinement": self.confiner.level,
                "fresh_inputs": {"timed_runs": s.timed_runs,
                                 "distinct_input_sets": s.distinct_inputs,
                                 "seeded_shapes": s.seeded_shapes},
                "checked_timed_runs": s.checked_timed_runs,
                "inputs_checked_calls": s.checked_calls,
                "cross_check": cross, "gap_limit": limits.get(self.device),
                "cross_check_retimed": s.retimed,
                # Wall seconds of the judge's main phases, for finding where time goes.
                "seconds": {k: round(v, 3) for k, v in self.phase_s.items()},
                # Per shape (rank 0): the judge's median gap, the reference's, the limit.
                "gap_us_by_shape": {} if self.args.generalized else self.gaps}


class _CpuMeter:
    """The runner group's CPU time around each timed run, CPU device (crosscheck.py).

    Continuous: each run's total is counted from the end of the previous one, so work
    done between runs is in it too. Inside the judge's window ("ready" arrived to the
    latency arrived) only the processes known at the run's start are read, which is
    cheap enough not to move the window's end; anything else is outside: charged."""

    def __init__(self, group: RunnerGroup) -> None:
        self.group = group
        self.last = group.cpu_ns()
        self.clocks = group.clocks()
        self.marks: dict[str, int] = {}

    def mark(self, key: str) -> None:
        if key in ("ready", "us"):
            self.marks[key] = self.group.window_cpu_ns(self.clocks)

    def split_us(self) -> tuple[float, float]:
        """(inside, outside) the window of the run that just ended."""
        now = self.group.cpu_ns()
        inside = self.marks.get("us", 0) - self.marks.get("ready", 0)
        total, self.last = now - self.last, now
        self.clocks, self.marks = self.group.clocks(), {}
        return inside / 1000.0, (total - inside) / 1000.0


class _JudgeFailure(Exception):
    stage = "integrity"


class _Tampered(_JudgeFailure):
    stage = "integrity"


class _Modified(_JudgeFailure):
    stage = "integrity"


class _WrongTimed(_JudgeFailure):
    stage = "correctness"


# ---- the evaluation ---------------------------------------------------------------------------

def _check_framework(judge: Judge) -> None:
    """The candidate's framework must be installed and usable on the device found."""
    problem = loader.framework_problem(judge.framework, judge.device)
    if problem:
        raise Abort(EXIT_FAIL, "environment", problem)


def _load_plan(args: argparse.Namespace, layout: str) -> Any:
    if layout == "atrex":
        return AtrexPlan(args.op_dir, args.private_shapes, args.atol, args.rtol)
    return SolPlan(args.op_dir, args.private_shapes, args.kernel, args.solution,
                   False if args.no_dps else None)


def evaluate(args: argparse.Namespace, layout: str, evaluator: str, eval_id: str,
             kernel_path: str, kernel_sha: Optional[str], confiner: Confiner,
             groups: Optional[tuple[RunnerGroup, RunnerGroup]] = None,
             ) -> tuple[int, Optional[dict[str, Any]]]:
    """The whole evaluation; the payload is None on ranks other than 0 of a launcher.

    ``groups`` are the reference and candidate runners cli.py forked before anything
    secret existed (the candidate runner has not imported kernel.py).
    """
    early, idle = groups if groups else (None, None)
    if dist.under_launcher() and os.environ.get("RANK", "0") != "0":
        for g in (early, idle):
            if g is not None:
                g.kill()
        log("started by a launcher: rank 0's judge starts and judges every rank")
        return EXIT_OK, None
    base = sd.base_seeds(args.seed, args.multi_seed)
    result = Result(evaluator=evaluator, eval_id=eval_id, kernel_sha256=kernel_sha, seeds=base,
                    timing_method="none", warmup=args.warmup, reps=args.timed_runs,
                    l2_flush=False, generalized=args.generalized)
    result.extra["layout"] = layout
    judge: Optional[Judge] = None
    try:
        judge = _setup(args, layout, result, kernel_path, confiner)
        if idle is not None and idle.world == judge.world:
            judge.cand_idle, idle = idle, None
        group = judge.start_reference(early)
        early = None
        try:
            _check_framework(judge)
        except Abort:
            group.close()
            raise
        judge.reference_phase(group)
        judge.candidate_phase()
    except Abort as exc:
        for g in (early, idle) + ((judge.cand, judge.cand_idle) if judge else ()):
            if g is not None:
                g.kill()
        for rec in result.shapes:
            rec.passed = False
        if judge is not None:
            result.extra["judge"] = judge.summary()
        result.setup_failed = True
        result.failures.append(Failure("*", exc.stage, exc.message))
        result.diagnose(exc.stage, exc.message)
        log(f"{exc.stage}: {exc.message}")
        return exc.code, result.to_json()
    result.extra["judge"] = judge.summary()
    if judge.probe_plan is not None:
        result.extra["probes"] = judge.probe_entries
    if judge.world > 1:
        result.extra["world_size"] = judge.world
    out = result.to_json()
    log(f"{out['passed']}/{out['total']} shapes passed; geomean latency "
        f"{out['latency_us_geomean']} us; speedup {out['speedup_vs_ref_geomean']}")
    return (EXIT_OK if out["all_pass"] else EXIT_FAIL), out


def _setup(args: argparse.Namespace, layout: str, result: Result, kernel_path: str,
           confiner: Confiner) -> Judge:
    """Plan, shapes, framework and confinement: everything decided before any process starts."""
    try:
        plan = _load_plan(args, layout)
    except LayoutError as exc:
        raise Abort(EXIT_USAGE, "setup", f"operator: {exc}")
    world = dist.contract_world_size(plan.metadata) if layout == "atrex" else 1
    ids, bad = _select_shapes(plan.shape_ids(), args.shape_id, args.generalized)
    if bad:
        raise Abort(EXIT_USAGE, "usage", bad)
    result.extra["tolerance"] = plan.tolerance_summary()
    if layout == "sol":
        kernel_path = plan.kernel_file  # a solution.json's entry file, materialized
    with open(kernel_path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    fw_name, bad = _framework(args, source, plan.languages)
    if bad:
        raise Abort(EXIT_USAGE, "usage", bad)
    result.extra["framework"] = fw_name
    result.extra["cases_per_seed"] = args.cases or (10 if layout == "sol" else 1)
    probe_plan = None
    if args.probes:
        try:
            probe_plan = pr.load(args.probes)
        except (OSError, ValueError) as exc:
            raise Abort(EXIT_USAGE, "usage", f"--probes: {exc}")
        result.seeds = [p.seed for p in probe_plan.cases]
        result.extra["cases_per_seed"] = 1
    judge = Judge(args, plan, result, ids, kernel_path, world, confiner)
    if probe_plan is not None:
        judge.probe_plan, judge.cases = probe_plan, 1
    judge.framework = loader.FRAMEWORKS[fw_name]
    if not judge.confiner.confines and not args.allow_unconfined:
        raise Abort(EXIT_ENV, "environment",
                    "the judge cannot confine the candidate process: Landlock is not available "
                    "(Linux 5.13 or later with the landlock LSM enabled); without it candidate "
                    "code could reach the result channel. Pass --allow-unconfined to evaluate "
                    "anyway (not for untrusted candidates)")
    return judge
