"""Frozen entry point: the `warpviz` command (app and CLI, as viz.cli:main decides)."""

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
    sys.exit(main())
