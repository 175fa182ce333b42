"""A rope kernel (SOL layout, destination passing) laid out for bandwidth: a candidate
for the next device session to measure against examples/ops/rope/seeds/Triton/kernel.py,
whose one program per (token, head) moves 256 B of q each (65,536 programs on the 8192-
token workload, ~0.9 TB/s there on the H200). Not yet run anywhere: it replaces the seed
only once `aka eval` on the H200 shows it passing and faster (issue 17, "seeds worth
tuning"; bench/h200_bandwidth.sh).

q is viewed as rows of head_dim values (row = token * heads + head); a program takes
BLOCK_R consecutive rows, both halves of each, and the token's cos and sin (read once
per head from cache, once from memory).
"""
import torch
import triton
import triton.language as tl

# aka:tune BLOCK_R in {16, 32, 64, 128}
BLOCK_R = 64
# aka:tune NUM_WARPS in {2, 4, 8}
NUM_WARPS = 4


@triton.jit
def _rope_rows(q_ptr, cos_ptr, sin_ptr, out_ptr, n_rows, heads, HALF: tl.constexpr,
               BLOCK_R: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, HALF)
    inside = (rows < n_rows)[:, None]
    at = rows[:, None] * (2 * HALF) + cols[None, :]
    trig = (rows // heads)[:, None] * HALF + cols[None, :]
    x1 = tl.load(q_ptr + at, mask=inside, other=0.0).to(tl.float32)
    x2 = tl.load(q_ptr + at + HALF, mask=inside, other=0.0).to(tl.float32)
    c = tl.load(cos_ptr + trig, mask=inside, other=0.0)
    s = tl.load(sin_ptr + trig, mask=inside, other=0.0)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + at, (x1 * c - x2 * s).to(ty), mask=inside)
    tl.store(out_ptr + at + HALF, (x2 * c + x1 * s).to(ty), mask=inside)


def run(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, out: torch.Tensor) -> None:
    tokens, heads, head_dim = q.shape
    q = q.contiguous()
    n_rows = tokens * heads
    _rope_rows[(triton.cdiv(n_rows, BLOCK_R),)](q, cos.contiguous(), sin.contiguous(), out,
                                                n_rows, heads, HALF=head_dim // 2,
                                                BLOCK_R=BLOCK_R, num_warps=NUM_WARPS)
