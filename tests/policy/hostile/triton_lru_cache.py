# policy-expect: input-cache
# functools.lru_cache on the forward path memoizes results.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


from functools import lru_cache


@lru_cache(maxsize=None)
def _launch(x):
    out = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out


def run(x):
    return _launch(x)
