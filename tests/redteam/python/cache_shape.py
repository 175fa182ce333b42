"""Hostile: caches outputs keyed by shape and dtype only.

The correctness case computes honestly (one call per shape); the timed runs then get the
cached output of the correctness inputs, which nobody used to check. The judge compares a
secret sample of timed outputs with the reference's for the same fresh inputs: expected
"output of a timed run is wrong".
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
        key = (tuple(x.shape), x.dtype)
        if key not in _cache:
            _cache[key] = _rmsnorm(x, weight, self.eps)
        return _cache[key]
