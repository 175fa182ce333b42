"""Honest, but every 10th call stalls for 50 ms (a preempted host, a stalled launch).

Expected: it passes, its median is an ordinary rmsnorm's, and a diagnostic names the
slowest timed runs: with 20 timed runs two or three of them took over 10x the median,
which an owner's mean statistic would carry (judge.py, _note_outliers).
"""
import time

import torch
import torch.nn as nn

_calls = [0]


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        _calls[0] += 1
        if _calls[0] % 10 == 0:
            time.sleep(0.05)
        xf = x.float()
        inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * inv * weight.float()).to(x.dtype)
