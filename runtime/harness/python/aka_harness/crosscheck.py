"""The judge's checks of the latency a runner reports, against clocks it cannot touch.

This file owns the "timing tampered" verdict. A runner times each call by its
own clock (CUDA events or perf_counter, timing.py), and a candidate runner
runs hostile code, so the figure it reports may be forged: a patched
``time.perf_counter``, ``Event.elapsed_time``, or the harness's own functions.
Two checks, both from outside the candidate's process:

* **Wall clock.** The judge measures, with ``time.perf_counter_ns`` in its own
  process, the time from sending each ``go`` request to holding the runner's
  first reply (its latency, sent as soon as the call is synchronized): ``wall``;
  then the time until the second reply, the call's outputs, has arrived:
  ``out``. ``reported <= wall`` must hold (the runner's window lies strictly
  inside the judge's; IMPOSSIBLE_SLACK absorbs event-timer granularity), and
  ``gap = wall - reported`` is the cost of the path around the call: the pipe
  round trip, and the L2 flush and device synchronize on a GPU. It does not
  depend on how long the call takes (on a GPU the flush covers the host's launch
  latency), so for the same shape it is the same for every honest callable; the
  reference, timed through the very same path on the same shapes before the
  candidate started, gives it. A candidate that under-reports by H microseconds
  on the calls that set its median raises its median gap by H. Work deferred
  past the latency reply (a runner told to reply before synchronizing) has to be
  done before its outputs can be read, so it lengthens ``out``, which the
  reference's same-sized outputs calibrate. The shape fails when either median
  exceeds the reference's by more than max(abs, rel x the reference's median)
  (GAP_LIMITS and OUT_LIMITS, per device type). Keeping the outputs out of
  ``wall`` matters on a GPU, where copying large outputs back takes
  milliseconds: inside one window their jitter would hide a whole kernel.
* **CPU time (CPU device).** On a loaded CPU the wall gap moves by milliseconds
  with scheduling, so it can only be a coarse bound there. The kernel's own
  accounting cannot be moved that way: the judge reads the CPU time of the
  whole runner group (every process and thread, procs.py) around each ``go``.
  What ``n`` CPUs can do in the reported time is at most ``n x reported``; the
  rest is the path's CPU cost, which the trusted reference runner shows (its
  group CPU time minus the CPU time of its own calls). The shape fails when the
  candidate's median ``cpu - n x reported`` exceeds the reference's median path
  cost by more than max(CPU_ABS_US, CPU_REL x that cost).

Medians make both checks blind to a few preempted calls. The constants come
from measured honest runs (docs/evaluator.md, "Timing cross-check"); the limit
of each shape is reported in the result, so the resolution is explicit: time
hidden below it is not caught, and on a CPU a candidate using n CPUs can
under-report by up to n x.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Optional

IMPOSSIBLE_SLACK_US = 2.0
IMPOSSIBLE_SLACK_REL = 1e-3

# (absolute µs, relative to the reference's median) for the gap before the latency
# arrives, and for the time the outputs take after it.
GAP_LIMITS = {"cpu": (20000.0, 3.0), "cuda": (50.0, 0.25)}
OUT_LIMITS = {"cpu": (20000.0, 3.0), "cuda": (200.0, 0.25)}

# The CPU-time check (CPU device): absolute µs and relative to the reference's path CPU.
CPU_ABS_US = 500.0
CPU_REL = 1.0


@dataclass
class Samples:
    """Per timed call: what the runner reported and what the judge's clock saw (µs)."""

    reported: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)  # `go` sent → latency received
    out: list[float] = field(default_factory=list)  # latency received → outputs received

    def add(self, reported: float, wall: float, out: float) -> None:
        self.reported.append(reported)
        self.wall.append(wall)
        self.out.append(out)

    @property
    def gaps(self) -> list[float]:
        return [w - r for r, w in zip(self.reported, self.wall)]

    @property
    def median_us(self) -> Optional[float]:
        return statistics.median(self.reported) if self.reported else None

    @property
    def cv(self) -> Optional[float]:
        if len(self.reported) < 2:
            return None
        mean = statistics.fmean(self.reported)
        return statistics.stdev(self.reported) / mean if mean > 0 else None


def valid_report(value: Any) -> bool:
    """A figure a runner may report: a finite, non-negative number."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


@dataclass
class Verdict:
    ok: bool
    reason: str = ""
    gap_us: Optional[float] = None
    ref_gap_us: Optional[float] = None
    limit_us: Optional[float] = None


def _limit(values: list[float], limits: tuple[float, float]) -> tuple[float, float]:
    """(the reference's median, the largest median a candidate may show)."""
    abs_us, rel = limits
    base = statistics.median(values)
    return base, base + max(abs_us, rel * max(base, 0.0))


def check(cand: Samples, ref: Optional[Samples], device_type: str) -> Verdict:
    """The cross-check of one shape on one rank."""
    for i, (r, w) in enumerate(zip(cand.reported, cand.wall)):
        if r > w * (1 + IMPOSSIBLE_SLACK_REL) + IMPOSSIBLE_SLACK_US:
            return Verdict(False, f"timing tampered: timed run {i} reported {r:.2f} us but the "
                                  f"judge's clock measured only {w:.2f} us around the whole call")
    if not cand.reported:
        return Verdict(True)
    gap = statistics.median(cand.gaps)
    if ref is None or not ref.reported:
        return Verdict(True, "", gap)
    base, limit = _limit(ref.gaps, GAP_LIMITS.get(device_type, GAP_LIMITS["cuda"]))
    if gap > limit:
        return Verdict(False, f"timing tampered: the judge's clock saw {gap:.1f} us per timed "
                              f"call (median) beyond the {cand.median_us:.2f} us the candidate "
                              f"reported, where the reference through the same path shows "
                              f"{base:.1f} us (limit {limit:.1f} us): the reported latency "
                              f"leaves out time the call took", gap, base, limit)
    out = statistics.median(cand.out)
    obase, olimit = _limit(ref.out, OUT_LIMITS.get(device_type, OUT_LIMITS["cuda"]))
    if out > olimit:
        return Verdict(False, f"timing tampered: the outputs took {out:.1f} us (median) to "
                              f"arrive after the candidate reported its latency, where the "
                              f"reference's same outputs took {obase:.1f} us (limit "
                              f"{olimit:.1f} us): work went on after the timed window",
                       gap, base, limit)
    return Verdict(True, "", gap, base, limit)


@dataclass
class CpuSamples:
    """Per timed call on a CPU device: the runner group's CPU time as the kernel counted it
    (judge-measured), the latency reported (the largest over ranks) and, from the trusted
    reference runner only, the CPU time of the call itself (µs)."""

    cpu: list[float] = field(default_factory=list)
    reported: list[float] = field(default_factory=list)
    incall: list[float] = field(default_factory=list)


def cpu_check(cand: CpuSamples, ref: Optional[CpuSamples], ncpu: int) -> Verdict:
    """CPU time the candidate's processes used beyond what ``ncpu`` CPUs could do in the
    time it reported, against the path's CPU cost the reference showed."""
    if not cand.cpu or ref is None or not ref.cpu:
        return Verdict(True)
    excess = statistics.median(c - ncpu * r for c, r in zip(cand.cpu, cand.reported))
    path = statistics.median(c - i for c, i in zip(ref.cpu, ref.incall))
    limit = path + max(CPU_ABS_US, CPU_REL * max(path, 0.0))
    if excess > limit:
        return Verdict(False, f"timing tampered: the candidate's processes used {excess:.1f} us "
                              f"of CPU time per timed call (median) beyond what {ncpu} CPU(s) "
                              f"can do in the {statistics.median(cand.reported):.2f} us it "
                              f"reported, where the path around a call costs {path:.1f} us "
                              f"(limit {limit:.1f} us)", excess, path, limit)
    return Verdict(True, "", excess, path, limit)
