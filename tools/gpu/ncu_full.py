"""Nsight Compute's full breakdown (``--set full``) of launch files' plain kernels, on the
GPU machine: the evidence behind a cost-model term (L2, LSU, pipes, stalls).

    python3 tools/gpu/ncu_full.py OUT_DIR LAUNCH.toml [LAUNCH.toml ...]

Builds each launch as ``warpviz trace`` does (the same PTX through the same ptxas, the
launch file's buffers), runs its uninstrumented kernel once under ``ncu --set full`` and
writes OUT_DIR/NAME.csv (ncu's details page, base units) and OUT_DIR/NAME.log. No trace is
recorded. Needs a GPU, PyCUDA, nvcc and ncu.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    from viz.gpu.ncu import _ncu_process
    from viz.gpu.trace_pipeline import plain_launch
    from viz.trace.build import build
    from viz.trace.launch import parse_launch

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for path in argv[1:]:
        name = Path(path).name.removesuffix(".launch.toml").removesuffix(".toml")
        t0 = time.time()
        try:
            launch = parse_launch(Path(path).read_text(), Path(path))
            b = build(launch)
            launch = dataclasses.replace(launch, entry=b.entry)   # a C++ kernel: its PTX entry
            with tempfile.TemporaryDirectory(prefix="warpviz-ncu-full-") as tmp:
                spec = {"launches": [plain_launch(launch, b.cubin, Path(tmp) / "buffer.npy")]}
                stdout, stderr, rc = _ncu_process(["--set", "full", "--csv", "--page", "details",
                                                   "--print-units", "base"], spec, 300, None, None,
                                                  driver="viz.gpu.trace_ncu_driver")
            (out / f"{name}.csv").write_text(stdout)
            (out / f"{name}.log").write_text(stderr)
            print(f"{name}: exit {rc}, {len(stdout.splitlines())} lines, {time.time() - t0:.1f} s")
            failures += rc != 0
        except Exception as err:  # noqa: BLE001 - one launch's failure must not stop the rest
            failures += 1
            print(f"{name}: {type(err).__name__}: {err}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
