"""Triton seed kernel for the rmsnorm example: one program per row.

The row is loaded once, its mean square reduced in float32, and the scaled
result written back in the input dtype: one read of x and weight, one write.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# aka:tune NUM_WARPS in {4, 8, 16}
NUM_WARPS = 4


@triton.jit
def _rmsnorm_row(x_ptr, w_ptr, out_ptr, stride_x, stride_out, n_cols, eps,
                 BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    inv_rms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * inv_rms * w
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        out = torch.empty_like(x2)
        block = triton.next_power_of_2(n)
        num_warps = NUM_WARPS
        _rmsnorm_row[(x2.shape[0],)](x2, weight, out, x2.stride(0), out.stride(0), n, self.eps,
                                     BLOCK=block, num_warps=num_warps)
        return out.reshape(x.shape)
