"""Frozen entry point without a console (Windows, macOS): always opens the app."""

import multiprocessing
import sys

from viz.cli import main

if __name__ == "__main__":
    # The GPU worker's child (viz.gpu.worker) re-runs this executable with CHILD_FLAG first:
    # it must then serve the GPU session, not start again.
    from viz.gpu.worker import CHILD_FLAG

    if sys.argv[1:2] == [CHILD_FLAG]:
        from viz.gpu.worker_child import main as child_main

        sys.exit(child_main(sys.argv[2:]))
    multiprocessing.freeze_support()
    # Finder once passed a -psn_... process serial number; only a scenario is ours.
    args = [a for a in sys.argv[1:] if not a.startswith("-psn")]
    sys.exit(main(["gui", *args[:1]]))
