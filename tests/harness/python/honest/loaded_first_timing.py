"""Stands in for an honest candidate timed through a burst of machine load.

A correct RMSNorm whose first timing of each shape looks like tampering: on the calls of
that timing (calls 3 to 5 of a shape in its process, with --cases 1 --warmup 1
--timed-runs 3) it burns about 5 ms that the runner's clock does not see (the clock is
moved back by what was burnt, so every reported figure stays positive), just as a loaded
machine can stretch the path around one timing. Later timings are clean, also in the
fresh process the judge repeats a timing in: a marker file per shape in the temporary
directory (the test gives each run its own) says the shape's first timing is past. The
judge must time the shape again (judge.TIMING_ATTEMPTS) and pass it, naming the repeat;
a judge that accuses on one disagreeing timing fails this candidate.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn

_real = time.perf_counter_ns
_hidden = [0]
time.perf_counter_ns = lambda: _real() - _hidden[0]

_calls: dict[tuple[int, ...], int] = {}
FIRST_TIMING = range(3, 6)  # the per-shape call numbers of the first timed runs
BURN_NS = 5_000_000
_burning: set[tuple[int, ...]] = set()  # shapes whose first timing this process runs


def _first_timing(shape: tuple[int, ...], n: int) -> bool:
    """Whether call n of this shape (in this process) belongs to the shape's first timing."""
    if n == FIRST_TIMING[0]:
        mark = os.path.join(tempfile.gettempdir(),
                            "aka-loaded-first-timing-" + "x".join(map(str, shape)))
        try:
            os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            _burning.add(shape)
        except FileExistsError:
            pass
    return n in FIRST_TIMING and shape in _burning


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
        if _first_timing(tuple(x.shape), n):
            _burn(x)
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        return y.to(x.dtype)
