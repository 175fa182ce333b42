"""Planted wrong candidate: writes every row but the last."""
import torch


def run(q, cos, sin, out):
    half = q.shape[-1] // 2
    qf = q.float()[:-1]
    c, s = cos[:-1, None, :], sin[:-1, None, :]
    out[:-1].copy_(torch.cat((qf[..., :half] * c - qf[..., half:] * s,
                              qf[..., half:] * c + qf[..., :half] * s), dim=-1).to(out.dtype))
