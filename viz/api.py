"""warpviz from Python (notebooks, scripts): build a scenario, analyse it, draw a frame, a
layout map or an animation without a window.

    from viz import api
    sc = api.scenario("transpose-tile")            # a built-in, a file, TOML text or keywords
    sc.analyze()                                   # the figures of `warpviz analyze`
    sc.frame(instruction=5)                        # shows itself in Jupyter (PNG or SVG)
    sc.frame(instruction=5).save("frame.svg")
    sc.animation(instructions="5-6").save("column-read.mp4")
    api.layout_map("Sw<3,3,3> o (8,64):(64,1)")    # a CuTe or Triton layout's map, by bank

    t = api.trace_launch("transpose.launch.toml")  # a real kernel traced on the GPU (as `warpviz trace`)
    t = api.trace_ptx(ptx, "softmax_kernel", grid=(8,), block=(128,), args=[y, x, 1000, 1000, 8, 1000])
    t = api.trace_triton(softmax_kernel, (8,), (y, x, 1000, 1000, 8, 1000), BLOCK_SIZE=1024)
    t.analysis(); t.picture(i=3); t.save("softmax.wvtrace")
    api.open_trace("softmax.wvtrace")              # a recorded trace, anywhere (no GPU)

Pictures are drawn by the app's painter through ``viz.export`` (the same code as
``warpviz export``); Qt is loaded only when a picture is drawn, never by importing this
module.

Every error is a ``viz.errors.WarpvizError``, with the one-paragraph message the command
line prints: ``viz.scenario.ScenarioError`` (a scenario that cannot be used),
``viz.layout.LayoutError`` (a layout), ``viz.export.ExportError`` (a picture or video that
cannot be made or written), ``ApiError`` (an argument of the wrong type or out of range,
checked before anything runs; also a ``ValueError``, and for an unknown metric in
``Analysis[...]`` a ``KeyError``) and, from the tracing functions, ``TraceFailed`` (also for
a missing Triton, PyTorch, PyCUDA or GPU; its message is the paragraph ``warpviz trace``
prints). ``except viz.errors.WarpvizError`` catches them all.
"""

from __future__ import annotations

import base64
import html
import json
import math
import numbers
import os
import tempfile
from collections import ChainMap
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, Union

import numpy as np

from . import export as _export
from .access_figures import AccessFigures
from .export_formats import STILLS as _STILLS, extensions_text as _extensions     # png, svg: the stills
from .argcheck import (MAX_BLOCK_INDEX, MAX_INDEX, MAX_INSTRUCTION, MAX_SCALE, MAX_WARP_INDEX, MIN_SCALE,
                       shown_value, span)
from .errors import WarpvizError
from .layout import LayoutError
from .layout_text import LayoutMap, layout_map as _layout_map
from .scenario import KIND_OPS, Scenario as _Model, ScenarioError, load, loads, with_params

if TYPE_CHECKING:
    import pandas

DEFAULT_SIZE = (1280, 720)          # a frame in a notebook (text scales with the picture)
_NAMES = ("instruction", "block", "warp")   # the arguments' names in messages
MAX_PARAM = 2**62                   # a param's whole value: the expressions are exact within +-2^62
MAX_FIELDS_DEPTH = 16               # nesting of a scenario's fields given as keywords
MAX_EXTENT = 2**40                  # an extent of a layout map's shape (as a scenario's shape)


# Types of the public API's arguments (the API checks every value itself; these are for type checkers)
Blocks = Union[str, int, Sequence[int], None]   # linear block indices: "0-3", 7, [0, 7]
Dims = Union[int, Sequence[int]]                # a grid or block: 4, (4,), (4, 2, 1)


class ApiError(WarpvizError, ValueError):
    """A bad argument to a function of ``viz.api``: the function, the argument, what it must
    be and an example. Raised before anything runs."""

    def __init__(self, func: str, arg: str, problem: str, fix: str = ""):
        self.func, self.arg, self.problem, self.fix = func, arg, problem, fix
        text = f"{func}(): " + (f"{arg} {problem}" if arg else problem)
        if fix:
            text += f". {fix[:1].upper()}{fix[1:]}"
        super().__init__(text if text.endswith(".") else text + ".")


class UnknownMetric(ApiError, KeyError):
    """``Analysis[name]`` for a name that is not one of the figures (also a ``KeyError``)."""

    __str__ = Exception.__str__


def _show(v: Any) -> str:
    """An argument's value as a message shows it: its repr, cut short, and its type."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool) and int(v).bit_length() > 256:
        return f"{shown_value(int(v))} ({type(v).__name__})"     # repr() raises past 4,300 digits
    try:
        text = repr(v)
    except Exception:        # noqa: BLE001  (a user's object whose repr fails)
        text = "<?>"
    text = text if len(text) <= 60 else text[:59] + "…"
    return f"{text} ({type(v).__name__})"


def _int(func: str, arg: str, v: Any, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number (a Python or numpy integer, not a bool) in ``lo..hi``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ApiError(func, arg, f"must be a whole number, not {_show(v)}")
    v = int(v)
    lo = -MAX_INDEX if lo is None else lo         # every whole number the API takes fits in 64 bits
    hi = MAX_INDEX if hi is None else hi
    if not lo <= v <= hi:
        raise ApiError(func, arg, f"is {shown_value(v)}, outside {span(lo, hi)}")
    return v


def _real(func: str, arg: str, v: Any, lo: float, hi: float) -> float:
    """A finite number in ``lo..hi`` (lo excluded when it is 0)."""
    try:
        x = float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) else math.nan
    except OverflowError:                          # a whole number past 1.8e308 (10**5000)
        raise ApiError(func, arg, f"is {shown_value(int(v))}, outside {span(lo, hi)}") from None
    if not math.isfinite(x):
        raise ApiError(func, arg, f"must be a finite number, not {_show(v)}")
    if not (lo < x if lo == 0 else lo <= x) or x > hi:
        raise ApiError(func, arg, f"is {x:g}, outside {'(0' if lo == 0 else f'[{lo:g}'}, {hi:g}]")
    return x


def _str(func: str, arg: str, v: Any, none: bool = False) -> str | None:
    if v is None and none:
        return None
    if not isinstance(v, str):
        raise ApiError(func, arg, f"must be a string{' or None' if none else ''}, not {_show(v)}")
    if "\x00" in v:
        raise ApiError(func, arg, "contains a NUL character")
    return v


def _bool(func: str, arg: str, v: Any) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise ApiError(func, arg, f"must be True or False, not {_show(v)}")
    return bool(v)


def _size(func: str, v: Any, none: bool = False) -> tuple[int, int] | None:
    """A picture's (width, height) in pixels, within what ``warpviz export --size`` takes."""
    if v is None and none:
        return None
    if isinstance(v, str) or not isinstance(v, (tuple, list)) or len(v) != 2:
        raise ApiError(func, "size", f"must be (width, height) in pixels, not {_show(v)}", "e.g. size=(1280, 720)")
    w = _int(func, "size's width", v[0], _export.MIN_SIDE, _export.MAX_W)
    h = _int(func, "size's height", v[1], _export.MIN_SIDE, _export.MAX_H)
    return w, h


def _choice(func: str, arg: str, v: Any, choices: tuple, none: bool = False):
    if (v is None and none) or (isinstance(v, str) and v in choices):
        return v
    raise ApiError(func, arg, f"must be one of {', '.join(repr(c) for c in choices)}"
                   f"{' or None' if none else ''}, not {_show(v)}")


def _path(func: str, v: Any) -> Path:
    """A file to write: a str or an os.PathLike naming one (as text)."""
    try:
        text = os.fspath(v) if isinstance(v, (str, os.PathLike)) else None
    except TypeError:
        text = None
    if not isinstance(text, str):
        raise ApiError(func, "path", f"must be a file name (str or pathlib.Path), not {_show(v)}",
                       "e.g. \"frame.png\"")
    if "\x00" in text or not text.strip():
        raise ApiError(func, "path", f"{_show(text)} is not a file name", "e.g. \"frame.png\"")
    return Path(text)


def _theme(func: str, v: Any) -> str:
    """A theme's name (which names exist is checked when the picture is drawn: that loads Qt)."""
    return _str(func, "theme", v)


def _scale(func: str, v: Any) -> float:
    return _real(func, "scale", v, MIN_SCALE, MAX_SCALE)


def _param_values(func: str, arg: str, values: Any) -> dict[str, str]:
    """Param overrides (``set=``, ``with_params``): names to whole numbers or expression strings."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise ApiError(func, arg, f"must be a dict of param names to values, not {_show(values)}",
                       "e.g. {\"PAD\": 1}")
    out = {}
    for k, v in values.items():
        if not isinstance(k, str):
            raise ApiError(func, arg, f"has the key {_show(k)}; param names are strings")
        if isinstance(v, bool) or not isinstance(v, (numbers.Integral, str)):
            raise ApiError(func, f"{arg}[{k!r}]", f"must be a whole number or an expression string, not {_show(v)}")
        if isinstance(v, numbers.Integral):
            v = _int(func, f"{arg}[{k!r}]", v, -MAX_PARAM, MAX_PARAM)   # the expressions' exact range
        out[k] = str(v) if isinstance(v, int) else v
    return out


def _instance(func: str, arg: str, v: Any, cls: type, what: str):
    if not isinstance(v, cls):
        raise ApiError(func, arg, f"must be {what}, not {_show(v)}")
    return v


# ---------------------------------------------------------------------------- building


def scenario(name_or_path: str | os.PathLike | None = None, *, toml: str | None = None,
             file: str | os.PathLike | None = None, set: Mapping[str, Any] | None = None,
             **fields: Any) -> "Scenario":
    """A scenario from a built-in's name or a file (``name_or_path`` or ``file=``), from TOML
    text (``toml=``), or from keyword arguments written like the file's tables::

        api.scenario(block=[32], grid=[1], arrays={"s": {"space": "shared", "type": "float",
                     "shape": [1024]}}, access=[{"op": "load", "at": "s[lane * 2]"}])

    ``block`` and ``grid`` may be given directly (they go into ``[launch]``). ``set``
    overrides params, as ``--set`` does."""
    overrides = _param_values("scenario", "set", set)
    given = [x is not None for x in (name_or_path, toml, file)] + [bool(fields)]
    if sum(given) != 1:
        raise ApiError("scenario", "", "give one of: a built-in name or file, toml=TEXT, file=PATH, or the "
                       "scenario's fields as keywords (block=, grid=, arrays=, access=, ...)")
    if toml is not None:
        return Scenario(loads(_str("scenario", "toml", toml), source="<toml>", overrides=overrides))
    if name_or_path is not None or file is not None:
        arg, where = ("name_or_path", name_or_path) if name_or_path is not None else ("file", file)
        if not isinstance(where, (str, os.PathLike)):
            raise ApiError("scenario", arg, f"must be a built-in's name or a file's path, not {_show(where)}",
                           "e.g. api.scenario(\"transpose-tile\")")
        try:
            name = os.fspath(where)
        except TypeError:
            name = None
        return Scenario(load(_str("scenario", arg, name), overrides))
    return Scenario(loads(to_toml(fields), source="<keywords>", overrides=overrides))


def to_toml(fields: Mapping[str, Any]) -> str:
    """Scenario fields (as keyword arguments or a dict) written as scenario TOML (tomlkit)."""
    import tomlkit

    if not isinstance(fields, Mapping):
        raise ApiError("to_toml", "fields", f"must be a dict of the scenario's tables, not {_show(fields)}",
                       "e.g. {\"block\": [32], \"grid\": [1], \"arrays\": {...}, \"access\": [...]}")
    data = {}
    for k, v in fields.items():
        if not isinstance(k, str):
            raise ApiError("to_toml", "fields", f"has the key {_show(k)}; a scenario's keys are strings")
        data[k] = _plain(v, k)
    launch = data.pop("launch", {}) or {}
    if not isinstance(launch, dict):
        raise ApiError("scenario", "launch", f"must be a dict with block and grid, not {_show(launch)}",
                       "e.g. launch={\"block\": [32], \"grid\": [1]}")
    launch = dict(launch)
    for k in ("block", "grid"):
        if k in data:
            launch[k] = data.pop(k)
    if launch:
        data["launch"] = launch
    arrays = data.get("arrays") or {}
    if not isinstance(arrays, dict):
        raise ApiError("scenario", "arrays", f"must be a dict of array names to their fields, not {_show(arrays)}",
                       "e.g. arrays={\"src\": {\"type\": \"float\", \"shape\": [1024]}}")
    for name, spec in arrays.items():
        if not isinstance(spec, dict):
            raise ApiError("scenario", f"arrays[{name!r}]", "must be a dict of the array's fields (space, type, "
                           f"shape, ...), not {_show(spec)}")
    access = data.get("access", [])
    if isinstance(access, dict):
        data["access"] = access = [access]
    if not isinstance(access, list) or not all(isinstance(a, dict) for a in access):
        raise ApiError("scenario", "access", "must be a dict or a list of dicts like {'op': 'load', 'at': "
                       f"'src[threadIdx.x]'}}, not {_show(access)}")
    if "format" not in data and any(a.get("op") in KIND_OPS for a in access):
        data["format"] = 3          # cp.async, atomic, tma.load (viz.kinds)
    if "format" not in data and _needs_format_2(arrays):
        data["format"] = 2
    try:
        return tomlkit.dumps(data)
    except (TypeError, ValueError) as err:       # what TOML cannot write (tomlkit's ConvertError is both)
        raise ApiError("scenario", "the fields", f"cannot be written as TOML ({err})") from None


def _plain(v: Any, where: str, depth: int = 0) -> Any:
    """Numbers, strings, lists and dicts only (numpy scalars become Python's), nested at
    most MAX_FIELDS_DEPTH deep."""
    if depth > MAX_FIELDS_DEPTH:
        raise ApiError("scenario", where, f"is nested more than {MAX_FIELDS_DEPTH} levels deep",
                       "a scenario's tables nest a few levels at most")
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, Mapping):
        out = {}
        for k, x in v.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise ApiError("scenario", where, f"has the key {_show(k)}; keys are strings")
            out[str(k)] = _plain(x, f"{where}[{str(k)!r}]", depth + 1)
        return out
    if isinstance(v, (list, tuple)):
        return [_plain(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]
    raise ApiError("scenario", where, f"is {_show(v)}, which cannot be written in a scenario",
                   "use numbers, strings, lists and dicts")


def _needs_format_2(arrays: Mapping) -> bool:
    for spec in arrays.values():
        if isinstance(spec, Mapping) and ("layout" in spec or str(spec.get("swizzle", "")).startswith(
                ("tma:", "Sw<", "Swizzle<"))):
            return True
    return False


# ---------------------------------------------------------------------------- pictures


class Picture:
    """One still: a frame of the animation or a layout map. Shows itself in Jupyter (PNG,
    or SVG with ``prefer="svg"``), and ``save()``-s to .png or .svg."""

    def __init__(self, plan: _export.Plan, settings: _export.Settings, label: str, prefer: str = "png"):
        _instance("Picture", "plan", plan, _export.Plan, "a viz.export.Plan (pictures come from frame() and "
                  "layout_map())")
        _instance("Picture", "settings", settings, _export.Settings, "a viz.export.Settings")
        _str("Picture", "label", label)
        _choice("Picture", "prefer", prefer, _STILLS)
        self._plan, self._settings, self.label = plan, settings, label
        self.prefer = prefer
        self._cache: dict[str, bytes] = {}

    @property
    def size(self) -> tuple[int, int]:
        return self._settings.size

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture (.png or .svg; atomically, as every export)."""
        path = _path("save", path)
        kind = _output_kind(path)
        if kind not in _STILLS:
            raise _export.ExportError(f"{path}: a picture is saved as {_extensions(_STILLS, 'or')}")
        _export.check_settings(self._settings, kind)     # the theme's name (loads Qt: drawing does anyway)
        return _written(path, lambda: _export.write_plan(self._plan, path, self._settings).path)

    def _bytes(self, kind: str) -> bytes:
        if kind not in self._cache:
            with tempfile.TemporaryDirectory(prefix="warpviz-") as tmp:
                self._cache[kind] = self.save(Path(tmp) / f"picture.{kind}").read_bytes()
        return self._cache[kind]

    def png(self) -> bytes:
        return self._bytes("png")

    def svg(self) -> str:
        return self._bytes("svg").decode("utf-8")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(picture)``: the picture's pixels, an (height, width, 3) uint8 RGB array,
        exactly the PNG export's (decoded from the same PNG). A new array each time."""
        import imageio.v3 as iio

        rgb = np.ascontiguousarray(iio.imread(self.png(), extension=".png")[..., :3], dtype=np.uint8)
        return rgb if dtype is None else rgb.astype(dtype, copy=False)

    def _repr_png_(self) -> bytes | None:
        return self.png() if self.prefer == "png" else None

    def _repr_svg_(self) -> str | None:
        return self.svg() if self.prefer == "svg" else None

    def __repr__(self) -> str:
        return f"<warpviz picture {self.label} {self.size[0]}x{self.size[1]}>"


def _output_kind(path: Path) -> str:
    try:
        return _export.output_kind(path)
    except OSError as err:           # a name the system refuses (too long)
        raise _export.ExportError(f"{_short_path(path)}: cannot be written ({err.strerror or err})") from None


def _short_path(path: Path) -> str:
    text = str(path)
    return text if len(text) <= 120 else text[:119] + "…"


def _written(path: Path, write):
    """``write()``, with a failure of the system (permissions, a full disk, a name too long) as
    an ExportError naming the file."""
    try:
        return write()
    except OSError as err:
        raise _export.ExportError(f"{_short_path(path)}: cannot be written ({err.strerror or err}). Check the "
                                  "folder exists and can be written") from None


class Layout(Picture):
    """A layout's logical-to-physical map (``print_layout``-style, coloured by bank).
    ``offsets`` and ``banks`` are numpy arrays (rows x cols); ``repr`` is CuTe's table."""

    def __init__(self, m: LayoutMap, size: tuple[int, int] | None = None, theme: str = "light",
                 scale: float = 1.0, prefer: str | None = None):
        _instance("Layout", "m", m, LayoutMap, "a viz.layout_text.LayoutMap (use api.layout_map)")
        size, theme, scale = _size("Layout", size, none=True), _theme("Layout", theme), _scale("Layout", scale)
        prefer = _choice("Layout", "prefer", prefer, _STILLS, none=True)
        plan, settings = _export.layout_map_plan(m, size, theme, scale)
        # SVG (sharp at any zoom) for small maps; PNG where an SVG of every cell's text gets heavy.
        super().__init__(plan, settings, m.text, prefer or ("svg" if m.rows * m.cols <= 256 else "png"))
        self.map = m

    @property
    def offsets(self) -> np.ndarray:
        return self.map.offsets

    @property
    def banks(self) -> np.ndarray:
        return self.map.banks

    def text(self) -> str:
        return self.map.to_text()

    def __repr__(self) -> str:
        return self.map.to_text()


class Matrix(Picture):
    """An ldmatrix / stmatrix instruction's rows and register fragments (``viz.render.matrix_view``);
    ``repr`` is the same table as ``warpviz matrix`` prints."""

    def __init__(self, m, size: tuple[int, int] | None = None, theme: str = "light", scale: float = 1.0,
                 prefer: str = "svg"):
        from .kinds.ldmatrix import MatrixMap

        _instance("Matrix", "m", m, MatrixMap, "a viz.kinds.ldmatrix.MatrixMap (use Scenario.matrix_map)")
        size, theme, scale = _size("Matrix", size, none=True), _theme("Matrix", theme), _scale("Matrix", scale)
        prefer = _choice("Matrix", "prefer", prefer, _STILLS)
        plan, settings = _export.matrix_map_plan(m, size, theme, scale)
        super().__init__(plan, settings, f"{m.op.text} {m.title}", prefer)
        self.map = m

    def text(self) -> str:
        return self.map.to_text()

    def __repr__(self) -> str:
        return self.map.to_text()


def layout_map(text: str, shape: tuple[int, ...] | None = None, type: str = "half", *,
               size: tuple[int, int] | None = None, theme: str = "light", prefer: str | None = None) -> Layout:
    """A CuTe or Triton layout's map: ``api.layout_map("Sw<3,3,3> o (8,64):(64,1)")``,
    ``api.layout_map("SwizzledSharedLayout(8, 1, 8, [1, 0])", shape=(8, 64))``. ``type`` sets
    the element size (the banks). Without ``size`` the picture writes every number.
    ``prefer`` ("svg" or "png") is how it shows itself (default: SVG up to 256 cells)."""
    _str("layout_map", "text", text)
    if shape is not None:
        if isinstance(shape, str) or not isinstance(shape, (tuple, list)) or not 1 <= len(shape) <= 2:
            raise ApiError("layout_map", "shape", f"must be (rows, cols) or (n,), not {_show(shape)}",
                           "e.g. shape=(8, 64)")
        shape = tuple(_int("layout_map", "shape's extent", n, 1, MAX_EXTENT) for n in shape)
    _str("layout_map", "type", type)
    size, theme = _size("layout_map", size, none=True), _theme("layout_map", theme)
    prefer = _choice("layout_map", "prefer", prefer, _STILLS, none=True)
    return Layout(_layout_map(text, shape, type), size=size, theme=theme, prefer=prefer)


class Video:
    """Frames of a scenario as an animation: shows itself in Jupyter as an HTML5 ``<video>``
    (an MP4 inside the page) and ``save()``-s to .mp4, .webm or .gif."""

    def __init__(self, sc: _Model, settings: _export.Settings, sel: _export.Selection,
                 compare: _Model | None = None, labels: tuple[str, str] | None = None):
        from .trace.detail import TraceSource
        _instance("Video", "sc", sc, (_Model, TraceSource),
                  "a viz.scenario.Scenario or a trace (use Scenario.animation or Trace.animation)")
        _instance("Video", "settings", settings, _export.Settings, "a viz.export.Settings")
        _instance("Video", "sel", sel, _export.Selection, "a viz.export.Selection")
        if compare is not None:
            _instance("Video", "compare", compare, _Model, "a viz.scenario.Scenario or None")
        labels = _labels("Video", labels)
        self._sc, self._settings, self._sel, self._compare, self._labels = sc, settings, sel, compare, labels
        plan = _export.make_plan(sc, settings, sel, compare, labels)      # checks the selection now
        self.pictures = len(plan.steps)
        self.seconds = sum(s.hold for s in plan.steps)
        self._mp4: bytes | None = None

    def save(self, path: str | os.PathLike) -> Path:
        """Write the animation: .mp4, .webm or .gif (atomically, as every export)."""
        path = _path("save", path)
        _output_kind(path)
        return _written(path, lambda: _export.export(self._sc, path, self._settings, self._sel, self._compare,
                                                      self._labels).path)

    def mp4(self) -> bytes:
        if self._mp4 is None:
            with tempfile.TemporaryDirectory(prefix="warpviz-") as tmp:
                self._mp4 = self.save(Path(tmp) / "animation.mp4").read_bytes()
        return self._mp4

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.mp4()).decode("ascii")
        w, h = self._settings.size
        title = getattr(self._sc, "shown_title", None) or getattr(self._sc, "title", "")     # a scenario or a trace
        return (f'<video controls loop width="{min(w, 960)}" title="{html.escape(title)}">'
                f'<source src="data:video/mp4;base64,{data}" type="video/mp4"></video>')

    def __repr__(self) -> str:
        return f"<warpviz animation: {self.pictures} pictures, {self.seconds:g} s>"


# ---------------------------------------------------------------------------- scenario


def _gpu(func: str, device):
    """A GPU description from a slug or a GPU's name (None: the active one); WarpvizError otherwise."""
    from . import gpus

    if device is None:
        return None
    if not isinstance(device, str):
        raise ApiError(func, "device", f"must be a GPU description's slug or a GPU's name, not {_show(device)}")
    d = gpus.by_slug(device)
    if d is None:
        m = gpus.for_device(device)
        d = m.description if m.exact else None
    if d is None:
        raise ApiError(func, "device", f"names no GPU description ({_show(device)}); choose one of "
                                       f"{', '.join(x.slug for x in gpus.descriptions())}")
    return d


class Analysis:
    """The figures of ``warpviz analyze``: ``metrics`` (Nsight Compute's names), ``accesses``
    (one dict per access; ``access_figures``: the same as typed records), ``json()`` (the
    ``--json`` document), ``table()`` (the text)."""

    def __init__(self, sc: _Model, device: str | None = None):
        from .engine import analyze
        from .report import to_json, to_table

        if isinstance(sc, Scenario):
            sc = sc.model
        _instance("Analysis", "sc", sc, _Model, "a scenario (use Scenario.analyze)")
        self._an = analyze(sc, device=_gpu("Analysis", device))
        self._json = to_json(self._an)
        self._table = to_table(self._an)

    @property
    def metrics(self) -> dict[str, int]:
        return dict(self._json["metrics"])

    @property
    def accesses(self) -> list[dict]:
        return list(self._json["accesses"])

    @property
    def access_figures(self) -> list[AccessFigures]:
        """``accesses`` as typed records (``viz.access_figures.AccessFigures``: one attribute per
        key, ``None`` where the access has no such figure; ``to_dict()`` is its JSON object)."""
        return list(self._an.per_access())

    def json(self) -> dict:
        return json.loads(json.dumps(self._json))

    def table(self) -> str:
        return self._table

    def metrics_frame(self) -> "pandas.DataFrame":
        """The figures as a pandas DataFrame: one row per metric (the index: Nsight Compute's
        name), one column ``value``. Needs pandas (not a warpviz dependency)."""
        pd = _pandas(f"{type(self).__name__}.metrics_frame()")
        names = list(self._json["metrics"])
        return pd.DataFrame({"value": [self._json["metrics"][n] for n in names]},
                            index=pd.Index(names, name="metric"))

    def to_dataframe(self) -> "pandas.DataFrame":
        """``accesses`` as a pandas DataFrame: one row per access (a scenario's indexed by its
        ``index``; a trace's memory instructions by row, ``number`` a column), one column per field (``op``, ``array``, ``requests``, ``sectors``,
        ``wavefronts``, ``bank_conflicts``...; a field an access does not have is missing
        there). Needs pandas (not a warpviz dependency)."""
        pd = _pandas(f"{type(self).__name__}.to_dataframe()")
        frame = pd.DataFrame(self.accesses)
        return frame.set_index("index") if "index" in frame.columns else frame

    def __getitem__(self, metric: str) -> int:
        try:
            return self._json["metrics"][metric]
        except (KeyError, TypeError):
            raise UnknownMetric("Analysis", "[metric]", f"{_show(metric)} is not one of the figures",
                                f"the figures are: {', '.join(self._json['metrics'])}") from None

    def __repr__(self) -> str:
        return self._table

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self._table)}</pre>"


def _pandas(func: str) -> Any:
    """pandas, or an ImportError saying what needs it and how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"{func} needs pandas, which warpviz does not install: pip install pandas (the figures "
                          "are also plain dicts and lists without it: .metrics, .accesses)") from None
    return pandas


def _labels(func: str, labels: Any) -> tuple[str, str] | None:
    if labels is None:
        return None
    if isinstance(labels, str) or not isinstance(labels, (tuple, list)) or len(labels) != 2 \
            or not all(isinstance(x, str) for x in labels):
        raise ApiError(func, "labels", f"must be two strings (left, right), not {_show(labels)}",
                       "e.g. labels=(\"plain\", \"padded\")")
    return labels[0], labels[1]


def _spec(func: str, arg: str, v: Any, none: bool = False) -> str | None:
    """A selection as ``warpviz export`` takes it: a number (1-based instruction) or its text."""
    if v is None and none:
        return None
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return str(_int(func, arg, v))
    return _str(func, arg, v)


class Scenario:
    """A loaded, validated scenario (``model`` is the ``viz.scenario.Scenario``)."""

    def __init__(self, model: _Model):
        self.model = _instance("Scenario", "model", model, _Model, "a viz.scenario.Scenario (use api.scenario)")

    @property
    def title(self) -> str:
        return self.model.shown_title

    @property
    def instructions(self) -> int:
        """Warp instructions per warp (numbered from 1 on screen and in ``frame()``)."""
        return len(self._instructions())

    def _instructions(self):
        if not hasattr(self, "_instrs"):
            self._instrs = self.model.instructions()
        return self._instrs

    def _warp(self, func: str, block: Any, warp: Any) -> tuple[int, int]:
        """A block and a warp of the launch (out of range: the ExportError `warpviz export` gives)."""
        launch = self.model.launch
        block = _int(func, "block", block, 0, MAX_BLOCK_INDEX)
        warp = _int(func, "warp", warp, 0, MAX_WARP_INDEX)
        _export.parse_range(str(block), "block", 0, launch.blocks - 1)
        _export.parse_range(str(warp), "warp", 0, launch.warps_per_block - 1)
        return block, warp

    def with_params(self, **params: Any) -> "Scenario":
        return Scenario(with_params(self.model, _param_values("with_params", "params", params)))

    def analyze(self, device: str | None = None) -> Analysis:
        """The figures on ``device``: a GPU description's slug or the GPU's name
        (``"nvidia-h200"``, ``"NVIDIA H200"``; ``viz.gpus.descriptions()`` lists them); default the
        active one (``$WARPVIZ_GPU``, else the H100)."""
        return Analysis(self.model, device)

    def _settings(self, func, size, theme, scale, captions=True, **kw) -> _export.Settings:
        return _export.Settings(size=_size(func, size), theme=_theme(func, theme), scale=_scale(func, scale),
                                captions=_bool(func, "captions", captions), **kw)

    def frame(self, instruction: int = 1, frame: int | str = "last", *, block: int = 0, warp: int = 0,
              size: tuple[int, int] = DEFAULT_SIZE, theme: str = "light", scale: float = 1.0,
              captions: bool = True, prefer: str = "png") -> Picture:
        """One frame of one warp instruction: ``instruction`` from 1 as on screen, ``frame``
        from 1, or ``first``, ``last`` (the summary) or a kind (``wavefront``...)."""
        instruction = _spec("frame", "instruction", instruction)
        frame = _spec("frame", "frame", frame)
        block, warp = self._warp("frame", block, warp)
        prefer = _choice("frame", "prefer", prefer, _STILLS)
        settings = self._settings("frame", size, theme, scale, captions)
        sel = _export.selection(self.model, str(instruction), str(block), str(warp), frame, names=_NAMES)
        plan = _export.make_plan(self.model, settings, sel, still=True)
        plan = _export.Plan(plan.steps[:1], plan.fps, plan.labels)
        return Picture(plan, settings, f"{self.model.name or self.model.title}: instruction {instruction}, "
                       f"frame {frame}", prefer)

    def frames(self, instruction: int = 1, *, block: int = 0, warp: int = 0) -> list[str]:
        """The captions of an instruction's frames, in order (frame 1 first)."""
        from .frames import frames as frames_of
        from .warp import warp_detail

        k, = _export.parse_range(str(_int("frames", "instruction", instruction, 1, MAX_INSTRUCTION)), "instruction", 0,
                                 self.instructions - 1, base=1)
        block, warp = self._warp("frames", block, warp)
        d = warp_detail(self.model, self._instructions()[k], block, warp)
        return [f.caption for f in frames_of(d)]

    def animation(self, instructions: str | int = "all", frames: str | None = None, *, block: int = 0,
                  warp: int = 0, size: tuple[int, int] = DEFAULT_SIZE, fps: float = 10, hold: float = 1.0,
                  theme: str = "light", scale: float = 1.0, title_card: bool = False,
                  compare: "Scenario | None" = None, labels: tuple[str, str] | None = None) -> Video:
        """The animation of some instructions (``"5-6"``, ``3`` or ``"all"``); ``compare`` puts
        a second scenario beside it, as ``warpviz export --compare`` does."""
        instructions = _spec("animation", "instructions", instructions)
        frames = _spec("animation", "frames", frames, none=True)
        block, warp = self._warp("animation", block, warp)
        fps = _real("animation", "fps", fps, 1, 240)
        hold = _real("animation", "hold", hold, 0, 600)
        title_card = _bool("animation", "title_card", title_card)
        if compare is not None:
            _instance("animation", "compare", compare, Scenario, "another api.Scenario or None")
        labels = _labels("animation", labels)
        settings = self._settings("animation", size, theme, scale, fps=fps, hold=hold, title_card=title_card)
        sel = _export.selection(self.model, instructions, str(block), str(warp), frames, names=_NAMES)
        return Video(self.model, settings, sel, compare.model if compare is not None else None, labels)

    def layout_map(self, array: str, *, size: tuple[int, int] | None = None, theme: str = "light",
                   prefer: str | None = None) -> Layout:
        """The map of one array's layout (any of them: pad, swizzle, CuTe or Triton)."""
        return Layout(array_map(self.model, _str("layout_map", "array", array)), size=size, theme=theme,
                      prefer=prefer)

    def matrix_map(self, instruction: int | None = None, *, block: int = 0, warp: int = 0,
                   size: tuple[int, int] | None = None, theme: str = "light", prefer: str = "svg") -> "Matrix":
        """An ldmatrix / stmatrix instruction (1-based; default the first one) of one warp: who
        gives each 16-byte row, its banks and wavefront, and which lane holds each element."""
        from .kinds.ldmatrix import matrix_map
        from .warp import warp_detail

        instrs = self._instructions()
        if instruction is not None:
            instruction = _int("matrix_map", "instruction", instruction, 1, MAX_INSTRUCTION)
        block, warp = self._warp("matrix_map", block, warp)
        size, theme = _size("matrix_map", size, none=True), _theme("matrix_map", theme)
        prefer = _choice("matrix_map", "prefer", prefer, _STILLS)
        if instruction is None:
            pick = next((i for i in instrs if self.model.accesses[i.access].matrix is not None), None)
        else:
            pick = instrs[instruction - 1] if 1 <= instruction <= len(instrs) else None
        if pick is None or self.model.accesses[pick.access].matrix is None:
            raise _export.ExportError(f"instruction {instruction}: not an ldmatrix / stmatrix instruction"
                                      if instruction is not None else "no access is ldmatrix or stmatrix")
        return Matrix(matrix_map(warp_detail(self.model, pick, block, warp)), size=size, theme=theme, prefer=prefer)

    def __repr__(self) -> str:
        arrays = "; ".join(a.describe() for a in self.model.arrays)
        return f"<warpviz scenario {self.model.name or self.model.source}: {self.model.title} ({arrays})>"


MAX_MAP_ELEMENTS = 1 << 14


def array_map(sc: _Model, name: str) -> LayoutMap:
    """Where each element of array ``name`` lives: its layout evaluated on every (row, col)."""
    from .lanes import Constants, Evaluator, Lanes, Space

    if isinstance(sc, Scenario):
        sc = sc.model
    _instance("array_map", "sc", sc, _Model, "a scenario")
    _str("array_map", "name", name)
    names = [a.name for a in sc.arrays]
    if name not in names:
        raise ScenarioError(sc.source, "", f"no array {name!r}", f"arrays: {', '.join(names)}")
    arr = sc.array(name)
    n = math.prod(arr.shape)
    if n > MAX_MAP_ELEMENTS:
        raise ScenarioError(sc.source, f"arrays.{name}", f"{n:,} elements are too many for a map (at most "
                            f"{MAX_MAP_ELEMENTS:,})", "draw a smaller tile: api.layout_map(text, shape=...)")
    if len(arr.shape) == 2:
        rows, cols = arr.shape
        space = Space(ChainMap({"row": Lanes(b=np.arange(rows).reshape(-1, 1)),
                                "col": Lanes(t=np.arange(cols).reshape(1, -1))}, Constants(sc.params)), (rows, cols))
    else:
        rows, cols = 1, arr.shape[0]
        space = Space(ChainMap({"col": Lanes(t=np.arange(cols).reshape(1, -1))}, Constants(sc.params)), (1, cols))
    value, faults = Evaluator(space).evaluate(arr.layout)
    if faults:
        raise LayoutError(f"array {name}: {faults[0].problem}")
    text = arr.swizzle.text if not arr.swizzle.is_identity else "row-major"
    if arr.pad:
        text += f", pad {arr.pad}"
    return LayoutMap(f"{name}: {text}", arr.swizzle.kind, arr.type.name, arr.type.size,
                     np.array(value.full((rows, cols))), len(arr.shape) == 1)


# ---------------------------------------------------------------------------- traces


class TraceFailed(WarpvizError, RuntimeError):
    """A trace that could not be made. ``str(err)`` is the paragraph ``warpviz trace`` prints
    (file or argument, problem, fix); ``kind`` says what went wrong: ``launch`` (a bad launch,
    kernel name, argument or PTX), ``missing`` (Triton, PyTorch, PyCUDA, a GPU, nvcc...),
    ``fault`` (the kernel failed on the GPU), ``compile``, ``triton`` (Triton refused the
    kernel) or ``unexpected`` (a bug: the original exception is ``__cause__``)."""

    def __init__(self, message: str, kind: str = "launch"):
        self.kind = kind
        super().__init__(message)


class TraceAnalysis(Analysis):
    """The figures of ``warpviz analyze`` for a trace: ``metrics`` (the ten, Nsight Compute's
    names), ``other_metrics`` (atomics, LDSM, LDGSTS...), ``accesses`` (one dict per static
    memory instruction), ``lines`` (per source line, the worst first), ``json()``, ``table()``."""

    def __init__(self, an: Any):
        from .trace.analysis import TraceAnalysis as _Model, to_json, to_table

        _instance("TraceAnalysis", "an", an, _Model, "a trace's analysis (use api.open_trace(...).analysis())")
        self._an = an
        self._json = to_json(an)
        self._table = to_table(an)

    @property
    def other_metrics(self) -> dict[str, int]:
        return dict(self._json.get("other_metrics") or {})

    @property
    def lines(self) -> list[dict]:
        return list(self._json.get("lines") or [])


class Trace:
    """A recorded trace (``.wvtrace``): ``analysis()``, ``picture(i=...)``, ``animation()``,
    ``save(path)``; shows itself in Jupyter (its figures and its first warp's first memory
    instruction). ``validation`` holds the comparison with Nsight Compute when it was recorded
    with ``validate=True`` (``match``: all ten equal)."""

    def __init__(self, trace: Any, recording: Any = None, keep: tempfile.TemporaryDirectory | None = None):
        from .trace.detail import TraceSource
        from .gpu.front import Recording
        from .trace.tracefile import Trace as _Model

        _instance("Trace", "trace", trace, _Model, "a loaded trace (use api.open_trace or api.trace_launch)")
        if recording is not None:
            _instance("Trace", "recording", recording, Recording, "the recording that made the trace, or None")
        if keep is not None and not isinstance(keep, tempfile.TemporaryDirectory):
            raise ApiError("Trace", "keep", f"must be a tempfile.TemporaryDirectory or None, not {_show(keep)}")
        self.trace = trace
        self.recording = recording
        self._keep = keep                   # the temporary folder of an unsaved trace (and its launch folder)
        self.source = TraceSource(trace)
        self._analysis = None

    @property
    def path(self) -> Path | None:
        return self.trace.path

    @property
    def header(self) -> dict:
        return self.trace.header

    @property
    def kernel(self) -> str:
        return str(self.header.get("kernel", ""))

    @property
    def title(self) -> str:
        return self.source.title

    @property
    def records(self) -> int:
        return self.trace.records

    @property
    def complete(self) -> bool:
        """Every warp-level execution of every memory instruction of every block recorded
        (false for a partial recording, and where the kernel ran instructions warpviz does
        not record: ``unrecorded``)."""
        return bool(self.header.get("complete"))

    @property
    def unrecorded(self) -> list[dict] | None:
        """The memory instructions warpviz does not record that the kernel ran (instruction,
        ptx_line, file, line, executed, why), as ``analyze --json`` gives them; None for a
        trace written before warpviz listed them (unknown)."""
        from .trace.analysis import unrecorded_json

        return unrecorded_json(self.header)

    @property
    def validation(self) -> dict | None:
        return None if self.recording is None else self.recording.validation()

    @property
    def match(self) -> bool | None:
        return None if self.recording is None else self.recording.match

    def analysis(self) -> TraceAnalysis:
        if self._analysis is None:
            from .trace.analysis import analyze_trace

            self._analysis = TraceAnalysis(analyze_trace(self.trace))
        return self._analysis

    def replay(self, array: str | None = None, layout: str = "pad:1", shape: tuple[int, int] | None = None,
               elem_bytes: int | None = None, byte_range: tuple[int, int] | None = None) -> "Trace":
        """This trace counted again with one ``__shared__`` array laid out by ``layout``
        (``pad:N``, ``xor``, ``xor:MASK``, ``swizzle:B,M,S``, ``diag``, ``bitrev``, ``expr:EXPR``),
        as ``warpviz replay`` does: a Trace like any other (``analysis()``, ``picture()``, ``save()``),
        with ``replayed`` (the array, layout, shared memory and blocks per SM before and after).
        Raises ``viz.trace.replay.ReplayError`` (a ``TraceError``) with the problem and the fix."""
        from .trace.replay import MAX_ELEMENTS, ReplayError, replay

        def whole(name, v, lo, hi):
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ReplayError("Trace.replay", name, f"{name} must be a whole number in {lo}..{hi}, not "
                                  f"{_show(v)}", f"give {name} as an int")
            return v

        if array is not None and not isinstance(array, str):
            raise ReplayError("Trace.replay", "array", f"array must be a name (str), not {_show(array)}",
                              "give the __shared__ array's name")
        if not isinstance(layout, str):
            raise ReplayError("Trace.replay", "layout", f"layout must be a str, not {_show(layout)}", "e.g. \"pad:1\"")
        if shape is not None:
            if not isinstance(shape, (tuple, list)) or len(shape) != 2:
                raise ReplayError("Trace.replay", "shape", f"shape must be (rows, cols), not {_show(shape)}",
                                  "e.g. shape=(32, 32)")
            shape = (whole("rows", shape[0], 1, MAX_ELEMENTS), whole("cols", shape[1], 1, MAX_ELEMENTS))
        if elem_bytes is not None:
            elem_bytes = whole("elem_bytes", elem_bytes, 1, 256)
        if byte_range is not None:
            if not isinstance(byte_range, (tuple, list)) or len(byte_range) != 2:
                raise ReplayError("Trace.replay", "byte_range", f"byte_range must be (start, end), not "
                                  f"{_show(byte_range)}", "e.g. byte_range=(1024, 5120)")
            lo, hi = whole("start", byte_range[0], 0, 1 << 24), whole("end", byte_range[1], 1, 1 << 24)
            if lo >= hi:
                raise ReplayError("Trace.replay", "byte_range", f"start {lo} must be below end {hi}", "")
            byte_range = (lo, hi)
        rp = replay(self.trace, array, shape, elem_bytes, layout, byte_range)
        out = Trace(rp.trace)
        out.replayed = rp.summary()
        out._replay = rp
        return out

    def suggest(self, array: str | None = None, top: int = 5, predict: bool = True) -> dict:
        """What ``warpviz suggest --json`` prints: the arrays whose bank conflicts cost most and
        the best layout of each family for them (wavefronts, extra shared memory, blocks per SM,
        predicted time, the CUDA / Triton source change)."""
        from .trace.replay import ReplayError, suggest

        if array is not None and not isinstance(array, str):
            raise ReplayError("Trace.suggest", "array", f"array must be a name (str), not {_show(array)}", "")
        if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= 20:
            raise ReplayError("Trace.suggest", "top", f"top must be a whole number in 1..20, not {_show(top)}", "")
        from .gpu.front import predict_trace
        from .trace import TraceError

        def seconds(rp):
            try:
                t = self.trace if rp is None else rp.trace
                return float(predict_trace(t, resources=None if rp is None else
                                           {"shared_bytes": rp.shared_after}).seconds)
            except (TraceError, ValueError, KeyError, ZeroDivisionError):
                return None
        return suggest(self.trace, array, None, None, None, seconds if predict else None, top)

    def _block(self, func: str, block: Any) -> int:
        if block is not None:
            return _int(func, "block", block, 0, max(self.source.blocks - 1, 0))
        return self.source.recorded_blocks[0] if self.source.recorded_blocks else 0

    def _settings(self, func, size, theme, scale, captions=True, **kw) -> _export.Settings:
        return _export.Settings(size=_size(func, size), theme=_theme(func, theme), scale=_scale(func, scale),
                                captions=_bool(func, "captions", captions), **kw)

    def picture(self, i: int = 1, frame: int | str = "last", *, block: int | None = None, warp: int = 0,
                size: tuple[int, int] = DEFAULT_SIZE, theme: str = "light", scale: float = 1.0,
                captions: bool = True, prefer: str = "png") -> Picture:
        """Memory instruction ``i`` (from 1, in the warp's own order of execution) of warp
        ``warp`` of block ``block`` (default: the first recorded block): its last frame, or
        ``frame`` (from 1, ``first``, ``last`` or a kind such as ``wavefront``)."""
        i = _spec("picture", "i", i)
        frame = _spec("picture", "frame", frame)
        b = self._block("picture", block)
        warp = _int("picture", "warp", warp, 0, max(self.source.warps - 1, 0))
        prefer = _choice("picture", "prefer", prefer, _STILLS)
        settings = self._settings("picture", size, theme, scale, captions)
        sel = _export.trace_selection(self.source, str(i), str(b), str(warp), str(frame), names=_NAMES)
        plan = _export.make_plan(self.source, settings, sel, still=True)
        plan = _export.Plan(plan.steps[:1], plan.fps, plan.labels)
        return Picture(plan, settings, f"{self.kernel}: block {b} warp {warp}, instruction {i}, frame {frame}",
                       prefer)

    def animation(self, instructions: str | int = "all", frames: str | None = None, *, block: int | None = None,
                  warp: int = 0, size: tuple[int, int] = DEFAULT_SIZE, fps: float = 10, hold: float = 1.0,
                  theme: str = "light", scale: float = 1.0) -> Video:
        """The animation of one warp's memory instructions (``"1-4"``, ``3`` or ``"all"``)."""
        instructions = _spec("animation", "instructions", instructions)
        frames = _spec("animation", "frames", frames, none=True)
        b = self._block("animation", block)
        warp = _int("animation", "warp", warp, 0, max(self.source.warps - 1, 0))
        fps = _real("animation", "fps", fps, 1, 240)
        hold = _real("animation", "hold", hold, 0, 600)
        settings = self._settings("animation", size, theme, scale, fps=fps, hold=hold)
        sel = _export.trace_selection(self.source, str(instructions), str(b), str(warp), frames, names=_NAMES)
        return Video(self.source, settings, sel)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the trace to ``path`` (a ``.wvtrace``; atomically)."""
        from .gpu.front import save_trace_copy as save_copy

        path = _path("save", path)
        if not path.name.lower().endswith(".wvtrace"):
            raise _export.ExportError(f"{path}: a trace is saved as a .wvtrace file")
        if self.trace.path is None or not Path(self.trace.path).exists():
            from .trace import tracefile

            tracefile.save(self.trace, path)
            return path
        return save_copy(self.trace.path, path)

    def __repr__(self) -> str:
        v = "" if self.match is None else (", all ten equal Nsight Compute" if self.match else
                                            ", differs from Nsight Compute")
        return (f"<warpviz trace {self.kernel}: {self.records:,} records, blocks {self.source.recorded_text()}"
                f"{'' if self.complete else ' (partial)'}{v}>")

    def _repr_html_(self) -> str:
        h = self.header
        gpu = (h.get("gpu") or {}).get("name", "") if isinstance(h.get("gpu"), dict) else ""
        rows = [("kernel", h.get("kernel_signature") or self.kernel), ("GPU", gpu),
                ("records", f"{self.records:,}"), ("blocks recorded", self.source.recorded_text())]
        if self.match is not None:
            rows.append(("Nsight Compute", "all ten equal" if self.match else "differs (see .validation)"))
        table = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                        for k, v in rows)
        img = ""
        try:
            data = base64.b64encode(self.picture(1).png()).decode("ascii")
            img = f'<img src="data:image/png;base64,{data}" style="max-width:100%"/>'
        except Exception:  # noqa: BLE001 - a trace with nothing to draw still shows its figures
            img = ""
        return (f"<b>{html.escape(self.title)}</b><table>{table}</table>"
                f"<pre>{html.escape(self.analysis().table())}</pre>{img}")


def open_trace(path: str | os.PathLike) -> Trace:
    """A ``.wvtrace`` file, or a shipped trace by its name (``open_trace("transpose_pad")``; the
    names: ``warpviz list --traces``). No GPU needed. Raises ``viz.trace.TraceError`` for a bad
    file."""
    from .assets import named_trace
    from .trace import tracefile

    p = _path("open_trace", path)
    try:
        missing = not isinstance(path, os.PathLike) and not p.exists()
    except (OSError, ValueError):        # a name too long for the system: tracefile.load says so
        missing = False
    if missing:
        p = named_trace(str(path)) or p
    return Trace(tracefile.load(p))


def _quiet(_text: str) -> None:
    """The pipeline's notes go to the result, not to stderr (``Trace.recording.note``)."""


def _blocks(blocks, launch) -> list[int] | None:
    if blocks is None:
        return None
    from .gpu.front import parse_blocks

    if isinstance(blocks, (int, np.integer)) and not isinstance(blocks, bool):
        blocks = str(_int("trace", "blocks", blocks, 0, MAX_BLOCK_INDEX))
    elif not isinstance(blocks, str):
        blocks = ",".join(str(_int("trace", "blocks", b, 0, MAX_BLOCK_INDEX)) for b in blocks)
    return parse_blocks(blocks, launch.blocks, launch.path)


def _launch_dims(func: str, grid: Any, block: Any, shared_bytes: Any) -> None:
    """A 5,000-digit ``grid``, ``block`` or ``shared_bytes`` given from Python: TraceFailed
    naming it, before anything converts it (the launch file's checks give the ranges of the
    rest)."""
    for arg, v in (("grid", grid), ("block", block), ("shared_bytes", shared_bytes)):
        for k, n in enumerate(v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(n, numbers.Integral) and not isinstance(n, bool) and int(n).bit_length() > 63:
                where = arg if not isinstance(v, (tuple, list)) else f"{arg}[{k}]"
                raise TraceFailed(f"{func}(): {where} is {shown_value(int(n))}, past any launch CUDA takes",
                                  "launch")


def _failed(err: BaseException, launch=None) -> TraceFailed:
    """``err`` as the one exception the tracing functions raise (the CLI's paragraph)."""
    from .gpu.front import GpuUnavailable, KernelFault, failure_text as failure_message
    from .toolchain.compile import CompileError
    from .trace import TraceError
    from .trace.pyargs import ArgumentError

    if isinstance(err, TraceFailed):
        return err
    if isinstance(err, (ArgumentError, ApiError)):
        return TraceFailed(str(err), "launch")
    from .fileio import NotOursError, WriteError

    if isinstance(err, (NotOursError, WriteError)):       # keep_folder holds the user's files; a full disk
        return TraceFailed(f"keep_folder: {err}" if isinstance(err, NotOursError) else str(err), "launch")
    text = failure_message(err, launch)
    kind = ("launch" if isinstance(err, TraceError) else "missing" if isinstance(err, GpuUnavailable)
            else "fault" if isinstance(err, KernelFault) else "compile" if isinstance(err, CompileError)
            else "unexpected")
    if text is None:
        text = f"warpviz could not trace the kernel: {type(err).__name__}: {str(err)[:400]}"
    return TraceFailed(text, kind)


def _record(launch_path: Path, *, blocks=None, validate: bool = False, out=None, keep=None,
            extra_sources: Mapping[str, str] | None = None) -> Trace:
    import dataclasses

    from .gpu.front import Cancelled, TraceRequest, record
    from .trace.launch import load_launch

    launch = None
    try:
        launch = load_launch(launch_path)
        if extra_sources:
            launch = dataclasses.replace(launch, extra_sources=dict(extra_sources))
        chosen = _blocks(blocks, launch)
        if out is None:
            keep = keep or tempfile.TemporaryDirectory(prefix="warpviz-trace-")
            target = Path(keep.name) / f"{launch.name}.wvtrace"
        else:
            target = Path(out)
        rec = record(TraceRequest(launch, out=target, validate=validate, blocks=chosen), log=_quiet)
    except Cancelled as err:
        raise TraceFailed(f"{launch_path}: the trace was cancelled", "launch") from err
    except Exception as err:  # noqa: BLE001 - every failure is the CLI's paragraph (the cause is chained)
        raise _failed(err, launch) from err
    return Trace(rec.trace, rec, keep)


def trace_launch(path: str | os.PathLike, *, blocks: Blocks = None, validate: bool = False,
                 out: str | os.PathLike | None = None) -> Trace:
    """``warpviz trace PATH`` from Python: the launch file's kernel run once on the GPU with
    every memory instruction recorded. ``blocks``: linear block indices to record (``"0-3"``,
    ``[0, 7]``); ``validate``: also compare the ten metrics with Nsight Compute on the plain
    kernel; ``out``: where to write the ``.wvtrace`` (default: a temporary file, see
    ``Trace.save``). Raises ``TraceFailed``."""
    return _record(_path("trace_launch", path), blocks=blocks, validate=_bool("trace_launch", "validate", validate),
                   out=None if out is None else _path("trace_launch", out))


def trace_ptx(ptx: str, kernel: str, grid: Dims = (1,), block: Dims = (32,), args: Sequence[Any] = (),
              shared_bytes: int = 0, *, title: str = "", sources: Mapping[str, str] | None = None,
              blocks: Blocks = None, validate: bool = False,
              out: str | os.PathLike | None = None, keep_folder: str | os.PathLike | None = None) -> Trace:
    """Trace a kernel given as PTX text (Triton's ``compiled.asm["ptx"]``, a CuPy or Numba
    kernel's PTX, ``nvcc -ptx``): ``kernel`` is its entry (or C++ name), ``args`` one value per
    parameter of the entry, in order: an array (NumPy, CuPy, PyTorch, on the GPU or not: its
    contents are the buffer), a number (typed by the parameter) or None (a NULL pointer).
    ``sources``: {file name: text} to carry in the trace (the Python file of a kernel whose PTX
    has line information). The launch is written as a launch folder (``keep_folder``, else a
    temporary one; see ``viz.trace.pyargs``) and traced as ``trace_launch`` traces it.
    ``keep_folder`` may be new, empty, or hold other files: every argument is checked
    before anything is written there, and a ``NAME.ptx``, ``argN.npy`` or
    ``NAME.launch.toml`` already in it is replaced only when warpviz wrote it (its manifest
    ``.warpviz-written.json`` says so, content unchanged), else ``TraceFailed`` and nothing
    is written. Raises ``TraceFailed``."""
    from .trace.pyargs import write_launch_folder

    _launch_dims("trace_ptx", grid, block, shared_bytes)
    keep = None
    try:
        if keep_folder is not None:
            folder = Path(keep_folder)
        else:
            keep = tempfile.TemporaryDirectory(prefix="warpviz-trace-")
            folder = Path(keep.name) / "launch"
        name = _safe_name(kernel)
        launch_path = write_launch_folder(folder, ptx, kernel, grid, block, args, shared_bytes, title, name)
    except Exception as err:  # noqa: BLE001
        raise _failed(err) from err
    return _record(launch_path, blocks=blocks, validate=validate, out=out, keep=keep, extra_sources=sources)


def _safe_name(kernel: str) -> str:
    import re

    base = re.sub(r"[^A-Za-z0-9_]+", "_", str(kernel).split("(")[0].split("<")[0])[-60:].strip("_")
    return base or "kernel"


def trace_triton(jit_fn: Any, grid: Dims | Callable[..., Any], args: Sequence[Any] = (), *, blocks: Blocks = None,
                 validate: bool = False,
                 out: str | os.PathLike | None = None, keep_folder: str | os.PathLike | None = None,
                 **meta: Any) -> Trace:
    """Trace what Triton launches for ``jit_fn[grid](*args, **meta)``: the kernel is compiled
    by Triton itself (its cache, its choices: ``num_warps``, ``num_stages``, the shared memory,
    the scratch pointers it adds), and that PTX is traced with ``args``' contents (PyTorch
    tensors are read as they are). ``grid`` as Triton takes it (a tuple, or a function of the
    arguments). Needs Triton, PyTorch and a GPU; without them, ``TraceFailed`` says which is
    missing."""
    try:
        compiled, bound, grid3 = _triton_compile(jit_fn, grid, args, meta)
        ptx, name, block, shared, values, sources = triton_launch(compiled, bound, grid3, jit_fn)
    except Exception as err:  # noqa: BLE001
        raise _failed(err) from err
    return trace_ptx(ptx, name, grid3, block, values, shared, title=f"Triton {name}", sources=sources,
                     blocks=blocks, validate=validate, out=out, keep_folder=keep_folder)


def _need(module: str, why: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise TraceFailed(f"trace_triton needs {why}, which is not installed here ({err}): install it "
                          f"(pip install {module})", "missing") from None


def _triton_compile(jit_fn, grid, args, meta):
    """(the compiled kernel, {argument: value}, the grid as three extents)."""
    import inspect

    _need("triton", "Triton")
    torch = _need("torch", "PyTorch (Triton finds the GPU through it)")
    if not torch.cuda.is_available():
        raise TraceFailed("trace_triton needs an NVIDIA GPU that PyTorch can use; torch.cuda.is_available() is False "
                          "here", "missing")
    from triton.runtime.jit import JITFunction

    if not isinstance(jit_fn, JITFunction):
        inner = getattr(jit_fn, "fn", None)
        hint = (" (an @triton.autotune or @triton.heuristics kernel: pass the function underneath, kernel.fn, and "
                "the configuration's meta-parameters, as the autotuner would choose them)" if inner is not None else "")
        raise TraceFailed(f"trace_triton takes a @triton.jit function, not {type(jit_fn).__name__}{hint}", "launch")
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise TraceFailed("args must be the kernel's arguments as a tuple or list", "launch")
    args = tuple(args)
    names = list(jit_fn.arg_names)
    params = {k: v for k, v in meta.items() if k in names}
    try:
        bound = inspect.signature(jit_fn.fn).bind(*args, **params)
    except TypeError as err:
        raise TraceFailed(f"{jit_fn.__name__ if hasattr(jit_fn, '__name__') else 'the kernel'}: the arguments do "
                          f"not fit its parameters ({err})", "launch") from None
    bound.apply_defaults()
    bound = dict(bound.arguments)
    g = grid(dict(bound, **meta)) if callable(grid) else grid
    g = (g,) if isinstance(g, int) else tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3:
        raise TraceFailed(f"the grid must have 1 to 3 extents, not {g!r}", "launch")
    g3 = g + (1,) * (3 - len(g))
    try:
        compiled = jit_fn.warmup(*args, grid=g, **meta)
    except TraceFailed:
        raise
    except Exception as err:  # noqa: BLE001 - Triton's own errors: its message, shortened
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise TraceFailed(f"Triton could not compile {getattr(jit_fn, '__name__', 'the kernel')}: "
                          f"{type(err).__name__}: {first[:300]}", "triton") from err
    if hasattr(compiled, "result"):             # an asynchronous compile
        compiled = compiled.result()
    return compiled, bound, g3


def triton_launch(compiled, bound: dict, grid3, jit_fn=None):
    """What Triton launches for a compiled kernel (``CompiledKernel``): (PTX, entry name,
    block, dynamic shared memory, the parameter values in order with the scratch pointers,
    {file name: text} of the kernel's Python file). Checks what warpviz cannot trace yet
    (clusters, tensor descriptors)."""
    import inspect

    import numpy as np

    from .trace.pyargs import triton_params

    md, asm = getattr(compiled, "metadata", None), getattr(compiled, "asm", None)
    if md is None or not isinstance(asm, Mapping) or not isinstance(asm.get("ptx"), (str, bytes)):
        raise TraceFailed(f"triton_launch(): compiled must be a Triton CompiledKernel (with .metadata and "
                          f".asm[\"ptx\"]), not {_show(compiled)}", "launch")
    if not isinstance(bound, Mapping):
        raise TraceFailed(f"triton_launch(): bound must be a dict of the kernel's arguments, not {_show(bound)}",
                          "launch")
    if (isinstance(grid3, (str, bytes)) or not isinstance(grid3, (tuple, list)) or len(grid3) != 3
            or not all(isinstance(g, numbers.Integral) and not isinstance(g, bool) and 1 <= g < 2**31 for g in grid3)):
        raise TraceFailed(f"triton_launch(): grid3 must be three positive whole numbers, not {_show(grid3)}",
                          "launch")
    ptx = asm["ptx"]
    if isinstance(ptx, bytes):
        ptx = ptx.decode("utf-8", "replace")
    name = str(md.name)
    if int(getattr(md, "num_ctas", 1) or 1) != 1 or any(int(c) != 1 for c in (getattr(md, "cluster_dims", None)
                                                                              or (1, 1, 1))):
        raise TraceFailed(f"{name}: Triton launches it with thread-block clusters (num_ctas > 1), which warpviz does "
                          "not trace yet: use num_ctas=1", "launch")
    src = getattr(compiled, "src", None)
    if src is None or not isinstance(getattr(src, "signature", None), dict):
        raise TraceFailed(f"{name}: this Triton's compiled kernel does not say its signature (compiled.src), so "
                          "warpviz cannot tell which arguments it takes", "triton")
    values = triton_params(dict(src.signature), bound, tensordesc_meta=getattr(md, "tensordesc_meta", None))
    blocks = int(grid3[0]) * int(grid3[1]) * int(grid3[2])
    for attr in ("global_scratch_size", "profile_scratch_size"):
        size = int(getattr(md, attr, 0) or 0)
        values.append(np.zeros(size * blocks * int(getattr(md, "num_ctas", 1) or 1), np.uint8) if size else None)
    sources = {}
    fn = getattr(jit_fn, "fn", None)
    if fn is not None:
        try:
            path = inspect.getsourcefile(fn)
            if path:
                from .fileio import read_bytes_limited

                sources[Path(path).name] = read_bytes_limited(path, 8 << 20, "kernel's Python file").decode(
                    "utf-8", errors="replace")       # bounded, a regular file only
        except (OSError, TypeError, ValueError):     # ReadRefused is a ValueError: the trace goes without it
            pass
    return ptx, name, (32 * int(md.num_warps),), int(md.shared), values, sources


__all__ = ["scenario", "layout_map", "to_toml", "array_map", "Scenario", "Analysis", "Picture", "Layout", "Video",
           "Matrix", "ApiError", "UnknownMetric", "Trace", "TraceAnalysis", "TraceFailed", "open_trace",
           "trace_launch", "trace_ptx", "trace_triton", "triton_launch"]
