"""Unit tests of the judge's timing cross-check (crosscheck.py) on made-up samples.

Run by tests/integration/harness_crosscheck.sh (PYTHONPATH = runtime/harness/python)."""
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

    def test_out_check_skipped_without_fetched_runs(self):
        ref = samples(5.0, 250.0, 400.0, 40.0, fetched_every=1000)
        cand = samples(5.0, 250.0, 400.0, 40.0, fetched_every=1000)
        self.assertTrue(xc.check(cand, ref, "cuda").ok)

    def test_every_run_fetched_by_default(self):
        s = xc.Samples()
        s.add(1.0, 2.0, 3.0, 4.0)
        self.assertEqual(s.fetched_out, [4.0])


if __name__ == "__main__":
    unittest.main()
