"""The GPU companion (traces and GPU): generate a scenario's kernel, compile, run, time it, read its
counters; the cost model, calibration, prediction; validate, bench and calibrate.

Only this package touches the GPU, and only lazily: ``codegen``, ``costmodel``, ``results``
and ``ncu`` (parsing) import nothing beyond the standard library and numpy, so the app and
the tests work on a machine without CUDA. ``runner`` imports PyCUDA inside its functions.
Nothing here imports Qt.
"""

from __future__ import annotations

from ..errors import WarpvizError


class GpuUnavailable(WarpvizError, RuntimeError):
    """No GPU run is possible here; ``reason`` says exactly why (shown to the user as is)."""

    def __init__(self, reason: str, kind: str = "unavailable"):
        self.reason = reason
        self.kind = kind  # "pycuda" | "driver" | "device" | "ncu" | "counters" | "nvcc" | "unavailable"
        super().__init__(reason)
