"""Unit tests of the judge's output comparison messages (compare.py).

Run by tests/integration/harness_units.sh (PYTHONPATH = runtime/harness/python)."""
import unittest

import torch

from aka_harness import compare as cmp

NAN = float("nan")


class NanMessages(unittest.TestCase):
    def test_nan_where_the_reference_has_nan_is_said(self):
        ref = torch.tensor([1.0, NAN, 3.0])
        out = torch.tensor([1.0, NAN, 3.0])
        self.assertEqual(cmp._nan_note(ref, out),
                         "1 NaN in the output, all where the reference has NaN too")

    def test_partial_and_none(self):
        ref = torch.tensor([1.0, NAN, 3.0])
        self.assertIn("1 of them where the reference has NaN too",
                      cmp._nan_note(ref, torch.tensor([NAN, NAN, 3.0])))
        self.assertIn("none where the reference has NaN",
                      cmp._nan_note(torch.tensor([1.0, 2.0]), torch.tensor([NAN, 2.0])))
        self.assertEqual(cmp._nan_note(ref, torch.tensor([1.0, 2.0, 3.0])), "")

    def test_atrex_failure_names_it(self):
        tol = cmp.Tolerance(atol=1e-3, rtol=1e-3)
        v = cmp._compare_atrex(torch.tensor([1.0, NAN]), torch.tensor([1.0, NAN]), tol)
        self.assertFalse(v.ok)  # NaN never passes, but the message says where it came from
        self.assertIn("all where the reference has NaN too", v.reason)


if __name__ == "__main__":
    unittest.main()
