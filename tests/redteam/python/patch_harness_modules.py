"""Hostile: reaches the harness through sys.modules and swaps the clock its timer module uses.

aka_harness.timing's reference to the `time` module becomes a fake whose perf_counter_ns
runs 1000x slow. A module attribute is not a function, so an in-process identity check of
the timer functions does not see it. The judge's clock and CPU accounting are in another
process: expected "timing tampered".
"""
import sys
import time

import torch
import torch.nn as nn

_REAL_NS = time.monotonic_ns  # bound before any clock is patched
SLOW_NS = 5_000_000


class _FakeTime:
    def __getattr__(self, name):
        return getattr(time, name)

    @staticmethod
    def perf_counter_ns():
        return time.perf_counter_ns() // 1000


def _patch():
    for name, mod in list(sys.modules.items()):
        if name == "aka_harness.timing" and getattr(mod, "time", None) is time:
            mod.time = _FakeTime()


_patch()


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        _patch()
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
