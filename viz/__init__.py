"""warpviz: how a GPU serves a warp's memory accesses (banks, wavefronts, sectors)."""

__version__ = "0.1.0"
