"""Unit tests of kernel-span timing (kernel_span.py, timing.py) without a GPU.

The record parser and the span are tested on hand-built records; the ctypes plumbing
(callbacks, buffers, record walking, fallbacks) against fakes/fake_cupti.c, compiled here;
the record offsets against the CUDA toolkit's cupti_activity.h when one is installed.
Run by tests/integration/harness_units.sh (PYTHONPATH = runtime/harness/python)."""
import glob
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

from aka_harness import kernel_span as ks

HERE = os.path.dirname(os.path.abspath(__file__))


def api_record(start, corr, kind=ks.KIND_RUNTIME):
    raw = bytearray(40)
    struct.pack_into("<I", raw, 0, kind)
    struct.pack_into("<QQ", raw, 8, start, start + 10)
    struct.pack_into("<I", raw, 32, corr)
    return bytes(raw)


def gpu_record(kind, start, end, corr):
    raw = bytearray(96)
    struct.pack_into("<I", raw, 0, kind)
    struct.pack_into("<QQ", raw, 16, start, end)
    struct.pack_into("<I", raw, 92 if kind in (ks.KIND_KERNEL, ks.KIND_CONCURRENT_KERNEL)
                     else 44, corr)
    return bytes(raw)


class Span(unittest.TestCase):
    def records(self, *raws):
        got = ks.Records()
        for raw in raws:
            ks.parse_record(raw, got)
        return got

    def test_first_start_to_last_end_of_the_calls_launches(self):
        got = self.records(api_record(150, 7), api_record(160, 8, ks.KIND_DRIVER),
                           gpu_record(ks.KIND_MEMSET, 1000, 1100, 7),
                           gpu_record(ks.KIND_CONCURRENT_KERNEL, 1200, 1500, 8),
                           gpu_record(ks.KIND_MEMCPY, 1600, 1900, 8))
        self.assertEqual(ks.span_ns(got, 100, 200), 900)

    def test_launches_outside_the_window_are_not_the_calls(self):
        # The L2 flush is launched before the window and runs first; a launch after it
        # (the harness's own) is not counted either.
        got = self.records(api_record(50, 1), gpu_record(ks.KIND_CONCURRENT_KERNEL, 0, 900, 1),
                           api_record(150, 2), gpu_record(ks.KIND_CONCURRENT_KERNEL, 1000, 1040, 2),
                           api_record(250, 3), gpu_record(ks.KIND_KERNEL, 1100, 5000, 3))
        self.assertEqual(ks.span_ns(got, 100, 200), 40)

    def test_nothing_launched_is_none(self):
        got = self.records(api_record(150, 7))
        self.assertIsNone(ks.span_ns(got, 100, 200))
        self.assertIsNone(ks.span_ns(ks.Records(), 100, 200))

    def test_a_record_cut_short_is_skipped(self):
        got = self.records(api_record(150, 7)[:20], gpu_record(ks.KIND_KERNEL, 1, 2, 7)[:90])
        self.assertEqual((got.launches, got.activities), ([], []))

    def test_other_kinds_are_skipped(self):
        self.assertIsNone(ks.record_size(11))
        got = self.records(struct.pack("<I", 11) + bytes(60))
        self.assertEqual((got.launches, got.activities), ([], []))


def toolkit_header():
    for inc in sorted(glob.glob("/usr/local/cuda*/include")) + ["/usr/include"]:
        if os.path.isfile(os.path.join(inc, "cupti_activity.h")):
            return inc
    return None


class Offsets(unittest.TestCase):
    """The offsets kernel_span.py reads are cupti_activity.h's (skipped without it)."""

    def test_offsets_match_the_header(self):
        inc, cc = toolkit_header(), shutil.which("cc")
        if not inc or not cc:
            self.skipTest("no cupti_activity.h or no C compiler")
        src = r"""
#include <stddef.h>
#include <stdio.h>
#include <cupti_activity.h>
#define O(t, f) printf("%zu ", offsetof(t, f))
int main(void) {
  O(CUpti_ActivityAPI, start); O(CUpti_ActivityAPI, correlationId);
  O(CUpti_ActivityKernel10, start); O(CUpti_ActivityKernel10, correlationId);
  O(CUpti_ActivityMemcpy6, start); O(CUpti_ActivityMemcpy6, correlationId);
  O(CUpti_ActivityMemset4, start); O(CUpti_ActivityMemset4, correlationId);
  printf("%d %d %d %d %d %d\n", CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
         CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_RUNTIME,
         CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  return 0;
}
"""
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "o.c"), "w") as f:
                f.write(src)
            subprocess.run([cc, "-I", inc, "o.c", "-o", "o"], cwd=tmp, check=True)
            got = subprocess.run([os.path.join(tmp, "o")], capture_output=True, text=True,
                                 check=True).stdout.split()
        self.assertEqual([int(x) for x in got],
                         [ks._API_AT, 32, ks._KERNEL_TIMES_AT, ks._KERNEL_CORR_AT,
                          ks._COPY_TIMES_AT, ks._COPY_CORR_AT, ks._COPY_TIMES_AT,
                          ks._COPY_CORR_AT, ks.KIND_MEMCPY, ks.KIND_MEMSET, ks.KIND_KERNEL,
                          ks.KIND_DRIVER, ks.KIND_RUNTIME, ks.KIND_CONCURRENT_KERNEL])


class FakeLibrary(unittest.TestCase):
    """KernelSpan through ctypes against fakes/fake_cupti.c (see its header)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.lib = os.path.join(cls.tmp, "libcupti.so")
        cc = shutil.which("cc")
        if not cc:
            raise unittest.SkipTest("no C compiler")
        subprocess.run([cc, "-shared", "-fPIC", "-o", cls.lib,
                        os.path.join(HERE, "fakes", "fake_cupti.c")], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.env = dict(os.environ)
        os.environ["AKA_CUPTI_LIBRARY"] = self.lib

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.env)

    def test_a_call_is_timed_by_its_span(self):
        span, where = ks.KernelSpan.open()
        self.assertIsNotNone(span, where)
        self.assertEqual(where, self.lib)
        synced = []
        for _ in range(3):  # buffers come back and are reused
            ret, us = span.time(lambda: "out", lambda: synced.append(1))
            self.assertEqual((ret, us), ("out", 2.4))
        self.assertEqual(len(synced), 3)
        self.assertEqual(len(span._free), 1)

    def test_a_call_says_where_its_host_time_went(self):
        span, _ = ks.KernelSpan.open()
        span.time(lambda: None, lambda: None)
        self.assertEqual(sorted(span.last_path), ["cupti_us", "launch_us", "records", "sync_us"])
        self.assertEqual(span.last_path["records"], 5.0)  # two launches, three activities
        self.assertTrue(all(v >= 0 for v in span.last_path.values()))

    def test_a_drain_drops_what_was_buffered(self):
        span, _ = ks.KernelSpan.open()
        span.drain()
        self.assertEqual((span.records.launches, span.records.activities), ([], []))
        self.assertEqual(span.time(lambda: 1, lambda: None), (1, 2.4))

    def test_no_activity_is_none(self):
        os.environ["FAKE_CUPTI_EMPTY"] = "1"
        span, _ = ks.KernelSpan.open()
        self.assertIsNone(span.time(lambda: None, lambda: None)[1])

    def test_a_library_that_does_not_start_says_why(self):
        os.environ["FAKE_CUPTI_FAIL"] = "enable"
        span, why = ks.KernelSpan.open()
        self.assertIsNone(span)
        self.assertIn("cuptiActivityEnable", why)
        self.assertIn(self.lib, why)

    def test_a_missing_library_says_where_it_looked(self):
        os.environ["AKA_CUPTI_LIBRARY"] = os.path.join(self.tmp, "absent.so")
        saved = ks.library_candidates
        ks.library_candidates = lambda: [os.environ["AKA_CUPTI_LIBRARY"]]
        try:
            span, why = ks.KernelSpan.open()
        finally:
            ks.library_candidates = saved
        self.assertIsNone(span)
        self.assertIn("libcupti not found", why)
        self.assertIn("absent.so", why)


class Timer(unittest.TestCase):
    """RunTimer's span path on a CPU device: asked for, it changes nothing there."""

    def test_span_on_a_cpu_is_not_started(self):
        import torch
        from aka_harness.timing import RunTimer, method_name
        timer = RunTimer(torch.device("cpu"), 0)
        self.assertIsNone(timer.start_span())
        self.assertIsNone(timer.span)
        self.assertTrue(timer.span_asked)
        self.assertEqual(method_name(torch.device("cpu"), False, True), "cpu_monotonic")
        self.assertEqual(method_name(torch.device("cuda"), False, True), "cupti_kernel_span")
        self.assertEqual(method_name(torch.device("cuda"), True, False), "cuda_graph")


class Asked(unittest.TestCase):
    """What the judge asks each runner for (judge.py _timing_asked): the candidate always
    follows what the reference runner achieved, so both go through one path."""

    def asked(self, timing, layout, achieved=None, fallback=False):
        from types import SimpleNamespace as NS
        from aka_harness.judge import Judge
        fake = NS(args=NS(timing=timing), plan=NS(layout=layout), span_achieved=achieved,
                  span_fallback=fallback)
        return Judge._timing_asked(fake)

    def test_the_reference_is_asked_by_layout_and_flag(self):
        self.assertEqual(self.asked("auto", "sol"), "kernel_span")
        self.assertEqual(self.asked("auto", "atrex"), "events")
        self.assertEqual(self.asked("kernel-span", "atrex"), "kernel_span")
        self.assertEqual(self.asked("events", "sol"), "events")

    def test_the_candidate_follows_the_reference(self):
        self.assertEqual(self.asked("auto", "sol", True), "kernel_span")
        # The reference asked and could not start CUPTI: events, without the hold.
        self.assertEqual(self.asked("auto", "sol", False, True), "events_unheld")
        # Nothing was asked of the reference (events, or a CPU): events.
        self.assertEqual(self.asked("auto", "atrex", False), "events")
        self.assertEqual(self.asked("kernel-span", "sol", False), "events")


if __name__ == "__main__":
    unittest.main()
