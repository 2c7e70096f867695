"""warpviz from Python (notebooks, scripts): build a scenario, analyse it, draw a frame, a
layout map or an animation without a window.

    from viz import api
    sc = api.scenario("transpose-tile")            # a built-in, a file, TOML text or keywords
    sc.analyze()                                   # the figures of `warpviz analyze`
    sc.frame(instruction=5)                        # shows itself in Jupyter (PNG or SVG)
    sc.frame(instruction=5).save("frame.svg")
    sc.animation(instructions="5-6").save("column-read.mp4")
    api.layout_map("Sw<3,3,3> o (8,64):(64,1)")    # a CuTe or Triton layout's map, by bank

Pictures are drawn by the app's painter through ``viz.export`` (the same code as
``warpviz export``); Qt is loaded only when a picture is drawn, never by importing this
module. Bad input raises ``viz.scenario.ScenarioError``, ``viz.layout.LayoutError`` or
``viz.export.ExportError``, each with the message the command line prints.
"""

from __future__ import annotations

import base64
import html
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from . import export as _export
from .layout import LayoutError
from .layout_text import LayoutMap, layout_map as _layout_map
from .scenario import KIND_OPS, Scenario as _Model, ScenarioError, load, loads, with_params

DEFAULT_SIZE = (1280, 720)          # a frame in a notebook (text scales with the picture)
_NAMES = ("instruction", "block", "warp")   # the arguments' names in messages


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
    overrides = {k: str(v) for k, v in (set or {}).items()}
    given = [x is not None for x in (name_or_path, toml, file)] + [bool(fields)]
    if sum(given) != 1:
        raise ValueError("give one of: a built-in name or file, toml=TEXT, file=PATH, or the scenario's "
                         "fields as keywords (block=, grid=, arrays=, access=, ...)")
    if toml is not None:
        return Scenario(loads(toml, source="<toml>", overrides=overrides))
    if name_or_path is not None or file is not None:
        return Scenario(load(str(name_or_path if name_or_path is not None else file), overrides))
    return Scenario(loads(to_toml(fields), source="<keywords>", overrides=overrides))


def to_toml(fields: Mapping[str, Any]) -> str:
    """Scenario fields (as keyword arguments or a dict) written as scenario TOML (tomli-w)."""
    import tomli_w

    data = {k: _plain(v) for k, v in fields.items()}
    launch = dict(data.pop("launch", {}) or {})
    for k in ("block", "grid"):
        if k in data:
            launch[k] = data.pop(k)
    if launch:
        data["launch"] = launch
    for name, spec in (data.get("arrays") or {}).items():
        if not isinstance(spec, dict):
            raise ValueError(f"arrays[{name!r}] must be a dict of the array's fields (space, type, shape, ...)")
    access = data.get("access", [])
    if isinstance(access, dict):
        data["access"] = access = [access]
    if not all(isinstance(a, dict) for a in access):
        raise ValueError("each access must be a dict like {'op': 'load', 'at': 'src[threadIdx.x]'}")
    if "format" not in data and any(a.get("op") in KIND_OPS for a in access):
        data["format"] = 3          # cp.async, atomic, tma.load (viz.kinds)
    if "format" not in data and _needs_format_2(data.get("arrays") or {}):
        data["format"] = 2
    return tomli_w.dumps(data)


def _plain(v: Any) -> Any:
    """Numbers, strings, lists and dicts only (numpy scalars become Python's)."""
    if isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    raise ValueError(f"{v!r} ({type(v).__name__}) cannot be written in a scenario; use numbers, strings, "
                     "lists and dicts")


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
        if prefer not in ("png", "svg"):
            raise ValueError(f"prefer must be 'png' or 'svg', not {prefer!r}")
        self._plan, self._settings, self.label = plan, settings, label
        self.prefer = prefer
        self._cache: dict[str, bytes] = {}

    @property
    def size(self) -> tuple[int, int]:
        return self._settings.size

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture (.png or .svg; atomically, as every export)."""
        path = Path(path)
        kind = _export.output_kind(path)
        if kind not in ("png", "svg"):
            raise _export.ExportError(f"{path}: a picture is saved as .png or .svg")
        _export.check_settings(self._settings, kind)     # the theme's name (loads Qt: drawing does anyway)
        return _export.write_plan(self._plan, path, self._settings).path

    def _bytes(self, kind: str) -> bytes:
        if kind not in self._cache:
            with tempfile.TemporaryDirectory(prefix="warpviz-") as tmp:
                self._cache[kind] = self.save(Path(tmp) / f"picture.{kind}").read_bytes()
        return self._cache[kind]

    def png(self) -> bytes:
        return self._bytes("png")

    def svg(self) -> str:
        return self._bytes("svg").decode("utf-8")

    def _repr_png_(self) -> bytes | None:
        return self.png() if self.prefer == "png" else None

    def _repr_svg_(self) -> str | None:
        return self.svg() if self.prefer == "svg" else None

    def __repr__(self) -> str:
        return f"<warpviz picture {self.label} {self.size[0]}x{self.size[1]}>"


class Layout(Picture):
    """A layout's logical-to-physical map (``print_layout``-style, coloured by bank).
    ``offsets`` and ``banks`` are numpy arrays (rows x cols); ``repr`` is CuTe's table."""

    def __init__(self, m: LayoutMap, size: tuple[int, int] | None = None, theme: str = "light",
                 scale: float = 1.0, prefer: str | None = None):
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
    return Layout(_layout_map(text, shape, type), size=size, theme=theme, prefer=prefer)


class Video:
    """Frames of a scenario as an animation: shows itself in Jupyter as an HTML5 ``<video>``
    (an MP4 inside the page) and ``save()``-s to .mp4, .webm or .gif."""

    def __init__(self, sc: _Model, settings: _export.Settings, sel: _export.Selection,
                 compare: _Model | None = None, labels: tuple[str, str] | None = None):
        self._sc, self._settings, self._sel, self._compare, self._labels = sc, settings, sel, compare, labels
        plan = _export.make_plan(sc, settings, sel, compare, labels)      # checks the selection now
        self.pictures = len(plan.steps)
        self.seconds = sum(s.hold for s in plan.steps)
        self._mp4: bytes | None = None

    def save(self, path: str | os.PathLike) -> Path:
        return _export.export(self._sc, path, self._settings, self._sel, self._compare, self._labels).path

    def mp4(self) -> bytes:
        if self._mp4 is None:
            with tempfile.TemporaryDirectory(prefix="warpviz-") as tmp:
                self._mp4 = self.save(Path(tmp) / "animation.mp4").read_bytes()
        return self._mp4

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.mp4()).decode("ascii")
        w, h = self._settings.size
        return (f'<video controls loop width="{min(w, 960)}" title="{html.escape(self._sc.shown_title)}">'
                f'<source src="data:video/mp4;base64,{data}" type="video/mp4"></video>')

    def __repr__(self) -> str:
        return f"<warpviz animation: {self.pictures} pictures, {self.seconds:g} s>"


# ---------------------------------------------------------------------------- scenario


class Analysis:
    """The figures of ``warpviz analyze``: ``metrics`` (Nsight Compute's names), ``accesses``
    (one dict per access), ``json()`` (the ``--json`` document), ``table()`` (the text)."""

    def __init__(self, sc: _Model):
        from .engine import analyze
        from .report import to_json, to_table

        self._an = analyze(sc)
        self._json = to_json(self._an)
        self._table = to_table(self._an)

    @property
    def metrics(self) -> dict[str, int]:
        return dict(self._json["metrics"])

    @property
    def accesses(self) -> list[dict]:
        return list(self._json["accesses"])

    def json(self) -> dict:
        return json.loads(json.dumps(self._json))

    def table(self) -> str:
        return self._table

    def __getitem__(self, metric: str) -> int:
        return self._json["metrics"][metric]

    def __repr__(self) -> str:
        return self._table

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self._table)}</pre>"


class Scenario:
    """A loaded, validated scenario (``model`` is the ``viz.scenario.Scenario``)."""

    def __init__(self, model: _Model):
        self.model = model

    @property
    def title(self) -> str:
        return self.model.shown_title

    @property
    def instructions(self) -> int:
        """Warp instructions per warp (numbered from 1 on screen and in ``frame()``)."""
        return len(self.model.instructions())

    def with_params(self, **params: Any) -> "Scenario":
        return Scenario(with_params(self.model, params))

    def analyze(self) -> Analysis:
        return Analysis(self.model)

    def _settings(self, size, theme, scale, captions=True, **kw) -> _export.Settings:
        return _export.Settings(size=tuple(size), theme=theme, scale=scale, captions=captions, **kw)

    def frame(self, instruction: int = 1, frame: int | str = "last", *, block: int = 0, warp: int = 0,
              size: tuple[int, int] = DEFAULT_SIZE, theme: str = "light", scale: float = 1.0,
              captions: bool = True, prefer: str = "png") -> Picture:
        """One frame of one warp instruction: ``instruction`` from 1 as on screen, ``frame``
        from 1, or ``first``, ``last`` (the summary) or a kind (``wavefront``...)."""
        sel = _export.selection(self.model, str(instruction), str(block), str(warp), str(frame), names=_NAMES)
        settings = self._settings(size, theme, scale, captions)
        plan = _export.make_plan(self.model, settings, sel, still=True)
        plan = _export.Plan(plan.steps[:1], plan.fps, plan.labels)
        return Picture(plan, settings, f"{self.model.name or self.model.title}: instruction {instruction}, "
                       f"frame {frame}", prefer)

    def frames(self, instruction: int = 1, *, block: int = 0, warp: int = 0) -> list[str]:
        """The captions of an instruction's frames, in order (frame 1 first)."""
        from .frames import frames as frames_of
        from .warp import warp_detail

        if not 1 <= instruction <= self.instructions:
            raise _export.ExportError(f"instruction {instruction} does not exist (1..{self.instructions})")
        d = warp_detail(self.model, self.model.instructions()[instruction - 1], block, warp)
        return [f.caption for f in frames_of(d)]

    def animation(self, instructions: str | int = "all", frames: str | None = None, *, block: int = 0,
                  warp: int = 0, size: tuple[int, int] = DEFAULT_SIZE, fps: float = 10, hold: float = 1.0,
                  theme: str = "light", scale: float = 1.0, title_card: bool = False,
                  compare: "Scenario | None" = None, labels: tuple[str, str] | None = None) -> Video:
        """The animation of some instructions (``"5-6"``, ``3`` or ``"all"``); ``compare`` puts
        a second scenario beside it, as ``warpviz export --compare`` does."""
        sel = _export.selection(self.model, str(instructions), str(block), str(warp), frames, names=_NAMES)
        settings = self._settings(size, theme, scale, fps=fps, hold=hold, title_card=title_card)
        return Video(self.model, settings, sel, compare.model if compare is not None else None, labels)

    def layout_map(self, array: str, *, size: tuple[int, int] | None = None, theme: str = "light",
                   prefer: str | None = None) -> Layout:
        """The map of one array's layout (any of them: pad, swizzle, CuTe or Triton)."""
        return Layout(array_map(self.model, array), size=size, theme=theme, prefer=prefer)

    def matrix_map(self, instruction: int | None = None, *, block: int = 0, warp: int = 0,
                   size: tuple[int, int] | None = None, theme: str = "light", prefer: str = "svg") -> "Matrix":
        """An ldmatrix / stmatrix instruction (1-based; default the first one) of one warp: who
        gives each 16-byte row, its banks and wavefront, and which lane holds each element."""
        from .kinds.ldmatrix import matrix_map
        from .warp import warp_detail

        instrs = self.model.instructions()
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
    from .lanes import Evaluator, Lanes, Space

    names = [a.name for a in sc.arrays]
    if name not in names:
        raise ScenarioError(sc.source, "", f"no array {name!r}", f"arrays: {', '.join(names)}")
    arr = sc.array(name)
    n = int(np.prod(arr.shape))
    if n > MAX_MAP_ELEMENTS:
        raise ScenarioError(sc.source, f"arrays.{name}", f"{n:,} elements are too many for a map (at most "
                            f"{MAX_MAP_ELEMENTS:,})", "draw a smaller tile: api.layout_map(text, shape=...)")
    if len(arr.shape) == 2:
        rows, cols = arr.shape
        space = Space({"row": Lanes(b=np.arange(rows).reshape(-1, 1)), "col": Lanes(t=np.arange(cols).reshape(1, -1)),
                       **{k: Lanes.const(v) for k, v in sc.params.items()}}, (rows, cols))
    else:
        rows, cols = 1, arr.shape[0]
        space = Space({"col": Lanes(t=np.arange(cols).reshape(1, -1)),
                       **{k: Lanes.const(v) for k, v in sc.params.items()}}, (1, cols))
    value, faults = Evaluator(space).evaluate(arr.layout)
    if faults:
        raise LayoutError(f"array {name}: {faults[0].problem}")
    text = arr.swizzle.text if not arr.swizzle.is_identity else "row-major"
    if arr.pad:
        text += f", pad {arr.pad}"
    return LayoutMap(f"{name}: {text}", arr.swizzle.kind, arr.type.name, arr.type.size,
                     np.array(value.full((rows, cols))), len(arr.shape) == 1)


__all__ = ["scenario", "layout_map", "to_toml", "array_map", "Scenario", "Analysis", "Picture", "Layout", "Video"]
