"""Hostile (SOL rope, destination-passing): a slow kernel that reaches the harness through
sys.modules and makes every figure its timer could report 1000x too small.

On a GPU a SOL operator is timed by kernel span (aka_harness/kernel_span.py): the
candidate swaps the module's span_ns for one that divides by 1000, and the event and
host clocks as patch_timers.py does, for the fallbacks. The span is read in the
candidate's process; the judge's clock is not: expected "timing tampered" on a GPU
(bench/h200_official.sh, part red) and on a CPU (tests/integration/redteam_python.sh).
"""
import sys
import time

import torch

_REAL_NS = time.monotonic_ns  # bound before any clock is patched
SLOW_NS = 5_000_000
_ns = time.perf_counter_ns
time.perf_counter_ns = lambda: _ns() // 1000
if hasattr(torch.cuda, "Event"):
    _et = torch.cuda.Event.elapsed_time
    torch.cuda.Event.elapsed_time = lambda self, end: _et(self, end) / 1000


def _patch():
    mod = sys.modules.get("aka_harness.kernel_span")
    if mod is not None and not getattr(mod.span_ns, "_patched", False):
        real = mod.span_ns

        def small(records, t0, t1):
            ns = real(records, t0, t1)
            return None if ns is None else ns // 1000

        small._patched = True
        mod.span_ns = small


_patch()


def run(q, cos, sin, out):
    _patch()
    half = q.shape[-1] // 2
    c, s = cos[:, None, :], sin[:, None, :]
    # At least SLOW_NS by a clock it leaves alone: the judge names a missed part only past a
    # floor (1 ms, crosscheck.CPU_FLOOR_US) and half the window, and 40 passes took 0.6 ms on
    # a fast CI host (the case passed there with its latency charged, not named).
    t0, n = _REAL_NS(), 0
    while n < 40 or _REAL_NS() - t0 < SLOW_NS:  # the slow kernel whose time is hidden
        qf = q.float()
        res = torch.cat((qf[..., :half] * c - qf[..., half:] * s,
                         qf[..., half:] * c + qf[..., :half] * s), dim=-1)
        n += 1
    out.copy_(res.to(out.dtype))
