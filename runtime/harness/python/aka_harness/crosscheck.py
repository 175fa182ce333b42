"""The judge's checks of the latency a runner reports, against clocks it cannot touch.

This file owns the "timing tampered" verdict. A runner times each call by its
own clock (CUDA events or perf_counter, timing.py), and a candidate runner
runs hostile code, so the figure it reports may be forged: a patched
``time.perf_counter``, ``Event.elapsed_time``, or the harness's own functions.
Two checks, both from outside the candidate's process:

* **Wall clock.** Each timed run is one request; the runner stages the inputs
  and replies "ready", times the call and replies with its latency as soon as
  the call is synchronized, then sends the outputs (and last, untimed, the
  inputs as the call left them; on a GPU only for the runs the judge secretly
  sampled, which the runner learns after its latency reply). The judge notes with ``time.perf_counter_ns``
  in its own process when each reply has fully arrived: ``stage`` (request →
  ready), ``wall`` (ready → latency) and ``out`` (latency → outputs).
  ``reported <= stage + wall`` must hold (the runner's window lies strictly
  inside the time from the request's sending to the latency's arrival;
  IMPOSSIBLE_SLACK absorbs event-timer granularity), and
  ``gap = wall - reported`` is the cost of the path around the call: the pipe
  round trip, and the L2 flush, the hold and device synchronize on a GPU. It does
  not depend on how long the call takes (on a GPU the hold covers the host's launch
  latency, timing.py), so for the same shape it is the same for every honest callable; the
  reference, timed through the very same path on the same shapes before the
  candidate started, gives it. A candidate that under-reports by H microseconds
  on the calls that set its median raises its median gap by H. Work deferred
  past the latency reply (a runner told to reply before synchronizing) has to be
  done before its outputs can be read, so it lengthens ``out``: compared
  separately over the runs whose outputs came back (loosely: their transfer is
  noisy) and over the others (tightly: a short acknowledgement), and with seeded
  inputs GPU work still queued delays the next run's staging; work done early,
  on the staged inputs before "ready", lengthens ``stage``; the reference's
  same-sized data calibrate both. The shape fails when any median exceeds the
  reference's by more than max(abs, rel x the reference's median) (GAP_LIMITS,
  OUT_LIMITS, STAGE_LIMITS, per device type). Keeping the outputs out of
  ``wall`` matters on a GPU, where copying large outputs back takes
  milliseconds: inside one window their jitter would hide a whole kernel.
* **CPU time (CPU device).** On a loaded CPU the wall gap moves by milliseconds
  with scheduling, so it can only be a coarse bound there. The kernel's own
  accounting cannot be moved that way: the judge reads the CPU time of the
  whole runner group (every process and thread, procs.py) from before it sends
  a timed run's request until its last reply, so staging, the call, and any
  work before or after it are all counted.
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

# (absolute µs, relative to the reference's median) for the gap between "ready" and
# the latency, for the time the outputs take after it, and for staging the inputs.
# A CPU device uses cpu_check instead.
GAP_LIMITS = {"cuda": (50.0, 0.25)}
# The outputs of a sampled run cross the pipe: tens of milliseconds for large ones, whose
# median over a shape's few sampled runs moved by up to 55% between two honest runners on
# an H200 (docs/measurements.md). Only gross deferral can be named there; deferred GPU
# work small enough to hide in that noise shows in the two tight checks below instead.
OUT_LIMITS: dict[str, Optional[tuple[float, float]]] = {"cuda": (500.0, 1.0)}
# The acknowledgement of a run whose outputs stay in the runner (all but the sampled
# ones) and the staging of a run's inputs: Python paths of 0.4-1.5 ms whose medians moved
# by up to 38% between an honest candidate and its reference on an H200 (silu_and_mul:
# staging 978.7 us against 706.6 us, every one of three timings). Work deferred into
# them shows at the scale of the pipe's round trip; below 500 us it is not named (the
# resolution docs/evaluator.md states).
ACK_LIMITS: dict[str, Optional[tuple[float, float]]] = {"cuda": (500.0, 0.5)}
STAGE_LIMITS: dict[str, Optional[tuple[float, float]]] = {"cuda": (500.0, 0.5)}

# CPU device: the tampering checks' limits (cpu_check), over the reference's median:
# the widest of CPU_SPREAD_K x its (p90 - median), CPU_FLOOR_US, CPU_REL x its median and
# CPU_WINDOW_REL x the candidate's median window. Nothing the verdict uses depends on them
# (cpu_latencies). Measured in docs/evaluator.md: an honest 2-rank Gloo operator under a
# load of 5 used 66% more CPU time outside the window than its reference had.
CPU_SPREAD_K = 4.0
CPU_FLOOR_US = 1000.0
CPU_REL = 1.0
CPU_WINDOW_REL = 0.5


@dataclass
class Samples:
    """Per timed call: what the runner reported and what the judge's clock saw (µs)."""

    reported: list[float] = field(default_factory=list)
    stage: list[float] = field(default_factory=list)  # request sent → "ready" received
    wall: list[float] = field(default_factory=list)  # "ready" → latency received
    out: list[float] = field(default_factory=list)  # latency → outputs received
    fetched: list[bool] = field(default_factory=list)  # outputs and inputs came back
    # The latency of each run the verdict uses: the runner's events on a device; on a
    # CPU the judge's own clocks (cpu_latencies).
    latency: list[float] = field(default_factory=list)
    # What the runner says of its own path around each call (timing.py,
    # RunTimer.last_path), as path_account kept it: untrusted, shown beside the judge's
    # clocks to explain a gap, never checked.
    paths: list[dict[str, float]] = field(default_factory=list)

    def add(self, reported: float, stage: float, wall: float, out: float,
            fetched: bool = True) -> None:
        self.reported.append(reported)
        self.stage.append(stage)
        self.wall.append(wall)
        self.out.append(out)
        self.fetched.append(fetched)

    @property
    def fetched_out(self) -> list[float]:
        """``out`` of the runs whose outputs came back (the others only acknowledge)."""
        return [o for o, f in zip(self.out, self.fetched) if f]

    @property
    def acked_out(self) -> list[float]:
        """``out`` of the runs whose outputs stayed in the runner (an acknowledgement)."""
        return [o for o, f in zip(self.out, self.fetched) if not f]

    @property
    def gaps(self) -> list[float]:
        return [w - r for r, w in zip(self.reported, self.wall)]

    @property
    def median_reported(self) -> Optional[float]:
        return statistics.median(self.reported) if self.reported else None

    @property
    def median_us(self) -> Optional[float]:
        return statistics.median(self.latency) if self.latency else None

    @property
    def mean_us(self) -> Optional[float]:
        return statistics.fmean(self.latency) if self.latency else None

    @property
    def cv(self) -> Optional[float]:
        if len(self.latency) < 2:
            return None
        mean = statistics.fmean(self.latency)
        return statistics.stdev(self.latency) / mean if mean > 0 else None


PATH_KEYS = ("launch_us", "sync_us", "cupti_us", "records")


def path_account(reported: Any) -> dict[str, float]:
    """The parts of a runner's account of its path the judge keeps: the PATH_KEYS whose
    figure is valid. Taken when the reply arrives, so nothing else a runner sends with
    its latency is held for the rest of the evaluation."""
    if not isinstance(reported, dict):
        return {}
    return {k: float(reported[k]) for k in PATH_KEYS if valid_report(reported.get(k))}


def path_medians(samples: Samples) -> dict[str, float]:
    """The median of each part of the runners' accounts, over the runs that gave it."""
    out = {}
    for key in PATH_KEYS:
        values = [p[key] for p in samples.paths if key in p]
        if values:
            out[key] = round(statistics.median(values), 1)
    return out


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


def impossible(cand: Samples) -> Optional[Verdict]:
    """A run whose reported time does not fit in the judge's clock around it."""
    for i, (r, w) in enumerate(zip(cand.reported, cand.wall)):
        # The runner starts its clock after the judge's "go" and stops it before it
        # sends the latency: its window lies inside the judge's.
        if r > w * (1 + IMPOSSIBLE_SLACK_REL) + IMPOSSIBLE_SLACK_US:
            return Verdict(False, f"timing tampered: timed run {i} reported {r:.2f} us but the "
                                  f"judge's clock measured only {w:.2f} us from its go to the "
                                  f"latency's arrival")
    return None


def check(cand: Samples, ref: Optional[Samples], device_type: str) -> Verdict:
    """The cross-check of one shape on one rank (a device; a CPU uses cpu_check)."""
    bad = impossible(cand)
    if bad:
        return bad
    if not cand.reported:
        return Verdict(True)
    gap = statistics.median(cand.gaps)
    if ref is None or not ref.reported:
        return Verdict(True, "", gap)
    base, limit = _limit(ref.gaps, GAP_LIMITS.get(device_type, GAP_LIMITS["cuda"]))
    if gap > limit:
        return Verdict(False, f"timing tampered: the judge's clock saw {gap:.1f} us per timed "
                              f"call (median) beyond the {cand.median_reported:.2f} us the candidate "
                              f"reported, where the reference through the same path shows "
                              f"{base:.1f} us (limit {limit:.1f} us): the reported latency "
                              f"leaves out time the call took", gap, base, limit)
    for what, mine, theirs, limits in (
            ("the outputs took", cand.fetched_out, ref.fetched_out, OUT_LIMITS),
            ("acknowledging a run took", cand.acked_out, ref.acked_out, ACK_LIMITS),
            ("staging the inputs took", cand.stage, ref.stage, STAGE_LIMITS)):
        chosen = limits.get(device_type, limits["cuda"])
        if chosen is None or not mine or not theirs:
            continue
        value = statistics.median(mine)
        obase, olimit = _limit(theirs, chosen)
        if value > olimit:
            return Verdict(False, f"timing tampered: {what} {value:.1f} us (median) where the "
                                  f"reference's same data took {obase:.1f} us (limit "
                                  f"{olimit:.1f} us): work was done outside the timed window",
                           gap, base, limit)
    return Verdict(True, "", gap, base, limit)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _wide_limit(ref: list[float], cand_window: float) -> tuple[float, float]:
    """(the reference's median, the candidate's limit) for a CPU-device tampering check:
    the median plus the widest of the reference's spread, CPU_FLOOR_US, CPU_REL x the
    median (ranks that poll in a collective burn CPU time in proportion to how long the
    machine makes them wait) and half the candidate's own window (CPU_WINDOW_REL)."""
    base = statistics.median(ref)
    spread = CPU_SPREAD_K * (_quantile(ref, 0.9) - base)
    return base, base + max(spread, CPU_FLOOR_US, CPU_REL * max(base, 0.0),
                            CPU_WINDOW_REL * cand_window)


@dataclass
class Baseline:
    """What the trusted reference runner showed on a shape (CPU device), as medians over
    its timed runs: the path inside the judge's window, in wall time (``gap``: window -
    its own reported time) and in CPU time (``cpu_path``: the group's CPU time inside
    the window - its reported time), and the group's CPU time outside the window per run
    (``outside``: staging, encoding, waking)."""

    gap: float = 0.0
    cpu_path: float = 0.0
    outside: float = 0.0
    missed: list[float] = field(default_factory=list)  # per run, see missed()
    outsides: list[float] = field(default_factory=list)


def missed(s: Samples, inside: list[float]) -> list[float]:
    """Per run: how much of the call the runner's own figure leaves out, by the judge's
    smaller measure of it (window or CPU time inside it, as in cpu_latencies); for an
    honest runner only the path around the call, whatever the load. Never below 0: a
    call that sleeps or waits uses less CPU time than its runner's wall figure, which
    misses nothing (a reference that slept 300 ms per call set a baseline of -300 ms,
    and every honest candidate failed against it)."""
    return [max(0.0, min(w, i) - r) for r, w, i in zip(s.reported, s.wall, inside)]


def baseline(ref: Optional[Samples], inside: list[float],
             outside: list[float]) -> Optional[Baseline]:
    if ref is None or not ref.reported or not outside:
        return None
    return Baseline(statistics.median(ref.gaps),
                    statistics.median(i - r for i, r in zip(inside, ref.reported)),
                    statistics.median(outside), missed(ref, inside), list(outside))


def cpu_latencies(s: Samples, inside: list[float], outside: list[float],
                  base: Optional[Baseline]) -> list[float]:
    """The latency of each timed run on a CPU device, bounded below by the judge's clocks.

    Two measures of the call, each less the path the reference showed through it: the
    judge's window (its "go" to the latency's arrival) and the group's CPU time inside
    that window (kernel accounting). The smaller one is the judge's figure: a loaded
    machine's preemptions and wake-ups add to the window but not to CPU time, and a
    call on several threads adds CPU time but not window; neither can be lowered by the
    runner without doing less work inside the window. The run's latency is the larger
    of that figure and the runner's own (which can only make a runner slower, and keeps
    the runner clock's resolution for calls shorter than the path's noise). To that the
    charge is added: how much the median CPU time outside the window exceeds the
    reference's. Work moved before "ready", after the latency or between runs raises
    that median by what it moved (it has to happen on most runs to lower a median), so
    it is charged whatever any threshold says and buys nothing. Without a reference
    timing (it failed) no path is subtracted: every run pays its whole path."""
    gap = base.gap if base else 0.0
    cpu_path = base.cpu_path if base else 0.0
    charge = max(0.0, statistics.median(outside) - (base.outside if base else 0.0)) \
        if outside else 0.0
    return [max(r, min(w - gap, i - cpu_path)) + charge
            for r, w, i in zip(s.reported, s.wall, inside)]


def cpu_check(cand: Samples, cand_inside: list[float], cand_outside: list[float],
              base: Optional[Baseline]) -> Verdict:
    """Name gross tampering on a CPU device (the latency is charged either way).

    Two medians against the reference's on the same shape: the gap between the judge's
    window and the runner's own figure (a runner clock that misses part of each call),
    and the CPU time outside the window (work moved out of it). Limits are wide, so an
    honest runner under load never reaches them (_wide_limit); what stays below a limit
    is still charged by cpu_latencies."""
    bad = impossible(cand)
    if bad:
        return bad
    if not cand.reported or base is None:
        return Verdict(True)
    window = statistics.median(min(w, i) for w, i in zip(cand.wall, cand_inside))
    gap = statistics.median(missed(cand, cand_inside))
    gbase, glimit = _wide_limit(base.missed, window)
    if gap > glimit:
        return Verdict(False, f"timing tampered: the judge's clocks saw {gap:.1f} us per timed "
                              f"call (median) beyond the {cand.median_reported:.2f} us the "
                              f"candidate's runner reported, where the reference through the "
                              f"same path shows {gbase:.1f} us (limit {glimit:.1f} us): the "
                              f"runner's own clock misses part of each call", gap, gbase, glimit)
    outside = statistics.median(cand_outside)
    obase, olimit = _wide_limit(base.outsides, window)
    if outside > olimit:
        return Verdict(False, f"timing tampered: the candidate's processes used {outside:.1f} us "
                              f"of CPU time per timed run (median) outside the judge's window "
                              f"around the call, where the reference's used {obase:.1f} us "
                              f"(limit {olimit:.1f} us): work was moved out of the timed "
                              f"window", gap, gbase, glimit)
    return Verdict(True, "", gap, gbase, glimit)
