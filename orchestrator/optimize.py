#!/usr/bin/env python3
"""Compatibility launcher: `orchestrator/optimize.py FLAGS` runs `aka optimize -- FLAGS`.

Upstream users start campaigns with this path; aka keeps it working by
replacing this process with the aka binary, so signals, exit codes and the
terminal behave exactly as if aka had been started directly. The binary is
$AKA_BIN when set, else `aka` on PATH, else the build tree next to this file.
"""
import os
import shutil
import sys


def find_aka() -> str:
    explicit = os.environ.get("AKA_BIN")
    if explicit:
        return explicit
    on_path = shutil.which("aka")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(os.path.dirname(here), "build", "aka")
    if os.access(built, os.X_OK):
        return built
    sys.stderr.write("optimize.py: cannot find the aka binary (set AKA_BIN or put aka on PATH)\n")
    sys.exit(75)


def main() -> None:
    aka = find_aka()
    os.execv(aka, [aka, "optimize", "--", *sys.argv[1:]])


if __name__ == "__main__":
    main()
