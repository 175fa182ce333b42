"""Unit tests of --official (official.py) against fake official evaluators.

The fakes write what the project's reference notes record of each tool's output
(Atrex-Bench's eval_result.json, SOL-ExecBench's traces), and what the real tools wrote on
the H200 (fixtures/official/). Run by tests/integration/harness_units.sh."""
import argparse
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

from aka_harness import official

FAKE_RUN_EVAL = """
import json, os, sys
argv = sys.argv[1:]
open(os.environ["FAKE_ARGV"], "w").write(json.dumps(argv))
out = argv[argv.index("--output") + 1]
dest = os.path.join(out, "20261203T000000Z", "op")
os.makedirs(dest)
path = os.path.join(dest, "eval_result.json")
with open(os.environ["FAKE_DOC"]) as f, open(path, "w") as g:
    g.write(f.read())
print("[OUTPUT] " + path)
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""

FAKE_SOL = """#!{python}
import json, os, sys
argv = sys.argv[1:]
open(os.environ["FAKE_ARGV"], "w").write(json.dumps(argv))
out = argv[argv.index("-o") + 1]
with open(argv[argv.index("--solution") + 1]) as f, open(os.environ["FAKE_ARGV"] + ".sol", "w") as g:
    g.write(f.read())  # the solution lives in a directory removed after the run
with open(os.environ["FAKE_DOC"]) as f, open(out, "w") as g:
    g.write(f.read())
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


def atrex_doc(samples_ms=(0.010, 0.012, 0.020), second_ok=True):
    ok = {"status": "passed", "reason": None}
    return {
        "eval_id": "E", "error": None,
        "passed": {"compile": {"0": ok, "1": ok},
                   "correctness": {"0": ok, "1": ok if second_ok else
                                   {"status": "failed", "reason": "out: not allclose"}}},
        "correctness": {"shapes": {"0": {"cases": [{"outputs": [
            {"name": "out", "passed": True, "max_elementwise_abs_diff": 0.001,
             "max_elementwise_rel_diff": 0.002}]}]}}},
        "performance": {"shapes": {"0": {"samples": [{"end_to_end_time_ms": s}
                                                     for s in samples_ms], "error": None},
                                   "1": {"samples": [{"end_to_end_time_ms": 0.5}]}}},
    }


def trace(uuid, status, latency_ms=None, ref_ms=None, log=""):
    ev = {"status": status, "log": log,
          "correctness": {"max_absolute_error": 0.01, "max_relative_error": 0.02}}
    if status == "PASSED":
        ev["performance"] = {"latency_ms": latency_ms, "reference_latency_ms": ref_ms,
                             "speedup_factor": ref_ms / latency_ms}
    return {"definition": "d", "workload": {"uuid": uuid}, "evaluation": ev}


class Fixture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.env = mock.patch.dict(os.environ, {"FAKE_ARGV": os.path.join(self.dir, "argv"),
                                                "FAKE_DOC": os.path.join(self.dir, "doc")})
        self.env.start()
        self.op = os.path.join(self.dir, "op")
        os.makedirs(self.op)
        with open(os.path.join(self.op, "definition.json"), "w") as f:
            json.dump({"name": "rmsnorm_h4096"}, f)
        self.kernel = os.path.join(self.dir, "kernel.py")
        with open(self.kernel, "w") as f:
            f.write("def run(x, out):\n    out.copy_(x)\n")

    def tearDown(self):
        self.env.stop()
        self.tmp.cleanup()

    def args(self, **kw):
        base = dict(kernel=self.kernel, op_dir=self.op, multi_seed=2, shape_id=[],
                    framework=None, no_dps=False, official_timeout_s=60.0)
        base.update(kw)
        return argparse.Namespace(**base)

    def doc(self, value, lines=False):
        with open(os.environ["FAKE_DOC"], "w") as f:
            f.write("\n".join(json.dumps(t) for t in value) if lines else json.dumps(value))

    def argv(self):
        with open(os.environ["FAKE_ARGV"]) as f:
            return json.load(f)


RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "official")


def recorded(name):
    """A file the real official tool wrote on the H200 (fixtures/official/README.md)."""
    with open(os.path.join(RECORDED, name)) as f:
        return f.read()


class Atrex(Fixture):
    def setUp(self):
        super().setUp()
        os.makedirs(os.path.join(self.dir, "root", "scripts"))
        with open(os.path.join(self.dir, "root", "scripts", "run_eval.py"), "w") as f:
            f.write(FAKE_RUN_EVAL)
        os.environ["ATREX_BENCH_ROOT"] = os.path.join(self.dir, "root")

    def test_pass_uses_the_owners_mean_and_keeps_the_median(self):
        self.doc(atrex_doc())
        code, out = official.evaluate(self.args(), "atrex", "E1", "sha")
        self.assertEqual(code, 0, out["failures"])
        self.assertEqual(out["evaluator"], "official.atrex-bench")
        self.assertAlmostEqual(out["latency_us_by_shape"]["0"], 14.0, places=3)  # mean
        self.assertAlmostEqual(out["latency_median_us_by_shape"]["0"], 12.0, places=3)
        self.assertEqual(out["latency_statistic"], "mean")
        self.assertIsNone(out["speedup_vs_ref_mean"])  # Atrex-Bench does not time the reference
        self.assertEqual(out["max_abs_err"], 0.001)
        argv = self.argv()
        self.assertEqual(argv[argv.index("--num-correctness-cases") + 1], "2")
        self.assertEqual(argv[argv.index("--reference-dir") + 1], self.op)

    def test_the_real_tools_result(self):
        with open(os.environ["FAKE_DOC"], "w") as f:
            f.write(recorded("atrex_eval_result_rmsnorm_h200.json"))
        code, out = official.evaluate(self.args(), "atrex", "E1", "sha")
        self.assertEqual(code, 0, out["failures"])
        self.assertEqual((out["passed"], out["total"]), (5, 5))
        self.assertAlmostEqual(out["latency_us_by_shape"]["3"], 35.34, places=2)
        self.assertEqual(out["timing"]["method"], "cuda_event")

    def test_a_failed_shape_is_named(self):
        self.doc(atrex_doc(second_ok=False))
        code, out = official.evaluate(self.args(), "atrex", "E1", "sha")
        self.assertEqual(code, 1)
        self.assertEqual((out["passed"], out["total"]), (1, 2))
        self.assertEqual(out["failures"][0]["shape_id"], "1")
        self.assertEqual(out["failures"][0]["stage"], "correctness")
        self.assertIn("not allclose", out["failures"][0]["message"])

    def test_a_failing_exit_overrides_a_clean_result(self):
        self.doc(atrex_doc())
        os.environ["FAKE_EXIT"] = "3"
        try:
            code, out = official.evaluate(self.args(), "atrex", "E1", "sha")
        finally:
            del os.environ["FAKE_EXIT"]
        self.assertEqual(code, 1)
        self.assertIn("exited 3", out["failures"][-1]["message"])

    def test_missing_tool_returns_none_and_says_where(self):
        os.environ["ATREX_BENCH_ROOT"] = os.path.join(self.dir, "nowhere")
        args = self.args()
        self.assertIsNone(official.evaluate(args, "atrex", "E1", "sha"))
        self.assertIn("nowhere", args.official_missing)


class Sol(Fixture):
    def setUp(self):
        super().setUp()
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir)
        path = os.path.join(bin_dir, "sol-execbench")
        with open(path, "w") as f:
            f.write(FAKE_SOL.format(python=sys.executable))
        os.chmod(path, 0o755)
        self.path = mock.patch.dict(os.environ, {"PATH": bin_dir + os.pathsep +
                                                 os.environ.get("PATH", "")})
        self.path.start()

    def tearDown(self):
        self.path.stop()
        super().tearDown()

    def test_traces_become_shapes_with_the_reference_timed_alike(self):
        self.doc([trace("w-a", "PASSED", 0.004, 0.012), trace("w-b", "PASSED", 0.010, 0.010)],
                 lines=True)
        code, out = official.evaluate(self.args(), "sol", "E1", "sha")
        self.assertEqual(code, 0, out["failures"])
        self.assertEqual(out["evaluator"], "official.sol-execbench")
        self.assertAlmostEqual(out["latency_us_by_shape"]["w-a"], 4.0)
        self.assertAlmostEqual(out["speedup_vs_ref_mean"], 2.0)  # (3 + 1) / 2
        with open(os.environ["FAKE_ARGV"] + ".sol") as f:
            solution = json.load(f)
        self.assertEqual(solution["definition"], "rmsnorm_h4096")
        self.assertEqual(solution["spec"]["entry_point"], "kernel.py::run")
        self.assertTrue(solution["spec"]["destination_passing_style"])

    def test_the_real_tools_traces(self):
        with open(os.environ["FAKE_DOC"], "w") as f:
            f.write(recorded("sol_traces_rope_h200.jsonl"))
        code, out = official.evaluate(self.args(), "sol", "E1", "sha")
        self.assertEqual(code, 0, out["failures"])
        self.assertEqual((out["passed"], out["total"]), (4, 4))
        self.assertAlmostEqual(out["latency_us_by_shape"]["7d0c5a2e-0004-4a6b-9e41-000000000004"],
                               40.80, places=1)
        self.assertEqual(out["timing"]["method"], "cupti_kernel_span")
        worst = max(json.loads(ln)["evaluation"]["correctness"]["max_absolute_error"]
                    for ln in recorded("sol_traces_rope_h200.jsonl").splitlines() if ln.strip())
        self.assertEqual(out["max_abs_err"], worst)

    def test_statuses_map_onto_stages(self):
        self.doc([trace("w-a", "REWARD_HACK", log="timer patched"),
                  trace("w-b", "INCORRECT_NUMERICAL")], lines=True)
        code, out = official.evaluate(self.args(no_dps=True), "sol", "E1", "sha")
        self.assertEqual(code, 1)
        stages = {f["shape_id"]: f["stage"] for f in out["failures"]}
        self.assertEqual(stages, {"w-a": "integrity", "w-b": "correctness"})
        self.assertIn("timer patched", out["failures"][0]["message"])

    def test_no_traces_is_a_failure_of_the_whole_run(self):
        self.doc([], lines=True)
        code, out = official.evaluate(self.args(), "sol", "E1", "sha")
        self.assertEqual(code, 1)
        self.assertEqual(out["failures"][0]["shape_id"], "*")
        self.assertFalse(out["all_pass"])


if __name__ == "__main__":
    unittest.main()
