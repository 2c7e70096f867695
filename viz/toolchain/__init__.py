"""The CUDA toolchain, with no GPU: nvcc and its cubins (``compile``), the SASS they hold (``sass``).
Below the traces and the GPU runs, which both compile; imports nothing of warpviz but its base.

``GpuUnavailable`` (a missing tool, driver or device) is defined here, the lowest place that raises
it, and is importable from ``viz.gpu`` as well.
"""

from __future__ import annotations

from ..errors import WarpvizError


class GpuUnavailable(WarpvizError, RuntimeError):
    """No GPU run is possible here; ``reason`` says exactly why (shown to the user as is)."""

    def __init__(self, reason: str, kind: str = "unavailable"):
        self.reason = reason
        self.kind = kind  # "pycuda" | "driver" | "device" | "ncu" | "counters" | "nvcc" | "unavailable"
        super().__init__(reason)
