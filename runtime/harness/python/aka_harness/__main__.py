"""Entry point for ``python3 -m aka_harness``; all logic lives in cli.py."""

import sys

from aka_harness.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
