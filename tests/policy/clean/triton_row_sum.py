"""Clean Triton kernel: per-row sum, looping over the row in BLOCK chunks."""
import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


def run(x):
    rows, cols = x.shape
    y = torch.empty((rows,), device=x.device, dtype=torch.float32)
    _row_sum[(rows,)](x, y, x.stride(0), cols, BLOCK=1024)
    return y
