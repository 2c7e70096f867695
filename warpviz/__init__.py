"""``import warpviz``: warpviz's Python API under the project's own name.

The package is ``viz`` (``from viz import api``); this module re-exports ``viz.api`` so that
scripts and notebooks can write::

    import warpviz
    t = warpviz.trace_triton(softmax_kernel, (8,), (y, x, 1000, 1000, 8, 1000), BLOCK_SIZE=1024)
    t.analysis(); t.picture(i=3); t.save("softmax.wvtrace")
    sc = warpviz.scenario("transpose-tile")

Importing it loads no Qt, no GPU library and no Triton: they are loaded when used.
"""

from viz import __version__
from viz.api import (Analysis, Layout, Picture, Scenario, Trace, TraceAnalysis, TraceFailed, Video, array_map,
                     layout_map, open_trace, scenario, to_toml, trace_launch, trace_ptx, trace_triton)
from viz.errors import WarpvizError

__all__ = ["__version__", "Analysis", "Layout", "Picture", "Scenario", "Trace", "TraceAnalysis", "TraceFailed",
           "Video", "WarpvizError", "array_map", "layout_map", "open_trace", "scenario", "to_toml", "trace_launch",
           "trace_ptx", "trace_triton"]
