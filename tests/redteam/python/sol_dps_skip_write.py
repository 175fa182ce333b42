"""Hostile (SOL rope, destination-passing): after the correctness calls of a shape, writes
each output buffer once and then returns without writing it again, trusting the buffer to
keep the last result.

Timed runs used to reuse one output buffer and never read it. The judge poisons the
destination before every timed run and compares a secret sample: expected "output of a
timed run is wrong".
"""
import torch

_calls = {}
_written = set()


def run(q, cos, sin, out):
    shape = tuple(out.shape)
    _calls[shape] = _calls.get(shape, 0) + 1
    if _calls[shape] > 12 and out.data_ptr() in _written:
        return
    half = q.shape[-1] // 2
    qf = q.float()
    c, s = cos[:, None, :], sin[:, None, :]
    out.copy_(torch.cat((qf[..., :half] * c - qf[..., half:] * s,
                         qf[..., half:] * c + qf[..., :half] * s), dim=-1).to(out.dtype))
    _written.add(out.data_ptr())
