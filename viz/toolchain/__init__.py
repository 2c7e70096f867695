"""The CUDA toolchain, with no GPU: nvcc and its cubins (``compile``), the SASS they hold (``sass``).
Below the traces and the GPU runs, which both compile; imports nothing of warpviz but its base.

``GpuUnavailable`` (a missing tool, driver or device) is defined here, the lowest place that raises
it, and is importable from ``viz.gpu`` as well.
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
