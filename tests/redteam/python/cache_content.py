"""Hostile: a slow kernel behind a cache keyed on the full contents of its inputs.

With timed runs reusing their inputs this read as a fast kernel (every timed call a hit).
The judge gives every timed run fresh inputs, so every timed call misses and pays the slow
path: expected no fake win (it may pass, at honest speed, never faster than 2 ms).
"""
import hashlib
import time

import torch
import torch.nn as nn

_cache = {}


def _digest(t):
    return hashlib.sha256(t.contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        key = (_digest(x), _digest(weight))
        if key not in _cache:
            time.sleep(0.002)  # the slow, honest path
            xf = x.float()
            inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
            _cache[key] = (xf * inv * weight.float()).to(x.dtype)
        return _cache[key]
