# A numpy stand-in for the pieces of Triton the rope seed uses: each launch runs the
# kernel body once per program id, with masked loads and stores on flat arrays.
import numpy as np
from . import language


def next_power_of_2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def cdiv(a, b):
    return -(-a // b)


class _Kernel:
    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        def launch(*args, num_warps=1, **kw):
            for pid in range(grid[0]):
                language._PID[0] = pid
                self.fn(*args, **kw)
        return launch


def jit(fn):
    return _Kernel(fn)
