"""Planted wrong candidate: returns a lazily-built tensor.

The result is a torch.Tensor subclass whose data is only computed when some
torch operation touches it. A harness that times forward() would measure an
empty call; a harness that compares with torch ops would see correct numbers.
It must be rejected for not being a plain, materialized tensor.
"""
import torch
import torch.nn as nn


class _Lazy(torch.Tensor):
    _thunk = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for a in args:
            if isinstance(a, _Lazy) and a._thunk is not None:
                thunk, a._thunk = a._thunk, None
                with torch._C.DisableTorchFunction():
                    a.copy_(thunk())
        return super().__torch_function__(func, types, args, kwargs or {})


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        def compute():
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
            return y.to(x.dtype)

        out = torch.Tensor._make_subclass(_Lazy, torch.empty_like(x))
        out._thunk = compute
        return out
