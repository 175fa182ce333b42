"""check_rope.py — every layout of the rope Triton seed against a numpy rope, without a GPU.

    python3 bench/triton_standin/check_rope.py [examples/ops/rope/seeds/Triton/kernel.py]

This directory's `triton` and `torch` are stand-ins (numpy; nothing of either project):
a launch runs the kernel body once per program id with masked loads and stores on flat
arrays, and a store that writes one element twice fails. The output is pre-filled with
NaN, so an element no program writes fails too. It checks the indexing of the seed's
layouts (token blocks, head blocks, the small/large split), not Triton's compiler: a
layout must still pass `aka eval` on a GPU. Needs numpy.
"""
import importlib.util
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import triton.language as tl  # noqa: E402  (the stand-in)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "examples/ops/rope/seeds/Triton/kernel.py")
spec = importlib.util.spec_from_file_location("rope_seed", path)
seed = importlib.util.module_from_spec(spec)
spec.loader.exec_module(seed)


def pointer(a, shape=None):
    """A flat pointer to a, that the seed's run() also takes for a tensor."""
    p = tl.Ptr(a.reshape(-1))
    p.shape = shape if shape is not None else a.shape
    p.contiguous = lambda: p
    return p


def reference(q, cos, sin):
    half = q.shape[2] // 2
    x1, x2 = q[..., :half], q[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


rng = np.random.default_rng(0)
checked = 0
# token counts below, at and above a block's size; 3 heads: a head block masked at the end
for tokens, heads in ((1, 8), (37, 8), (70, 8), (5, 3)):
    q = rng.standard_normal((tokens, heads, 8)).astype(np.float32)
    cos = rng.standard_normal((tokens, 4)).astype(np.float32)
    sin = rng.standard_normal((tokens, 4)).astype(np.float32)
    want = reference(q, cos, sin)
    for large_t, large_h, large_from, small_t in itertools.product(
            (0, 1, 4, 32), (0, 1, 2, 4), (0, 1, 64), (0, 2, 16)):
        seed.LARGE_BLOCK_TOKENS, seed.LARGE_HEAD_BLOCK = large_t, large_h
        seed.LARGE_FROM, seed.BLOCK_TOKENS = large_from, small_t
        out = np.full(q.shape, np.nan, np.float32)
        seed.run(pointer(q), pointer(cos), pointer(sin), pointer(out))
        assert np.allclose(out, want, atol=1e-5), (tokens, heads, large_t, large_h,
                                                   large_from, small_t)
        checked += 1
print(f"rope seed: {checked} layouts agree with numpy")
