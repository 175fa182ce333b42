"""Latency measurement: CUDA events, CUDA-graph replay, or the CPU monotonic clock.

This file owns how one callable is timed. The rules, and why:

* **Median, not mean.** One preempted or throttled launch moves a mean a lot and
  a median not at all; the spread is reported separately as the coefficient of
  variation (stdev / mean of the samples).
* **CUDA events on the current stream, one pair per launch.** The start event is
  recorded after the L2 flush has been queued, so the flush is outside the
  window; the end event right after the call returns. No synchronize inside the
  loop (it would add host latency to every sample); one synchronize before the
  loop (so warm-up work cannot leak into the first sample) and one after it
  (before any ``elapsed_time`` is read).
* **L2 flush before every launch.** A buffer of max(256 MiB, 2 x L2) bytes is
  zeroed on the current stream, so every launch reads its inputs from HBM as in
  a real model step, instead of from a warm L2 that a tiny benchmark would
  otherwise keep hot.
* **Stream check.** Events on the current stream do not see work a candidate
  sends to another stream. A few extra launches are timed with a device-wide
  synchronize inside the window; when that is much slower than the event time,
  the work ran elsewhere, the slower figure is kept and a diagnostic says why.
* **CUDA-graph mode** captures one launch and replays it; launch overhead then
  drops out, which is what a serving stack that uses graphs sees.
* **CPU**: ``time.perf_counter_ns`` around each call; there is no portable way
  to flush caches from Python, so ``l2_flush`` is reported false.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import torch

from aka_harness.dist import Collective

FLUSH_MIN_BYTES = 256 * 1024 * 1024

# The stream check flags a run when the synchronized time exceeds the event time
# by both this factor and this many microseconds (host launch and sync latency
# alone stay well below either bound for a kernel on the current stream).
STREAM_CHECK_FACTOR = 1.5
STREAM_CHECK_SLACK_US = 50.0
STREAM_CHECK_REPS = 10
WARMUP_MIN_MS = 25.0  # like do_bench's default warm-up budget


@dataclass
class Measurement:
    """Samples of one timed callable, in microseconds."""

    samples_us: list[float]
    method: str
    notes: list[str] = field(default_factory=list)

    @property
    def median_us(self) -> Optional[float]:
        return statistics.median(self.samples_us) if self.samples_us else None

    @property
    def cv(self) -> Optional[float]:
        if len(self.samples_us) < 2:
            return None
        mean = statistics.fmean(self.samples_us)
        return statistics.stdev(self.samples_us) / mean if mean > 0 else None


class Timer:
    """Times callables on one device with one method; owns the L2 flush buffer."""

    def __init__(self, device: torch.device, warmup: int, reps: int, cuda_graph: bool,
                 coll: Optional[Collective] = None) -> None:
        self.device = device
        self.coll = coll or Collective()
        self.warmup = max(warmup, 0)
        self.reps = max(reps, 0)
        self.cuda_graph = cuda_graph and device.type == "cuda"
        self._flush: Optional[torch.Tensor] = None
        if device.type == "cuda":
            self.method = "cuda_graph" if self.cuda_graph else "cuda_event"
        else:
            self.method = "cpu_monotonic"

    @property
    def l2_flush(self) -> bool:
        return self.device.type == "cuda"

    def flush_bytes(self) -> int:
        """Bytes zeroed per flush: at least twice the device's L2."""
        props = torch.cuda.get_device_properties(self.device)
        l2 = int(getattr(props, "L2_cache_size", 0) or 0)
        return max(FLUSH_MIN_BYTES, 2 * l2)

    def _flush_l2(self) -> None:
        if self._flush is None:
            self._flush = torch.empty(self.flush_bytes(), dtype=torch.int8, device=self.device)
        self._flush.zero_()

    def measure(self, fn: Callable[[], Any]) -> Measurement:
        """Warm up, then time ``reps`` launches of ``fn``."""
        self.coll.barrier()  # ranks start timing together
        if self.device.type != "cuda":
            return self._measure_cpu(fn)
        if self.cuda_graph:
            return self._measure_graph(fn)
        return self._measure_events(fn)

    def _measure_cpu(self, fn: Callable[[], Any]) -> Measurement:
        for _ in range(self.warmup):
            fn()
        samples = []
        for _ in range(self.reps):
            t0 = time.perf_counter_ns()
            fn()
            samples.append((time.perf_counter_ns() - t0) / 1000.0)
        return Measurement(samples, "cpu_monotonic")

    def _event_loop(self, launch: Callable[[], Any], reps: int) -> list[float]:
        """Flush, record start, launch, record end; one sync after all reps."""
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
        torch.cuda.synchronize(self.device)
        for i in range(reps):
            self._flush_l2()
            starts[i].record()
            launch()
            ends[i].record()
        torch.cuda.synchronize(self.device)
        return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]

    def _synced_loop(self, launch: Callable[[], Any], reps: int) -> tuple[list[float], list[float]]:
        """Host-clock launches with device-wide synchronizes; (wall, tail) samples in µs.

        Per launch: flush, drain the device (so no stream can hide work under
        the flush), then ``wall`` = start of the call → every stream drained,
        and ``tail`` = the call's return → every stream drained. The tail is
        the GPU work the call left running; for a kernel on the current stream
        it cannot exceed the event-timed duration plus synchronize latency, so
        a longer tail means work the events did not see.
        """
        walls, tails = [], []
        for _ in range(reps):
            self._flush_l2()
            torch.cuda.synchronize(self.device)
            t0 = time.perf_counter_ns()
            launch()
            t1 = time.perf_counter_ns()
            torch.cuda.synchronize(self.device)
            t2 = time.perf_counter_ns()
            walls.append((t2 - t0) / 1000.0)
            tails.append((t2 - t1) / 1000.0)
        return walls, tails

    def _warm(self, launch: Callable[[], Any]) -> None:
        """--warmup launches, then more until WARMUP_MIN_MS of GPU time have passed.

        A GPU that was idle (between processes, while inputs were built) runs
        at low clocks; tens of milliseconds of sustained work bring it up, so
        the first timed samples are not taken at idle clocks.
        """
        torch.cuda.synchronize(self.device)
        t0 = time.perf_counter_ns()
        done = 0
        while done < self.warmup or (time.perf_counter_ns() - t0) / 1e6 < WARMUP_MIN_MS:
            for _ in range(10):
                self._flush_l2()
                launch()
            done += 10
            torch.cuda.synchronize(self.device)
            if done >= 10000:
                break

    def _stream_check(self, launch: Callable[[], Any], m: Measurement) -> Measurement:
        """Re-time a few launches with device syncs; detect work off the current stream.

        When the GPU work left after the call returns is much longer than the
        event figure, it ran where the events could not see it: every sample is
        then re-taken as host wall time of launch-to-drained (never flattering)
        and a diagnostic says why.
        """
        _, tails = self._synced_loop(launch, min(STREAM_CHECK_REPS, max(self.reps, 1)))
        event_med, tail_med = m.median_us, statistics.median(tails)
        if event_med is None:
            return m
        suspect = tail_med > STREAM_CHECK_FACTOR * event_med + STREAM_CHECK_SLACK_US
        if self.coll.any_true(suspect):  # every rank re-times, or none does
            note = (f"work outside the current stream: events measured {event_med:.2f} us "
                    f"but {tail_med:.2f} us of GPU work was still running after the call "
                    f"returned; host-clock synchronized timings are reported. Launch on "
                    f"torch.cuda.current_stream() so the timed window covers the kernel.")
            walls, _ = self._synced_loop(launch, self.reps)
            return Measurement(walls, m.method + "_synced", m.notes + [note])
        return m

    def _measure_events(self, fn: Callable[[], Any]) -> Measurement:
        self._warm(fn)
        m = Measurement(self._event_loop(fn, self.reps), "cuda_event")
        return self._stream_check(fn, m)

    def capture(self, fn: Callable[[], Any]) -> tuple["torch.cuda.CUDAGraph", Any]:
        """Capture one launch of fn in a CUDA graph (after side-stream warm-up).

        Returns the graph and what the captured call returned (its outputs are
        the graph's static output buffers).
        """
        side = torch.cuda.Stream(device=self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(max(self.warmup, 1)):
                fn()
        torch.cuda.current_stream(self.device).wait_stream(side)
        torch.cuda.synchronize(self.device)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fn()
        torch.cuda.synchronize(self.device)
        return graph, out

    def _measure_graph(self, fn: Callable[[], Any]) -> Measurement:
        graph, _ = self.capture(fn)
        return self.measure_replay(graph)

    def measure_replay(self, graph: "torch.cuda.CUDAGraph") -> Measurement:
        """Time replays of a captured graph, each after an L2 flush."""
        self.coll.barrier()
        self._warm(graph.replay)
        m = Measurement(self._event_loop(graph.replay, self.reps), "cuda_graph")
        return self._stream_check(graph.replay, m)
