"""Frozen entry point: the `warpviz` command (app and CLI, as viz.cli:main decides)."""

import multiprocessing
import sys

from viz.cli import main

if __name__ == "__main__":
    # The GPU runner's child process is started with "spawn": in a frozen app that
    # re-runs this executable, which must then act as the child, not start again.
    multiprocessing.freeze_support()
    sys.exit(main())
