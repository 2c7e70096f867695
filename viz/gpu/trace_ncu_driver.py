"""The process Nsight Compute profiles for ``warpviz trace --validate``: one launch of the
plain (uninstrumented) kernel with the launch file's buffers.

``python -m viz.gpu.trace_ncu_driver SPEC.json``; SPEC holds ``{"launches": [{"name", "cubin"
(base64), "buffer" (path of a .npy), "block", "grid", "shared", "args", "offsets"}]}``.
"""

from __future__ import annotations

import base64
import json
import sys


def main(argv: list[str]) -> int:
    import numpy as np

    from .runner import KernelFault, Session
    from ..trace.record import run_plain
    from .ncu_driver import run_each

    spec = json.loads(open(argv[0]).read())
    session = Session()

    def run(d: dict) -> None:
        run_plain(session, dict(d, kernel=d["name"], cubin=base64.b64decode(d["cubin"]), buffer=np.load(d["buffer"])))

    return run_each(session, spec["launches"], run, KernelFault, "warpviz-trace-ncu-driver")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
