"""Hostile: after a few honest calls on a shape, returns an empty output at once and computes
it in a background thread 20 ms later, so the timed window closes before any work happened.

Timed outputs used to be unchecked. The judge receives every timed run's outputs as part of
the reply it times, and compares a secret sample with the reference: expected "output of a
timed run is wrong".
"""
import threading
import time

import torch
import torch.nn as nn

_calls = {}


def _rmsnorm(x, weight, eps, out):
    xf = x.float()
    out.copy_((xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
               * weight.float()).to(x.dtype))


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        shape = tuple(x.shape)
        _calls[shape] = _calls.get(shape, 0) + 1
        out = torch.empty_like(x)
        if _calls[shape] <= 3:
            _rmsnorm(x, weight, self.eps, out)
            return out
        x, weight = x.clone(), weight.clone()

        def later():
            time.sleep(0.02)
            _rmsnorm(x, weight, self.eps, out)

        threading.Thread(target=later, daemon=True).start()
        return out
