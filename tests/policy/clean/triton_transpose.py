"""Clean Triton kernel: 2-D transpose through a TILE x TILE block."""
import torch
import triton
import triton.language as tl

TILE = 64


@triton.jit
def _transpose(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, TILE: tl.constexpr):
    rm = tl.program_id(0) * TILE + tl.arange(0, TILE)
    rn = tl.program_id(1) * TILE + tl.arange(0, TILE)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    tl.store(y_ptr + rn[None, :] * sym + rm[:, None] * syn, tile, mask=mask)


def run(x):
    M, N = x.shape
    y = torch.empty((N, M), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, TILE), triton.cdiv(N, TILE))
    _transpose[grid](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), y.stride(1), TILE=TILE)
    return y
