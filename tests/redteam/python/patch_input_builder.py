"""Hostile: patch the input builder so that seeded timed runs get inputs it already knows.

With seeded timed inputs (judge.py) the candidate runner builds each run's inputs itself,
from the seed the judge sends, by calling the operator's input builder in its own process.
This kernel replaces torch.randn at import so that every build after the first returns the
same tensors, then answers each call from a cache keyed on the input's identity and shape
(no work at all). Expected: the judge rebuilt the sampled runs' inputs itself through the
reference runner, so the first sampled run shows either inputs that differ from the
judge's ("inputs modified") or outputs that do not match the reference's on the real inputs
("output of a timed run is wrong"). Never a pass.
"""
import torch
import torch.nn as nn

_real_randn = torch.randn
_made = {}
_answers = {}


def _stale_randn(*size, **kw):
    key = (tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size,
           str(kw.get("device")), kw.get("dtype"))
    if key not in _made:
        _made[key] = _real_randn(*size, **kw)
    return _made[key].clone()


torch.randn = _stale_randn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        key = tuple(x.shape)
        if key not in _answers:
            xf = x.float()
            inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
            _answers[key] = (xf * inv * weight.float()).to(x.dtype)
        return _answers[key]
