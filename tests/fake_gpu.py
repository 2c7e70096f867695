"""A GPU session for tests on machines without a GPU: served in the real child process of
``viz.gpu.worker.ProcessSession(child="fake_gpu:ReplaySession")``, it answers
``trace_record`` with the records of a shipped H100 trace (the one named by
``WARPVIZ_FAKE_TRACE``, else ``assets/traces/<kernel>.wvtrace``), and the device info
recorded in it. So the app's worker thread, the pipe, the progress messages, the
pipeline's compile (real nvcc), write and analysis, and Cancel (which kills this process)
all run for real; only the kernel's run is a replay.

``WARPVIZ_FAKE_HANG=1``: ``trace_record`` reports the recording stage, then hangs until
the parent kills the process (Cancel). ``WARPVIZ_FAKE_FAULT=1``: it fails as a kernel that
faults does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"


def shipped_records(path: Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """(header, the recorder's raw header rows, addresses) of a shipped trace."""
    from viz.trace import tracefile

    t = tracefile.load(path)
    n = t.records
    heads = np.stack([t.instr, t.block, t.warp, t.active, t.pred, t.shared, t.global_,
                      t.flags.astype(np.uint32)], axis=1).astype(np.uint32)
    return t.header, heads, t.addresses().astype(np.uint64).reshape(n, 32)


class ReplaySession:
    def __init__(self):
        name = os.environ.get("WARPVIZ_FAKE_TRACE", "")
        self.trace_path = Path(name) if name else None
        header = shipped_records(self.trace_path)[0] if self.trace_path else {}
        self.info = dict(header.get("gpu") or {"name": "NVIDIA H100 80GB HBM3 (replayed)",
                                                "compute_capability": "9.0", "sm_count": 132})

    def limits(self):
        return SimpleNamespace(sm_count=self.info.get("sm_count", 132), l2_bytes=50 << 20, free_bytes=80 << 30)

    def trace_record(self, req: dict, progress=None) -> dict:
        path = self.trace_path or TRACES / f"{req['kernel']}.wvtrace"
        _h, heads, addr = shipped_records(path)
        if os.environ.get("WARPVIZ_FAKE_FAULT") == "1":
            from viz.gpu.runner import KernelFault

            raise KernelFault(f"instrumented launch of {req['kernel']} failed on the GPU: "
                              "cuCtxSynchronize failed: an illegal memory access was encountered")
        if progress is not None:
            progress("record")
        if os.environ.get("WARPVIZ_FAKE_HANG") == "1":
            while True:                      # a kernel that never ends: only Cancel stops it
                time.sleep(0.05)
        n = heads.shape[0]
        return {"header": heads, "addr": addr, "executed": n, "executed_again": n, "capacity": n}

    def trace_check(self, req: dict):
        return None

    def close(self) -> None:
        pass


def shipped_counters(path: Path, metrics=None) -> dict[str, int]:
    """The Nsight Compute counters recorded with a shipped trace (the ten, or ``metrics``)."""
    from viz.trace import tracefile

    h = tracefile.load(path).header
    if metrics is None:
        return dict(h["ncu"])
    other = h.get("ncu_other") or {}
    return {m: other[m] for m in metrics if m in other}


def replayed_counters(path: Path, change: dict | None = None):
    """A ``counters`` function for ``Recorder``: the shipped trace's Nsight Compute counters
    (with ``change`` applied to the ten), in place of running ncu."""
    def counters(launch, build, blocks, metrics=None, cancelled=None):
        got = shipped_counters(path, metrics)
        if metrics is None and change:
            got.update(change)
        return got

    return counters
