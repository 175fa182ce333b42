"""Unit tests of the latency statistic per layout (judge.py) and its place in the result.

Atrex-Bench reports the mean of its GPU timings, SOL-ExecBench the median; the judge
scores with the owner's statistic and records both. Run by harness_units.sh."""
import types
import unittest

from aka_harness import crosscheck as xc
from aka_harness import judge
from aka_harness.result import Result, ShapeRecord


def runs(*latencies):
    s = xc.Samples()
    s.latency = list(latencies)
    return s


def owner(layout, device):
    return judge.Judge._statistic(types.SimpleNamespace(plan=types.SimpleNamespace(
        layout=layout), device=device))


class Statistic(unittest.TestCase):
    def test_owner_statistic_per_layout_and_device(self):
        self.assertEqual(owner("atrex", "cuda"), "mean")
        self.assertEqual(owner("sol", "cuda"), "median")
        # On a CPU the mean would carry a shared host's neighbours: median for both.
        self.assertEqual(owner("atrex", "cpu"), "median")

    def test_slowest_rank_by_statistic(self):
        ranks = [runs(1.0, 2.0, 12.0), runs(3.0, 3.0, 3.0)]
        self.assertEqual(judge._slowest(ranks, "median")[0], 3.0)  # rank 1's median
        self.assertEqual(judge._slowest(ranks, "mean")[0], 5.0)  # rank 0's mean
        self.assertIsNone(judge._slowest([runs(1.0), runs()], "mean")[0])

    def test_result_names_the_statistic_and_keeps_both(self):
        r = Result("aka.python.atrex", "e", None, [0], "cuda_event", 1, 3, True,
                   latency_statistic="mean")
        r.shapes.append(ShapeRecord("s0", latency_us=5.0, median_us=2.0, mean_us=5.0))
        out = r.to_json()
        self.assertEqual(out["latency_statistic"], "mean")
        self.assertEqual(out["latency_us_by_shape"], {"s0": 5.0})
        self.assertEqual(out["latency_median_us_by_shape"], {"s0": 2.0})
        self.assertEqual(out["latency_mean_us_by_shape"], {"s0": 5.0})

    def test_masked_result_uses_opaque_ids(self):
        r = Result("aka.python.atrex", "e", None, [0], "cuda_event", 1, 3, True,
                   generalized=True, latency_statistic="mean")
        r.shapes.append(ShapeRecord("secret_4096", latency_us=5.0, median_us=2.0, mean_us=5.0))
        self.assertNotIn("secret_4096", str(r.to_json()))


if __name__ == "__main__":
    unittest.main()
