# policy-expect: dynamic-access
# A CUDA extension built at run time from a string (cuBLAS inside).
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


from torch.utils.cpp_extension import load_inline

_ext = load_inline(name="x", cpp_sources="", cuda_sources="", functions=["gemm"])


def run(a, b):
    out = torch.empty_like(a)
    _copy[(1,)](a, out, a.numel(), BLOCK=1024)
    return _ext.gemm(out, b)
