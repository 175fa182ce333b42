"""Stands in for an honest candidate timed through a burst of machine load, or whose
first process landed in a slow state.

A correct RMSNorm that burns about 20 ms per call that the runner's clock does not see
(the clock is moved back by what was burnt, so every reported figure stays positive),
which makes a timing look like tampering, on these calls (AKA_TEST_BURN_WHEN):

* ``first_timing`` (the default): the calls of each shape's first timing (calls 3 to 5 of
  a shape in its process, with --cases 1 --warmup 1 --timed-runs 3), just as a loaded
  machine can stretch the path around one timing. Later timings are clean, also in the
  fresh process the judge repeats a timing in: a marker file per shape in the temporary
  directory (the test gives each run its own) says the shape's first timing is past.
* ``first_process``: every call from the third of a shape on, in the first process that
  imports this file only (a marker file says which); any later process is clean. The
  host's path around a launch-bound call differs from one process to the next: on
  2026-12-06 the rope operator's own reference, as its V0 kernel, failed the GPU gap
  check three times in a row in one process.

Either way the judge must time the shape again (judge.TIMING_ATTEMPTS), in a fresh
process for ``first_process``, pass it, and name the repeat; a judge that accuses on one
disagreeing timing, or repeats in the process that failed, fails this candidate.

With AKA_TEST_IMPORT_ONCE=1 (and ``first_process``) a later process cannot import this
file at all: the repeat's fresh process does not start, which the judge must report as a
candidate failure that names the repeated timing (its error path), not as tampering.
"""
import os
import tempfile
import time

import torch
import torch.nn as nn

_real = time.perf_counter_ns
_hidden = [0]
time.perf_counter_ns = lambda: _real() - _hidden[0]

_calls: dict[tuple[int, ...], int] = {}
FIRST_TIMING = range(3, 6)  # the per-shape call numbers of the first timed runs
# Well above the CPU cross-check's limit even when a loaded host widens the reference's
# spread: with 5 ms, shape 1's first timing passed once under the full suite's load
# (2026-12-07), so the expected second repeat never came.
BURN_NS = 20_000_000
_WHEN = os.environ.get("AKA_TEST_BURN_WHEN", "first_timing")
_burning: set[tuple[int, ...]] = set()  # shapes whose first timing this process runs


def _first(name: str) -> bool:
    """Whether this process is the first to ask (a marker file in the temporary directory)."""
    try:
        os.close(os.open(os.path.join(tempfile.gettempdir(), "aka-loaded-" + name),
                         os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


_FIRST_PROCESS = _WHEN == "first_process" and _first("first-process")
if _WHEN == "first_process" and not _FIRST_PROCESS and os.environ.get("AKA_TEST_IMPORT_ONCE"):
    raise ImportError("loaded_first_timing.py: imported once only (AKA_TEST_IMPORT_ONCE)")


def _burns(shape: tuple[int, ...], n: int) -> bool:
    """Whether call n of this shape (in this process) burns."""
    if _WHEN == "first_process":
        return _FIRST_PROCESS and n >= FIRST_TIMING[0]
    if n == FIRST_TIMING[0] and _first("first-timing-" + "x".join(map(str, shape))):
        _burning.add(shape)
    return n in FIRST_TIMING and shape in _burning


def _burn(x: torch.Tensor) -> None:
    t0 = _real()
    while _real() - t0 < BURN_NS:
        x.float().pow(2).sum()
    _hidden[0] += _real() - t0


class Model(nn.Module):
    def __init__(self, eps: float = 1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        n = _calls[tuple(x.shape)] = _calls.get(tuple(x.shape), 0) + 1
        if _burns(tuple(x.shape), n):
            _burn(x)
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps) * weight.float()
        return y.to(x.dtype)
