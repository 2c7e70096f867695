"""The one exception family of warpviz (no Qt, no imports beyond the standard library).

Every error warpviz raises on purpose, for a bad file, a bad argument or a missing tool, is a
``WarpvizError``: ``except viz.errors.WarpvizError`` catches all of them and nothing else.
Each subclass keeps the built-in base it always had (``ScenarioError`` is still a
``ValueError``, ``GpuUnavailable`` a ``RuntimeError``), so older ``except`` clauses keep working.
The message (``str(err)``) is the one paragraph the command line prints.
"""

from __future__ import annotations


class WarpvizError(Exception):
    """Base of every error warpviz raises on purpose."""


__all__ = ["WarpvizError"]
