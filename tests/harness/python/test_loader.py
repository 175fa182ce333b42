"""Unit tests of the candidate loader's messages (loader.py).

Run by tests/integration/harness_units.sh (PYTHONPATH = runtime/harness/python)."""
import os
import sys
import tempfile
import unittest

from aka_harness import loader


class MissingModule(unittest.TestCase):
    def test_not_installed_is_said_as_such(self):
        why = loader._why_missing("cuda_tile_not_here.sub", list(sys.path), "candidate")
        self.assertIn("'cuda_tile_not_here' is not installed in the sandbox runtime", why)

    def test_installed_but_outside_the_candidates_reach(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "elsewhere_mod.py"), "w") as f:
                f.write("X = 1\n")
            why = loader._why_missing("elsewhere_mod", [d] + list(sys.path), "candidate")
        self.assertIn("'elsewhere_mod' is installed, but a candidate may import only", why)


if __name__ == "__main__":
    unittest.main()
