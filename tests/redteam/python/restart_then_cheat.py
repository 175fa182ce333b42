"""Hostile: makes the judge start it again, then cheats where no correctness case runs.

A timing that fails the cross-check is repeated in a fresh candidate process, which is
set up for the shape and timed, but never runs the correctness cases again
(judge._fresh_candidate). This candidate makes its first process fail the cross-check
on purpose (from the third call of a shape on it burns 5 ms per call that it hides from
the runner's clock), so the judge restarts it; every later process (a marker file in the
job's temporary directory, shared by the evaluation's processes, tells it apart) skips
the work and hands back zeros at once. The judge must still compare the sampled timed
runs' outputs with the reference's: "output of a timed run is wrong", never a pass with
the restarted process's figures.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn

try:
    os.close(os.open(os.path.join(tempfile.gettempdir(), "redteam-restart-then-cheat"),
                     os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    FIRST = True
except FileExistsError:
    FIRST = False

_real = time.perf_counter_ns
_hidden = [0]
time.perf_counter_ns = lambda: _real() - _hidden[0]
_calls: dict[tuple[int, ...], int] = {}


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        if not FIRST:
            return torch.zeros_like(x)
        n = _calls[tuple(x.shape)] = _calls.get(tuple(x.shape), 0) + 1
        if n >= 3:
            t0 = _real()
            while _real() - t0 < 5_000_000:
                x.float().pow(2).sum()
            _hidden[0] += _real() - t0
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        return y.to(x.dtype)
