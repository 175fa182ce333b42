"""Clean Triton kernel: layer norm over the last dim with weight and bias."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm(x_ptr, w_ptr, b_ptr, y_ptr, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=1.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight, bias):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        _layernorm[(x2.shape[0],)](x2, weight, bias, y, x2.stride(0), n, self.eps,
                                   BLOCK=triton.next_power_of_2(n))
        return y.view(x.shape)
