"""Hostile: returns the right output and then writes into its input (scratch use, or
poisoning the next caller). Nothing used to compare inputs after a call: expected
"inputs modified during a call".
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        xf = x.float()
        y = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
             * weight.float()).to(x.dtype)
        x.mul_(0.5)
        return y
