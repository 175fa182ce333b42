# policy-expect: requires-kernel
# A "Triton" kernel with no @triton.jit function: plain Python loops on the host.
import torch


def run(x):
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i]
    return out
