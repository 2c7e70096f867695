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

    spec = json.loads(open(argv[0]).read())
    session = Session()
    failures = 0
    try:
        for d in spec["launches"]:
            req = dict(d, kernel=d["name"], cubin=base64.b64decode(d["cubin"]), buffer=np.load(d["buffer"]))
            try:
                run_plain(session, req)
            except KernelFault as err:
                failures += 1
                print(f"warpviz-trace-ncu-driver: {d['name']}: {err}", file=sys.stderr)
    finally:
        session.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
