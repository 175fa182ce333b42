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
        for _ in range(40):  # the slow kernel whose time is hidden
            xf = x.float()
            y = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
                 * weight.float()).to(x.dtype)
        return y
