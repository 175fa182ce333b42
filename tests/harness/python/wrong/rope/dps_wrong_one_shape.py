"""Planted wrong candidate: swaps the sign convention on 37-token workloads only."""
import torch


def run(q, cos, sin, out):
    half = q.shape[-1] // 2
    qf = q.float()
    c, s = cos[:, None, :], sin[:, None, :]
    if q.shape[0] == 37:
        s = -s  # the planted bug
    out.copy_(torch.cat((qf[..., :half] * c - qf[..., half:] * s,
                         qf[..., half:] * c + qf[..., :half] * s), dim=-1).to(out.dtype))
