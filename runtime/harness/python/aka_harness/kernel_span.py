"""Kernel-span timing: CUPTI's activity records of what one call ran on the GPU.

This file owns the second way a runner can time a call on an NVIDIA GPU, the one
SOL-ExecBench's own evaluator uses for its latencies: from the start of the first
GPU activity (kernel, memcpy or memset) the call launched to the end of the last
one, read from CUPTI's activity records. Launch latency and host work before the
first launch are not in it; gaps between the call's kernels are. Events (timing.py)
measure from an event queued before the call to one queued after it, so on a
3-6 us kernel they read about 3 us more (docs/measurements.md). The judge asks for
this method on SOL-ExecBench operators, so that aka's numbers and the owner's can
be compared (issue 16); everything else keeps events.

Which activity belongs to the call: CUPTI records every runtime and driver API call
with its host start time and a correlation id, and every GPU activity with the
correlation id of the API call that launched it. A call's activities are those
whose launching API call started, on any thread, between two CUPTI timestamps taken
just before and just after the call (the host clock CUPTI stamps API records with).

No CUPTI Python package is needed: the library is loaded with ctypes (it ships with
the CUDA toolkit and with PyTorch's CUDA wheels) and the few record fields read are
at offsets fixed since CUPTI 9 (cupti_activity.h of CUDA 13.0: CUpti_ActivityAPI,
CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4; each version
only appended fields). parse_records() reads a buffer without CUPTI, so the
parsing and the span are tested on a CPU (tests/harness/python/test_kernel_span.py).

Trust: like an event time, a span is the runner's report, so a candidate can forge
it; the judge's clocks check it the same way (crosscheck.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

# CUpti_ActivityKind values (cupti_activity.h).
KIND_MEMCPY, KIND_MEMSET, KIND_KERNEL, KIND_DRIVER, KIND_RUNTIME = 1, 2, 3, 4, 5
KIND_CONCURRENT_KERNEL = 10
GPU_KINDS = (KIND_MEMCPY, KIND_MEMSET, KIND_KERNEL, KIND_CONCURRENT_KERNEL)
API_KINDS = (KIND_DRIVER, KIND_RUNTIME)
ENABLED = (KIND_RUNTIME, KIND_DRIVER, KIND_CONCURRENT_KERNEL, KIND_MEMCPY, KIND_MEMSET)

# Byte offsets of (start, end, correlationId) per record kind: API records
# (CUpti_ActivityAPI), kernels (CUpti_ActivityKernel*), memcpy and memset.
_API_FIELDS = struct.Struct("<QQ8xI")  # start @8, end @16, correlationId @32
_API_AT = 8
_KERNEL_TIMES, _KERNEL_TIMES_AT = struct.Struct("<QQ"), 16
_KERNEL_CORR_AT = 92
_COPY_TIMES_AT, _COPY_CORR_AT = 16, 44  # memcpy and memset alike
_KIND = struct.Struct("<I")  # a record's kind at 0, and the 32-bit correlation ids

CUPTI_SUCCESS = 0
CUPTI_ERROR_MAX_LIMIT_REACHED = 12
FLUSH_FORCED = 1
BUFFER_BYTES = 4 * 1024 * 1024


@dataclass
class Records:
    """What CUPTI delivered: API launches (host start, correlation id) and GPU
    activities (start, end, correlation id), timestamps in ns."""
    launches: list[tuple[int, int]] = field(default_factory=list)
    activities: list[tuple[int, int, int]] = field(default_factory=list)

    def clear(self) -> None:
        self.launches.clear()
        self.activities.clear()


def record_size(kind: int) -> Optional[int]:
    """How many bytes of a record of this kind parse_records() reads (None: skipped)."""
    if kind in API_KINDS:
        return _API_AT + _API_FIELDS.size
    if kind in (KIND_KERNEL, KIND_CONCURRENT_KERNEL):
        return _KERNEL_CORR_AT + 4
    if kind in (KIND_MEMCPY, KIND_MEMSET):
        return _COPY_CORR_AT + 4
    return None


def parse_record(raw: Any, into: Records, at: int = 0) -> None:
    """Add one activity record, the one starting at byte `at` of `raw` (any buffer), to
    what was delivered; a kind not read, or a record that `raw` cuts short, is skipped."""
    kind = _KIND.unpack_from(raw, at)[0]
    size = record_size(kind)
    if size is None or at + size > len(raw):
        return
    if kind in API_KINDS:
        start, _end, corr = _API_FIELDS.unpack_from(raw, at + _API_AT)
        into.launches.append((start, corr))
    elif kind in (KIND_KERNEL, KIND_CONCURRENT_KERNEL):
        start, end = _KERNEL_TIMES.unpack_from(raw, at + _KERNEL_TIMES_AT)
        into.activities.append((start, end, _KIND.unpack_from(raw, at + _KERNEL_CORR_AT)[0]))
    elif kind in (KIND_MEMCPY, KIND_MEMSET):
        start, end = _KERNEL_TIMES.unpack_from(raw, at + _COPY_TIMES_AT)
        into.activities.append((start, end, _KIND.unpack_from(raw, at + _COPY_CORR_AT)[0]))


def span_ns(records: Records, t0: int, t1: int) -> Optional[int]:
    """First start to last end of the GPU activities launched by API calls that began in
    [t0, t1]; None when the call launched nothing (or nothing has been delivered)."""
    ids = {corr for start, corr in records.launches if t0 <= start <= t1}
    mine = [(s, e) for s, e, corr in records.activities if corr in ids]
    if not mine:
        return None
    return max(e for _, e in mine) - min(s for s, _ in mine)


def library_candidates() -> list[str]:
    """Where libcupti is looked for, in order: AKA_CUPTI_LIBRARY, PyTorch's CUDA wheels
    (nvidia/*/lib), the toolkit (CUDA_HOME, /usr/local/cuda) and the loader's path."""
    found: list[str] = []
    env = os.environ.get("AKA_CUPTI_LIBRARY")
    if env:
        found.append(env)
    for root in sys.path:
        found += sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib", "libcupti.so*")))
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home:
            found += sorted(glob.glob(os.path.join(home, "extras", "CUPTI", "lib64",
                                                   "libcupti.so*")))
            found += sorted(glob.glob(os.path.join(home, "lib*", "libcupti.so*")))
    name = ctypes.util.find_library("cupti")
    if name:
        found.append(name)
    return list(dict.fromkeys(found))


_REQUEST = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p),
                            ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t))
_COMPLETE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p,
                             ctypes.c_size_t, ctypes.c_size_t)


class KernelSpan:
    """CUPTI activity tracing in this process, one call at a time (see the header)."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.lib, self.path = lib, path
        self.records = Records()
        # The last timed call's own account of where its time went (time()), untrusted:
        # the judge only shows it beside its own clocks, for diagnosis (judge.py).
        self.last_path: dict[str, float] = {}
        self._buffers: dict[int, Any] = {}  # address -> the ctypes array CUPTI fills
        self._free: list[Any] = []
        # Kept as attributes: CUPTI holds these pointers for the life of the process.
        self._on_request = _REQUEST(self._request)
        self._on_complete = _COMPLETE(self._complete)
        lib.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                   ctypes.POINTER(ctypes.c_void_p)]
        lib.cuptiGetTimestamp.argtypes = [ctypes.POINTER(ctypes.c_uint64)]

    @classmethod
    def open(cls) -> tuple[Optional["KernelSpan"], str]:
        """(a started tracer, its library) or (None, why not)."""
        tried = []
        for path in library_candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as exc:
                tried.append(f"{path}: {exc}")
                continue
            span = cls(lib, path)
            why = span._start()
            if why is None:
                return span, path
            return None, f"{path}: {why}"
        return None, ("libcupti not found" + (f" ({'; '.join(tried)})" if tried else
                                              " (set AKA_CUPTI_LIBRARY)"))

    def _start(self) -> Optional[str]:
        rc = self.lib.cuptiActivityRegisterCallbacks(self._on_request, self._on_complete)
        if rc != CUPTI_SUCCESS:
            return f"cuptiActivityRegisterCallbacks returned {rc}"
        for kind in ENABLED:
            rc = self.lib.cuptiActivityEnable(ctypes.c_int(kind))
            if rc != CUPTI_SUCCESS:
                return f"cuptiActivityEnable({kind}) returned {rc}"
        return None

    def now(self) -> int:
        stamp = ctypes.c_uint64()
        self.lib.cuptiGetTimestamp(ctypes.byref(stamp))
        return stamp.value

    def time(self, fn: Callable[[], Any], sync: Callable[[], None]) -> tuple[Any, Optional[float]]:
        """Run fn, wait for the device, and return (what it returned, span in us or None
        when CUPTI recorded no GPU activity for it)."""
        self.records.clear()
        c0 = time.perf_counter_ns()
        t0 = self.now()
        ret = fn()
        t1 = self.now()
        c1 = time.perf_counter_ns()
        sync()
        c2 = time.perf_counter_ns()
        self.lib.cuptiActivityFlushAll(ctypes.c_uint32(FLUSH_FORCED))
        ns = span_ns(self.records, t0, t1)
        self.last_path = {"launch_us": (c1 - c0) / 1000.0, "sync_us": (c2 - c1) / 1000.0,
                     "cupti_us": (time.perf_counter_ns() - c2) / 1000.0,
                     "records": float(len(self.records.launches) + len(self.records.activities))}
        return ret, (ns / 1000.0 if ns is not None else None)

    def drain(self) -> None:
        """Deliver and drop every record buffered so far (the caller has synchronized).

        Called when a timed run's inputs are staged: the window's own flush then parses
        only the records of the flush, the call and its synchronize, not those of the
        staging copies and the previous run's output transfer, whose number differs with
        how many outputs the callable writes and whether the run was sampled."""
        self.lib.cuptiActivityFlushAll(ctypes.c_uint32(FLUSH_FORCED))
        self.records.clear()

    # ---- CUPTI's buffer callbacks (may run on CUPTI's own thread) --------------------

    def _request(self, buf: Any, size: Any, max_records: Any) -> None:
        block = self._free.pop() if self._free else (ctypes.c_uint64 * (BUFFER_BYTES // 8))()
        addr = ctypes.addressof(block)
        self._buffers[addr] = block
        buf[0], size[0], max_records[0] = addr, BUFFER_BYTES, 0

    def _complete(self, _ctx: Any, _stream: int, buf: int, _size: int, valid: int) -> None:
        # The records are read in place, through one view of the valid bytes, each at its
        # offset: this runs inside the judge's window (crosscheck.py), and a copy and two
        # ctypes objects per record cost microseconds each (docs/evaluator.md).
        record = ctypes.c_void_p()
        view = memoryview((ctypes.c_char * valid).from_address(buf)) if valid else b""
        get_next, start, length = self.lib.cuptiActivityGetNextRecord, ctypes.c_void_p(buf), \
            ctypes.c_size_t(valid)
        while get_next(start, length, ctypes.byref(record)) == CUPTI_SUCCESS:
            at = (record.value or 0) - buf
            if 0 <= at <= valid - _KIND.size:
                parse_record(view, self.records, at)
        block = self._buffers.pop(buf, None)
        if block is not None:
            self._free.append(block)
