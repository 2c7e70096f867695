"""Export frames for slides and videos: GIF, MP4, WebM, PNG, SVG and PNG sequences.

Every picture comes from the one painter (``viz.render.paint_frame``) drawn into a QImage
(or a QSvgGenerator for SVG); nothing is grabbed from a screen, so this runs headless
with ``QT_QPA_PLATFORM=offscreen``. A QGuiApplication is created if none exists.

The plan: the selected warp instructions (``--instruction``, ``--block``, ``--warp``) each
give their frames (``viz.frames``), optionally filtered (``--frames``); a comparison pairs
two layouts frame by frame, the shorter story holding its last frame. Each distinct
picture is painted once and held for ``hold`` seconds: a GIF stores one image with that
duration, a video repeats it ``round(hold * fps)`` times.

Writes are atomic: everything goes to a temporary file (or folder) beside the target and
is flushed to the disk and renamed over it only when complete (``viz.fileio.commit``), so
a cancelled or failed export leaves nothing behind and never replaces a good file with a
broken one. A default file name made from what a file says (a trace's name, a partner's)
is one safe name in the chosen folder (``default_file_name``, ``path_in``). ``export()`` reports progress
through a callback and stops when its cancel flag is set, so a dialog can run it on a
worker thread.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from .argcheck import MAX_DIGITS, RangeTextError, check_out_path, range_parts, shown
from .errors import WarpvizError
from .fileio import (SpecialFileError, commit, fsync_file, fsync_folder, inside, os_error_words, real_target,
                     safe_name, temp_beside, umask)
from .frames import Frame, KINDS, access_text, frames as frames_of, op_name, paired_frames
from .i18n import sep, tr
from .layout_text import LayoutMap
from .scenario import Scenario
from .warp import WarpDetail, warp_detail

from . import export_formats
from .export_formats import BY_EXTENSION as FORMATS, SEQUENCE, STILLS, VIDEOS     # the one table of formats

SIZES = {"720p": (1280, 720), "1080p": (1920, 1080), "1440p": (2560, 1440), "4k": (3840, 2160),
         "2160p": (3840, 2160)}
MIN_SIDE, MAX_W, MAX_H = 64, 7680, 4320
MAX_VIDEO_FRAMES = 200_000
MAX_RANGES = 256            # comma-separated parts of one --block / --warp / -i selection
MAX_NATURAL = 16384     # a layout map drawn at the size its numbers need: at most this a side


class ExportError(WarpvizError):
    """An export that cannot be done, with a message for the user (the CLI exits 2)."""


class ExportCancelled(Exception):
    """The cancel flag was set; nothing was written."""


# ---------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Settings:
    """How the pictures look and how long each is shown."""

    size: tuple[int, int] = (1920, 1080)
    fps: float = 10.0                 # pictures are held: 10 fps looks like 30 and encodes 3x faster
    hold: float = 1.0                 # seconds each picture is shown
    theme: str = "light"
    scale: float = 1.0                # type scale (presentation: 1.3 or more)
    captions: bool = True
    title: str | None = None          # the title bar; None: the scenario's title; "" none
    title_card: bool = False          # open with a title card
    title_card_hold: float | None = None   # seconds; None: max(2 s, 2 x hold)
    rows: str = "auto"                # lane rows: auto (those that fit; the picture names the rest), all, or a list


@dataclass(frozen=True)
class Selection:
    """Which warp instructions and frames. Instructions are 1-based as on screen
    ("instruction 9 of 16"); blocks and warps 0-based as in CUDA; ``frames`` is a spec
    string (see ``parse_frames``)."""

    instructions: tuple[int, ...] | None = None   # None: all
    blocks: tuple[int, ...] = (0,)
    warps: tuple[int, ...] = (0,)
    frames: str | None = None                     # None: all (animations) / last (stills)


def parse_size(text: str) -> tuple[int, int]:
    """``720p``, ``1080p``, ``4k`` or ``WIDTHxHEIGHT``."""
    t = text.strip().lower()
    if t in SIZES:
        return SIZES[t]
    m = re.fullmatch(r"(\d+)\s*[x×]\s*(\d+)", t)
    if not m:
        raise ExportError(tr("size {text!r} is not understood; use 720p, 1080p, 4k or WIDTHxHEIGHT such as 1600x900",
                             text=text))
    if max(len(m.group(1).lstrip("0")), len(m.group(2).lstrip("0"))) > 6:     # before int(): 5,000 digits raise
        raise ExportError(tr("size {text}: out of range; width {lo}..{max_w}, height {lo}..{max_h}", text=shown(text),
                             lo=MIN_SIDE, max_w=MAX_W, max_h=MAX_H))
    w, h = int(m.group(1)), int(m.group(2))
    if not (MIN_SIDE <= w <= MAX_W and MIN_SIDE <= h <= MAX_H):
        raise ExportError(tr("size {w}x{h} is out of range; width {lo}..{max_w}, height {lo}..{max_h}", w=w, h=h,
                             lo=MIN_SIDE, max_w=MAX_W, max_h=MAX_H))
    return w, h


def parse_range(text: str, what: str, lo: int, hi: int, base: int = 0) -> tuple[int, ...]:
    """``"3"``, ``"2-5"``, ``"1,4,7-9"`` or ``"all"`` as indices ``lo..hi`` (inclusive)
    written ``base``-based; returns 0-based values."""
    t = text.strip().lower()
    if t in ("all", "*"):
        if hi - lo + 1 > MAX_VIDEO_FRAMES:
            raise ExportError(tr("{what} {text!r} selects more than {n:,}; narrow it", what=what, text=text[:60],
                                 n=MAX_VIDEO_FRAMES))
        return tuple(range(lo, hi + 1))
    out: list[int] = []
    try:
        for a, b, _ in range_parts(t, MAX_RANGES, "-:", spaced=True):
            a, b = a - base, b - base
            if a > b:
                a, b = b, a
            if a < lo or b > hi:
                raise ExportError(tr("{what} {text!r} is outside {lo}..{hi}", what=what, text=text[:60], lo=lo + base,
                                     hi=hi + base))
            if len(out) + (b - a + 1) > MAX_VIDEO_FRAMES:       # each is at least one picture: refused before any is made
                raise ExportError(tr("{what} {text!r} selects more than {n:,}; narrow it", what=what, text=text[:60],
                                     n=MAX_VIDEO_FRAMES))
            out.extend(range(a, b + 1))
    except RangeTextError as e:
        if e.problem == "parts":
            raise ExportError(tr("{what} {text!r} has {n:,} parts, over the limit of {max}; join them into ranges "
                                 "like 2-5", what=what, text=text[:60], n=e.count, max=MAX_RANGES)) from None
        if e.problem == "form":
            raise ExportError(tr("{what} {text!r} is not understood; use a number, a range like 2-5, a list like "
                                 "1,3,5 or all", what=what, text=text[:60])) from None
        raise ExportError(tr("{what} {text}: out of range; use {lo}..{hi}", what=what, text=shown(text.strip()),
                             lo=lo + base, hi=hi + base)) from None
    return tuple(dict.fromkeys(out))


def selection(sc: Scenario, instructions: str = "all", blocks: str = "0", warps: str = "0",
              frames: str | None = None,
              names: tuple[str, str, str] = ("--instruction", "--block", "--warp")) -> Selection:
    """The selection typed as text (the CLI's options, the export dialog's fields), checked
    against ``sc``: instructions 1-based as on screen, or ``all``; blocks and warps 0-based.
    ``names`` are the fields' names in the messages."""
    lw = sc.launch
    n_instr = len(sc.instructions())
    frames = frames.strip() if frames is not None and frames.strip() else None
    if frames is not None:
        parse_frames(frames, 1, ["compute"])           # the words are checked before any warp is evaluated
    return Selection(
        instructions=None if instructions.strip().lower() in ("all", "*")
        else parse_range(instructions, names[0], 0, n_instr - 1, base=1),
        blocks=parse_range(blocks, names[1], 0, lw.blocks - 1),
        warps=parse_range(warps, names[2], 0, lw.warps_per_block - 1),
        frames=frames)


def parse_frames(spec: str | None, count: int, kinds: Sequence[str]) -> list[int]:
    """Frame positions (0-based) chosen by ``spec``: numbers and ranges (1-based), ``first``,
    ``last``, or frame kinds (``compute``, ``request``, ``wavefront``, ``line``, ``summary``,
    ``idle``), comma-separated; ``all`` or None is every frame. ``kinds[j]`` may name two
    kinds as ``"a|b"`` (a comparison: the frame matches either). Numbers past ``count`` are
    skipped, so one spec fits instructions with different numbers of frames."""
    if spec is None or spec.strip().lower() in ("all", "*"):
        return list(range(count))
    picked: set[int] = set()
    for part in spec.lower().split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*[-:]\s*(\d+))?", part)
        if part == "first":
            picked.add(0)
        elif part == "last":
            picked.add(count - 1)
        elif part in KINDS:
            picked.update(j for j, kind in enumerate(kinds) if part in kind.split("|"))
        elif m and max(len(g.lstrip("0")) for g in m.groups() if g) > MAX_DIGITS:
            raise ExportError(tr("--frames {part}: out of range; use frame numbers from 1 (numbers past an "
                                 "instruction's last frame are skipped)", part=shown(part)))
        elif m:
            a, b = int(m.group(1)) - 1, int(m.group(2) or m.group(1)) - 1
            if a > b:
                a, b = b, a
            picked.update(range(max(0, a), min(count - 1, b) + 1))
        else:
            raise ExportError(tr("--frames {spec!r}: {part!r} is not understood; use numbers (1-based), ranges like "
                                 "2-5, first, last, or a kind: {names}", spec=spec, part=part,
                                 names=', '.join(KINDS)))
    return sorted(picked)


# ---------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Step:
    """One distinct picture: a frame, a pair of frames, or the title card."""

    left: tuple[WarpDetail, Frame] | None
    right: tuple[WarpDetail, Frame] | None = None
    title_card: tuple[str, tuple[str, ...]] | None = None
    hold: float = 1.0
    layout: LayoutMap | None = None        # a layout's map (viz.render.layout_map) instead of a frame
    layout_scale: float | None = None      # its text scale: 1 at its natural size, None: from the size


@dataclass
class Plan:
    steps: list[Step]
    fps: float
    labels: tuple[str, str] | None = None

    def repeats(self, step: Step) -> int:
        return max(1, round(step.hold * self.fps))

    @property
    def video_frames(self) -> int:
        return sum(self.repeats(s) for s in self.steps)


def is_trace(src) -> bool:
    """Is ``src`` a recorded trace (``viz.trace.detail.TraceSource``) rather than a scenario?"""
    return getattr(src, "is_trace", False)


def trace_selection(src, instructions: str = "all", blocks: str = "0", warps: str = "0",
                    frames: str | None = None,
                    names: tuple[str, str, str] = ("--instruction", "--block", "--warp")) -> Selection:
    """``selection`` for a trace: instructions are steps of each selected warp's own stream
    (1-based, the header's "step k of n"; the header names the step's instruction number),
    up to the longest stream."""
    frames = frames.strip() if frames is not None and frames.strip() else None
    if frames is not None:
        parse_frames(frames, 1, ["compute"])
    bs = parse_range(blocks, names[1], 0, src.blocks - 1)
    ws = parse_range(warps, names[2], 0, src.warps - 1)
    longest = max(src.stream_length(b, w) for b in bs for w in ws)
    if longest == 0:
        raise ExportError(tr("{name}: the selected warps executed no recorded memory instruction (recorded "
                             "blocks: {blocks})", name=src.name, blocks=src.recorded_text()))
    return Selection(
        instructions=None if instructions.strip().lower() in ("all", "*")
        else parse_range(instructions, names[0], 0, longest - 1, base=1),
        blocks=bs, warps=ws, frames=frames)


def _trace_details(src, sel: Selection) -> list[WarpDetail]:
    out = []
    for b in sel.blocks:
        for w in sel.warps:
            try:
                src.check(b, w)
            except IndexError as err:
                raise ExportError(f"{src.name}: {err}") from None
            n = src.stream_length(b, w)
            if n == 0:
                raise ExportError(tr("{name}: warp {w} of block {b} executed no recorded memory instruction "
                                     "(recorded blocks: {blocks})", name=src.name, w=w, b=b,
                                     blocks=src.recorded_text()))
            instrs = sel.instructions if sel.instructions is not None else tuple(range(n))
            for i in instrs:
                if not 0 <= i < n:
                    raise ExportError(tr("{name}: warp {w} of block {b} executed {n} recorded memory "
                                         "instructions; there is no instruction {k}", name=src.name, w=w, b=b,
                                         n=n, k=i + 1))
                out.append(src.detail(b, w, i))
    return out


def _details(sc: Scenario, sel: Selection, lazy: bool = False) -> list[WarpDetail] | Iterator[WarpDetail]:
    """The selected warps' details (checked first); ``lazy``: one at a time, as they are asked for."""
    if is_trace(sc):
        return _trace_details(sc, sel)
    n_instr = len(sc.instructions())
    instrs = sel.instructions if sel.instructions is not None else tuple(range(n_instr))
    lw = sc.launch
    for i in instrs:
        if not 0 <= i < n_instr:
            raise ExportError(tr("{name}: instruction {k} does not exist (1..{n})", name=sc.name or sc.source,
                                 k=i + 1, n=n_instr))
    for b in sel.blocks:
        if not 0 <= b < lw.blocks:
            raise ExportError(tr("{name}: block {b} does not exist (0..{last})", name=sc.name or sc.source, b=b,
                                 last=lw.blocks - 1))
    for w in sel.warps:
        if not 0 <= w < lw.warps_per_block:
            raise ExportError(tr("{name}: warp {w} does not exist (0..{last})", name=sc.name or sc.source, w=w,
                                 last=lw.warps_per_block - 1))
    instructions = sc.instructions()
    out = (warp_detail(sc, instructions[i], b, w) for b in sel.blocks for w in sel.warps for i in instrs)
    return out if lazy else list(out)


def title_lines(sc: Scenario, details: Sequence[WarpDetail], other: Sequence[WarpDetail] | None = None,
                labels: tuple[str, str] | None = None) -> list[str]:
    """What the title card says under the title: the arrays and accesses shown, the launch;
    for a comparison, each side's arrays."""
    if other is not None:
        la, lb = labels or (sc.shown_title, other[0].scenario.shown_title if other else "")
        a = sep(", ").join(dict.fromkeys(d.array.describe() for d in details))
        b = sep(", ").join(dict.fromkeys(d.array.describe() for d in other))
        return [la + sep(": ") + a, lb + sep(": ") + b] + title_lines(sc, details)[-2:]
    lines: list[str] = []
    seen = set()
    for d in details:
        op = d.access.matrix.text if getattr(d.access, "matrix", None) is not None else op_name(d.op)  # ldmatrix.x4, not "load"
        text = f"{op} {d.access.text}"
        if text not in seen:
            seen.add(text)
            lines.append(text)
    arrays = dict.fromkeys(d.array.describe() for d in details)
    lw = sc.launch
    arrays = list(arrays)
    out = arrays[:2]
    if len(arrays) > 2:
        out.append(tr("…and {n} more arrays", n=len(arrays) - 2) if len(arrays) > 3 else arrays[2])
    out += lines[:3]
    if len(lines) > 3:
        out.append(tr("…and {n} more accesses", n=len(lines) - 3) if len(lines) > 4 else lines[3])
    out.append(tr("grid {grid}, block {block}", grid="x".join(map(str, lw.grid)), block="x".join(map(str, lw.block))))
    return out


def base_title(title: str) -> str:
    """A title without its closing remark in brackets: "Transpose through a shared tile
    (unpadded)" -> "Transpose through a shared tile" (a param comparison's card says what
    differs; "(unpadded): PAD = 0 vs PAD = 1" would contradict itself)."""
    return re.sub(r"\s*[(（][^()（）]*[)）]\s*$", "", title) or title


def make_plan(sc: Scenario, settings: Settings, sel: Selection, compare: Scenario | None = None,
              labels: tuple[str, str] | None = None, still: bool = False) -> Plan:
    """The pictures to paint, in order (raises ExportError for a selection that does not fit)."""
    if not settings.fps > 0 or not settings.hold > 0:
        raise ExportError(tr("fps and hold must be positive"))
    spec = sel.frames if sel.frames is not None else ("last" if still else None)
    if not still and not is_trace(sc) and (spec is None or spec.strip().lower() in ("all", "*", "first", "last")):
        # every warp instruction selected is at least one picture: refuse a video that is too
        # long before any warp of it is worked out
        n = len(sel.instructions) if sel.instructions is not None else len(sc.instructions())
        least = n * len(sel.blocks) * len(sel.warps) * max(1, round(settings.hold * settings.fps))
        if least > MAX_VIDEO_FRAMES:
            raise ExportError(tr("that is at least {n} video frames; narrow the selection (--instruction, --frames) "
                                 "or lower --fps/--hold", n=least))
    # Worked out one warp at a time, so a video that grows too long is refused as soon as it does.
    left_src = iter(_details(sc, sel, lazy=True))
    left: list[WarpDetail] = []
    right = _details(compare, sel) if compare is not None else None
    per_picture = max(1, round(settings.hold * settings.fps))
    if is_trace(sc):             # a recorded trace: its frame (title, launch) for the rest
        sc = sc.scenario
    if compare is not None and is_trace(compare):
        compare = compare.scenario
    steps: list[Step] = []
    counts: set[int] = set()               # how many frames the instructions have (for the message)
    for k, d in enumerate(left_src):
        if not still and len(steps) * per_picture > MAX_VIDEO_FRAMES:
            raise ExportError(tr("that is at least {n} video frames; narrow the selection (--instruction, "
                                 "--frames) or lower --fps/--hold", n=len(steps) * per_picture))
        left.append(d)
        fa = frames_of(d)
        if right is None:
            counts.add(len(fa))
            for j in parse_frames(spec, len(fa), [f.kind for f in fa]):
                steps.append(Step((d, fa[j]), hold=settings.hold))
            continue
        e = right[k]
        fb = frames_of(e)
        pairs = paired_frames(fa, fb)          # the longer story sets the length, as in the app
        counts.add(len(pairs))
        # A kind matches where either side shows it.
        kinds = [f"{a.kind}|{b.kind}" for a, b in pairs]
        for j in parse_frames(spec, len(pairs), kinds):
            a, b = pairs[j]
            steps.append(Step((d, a), (e, b), hold=settings.hold))
    if not steps and not counts:
        raise ExportError(tr("--frames {spec!r} selects no frame", spec=spec))
    if not steps:
        lo, hi = min(counts), max(counts)
        n = str(lo) if lo == hi else tr("{lo} to {hi}", lo=lo, hi=hi)
        raise ExportError(tr("--frames {spec!r} selects no frame: the instructions selected have {n} frames "
                             "(numbered from 1; first, last and the kinds {kinds} work for any)", spec=spec, n=n,
                             kinds=", ".join(k for k in KINDS)))
    if settings.title_card and not still:
        title = settings.title or sc.shown_title
        if compare is not None:
            lab = labels or (sc.shown_title, compare.shown_title)
            title = settings.title or tr("{a}  vs  {b}", a=lab[0], b=lab[1])
            if not settings.title and compare.source == sc.source:      # the same file, a param changed
                title = base_title(sc.shown_title) + sep(": ") + tr("{a}  vs  {b}", a=lab[0], b=lab[1])
        hold = settings.title_card_hold or max(2.0, 2 * settings.hold)
        steps.insert(0, Step(None, title_card=(title, tuple(title_lines(sc, left, right, labels))), hold=hold))
    plan = Plan(steps, settings.fps, labels)
    if not still and plan.video_frames > MAX_VIDEO_FRAMES:
        raise ExportError(tr("that is {n} video frames; narrow the selection (--instruction, --frames) or "
                             "lower --fps/--hold", n=plan.video_frames))
    return plan


# ---------------------------------------------------------------------------- painting


def ensure_qt():
    """A QGuiApplication (fonts need one); offscreen unless the caller chose a platform."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        app = QGuiApplication(["warpviz-export"])
    return app


def paint_step(p, rect, step: Step, settings: Settings, plan: Plan) -> list:
    """Paint one step on any QPainter (QImage for pixels, QSvgGenerator for SVG). Returns the
    record of the text drawn (``viz.render.Layout`` per picture: one, two for a comparison;
    a title card's ``TextItem`` list), for the picture rules' tests; [] for a layout map."""
    from .render import PaintOptions, paint_compare, paint_frame, paint_title_card, theme

    th = theme(settings.theme, settings.scale)
    if step.layout is not None:
        from .kinds.ldmatrix import MatrixMap

        if isinstance(step.layout, MatrixMap):        # ldmatrix / stmatrix (viz.render.matrix_view)
            from .render.matrix_view import paint_matrix_map

            paint_matrix_map(p, rect, step.layout, th, scale=step.layout_scale)
            return []
        if getattr(step.layout, "view", None):        # a kind's own map (its view: a viz.render module)
            from .render.painter import paint_kind_map

            paint_kind_map(p, rect, step.layout, th, scale=step.layout_scale)
            return []
        from .render.layout_map import paint_layout_map

        paint_layout_map(p, rect, step.layout, th, scale=step.layout_scale)
        return []
    if step.title_card is not None:
        return [paint_title_card(p, rect, step.title_card[0], list(step.title_card[1]), th)]
    d, f = step.left
    title = settings.title if settings.title is not None else d.scenario.shown_title
    opts = PaintOptions(captions=settings.captions, title=title or None, rows=settings.rows)
    if step.right is None:
        return [paint_frame(p, rect, d, f, th, opts)]
    labels = plan.labels or (d.scenario.shown_title, step.right[0].scenario.shown_title)
    return list(paint_compare(p, rect, step.left, step.right, th, opts, labels))


def render_image(step: Step, settings: Settings, plan: Plan):
    """The step as a QImage (Format_RGB32: bytes in memory are B, G, R, 255)."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    w, h = settings.size
    img = QImage(w, h, QImage.Format.Format_RGB32)
    p = QPainter(img)
    try:
        paint_step(p, QRectF(0, 0, w, h), step, settings, plan)
    finally:
        p.end()
    return img


def image_bgra(img) -> np.ndarray:
    """A (h, w, 4) uint8 view-copy of a Format_RGB32 QImage, in B, G, R, A byte order."""
    w, h = img.width(), img.height()
    buf = np.frombuffer(img.constBits(), np.uint8, count=img.sizeInBytes())
    return buf.reshape(h, img.bytesPerLine())[:, : w * 4].reshape(h, w, 4).copy()


# ---------------------------------------------------------------------------- writing


@dataclass
class Result:
    path: Path
    format: str
    pictures: int          # distinct pictures painted
    video_frames: int      # frames in the file (1 for stills, pictures for GIF)
    size: tuple[int, int]
    seconds: float         # playing time


Progress = Callable[[int, int], None]
def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    return bool(cancel())


def output_kind(out: Path, png_sequence: bool = False) -> str:
    """The format ``out`` asks for (``viz.export_formats``): by its extension, or ``png-sequence``
    for a folder."""
    try:
        check_out_path(out, "")     # a 300-character name: refused before the file system is asked
    except ValueError as err:
        raise ExportError(str(err)) from None
    text = str(out)
    if png_sequence or text.endswith(("/", os.sep)) or out.is_dir() or not out.suffix:
        return SEQUENCE
    kind = FORMATS.get(out.suffix.lower())
    if kind is None:
        raise ExportError(tr("{out}: unknown extension {suffix!r}; use {extensions}, or a folder (ending in /) for a "
                             "PNG sequence", out=out, suffix=out.suffix, extensions=export_formats.extensions_text()))
    return kind


def default_file_name(parts: Sequence[object], suffix: str, fallback: str = "warpviz") -> str:
    """A default export name made of ``parts`` (a scenario's or trace's name, the partner's,
    the instruction...: what files say) joined by ``-``, each made one safe name
    (``viz.fileio.safe_name``: a trace named ``../../x`` gives ``_.._x``), then ``suffix``
    (``.mp4``...; ``/`` for a PNG sequence's folder)."""
    words = [safe_name(p, "") for p in parts if str(p).strip()]
    stem = safe_name("-".join(w for w in words if w), fallback)
    return stem + suffix


def path_in(folder: str | os.PathLike, name: str) -> Path:
    """``folder / name`` for a name made from file content, refused (ExportError) unless it
    stays in ``folder``."""
    if not inside(folder, name):
        raise ExportError(tr("{name!r} is not a file name inside {folder}; choose where to save the file",
                             name=name, folder=folder))
    return Path(folder) / name


def _sequence_folder(out: Path) -> Path:
    text = str(out).rstrip("/" + os.sep)
    return Path(text) if text else out


def _check_target(out: Path, kind: str) -> Path:
    """The folder the temporary file goes in (the target's own), after checking we may write:
    never over a FIFO, a device or another special file (``viz.fileio.real_target``), never
    into a sequence's folder that holds ``frame_*.png`` files warpviz cannot prove it wrote."""
    if kind == SEQUENCE:
        target = _sequence_target(out)
        if target.exists() and not target.is_dir():
            raise ExportError(tr("{out} is a file; a PNG sequence needs a folder", out=out))
        if target.is_dir():
            if not os.access(target, os.W_OK | os.X_OK):
                raise ExportError(tr("{out}: cannot write in {parent} (permission denied)", out=out, parent=target))
            _frames_of_ours(target, out)
            return target
    else:
        target = out
        if out.is_dir():
            raise ExportError(tr("{out} is a folder; give a file name ending in .{kind}", out=out, kind=kind))
        try:
            real_target(out)
        except SpecialFileError as err:
            raise ExportError(str(err)) from None
        except OSError as err:
            raise ExportError(_disk_message(out, err)) from None
        if out.exists() and not os.access(out, os.W_OK):
            raise ExportError(tr("{out}: the file exists and is read-only", out=out))
    parent = target.resolve().parent
    if not parent.is_dir():
        raise ExportError(tr("{out}: the folder {parent} does not exist", out=out, parent=parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ExportError(tr("{out}: cannot write in {parent} (permission denied)", out=out, parent=parent))
    return parent


def _disk_message(out: Path, err: BaseException) -> str:
    if isinstance(err, SpecialFileError):
        return str(err)
    if isinstance(err, OSError) and err.errno == errno.ENOSPC or "No space left" in str(err):
        return f"{out}: the disk is full; nothing was written (free some space or choose another folder)"
    if isinstance(err, OSError) and err.errno is not None:      # a size limit, a quota, a read-only disk...
        return f"{out}: writing failed: {os_error_words(err)}; nothing was written"
    return f"{out}: writing failed ({err}); nothing was written"


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg
        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError) as err:
        raise ExportError(tr("ffmpeg is needed for .mp4 and .webm but was not found ({err}); install it with `pip "
                             "install imageio-ffmpeg`, or set IMAGEIO_FFMPEG_EXE to an ffmpeg binary",
                             err=err)) from None


def check_settings(settings: Settings, kind: str) -> None:
    """The checks that need no file: an even size for a video, fps, hold, theme and scale
    (ExportError with the message the CLI prints; the export dialog shows it as you type)."""
    w, h = settings.size
    if kind in VIDEOS and (w % 2 or h % 2):
        raise ExportError(tr("{kind} needs an even width and height (yuv420p); use {w}x{h}", kind=kind.upper(),
                             w=w + w % 2, h=h + h % 2))
    if not 1 <= settings.fps <= 240:
        raise ExportError(tr("--fps {fps:g} is out of range; use 1..240", fps=settings.fps))
    if not settings.hold > 0 or settings.hold > 600:
        raise ExportError(tr("--hold {hold:g} is out of range; use a positive number of seconds up to 600",
                             hold=settings.hold))
    from .render import theme as theme_by_name
    try:
        theme_by_name(settings.theme, settings.scale)
    except ValueError as err:
        raise ExportError(str(err)) from None


def export(sc: Scenario, out: str | os.PathLike, settings: Settings = Settings(), sel: Selection = Selection(),
           compare: Scenario | None = None, labels: tuple[str, str] | None = None, png_sequence: bool = False,
           progress: Progress | None = None, cancel=None) -> Result:
    """Render and write. ``sc`` (and ``compare``) may also be a recorded trace
    (``viz.trace.detail.TraceSource``, with a ``trace_selection``). Raises ExportError (message for the user) or ExportCancelled; in
    both cases nothing is left at ``out`` that was not there before."""
    out = Path(out)
    kind = output_kind(out, png_sequence)
    check_settings(settings, kind)
    _check_target(out, kind)
    if kind in VIDEOS:
        ffmpeg_exe()
    plan = make_plan(sc, settings, sel, compare, labels, still=kind in STILLS)
    return write_plan(plan, out, settings, png_sequence, progress, cancel)


def write_plan(plan: Plan, out: str | os.PathLike, settings: Settings, png_sequence: bool = False,
               progress: Progress | None = None, cancel=None) -> Result:
    """Paint ``plan`` and write it to ``out`` atomically (the second half of ``export``; a
    caller that built or trimmed a plan itself - a preview, a benchmark - starts here)."""
    out = Path(out)
    kind = output_kind(out, png_sequence)
    parent = _check_target(out, kind)
    if kind in VIDEOS:
        ffmpeg_exe()
    ensure_qt()
    writer = globals()[export_formats.get(kind).writer]       # the table names each format's writer below
    try:
        return writer(out, parent, kind, plan, settings, progress, cancel)
    except (ExportError, ExportCancelled):
        raise
    except OSError as err:
        raise ExportError(_disk_message(out, err)) from None


def layout_map_plan(m: LayoutMap, size: tuple[int, int] | None = None, theme: str = "light",
                    scale: float = 1.0) -> tuple[Plan, Settings]:
    """The one picture of a layout's map. Without ``size`` it takes its natural size (every
    offset and bank written at 16 px), refused past MAX_NATURAL pixels a side."""
    natural = size is None
    if natural:
        size = m.natural_size(scale)
        if max(size) > MAX_NATURAL:
            raise ExportError(f"writing every number of a {m.shape_text()} map takes a {size[0]}x{size[1]} "
                              f"picture, more than {MAX_NATURAL} px a side; give a size (the numbers are then "
                              "left out) or draw a smaller tile")
    settings = Settings(size=size, theme=theme, scale=scale)
    return Plan([Step(None, layout=m, layout_scale=scale if natural else None)], settings.fps), settings


def matrix_map_plan(m, size: tuple[int, int] | None = None, theme: str = "light",
                    scale: float = 1.0) -> tuple[Plan, Settings]:
    """The one picture of an ldmatrix / stmatrix instruction (``viz.kinds.ldmatrix.MatrixMap``),
    at its natural size (every number at 16 px) unless ``size`` is given."""
    natural = size is None
    if natural:
        size = m.natural_size(scale)
    settings = Settings(size=size, theme=theme, scale=scale)
    return Plan([Step(None, layout=m, layout_scale=scale if natural else None)], settings.fps), settings


def export_matrix_map(m, out: str | os.PathLike, size: tuple[int, int] | None = None, theme: str = "light",
                      scale: float = 1.0) -> Result:
    """Draw an ldmatrix / stmatrix instruction's map to ``out`` (.png or .svg)."""
    out = Path(out)
    kind = output_kind(out)
    if kind not in STILLS:
        raise ExportError(f"{out}: a matrix map is a picture: give a {export_formats.extensions_text(STILLS, 'or')} file")
    plan, settings = matrix_map_plan(m, size, theme, scale)
    check_settings(settings, kind)
    return write_plan(plan, out, settings)


def export_layout_map(m: LayoutMap, out: str | os.PathLike, size: tuple[int, int] | None = None,
                      theme: str = "light", scale: float = 1.0) -> Result:
    """Draw a layout's map (``viz.layout_text.layout_map``) to ``out`` (.png or .svg), by the
    same writers as every export."""
    out = Path(out)
    kind = output_kind(out)
    if kind not in STILLS:
        raise ExportError(f"{out}: a layout map is a picture: give a {export_formats.extensions_text(STILLS, 'or')} file")
    plan, settings = layout_map_plan(m, size, theme, scale)
    check_settings(settings, kind)
    return write_plan(plan, out, settings)


def _temp_file(parent: Path, out: Path) -> Path:
    """The export's temporary file beside ``out`` (``viz.fileio.temp_beside``: the mode a file
    the user saves would have), or ExportError naming the folder."""
    try:
        return temp_beside(out, prefix=f".{out.stem}.", suffix=f".part{out.suffix}", folder=parent)
    except SpecialFileError as err:
        raise ExportError(str(err)) from None
    except OSError as err:
        raise ExportError(tr("{out}: cannot create a file in {parent} ({err})", out=out, parent=parent,
                             err=err.strerror or err)) from None


class _Atomic:
    """A temporary file beside ``out``: ``commit()`` renames it over ``out``; leaving the
    block without committing (cancel, error) deletes it."""

    def __init__(self, parent: Path, out: Path):
        self.out = out
        self.tmp = _temp_file(parent, out)
        self.done = False

    def __enter__(self) -> "_Atomic":
        return self

    def commit(self) -> None:
        commit(self.tmp, self.out)          # fsync, rename, fsync the folder
        self.done = True

    def __exit__(self, *exc) -> None:
        if not self.done:
            try:
                self.tmp.unlink()
            except FileNotFoundError:
                pass


def _check(cancel) -> None:
    if _cancelled(cancel):
        raise ExportCancelled()


def _write_png(out, parent, kind, plan, settings, progress, cancel) -> Result:
    _check(cancel)
    img = render_image(plan.steps[0], settings, plan)
    _check(cancel)
    with _Atomic(parent, out) as a:
        if not img.save(str(a.tmp), "PNG") or not _png_complete(a.tmp):
            raise ExportError(_disk_message(out, _qt_failed(a.tmp)))
        a.commit()
    if progress:
        progress(1, 1)
    return Result(out, kind, 1, 1, settings.size, 0.0)


def _write_svg(out, parent, kind, plan, settings, progress, cancel) -> Result:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    _check(cancel)
    w, h = settings.size
    step = plan.steps[0]
    with _Atomic(parent, out) as a:
        gen = QSvgGenerator()
        gen.setFileName(str(a.tmp))
        gen.setSize(QSize(w, h))
        gen.setViewBox(QRectF(0, 0, w, h))
        gen.setTitle(step.left[0].scenario.title if step.left else step.layout.text if step.layout else "warpviz")
        gen.setDescription(step.left[1].caption if step.left else "")
        p = QPainter()
        if not p.begin(gen):
            raise ExportError(_disk_message(out, OSError(f"Qt could not open {a.tmp.name} for SVG")))
        try:
            paint_step(p, QRectF(0, 0, w, h), step, settings, plan)
        finally:
            p.end()
        _check(cancel)
        if not _svg_complete(a.tmp):
            raise ExportError(_disk_message(out, _qt_failed(a.tmp, "the SVG came out incomplete")))
        a.commit()
    if progress:
        progress(1, 1)
    return Result(out, kind, 1, 1, settings.size, 0.0)


def _pictures(plan: Plan, settings: Settings, cancel) -> Iterator[tuple[Step, np.ndarray]]:
    for step in plan.steps:
        _check(cancel)
        yield step, image_bgra(render_image(step, settings, plan))


def _write_gif(out, parent, kind, plan, settings, progress, cancel) -> Result:
    from PIL import Image

    total = len(plan.steps)
    with _Atomic(parent, out) as a:
        durations: list[int] = []
        images = []
        for k, (step, bgra) in enumerate(_pictures(plan, settings, cancel)):
            durations.append(int(round(step.hold * 1000)))
            images.append(Image.fromarray(np.ascontiguousarray(bgra[:, :, 2::-1])))
            if progress:
                progress(k + 1, total)
        _check(cancel)
        # Pillow directly (imageio's plugin writes again when it is garbage-collected after a
        # failed write, printing a second error). duration in ms; loop=0: play forever; one
        # picture takes one number.
        with open(a.tmp, "wb") as f:
            images[0].save(f, format="GIF", save_all=total > 1, append_images=images[1:],
                           duration=durations if total > 1 else durations[0], loop=0)
            f.flush()
        _check(cancel)
        if not _gif_complete(a.tmp):
            raise ExportError(_disk_message(out, OSError(errno.EIO, "the GIF came out incomplete")))
        a.commit()
    seconds = sum(s.hold for s in plan.steps)
    return Result(out, kind, total, total, settings.size, seconds)


def _qt_failed(path: Path, what: str = "") -> OSError:
    """Why Qt could not write ``path`` (Qt says only that it failed): a full disk where the
    folder has less than a megabyte left, else its words."""
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        free = None
    if free is not None and free < (1 << 20):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if soft != resource.RLIM_INFINITY and path.stat().st_size + (1 << 16) >= soft:
            return OSError(errno.EFBIG, os.strerror(errno.EFBIG))      # the file-size limit (ulimit -f)
    except (ImportError, OSError, ValueError):
        pass
    return OSError(errno.EIO, what or f"Qt could not write {path.name}")


def _tail(path: Path, n: int) -> bytes:
    """The last ``n`` bytes of ``path`` (fewer for a shorter file; b"" when it cannot be read):
    the written-to-the-end checks of PNG, SVG and GIF read no more than that."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - n))
            return f.read(n)
    except OSError:
        return b""


def _svg_complete(path: Path) -> bool:
    """An SVG that ends with its closing tag (QSvgGenerator says nothing of a failed write)."""
    return _tail(path, 64).rstrip().endswith(b"</svg>")


def _gif_complete(path: Path) -> bool:
    """A GIF that ends with its trailer byte (0x3B)."""
    return _tail(path, 1) == b";"


def _video_params(kind: str) -> tuple[str, list[str]]:
    if kind == "mp4":
        # H.264 in yuv420p with the index up front: plays in browsers, PowerPoint, Keynote.
        return "libx264", ["-preset", "veryfast", "-tune", "animation", "-crf", "20", "-profile:v", "high",
                           "-movflags", "+faststart"]
    return "libvpx-vp9", ["-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-b:v", "0", "-crf", "34"]


class _Ffmpeg:
    """ffmpeg reading raw BGRA frames on its stdin and writing ``path``; its messages go to a
    temporary file (read when it fails). ``close()`` waits for it and raises OSError when it
    did not finish the file: a non-zero exit status, a signal, an error it printed. (imageio-
    ffmpeg's ``write_frames`` neither checks the exit status nor keeps the messages: under a
    file-size limit it let a cut-short video through as written.)"""

    def __init__(self, path: Path, size: tuple[int, int], fps: float, codec: str, params: list[str]):
        import subprocess
        from fractions import Fraction

        w, h = size
        cmd = [ffmpeg_exe(), "-y", "-nostdin", "-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{w}x{h}",
               "-pix_fmt", "bgra", "-r", str(Fraction(fps).limit_denominator()), "-i", "-", "-an",
               "-vcodec", codec, "-pix_fmt", "yuv420p", "-v", "error", *params, str(path)]
        self.log = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.log)
        except BaseException:
            self.log.close()
            raise

    def send(self, frame: np.ndarray) -> None:
        try:
            self.proc.stdin.write(memoryview(np.ascontiguousarray(frame)).cast("B"))
        except OSError as err:             # ffmpeg stopped reading: it failed (its status and words say why)
            raise self._failure(self.proc.wait()) or err from None

    def _why(self) -> str:
        self.log.seek(0)
        lines = [ln.strip() for ln in self.log.read(1 << 16).decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1][:300] if lines else ""

    def close(self) -> None:
        """Wait for ffmpeg to finish the file; OSError unless it did."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        rc = self.proc.wait()
        err = self._failure(rc)
        self.log.close()
        if err is not None:
            raise err

    def _failure(self, rc: int) -> OSError | None:
        """ffmpeg's exit status ``rc`` as an OSError in words (None: it succeeded)."""
        if rc == 0:
            return None
        import signal

        why = self._why()
        how = (f"ffmpeg was stopped by {signal.Signals(-rc).name}" if rc < 0 and -rc in signal.valid_signals()
               else f"ffmpeg exited with status {rc}")
        low = why.lower()
        code = (errno.ENOSPC if "no space left" in low
                else errno.EFBIG if "too large" in low or rc == -getattr(signal, "SIGXFSZ", 0)
                else errno.EIO)
        return OSError(code, f"{how}: {why}" if why else how)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


def _mp4_complete(path: Path) -> bool:
    """An MP4 whose top-level boxes fill the file exactly and include ``ftyp``, ``moov`` (the
    index: a file cut short by a full disk or a size limit has none, or a box that runs past
    the end) and ``mdat``."""
    seen = set()
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            pos = 0
            while pos < size:
                f.seek(pos)
                head = f.read(16)
                if len(head) < 8:
                    return False
                n, kind = int.from_bytes(head[:4], "big"), head[4:8]
                if n == 1:
                    if len(head) < 16:
                        return False
                    n = int.from_bytes(head[8:16], "big")
                elif n == 0:
                    n = size - pos
                if n < 8 or pos + n > size:
                    return False
                seen.add(kind)
                pos += n
    except OSError:
        return False
    return {b"ftyp", b"moov", b"mdat"} <= seen


def _video_complete(path: Path, kind: str) -> bool:
    if kind == "mp4":
        return _mp4_complete(path)
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x1a\x45\xdf\xa3"          # WebM (Matroska): the EBML header
    except OSError:
        return False


def _write_video(out, parent, kind, plan, settings, progress, cancel) -> Result:
    ffmpeg_exe()
    total = plan.video_frames
    codec, params = _video_params(kind)
    done = 0
    with _Atomic(parent, out) as a:
        ff = _Ffmpeg(a.tmp, settings.size, settings.fps, codec, params)
        try:
            for step, bgra in _pictures(plan, settings, cancel):
                for _ in range(plan.repeats(step)):
                    _check(cancel)
                    ff.send(bgra)
                    done += 1
                    if progress:
                        progress(done, total)
        except BaseException as err:
            ff.kill()
            if isinstance(err, OSError):
                raise ExportError(_disk_message(out, err)) from None
            raise
        try:
            ff.close()          # waits for ffmpeg to finish the file; OSError unless it did
        except OSError as err:
            raise ExportError(_disk_message(out, err)) from None
        _check(cancel)
        if a.tmp.stat().st_size == 0:
            raise ExportError(_disk_message(out, OSError("ffmpeg wrote nothing")))
        if not _video_complete(a.tmp, kind):
            raise ExportError(_disk_message(out, OSError(errno.EIO, f"ffmpeg's {kind.upper()} came out incomplete")))
        a.commit()
    return Result(out, kind, len(plan.steps), total, settings.size, total / settings.fps)


# ---------------------------------------------------------------------------- PNG sequences

MANIFEST = ".warpviz-frames.json"     # what warpviz wrote into a sequence's folder: names and SHA-256s
MAX_MANIFEST_BYTES = 64 << 20
_FRAME = re.compile(r"frame_\d{5,6}\.png")


def _is_frame_name(name: str) -> bool:
    """A name a frame of a sequence has, or could be taken for (``frame_*.png``, any case)."""
    low = name.lower()
    return low.startswith("frame_") and low.endswith(".png")


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_manifest(folder: Path, out: Path) -> dict[str, list[str]]:
    """The frames an earlier export wrote into ``folder`` ({name: [sha256, ...]}), from its
    manifest; {} when there is none. A manifest that warpviz did not write (not a regular
    file, too large, not its format) is ExportError: the folder is then not one warpviz can
    prove it wrote into."""
    path = folder / MANIFEST
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {}
    import json
    import stat as stat_

    bad = tr("{out}: {path} is not a list of frames warpviz wrote; warpviz leaves it and the folder as they are. "
             "Move it away, or choose an empty or new folder", out=out, path=path)
    if not stat_.S_ISREG(st.st_mode) or st.st_size > MAX_MANIFEST_BYTES:
        raise ExportError(bad)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read(MAX_MANIFEST_BYTES + 1).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        raise ExportError(bad) from None
    frames = doc.get("frames") if isinstance(doc, dict) and doc.get("written_by") == "warpviz" else None
    if not isinstance(frames, dict):
        raise ExportError(bad)
    out_: dict[str, list[str]] = {}
    for name, hashes in frames.items():
        if isinstance(name, str) and _FRAME.fullmatch(name) and isinstance(hashes, list) and all(
                isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes):
            out_[name] = hashes
    return out_


def _frames_of_ours(folder: Path, out: Path) -> set[str]:
    """The ``frame_*.png`` files in ``folder`` that an earlier export wrote (named in the
    manifest, a regular file, its content unchanged). ExportError, naming them, when any
    ``frame_*.png`` entry is not: warpviz cannot tell it made it, so it neither replaces nor
    removes it. Other entries (the user's files, dot-files, subfolders) are never looked at."""
    import stat as stat_

    known = _read_manifest(folder, out)
    ours, theirs = set(), []
    with os.scandir(folder) as it:
        for e in it:
            if not _is_frame_name(e.name):
                continue
            try:
                st = os.lstat(e.path)
                mine = (e.name in known and stat_.S_ISREG(st.st_mode)
                        and _sha256(Path(e.path)) in known[e.name])
            except OSError:
                mine = False
            if mine:
                ours.add(e.name)
            else:
                theirs.append(e.name)
    if theirs:
        theirs.sort()
        shown = ", ".join(theirs[:3]) + (tr(" and {n} more", n=len(theirs) - 3) if len(theirs) > 3 else "")
        raise ExportError(tr("{out}: the folder already holds {names}, which warpviz did not write (or which changed "
                             "since); warpviz never replaces or removes files it did not make, so nothing was "
                             "written. Move them away, or choose an empty or new folder", out=out, names=shown))
    return ours


def _write_manifest(folder: Path, frames: dict[str, list[str]]) -> None:
    import json

    from .fileio import write_atomic

    doc = {"written_by": "warpviz", "what": "the frames of a PNG sequence export (warpviz removes or replaces "
           "only these, and only while their content is unchanged)", "frames": dict(sorted(frames.items()))}
    write_atomic(folder / MANIFEST, json.dumps(doc, indent=0) + "\n")


def _sequence_target(out: Path) -> Path:
    """The folder the frames go in: the one named, or the folder a link of that name points
    to (written into; the link stays)."""
    target = _sequence_folder(out)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    return target


def _write_sequence(out, parent, kind, plan, settings, progress, cancel) -> Result:
    """frame_00001.png ... into ``out``, a folder: a new one, or one that exists, beside what
    it holds. The frames are painted into a staging folder of warpviz's own inside it
    (``.warpviz-part-*``), each written and flushed, and only then renamed in one by one; a
    manifest (``.warpviz-frames.json``) records each frame's name and SHA-256. The folder's
    other entries are never touched. A ``frame_*.png`` already there is replaced or (when the
    new sequence is shorter) removed only if the manifest proves warpviz wrote it, unchanged;
    any other one refuses the export before anything is written. A failure or a cancel
    removes what this export made (the staging folder, a folder it created) and leaves the
    rest as it was."""
    shown = _sequence_folder(out)
    target = _sequence_target(out)
    created = False
    if not target.exists():
        try:
            os.mkdir(target)            # never over anything: FileExistsError if someone made it meanwhile
            created = True
        except FileExistsError:
            pass
        except OSError as err:
            raise ExportError(tr("{out}: cannot create the folder ({err})", out=out,
                                 err=os_error_words(err))) from None
    stage: Path | None = None
    moved: list[str] = []
    total = len(plan.steps)
    names = [f"frame_{k + 1:05d}.png" for k in range(total)]
    try:
        known = _read_manifest(target, out)
        ours = _frames_of_ours(target, out)            # refused here, before anything is painted
        try:
            stage = Path(tempfile.mkdtemp(dir=target, prefix=".warpviz-part-"))
            os.chmod(stage, 0o777 & ~umask())
        except OSError as err:
            raise ExportError(tr("{out}: cannot create a folder in {base} ({err})", out=out, base=target,
                                 err=os_error_words(err))) from None
        hashes: dict[str, str] = {}
        for k, step in enumerate(plan.steps):
            _check(cancel)
            img = render_image(step, settings, plan)
            path = stage / names[k]
            if not img.save(str(path), "PNG") or not _png_complete(path):
                raise ExportError(_disk_message(out, _qt_failed(path)))
            fsync_file(path)
            hashes[names[k]] = _sha256(path)
            if progress:
                progress(k + 1, total)
        _check(cancel)
        ours = _frames_of_ours(target, out)            # again: what changed while it painted
        # The manifest first names both the old and the new content of each name, so a crash
        # in the middle leaves every frame provably warpviz's.
        both = {n: known.get(n, []) for n in ours}
        for n, h in hashes.items():
            both[n] = sorted(set(both.get(n, [])) | {h})
        _write_manifest(target, both)
        from .fileio import commit_new

        for n in names:
            if n in ours:
                os.replace(stage / n, target / n)      # a frame of warpviz's own, checked above
            else:
                commit_new(stage / n, target / n)      # a new name: never over a file made meanwhile
            moved.append(n)
        for n in sorted(ours - set(names)):            # stale frames of the earlier export, proven ours
            try:
                (target / n).unlink()
            except FileNotFoundError:
                pass
        _write_manifest(target, {n: [h] for n, h in hashes.items()})
        os.rmdir(stage)
        stage = None
        fsync_folder(target)
    except BaseException as err:
        if stage is not None:
            for n in names:
                try:
                    (stage / n).unlink()
                except OSError:
                    pass
            try:
                os.rmdir(stage)
            except OSError:
                pass
        if created and not moved:
            try:
                (target / MANIFEST).unlink()
            except OSError:
                pass
            try:
                os.rmdir(target)            # only when empty: ours, nothing else went in
            except OSError:
                pass
        if moved and isinstance(err, Exception):
            raise ExportError(tr("{out}: writing stopped after {n} of {total} frames ({err}); the folder holds "
                                 "those new frames and the rest of the earlier ones (listed in {manifest}); "
                                 "nothing else in it was touched", out=out, n=len(moved), total=total,
                                 err=err, manifest=MANIFEST)) from None
        raise
    return Result(shown, kind, total, total, settings.size, sum(s.hold for s in plan.steps))


def _png_complete(path: Path) -> bool:
    """A PNG file that ends with its IEND chunk (not cut short by a full disk)."""
    return _tail(path, 12) == b"\0\0\0\0IEND\xaeB`\x82"


__all__ = ["export", "write_plan", "default_file_name", "path_in", "Settings", "Selection", "Result", "ExportError",
           "ExportCancelled",
           "make_plan", "Plan", "selection", "check_settings", "STILLS", "VIDEOS", "SEQUENCE",
           "Step", "parse_size", "parse_range", "parse_frames", "output_kind", "render_image", "paint_step",
           "ensure_qt", "FORMATS", "SIZES"]

