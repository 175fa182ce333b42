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


def check(plan: ProbePlan, want: Any, got: Any) -> Optional[str]:
    """Why got is outside the plan's thresholds (None when within)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return "the output has the wrong structure"
        if not want.is_floating_point():
            return None if torch.equal(want.cpu(), got.cpu()) else "integer output differs"
        thr = plan.rel_l2.get(DTYPES.get(want.dtype, "float32"), 0.0)
        err = rel_l2(want, got)
        if err > thr:
            return (f"relative L2 error {err:.3g} against the reference, above the "
                    f"supervisor's threshold {thr:g} for {DTYPES.get(want.dtype, want.dtype)}")
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return "the outputs have the wrong structure"
        for k in want:
            why = check(plan, want[k], got[k])
            if why:
                return f"'{k}': {why}"
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return "the outputs have the wrong structure"
        for i, (a, b) in enumerate(zip(want, got)):
            why = check(plan, a, b)
            if why:
                return f"[{i}]: {why}"
        return None
    return None if want == got else "a non-tensor output differs"
