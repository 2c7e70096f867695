"""Traces of a real CUDA kernel: launch files, the PTX instrumenter and its build (nvcc through
``viz.toolchain``), the trace file and its analysis. Recording one on the GPU is ``viz.gpu``'s.

The model side (``launch``, ``ptx``, ``tracefile``, ``analysis``) imports nothing beyond
the standard library, numpy and the engine; only ``record`` touches PyCUDA, and only in
the GPU child process (``viz.gpu.worker``, which calls it). Nothing here imports ``viz.gpu`` or Qt.
"""

from __future__ import annotations

from ..errors import WarpvizError

class TraceError(WarpvizError, ValueError):
    """Bad input (a launch file, a source, a trace file): one paragraph naming the file,
    the key or line, the problem and the fix."""

    def __init__(self, file: str, where: str, problem: str, fix: str = ""):
        self.file = str(file)
        self.where = where
        self.problem = problem
        self.fix = fix
        super().__init__(self.paragraph())

    def paragraph(self) -> str:
        where = f" ({self.where})" if self.where else ""
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{self.file}{where}: {self.problem}.{fix}"
