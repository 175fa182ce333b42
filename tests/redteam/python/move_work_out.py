"""Hostile: moves its work out of the judge's timed window, by less than the limit at
which the judge names tampering.

Its kernel is slow on purpose (CPU spin, then RMSNorm: 0.3-0.5 ms of CPU per call on
either shape with the runner's own path, under the 1 ms at which the judge names it).
It wraps the runner's staging through sys.modules: as soon as a timed run's fresh inputs are staged,
before the runner says "ready", it runs the whole kernel on them and keeps the output;
the timed call then only hands that output back. Every output is right and no clock is
touched. The judge counts the runner group's CPU time outside its window and charges
the median excess over the reference's to every run (crosscheck.cpu_latencies), so the
move buys nothing: expected a pass with a geomean speedup over the reference of at most
1.5 (measured 0.3-1.1; without the charge 4-22, the timed call being a few us).
"""
import sys
import time

import torch
import torch.nn as nn

WORK_NS = {1: 300_000}  # by the number of rows: shape 0 has 1 (its RMSNorm is ~30 us)
OTHER_NS = 0  # shape 1, 16 rows: its RMSNorm alone is ~350 us on the test VM
_state = {"staging": False, "ready": None}


def _spin(rows):
    end = time.thread_time_ns() + WORK_NS.get(rows, OTHER_NS)
    while time.thread_time_ns() < end:
        pass


def _wrap():
    runner = sys.modules.get("aka_harness.runner")
    if runner is None or getattr(runner.Runner, "_moved", False):
        return
    orig = runner.Runner._stage

    def stage(self, inputs):
        orig(self, inputs)
        _state["staging"] = True
        try:
            _state["ready"] = self.launch.fn()  # the whole kernel, before "ready"
        finally:
            _state["staging"] = False

    runner.Runner._stage = stage
    runner.Runner._moved = True


_wrap()


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, weight):
        if not _state["staging"] and _state["ready"] is not None:
            out, _state["ready"] = _state["ready"], None
            return out
        _spin(x.shape[0])
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
                * weight.float()).to(x.dtype)
