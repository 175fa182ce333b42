# policy-expect: torch-compute
# PyTorch fallback: a Triton kernel exists and is launched, but the result comes from torch.matmul.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def run(a, b):
    tmp = torch.empty_like(a)
    _copy[(triton.cdiv(a.numel(), 1024),)](a, tmp, a.numel(), BLOCK=1024)
    return torch.matmul(tmp, b)
