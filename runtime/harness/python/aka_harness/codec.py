"""Turning values into JSON plus raw tensor bytes and back, without executing anything.

This file owns the encoding of everything the judge and its runners exchange
(the framing is wire.py). The judge decodes what a candidate runner sends, and
that process runs hostile code, so nothing here may execute code: no pickle.
A tree is JSON with a few tagged objects (``{"$t": i}`` the i-th tensor,
``{"$tuple": [...]}``, ``{"$dict": [[k, v], ...]}``, ``{"$dtype": name}``,
``{"$device": name}``, ``{"$obj": type name}`` for anything else). A tensor
descriptor carries dtype, shape, stride and what the sender saw: its class,
device, layout and whether it had data, so that the judge can refuse lazy or
proxy outputs without trusting the sender to refuse them. The bytes of every
tensor are its row-major contents; dtypes and sizes are checked against an
allowlist and against each other before any memory is reserved.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

MAX_TENSOR_BYTES = 1 << 40  # a sanity bound; a lying sender is stopped here


class CodecError(Exception):
    """A value or descriptor that does not decode."""


@dataclass
class Opaque:
    """Something the sender had that is not a plain materialized tensor; ``why`` says what."""

    why: str


def dtype_by_name(name: str) -> Optional[torch.dtype]:
    value = getattr(torch, name, None) if name.isidentifier() else None
    return value if isinstance(value, torch.dtype) else None


def _dtype_name(dt: torch.dtype) -> str:
    return str(dt).replace("torch.", "")


# ---- encoding ---------------------------------------------------------------------------------

def _no_torch_function() -> Any:
    """A context in which a tensor subclass's __torch_function__ does not run."""
    ctx = getattr(torch._C, "DisableTorchFunctionSubclass", None) or \
        getattr(torch._C, "DisableTorchFunction", None)
    return ctx() if ctx else contextlib.nullcontext()


def _describe(t: torch.Tensor) -> tuple[dict[str, Any], Optional[torch.Tensor]]:
    """A tensor's descriptor and its contiguous CPU contents (None when it has no data).

    A subclass is read with its __torch_function__ disabled: describing an output must not
    run the code that produced it (a lazy tensor would otherwise compute here)."""
    if type(t) is not torch.Tensor:
        try:
            with _no_torch_function():
                return _describe_plain(t)
        except Exception:
            cls = f"{type(t).__module__}.{type(t).__qualname__}"
            return {"dtype": "uint8", "shape": [], "class": cls, "device": "unknown",
                    "layout": "unknown", "meta": False, "nbytes": 0}, None
    return _describe_plain(t)


def _describe_plain(t: torch.Tensor) -> tuple[dict[str, Any], Optional[torch.Tensor]]:
    cls = f"{type(t).__module__}.{type(t).__qualname__}"
    desc: dict[str, Any] = {"dtype": _dtype_name(t.dtype), "shape": list(t.shape),
                            "class": cls, "device": t.device.type, "layout": str(t.layout),
                            "meta": bool(t.is_meta)}
    desc["nbytes"] = 0
    if t.is_meta or t.layout != torch.strided:
        return desc, None
    try:
        plain = t.as_subclass(torch.Tensor) if type(t) is not torch.Tensor else t
        desc["stride"] = list(plain.stride())
        data = plain.detach().to("cpu").contiguous()
    except Exception:  # a wrapper subclass without storage: nothing to send
        return desc, None
    desc["nbytes"] = data.numel() * data.element_size()
    desc["data"] = True
    return desc, data


def encode(tree: Any) -> tuple[Any, list[dict[str, Any]], list[torch.Tensor]]:
    """(JSON tree, tensor descriptors, contiguous CPU tensors to send)."""
    descs: list[dict[str, Any]] = []
    datas: list[torch.Tensor] = []

    def walk(v: Any) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, torch.Tensor):
            desc, data = _describe(v)
            descs.append(desc)
            if data is not None and desc["nbytes"]:
                datas.append(data)
            return {"$t": len(descs) - 1}
        if isinstance(v, torch.dtype):
            return {"$dtype": _dtype_name(v)}
        if isinstance(v, torch.device):
            return {"$device": str(v)}
        if isinstance(v, tuple):
            return {"$tuple": [walk(x) for x in v]}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {"$dict": [[walk(k), walk(x)] for k, x in v.items()]}
        return {"$obj": f"{type(v).__module__}.{type(v).__qualname__}"}

    return walk(tree), descs, datas


# ---- decoding ---------------------------------------------------------------------------------

def check_desc(d: Any) -> tuple[torch.dtype, list[int], int]:
    if not isinstance(d, dict):
        raise CodecError("tensor descriptor is not an object")
    dt = dtype_by_name(str(d.get("dtype", "")))
    shape = d.get("shape")
    nbytes = d.get("nbytes")
    if dt is None:
        raise CodecError(f"unknown tensor dtype {d.get('dtype')!r}")
    if (not isinstance(shape, list) or len(shape) > 64
            or not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n < 1 << 48
                       for n in shape)):
        raise CodecError("malformed tensor shape")
    if not isinstance(nbytes, int) or nbytes < 0 or nbytes > MAX_TENSOR_BYTES:
        raise CodecError("malformed tensor size")
    numel = 1
    for n in shape:
        numel *= n
    has_data = d.get("data") is True
    want = numel * torch.empty((), dtype=dt).element_size() if has_data else 0
    if nbytes != want:
        raise CodecError(f"tensor of shape {shape} {dt} announces {nbytes} bytes, not {want}")
    return dt, shape, nbytes


def tensor_from(buf: bytearray, dt: torch.dtype, shape: list[int]) -> torch.Tensor:
    if not buf:
        return torch.empty(shape, dtype=dt)
    return torch.frombuffer(buf, dtype=dt).reshape(shape)


def _opaque_reason(d: dict[str, Any], strict: bool) -> Optional[str]:
    """Why a received tensor cannot stand for a plain materialized one (None when it can).

    Without data it never can; ``strict`` (a candidate's outputs) also refuses
    every subclass, since a subclass can defer its work until it is read.
    """
    cls = str(d.get("class"))
    if strict and cls != "torch.Tensor":
        return (f"is a {cls} (a torch.Tensor subclass); outputs must be plain materialized "
                f"tensors, lazy or proxy tensors are rejected")
    if d.get("data") is not True:
        return "holds no materialized data (meta, non-strided or storage-less tensor)"
    return None


Place = Callable[[torch.Tensor, dict[str, Any]], torch.Tensor]


def decode(tree: Any, descs: list[dict[str, Any]], tensors: list[torch.Tensor],
           strict: bool, device: Optional[str] = None, place: Optional[Place] = None) -> Any:
    """Rebuild a tree. ``strict``: a non-plain tensor, or one on another device type
    than ``device``, becomes an Opaque that says why. ``place`` turns each received
    (contiguous CPU) tensor into the one to use, given its descriptor."""

    def walk(v: Any, depth: int) -> Any:
        if depth > 100:
            raise CodecError("value nested too deeply")
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        if not isinstance(v, dict) or len(v) != 1:
            raise CodecError("malformed value")
        (tag, body), = v.items()
        if tag == "$t":
            if not isinstance(body, int) or not 0 <= body < len(tensors):
                raise CodecError("bad tensor reference")
            why = _opaque_reason(descs[body], strict)
            seen = str(descs[body].get("device"))
            if not why and strict and device and seen != device:
                why = f"is on {seen[:40]}, expected {device}"
            if why:
                return Opaque(why)
            return place(tensors[body], descs[body]) if place else tensors[body]
        if tag == "$tuple" and isinstance(body, list):
            return tuple(walk(x, depth + 1) for x in body)
        if tag == "$dict" and isinstance(body, list):
            out = {}
            for pair in body:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise CodecError("malformed dict entry")
                key = walk(pair[0], depth + 1)
                if not isinstance(key, (str, int, float, bool, type(None))):
                    raise CodecError("dict keys must be plain values")
                out[key] = walk(pair[1], depth + 1)
            return out
        if tag == "$dtype" and isinstance(body, str):
            dt = dtype_by_name(body)
            if dt is None:
                raise CodecError(f"unknown dtype {body!r}")
            return dt
        if tag == "$device" and isinstance(body, str):
            return torch.device(body)
        if tag == "$obj" and isinstance(body, str):
            return Opaque(f"is a {body[:200]}, not a torch.Tensor")
        raise CodecError(f"unknown tag {tag!r}")

    return walk(tree, 0)




def raw(t: torch.Tensor) -> memoryview:
    """The bytes of a contiguous CPU tensor, without a copy."""
    import ctypes

    n = t.numel() * t.element_size()
    return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B")
