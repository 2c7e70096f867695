"""Frozen entry point: the `warpviz` command (app and CLI, as viz.cli:main decides)."""

import sys

from viz.cli import main

if __name__ == "__main__":
    sys.exit(main())
