"""Unit tests of the judge's timing cross-check (crosscheck.py) on made-up samples.

Run by tests/integration/harness_units.sh (PYTHONPATH = runtime/harness/python)."""
import unittest

from aka_harness import crosscheck as xc


def samples(reported, gap, out_fetched, out_ack, fetched_every=10, n=100, stage=500.0):
    """n runs reporting `reported` µs with the judge's window `gap` µs longer; the runs
    whose outputs come back (every fetched_every-th) take out_fetched µs, the others
    only acknowledge in out_ack µs."""
    s = xc.Samples()
    for i in range(n):
        fetched = i % fetched_every == 0
        s.add(reported, stage, reported + gap, out_fetched if fetched else out_ack, fetched)
    return s


class OutCheck(unittest.TestCase):
    def test_honest_candidate_passes(self):
        ref = samples(5.0, 250.0, 400.0, 40.0)
        cand = samples(4.0, 252.0, 410.0, 41.0)
        self.assertTrue(xc.check(cand, ref, "cuda").ok)

    def test_work_deferred_to_the_sampled_outputs_fails(self):
        # The runner answers "us" at once and does the work only when its outputs are
        # asked for: the fetched runs' out grows by 1 ms, the acknowledgements do not.
        # Over all runs the median would be an acknowledgement and miss it.
        ref = samples(5.0, 250.0, 400.0, 40.0)
        cand = samples(1.0, 250.0, 1400.0, 40.0)
        verdict = xc.check(cand, ref, "cuda")
        self.assertFalse(verdict.ok)
        self.assertIn("the outputs took", verdict.reason)

    def test_noisy_transfer_of_large_outputs_passes(self):
        # Measured on an H200 (docs/measurements.md): an honest Triton seed's sampled
        # outputs of silu_and_mul took 2,967 us (median) where the reference's took
        # 1,961 us, and 46.5-54.7 ms against 35.3 ms on a larger shape. Transfer noise,
        # not deferred work: the acknowledgements and staging agreed.
        for ref_out, cand_out in ((1961.2, 2967.1), (35322.0, 54678.0)):
            ref = samples(5.0, 560.0, ref_out, 400.0)
            cand = samples(5.5, 540.0, cand_out, 410.0)
            self.assertTrue(xc.check(cand, ref, "cuda").ok, (ref_out, cand_out))

    def test_work_deferred_into_the_acknowledgements_fails(self):
        # A runner that answers "us" before the work is done and finishes it before
        # acknowledging an unsampled run (so the next run's staging is clean).
        ref = samples(5.0, 560.0, 30000.0, 400.0)
        cand = samples(1.0, 560.0, 30000.0, 1400.0)
        verdict = xc.check(cand, ref, "cuda")
        self.assertFalse(verdict.ok)
        self.assertIn("acknowledging a run took", verdict.reason)

    def test_noisy_staging_passes(self):
        # H200, silu_and_mul shape 1, seeded inputs: the honest seed staged in 978.7 us
        # (median) where the reference staged in 706.6 us, on each of three timings.
        ref = samples(5.0, 1348.4, 3009.6, 400.0, stage=706.6)
        cand = samples(5.5, 1370.9, 3294.2, 420.0, stage=978.7)
        self.assertTrue(xc.check(cand, ref, "cuda").ok)

    def test_work_deferred_into_the_next_staging_fails(self):
        ref = samples(5.0, 560.0, 30000.0, 400.0, stage=1000.0)
        cand = samples(1.0, 560.0, 30000.0, 400.0, stage=1600.0)
        verdict = xc.check(cand, ref, "cuda")
        self.assertFalse(verdict.ok)
        self.assertIn("staging the inputs took", verdict.reason)

    def test_out_check_skipped_without_fetched_runs(self):
        ref = samples(5.0, 250.0, 400.0, 40.0, fetched_every=1000)
        cand = samples(5.0, 250.0, 400.0, 40.0, fetched_every=1000)
        self.assertTrue(xc.check(cand, ref, "cuda").ok)

    def test_every_run_fetched_by_default(self):
        s = xc.Samples()
        s.add(1.0, 2.0, 3.0, 4.0)
        self.assertEqual(s.fetched_out, [4.0])


class RunnerPath(unittest.TestCase):
    """The runner's own account of its path: shown, never trusted as a figure."""

    def test_medians_of_the_valid_parts_only(self):
        s = xc.Samples()
        s.paths += [xc.path_account(p) for p in (
            {"launch_us": 10.0, "cupti_us": 300.0, "records": 12.0},
            {"launch_us": 30.0, "cupti_us": -1.0, "records": "many"},
            {"launch_us": 20.0, "cupti_us": float("nan"), "extra": 5.0},
            "not a dict", None)]
        self.assertEqual(xc.path_medians(s),
                         {"launch_us": 20.0, "cupti_us": 300.0, "records": 12.0})

    def test_only_the_known_valid_parts_are_kept(self):
        self.assertEqual(xc.path_account({"launch_us": 1, "sync_us": True, "x": [0] * 9}),
                         {"launch_us": 1.0})
        self.assertEqual(xc.path_account([1, 2]), {})

    def test_no_account_is_empty(self):
        self.assertEqual(xc.path_medians(xc.Samples()), {})


if __name__ == "__main__":
    unittest.main()
