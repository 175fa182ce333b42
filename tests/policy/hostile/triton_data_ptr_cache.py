# policy-expect: input-cache
# An output cache keyed on the input address: repeated timing calls skip the kernel.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self.seen:
            out = torch.empty_like(x)
            _copy[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
            self.seen[key] = out
        return self.seen[key]
