# policy-expect: input-cache
# A module-level dict filled on the forward path, keyed on the input shape.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


_RESULTS = {}


def run(x):
    key = (tuple(x.shape), x.dtype)
    if key not in _RESULTS:
        out = torch.empty_like(x)
        _copy[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        _RESULTS[key] = out
    return _RESULTS[key]
