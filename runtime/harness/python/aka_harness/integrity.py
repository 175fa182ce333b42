"""Tamper check: the functions the verdict rests on must be the ones we started with.

A candidate runs in the harness's own interpreter, so it could replace a timer
(``torch.cuda.Event.elapsed_time``, ``time.perf_counter_ns``), the comparison
(``torch.isclose``) or the harness's own functions. This file snapshots the
identity of each of them before the candidate is imported and re-checks it
after import, after the correctness cases and after timing. Any difference
fails the evaluation; it is never silently repaired. (Source policy in the
supervisor rejects such code too: this is the runtime half of the defence.)
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import torch


def _watched() -> dict[str, Any]:
    from aka_harness import compare, driver, result, timing

    items: dict[str, Any] = {
        "time.perf_counter_ns": time.perf_counter_ns,
        "time.perf_counter": time.perf_counter,
        "torch.isclose": torch.isclose,
        "torch.allclose": torch.allclose,
        "torch.equal": torch.equal,
        "torch.isfinite": torch.isfinite,
        "torch.Tensor.to": torch.Tensor.to,
        "torch.Tensor.clone": torch.Tensor.clone,
        "torch.cuda.synchronize": torch.cuda.synchronize,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.Event.record": torch.cuda.Event.record,
        "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
        "torch.cuda.CUDAGraph.replay": torch.cuda.CUDAGraph.replay,
    }
    for mod in (compare, driver, result, timing):
        for name in dir(mod):
            obj = getattr(mod, name)
            if callable(obj) and getattr(obj, "__module__", "") == mod.__name__:
                items[f"{mod.__name__}.{name}"] = obj
                for attr, member in vars(obj).items() if isinstance(obj, type) else ():
                    if callable(member):
                        items[f"{mod.__name__}.{name}.{attr}"] = member
    return items


def snapshot() -> Callable[[], Optional[str]]:
    """Record identities now; the returned check names the first one that changed."""
    before = {k: id(v) for k, v in _watched().items()}

    def check() -> Optional[str]:
        after = _watched()
        for key, ident in before.items():
            if key not in after or id(after[key]) != ident:
                return (f"the evaluator's function {key} was replaced while the candidate "
                        f"ran (timer or harness monkeypatching is rejected)")
        return None

    return check
