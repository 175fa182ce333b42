# policy-expect: prebuilt-library
# A library kernel behind a thin shim: FlashInfer does the work.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


import flashinfer


def run(x, w):
    out = torch.empty_like(x)
    _copy[(1,)](x, out, 0, BLOCK=1024)
    return flashinfer.rmsnorm(x, w)
