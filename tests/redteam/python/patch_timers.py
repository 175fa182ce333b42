"""Hostile: a slow kernel that patches every clock a timer could use, on import.

time.perf_counter(_ns) and torch.cuda.Event.elapsed_time are divided by 1000 in the
candidate's process, so the latency it reports is 1000x too small. The judge never reads
those clocks: it measures each timed call with its own clock in its own process and
expects "timing tampered".
"""
import time

import torch
import torch.nn as nn

_REAL_NS = time.monotonic_ns  # bound before any clock is patched
SLOW_NS = 5_000_000

_ns, _s = time.perf_counter_ns, time.perf_counter
time.perf_counter_ns = lambda: _ns() // 1000
time.perf_counter = lambda: _s() / 1000
if hasattr(torch.cuda, "Event"):
    _et = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: _et(self, end) / 1000


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        # At least SLOW_NS by a clock it leaves alone: the judge names a missed part only past a
        # floor (1 ms, crosscheck.CPU_FLOOR_US) and half the window, and 40 passes took 0.6 ms on
        # a fast CI host (the case passed there with its latency charged, not named).
        t0, n = _REAL_NS(), 0
        while n < 40 or _REAL_NS() - t0 < SLOW_NS:  # the slow kernel whose time is hidden
            xf = x.float()
            y = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
                 * weight.float()).to(x.dtype)
            n += 1
        return y
