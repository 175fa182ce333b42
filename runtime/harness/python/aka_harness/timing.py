"""How a runner times one call: CUDA events, CUDA-graph replay, or the CPU clock.

This file owns the measurement inside a runner process. The judge asks for one
timed call at a time (fresh inputs are staged before each, outside the
window) and keeps the statistics itself (crosscheck.py); a runner only says
how long the call took by its own clock. The rules, and why:

* **CUDA events on the current stream, one pair per call.** The L2 flush is
  queued first, then a hold (a GPU spin of HOLD_US), the start event, the call
  and the end event, then one device-wide synchronize. The hold keeps the GPU
  busy while the host launches the call, so the start event fires when the hold
  ends and the event time is the kernel's, not the host's launch latency (as
  with a pipelined loop); the synchronize makes the reply mean "done". The
  flush alone does not cover the launch: between the judge's timed runs the GPU
  idles for milliseconds, and on an H200 a 5 us kernel then measured 135 us
  after 10 ms idle without the hold and 5.0 us with it (bench/gpu_launch_probe.py,
  docs/measurements.md). Host work the call does before its first launch is
  hidden only up to the hold, and the judge bounds the runner's CPU time.
* **L2 flush before every call.** A buffer of max(256 MiB, 2 x L2) bytes is
  zeroed on the current stream, so every call reads its inputs from HBM as in a
  real model step instead of from a warm L2.
* **Stream check.** Events on the current stream do not see work a candidate
  sends to another stream. During warm-up a few calls are also timed with a
  device-wide synchronize inside the window; when that is much slower than the
  event time, the work ran elsewhere, every call is then timed by the host
  clock up to the synchronize (never flattering) and a note says why.
* **CUDA-graph mode** captures one call on the staged buffers and replays it;
  fresh inputs are copied into the captured buffers before each replay.
* **Warm-up**: --warmup calls, then on a GPU more until WARMUP_MIN_MS have
  passed, so the first timed calls are not taken at idle clocks.
* **Kernel span** (kernel_span.py), when the judge asks for it (SOL-ExecBench
  operators): CUPTI's record of the first GPU activity the call launched to the
  end of the last, SOL-ExecBench's own method. The flush is queued and the call
  launched right after it, with no hold and no events, as that evaluator does: a
  span contains neither launch latency nor event cost, so the hold has nothing
  to hide. When CUPTI cannot be started the call is timed with events (still
  without the hold, so the path is the same one the judge calibrated) and the
  judge says so; a call CUPTI saw launch nothing is timed by the host clock up to
  the synchronize.
* **CPU**: ``time.perf_counter_ns`` around the call; there is no portable way to
  flush caches from Python, so ``l2_flush`` is reported false.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Optional

import torch

from aka_harness.kernel_span import KernelSpan

FLUSH_MIN_BYTES = 256 * 1024 * 1024

# The stream check flags a call when the synchronized time exceeds the event time
# by both this factor and this many microseconds (host launch and sync latency
# alone stay well below either bound for a kernel on the current stream).
STREAM_CHECK_FACTOR = 1.5
STREAM_CHECK_SLACK_US = 50.0
STREAM_CHECK_REPS = 10
WARMUP_MIN_MS = 25.0  # like do_bench's default warm-up budget
# The GPU spin before each timed call's start event (see above). 50 us did not cover the
# launch after an idle gap on an H200; 200 us did after 10 ms of idle, but not after
# 50 ms (a large shape's fresh inputs take that long to cross the pipe): 1,000 us did
# (bench/gpu_idle_probe.py, docs/measurements.md).
HOLD_US = 1000.0
# The warm-up's budget clock, bound before any candidate code is imported: a candidate
# that slows time.perf_counter_ns down (tests/redteam/python/patch_timers.py) made the
# 25 ms warm-up last 10,000 calls, past the test's time limit on an H200. (Its reported
# latencies still use the live clock: forging those is the judge's cross-check's to see.)
_WARM_CLOCK_NS = time.monotonic_ns


def method_name(device: torch.device, cuda_graph: bool, span: bool = False) -> str:
    if device.type == "cuda":
        if span:
            return "cupti_kernel_span_graph" if cuda_graph else "cupti_kernel_span"
        return "cuda_graph" if cuda_graph else "cuda_event"
    return "cpu_monotonic"


class RunTimer:
    """Times single calls on one device; owns the L2 flush buffer."""

    def __init__(self, device: torch.device, warmup: int) -> None:
        self.device = device
        self.warmup = max(warmup, 0)
        self.synced = False  # set by the stream check
        self._flush: Optional[torch.Tensor] = None
        self._hold_cycles: Optional[int] = None
        self.span_asked = False  # the judge asked for kernel spans: no hold either way
        self.span: Optional[KernelSpan] = None
        # The last GPU call's host-side account (launch, synchronize, CUPTI's flush), in
        # us: what the runner says of its own path, shown to the user beside the judge's
        # clocks when a cross-check needs explaining; no verdict reads it.
        self.last_path: dict[str, float] = {}

    def start_span(self) -> Optional[str]:
        """Time calls by kernel span from now on; why not, when CUPTI cannot start."""
        self.span_asked = True
        if not self.on_gpu:
            return None
        self.span, where = KernelSpan.open()
        return None if self.span is not None else where

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    def _sync(self) -> None:
        if self.on_gpu:
            torch.cuda.synchronize(self.device)

    def flush_bytes(self) -> int:
        """Bytes zeroed per flush: at least twice the device's L2."""
        props = torch.cuda.get_device_properties(self.device)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        return max(FLUSH_MIN_BYTES, 2 * l2)

    def _flush_l2(self) -> None:
        if self._flush is None:
            self._flush = torch.empty(self.flush_bytes(), dtype=torch.int8, device=self.device)
        self._flush.zero_()

    def _hold(self) -> None:
        """Keep the GPU busy for about HOLD_US while the host launches the call."""
        if self._hold_cycles is None:
            # clock_rate is the maximum SM clock in kHz: at a lower clock the hold lasts longer.
            khz = getattr(torch.cuda.get_device_properties(self.device), "clock_rate", 0) or 2_000_000
            self._hold_cycles = int(HOLD_US * khz / 1000.0)
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is not None:
            sleep(self._hold_cycles)

    def once(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """One timed call: (what it returned, microseconds)."""
        self.last_path = {}
        if not self.on_gpu:
            t0 = time.perf_counter_ns()
            ret = fn()
            return ret, (time.perf_counter_ns() - t0) / 1000.0
        if self.synced:
            self._flush_l2()
            self._sync()
            t0 = time.perf_counter_ns()
            ret = fn()
            self._sync()
            return ret, (time.perf_counter_ns() - t0) / 1000.0
        if self.span is not None:
            return self._once_span(fn)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        self._flush_l2()
        if not self.span_asked:
            self._hold()
        start.record()
        c0 = time.perf_counter_ns()
        ret = fn()
        c1 = time.perf_counter_ns()
        end.record()
        self._sync()
        self.last_path = {"launch_us": (c1 - c0) / 1000.0,
                          "sync_us": (time.perf_counter_ns() - c1) / 1000.0}
        return ret, start.elapsed_time(end) * 1000.0

    def drain(self) -> None:
        """Before a timed call, once its staged inputs are synchronized: CUPTI's buffered
        records delivered and dropped (kernel_span.py, drain), so the call's window
        parses only its own."""
        if self.span is not None:
            self.span.drain()

    def _once_span(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        assert self.span is not None
        self._flush_l2()
        t0 = time.perf_counter_ns()
        ret, us = self.span.time(fn, self._sync)
        self.last_path = self.span.last_path
        if us is None:  # no GPU activity recorded: the host clock, flush included
            us = (time.perf_counter_ns() - t0) / 1000.0
        return ret, us

    def warm(self, fn: Callable[[], Any]) -> None:
        """--warmup calls; on a GPU, more until WARMUP_MIN_MS of work have passed."""
        if not self.on_gpu:
            for _ in range(self.warmup):
                fn()
            return
        self._sync()
        t0 = _WARM_CLOCK_NS()
        done = 0
        while done < self.warmup or (_WARM_CLOCK_NS() - t0) / 1e6 < WARMUP_MIN_MS:
            for _ in range(10):
                self._flush_l2()
                fn()
            done += 10
            self._sync()
            if done >= 10000:
                break

    def stream_check(self, fn: Callable[[], Any]) -> Optional[str]:
        """Compare event time with the GPU work still running after the call returned.

        When the tail is much longer than the event figure, the work ran where
        the events cannot see it; every call is then timed by the host clock up
        to a device-wide synchronize, and the returned note says why.
        """
        if not self.on_gpu:
            return None
        events, tails = [], []
        for _ in range(STREAM_CHECK_REPS):
            events.append(self.once(fn)[1])
            self._flush_l2()
            self._sync()
            fn()
            t1 = time.perf_counter_ns()
            self._sync()
            tails.append((time.perf_counter_ns() - t1) / 1000.0)
        event_med, tail_med = statistics.median(events), statistics.median(tails)
        if tail_med <= STREAM_CHECK_FACTOR * event_med + STREAM_CHECK_SLACK_US:
            return None
        self.synced = True
        return (f"work outside the current stream: events measured {event_med:.2f} us but "
                f"{tail_med:.2f} us of GPU work was still running after the call returned; "
                f"host-clock synchronized timings are reported. Launch on "
                f"torch.cuda.current_stream() so the timed window covers the kernel.")

    def capture(self, fn: Callable[[], Any]) -> tuple["torch.cuda.CUDAGraph", Any]:
        """Capture one call in a CUDA graph (after side-stream warm-up).

        Returns the graph and what the captured call returned (its outputs are
        the graph's static output buffers).
        """
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(max(self.warmup, 1)):
                fn()
        torch.cuda.current_stream(self.device).wait_stream(side)
        self._sync()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn()
        self._sync()
        return graph, out
