"""Where the shipped assets (built-in scenarios, icons, measurements, kernels, traces) live, and
the shipped traces and launch files found by name."""

from __future__ import annotations

import re
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


# -- shipped traces and launch files, by name -------------------------------------------
# ``warpviz analyze transpose_pad``, ``warpviz.open_trace("transpose_pad")``: the shipped
# traces (assets/traces/NAME.wvtrace) and launch files (kernels/**/NAME.launch.toml) are
# inside the wheel, so they are named, never reached by a path into the checkout.

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")


def traces_dir() -> Path:
    """assets/traces: traces of the kernels/ launch files recorded on an H100."""
    return root() / "traces"


def trace_names() -> list[str]:
    """The shipped traces' names (``warpviz list --traces``)."""
    return sorted(p.name[:-len(".wvtrace")] for p in traces_dir().glob("*.wvtrace"))


def _is_name(text: str) -> bool:
    return bool(_NAME.fullmatch(text)) and ".." not in text


def path_exists(p: Path) -> bool:
    try:
        return p.exists()
    except (OSError, ValueError):  # a name too long for the system, a NUL byte
        return False


def named_trace(name: str) -> Path | None:
    """The shipped trace called ``name`` (``transpose_pad``, or ``transpose_pad.wvtrace``), else None."""
    name = str(name)
    stem = name[:-len(".wvtrace")] if name.endswith(".wvtrace") else name
    if not _is_name(stem):
        return None
    p = traces_dir() / f"{stem}.wvtrace"
    return p if path_exists(p) else None


def named_launch(name: str) -> Path | None:
    """The shipped launch file ``kernels/**/NAME.launch.toml`` called ``name``, else None."""
    name = str(name)
    stem = name[:-len(".launch.toml")] if name.endswith(".launch.toml") else name
    if not _is_name(stem):
        return None
    for p in sorted(kernels_dir().rglob(f"{stem}.launch.toml")):
        return p
    return None


def trace_argument(arg) -> str | None:
    """What a command's FILE_OR_NAME means when it is a trace: the path of the ``.wvtrace`` it
    names (a file's path as given, or a shipped trace's name), else None (a scenario: a file, a
    built-in's name, or an unknown word for the scenario's own error). A file that exists and a
    built-in scenario's name come first; a shipped trace's name, only when it is neither."""
    text = str(arg)
    if text.endswith(".wvtrace"):
        if not path_exists(Path(text)) and "/" not in text and "\\" not in text:
            shipped = named_trace(text)
            if shipped is not None:
                return str(shipped)
        return text
    if "/" in text or "\\" in text or path_exists(Path(text)) or not _is_name(text):
        return None
    if path_exists(scenario_dir() / f"{text}.toml"):
        return None
    shipped = named_trace(text)
    return None if shipped is None else str(shipped)


def launch_argument(arg) -> str:
    """A launch file's path as given, or the path of the shipped launch file it names when no
    such file exists (``warpviz trace transpose_pad``)."""
    text = str(arg)
    if path_exists(Path(text)) or "/" in text or "\\" in text:
        return text
    shipped = named_launch(text)
    return text if shipped is None else str(shipped)
