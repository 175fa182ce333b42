"""Triton seed kernel for the rope example (SOL layout, destination passing).

run(q, cos, sin, out) rotates every head_dim vector with the rotate-half convention,
in float32, into the caller's out. How the work is laid out is the tuner's choice,
separately for small calls and large ones, because no one layout wins both: on an
H100 (docs/measurements.md, rope layouts) one program per (token, head) was fastest
at 1 and 37 tokens and slowest at 8,192, where blocks of 16 tokens moved 86% of the
device-to-device copy bandwidth. The campaign scores the geomean over all workloads,
so with one layout the small calls decided what the large one ran.

- A call of fewer than LARGE_FROM tokens (every call when LARGE_FROM is 0) uses
  BLOCK_TOKENS and NUM_WARPS; a larger one LARGE_BLOCK_TOKENS, LARGE_HEAD_BLOCK and
  LARGE_WARPS. The defaults are the layouts measured best on each side (4 tokens of
  all heads with 4 warps: 83% of the copy at 8,192 tokens); the tuner starts there.
- BLOCK_TOKENS 0: one program per (token, head), 128 elements each. Many tiny
  programs, and each head loads its token's cos and sin again.
- BLOCK_TOKENS T > 0: one program per T tokens and all heads; LARGE_BLOCK_TOKENS T > 0:
  one program per T tokens and LARGE_HEAD_BLOCK heads (0: all of them).
  With all heads, cos and sin are loaded once per token and reused by every head; with
  fewer, the grid has heads / LARGE_HEAD_BLOCK times more programs, and the other heads'
  programs of the same tokens, scheduled next to each other, find cos and sin in L2.
"""
import torch
import triton
import triton.language as tl

# Calls of LARGE_FROM tokens or more (0: none). Declared first: the tuner's neighbours are
# tried in declaration order, and the large layout is where a call moves the most bytes.
# aka:tune LARGE_BLOCK_TOKENS in {0, 1, 2, 4, 8, 16, 32}
LARGE_BLOCK_TOKENS = 4
# aka:tune LARGE_WARPS in {1, 2, 4, 8}
LARGE_WARPS = 4
# aka:tune LARGE_HEAD_BLOCK in {0, 1, 2, 4}
LARGE_HEAD_BLOCK = 0
# aka:tune LARGE_FROM in {0, 256, 1024, 4096}
LARGE_FROM = 1024
# Smaller calls: every head of a token in one program.
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
def _rope_block(q_ptr, cos_ptr, sin_ptr, out_ptr, tokens, heads, head_blocks,
                HALF: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr):
    # (token, head, element) blocks; the head block is a power of two, masked at the end.
    # Program ids run heads fastest, so one token block's programs are neighbours.
    pid = tl.program_id(0).to(tl.int64)
    t = (pid // head_blocks) * BLOCK_T + tl.arange(0, BLOCK_T)
    h = (pid % head_blocks) * BLOCK_H + tl.arange(0, BLOCK_H)
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
    large = LARGE_FROM > 0 and tokens >= LARGE_FROM
    block_t = LARGE_BLOCK_TOKENS if large else BLOCK_TOKENS
    head_block = LARGE_HEAD_BLOCK if large else 0
    warps = LARGE_WARPS if large else NUM_WARPS
    if block_t == 0:
        _rope_head[(tokens * heads,)](q, cos, sin, out, heads, HALF=head_dim // 2,
                                      num_warps=warps)
        return
    block_h = triton.next_power_of_2(heads if head_block == 0 else min(head_block, heads))
    head_blocks = triton.cdiv(heads, block_h)
    _rope_block[(triton.cdiv(tokens, block_t) * head_blocks,)](
        q, cos, sin, out, tokens, heads, head_blocks, HALF=head_dim // 2, BLOCK_T=block_t,
        BLOCK_H=block_h, num_warps=warps)
