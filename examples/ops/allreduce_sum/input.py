import torch
import torch.distributed as dist


def _make_inputs(num_elements: int, dtype: str = "float32"):
    """Each rank holds its own slice of data; values are kept small so that a sum over
    the world stays exact enough in bf16/fp32 for the tolerance.
    """
    dt = getattr(torch, dtype)
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    device = torch.device("cuda", torch.cuda.current_device())
    x = torch.randn(num_elements, device=device) * 0.25 + 0.01 * rank
    return {"x": x.to(dt)}
