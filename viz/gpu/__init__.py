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
    """No GPU run is possible here; ``reason`` says exactly why. It is ``template`` (warpviz's
    own English sentence) filled with ``fields`` (a driver's or a tool's own words, kept as
    they printed them): the app shows the template translated (``viz.app.gpu_texts.gpu_reason``)."""

    def __init__(self, template: str, kind: str = "unavailable", **fields):
        self.template, self.fields = template, {k: str(v) for k, v in fields.items()}
        self.reason = template.format(**self.fields) if fields else template
        self.kind = kind  # "pycuda" | "driver" | "device" | "ncu" | "counters" | "nvcc" | "unavailable"
        super().__init__(self.reason)

    def payload(self) -> tuple:
        """What crosses the GPU child process's pipe (``viz.gpu.worker`` makes the error again from it)."""
        return self.template, self.kind, self.fields
