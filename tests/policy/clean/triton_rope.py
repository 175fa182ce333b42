"""Clean Triton kernel: NeoX rotary embedding, one program per (token, head)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rope(q_ptr, cos_ptr, sin_ptr, out_ptr, heads, HALF: tl.constexpr):
    pid = tl.program_id(0)
    tok = pid // heads
    base = pid.to(tl.int64) * (2 * HALF)
    i = tl.arange(0, HALF)
    x1 = tl.load(q_ptr + base + i).to(tl.float32)
    x2 = tl.load(q_ptr + base + HALF + i).to(tl.float32)
    c = tl.load(cos_ptr + tok * HALF + i).to(tl.float32)
    s = tl.load(sin_ptr + tok * HALF + i).to(tl.float32)
    tl.store(out_ptr + base + i, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty))
    tl.store(out_ptr + base + HALF + i, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty))


def run(q, cos, sin, out):
    tokens, heads, dim = q.shape
    _rope[(tokens * heads,)](q, cos, sin, out, heads, HALF=dim // 2)
