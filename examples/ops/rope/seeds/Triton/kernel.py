"""Triton seed kernel for the rope example (SOL layout, destination passing).

run(q, cos, sin, out) rotates every head_dim vector with the rotate-half convention,
in float32, into the caller's out. Two layouts of the work, a knob for the tuner:

- BLOCK_TOKENS 0: one program per (token, head), 128 elements each. Many tiny
  programs, and each head loads its token's cos and sin again.
- BLOCK_TOKENS T > 0: one program per T tokens, all heads at once: cos and sin are
  loaded once per token and reused by every head, and each program moves T x heads x
  head_dim elements (8 KiB of bfloat16 in and out for T = 4 on 8 x 128).
"""
import torch
import triton
import triton.language as tl

# aka:tune BLOCK_TOKENS in {0, 1, 2, 4, 8, 16}
BLOCK_TOKENS = 0
# aka:tune NUM_WARPS in {1, 2, 4, 8}
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


@triton.jit
def _rope_tokens(q_ptr, cos_ptr, sin_ptr, out_ptr, tokens, heads, HEADS: tl.constexpr,
                 HALF: tl.constexpr, BLOCK_T: tl.constexpr):
    # (token, head, element) blocks: HEADS is heads rounded up to a power of two
    t = tl.program_id(0).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    h = tl.arange(0, HEADS)
    d = tl.arange(0, HALF)
    t3 = t[:, None, None]
    mask = (t3 < tokens) & (h[None, :, None] < heads)
    base = (t3 * heads + h[None, :, None]) * (2 * HALF) + d[None, None, :]
    x1 = tl.load(q_ptr + base, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(q_ptr + base + HALF, mask=mask, other=0.0).to(tl.float32)
    row = t[:, None] * HALF + d[None, :]
    row_mask = t[:, None] < tokens
    c = tl.load(cos_ptr + row, mask=row_mask, other=0.0)[:, None, :]
    s = tl.load(sin_ptr + row, mask=row_mask, other=0.0)[:, None, :]
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + base, (x1 * c - x2 * s).to(ty), mask=mask)
    tl.store(out_ptr + base + HALF, (x2 * c + x1 * s).to(ty), mask=mask)


def run(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, out: torch.Tensor) -> None:
    tokens, heads, head_dim = q.shape
    q, cos, sin = q.contiguous(), cos.contiguous(), sin.contiguous()
    if BLOCK_TOKENS == 0:
        _rope_head[(tokens * heads,)](q, cos, sin, out, heads, HALF=head_dim // 2,
                                      num_warps=NUM_WARPS)
        return
    _rope_tokens[(triton.cdiv(tokens, BLOCK_TOKENS),)](
        q, cos, sin, out, tokens, heads, HEADS=triton.next_power_of_2(heads),
        HALF=head_dim // 2, BLOCK_T=BLOCK_TOKENS, num_warps=NUM_WARPS)
