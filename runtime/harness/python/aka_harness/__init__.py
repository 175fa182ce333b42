"""aka_harness: the PyTorch-layout evaluator that aka runs inside its sandbox.

This package owns correctness and timing for operators whose reference is
PyTorch code: the Atrex-Bench layout (reference.py / input.py / shapes.json)
and the SOL-ExecBench layout (definition.json / workload.jsonl). A judge
process (judge.py) runs the reference and then one candidate file in separate
runner processes (runner.py), compares their outputs under the layout's
tolerance rules, checks the timings they report against its own clock, and
alone prints exactly one ``RESULT_JSON=`` line (DESIGN §4.6) on stdout.
Everything else goes to stderr.

It depends on the standard library and torch only (triton or another DSL is
imported only when the candidate needs it). Run it as
``python3 -m aka_harness --layout atrex|sol --op-dir DIR --kernel FILE ...``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
