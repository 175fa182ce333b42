"""CuTe DSL seed kernel for the silu_and_mul example.

Grid: one row per block along y, THREADS * VEC output channels per block along x.
Each thread computes VEC consecutive outputs: it reads their gate and up values
once, computes silu(gate) * up in float32 and writes the result in the input's
dtype. The tensors' layouts are dynamic, so the kernel is compiled once, on the first
call, for every shape; it is launched on PyTorch's current stream, so the evaluator's
timing covers it.
"""
import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack

# aka:tune THREADS in {128, 256, 512}
THREADS = 256
# aka:tune VEC in {2, 4, 8}
VEC = 4


@cute.kernel
def _silu_and_mul_kernel(g_x: cute.Tensor, g_out: cute.Tensor, d: cutlass.Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, row, _ = cute.arch.block_idx()
    first = (bidx * THREADS + tidx) * VEC
    for j in cutlass.range_constexpr(VEC):
        col = first + j
        if col < d:
            gate = g_x[row, col].to(cutlass.Float32)
            up = g_x[row, d + col].to(cutlass.Float32)
            y = gate / (1.0 + cute.math.exp(-gate)) * up
            g_out[row, col] = y.to(g_out.element_type)


@cute.jit
def _silu_and_mul(m_x: cute.Tensor, m_out: cute.Tensor, rows: cutlass.Int32, d: cutlass.Int32,
                  stream: cuda.CUstream):
    per_block = THREADS * VEC
    _silu_and_mul_kernel(m_x, m_out, d).launch(
        grid=((d + per_block - 1) // per_block, rows, 1), block=(THREADS, 1, 1), stream=stream)


def _dynamic(t: torch.Tensor) -> cute.Tensor:
    """A row-major 2-D tensor whose shape and row stride are runtime values."""
    return from_dlpack(t, assumed_align=16).mark_layout_dynamic(leading_dim=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernel = None  # compiled on the first call

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1] // 2
        x2 = x.reshape(-1, 2 * d).contiguous()
        rows = x2.shape[0]
        out = torch.empty((rows, d), dtype=x.dtype, device=x.device)
        stream = cuda.CUstream(torch.cuda.current_stream().cuda_stream)
        args = (_dynamic(x2), _dynamic(out), rows, d, stream)
        if self._kernel is None:
            self._kernel = cute.compile(_silu_and_mul, *args)
        self._kernel(*args)
        return out.reshape(*x.shape[:-1], d)
