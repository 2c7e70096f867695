"""``python -m warpviz``: the ``warpviz`` command (``viz.cli``), for where the script is not on PATH."""

import sys

from viz.cli import main

if __name__ == "__main__":
    sys.exit(main())
