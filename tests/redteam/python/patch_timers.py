"""Hostile: a slow kernel that patches every clock a timer could use, on import.

time.perf_counter(_ns) and torch.cuda.Event.elapsed_time are divided by 1000 in the
candidate's process, so the latency it reports is 1000x too small. The judge never reads
those clocks: it measures each timed call with its own clock in its own process and
expects "timing tampered".
"""
import time

import torch
import torch.nn as nn

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
        for _ in range(40):  # the slow kernel whose time is hidden
            xf = x.float()
            y = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
                 * weight.float()).to(x.dtype)
        return y
