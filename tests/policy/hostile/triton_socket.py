# policy-expect: network
# Network access: the inputs are sent out and the answer read back.
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


import socket


def run(x):
    out = torch.empty_like(x)
    _copy[(1,)](x, out, x.numel(), BLOCK=1024)
    s = socket.create_connection(("10.0.0.1", 9000))
    s.sendall(bytes(str(x.shape), "ascii"))
    return out
