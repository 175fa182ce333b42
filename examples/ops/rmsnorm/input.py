import torch


def _make_inputs(num_tokens: int, hidden_size: int, dtype: str = "bfloat16"):
    """Activations of moderate magnitude and a weight close to one, on the GPU.

    The evaluator seeds every RNG before calling this, so no seeding here.
    """
    dt = getattr(torch, dtype)
    x = (0.5 * torch.randn(num_tokens, hidden_size, device="cuda")).to(dt)
    weight = (1.0 + 0.1 * torch.randn(hidden_size, device="cuda")).to(dt)
    return {"x": x, "weight": weight}
