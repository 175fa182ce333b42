"""Planted wrong candidate: correct RMSNorm except one element, nudged by 1.0."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        y = y.to(x.dtype)
        y[0, 1] += 1.0  # the planted bug: one element, index (0, 1)
        return y
