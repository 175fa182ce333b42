"""The evaluator result (DESIGN §4.6): collection, aggregation, masking, printing.

This file owns the one ``RESULT_JSON=`` line. Rules it enforces:

* A measurement that was not taken is ``null`` (or absent from a per-shape
  map), never 0 and never estimated. Aggregates over shapes (geomean,
  arithmetic mean, speedups, performance_score) are ``null`` unless every
  evaluated shape has the figure: a mean over the shapes that happened to
  pass would flatter a candidate that fails the slow ones.
* ``performance_score`` is the arithmetic mean over shapes of
  reference-µs / candidate-µs (upstream v0.3 objective); the geomean of the
  same ratios is ``speedup_vs_ref_geomean``.
* In generalized mode, shape ids become opaque ``case-<n>`` labels everywhere
  and failure messages lose shape values, indices and error magnitudes.
* The JSON is compact, with NaN/Inf impossible (``allow_nan=False``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

MAX_DIAGNOSTICS = 8
MAX_FAILURES = 64  # one per (shape, output, seed, case) can be thousands; the first ones say enough
MAX_DIAGNOSTIC_CHARS = 6000


@dataclass
class Failure:
    """One failed check, named by shape, output, seed and case."""

    shape_id: str
    stage: str  # compile_import | candidate_runtime | reference_runtime | structure | correctness | timing | integrity | setup
    message: str
    output: Optional[str] = None
    seed: Optional[int] = None
    case: Optional[int] = None
    max_abs_err: Optional[float] = None
    max_rel_err: Optional[float] = None
    first_mismatch_index: Optional[list[int]] = None
    mismatch_count: Optional[int] = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"shape_id": self.shape_id, "stage": self.stage}
        for key in ("output", "seed", "case", "max_abs_err", "max_rel_err",
                    "first_mismatch_index", "mismatch_count"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        d["message"] = self.message
        return d


@dataclass
class ShapeRecord:
    """Everything measured for one shape."""

    shape_id: str
    passed: bool = True
    latency_us: Optional[float] = None
    ref_latency_us: Optional[float] = None
    cv: Optional[float] = None
    ref_cv: Optional[float] = None
    reps: Optional[int] = None  # timed runs, when a time budget cut them
    median_us: Optional[float] = None  # both statistics of the candidate's runs, whichever
    mean_us: Optional[float] = None  # latency_us is (Result.latency_statistic)


@dataclass
class Result:
    """The whole evaluation, turned into JSON by ``to_json``."""

    evaluator: str
    eval_id: str
    kernel_sha256: Optional[str]
    seeds: list[int]
    timing_method: str
    warmup: int
    reps: int
    l2_flush: bool
    generalized: bool = False
    shapes: list[ShapeRecord] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    max_abs_err: Optional[float] = None
    max_rel_err: Optional[float] = None
    extra: dict[str, Any] = field(default_factory=dict)
    timing_extra: dict[str, Any] = field(default_factory=dict)
    time_budget_ms: int = 0  # a shape's timed runs per runner; 0: no budget
    latency_statistic: str = "median"  # of a shape's timed runs: "median" or "mean"
    setup_failed: bool = False

    def note_errors(self, abs_err: Optional[float], rel_err: Optional[float]) -> None:
        """Keep the worst finite errors seen over every compared output."""
        if abs_err is not None and math.isfinite(abs_err):
            self.max_abs_err = abs_err if self.max_abs_err is None else max(self.max_abs_err, abs_err)
        if rel_err is not None and math.isfinite(rel_err):
            self.max_rel_err = rel_err if self.max_rel_err is None else max(self.max_rel_err, rel_err)

    def diagnose(self, stage: str, message: str, shape_id: Optional[str] = None) -> None:
        """An actionable diagnostic (import error, runtime error, timing note)."""
        if len(message) > MAX_DIAGNOSTIC_CHARS:
            half = MAX_DIAGNOSTIC_CHARS // 2
            message = message[:half] + "\n...[trimmed]...\n" + message[-half:]
        entry: dict[str, Any] = {"stage": stage, "message": message}
        if shape_id is not None:
            entry["shape_id"] = shape_id
        if entry not in self.diagnostics and len(self.diagnostics) < MAX_DIAGNOSTICS:
            self.diagnostics.append(entry)

    def _budget_json(self, shapes: list[ShapeRecord], alias: dict[str, str]) -> dict[str, Any]:
        """timing's time_budget_ms and reps_by_shape (every timed shape's count)."""
        if self.time_budget_ms <= 0:
            return {}
        return {"time_budget_ms": self.time_budget_ms,
                "reps_by_shape": {alias[s.shape_id]: s.reps for s in shapes
                                  if s.reps is not None}}

    def to_json(self) -> dict[str, Any]:
        shapes = self.shapes
        total = len(shapes)
        passed = sum(1 for s in shapes if s.passed)
        all_pass = (not self.setup_failed and total > 0 and passed == total
                    and not self.failures)
        alias = self._aliases()
        lat = {alias[s.shape_id]: _round(s.latency_us) for s in shapes if s.latency_us is not None}
        cand = [s.latency_us for s in shapes]
        ratios = [(s.ref_latency_us / s.latency_us)
                  if s.ref_latency_us and s.latency_us else None for s in shapes]
        complete = total > 0 and all(v is not None and v > 0 for v in cand)
        ratios_complete = total > 0 and all(r is not None and r > 0 for r in ratios)
        out: dict[str, Any] = {
            "all_pass": all_pass,
            "total": total,
            "passed": passed,
            "failures": [self._mask_failure(f, alias) for f in self.failures[:MAX_FAILURES]],
            "latency_us_by_shape": lat,
            "latency_us_geomean": _round(_geomean(cand)) if complete else None,
            "latency_us_arith_mean": _round(sum(cand) / total) if complete else None,  # type: ignore[arg-type]
            "speedup_vs_ref_geomean": _round(_geomean(ratios)) if ratios_complete else None,
            "speedup_vs_ref_mean": _round(sum(ratios) / total) if ratios_complete else None,  # type: ignore[arg-type]
            "performance_score": _round(sum(ratios) / total) if ratios_complete else None,  # type: ignore[arg-type]
            "max_abs_err": None if self.generalized and not all_pass else _round(self.max_abs_err),
            "max_rel_err": None if self.generalized and not all_pass else _round(self.max_rel_err),
            "evaluator": self.evaluator,
            "eval_id": self.eval_id,
            "kernel_sha256": self.kernel_sha256,
            "seeds": self.seeds,
            "timing": {
                "method": self.timing_method,
                "warmup": self.warmup,
                "reps": self.reps,
                "l2_flush": self.l2_flush,
                "cv_by_shape": {alias[s.shape_id]: _round(s.cv) for s in shapes if s.cv is not None},
                **self.timing_extra,
                **self._budget_json(shapes, alias),
            },
            # Top level, as the native harness writes it: aka's result reader
            # keeps unknown top-level fields, while `timing` has a fixed set.
            "reference_latency_us_by_shape": {alias[s.shape_id]: _round(s.ref_latency_us)
                                              for s in shapes if s.ref_latency_us is not None},
            # Which statistic latency_us_by_shape (and so the score) is, and both.
            "latency_statistic": self.latency_statistic,
            "latency_median_us_by_shape": {alias[s.shape_id]: _round(s.median_us)
                                           for s in shapes if s.median_us is not None},
            "latency_mean_us_by_shape": {alias[s.shape_id]: _round(s.mean_us)
                                         for s in shapes if s.mean_us is not None},
            "actionable_diagnostics": [self._mask_diag(d, alias) for d in self.diagnostics],
        }
        if len(self.failures) > MAX_FAILURES:
            out["failures_truncated"] = len(self.failures) - MAX_FAILURES
        out.update(self.extra)
        if self.generalized:
            out["hidden_case_details"] = True
        return out

    def _aliases(self) -> dict[str, str]:
        """Shape id → the label the result uses (opaque in generalized mode)."""
        ids = [s.shape_id for s in self.shapes]
        for f in self.failures:
            if f.shape_id not in ids:
                ids.append(f.shape_id)
        if not self.generalized:
            return {i: i for i in ids}
        return {i: (i if i == "*" else f"case-{n}") for n, i in enumerate(ids)}

    def _mask_failure(self, f: Failure, alias: dict[str, str]) -> dict[str, Any]:
        if not self.generalized:
            return f.to_json()
        label = alias.get(f.shape_id, "case-?")
        d: dict[str, Any] = {"shape_id": label, "stage": f.stage}
        if f.output is not None:
            d["output"] = f.output
        kind = {"correctness": "outputs do not match the reference within tolerance",
                "structure": "outputs have the wrong structure, shape or dtype",
                "candidate_runtime": "the candidate raised an error",
                "reference_runtime": "the reference raised an error",
                "compile_import": "the candidate failed to import",
                "timing": "the candidate could not be timed"}.get(f.stage, "check failed")
        if f.stage == "integrity" or f.message.startswith("output of a timed run is wrong"):
            # The judge's own findings name no case detail before the first colon.
            kind = f.message.split(":", 1)[0]
        d["message"] = f"{label}: {kind} (details hidden: generalized evaluation)"
        return d

    def _mask_diag(self, d: dict[str, Any], alias: dict[str, str]) -> dict[str, Any]:
        if not self.generalized:
            return d
        masked = dict(d)
        if "shape_id" in masked:
            masked["shape_id"] = alias.get(masked["shape_id"], "case-?")
            # Per-case messages may quote sizes; numbers are hidden, text kept.
            masked["message"] = re.sub(r"\d+", "#", masked["message"])
        return masked


def _geomean(values: list[Optional[float]]) -> float:
    logs = [math.log(v) for v in values if v is not None and v > 0]
    return math.exp(sum(logs) / len(logs))


def _round(value: Optional[float], digits: int = 6) -> Optional[float]:
    """Finite floats rounded to 6 significant digits; anything else is null."""
    if value is None or not math.isfinite(value):
        return None
    if value == 0:
        return 0.0
    return float(f"{value:.{digits}g}")


def emit(result_json: dict[str, Any], stream: Any) -> None:
    """Write the single RESULT_JSON line."""
    line = json.dumps(result_json, separators=(",", ":"), allow_nan=False, sort_keys=False)
    stream.write("RESULT_JSON=" + line + "\n")
    stream.flush()
