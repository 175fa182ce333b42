"""Planted wrong candidate: correct rotary embedding except one element."""
import torch


def run(q, cos, sin, out):
    half = q.shape[-1] // 2
    qf = q.float()
    c, s = cos[:, None, :], sin[:, None, :]
    out.copy_(torch.cat((qf[..., :half] * c - qf[..., half:] * s,
                         qf[..., half:] * c + qf[..., :half] * s), dim=-1).to(out.dtype))
    out.view(-1)[5] += 1.0  # the planted bug: flat element 5, index (0, 0, 5)
