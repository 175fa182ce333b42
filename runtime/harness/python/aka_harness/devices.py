"""Running CUDA-targeted operator code on the CPU (``--device cpu``).

This file owns one scoped translation. Atrex-Bench ``input.py`` files allocate
on ``'cuda'`` directly, and some reference constructors do too; on a machine
without a GPU (CI, a developer laptop) the harness still has to check a
candidate against them. Inside ``cpu_redirect()`` every torch call that asks
for a CUDA device (``device=...`` keyword, ``.to('cuda')``, ``.cuda()``) gets
the CPU instead, and ``torch.cuda.current_device()`` answers 0.

It is entered only around evaluator-owned code (building inputs, constructing
models) and only with --device cpu, never while anything is timed (a Python
torch-function mode would add its own overhead to every call).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import torch


def _is_cuda(value: Any) -> bool:
    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value == "cuda" or value.startswith("cuda:")
    return False


try:
    from torch.overrides import TorchFunctionMode

    class _CpuRedirect(TorchFunctionMode):
        """Rewrites CUDA device requests to the CPU for every torch call in scope."""

        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = torch.device("cpu")
            if func is torch.Tensor.cuda:
                return args[0]
            args = tuple(torch.device("cpu") if _is_cuda(a) else a for a in args)
            return func(*args, **kwargs)

except ImportError:  # torch without torch-function modes: no redirection
    _CpuRedirect = None  # type: ignore[assignment,misc]


@contextmanager
def cpu_redirect(active: bool) -> Iterator[None]:
    """Redirect CUDA allocations to the CPU inside the block when ``active``."""
    if not active or _CpuRedirect is None or torch.cuda.is_available():
        yield
        return
    saved = torch.cuda.current_device
    torch.cuda.current_device = lambda: 0  # type: ignore[assignment]
    try:
        with _CpuRedirect():
            yield
    finally:
        torch.cuda.current_device = saved  # type: ignore[assignment]
