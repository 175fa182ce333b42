# policy-expect: torch-compute
# operator.matmul applies a @ b without the operator token.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


import operator


def run(a, b):
    out = torch.empty_like(a)
    _copy[(1,)](a, out, a.numel(), BLOCK=1024)
    return operator.matmul(out, b)
