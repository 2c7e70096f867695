"""The process Nsight Compute profiles: launch each kernel of a spec file once.

``python -m viz.gpu.ncu_driver SPEC.json`` where SPEC holds ``{"launches": [LaunchSpec
as JSON, ...]}`` (``viz.gpu.runner.LaunchSpec.to_json``). Each launch gets a zeroed
buffer of its own; the addresses, not the data, decide the counters. A failing launch
is reported on stderr and the others still run.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from .runner import KernelFault, LaunchSpec, Session

    spec = json.loads(open(argv[0]).read())
    session = Session()
    failures = 0
    try:
        for d in spec["launches"]:
            ls = LaunchSpec.from_json(d)
            try:
                session.run_once(ls, _zeros(ls.buffer_bytes))
            except KernelFault as err:
                failures += 1
                print(f"warpviz-ncu-driver: {ls.name}: {err}", file=sys.stderr)
    finally:
        session.close()
    return 1 if failures else 0


def _zeros(n: int):
    import numpy as np

    return np.zeros(max(n, 256), np.uint8)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
