"""Stands in for an honest candidate whose first process landed in a slow state.

The host's path around a launch-bound call differs from one process to the next (a CPU
far from the GPU, a cold allocator, CUPTI's buffers): on 2026-12-06 the rope operator's
own reference, as its V0 kernel, failed the GPU gap check three times in a row in one
process. This correct RMSNorm plays that on a CPU: in the first process that imports it
(a marker file in the temporary directory, which the test gives each run, says which)
every call from the third of a shape on burns about 5 ms that the runner's clock does
not see; any later process is clean. A judge that repeats a failed timing in the same
process fails it three times and calls it tampered; the judge must repeat it in a fresh
process, pass it, and count one repeat.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn

_MARK = os.path.join(tempfile.gettempdir(), "aka-slow-first-process")
try:
    os.close(os.open(_MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    _FIRST = True
except FileExistsError:
    _FIRST = False

_real = time.perf_counter_ns
_hidden = [0]
time.perf_counter_ns = lambda: _real() - _hidden[0]
_calls: dict[tuple[int, ...], int] = {}
BURN_NS = 5_000_000


def _burn(x: torch.Tensor) -> None:
    t0 = _real()
    while _real() - t0 < BURN_NS:
        x.float().pow(2).sum()
    _hidden[0] += _real() - t0


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        n = _calls[tuple(x.shape)] = _calls.get(tuple(x.shape), 0) + 1
        if _FIRST and n >= 3:
            _burn(x)
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        return y.to(x.dtype)
