# policy-expect: input-cache
# Module-level state written on the forward path: the last output is replayed.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


_last = None


def run(x):
    global _last
    if _last is None:
        _last = torch.empty_like(x)
        _copy[(1,)](x, _last, x.numel(), BLOCK=1024)
    return _last
