"""Deterministic seeds: one RNG seed per (stage, base seed, shape, case).

This file owns how every random input the harness builds is made reproducible.
A seed is derived by hashing a label rather than by drawing from one shared
stream, so that filtering shapes (--shape-id) or adding seeds (--multi-seed)
never changes the inputs of any other case: shape "3", case 0, seed 0 gets the
same tensors whether it runs alone or after fifty other shapes.

With base seed 0 the label is exactly Atrex-Bench's "<stage>|<shape>|<case>",
so the inputs match the official evaluator's on the same torch build; any other
base seed is mixed into the label.
"""

from __future__ import annotations

import hashlib
import random

STAGE_CORRECTNESS = "correctness"
STAGE_PERFORMANCE = "performance"
STAGE_PROBE = "probe"


def derive_seed(stage: str, base_seed: int, shape_id: str, case: int) -> int:
    """A 31-bit seed from the first 4 bytes (big-endian) of sha256(label)."""
    if base_seed == 0:
        label = f"{stage}|{shape_id}|{case}"
    else:
        label = f"{stage}|{base_seed}|{shape_id}|{case}"
    digest = hashlib.sha256(label.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def base_seeds(first: int, count: int) -> list[int]:
    """The base seeds of a --multi-seed run: first, first+1, ..., count of them."""
    return [first + k for k in range(max(count, 1))]


def seed_everything(seed: int) -> None:
    """Seed every RNG an input builder might use: random, NumPy, torch CPU and CUDA."""
    random.seed(seed)
    try:  # NumPy is optional; input builders that use it need the same seed.
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)  # also seeds every CUDA device's generator
