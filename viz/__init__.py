"""warpviz: how a GPU serves a warp's memory accesses (banks, wavefronts, sectors).
Layers, lowest first (docs/ARCHITECTURE.md): base, model, traces and GPU, render, export, app / API / CLI.

From Python: ``from viz import api`` (``api.scenario(...)``, ``api.layout_map(...)``);
``viz.api`` is loaded on first use so that ``import viz`` stays light.
"""

__version__ = "0.1.0"


def __getattr__(name):
    if name == "api":
        import importlib

        return importlib.import_module(".api", __name__)
    raise AttributeError(f"module 'viz' has no attribute {name!r}")
