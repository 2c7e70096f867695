"""Frozen entry point without a console (Windows, macOS): always opens the app."""

import multiprocessing
import sys

from viz.cli import main

if __name__ == "__main__":
    # The GPU runner's child process is started with "spawn": in a frozen app that
    # re-runs this executable, which must then act as the child, not start again.
    multiprocessing.freeze_support()
    # Finder once passed a -psn_... process serial number; only a scenario is ours.
    args = [a for a in sys.argv[1:] if not a.startswith("-psn")]
    sys.exit(main(["gui", *args[:1]]))
