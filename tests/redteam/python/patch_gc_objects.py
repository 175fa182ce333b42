"""Hostile: finds the harness's timer object with gc.get_objects() and replaces its methods.

Instance attributes shadow the class's methods, so a check of the class functions does not
see them: every measured call then reports 0.5 us. The judge's own clock, in another
process, is out of reach: expected "timing tampered".
"""
import gc
import time

import torch
import torch.nn as nn

_REAL_NS = time.monotonic_ns  # bound before any clock is patched
SLOW_NS = 5_000_000


def _patch():
    for obj in gc.get_objects():
        mod = getattr(type(obj), "__module__", "")
        if not isinstance(mod, str) or not mod.startswith("aka_harness"):
            continue
        if hasattr(type(obj), "once"):  # a per-call timer: run, then report 0.5 us
            obj.once = lambda fn: (fn(), 0.5)
        if hasattr(type(obj), "_measure_cpu"):  # a loop timer: report 0.5 us per sample
            harness = __import__(mod, fromlist=["Measurement"])
            reps = getattr(obj, "reps", 1)

            def fake(fn, reps=reps, m=harness):
                fn()
                return m.Measurement([0.5] * max(reps, 1), "cpu_monotonic")

            obj._measure_cpu = fake


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
