"""The process Nsight Compute profiles: launch each kernel of a spec file once.

``python -m viz.gpu.ncu_driver SPEC.json`` where SPEC holds ``{"launches": [LaunchSpec
as JSON, ...]}`` (``viz.gpu.runner.LaunchSpec.to_json``). Each launch gets a zeroed
buffer of its own; the addresses, not the data, decide the counters. A failing launch
is reported on stderr and the others still run.

With ``"mode": "timed"`` (the bottleneck measurement, ``viz.gpu.ncu.BOTTLENECK_METRICS``)
the launches are the timed runs themselves (scaled, ``viz.gpu.bench.timed_launches``):
one buffer as large as the largest launch is filled with random words first (the fill
kernel is the process's first launch: ncu skips it with ``--launch-skip 1``), as the
timed run fills its buffers, and every launch runs on it once.
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    from .runner import KernelFault, LaunchSpec, Session

    spec = json.loads(open(argv[0]).read())
    session = Session()
    if spec.get("mode") == "timed":
        return _timed(session, spec, LaunchSpec, KernelFault)

    def run(d: dict) -> None:
        ls = LaunchSpec.from_json(d)
        session.run_once(ls, _zeros(ls.buffer_bytes))

    return run_each(session, spec["launches"], run, KernelFault, "warpviz-ncu-driver")


def run_each(session, launches: list[dict], run, fault, program: str) -> int:
    """``run(d)`` for each launch of a spec, a ``fault`` reported on stderr (named by the
    launch's ``name``) while the others still run; the session closed at the end. Exit status 1
    when a launch failed."""
    failures = 0
    try:
        for d in launches:
            try:
                run(d)
            except fault as err:
                failures += 1
                print(f"{program}: {d.get('name', '?')}: {err}", file=sys.stderr)
    finally:
        session.close()
    return 1 if failures else 0


def _timed(session, spec: dict, LaunchSpec, KernelFault) -> int:
    launches = [LaunchSpec.from_json(d) for d in spec["launches"]]
    failures = 0
    try:
        size = max([ls.buffer_bytes for ls in launches] + [256])
        buf = session.alloc(size)
        session.fill_random(buf, size, seed=1)
        for ls in launches:
            try:
                session.launch_once(ls, int(buf))
                print(f"warpviz-ncu-driver: ran {ls.label or ls.name}", file=sys.stderr)
            except KernelFault as err:
                failures += 1
                print(f"warpviz-ncu-driver: {ls.label or ls.name}: {err}", file=sys.stderr)
                break  # the context is broken after a fault: the rest cannot run
    finally:
        session.close()
    return 1 if failures else 0


def _zeros(n: int):
    import numpy as np

    return np.zeros(max(n, 256), np.uint8)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
