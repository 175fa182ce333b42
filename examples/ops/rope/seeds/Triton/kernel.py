"""Triton seed kernel for the rope example (SOL layout, destination passing).

run(q, cos, sin, out): one program per (token, head) rotates one head_dim
vector with the rotate-half convention, in float32, into the caller's out.
"""
import torch
import triton
import triton.language as tl

# aka:tune NUM_WARPS in {1, 2, 4}
NUM_WARPS = 1


@triton.jit
def _rope_head(q_ptr, cos_ptr, sin_ptr, out_ptr, heads, HALF: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    token = pid // heads
    offs = tl.arange(0, HALF)
    base = pid * (2 * HALF)
    x1 = tl.load(q_ptr + base + offs).to(tl.float32)
    x2 = tl.load(q_ptr + base + HALF + offs).to(tl.float32)
    c = tl.load(cos_ptr + token * HALF + offs)
    s = tl.load(sin_ptr + token * HALF + offs)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + base + offs, (x1 * c - x2 * s).to(ty))
    tl.store(out_ptr + base + HALF + offs, (x2 * c + x1 * s).to(ty))


def run(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, out: torch.Tensor) -> None:
    tokens, heads, head_dim = q.shape
    q = q.contiguous()
    _rope_head[(tokens * heads,)](q, cos.contiguous(), sin.contiguous(), out, heads,
                                  HALF=head_dim // 2, num_warps=NUM_WARPS)
