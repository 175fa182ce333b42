"""Atrex-Bench layout: reference.py Model, input.py _make_inputs, shapes.json.

This file owns the Atrex-Bench semantics, in two halves: ``AtrexPlan`` is what
the judge reads (data files only: shapes, metadata, tolerances; it never
imports operator code) and ``AtrexCode`` is what a runner process executes
(the reference and input builder, or the candidate).

* ``shapes.json`` (or the --private-shapes file that replaces it in
  generalized campaigns) maps string shape ids to ``{init_kwargs,
  input_kwargs}``; ids are evaluated sorted as strings, like upstream.
* Reference and candidate are both ``Model(**init_kwargs)`` (null means no
  arguments), moved to the device, called as ``model(**inputs)`` where
  ``inputs = _make_inputs(**input_kwargs)`` must be a dict whose keys are the
  forward parameters. Both models are constructed right after seeding with the
  same seed, so any randomly initialised parameters agree.
* ``_make_inputs`` may allocate on 'cuda' directly (upstream does); when it
  accepts a ``device`` keyword the harness passes the evaluation device, and
  every tensor it returns is moved to that device either way.
* Outputs: a tensor is named ``out``; a dict keeps its keys; a tuple/list is
  named ``out[i]``. Tolerance: atol 1e-2 / rtol 0.05 per output (allclose),
  overridable by metadata.json (``tolerance: {atol, rtol}``) and then by
  --atol/--rtol; an operator whose metadata dtype mentions fp4/float4 is
  judged by relative L2 error <= 0.2 instead, as upstream does.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, Optional

import torch

from aka_harness import compare as cmp
from aka_harness.devices import cpu_redirect
from aka_harness.loader import LoadError, import_isolated

Outputs = dict[str, Any]

DEFAULT_ATOL = 1e-2
DEFAULT_RTOL = 0.05
FP4_REL_L2 = 0.2


class LayoutError(Exception):
    """The operator directory is malformed (an evaluator-input problem, exit 2)."""


class CandidateError(Exception):
    """The candidate (not the harness, not the reference) failed."""


class Launch:
    """One prepared call: ``fn()`` runs it, ``collect(fn())`` names its outputs, and
    ``outs`` are the destination buffers (poisoned again before every timed run)."""

    def __init__(self, fn: Any, collect: Any, outs: Optional[list[torch.Tensor]] = None) -> None:
        self.fn = fn
        self.collect = collect
        self.outs = outs or []


def _read_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise LayoutError(f"{path}: missing ({what})")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LayoutError(f"{path}: {exc}")


def load_shapes(path: str) -> dict[str, dict[str, Any]]:
    """Read and validate shapes.json: non-empty object of {init_kwargs, input_kwargs}."""
    data = _read_json(path, "the shapes file")
    if not isinstance(data, dict) or not data:
        raise LayoutError(f"{path}: expected a non-empty object of shapes")
    for sid, entry in data.items():
        if not isinstance(entry, dict):
            raise LayoutError(f"{path}: shape {sid}: expected an object")
        init = entry.get("init_kwargs")
        if init is not None and not isinstance(init, dict):
            raise LayoutError(f"{path}: shape {sid}: init_kwargs must be an object or null")
        if not isinstance(entry.get("input_kwargs", {}), dict):
            raise LayoutError(f"{path}: shape {sid}: input_kwargs must be an object")
    return data


def _to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_device(v, device) for v in value)
    return value


def name_outputs(value: Any) -> Outputs:
    """Reference/candidate return value → outputs keyed by Atrex output names."""
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return {f"out[{i}]": v for i, v in enumerate(value)}
    return {"out": value}


class AtrexPlan:
    """The judge's view of an Atrex-Bench operator: shapes, tolerance, contract."""

    layout = "atrex"

    def __init__(self, op_dir: str, private_shapes: Optional[str], atol: Optional[float],
                 rtol: Optional[float]) -> None:
        self.op_dir = os.path.abspath(op_dir)
        for name in ("reference.py", "input.py"):
            if not os.path.isfile(os.path.join(self.op_dir, name)):
                raise LayoutError(f"{os.path.join(op_dir, name)}: missing (Atrex-Bench layout)")
        self.private_shapes = private_shapes
        shapes_path = private_shapes or os.path.join(self.op_dir, "shapes.json")
        self.shapes = load_shapes(shapes_path)
        meta_path = os.path.join(self.op_dir, "metadata.json")
        self.metadata = _read_json(meta_path, "metadata") if os.path.exists(meta_path) else {}
        if not isinstance(self.metadata, dict):
            raise LayoutError(f"{meta_path}: expected an object")
        self.tol = self._tolerance(atol, rtol)
        self.languages: list[str] = []

    def _tolerance(self, atol: Optional[float], rtol: Optional[float]) -> cmp.Tolerance:
        meta_tol = self.metadata.get("tolerance")
        meta_tol = meta_tol if isinstance(meta_tol, dict) else {}
        a = atol if atol is not None else float(meta_tol.get("atol", DEFAULT_ATOL))
        r = rtol if rtol is not None else float(meta_tol.get("rtol", DEFAULT_RTOL))
        text = " ".join(str(self.metadata.get(k, "")) for k in ("dtype", "dtype_compute"))
        text += " " + os.path.basename(self.op_dir)
        fp4 = "fp4" in text.lower() or "float4" in text.lower()
        return cmp.Tolerance(atol=a, rtol=r, rel_l2=FP4_REL_L2 if fp4 else None)

    def shape_ids(self) -> list[str]:
        return sorted(self.shapes.keys())  # as strings: "10" before "2", like upstream

    def tolerance_summary(self) -> dict[str, Any]:
        t = self.tol
        return {"atol": t.atol, "rtol": t.rtol, "rel_l2": t.rel_l2}

    def tolerance(self, sid: str, output: str) -> cmp.Tolerance:
        return self.tol

    def dps_non_float_outputs(self, sid: str) -> bool:
        return False

    def shape_spec(self, sid: str) -> dict[str, Any]:
        entry = self.shapes[sid]
        return {"init_kwargs": entry.get("init_kwargs") or {},
                "input_kwargs": entry.get("input_kwargs") or {}}

    def runner_config(self) -> dict[str, Any]:
        return {"layout": "atrex", "op_dir": self.op_dir}


class AtrexCode:
    """A runner's Atrex-Bench code: the reference and input builder, or the candidate."""

    def __init__(self, cfg: dict[str, Any], device: torch.device, kernel: Optional[str]) -> None:
        self.device = device
        self.op_dir = str(cfg["op_dir"])
        self.models: dict[str, Any] = {}
        self.specs: dict[str, dict[str, Any]] = {}
        self.is_candidate = kernel is not None
        if kernel is not None:
            self.module = import_isolated(kernel, "candidate")
            if not inspect.isclass(getattr(self.module, "Model", None)):
                raise LoadError("compile_import", "the candidate defines no class Model (an "
                                "Atrex-Bench candidate exposes class Model with the "
                                "reference's constructor and forward signature)")
            return
        try:
            self.module = import_isolated(os.path.join(self.op_dir, "reference.py"), "reference")
            self.inputs_mod = import_isolated(os.path.join(self.op_dir, "input.py"),
                                              "input builder")
        except LoadError as exc:
            raise LayoutError(exc.message)
        if not inspect.isclass(getattr(self.module, "Model", None)):
            raise LayoutError(f"{self.op_dir}/reference.py: defines no class Model")
        if not callable(getattr(self.inputs_mod, "_make_inputs", None)):
            raise LayoutError(f"{self.op_dir}/input.py: defines no function _make_inputs")

    def setup(self, sid: str, spec: dict[str, Any], init_seed: int) -> None:
        """Construct the shape's Model right after seeding (random parameters agree)."""
        from aka_harness.seeds import seed_everything

        self.specs[sid] = spec
        seed_everything(init_seed)
        try:
            with cpu_redirect(self.device.type == "cpu"):
                model = self.module.Model(**spec["init_kwargs"])
                if isinstance(model, torch.nn.Module):
                    model = model.to(self.device).eval()
        except Exception as exc:
            if not self.is_candidate:
                raise
            raise CandidateError(f"constructing the candidate Model(**init_kwargs) raised "
                                 f"{type(exc).__name__}: {exc}")
        self.models[sid] = model

    def seedable(self, sid: str) -> bool:
        """Whether a candidate runner can build this shape's inputs itself (judge.py's
        seeded timed runs): input.py is the operator's, readable by every runner."""
        return True

    def build_inputs(self, sid: str) -> Any:
        if self.is_candidate and not hasattr(self, "inputs_mod"):
            # Seeded timed runs: the operator's input builder, imported on first use.
            try:
                self.inputs_mod = import_isolated(os.path.join(self.op_dir, "input.py"),
                                                  "input builder")
            except LoadError as exc:
                raise LayoutError(exc.message)
        make = self.inputs_mod._make_inputs
        kwargs = dict(self.specs[sid]["input_kwargs"])
        try:
            params = inspect.signature(make).parameters
            if "device" in params and "device" not in kwargs:
                kwargs["device"] = str(self.device)
        except (TypeError, ValueError):
            pass
        with cpu_redirect(self.device.type == "cpu"):
            inputs = make(**kwargs)
        if not isinstance(inputs, dict):
            raise TypeError(f"_make_inputs returned {type(inputs).__name__}, expected a dict")
        return _to_device(inputs, self.device)

    def launch(self, sid: str, inputs: Any, variant: int) -> Launch:
        model = self.models[sid]
        return Launch(lambda: model(**inputs), name_outputs)
