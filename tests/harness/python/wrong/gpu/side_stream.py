"""Planted hostile candidate (GPU): correct RMSNorm computed on a side stream.

The work is sent to a stream that does not wait for, and is not waited on by,
the current stream. CUDA events on the current stream would time an empty
window; the harness's stream check must catch it and report synchronized
timings with a diagnostic. A long spin kernel makes the hidden work obvious.
"""
import torch
import torch.nn as nn

_side = None


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        global _side
        if _side is None:
            _side = torch.cuda.Stream()
        out = torch.empty_like(x)
        _side.wait_stream(torch.cuda.current_stream())  # inputs are ready; nobody waits back
        with torch.cuda.stream(_side):
            torch.cuda._sleep(2_000_000)  # ~1 ms of GPU time in a single launch
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
            out.copy_((y * weight.float()).to(x.dtype))
        return out
