"""Where the shipped assets (built-in scenarios, icons, measurements, kernels) live."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=None)
def root() -> Path:
    """The assets folder: beside the package in a checkout, or inside it in a wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / "assets", here.parent / "assets",
                      Path(sys.prefix) / "share" / "warpviz" / "assets"):
        if (candidate / "scenarios").is_dir():
            return candidate
    return here.parent / "assets"


def scenario_dir() -> Path:
    return root() / "scenarios"


def measurements_dir() -> Path:
    return root() / "measurements"


def kernels_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "_data" / "kernels", here.parent / "kernels"):
        if candidate.is_dir():
            return candidate
    return here.parent / "kernels"
