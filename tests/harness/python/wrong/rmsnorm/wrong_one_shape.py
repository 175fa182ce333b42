"""Planted wrong candidate: correct RMSNorm except for 16-token inputs (shape "1")."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        # The planted bug: eps is dropped in favour of 0.5 on one shape only.
        eps = 0.5 if x.shape[0] == 16 else self.eps
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.float()
        return y.to(x.dtype)
