import torch


def run(q, cos, sin):
    """Rotary embedding, rotate-half (NeoX) convention, computed in float32."""
    half = q.shape[-1] // 2
    qf = q.float()
    x1, x2 = qf[..., :half], qf[..., half:]
    c = cos[:, None, :]
    s = sin[:, None, :]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(q.dtype)
