"""The evaluation loop shared by both layouts: correctness cases, then timing.

This file owns the order in which things happen for every shape, which is
where most measurement bugs hide:

1. Both models (or functions) are set up; a candidate constructor that raises
   fails that shape only.
2. For every base seed and case: inputs are built from a seed derived from
   (seed, shape, case); the candidate gets its own clone and runs **first**,
   right after the allocator has been handed poisoned memory, so an output it
   allocates but never writes cannot inherit the reference's result; the
   device is synchronized and the outputs checked to be plain materialized
   tensors; only then does the reference run on its own clone; every output
   is compared. Destination-passing outputs are poisoned (NaN for floats) and,
   for integer/bool outputs, run twice with two different poisons.
3. A shape whose every case passed is timed: candidate, then reference, on the
   same performance-seed inputs, with the same Timer.

Exceptions, wrong structure and timeouts abort the remaining cases of a shape
(they are deterministic); tolerance misses do not, so every seed is reported.
"""

from __future__ import annotations

import copy
import signal
import traceback
from abc import ABC, abstractmethod
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import torch

from aka_harness import compare as cmp
from aka_harness import seeds as sd
from aka_harness.dist import Collective
from aka_harness.result import Failure, Result, ShapeRecord
from aka_harness.timing import Measurement, Timer

Outputs = dict[str, Any]
Launcher = tuple[Callable[[], Any], Callable[[Any], Outputs]]


class CaseTimeout(Exception):
    """A candidate call ran past --candidate-timeout-s."""


class ShapeAdapter(ABC):
    """What the driver needs from a layout for one shape."""

    shape_id: str
    dps_non_float_outputs: bool = False  # run a second poison variant in case 0

    @abstractmethod
    def setup(self, init_seed: int) -> None:
        """Construct what the shape needs; raise CandidateError for candidate faults."""

    @abstractmethod
    def build_inputs(self) -> Any:
        """Fresh inputs; the RNGs are already seeded by the driver."""

    @abstractmethod
    def run_candidate(self, inputs: Any, poison_variant: int) -> Outputs:
        """Run the candidate once; outputs keyed by output name."""

    @abstractmethod
    def run_reference(self, inputs: Any) -> Outputs:
        """Run the reference once; outputs keyed by output name."""

    @abstractmethod
    def tolerance(self, output: str) -> cmp.Tolerance:
        """The tolerance for one output of this shape."""

    @abstractmethod
    def candidate_launcher(self, inputs: Any) -> Launcher:
        """A zero-argument launch of the candidate and how to read its outputs."""

    @abstractmethod
    def reference_launcher(self, inputs: Any) -> Launcher:
        """A zero-argument launch of the reference and how to read its outputs."""


class CandidateError(Exception):
    """The candidate (not the harness, not the reference) failed."""


def clone_tree(value: Any) -> Any:
    """Deep copy of nested inputs; tensors are cloned (same strides where possible)."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return {k: clone_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    return copy.deepcopy(value)


def _tree_bytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, dict):
        return sum(_tree_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_tree_bytes(v) for v in value)
    return 0


def synchronize(device: torch.device) -> None:
    """Wait for every stream of the device (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def scrub_allocator(device: torch.device, nbytes: int) -> None:
    """Hand the caching allocator NaN-filled blocks before a candidate runs.

    torch's CUDA allocator reuses freed blocks without clearing them, so an
    output that a kernel allocates with torch.empty and never writes could
    contain an earlier correct result. Allocating, NaN-filling and freeing a
    few blocks of the likely sizes makes such leftovers NaN instead.
    """
    if device.type != "cuda":
        return
    size = min(max(nbytes, 1 << 20), 1 << 30)
    blocks = []
    for _ in range(2):
        b = torch.empty(size // 4, dtype=torch.float32, device=device)
        b.fill_(float("nan"))
        blocks.append(b)
    del blocks


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """SIGALRM-based limit for one candidate call (0 disables)."""
    if seconds <= 0:
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"candidate call exceeded {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def user_error(exc: BaseException, files: tuple[str, ...] = ()) -> str:
    """One line of exception text plus the innermost frame in the user's file."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if any(f.filename.endswith(p) for p in files)] if files else []
    where = ""
    pick = mine[-1] if mine else (frames[-1] if frames else None)
    if pick is not None:
        where = f" [{pick.filename.rsplit('/', 1)[-1]}:{pick.lineno}: {(pick.line or '').strip()}]"
    return f"{type(exc).__name__}: {exc}{where}"


class Driver:
    """Runs every shape through correctness and timing, filling a Result."""

    def __init__(self, result: Result, timer: Timer, device: torch.device, seeds: list[int],
                 cases: int, timeout_s: float, candidate_file: str,
                 integrity_check: Callable[[], Optional[str]],
                 coll: Optional[Collective] = None) -> None:
        self.result = result
        self.coll = coll or Collective()
        self.timer = timer
        self.device = device
        self.seeds = seeds
        self.cases = max(cases, 1)
        self.timeout_s = timeout_s
        self.candidate_file = candidate_file
        self.integrity_check = integrity_check

    # ---- correctness ------------------------------------------------------------------

    def _fail(self, rec: ShapeRecord, failure: Failure) -> None:
        rec.passed = False
        self.result.failures.append(failure)

    def _candidate_outputs(self, shape: ShapeAdapter, inputs: Any, variant: int) -> Outputs:
        scrub_allocator(self.device, 2 * _tree_bytes(inputs))
        with time_limit(self.timeout_s):
            out = shape.run_candidate(inputs, variant)
            # Materialize: every stream drained before anything reads the outputs.
            synchronize(self.device)
        return out

    def _run_case(self, shape: ShapeAdapter, rec: ShapeRecord, base: int, case: int) -> bool:
        """One correctness case. Returns False when the shape must stop (deterministic)."""
        sid = shape.shape_id
        seed = sd.derive_seed(sd.STAGE_CORRECTNESS, base, sid, case)
        sd.seed_everything(seed)
        try:
            inputs = shape.build_inputs()
        except Exception as exc:  # the input builder is evaluator code
            self._fail(rec, Failure(sid, "reference_runtime", f"shape {sid}: building inputs "
                                    f"failed: {user_error(exc)}", seed=base, case=case))
            return False
        try:
            out = self._candidate_outputs(shape, clone_tree(inputs), 0)
            if case == 0 and shape.dps_non_float_outputs:
                again = self._candidate_outputs(shape, clone_tree(inputs), 1)
                for name, value in out.items():
                    if (isinstance(value, torch.Tensor) and not value.is_floating_point()
                            and not cmp.bitwise_equal(value, again[name])):
                        self._fail(rec, Failure(sid, "correctness", f"shape {sid}: output "
                                                f"'{name}' depends on the poison written "
                                                f"before the call: some elements are never "
                                                f"written", output=name, seed=base, case=case))
                        return False
        except CaseTimeout as exc:
            self._fail(rec, Failure(sid, "candidate_runtime", f"shape {sid}: {exc}",
                                    seed=base, case=case))
            return False
        except Exception as exc:
            msg = user_error(exc, (self.candidate_file,))
            self._fail(rec, Failure(sid, "candidate_runtime", f"shape {sid}: candidate raised "
                                    f"{msg}", seed=base, case=case))
            self.result.diagnose("candidate_runtime", msg, sid)
            return False
        try:
            ref = shape.run_reference(clone_tree(inputs))
            synchronize(self.device)
        except Exception as exc:
            self._fail(rec, Failure(sid, "reference_runtime", f"shape {sid}: the reference "
                                    f"raised {user_error(exc)}", seed=base, case=case))
            return False
        return self._compare_outputs(shape, rec, ref, out, base, case)

    def _compare_outputs(self, shape: ShapeAdapter, rec: ShapeRecord, ref: Outputs,
                         out: Outputs, base: int, case: int) -> bool:
        sid = shape.shape_id
        if list(ref.keys()) != list(out.keys()) and set(ref.keys()) != set(out.keys()):
            self._fail(rec, Failure(sid, "structure", f"shape {sid}: the candidate returned "
                                    f"outputs {sorted(out.keys())}, the reference "
                                    f"{sorted(ref.keys())}", seed=base, case=case))
            return False
        go_on = True
        for name in ref:
            v = cmp.compare(ref[name], out[name], shape.tolerance(name), self.device)
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
            stage = "structure" if structural else "correctness"
            msg = f"shape {sid}, output '{name}', seed {base}, case {case}: {v.reason}"
            if v.max_abs_err is not None:
                msg += f"; max abs err {v.max_abs_err:.4g}, max rel err {v.max_rel_err:.4g}"
            if v.first_bad_index is not None:
                msg += f"; first mismatch at index {v.first_bad_index}"
            self._fail(rec, Failure(sid, stage, msg, output=name, seed=base, case=case,
                                    max_abs_err=v.max_abs_err, max_rel_err=v.max_rel_err,
                                    first_mismatch_index=v.first_bad_index,
                                    mismatch_count=v.bad_count or None))
            if structural:
                go_on = False
        return go_on

    # ---- timing -----------------------------------------------------------------------

    def _measure(self, shape: ShapeAdapter, launcher: Launcher, who: str,
                 eager: Optional[Outputs]) -> Measurement:
        fn, collect = launcher
        if not self.timer.cuda_graph:
            return self.timer.measure(fn)
        try:
            graph, static = self.timer.capture(fn)
        except Exception as exc:
            if who == "candidate":
                raise
            # An eager PyTorch reference may sync or allocate in ways a graph
            # cannot capture; it is then timed with events and the note says so.
            self.result.diagnose("timing", f"reference not capturable in a CUDA graph "
                                 f"({type(exc).__name__}); reference timed with events",
                                 shape.shape_id)
            return Timer(self.device, self.timer.warmup, self.timer.reps, False,
                         self.coll).measure(fn)
        if eager is not None:
            graph.replay()
            synchronize(self.device)
            got = collect(static)
            for name, ref in eager.items():
                v = cmp.compare(ref, got.get(name), shape.tolerance(name), self.device)
                if not v.ok:
                    raise CandidateError(f"CUDA-graph replay output '{name}' differs from the "
                                         f"eager output ({v.reason})")
        return self.timer.measure_replay(graph)

    def _time_shape(self, shape: ShapeAdapter, rec: ShapeRecord) -> None:
        sid = shape.shape_id
        sd.seed_everything(sd.derive_seed(sd.STAGE_PERFORMANCE, self.seeds[0], sid, 0))
        inputs = shape.build_inputs()
        m: Optional[Measurement] = None
        try:
            eager = None
            launcher = shape.candidate_launcher(clone_tree(inputs))
            if self.timer.cuda_graph:
                fn, collect = launcher
                eager = {k: v.clone() for k, v in collect(fn()).items()}
                synchronize(self.device)
            m = self._measure(shape, launcher, "candidate", eager)
        except Exception as exc:
            msg = user_error(exc, (self.candidate_file,))
            self._fail(rec, Failure(sid, "timing", f"shape {sid}: timing the candidate "
                                    f"failed: {msg}"))
            self.result.diagnose("timing", msg, sid)
        # Every rank must agree before the reference's collectives start.
        if not self.coll.all_true(m is not None) or m is None:
            return
        rec.latency_us, rec.cv = self.coll.max(m.median_us), self.coll.max(m.cv)
        for note in m.notes:
            self.result.diagnose("timing", f"shape {sid}: candidate: {note}", sid)
        mr: Optional[Measurement] = None
        try:
            mr = self._measure(shape, shape.reference_launcher(clone_tree(inputs)),
                               "reference", None)
        except Exception as exc:  # no speedup for this shape; the candidate still passed
            self.result.diagnose("timing", f"shape {sid}: timing the reference failed: "
                                 f"{user_error(exc)}", sid)
        if self.coll.all_true(mr is not None) and mr is not None:
            rec.ref_latency_us, rec.ref_cv = self.coll.max(mr.median_us), self.coll.max(mr.cv)

    # ---- the loop ---------------------------------------------------------------------

    def run_shape(self, shape: ShapeAdapter) -> None:
        sid = shape.shape_id
        rec = ShapeRecord(sid)
        self.result.shapes.append(rec)
        try:
            with torch.inference_mode():
                shape.setup(sd.derive_seed("init", self.seeds[0], sid, 0))
        except CandidateError as exc:
            self._fail(rec, Failure(sid, "candidate_runtime", f"shape {sid}: {exc}"))
            self.result.diagnose("candidate_runtime", str(exc), sid)
            return
        except Exception as exc:
            self._fail(rec, Failure(sid, "reference_runtime", f"shape {sid}: setting up the "
                                    f"reference failed: {user_error(exc)}"))
            return
        with torch.inference_mode():
            for base in self.seeds:
                stop = False
                for case in range(self.cases):
                    # Ranks stop together: a lone rank that stops leaves peers hanging.
                    if not self.coll.all_true(self._run_case(shape, rec, base, case)):
                        stop = True
                        break
                if stop:
                    break
        why = self.integrity_check()
        if why:
            self._fail(rec, Failure(sid, "integrity", f"shape {sid}: {why}"))
        if self.coll.all_true(rec.passed) and self.timer.reps > 0:
            with torch.inference_mode():
                self._time_shape(shape, rec)
            why = self.integrity_check()
            if why:
                rec.latency_us = rec.ref_latency_us = rec.cv = None
                self._fail(rec, Failure(sid, "integrity", f"shape {sid}: {why}"))
