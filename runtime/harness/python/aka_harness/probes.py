"""Numerical probes: the supervisor's supplemental inputs and their comparison.

A probe plan (``--probes FILE``, written by aka's supervisor, never by the candidate)
lists cases, each a name, a seed and a transform of the float inputs the operator's
input builder made: ``offset + scale * x``, then, for ``constant_rows``, the first
element of every innermost row copied over the row. Integer inputs stay as built.
The candidate's outputs must be within the plan's relative L2 threshold of the
reference's on the same inputs, per float dtype; integer outputs must match exactly.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Optional

import torch

DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
          torch.bfloat16: "bfloat16"}


@dataclass
class Probe:
    name: str
    seed: int
    scale: float
    offset: float
    pattern: str

    def wire(self) -> dict[str, Any]:
        return {"scale": self.scale, "offset": self.offset, "pattern": self.pattern}


@dataclass
class ProbePlan:
    cases: list[Probe]
    rel_l2: dict[str, float]


def load(path: str) -> ProbePlan:
    """The plan, checked; ValueError names the field."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    thr = doc.get("rel_l2")
    if not isinstance(thr, dict) or any(not isinstance(thr.get(d), (int, float)) or thr[d] < 0
                                        for d in DTYPES.values()):
        raise ValueError(f"{path}: rel_l2: expected a number >= 0 for each of "
                         f"{', '.join(DTYPES.values())}")
    cases = doc.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ValueError(f"{path}: cases: expected a non-empty array")
    out = []
    for i, c in enumerate(cases):
        ok = (isinstance(c, dict) and isinstance(c.get("name"), str)
              and isinstance(c.get("seed"), int) and isinstance(c.get("scale"), (int, float))
              and isinstance(c.get("offset"), (int, float))
              and c.get("pattern") in ("none", "constant_rows"))
        if not ok:
            raise ValueError(f"{path}: cases[{i}]: expected name, seed, scale, offset and "
                             f"pattern (\"none\" or \"constant_rows\")")
        out.append(Probe(c["name"], c["seed"], float(c["scale"]), float(c["offset"]),
                         c["pattern"]))
    return ProbePlan(out, {d: float(thr[d]) for d in DTYPES.values()})


def transform(value: Any, probe: Optional[dict[str, Any]]) -> Any:
    """The probe's transform of every float tensor in an input tree (new tensors)."""
    if not probe:
        return value
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            return value
        x = value * probe["scale"] + probe["offset"]
        if probe["pattern"] == "constant_rows" and x.dim() > 0 and x.shape[-1] > 1:
            x = x[..., :1].expand_as(x).contiguous()
        return x.to(value.dtype)
    if isinstance(value, dict):
        return {k: transform(v, probe) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(transform(v, probe) for v in value)
    return value


def rel_l2(want: torch.Tensor, got: torch.Tensor) -> float:
    """||got - want|| / ||want|| over the finite pairs; inf for an unmatched non-finite."""
    w = want.detach().to("cpu", torch.float64).flatten()
    g = got.detach().to("cpu", torch.float64).flatten()
    if w.shape != g.shape:
        return math.inf
    fw, fg = torch.isfinite(w), torch.isfinite(g)
    both_nan = torch.isnan(w) & torch.isnan(g)
    odd = (~fw | ~fg) & ~both_nan & (w != g)
    if bool(odd.any()):
        return math.inf
    keep = fw & fg
    num = float(((g - w)[keep] ** 2).sum())
    den = float((w[keep] ** 2).sum())
    if num == 0:
        return 0.0
    return math.sqrt(num / den) if den > 0 else math.inf


@dataclass
class Measure:
    """The worst output of one probe case: its path, error, threshold and verdict."""
    output: str
    value: float
    threshold: float
    why: Optional[str]  # None when within the threshold


def _leaf(plan: ProbePlan, want: torch.Tensor, got: Any, path: str) -> Measure:
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        return Measure(path, math.inf, 0.0, "the output has the wrong structure")
    if not want.is_floating_point():
        same = torch.equal(want.cpu(), got.cpu())
        return Measure(path, 0.0 if same else math.inf, 0.0,
                       None if same else "an integer output that differs")
    thr = plan.rel_l2.get(DTYPES.get(want.dtype, "float32"), 0.0)
    err = rel_l2(want, got)
    why = None if err <= thr else (f"relative L2 error {err:.3g} against the reference, above "
                                   f"the supervisor's threshold {thr:g} for "
                                   f"{DTYPES.get(want.dtype, want.dtype)}")
    return Measure(path, err, thr, why)


def _all(plan: ProbePlan, want: Any, got: Any, path: str) -> list[Measure]:
    if isinstance(want, torch.Tensor):
        return [_leaf(plan, want, got, path)]
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return [Measure(path, math.inf, 0.0, "the outputs have the wrong structure")]
        return [m for k in want for m in _all(plan, want[k], got[k], f"{path}.{k}" if path else k)]
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return [Measure(path, math.inf, 0.0, "the outputs have the wrong structure")]
        return [m for i, (a, b) in enumerate(zip(want, got)) for m in _all(plan, a, b, f"{path}[{i}]")]
    same = want == got
    return [Measure(path, 0.0 if same else math.inf, 0.0, None if same else "a non-tensor output differs")]


def worst(plan: ProbePlan, want: Any, got: Any, path: str = "") -> Measure:
    """The first output outside its threshold, else the one closest to it."""
    ms = _all(plan, want, got, path)
    bad = [m for m in ms if m.why]
    if bad:
        return bad[0]
    return max(ms, key=lambda m: m.value / m.threshold if m.threshold > 0 else m.value)


def check(plan: ProbePlan, want: Any, got: Any) -> Optional[str]:
    """Why got is outside the plan's thresholds (None when within)."""
    m = worst(plan, want, got)
    return f"'{m.output}': {m.why}" if m.why else None
