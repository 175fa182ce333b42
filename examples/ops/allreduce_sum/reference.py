import torch
import torch.distributed as dist
import torch.nn as nn


class Model(nn.Module):
    """Sum a tensor across every rank of the default process group (in place semantics
    avoided: the result is a new tensor). Launched with torchrun, one process per GPU;
    every rank returns the same reduced tensor.
    """

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.clone()
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(out, op=dist.ReduceOp.SUM)
        return out
