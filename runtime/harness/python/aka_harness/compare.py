"""Output checks: materialization, structure, poisoning and numerical comparison.

This file owns the verdict on one output tensor. Two rule sets exist because
the two layouts define "correct" differently:

* Atrex-Bench (``Tolerance.matched_ratio == 1``): every element must satisfy
  ``|out - ref| <= atol + rtol * |ref|`` computed in float64 (torch.allclose
  semantics with NaN never equal); non-floating outputs must be bit-equal.
* SOL-ExecBench (``Tolerance.sol_rules``): both sides cast to float32; any NaN
  or Inf fails (optionally -Inf on both sides is allowed); an all-zero output
  against a non-zero reference fails; then the fraction of elements within
  ``atol + rtol * |ref|`` must reach ``matched_ratio`` and, when set, the
  largest error must stay under ``error_cap``.

Every failure names the first mismatching index (row-major) so that an agent
can find the bug, and reports the largest finite absolute and relative errors.
NaN never passes under either rule set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from aka_harness.codec import Opaque


@dataclass(frozen=True)
class Tolerance:
    """When an output counts as equal to the reference's."""

    atol: float
    rtol: float
    matched_ratio: float = 1.0
    error_cap: Optional[float] = None
    allow_negative_inf: bool = False
    sol_rules: bool = False
    rel_l2: Optional[float] = None  # Atrex FP4 rule: relative L2 instead of allclose


@dataclass
class Verdict:
    """The outcome of comparing one output."""

    ok: bool
    reason: str = ""
    max_abs_err: Optional[float] = None
    max_rel_err: Optional[float] = None
    first_bad_index: Optional[list[int]] = None
    bad_count: int = 0
    numel: int = 0
    details: dict[str, Any] = field(default_factory=dict)


def unravel(flat: int, shape: tuple[int, ...]) -> list[int]:
    """Row-major multi-index of a flat position (torch 1.x has no unravel_index)."""
    index: list[int] = []
    for dim in reversed(shape):
        index.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return list(reversed(index))


def materialization_problem(value: Any, device: torch.device) -> Optional[str]:
    """Why an output is not a plain, materialized tensor on the right device.

    A tensor subclass can defer its computation until the harness reads it
    (a lazy output), so timing would measure nothing: only exactly
    ``torch.Tensor`` is accepted. Meta and sparse tensors hold no data. An
    output received from a runner that was not such a tensor arrives as an
    ``Opaque`` (wire.py) saying what it was.
    """
    if isinstance(value, Opaque):
        return value.why
    if not isinstance(value, torch.Tensor):
        return f"is a {type(value).__name__}, not a torch.Tensor"
    if type(value) is not torch.Tensor:
        return (f"is a {type(value).__module__}.{type(value).__qualname__} (a torch.Tensor "
                f"subclass); outputs must be plain materialized tensors, lazy or proxy "
                f"tensors are rejected")
    if value.is_meta or value.layout != torch.strided:
        return "holds no materialized data (meta or non-strided tensor)"
    if value.device.type != device.type:
        return f"is on {value.device}, expected {device.type}"
    return None


def poison_(tensor: torch.Tensor, variant: int = 0) -> None:
    """Fill an output buffer so that any element the kernel never writes fails.

    Floats get NaN (which never passes). Integers and bools have no NaN, so
    two variants exist: the harness runs round 0 with both and requires the
    same result, which exposes an unwritten element whatever its reference value.
    """
    if tensor.numel() == 0:
        return
    if tensor.is_floating_point() or tensor.is_complex():
        try:
            tensor.fill_(float("nan"))
        except RuntimeError:  # float8 / packed types without a NaN fill kernel
            tensor.view(torch.uint8).fill_(0xFF)
    elif tensor.dtype == torch.bool:
        tensor.fill_(variant == 0)
    else:
        info = torch.iinfo(tensor.dtype)
        tensor.fill_(info.max if variant == 0 else info.min)


def shape_dtype_problem(ref: torch.Tensor, out: torch.Tensor) -> Optional[str]:
    """Shape and dtype must match exactly before any numeric comparison."""
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {list(out.shape)} differs from the reference's {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"dtype {out.dtype} differs from the reference's {ref.dtype}"
    return None


def _first_bad(bad: torch.Tensor, shape: tuple[int, ...]) -> tuple[int, Optional[list[int]]]:
    """Count of failing elements and the multi-index of the first one."""
    flat = bad.reshape(-1)
    count = int(flat.sum().item())
    if count == 0:
        return 0, None
    first = int(torch.nonzero(flat, as_tuple=False)[0, 0].item())
    return count, unravel(first, shape)


def _finite_max(values: torch.Tensor) -> Optional[float]:
    """Largest finite element, or None when there is none (JSON has no NaN)."""
    finite = values[torch.isfinite(values)]
    if finite.numel() == 0:
        return None
    return float(finite.max().item())


def _exact(ref: torch.Tensor, out: torch.Tensor) -> Verdict:
    """Non-floating outputs must be equal element for element."""
    bad = ref != out
    count, first = _first_bad(bad, tuple(ref.shape))
    diff = (ref.to(torch.float64) - out.to(torch.float64)).abs() if ref.numel() else ref
    mx = _finite_max(diff) if ref.numel() else 0.0
    if count:
        return Verdict(False, f"{count} of {ref.numel()} elements differ (exact match "
                       "required for non-floating outputs)", mx, None, first, count, ref.numel())
    return Verdict(True, "", mx or 0.0, 0.0, None, 0, ref.numel())


def _nan_note(ref: torch.Tensor, out: torch.Tensor) -> str:
    """How many NaN the output has, and how many of them sit where the reference has NaN too
    (a reference that produces NaN there makes the failure the operator's inputs', not
    necessarily the kernel's; it still fails, but the message must not hide it)."""
    o_nan = torch.isnan(out)
    n = int(o_nan.sum().item())
    if not n:
        return ""
    both = int((o_nan & torch.isnan(ref)).sum().item())
    if both == n:
        return f"{n} NaN in the output, all where the reference has NaN too"
    if both:
        return f"{n} NaN in the output, {both} of them where the reference has NaN too"
    return f"{n} NaN in the output, none where the reference has NaN"


def _compare_atrex(ref: torch.Tensor, out: torch.Tensor, tol: Tolerance) -> Verdict:
    """allclose in float64; NaN anywhere in the output never passes."""
    r = ref.to(torch.float64)
    o = out.to(torch.float64)
    diff = (o - r).abs()
    rel = diff / torch.clamp(r.abs(), min=max(tol.atol, 1e-12))
    mx_abs, mx_rel = _finite_max(diff), _finite_max(rel)
    if tol.rel_l2 is not None:
        num = torch.linalg.vector_norm(torch.nan_to_num(o - r, nan=math.inf))
        den = torch.linalg.vector_norm(r)
        score = float((num / den).item()) if float(den.item()) > 0 else float(num.item())
        ok = math.isfinite(score) and score <= tol.rel_l2 and not bool(torch.isnan(o).any())
        reason = "" if ok else f"relative L2 error {score:.4g} exceeds {tol.rel_l2}"
        return Verdict(ok, reason, mx_abs, mx_rel, None, 0, r.numel(), {"rel_l2": score})
    close = torch.isclose(o, r, rtol=tol.rtol, atol=tol.atol, equal_nan=False)
    count, first = _first_bad(~close, tuple(r.shape))
    if count:
        why = f"{count} of {r.numel()} elements outside atol={tol.atol} rtol={tol.rtol}"
        note = _nan_note(r, o)
        if note:
            why += f" ({note})"
        return Verdict(False, why, mx_abs, mx_rel, first, count, r.numel())
    return Verdict(True, "", mx_abs or 0.0, mx_rel or 0.0, None, 0, r.numel())


def _compare_sol(ref: torch.Tensor, out: torch.Tensor, tol: Tolerance) -> Verdict:
    """SOL-ExecBench's judgement: sanity, all-zero guard, matched ratio, error cap."""
    r = ref.to(torch.float32).reshape(-1)
    o = out.to(torch.float32).reshape(-1)
    shape = tuple(ref.shape)
    keep = torch.ones_like(r, dtype=torch.bool)
    if tol.allow_negative_inf:
        both = torch.isneginf(r) & torch.isneginf(o)
        keep = ~both
    nonfinite = (~torch.isfinite(r) | ~torch.isfinite(o)) & keep
    if bool(nonfinite.any()):
        count, first = _first_bad(nonfinite, shape)
        kind = "NaN" if bool((torch.isnan(r) | torch.isnan(o)).any()) else "Inf"
        note = _nan_note(r, o)
        return Verdict(False, f"{count} elements are {kind} (non-finite values never pass"
                              f"{'; ' + note if note else ''})",
                       None, None, first, count, r.numel(), {"has_nan": kind == "NaN"})
    r, o = r[keep], o[keep]
    diff = (o - r).abs()
    rel = diff / torch.clamp(r.abs(), min=tol.atol if tol.atol > 0 else 1e-12)
    mx_abs, mx_rel = _finite_max(diff), _finite_max(rel)
    ref_norm = float(torch.linalg.vector_norm(r).item()) if r.numel() else 0.0
    out_norm = float(torch.linalg.vector_norm(o).item()) if o.numel() else 0.0
    if ref_norm > 0 and out_norm == 0:
        return Verdict(False, "the output is all zeros but the reference is not",
                       ref_norm, ref_norm, unravel(0, shape), r.numel(), r.numel())
    bad_kept = diff > tol.atol + tol.rtol * r.abs()
    bad = torch.zeros(ref.numel(), dtype=torch.bool, device=ref.device)
    bad[keep] = bad_kept
    count, first = _first_bad(bad, shape)
    ratio = 1.0 - count / ref.numel() if ref.numel() else 1.0
    details = {"matched_ratio": ratio}
    if ratio < tol.matched_ratio:
        return Verdict(False, f"matched ratio {ratio:.6f} below the required "
                       f"{tol.matched_ratio} (atol={tol.atol} rtol={tol.rtol})",
                       mx_abs, mx_rel, first, count, ref.numel(), details)
    if tol.error_cap is not None and mx_abs is not None and mx_abs > tol.error_cap:
        return Verdict(False, f"max abs error {mx_abs:.4g} above the cap {tol.error_cap}",
                       mx_abs, mx_rel, first, count, ref.numel(), details)
    return Verdict(True, "", mx_abs or 0.0, mx_rel or 0.0, first, count, ref.numel(), details)


def compare(ref: Any, out: Any, tol: Tolerance, device: torch.device) -> Verdict:
    """Full verdict for one output: materialization, shape, dtype, then numerics."""
    why = materialization_problem(out, device)
    if why:
        return Verdict(False, f"output {why}")
    if not isinstance(ref, torch.Tensor):
        return Verdict(False, "the reference output is not a tensor")
    why = shape_dtype_problem(ref, out)
    if why:
        return Verdict(False, why)
    if ref.numel() == 0:
        return Verdict(True, "", 0.0, 0.0)
    if not (ref.is_floating_point() or out.is_floating_point()):
        return _exact(ref, out)
    if tol.sol_rules:
        return _compare_sol(ref, out, tol)
    return _compare_atrex(ref, out, tol)


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape and same bytes (NaN payloads included); used for poison variants."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0))
                    and torch.equal(torch.isnan(a), torch.isnan(b)))
    return bool(torch.equal(a, b))


def input_change(before: Any, after: Any, path: str = "") -> Optional[str]:
    """How ``after`` differs from the judge's copy ``before`` (None when identical)."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor):
            return f"input {path or 'value'} is no longer a tensor"
        if after.shape != before.shape or after.dtype != before.dtype:
            return f"input {path} changed shape or dtype"
        if bitwise_equal(before, after):
            return None
        diff = (before != after) & ~(torch.isnan(before) & torch.isnan(after)) \
            if before.is_floating_point() else before != after
        count = int(diff.sum().item())
        first = unravel(int(torch.nonzero(diff.reshape(-1))[0, 0].item()), tuple(before.shape)) \
            if count else None
        return f"input {path} changed: {count} of {before.numel()} elements differ (first at {first})"
    if isinstance(before, dict):
        if not isinstance(after, dict) or list(before) != list(after):
            return "the inputs changed structure"
        for k in before:
            why = input_change(before[k], after[k], f"'{k}'")
            if why:
                return why
        return None
    if isinstance(before, (list, tuple)):
        if not isinstance(after, (list, tuple)) or len(after) != len(before):
            return "the inputs changed structure"
        for i, (b, a) in enumerate(zip(before, after)):
            why = input_change(b, a, f"{path}[{i}]" if path else f"#{i}")
            if why:
                return why
        return None
    if isinstance(before, float) and isinstance(after, float) and math.isnan(before):
        return None if math.isnan(after) else f"input {path} changed value"
    return None if before == after else f"input {path} changed value"
