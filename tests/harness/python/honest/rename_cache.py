"""Honest candidate: a correct RMSNorm that keeps a compile cache the way Triton does.

Each file is written into a temporary directory and renamed into the cache directory.
Inside the candidate runner's Landlock domain such a rename across directories fails with
EXDEV unless the judge's ruleset grants it (confine.py); this candidate must pass.
"""
import os
import tempfile

import torch
import torch.nn as nn

_cache = tempfile.mkdtemp(prefix="aka_test_cache_")
_tmp = os.path.join(_cache, "tmp.pid_%d" % os.getpid())
os.makedirs(_tmp)
with open(os.path.join(_tmp, "kernel.bin"), "wb") as f:
    f.write(b"compiled")
os.replace(os.path.join(_tmp, "kernel.bin"), os.path.join(_cache, "kernel.bin"))


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        return y.to(x.dtype)
