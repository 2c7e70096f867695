"""GPU runs, above the traces: generate a scenario's kernel, run and time it, read its counters,
record a trace (``trace_pipeline``); the cost model, calibration, prediction; validate, bench, calibrate, trace.

Only this package touches the GPU, and only lazily: ``codegen``, ``costmodel``, ``results``
and ``ncu`` (parsing) import nothing beyond the standard library and numpy, so the app and
the tests work on a machine without CUDA. ``runner`` imports PyCUDA inside its functions.
Nothing here imports Qt. The app, the command line and ``viz.api`` come in through one module,
``front`` (probe, run, validate, trace, calibrate); the CUDA driver calls are ``driver``'s.
"""

from __future__ import annotations

from ..toolchain import GpuUnavailable  # noqa: F401 - defined below the traces, which raise it too

__all__ = ["GpuUnavailable"]
