"""Unit tests of the candidate loader's messages (loader.py).

Run by tests/integration/harness_units.sh (PYTHONPATH = runtime/harness/python)."""
import os
import sys
import sysconfig
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


class IsolatedPath(unittest.TestCase):
    """What a candidate's import may see: its own directory and installed libraries."""

    def isolated(self, entries):
        sysconfig.get_paths()  # its config module is imported now, with the real sys.path
        saved = list(sys.path)
        sys.path[:] = entries
        try:
            return loader._isolated_path("/job/candidate")
        finally:
            sys.path[:] = saved

    def test_a_pth_added_dir_inside_site_packages_is_kept(self):
        # nvidia-cutlass-dsl's .pth file adds this; without it `import cutlass` failed
        # in every CuteDSL candidate (found with the CuteDSL seed, session 12).
        dsl = "/venv/lib/python3.12/site-packages/nvidia_cutlass_dsl/dsl_packages"
        got = self.isolated(["/job/harness", "", dsl, "/venv/lib/python3.12/site-packages"])
        self.assertEqual(got, ["/job/candidate", dsl, "/venv/lib/python3.12/site-packages"])

    def test_harness_operator_and_cwd_are_dropped(self):
        got = self.isolated(["", ".", "/job/harness", "/job/op", "/usr/lib/python3/dist-packages",
                             "/usr/lib/python3.12/lib-dynload"])
        self.assertEqual(got, ["/job/candidate", "/usr/lib/python3/dist-packages",
                               "/usr/lib/python3.12/lib-dynload"])

    def test_a_name_that_only_contains_site_packages_is_not_a_library(self):
        got = self.isolated(["/job/my-site-packages-copy", "/job/site-packages.bak"])
        self.assertEqual(got, ["/job/candidate"])


if __name__ == "__main__":
    unittest.main()
