"""Clean Triton kernel: z = x + y, one block of BLOCK elements per program."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)


def run(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = torch.empty_like(x)
    n = x.numel()
    grid = (triton.cdiv(n, 1024),)
    _add[grid](x, y, z, n, BLOCK=1024)
    return z
