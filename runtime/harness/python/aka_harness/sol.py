"""SOL-ExecBench layout: definition.json, workload.jsonl, solution entry points.

This file owns the SOL semantics, in two halves: ``SolPlan`` is what the judge
reads (definition, workloads, tolerances, the solution's entry point; the
reference source is data to it, never run) and ``SolCode`` is what a runner
process executes (the reference and input generation, or the candidate).

* ``definition.json``: ``axes`` (const / var / expr), ordered ``inputs`` and
  ``outputs`` (shape as axis names or digit literals, ``null`` for a Python
  scalar), ``reference`` source defining a value-returning ``run(*inputs)``,
  optional ``custom_inputs_entrypoint``. The reference source is written to a
  private temporary file and imported as a real module, so decorators that
  read source (``@triton.jit``) work in references too.
* ``workload.jsonl`` (or --private-shapes): one workload per line with
  ``uuid``, ``axes`` for the var axes, ``inputs`` kinds (random, scalar,
  safetensors, custom; a missing input is random) and an optional
  ``tolerance`` (max_atol 1e-2, max_rtol 1e-2, required_matched_ratio 0.99,
  max_error_cap, allow_negative_inf). Workloads run in file order.
* The candidate is ``file::function`` (from --kernel, else solution.json's
  ``spec.entry_point``, else ``run``); destination-passing by default:
  ``fn(*inputs, *outputs)`` with outputs pre-allocated and poisoned with NaN,
  or, with ``destination_passing_style: false``, ``fn(*inputs)`` returning a
  tensor, a tuple/list in output order, or a dict keyed by output name.
* Random inputs follow SOL's generator in spirit: N(0,1) for floats, a few
  name heuristics (norm weights are ones, norm biases zeros, cos/sin tables,
  positive rstd/variance, weight matrices scaled by 1/sqrt(fan-in), 0/1
  masks), FP8 clamped to +-2, integers in [-1024, 1024), bools 0/1.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
import re
import struct
import tempfile
from typing import Any, Callable, Optional

import torch

from aka_harness import compare as cmp
from aka_harness.atrex import LayoutError, Launch, Outputs
from aka_harness.devices import cpu_redirect
from aka_harness.loader import LoadError, import_isolated

DEFAULT_TOL = {"max_atol": 1e-2, "max_rtol": 1e-2, "required_matched_ratio": 0.99,
               "max_error_cap": None, "allow_negative_inf": False}

_DTYPE_NAMES = {
    "float64": "float64", "float32": "float32", "float16": "float16", "bfloat16": "bfloat16",
    "float8_e4m3fn": "float8_e4m3fn", "float8_e5m2": "float8_e5m2",
    "float4_e2m1": "float4_e2m1fn_x2", "float4_e2m1fn_x2": "float4_e2m1fn_x2",
    "int64": "int64", "int32": "int32", "int16": "int16", "int8": "int8", "uint8": "uint8",
    "bool": "bool",
}

_SAFETENSORS_DTYPES = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "I64": "int64", "I32": "int32",
    "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
}


def torch_dtype(name: str) -> torch.dtype:
    """A definition dtype string → torch dtype (fails clearly on old torch builds)."""
    attr = _DTYPE_NAMES.get(name)
    if attr is None:
        raise LayoutError(f"unknown dtype '{name}'")
    dt = getattr(torch, attr, None)
    if not isinstance(dt, torch.dtype):
        raise LayoutError(f"dtype '{name}' is not supported by torch {torch.__version__}")
    return dt


# ---- axis expressions ---------------------------------------------------------------------

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


def eval_axis_expr(expr: str, values: dict[str, int]) -> int:
    """Evaluate an ``expr`` axis: literals, axis names, + - * / // % **, parentheses."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise LayoutError(f"axis expression '{expr}': unknown axis '{node.id}'")
            return values[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        raise LayoutError(f"axis expression '{expr}': unsupported syntax")

    try:
        value = ev(ast.parse(expr, mode="eval"))
    except (SyntaxError, ZeroDivisionError) as exc:
        raise LayoutError(f"axis expression '{expr}': {exc}")
    if isinstance(value, float):
        if not value.is_integer():
            raise LayoutError(f"axis expression '{expr}' is not a whole number ({value})")
        value = int(value)
    return int(value)


def resolve_axes(axes: dict[str, Any], workload_axes: dict[str, Any], uuid: str) -> dict[str, int]:
    """Bind const and var axes, then expr axes (in definition order, repeatedly)."""
    values: dict[str, int] = {}
    pending: dict[str, str] = {}
    for name, spec in axes.items():
        kind = spec.get("type")
        if kind == "const":
            values[name] = int(spec["value"])
        elif kind == "var":
            if name not in workload_axes:
                raise LayoutError(f"workload {uuid}: no value for var axis '{name}'")
            values[name] = int(workload_axes[name])
        elif kind == "expr":
            pending[name] = str(spec["expression"])
        else:
            raise LayoutError(f"axis '{name}': unknown type {kind!r}")
    while pending:
        progressed = False
        for name, expr in list(pending.items()):
            try:
                values[name] = eval_axis_expr(expr, values)
            except LayoutError:
                continue
            del pending[name]
            progressed = True
        if not progressed:
            name, expr = next(iter(pending.items()))
            eval_axis_expr(expr, values)  # raises with the precise reason
    return values


def concrete_shape(spec: dict[str, Any], axes: dict[str, int]) -> Optional[list[int]]:
    """A TensorSpec's shape with axes bound; None for a scalar (shape null)."""
    shape = spec.get("shape")
    if shape is None:
        return None
    dims = []
    for entry in shape:
        entry = str(entry)
        dims.append(int(entry) if entry.isdigit() else axes[entry])
    return dims


# ---- inputs -------------------------------------------------------------------------------

_NORM_W = re.compile(r"^(norm_weight|.*_norm\d*_weight|.*layernorm\d*_weight)$")
_NORM_B = re.compile(r"^(norm_bias|.*_norm\d*_bias|.*layernorm\d*_bias)$")
_TRIG = {"cos", "sin", "cos_cached", "sin_cached", "rope_cos", "rope_sin"}
_POSITIVE = re.compile(r"^(rstd|std|variance|var|.*_(rstd|std|variance|var))$")
_MASK = re.compile(r"^(x_mask|text_mask|aspect_ratio_mask|drop_mask|attention_mask)$")
_WEIGHT = re.compile(r"^(weight|.*_weights?|.*_projs?|.*_proj_weights?|.*_weight_matrix)$")


def random_tensor(name: str, shape: list[int], dtype: torch.dtype,
                  device: torch.device) -> torch.Tensor:
    """One random input, by name heuristics first, then by dtype."""
    plain_float = dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64)
    if plain_float:
        if _NORM_W.match(name):
            return torch.ones(shape, dtype=dtype, device=device)
        if _NORM_B.match(name):
            return torch.zeros(shape, dtype=dtype, device=device)
        if name in _TRIG:
            angle = torch.randn(shape, device=device).clamp(-math.pi, math.pi)
            return (torch.cos(angle) if "cos" in name else torch.sin(angle)).to(dtype)
        if _POSITIVE.match(name):
            return (torch.randn(shape, device=device).abs() + 0.1).to(dtype)
        if _MASK.match(name):
            return torch.randint(0, 2, shape, device=device).to(dtype)
        if len(shape) >= 2 and _WEIGHT.match(name) and shape[-1] > 0:
            return (torch.randn(shape, device=device) / math.sqrt(shape[-1])).to(dtype)
        return torch.randn(shape, device=device).to(dtype)
    if dtype.is_floating_point:  # fp8 and friends
        return torch.randn(shape, device=device).clamp(-2, 2).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device=device).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, device=device, dtype=dtype)
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, device=device, dtype=dtype)
    return torch.randint(-1024, 1024, shape, device=device, dtype=dtype)


def load_safetensors(path: str, key: str, device: torch.device) -> torch.Tensor:
    """Read one tensor from a .safetensors file (8-byte header length, JSON, data)."""
    with open(path, "rb") as f:
        (hlen,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(hlen))
        if key not in header:
            raise LayoutError(f"{path}: no tensor '{key}'")
        meta = header[key]
        begin, end = meta["data_offsets"]
        f.seek(8 + hlen + begin)
        raw = bytearray(f.read(end - begin))
    dt = torch_dtype(_SAFETENSORS_DTYPES.get(meta["dtype"], meta["dtype"].lower()))
    t = torch.frombuffer(raw, dtype=dt) if raw else torch.empty(0, dtype=dt)
    return t.reshape(meta["shape"]).to(device)


def resolve_blob(path: str, op_dir: str) -> str:
    """A safetensors path: op dir first, then $FLASHINFER_TRACE_DIR, stripping leading parts."""
    roots = [op_dir] + ([os.environ["FLASHINFER_TRACE_DIR"]]
                        if os.environ.get("FLASHINFER_TRACE_DIR") else [])
    parts = [p for p in path.split("/") if p]
    for root in roots:
        for k in range(len(parts)):
            candidate = os.path.join(root, *parts[k:])
            if os.path.isfile(candidate):
                return candidate
    raise LayoutError(f"safetensors file '{path}' not found under {roots}")


# ---- the operator -------------------------------------------------------------------------

def _read_workloads(path: str) -> list[dict[str, Any]]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    w = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise LayoutError(f"{path}:{lineno}: {exc}")
                if not isinstance(w, dict) or not isinstance(w.get("uuid"), str) or not w["uuid"]:
                    raise LayoutError(f"{path}:{lineno}: a workload needs a non-empty 'uuid'")
                out.append(w)
    except FileNotFoundError:
        raise LayoutError(f"{path}: missing (SOL-ExecBench layout)")
    if not out:
        raise LayoutError(f"{path}: no workloads")
    return out


def _read_solution(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise LayoutError(f"{path}: {exc}")
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        raise LayoutError(f"{path}: a solution needs a 'spec' object")
    return data


def materialize_solution(path: str) -> str:
    """Write a solution.json's sources into a fresh directory; return the entry file.

    An empty or missing ``content`` is read from the file beside solution.json,
    as the SOL CLI does. Paths must stay inside the directory.
    """
    data = _read_solution(path)
    entry = str(data["spec"].get("entry_point", ""))
    if "::" not in entry:
        raise LayoutError(f"{path}: spec.entry_point must be 'file::function'")
    out_dir = tempfile.mkdtemp(prefix="aka_sol_cand_")
    for src in data.get("sources") or []:
        rel = str(src.get("path", ""))
        if not rel or rel.startswith("/") or ".." in rel.split("/"):
            raise LayoutError(f"{path}: source path '{rel}' must be relative without '..'")
        content = src.get("content")
        if not content:
            with open(os.path.join(os.path.dirname(os.path.abspath(path)), rel),
                      encoding="utf-8") as f:
                content = f.read()
        dest = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(content)
    return os.path.join(out_dir, entry.split("::", 1)[0]) + "::" + entry.split("::", 1)[1]


def _solution_entry(kernel: str, solution: Optional[str]) -> tuple[str, str, bool, list[str]]:
    """(file, function, destination-passing, languages) for the candidate.

    The solution is --solution, else a solution.json beside the kernel whose
    entry point names the kernel's file (one describing another file is not
    about this candidate and is ignored).
    """
    path, _, func = kernel.partition("::")
    sol_path = solution or os.path.join(os.path.dirname(os.path.abspath(path)), "solution.json")
    if solution and not os.path.isfile(solution):
        raise LayoutError(f"{solution}: missing")
    if not os.path.isfile(sol_path):
        return path, func or "run", True, []
    spec = _read_solution(sol_path)["spec"]
    entry = str(spec.get("entry_point", ""))
    efile, _, sol_func = entry.partition("::")
    if solution is None and os.path.basename(efile) != os.path.basename(path):
        return path, func or "run", True, []
    dps = bool(spec.get("destination_passing_style", True))
    return path, func or sol_func or "run", dps, list(spec.get("languages") or [])


def _tolerance(workload: dict[str, Any]) -> cmp.Tolerance:
    tol = dict(DEFAULT_TOL)
    tol.update(workload.get("tolerance") or {})
    return cmp.Tolerance(atol=float(tol["max_atol"]), rtol=float(tol["max_rtol"]),
                         matched_ratio=float(tol["required_matched_ratio"]),
                         error_cap=(None if tol["max_error_cap"] is None
                                    else float(tol["max_error_cap"])),
                         allow_negative_inf=bool(tol["allow_negative_inf"]),
                         sol_rules=True)


class SolPlan:
    """The judge's view of a SOL-ExecBench problem: definition, workloads, entry point."""

    layout = "sol"

    def __init__(self, op_dir: str, private_shapes: Optional[str], kernel: str,
                 solution: Optional[str], dps_override: Optional[bool]) -> None:
        self.op_dir = os.path.abspath(op_dir)
        def_path = os.path.join(self.op_dir, "definition.json")
        try:
            with open(def_path, encoding="utf-8") as f:
                self.definition = json.load(f)
        except FileNotFoundError:
            raise LayoutError(f"{def_path}: missing (SOL-ExecBench layout)")
        except (OSError, json.JSONDecodeError) as exc:
            raise LayoutError(f"{def_path}: {exc}")
        d = self.definition
        if not isinstance(d, dict):
            raise LayoutError(f"{def_path}: expected an object")
        for key in ("axes", "inputs", "outputs", "reference"):
            if key not in d:
                raise LayoutError(f"{def_path}: missing '{key}'")
        self.outputs_spec: dict[str, Any] = d["outputs"]
        self.workloads = _read_workloads(private_shapes or os.path.join(self.op_dir,
                                                                        "workload.jsonl"))
        self.by_id = {w["uuid"]: w for w in self.workloads}
        self.tols = {w["uuid"]: _tolerance(w) for w in self.workloads}
        if kernel.partition("::")[0].endswith(".json"):
            solution = solution or kernel.partition("::")[0]
            kernel = materialize_solution(solution)
        self.kernel_file, self.entry, dps, self.languages = _solution_entry(kernel, solution)
        self.dps = dps if dps_override is None else dps_override
        self.metadata: dict[str, Any] = {}
        self._non_float = self.dps and any(
            not torch_dtype(s["dtype"]).is_floating_point for s in self.outputs_spec.values())

    def shape_ids(self) -> list[str]:
        return [w["uuid"] for w in self.workloads]

    def tolerance_summary(self) -> dict[str, Any]:
        return {"default": DEFAULT_TOL, "per_workload": True,
                "destination_passing": self.dps, "entry": self.entry}

    def tolerance(self, sid: str, output: str) -> cmp.Tolerance:
        return self.tols[sid]

    def dps_non_float_outputs(self, sid: str) -> bool:
        return self._non_float

    def shape_spec(self, sid: str) -> dict[str, Any]:
        return self.by_id[sid]

    def runner_config(self) -> dict[str, Any]:
        return {"layout": "sol", "op_dir": self.op_dir, "definition": self.definition,
                "entry": self.entry, "dps": self.dps}


class SolCode:
    """A runner's SOL code: the reference module, or the candidate's entry function."""

    def __init__(self, cfg: dict[str, Any], device: torch.device, kernel: Optional[str]) -> None:
        self.device = device
        self.op_dir = str(cfg["op_dir"])
        self.definition: dict[str, Any] = cfg["definition"]
        self.inputs_spec: dict[str, Any] = self.definition["inputs"]
        self.outputs_spec: dict[str, Any] = self.definition["outputs"]
        self.entry = str(cfg["entry"])
        self.dps = bool(cfg["dps"])
        self.axes: dict[str, dict[str, int]] = {}
        self.workloads: dict[str, dict[str, Any]] = {}
        if kernel is not None:
            module = import_isolated(kernel, "candidate")
            fn = getattr(module, self.entry, None)
            if not callable(fn):
                raise LoadError("compile_import", f"the candidate defines no function "
                                f"'{self.entry}' (entry point {os.path.basename(kernel)}"
                                f"::{self.entry})")
            self.entry_fn: Optional[Callable[..., Any]] = fn
            self.reference: Any = None
            return
        self.entry_fn = None
        tmp = tempfile.mkdtemp(prefix="aka_sol_ref_")
        ref_file = os.path.join(tmp, "_reference.py")
        with open(ref_file, "w", encoding="utf-8") as f:
            f.write(self.definition["reference"])
        label = os.path.join(self.op_dir, "definition.json")
        try:
            self.reference = import_isolated(ref_file, "reference")
        except LoadError as exc:
            raise LayoutError(f"{label}: reference: {exc.message}")
        if not callable(getattr(self.reference, "run", None)):
            raise LayoutError(f"{label}: the reference defines no function run")

    def setup(self, sid: str, workload: dict[str, Any], init_seed: int) -> None:
        self.workloads[sid] = workload
        self.axes[sid] = resolve_axes(self.definition["axes"], workload.get("axes") or {}, sid)

    def seedable(self, sid: str) -> bool:
        """Whether a candidate runner can build this shape's inputs itself (judge.py's
        seeded timed runs): not when a custom entry point of the reference builds them."""
        kinds = self.workloads[sid].get("inputs") or {}
        return not any((kinds.get(n) or {}).get("type") == "custom" for n in self.inputs_spec)

    def build_inputs(self, sid: str) -> list[Any]:
        kinds = self.workloads[sid].get("inputs") or {}
        if any((kinds.get(n) or {}).get("type") == "custom" for n in self.inputs_spec):
            return self._custom_inputs(sid, kinds)
        return [self._one_input(sid, name, spec, kinds.get(name) or {"type": "random"})
                for name, spec in self.inputs_spec.items()]

    def _one_input(self, sid: str, name: str, spec: dict[str, Any], kind: dict[str, Any]) -> Any:
        t = kind.get("type", "random")
        dtype = torch_dtype(spec["dtype"])
        shape = concrete_shape(spec, self.axes[sid])
        if t == "scalar":
            return kind["value"]
        if t == "safetensors":
            tensor = load_safetensors(resolve_blob(kind["path"], self.op_dir),
                                      kind["tensor_key"], self.device)
            if shape is not None and list(tensor.shape) != shape or tensor.dtype != dtype:
                raise LayoutError(f"workload {sid}: input '{name}' from safetensors "
                                  f"is {list(tensor.shape)} {tensor.dtype}, expected {shape} {dtype}")
            return tensor
        if t != "random":
            raise LayoutError(f"workload {sid}: input '{name}': unknown kind {t!r}")
        if shape is None:
            return random_tensor(name, [], dtype, self.device).item()
        tensor = random_tensor(name, shape, dtype, self.device)
        if self.definition.get("op_type") == "sampling" and name == "probs":
            tensor = torch.softmax(tensor.float(), dim=-1).to(dtype)
        return tensor

    def _custom_inputs(self, sid: str, kinds: dict[str, Any]) -> list[Any]:
        fname = self.definition.get("custom_inputs_entrypoint")
        fn = getattr(self.reference, fname or "", None)
        if not callable(fn):
            raise LayoutError(f"workload {sid}: custom inputs need the reference's "
                              f"custom_inputs_entrypoint function")
        args: dict[str, Any] = dict(self.axes[sid])
        for name, kind in kinds.items():
            if (kind or {}).get("type") == "scalar":
                args[name] = kind["value"]
        with cpu_redirect(self.device.type == "cpu"):
            made = fn(args, self.device)
        return [made[name] for name in self.inputs_spec]

    def _allocate_outputs(self, sid: str, variant: int) -> list[torch.Tensor]:
        outs = []
        for spec in self.outputs_spec.values():
            shape = concrete_shape(spec, self.axes[sid]) or []
            t = torch.empty(shape, dtype=torch_dtype(spec["dtype"]), device=self.device)
            cmp.poison_(t, variant)
            outs.append(t)
        return outs

    def name_outputs(self, value: Any) -> Outputs:
        """A value-returning call's result → outputs keyed by definition order."""
        names = list(self.outputs_spec)
        if isinstance(value, dict):
            return {n: value.get(n) for n in names} if set(value) == set(names) else \
                {str(k): v for k, v in value.items()}
        if isinstance(value, (tuple, list)):
            if len(value) != len(names):
                return {f"result[{i}]": v for i, v in enumerate(value)}
            return dict(zip(names, value))
        if len(names) != 1:
            return {"result": value}
        return {names[0]: value}

    def launch(self, sid: str, inputs: Any, variant: int) -> Launch:
        if self.entry_fn is None:
            run = self.reference.run
            return Launch(lambda: run(*inputs), self.name_outputs)
        fn = self.entry_fn
        if not self.dps:
            return Launch(lambda: fn(*inputs), self.name_outputs)
        outs = self._allocate_outputs(sid, variant)
        names = list(self.outputs_spec)
        entry = self.entry

        def call() -> None:
            try:
                fn(*inputs, *outs)
            except TypeError as exc:
                if "positional argument" in str(exc):
                    raise TypeError(f"{exc} (destination-passing style calls "
                                    f"{entry}(*inputs, *outputs); a value-returning "
                                    f"entry needs destination_passing_style: false in "
                                    f"solution.json or --no-dps)") from exc
                raise

        return Launch(call, lambda _ret: dict(zip(names, outs)), outs)
