import torch


def _make_inputs(num_tokens: int, intermediate_size: int, dtype: str = "bfloat16"):
    """A fused gate/up activation of 2 * intermediate_size channels per token."""
    dt = getattr(torch, dtype)
    x = torch.randn(num_tokens, 2 * intermediate_size, device="cuda").to(dt)
    return {"x": x}
