"""Wrong at scale only: the reduced sum is clamped to [-16, 16]. The example's inputs
(0.25 * randn per rank) never reach the bounds, so every ordinary case passes; the
numerical probe that scales the inputs x1e3 must fail it (numerical_probe)."""
import torch
import torch.distributed as dist
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.clone()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(out, op=dist.ReduceOp.SUM)
        return out.clamp(-16.0, 16.0)
