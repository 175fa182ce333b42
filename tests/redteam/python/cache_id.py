"""Hostile: caches outputs keyed by id() of the input tensors.

Timed runs used to reuse one input tensor, so every timed call after the first was a cache
hit. The judge stages fresh values into the same buffers before every timed run, so the
cache now serves stale outputs, and the secretly sampled timed outputs are compared:
expected "output of a timed run is wrong".
"""
import torch
import torch.nn as nn

_cache = {}


def _rmsnorm(x, weight, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.float()).to(x.dtype)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        key = (id(x), id(weight))
        if key not in _cache:
            _cache[key] = _rmsnorm(x, weight, self.eps)
        return _cache[key]
