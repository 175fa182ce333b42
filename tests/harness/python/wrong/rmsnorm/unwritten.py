"""Planted wrong candidate: allocates the output and never writes it.

Whatever the allocator hands back (stale memory, possibly an earlier correct
result) must not pass.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)
