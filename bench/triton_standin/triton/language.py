# The stand-in for triton.language (see __init__.py): program ids, aranges, masked
# loads and stores on flat numpy arrays, and .to() casts.
import numpy as np

_PID = [0]
float32, int64 = np.float32, np.int64
constexpr = int


class V(np.ndarray):
    def to(self, dtype):
        return np.asarray(self).astype(dtype).view(V)


def _v(x):
    return np.asarray(x).view(V)


def program_id(axis):
    return _v(np.int64(_PID[0]))


def arange(a, b):
    return _v(np.arange(a, b, dtype=np.int64))


class Ptr:
    def __init__(self, arr, off=0):
        self.arr, self.off = arr, off
        self.dtype = type("D", (), {"element_ty": arr.dtype})

    def __add__(self, x):
        return Ptr(self.arr, self.off + np.asarray(x))

    __radd__ = __add__


def load(ptr, mask=None, other=0.0):
    off = np.asarray(ptr.off)
    if mask is None:
        return _v(ptr.arr[off])
    mask = np.broadcast_to(mask, off.shape)
    safe = np.where(mask, off, 0)
    return _v(np.where(mask, ptr.arr[safe], other))


def store(ptr, val, mask=None):
    off = np.asarray(ptr.off)
    val = np.broadcast_to(np.asarray(val), off.shape)
    if mask is None:
        mask = np.ones(off.shape, bool)
    mask = np.broadcast_to(mask, off.shape)
    assert off[mask].size == np.unique(off[mask]).size, "a store writes one place twice"
    ptr.arr[off[mask]] = val[mask]
