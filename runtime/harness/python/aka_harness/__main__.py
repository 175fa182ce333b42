"""Entry point for ``python3 -m aka_harness``; all logic lives in cli.py.

``-m`` puts the working directory first on sys.path, and the working directory
is the sandbox job directory, which candidate code can write: a planted
``json.py`` there would be imported by the judge's first lazy import. The
entry drops it before anything else is imported.
"""

import os
import sys

_cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]

from aka_harness.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
