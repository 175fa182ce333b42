# policy-expect: dynamic-access
# cuBLAS through ctypes: the GEMM is a library call.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


import ctypes

_lib = ctypes.CDLL("libcublas.so.12")


def run(a, b):
    out = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
    _copy[(1,)](a, out, 0, BLOCK=1024)
    _lib.cublasSgemm_v2(None, 0, 0, a.shape[0], b.shape[1], a.shape[1])
    return out
