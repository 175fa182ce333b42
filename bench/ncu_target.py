"""ncu_target.py — a short GPU workload for recording Nsight Compute exports (issue 15's
parser fixtures): the rmsnorm Triton seed on 8192x8192 bf16 and a 1 GiB device copy,
each launched three times. Run from the repository root under ncu."""
import sys

import torch

sys.path.insert(0, "examples/ops/rmsnorm/seeds/Triton")
import kernel  # noqa: E402

dev = torch.device("cuda")
m = kernel.Model(1e-6).to(dev)
x = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
w = torch.randn(8192, device=dev, dtype=torch.bfloat16)
a = torch.empty(1 << 30, dtype=torch.int8, device=dev)
b = torch.empty_like(a)
for _ in range(3):
    m(x, w)
    b.copy_(a)
torch.cuda.synchronize()
