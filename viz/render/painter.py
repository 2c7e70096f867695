"""The one painter: a whole frame of a warp instruction, drawn on any QPainter.

API (stable; the app's widget, the PNG/GIF/MP4 exporter and the SVG exporter all call it)::

    from viz.render import paint_frame, PaintOptions, theme
    paint_frame(p: QPainter, rect: QRectF, detail: WarpDetail, frame: Frame,
                theme: Theme = theme("light"), options: PaintOptions | None = None) -> None

- ``detail`` is ``viz.warp.warp_detail(...)``; ``frame`` one of ``viz.frames.frames(detail)``.
- ``rect`` is where to draw, in the painter's coordinates; the picture fills it (type and
  strokes follow its size, times ``theme.scale`` for presentation mode). Anything from
  640x360 up to 4K works; a narrow rect (a comparison half) drops row labels first.
- Text is drawn as text (``drawText``), so a ``QSvgGenerator`` keeps it searchable.
- The painter saves and restores the QPainter's state; it never reads the screen and
  needs only a ``QGuiApplication`` (for fonts), so it runs with ``QT_QPA_PLATFORM=offscreen``.
- ``layout(rect, detail, theme, options)`` returns the rectangles used (lane cells, bank
  columns, ...) so a widget can hit-test the mouse against exactly what was drawn; the
  ``Layout`` that ``paint_frame`` returns also holds the figures row's text boxes
  (``figure_texts``, from ``figures_row``), each exactly as wide as its text.

The picture, top to bottom: optional title; the instruction (access as written, array,
access width, phases, the element's fields with the accessed bytes marked); the 32 lane
cells (lane, thread coordinates, index value, byte address; inactive lanes greyed, phases
of 8/16-byte accesses bracketed); links from lanes to what they touch; then either the 32
shared-memory bank columns, one row per wavefront, each distinct word a bank must deliver
stacked in its column (a broadcast word fans out to several lanes), or the global address
ruler of 128-byte lines in 32-byte sectors with the bytes asked for marked inside; the
figures ("Wavefront k of n", conflicts, sectors, efficiency bar); the caption bar.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from functools import lru_cache

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen, QStaticText

from ..frames import Frame, access_text, conflict_ways
from ..i18n import language, sep, tr
from ..warp import LINE, SECTOR, WarpDetail
from .theme import Theme, theme as _theme

BASE_W, BASE_H = 1920.0, 1080.0
LINK_GAP, LINK_EXTRA = 84.0, 150.0   # room for the lane-to-memory links (at scale 1)


@dataclass(frozen=True)
class PaintOptions:
    """What to draw besides the frame itself."""

    captions: bool = True          # the caption bar at the bottom
    title: str | None = None       # a title bar at the top
    header: bool = True            # the instruction line and element diagram
    figures: bool = True           # the counter and figures row
    label_column: bool | None = None  # row labels at the left; None: when there is room


# ---------------------------------------------------------------------------- fonts


def _per_thread(maxsize: int):
    """Memoise per thread: fonts, metrics and laid-out text hold Qt font engines, which Qt
    keeps per thread, and the app paints on the GUI thread while an export paints on a
    worker. (Plain numbers, like text widths, are shared with ``lru_cache``.)"""
    def wrap(fn):
        local = threading.local()

        def cached(*args):
            memo = getattr(local, "memo", None)
            if memo is None:
                memo = local.memo = {}
            hit = memo.get(args)
            if hit is None:
                if len(memo) >= maxsize:
                    memo.clear()
                hit = memo[args] = fn(*args)
            return hit
        cached.__wrapped__ = fn
        cached.__doc__ = fn.__doc__
        return cached
    return wrap


@_per_thread(512)
def _font(families: tuple[str, ...], px: int, bold: bool = False) -> QFont:
    f = QFont()
    f.setFamilies(list(families))
    f.setPixelSize(max(1, px))
    f.setBold(bold)
    f.setStyleHint(QFont.StyleHint.Monospace if "Mono" in families[0] else QFont.StyleHint.SansSerif)
    return f


def _condensed(th: Theme) -> tuple[str, ...]:
    """Narrow figures for the lane cells (32 across): DejaVu Sans Condensed where installed."""
    return ("DejaVu Sans Condensed", "Noto Sans Display Condensed", "Arial Narrow") + th.sans


@_per_thread(512)
def _metrics(families: tuple[str, ...], px: int, bold: bool = False) -> QFontMetricsF:
    return QFontMetricsF(_font(families, px, bold))


@lru_cache(maxsize=4096)
def _advance(families: tuple[str, ...], px: int, bold: bool, text: str) -> float:
    return _metrics(families, px, bold).horizontalAdvance(text)


def _fit_px(families: tuple[str, ...], texts, width: float, max_px: float, min_px: float = 6,
            bold: bool = False) -> int:
    """The largest pixel size <= max_px at which every text fits ``width`` (0 if none does)."""
    px = int(max_px)
    widest = max(texts, key=len, default="")
    if not widest:
        return px
    # Advance is close to linear in size: one measurement, then a check.
    w = _advance(families, 100, bold, widest)
    for t in texts:
        if len(t) >= len(widest) - 2:
            w = max(w, _advance(families, 100, bold, t))
    if w > 0:
        px = min(px, int(width * 100 / w))
    return px if px >= min_px else 0


# ---------------------------------------------------------------------------- layout


@dataclass
class Layout:
    """Rectangles of one painted frame (for hit-testing in the app)."""

    rect: QRectF
    s: float                                # type scale: 1.0 at 1920x1080
    title: QRectF | None = None
    header: QRectF | None = None
    lanes: list[QRectF] = field(default_factory=list)
    lane_area: QRectF | None = None
    phase_area: QRectF | None = None
    label_x: float = 0.0                    # left edge of the row labels (0 width when none)
    label_w: float = 0.0
    memory: QRectF | None = None
    figures: QRectF | None = None
    caption: QRectF | None = None
    columns: list[float] = field(default_factory=list)  # x centre of each lane / bank column
    col_w: float = 0.0
    lane_rows: list = field(default_factory=list, repr=False)   # (label, 32 texts) per lane-cell row
    figure_texts: list = field(default_factory=list, repr=False)  # TextBox per text of the figures row, once painted


def layout(rect: QRectF, detail: WarpDetail, theme: Theme, options: PaintOptions | None = None) -> Layout:
    """Where everything goes in ``rect``."""
    o = options or PaintOptions()
    W, H = rect.width(), rect.height()
    rw, rh = W / BASE_W, H / BASE_H
    s = min(math.sqrt(rw * rh), 1.5 * min(rw, rh)) * theme.scale
    L = Layout(rect=QRectF(rect), s=s)
    m = 22 * s
    x0, x1 = rect.left() + m, rect.right() - m
    y = rect.top()
    if o.title:
        L.title = QRectF(rect.left(), y, W, 64 * s)
        y += 64 * s
    y += m * 0.6
    if o.header:
        L.header = QRectF(x0, y, x1 - x0, 76 * s)
        y += 76 * s + 10 * s
    bottom = rect.bottom()
    if o.captions:
        L.caption = QRectF(rect.left(), bottom - 92 * s, W, 92 * s)
        bottom -= 92 * s
    bottom -= m * 0.6
    if o.figures:
        L.figures = QRectF(x0, bottom - 64 * s, x1 - x0, 64 * s)
        bottom -= 64 * s + 12 * s
    label_w = 104 * s
    show_labels = o.label_column
    if show_labels is None:
        show_labels = (x1 - x0 - label_w) / 32 >= 40 * s
    L.label_x, L.label_w = x0, (label_w if show_labels else 0.0)
    gx0 = x0 + L.label_w
    cw = (x1 - gx0) / 32
    L.col_w = cw
    L.columns = [gx0 + cw * (k + 0.5) for k in range(32)]
    L.lane_rows = _lane_rows(detail)
    lane_h = (28 + 24 * (len(L.lane_rows) - 1) + 10) * s
    L.lane_area = QRectF(gx0, y, x1 - gx0, lane_h)
    pad = max(1.5, cw * 0.06)
    L.lanes = [QRectF(gx0 + cw * k + pad, y, cw - 2 * pad, lane_h) for k in range(32)]
    y += lane_h
    if detail.space == "shared" and len(detail.phases) > 1:
        L.phase_area = QRectF(gx0, y + 4 * s, x1 - gx0, 30 * s)
        y += 36 * s
    L.memory = QRectF(x0, y, x1 - x0, max(10.0, bottom - y))
    return L


# ---------------------------------------------------------------------------- entry point


def paint_frame(p: QPainter, rect: QRectF, detail: WarpDetail, frame: Frame,
                theme: Theme | None = None, options: PaintOptions | None = None) -> Layout:
    """Draw ``frame`` of ``detail`` filling ``rect`` (see the module docstring)."""
    th = theme or _theme()
    o = options or PaintOptions()
    L = layout(rect, detail, th, o)
    p.save()
    try:
        # Rectangles are snapped to whole pixels and drawn without antialiasing (crisp, and
        # several times faster in the raster engine); links and badges switch it on.
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setClipRect(rect)
        p.fillRect(rect, th.q("background"))
        st = _State(detail, frame)
        if L.title is not None:
            _paint_title(p, L, th, o.title or "")
        if L.header is not None:
            _paint_header(p, L, th, detail)
        if detail.space == "shared":
            _paint_shared(p, L, th, detail, st)
        else:
            _paint_global(p, L, th, detail, st)
        _paint_lanes(p, L, th, detail, st)
        if L.phase_area is not None:
            _paint_phases(p, L, th, detail, st)
        if L.figures is not None:
            _paint_figures(p, L, th, detail, frame, st)
        if L.caption is not None:
            _paint_caption(p, L, th, frame.caption)
    finally:
        p.restore()
    return L


# ---------------------------------------------------------------------------- state


class _State:
    """What each lane, word and line looks like in this frame."""

    def __init__(self, d: WarpDetail, f: Frame):
        self.kind = f.kind
        self.wf = f.wavefront
        self.line_k = f.step if f.kind == "line" else None
        self.links = f.kind in ("request", "wavefront", "line", "summary")
        self.phase = f.phase
        n_lines = len(d.lines)
        if f.kind == "summary":
            self.progress = math.inf      # everything delivered
        elif f.kind in ("wavefront", "line"):
            self.progress = f.step
        else:
            self.progress = -1            # nothing delivered yet
        self.line_order = {ln: k for k, ln in enumerate(d.lines)}
        self.now_lanes: set[int] = set()
        if f.kind == "wavefront":
            self.now_lanes = {ln for bw in d.bank_words if bw.wavefront == f.wavefront for ln in bw.lanes}
        elif f.kind == "line":
            self.now_lanes = {ln.lane for ln in d.lanes if ln.active and ln.line == f.line}
        self.n_lines = n_lines

    def lane_done_step(self, d: WarpDetail, lane) -> int:
        """The step (wavefront or line number) after which this lane has all it asked for."""
        if d.space == "shared":
            return lane.wavefront
        return self.line_order.get(lane.line, -1)

    def step_state(self, step: int) -> str:
        """``done``, ``now`` or ``todo`` for a wavefront/line number."""
        if step < self.progress:
            return "done"
        if step == self.progress:
            return "now"
        return "todo"


# ---------------------------------------------------------------------------- pieces


def _pen(c: QColor, w: float, alpha: float = 1.0, style=Qt.PenStyle.SolidLine, crisp: bool = True) -> QPen:
    """A pen; ``crisp`` (outlines of snapped rectangles) rounds the width to whole pixels,
    which keeps Qt on its fast path for unantialiased strokes."""
    return _pen_cached(c.rgba(), max(1, round(w)) if crisp else round(w, 2), round(alpha, 3), style)


@lru_cache(maxsize=1024)
def _pen_cached(rgba: int, w: float, alpha: float, style) -> QPen:
    c = QColor.fromRgba(rgba)
    if alpha < 1.0:
        c.setAlphaF(alpha)
    pen = QPen(c, w, style)
    # Flat caps: Qt's raster engine strokes round caps of wide lines about 10x slower.
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    return pen


def _box(p: QPainter, r: QRectF, fill: QColor | None, edge: QColor | None, w: float = 1.0) -> None:
    """A snapped rectangle with a ``w``-pixel border, as two fills (the raster engine's
    fastest primitive; an SVG gets two plain rects)."""
    r = r.toRect()
    w = max(1, round(w)) if edge is not None else 0
    if edge is not None:
        p.fillRect(r, edge)
    if fill is not None and r.width() > 2 * w and r.height() > 2 * w:
        p.fillRect(r.adjusted(w, w, -w, -w), fill)


def _snap(r: QRectF) -> QRect:
    """``r`` with whole-pixel edges (drawn without antialiasing it stays sharp)."""
    return r.toRect()


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` blended over ``b`` at opacity ``t``, as an opaque colour (opaque strokes are fast)."""
    return QColor.fromRgbF(a.redF() * t + b.redF() * (1 - t), a.greenF() * t + b.greenF() * (1 - t),
                           a.blueF() * t + b.blueF() * (1 - t))


def _draw_links(p: QPainter, th: Theme, s: float, done, todo, now, kind: str) -> None:
    """Lane-to-memory links: pending ones plain, the current ones bold; delivered ones are
    gone while the story runs (the word and the lane show it) and faint in the summary."""
    lw = max(1.0, 1.6 * s * th.stroke)
    bg = th.q("background")
    if kind != "summary":
        done = ()
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for segs, color, width in ((done, _mix(th.q("link"), bg, 0.45), lw), (todo, _mix(th.q("link"), bg, 0.8), lw),
                               (now, th.q("now"), lw * 2.2)):
        if segs:
            p.setPen(_pen(color, width, crisp=False))
            for seg in segs:
                p.drawLine(seg)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)


def _alpha(c: QColor, a: float) -> QColor:
    c = QColor(c)
    c.setAlphaF(a)
    return c


@_per_thread(8192)
def _static(families: tuple[str, ...], px: int, bold: bool, text: str) -> QStaticText:
    st = QStaticText(text)
    st.setTextFormat(Qt.TextFormat.PlainText)
    st.prepare(font=_font(families, px, bold))
    return st


def _text(p: QPainter, r: QRectF, text: str, th: Theme, px: float, color: QColor, bold: bool = False,
          align="c", mono: bool = False, cond: bool = False) -> None:
    """One line of text aligned in ``r``. QStaticText: laid out once, drawn ~3x faster than
    ``drawText(rect, flags)``; QSvgGenerator still writes it as an SVG <text> element."""
    if px < 1 or not text:
        return
    fam = th.mono if mono else (_condensed(th) if cond else th.sans)
    px = int(px)
    st = _static(fam, px, bold, text)
    size = st.size()
    if align == "l":
        x = r.left()
    elif align == "r":
        x = r.right() - size.width()
    else:
        x = r.left() + (r.width() - size.width()) / 2
    y = r.top() + (r.height() - size.height()) / 2
    p.setFont(_font(fam, px, bold))
    p.setPen(color)
    p.drawStaticText(QPointF(x, y), st)


def _fit_text(p: QPainter, r: QRectF, text: str, th: Theme, max_px: float, color: QColor,
              bold: bool = False, align="c", mono: bool = False,
              min_px: float = 6) -> int:
    px = _fit_px(th.mono if mono else th.sans, (text,), r.width(), max_px, min_px, bold)
    _text(p, r, text, th, px, color, bold, align, mono)
    return px


def _paint_title(p: QPainter, L: Layout, th: Theme, title: str) -> None:
    r = L.title
    p.fillRect(r, th.q("title_bg"))
    inner = r.adjusted(22 * L.s, 0, -22 * L.s, 0)
    _fit_text(p, inner, title, th, 38 * L.s, th.q("title_text"), bold=True,
              align="l")
    p.setPen(_pen(th.q("grid"), max(1.0, 1.5 * L.s)))
    p.drawLine(QLineF(r.left(), r.bottom(), r.right(), r.bottom()))


_COUNTS: dict[int, tuple[object, int]] = {}


def _instruction_count(scenario) -> int:
    """Warp instructions per thread (cached per scenario object: expanding loops is not free)."""
    hit = _COUNTS.get(id(scenario))
    if hit is None or hit[0] is not scenario:
        if len(_COUNTS) > 16:
            _COUNTS.clear()
        hit = _COUNTS[id(scenario)] = (scenario, len(scenario.instructions()))
    return hit[1]


def _phase_text(d: WarpDetail) -> str:
    if d.size <= 4:
        return tr("{size}-byte access: 1 phase of 32 lanes", size=d.size)
    return tr("{size}-byte access: {n} phases of {per} lanes", size=d.size, n=len(d.phases),
              per=len(d.phases[0]))


def _paint_header(p: QPainter, L: Layout, th: Theme, d: WarpDetail) -> None:
    r = L.header
    s = L.s
    n_instr = _instruction_count(d.scenario)
    where = tr("block ({x},{y},{z}) · warp {w}", x=d.block_xyz[0], y=d.block_xyz[1], z=d.block_xyz[2],
               w=d.warp)
    instr = (tr("instruction {k} of {n}", k=d.instruction.number + 1, n=n_instr) if n_instr
             else tr("instruction {k}", k=d.instruction.number + 1))
    elem_w = min(r.width() * 0.28, 420 * s)
    left = QRectF(r.left(), r.top(), r.width() - elem_w - 16 * s, r.height() * 0.55)
    op = tr("store") if d.op == "store" else tr("load")
    line1 = f"{op}  {access_text(d)}"
    px = _fit_px(th.mono, (line1,), left.width(), 30 * s, 8)
    _text(p, left, line1, th, px, th.q("text"), bold=True,
          align="l", mono=True)
    # The array and access width matter most; where in the launch goes first when short of room.
    r2 = QRectF(r.left(), r.top() + r.height() * 0.55, left.width(), r.height() * 0.45)
    parts = [d.array.describe(), _phase_text(d), where, instr]
    while len(parts) > 2 and not _fit_px(th.sans, [" · ".join(parts)], r2.width(), 20 * s, 19 * s):
        parts.pop()
    _fit_text(p, r2, " · ".join(parts), th, 20 * s, th.q("muted"), align="l")
    _paint_element(p, QRectF(r.right() - elem_w, r.top() + 2 * s, elem_w, r.height() - 4 * s), th, d, s)


def _paint_element(p: QPainter, r: QRectF, th: Theme, d: WarpDetail, s: float) -> None:
    """The element's bytes, split into its fields / vector components, the accessed ones lit."""
    t = d.array.type
    parts = [(f.name, f.offset, f.type.size) for f in t.fields] or [(t.name, 0, t.size)]
    lo, hi = d.instruction.byte_offset, d.instruction.byte_offset + d.size
    label_h = r.height() * 0.38
    _fit_text(p, QRectF(r.left(), r.top(), r.width(), label_h),
              tr("element: {t}, {n} bytes", t=t.name if not t.is_struct else tr("struct"), n=t.size),
              th, 17 * s, th.q("muted"), align="r")
    unit = min(r.width() / max(1, t.size), 30 * s)
    w = unit * t.size
    box = QRectF(r.right() - w, r.top() + label_h + 2 * s, w, r.height() - label_h - 4 * s)
    names = [n for n, _, _ in parts]
    px = _fit_px(th.mono, names, max(4.0, min(sz for _, _, sz in parts) * unit - 4 * s), 18 * s, 6)
    for name, off, size in parts:
        cell = QRectF(box.left() + off * unit, box.top(), size * unit, box.height())
        lit = off < hi and lo < off + size
        p.setPen(_pen(th.q("grid"), max(1.0, 1.2 * s * th.stroke)))
        p.setBrush(th.q("now") if lit else th.q("panel"))
        p.drawRect(cell)
        _text(p, cell, name, th, px, th.q("now_text") if lit else th.q("muted"), bold=lit, mono=True)
    p.setBrush(Qt.BrushStyle.NoBrush)


def _lane_rows(d: WarpDetail) -> list[tuple[str, list[str]]]:
    """Row label and per-lane text for the lane cells: lane, thread, index (a row per
    subscript: "[10][31]" would not fit a cell 32 across), byte address."""
    block = d.scenario.launch.block
    dims = 3 if block[2] > 1 else (2 if block[1] > 1 else 1)
    n_idx = max(1, len(d.access.indices))
    off = tr("off")
    lane_txt, thr, addr = [], [], []
    idx: list[list[str]] = [[] for _ in range(n_idx)]
    for ln in d.lanes:
        lane_txt.append(str(ln.lane))
        if not ln.exists:
            thr.append("")
            addr.append("")
            for col in idx:
                col.append("")
            continue
        thr.append(str(ln.thread[0]) if dims == 1 else ",".join(str(v) for v in ln.thread[:dims]))
        addr.append(str(ln.byte_addr) if ln.active else "")
        for k, col in enumerate(idx):
            if not ln.active:
                col.append(off if k == 0 else "")
            else:
                col.append(f"[{ln.indices[k]}]" if k < len(ln.indices) else "")
    thread_label = {1: tr("threadIdx.x"), 2: tr("thread x,y"), 3: tr("thread x,y,z")}[dims]
    labels = [tr("row"), tr("column")] if n_idx == 2 else [tr("index")]
    return ([(tr("lane"), lane_txt), (thread_label, thr)] + list(zip(labels, idx))
            + [(tr("byte addr"), addr)])


_PREP = threading.local()


def _prepared(kind: str, L: Layout, th: Theme, d: WarpDetail, build):
    """What part ``kind`` of the picture needs that stays the same from frame to frame of
    one warp instruction (text laid out, sizes fitted, positions, rectangles): built once
    per detail, geometry, fonts and language, and kept per thread (it holds laid-out text).
    The frames of an animation differ only in state, so they share it."""
    memo = getattr(_PREP, "memo", None)
    if memo is None:
        memo = _PREP.memo = {}
    r = L.rect
    key = (kind, id(d), r.x(), r.y(), r.width(), r.height(), L.s, L.label_w, L.lane_area.top(),
           L.lane_area.height(), L.memory.top(), L.memory.height(), th.sans, th.mono, th.stroke, language())
    hit = memo.get(key)
    if hit is not None and hit[0] is d:
        return hit[1]
    if len(memo) >= 48:
        memo.clear()
    value = build()
    memo[key] = (d, value)
    return value


@dataclass
class _LanePrep:
    labels: list                 # (rect, text) of the row labels
    lab_px: int
    rects: list                  # each lane cell snapped to whole pixels
    rows: list                   # per row: (font, [(lane, QStaticText, top-left)]); font None: too small
    addr_bold: tuple | None      # the address row in bold (the compute frame stresses it)


def _prep_lanes(L: Layout, th: Theme, d: WarpDetail) -> _LanePrep:
    s = L.s
    rows = L.lane_rows or _lane_rows(d)
    area = L.lane_area
    heights = [28 * s] + [24 * s] * (len(rows) - 1)
    inner_w = L.lanes[0].width() - 4 * s
    cond = _condensed(th)
    fams = [th.sans] + [cond] * (len(rows) - 1)
    sizes = [_fit_px(fams[k], texts, inner_w, (24 if k == 0 else 20) * s, 8, bold=(k == 0))
             for k, (_, texts) in enumerate(rows)]
    labels, lab_px = [], 0
    if L.label_w:
        lab_px = _fit_px(th.sans, [r[0] for r in rows], L.label_w - 10 * s, 17 * s, 6)
        y = area.top() + 4 * s
        for k, (label, _) in enumerate(rows):
            labels.append((QRectF(L.label_x, y, L.label_w - 10 * s, heights[k]), label))
            y += heights[k]

    def row(k: int, texts: list[str], y: float, bold: bool):
        px = sizes[k]
        if not px:
            return None, []
        items = []
        for ln, cell in zip(d.lanes, L.lanes):
            text = texts[ln.lane]
            if text:
                stt = _static(fams[k], px, bold, text)
                sz = stt.size()
                items.append((ln.lane, stt, QPointF(cell.left() + (cell.width() - sz.width()) / 2,
                                                    y + (heights[k] - sz.height()) / 2)))
        return _font(fams[k], px, bold), items

    out, y = [], area.top() + 4 * s
    for k, (_, texts) in enumerate(rows):
        out.append(row(k, texts, y, k == 0))
        y += heights[k]
    last = len(rows) - 1
    return _LanePrep(labels, lab_px, [c.toRect() for c in L.lanes], out,
                     row(last, rows[last][1], y - heights[last], True))


def _paint_lanes(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: _State) -> None:
    s = L.s
    prep = _prepared("lanes", L, th, d, lambda: _prep_lanes(L, th, d))
    muted = th.q("muted")
    for r, label in prep.labels:
        _text(p, r, label, th, prep.lab_px, muted, align="r")
    border = max(1.0, 1.3 * s * th.stroke)
    now_c, text_strong = th.q("now"), th.q("text")
    # Cells first (state colours), then the text row by row: one font switch per row.
    colors: list[QColor | None] = []
    served_cells = []
    boxes: dict[tuple, tuple[QColor, QColor, list[QRect]]] = {}
    hatched: list[QRect] = []
    for ln, cell, rect in zip(d.lanes, L.lanes, prep.rects):
        if not ln.exists:
            p.setPen(_pen(th.q("grid"), border, style=Qt.PenStyle.DotLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(rect)
            colors.append(None)
            continue
        edge, text_c = th.q("grid"), th.q("lane_text")
        if not ln.active:
            fill, text_c = th.q("lane_off"), muted
        else:
            fill = th.q("lane")
            if st.kind in ("wavefront", "line", "summary"):
                state = st.step_state(st.lane_done_step(d, ln))
                if ln.lane in st.now_lanes:
                    fill, text_c, edge = now_c, th.q("now_text"), text_strong
                    if state == "now":
                        served_cells.append(cell)
                elif state == "done":
                    served_cells.append(cell)
                else:
                    fill, text_c = th.q("lane_wait"), muted
        key = (fill.rgba(), edge.rgba(), 2 if edge is text_strong else 1)
        boxes.setdefault(key, (fill, edge, []))[2].append(rect)
        if not ln.active:
            hatched.append(rect)
        colors.append(text_c)
    for fill, edge, rects in boxes.values():   # one call per look
        p.setPen(_pen(edge, border * (2 if edge is text_strong else 1)))
        p.setBrush(fill)
        p.drawRects(rects)
    if hatched:
        # Hatched: visibly switched off, also in greyscale print.
        p.setBrush(QBrush(_alpha(th.q("grid"), 0.55), Qt.BrushStyle.BDiagPattern))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawRects(hatched)
    for cell in served_cells:
        _served_mark(p, cell, th, s)
    addr_row = len(prep.rows) - 1
    grid, byte_used = th.q("grid"), th.q("byte_used")
    lanes = d.lanes
    for k, (font, items) in enumerate(prep.rows):
        emph_row = k == addr_row and st.kind == "compute"
        if emph_row:
            font, items = prep.addr_bold
        if font is None:
            continue
        p.setFont(font)
        current = None
        for lane, stt, pt in items:
            color = colors[lane]
            if color is None:       # past the end of a partial warp: the lane number only
                if k:
                    continue
                color = grid
            if emph_row and lanes[lane].active:
                color = byte_used
            if color is not current:
                p.setPen(color)
                current = color
            p.drawStaticText(pt, stt)


def _served_mark(p: QPainter, cell: QRectF, th: Theme, s: float) -> None:
    """A bar along the cell's foot: this lane has everything it asked for."""
    h = max(3.0, 7 * s)
    p.fillRect(_snap(QRectF(cell.left() + 2, cell.bottom() - h - 1, cell.width() - 4, h)), th.q("served"))


def _paint_phases(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: _State) -> None:
    s = L.s
    r = L.phase_area
    texts = [tr("phase {k}: lanes {a}-{b}", k=k, a=ls[0], b=ls[-1]) for k, ls in enumerate(d.phases)]
    width = L.col_w * len(d.phases[0]) - 8 * s
    px = _fit_px(th.sans, texts, width, 17 * s, 6)
    if px == 0:
        texts = [tr("phase {k}", k=k) for k in range(len(d.phases))]
        px = _fit_px(th.sans, texts, width, 17 * s, 6)
    for k, ls in enumerate(d.phases):
        x0 = L.columns[ls[0]] - L.col_w / 2 + 2 * s
        x1 = L.columns[ls[-1]] + L.col_w / 2 - 2 * s
        lit = st.kind == "wavefront" and st.phase == k
        box = QRectF(x0, r.top(), x1 - x0, r.height())
        p.setPen(_pen(th.q("now") if lit else th.q("grid"), max(1.0, (2.4 if lit else 1.4) * s * th.stroke)))
        p.setBrush(th.q("now") if lit else th.q("phase_a" if k % 2 == 0 else "phase_b"))
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.drawRoundedRect(box, 5 * s, 5 * s)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        _text(p, box, texts[k], th, px, th.q("now_text") if lit else th.q("text"), bold=lit)
    p.setBrush(Qt.BrushStyle.NoBrush)


# ---------------------------------------------------------------------------- shared


def _centred(fam: tuple[str, ...], px: int, bold: bool, text: str, r: QRectF) -> tuple[QStaticText, QPointF]:
    """``text`` laid out and where its top-left goes to be centred in ``r`` (as ``_text``)."""
    stt = _static(fam, px, bold, text)
    sz = stt.size()
    return stt, QPointF(r.left() + (r.width() - sz.width()) / 2, r.top() + (r.height() - sz.height()) / 2)


@dataclass
class _SharedPrep:
    top: float
    grid_top: float
    row_h: float
    zebra: list                  # every other bank column's background
    heads: list                  # (QStaticText, top-left) of the bank numbers
    head_font: QFont | None
    bank_px: int
    wf_px: int
    rules: list                  # phase boundaries (8/16-byte accesses)
    word_rects: list             # per bank word (d.bank_words' order), float and snapped
    word_texts: list             # per bank word: ((text, top-left) plain, (text, top-left) bold) or None
    word_fonts: tuple | None     # (plain, bold)
    links: list                  # per active lane: [(wavefront, x, segment)]


def _prep_shared(L: Layout, th: Theme, d: WarpDetail) -> _SharedPrep:
    s = L.s
    mem = L.memory
    n = max(1, d.wavefronts)
    head_h = 30 * s
    avail = mem.height() - head_h - LINK_GAP * s
    row_h = min(72 * s, avail / n)
    grid_h = row_h * n
    # Links end at the bank's head, so they stay short (an antialiased line costs in
    # proportion to its length); spare room goes partly to them, the rest below.
    top = mem.top() + LINK_GAP * s + min(avail - grid_h, LINK_EXTRA * s)
    grid_top = top + head_h
    cw = L.col_w
    bank_px = _fit_px(th.sans, ["31"], cw - 6 * s, 18 * s, 6, bold=True)
    # zebra: every other bank column shaded, so columns read as columns
    zebra = [_snap(QRectF(L.columns[b] - cw / 2, grid_top, cw, grid_h)) for b in range(0, 32, 2)]
    heads = ([_centred(th.sans, bank_px, True, str(b), QRectF(L.columns[b] - cw / 2, top, cw, head_h))
              for b in range(32)] if bank_px >= 1 else [])
    wf_px = (_fit_px(th.sans, [tr("wf {k}", k=n)], L.label_w - 10 * s, min(17 * s, row_h * 0.8), 6)
             if L.label_w else 0)
    rules = [QLineF(L.columns[0] - cw / 2, grid_top + k * row_h, L.columns[31] + cw / 2, grid_top + k * row_h)
             for k in range(1, d.wavefronts) if d.wavefront_phase[k] != d.wavefront_phase[k - 1]]
    word_rects = []
    for bw in d.bank_words:
        r = QRectF(L.columns[bw.bank] - cw / 2 + 3 * s, grid_top + bw.wavefront * row_h + 1.5 * s, cw - 6 * s,
                   row_h - 3 * s)
        word_rects.append((r, r.toRect()))
    label_px = 0
    if row_h >= 15 * s:
        label_px = _fit_px(th.mono, [str(bw.word) for bw in d.bank_words], cw - 10 * s, min(17 * s, row_h * 0.62),
                           11 * s)
    word_texts = [(_centred(th.mono, label_px, False, str(bw.word), r), _centred(th.mono, label_px, True,
                                                                                 str(bw.word), r))
                  for bw, (r, _) in zip(d.bank_words, word_rects)] if label_px >= 1 else []
    lane_foot = L.lanes[0].bottom() + (L.phase_area.height() + 8 * s if L.phase_area is not None else 0)
    end_y = top + 2 * s
    links = []
    for ln in d.lanes:
        if not ln.active:
            continue
        by_wf: dict[int, list[int]] = {}
        for b, wf in zip(ln.banks, ln.word_wavefronts):
            by_wf.setdefault(wf, []).append(b)
        out = []
        for wf, banks in sorted(by_wf.items()):
            x = sum(L.columns[b] for b in banks) / len(banks)
            out.append((wf, x, QLineF(L.columns[ln.lane], lane_foot, x, end_y)))
        links.append(out)
    return _SharedPrep(top, grid_top, row_h, zebra, heads, _font(th.sans, bank_px, True) if heads else None,
                       bank_px, wf_px, rules, word_rects, word_texts,
                       (_font(th.mono, label_px), _font(th.mono, label_px, True)) if word_texts else None, links)


def _paint_shared(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: _State) -> None:
    s = L.s
    prep = _prepared("shared", L, th, d, lambda: _prep_shared(L, th, d))
    top, grid_top, row_h = prep.top, prep.grid_top, prep.row_h
    cw = L.col_w
    muted = th.q("muted")
    # Bank headers and column backgrounds.
    panel = th.q("panel")
    for r in prep.zebra:
        p.fillRect(r, panel)
    if prep.heads:
        p.setFont(prep.head_font)
        p.setPen(muted)
        for stt, pt in prep.heads:
            p.drawStaticText(pt, stt)
    if L.label_w:
        lab = QRectF(L.label_x, top, L.label_w - 10 * s, 30 * s)
        _fit_text(p, lab, tr("bank"), th, 17 * s, muted, align="r")
        # Wavefront numbers, and where a new phase starts.
        every = 1 if d.wavefronts <= 16 else 4   # a deep stack: label 1, 4, 8, ..., the last and the current
        for k in range(d.wavefronts):
            state = st.step_state(k) if st.kind in ("wavefront", "summary") else "todo"
            if state != "now" and every > 1 and k != 0 and (k + 1) % every and k != d.wavefronts - 1:
                continue
            rr = QRectF(L.label_x, grid_top + k * row_h, L.label_w - 10 * s, row_h)
            if state == "now":
                p.fillRect(rr.adjusted(0, 1, 0, -1), th.q("now"))
            _text(p, rr, tr("wf {k}", k=k + 1), th, prep.wf_px, th.q("now_text") if state == "now" else muted,
                  bold=state == "now", align="r")
    if prep.rules:
        p.setPen(_pen(th.q("grid"), max(1.0, 1.5 * s), style=Qt.PenStyle.DashLine))
        for rule in prep.rules:
            p.drawLine(rule)
    # The row being served right now.
    if st.kind == "wavefront" and st.wf is not None:
        band = QRectF(L.columns[0] - cw / 2, grid_top + st.wf * row_h, 32 * cw, row_h)
        p.fillRect(band, _alpha(th.q("now"), 0.18))
    # Links: lane cell foot -> head of the bank column (middle of a vector's banks), one per
    # lane and wavefront; the word being served is lit in its row.
    if st.links:
        now, todo, done = [], [], []
        request = st.kind == "request"
        for lane_links in prep.links:
            seen = set()
            for wf, x, seg in lane_links:
                state = "todo" if request else st.step_state(wf)
                if (x, state) in seen:
                    continue
                seen.add((x, state))
                (now if state == "now" else done if state == "done" else todo).append(seg)
        _draw_links(p, th, s, done, todo, now, st.kind)
    # Words.
    border = max(1.0, 1.2 * s * th.stroke)
    # Boxes by state, each group in one drawRects call (a 32-deep float4 stack is 128 words).
    groups: dict[str, list[QRect]] = {"todo": [], "now": [], "done": []}
    states = []
    early = st.kind in ("compute", "request")
    for bw, (_, rect) in zip(d.bank_words, prep.word_rects):
        state = "todo" if early else st.step_state(bw.wavefront)
        states.append(state)
        groups[state].append(rect)
    if st.kind == "compute":
        styles = {"todo": (None, _pen(th.q("grid"), border, 1.0, Qt.PenStyle.DashLine))}
        text_cs = {"todo": muted}
    else:
        styles = {"todo": (th.q("word"), _pen(th.q("link"), border)),
                  "done": (_mix(th.q("served"), th.q("background"), 0.25), _pen(th.q("served"), border)),
                  "now": (th.q("now"), _pen(th.q("text"), border * 2))}
        text_cs = {"todo": th.q("word_text"), "done": th.q("text"), "now": th.q("now_text")}
    for state, (fill, pen) in styles.items():
        if groups[state]:
            p.setPen(pen)
            p.setBrush(fill if fill is not None else Qt.BrushStyle.NoBrush)
            p.drawRects(groups[state])
    font = color = None
    badges = st.kind != "compute"
    for k, (bw, state) in enumerate(zip(d.bank_words, states)):
        if prep.word_texts:
            bold = state == "now"
            stt, pt = prep.word_texts[k][bold]
            f = prep.word_fonts[bold]
            if f is not font:
                p.setFont(f)
                font = f
            c = text_cs[state]
            if c is not color:
                p.setPen(c)
                color = c
            p.drawStaticText(pt, stt)
        if badges and len(bw.lanes) > 1:
            _broadcast_badge(p, prep.word_rects[k][0], th, s, len(bw.lanes), state)
            font = color = None
    p.setBrush(Qt.BrushStyle.NoBrush)


def _broadcast_badge(p: QPainter, r: QRectF, th: Theme, s: float, n: int, state: str) -> None:
    """``xN`` in a corner: one word, N lanes (a broadcast on load, one write on store)."""
    txt = f"×{n}"
    px = max(7, int(min(15 * s, r.height() * 0.5)))
    w = _advance(th.sans, px, True, txt) + 6 * s
    box = QRectF(r.right() - w, r.top() - px * 0.55, w, px * 1.25)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(th.q("bad") if state != "done" else th.q("served"))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.drawRoundedRect(box, 3 * s, 3 * s)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    _text(p, box, txt, th, px, QColor("#ffffff"), bold=True)


# ---------------------------------------------------------------------------- global


def _line_rows(lines: list[int]) -> list[list[int]]:
    """The lines touched, in address order, in one row: a warp touches at most 32 lines, and
    one row keeps lane k's link short and uncrossed where lane k has a line of its own."""
    return [lines]


@dataclass
class _GlobalPrep:
    lines: list                  # per line, row order: (line, box QRect, label plain, label bold, sectors)
    label_font: tuple            # (plain, bold) QFont of the line labels, or None
    dividers: list
    dots: list
    marks: list                  # the bytes asked for, inside their sectors
    links: list                  # (line, segment) per active lane
    sector_font: QFont | None
    sector_texts: dict           # sector number in its line -> QStaticText


def _prep_global(L: Layout, th: Theme, d: WarpDetail) -> _GlobalPrep:
    s = L.s
    mem = L.memory
    lines = list(d.lines) or [0]
    rows = _line_rows(lines)
    label_h = 28 * s
    x0 = L.columns[0] - L.col_w / 2
    x1 = L.columns[31] + L.col_w / 2
    n_max = max(len(r) for r in rows)
    near = min(8 * s, (x1 - x0) / n_max * 0.12)
    far = min(40 * s, (x1 - x0) / n_max * 0.4)    # a gap in the addresses: room for an ellipsis
    gaps = [[0.0] + [near if r[k] == r[k - 1] + 1 else far for k in range(1, len(r))] for r in rows]
    per_row = max(len(r) for r in rows)
    line_w = (x1 - x0 - max(sum(g) for g in gaps)) / per_row
    avail = mem.height() - LINK_GAP * s
    row_h = max(12 * s, min(150 * s, avail / len(rows) - label_h))
    grid_h = len(rows) * (row_h + label_h)
    top = mem.top() + LINK_GAP * s + max(0.0, min(avail - grid_h, LINK_EXTRA * s))
    sec_w = line_w / 4
    byte_w = sec_w / SECTOR
    sectors = {su.sector: su for su in d.sectors}
    spans: dict[int, list[tuple[int, int]]] = {}
    for ln in d.lanes:
        if ln.active:
            spans.setdefault(ln.sector, []).append((ln.byte_addr % SECTOR, ln.size))
    spans = {k: sorted(set(v)) for k, v in spans.items()}
    long_label = tr("line at byte {a}", a=lines[-1] * LINE)
    long_px = _fit_px(th.sans, [long_label], line_w - 4 * s, 19 * s, 16 * s)
    short_px = _fit_px(_condensed(th), [str(lines[-1] * LINE)], line_w - 2 * s, 19 * s, 9)
    sec_px = _fit_px(th.sans, [tr("sector {k}", k=3)], sec_w - 6 * s, 15 * s, 10 * s) if row_h > 50 * s else 0
    border = max(1.0, 1.3 * s * th.stroke)
    bw_ = max(1, round(border))
    fam, px = (th.sans, long_px) if long_px else (_condensed(th), short_px)

    def label(text: str, r: QRectF, bold: bool):
        stt = _static(fam, px, bold, text)
        return stt, QPointF(r.left(), r.top() + (r.height() - stt.size().height()) / 2)

    out_lines, dividers, dots, marks, boxes = [], [], [], [], {}
    for r_, row in enumerate(rows):
        bx = x0
        by = top + r_ * (row_h + label_h) + label_h
        for c_, ln in enumerate(row):
            bx += gaps[r_][c_]
            if gaps[r_][c_] == far and far > near:
                # An ellipsis of three dots: lines skipped in between (cheaper than a glyph).
                dot = max(2.0, min(far / 7, 5 * s))
                cx, cy = bx - far / 2, by + row_h / 2
                dots.extend(QRectF(cx + (k - 1) * dot * 1.9 - dot / 2, cy - dot / 2, dot, dot).toRect()
                            for k in range(3))
            box = boxes[ln] = QRectF(bx, by, line_w, row_h)
            lab_r = QRectF(bx, by - label_h, line_w, label_h)
            text = tr("line at byte {a}", a=ln * LINE) if long_px else str(ln * LINE)
            labels = (label(text, lab_r, False), label(text, lab_r, True)) if px >= 1 else None
            dividers.extend(QRectF(bx + q * sec_w - bw_ / 2, by, bw_, row_h).toRect() for q in range(1, 4))
            secs = []
            for q in range(4):
                su = sectors.get(ln * 4 + q)
                if su is None:
                    continue
                sr = QRectF(bx + q * sec_w, by, sec_w, row_h)
                secs.append((q, sr.toRect()))
                marks.extend(_used_bytes(sr, spans.get(su.sector, []), byte_w, row_h, s))
            out_lines.append((ln, box.toRect(), labels, secs))
            bx += line_w
    lane_foot = L.lanes[0].bottom()
    links = []
    for ln in d.lanes:
        if ln.active and ln.line in boxes:
            box = boxes[ln.line]
            x = box.left() + (ln.byte_addr % LINE + ln.size / 2) * (line_w / LINE)
            links.append((ln.line, QLineF(L.columns[ln.lane], lane_foot, x, box.top() - label_h * 0.15)))
    sector_texts = {q: _static(th.sans, sec_px, False, tr("sector {k}", k=q)) for q in range(4)} if sec_px else {}
    return _GlobalPrep(out_lines, (_font(fam, px), _font(fam, px, True)) if px >= 1 else None, dividers, dots,
                       marks, links, _font(th.sans, sec_px) if sec_px else None, sector_texts)


def _paint_global(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: _State) -> None:
    """The address ruler: each touched 128-byte line as 4 sectors of 32 bytes, the sectors
    the warp touches filled, the bytes it asked for marked inside them; lines that are
    not next to each other in memory are separated by a gap with an ellipsis."""
    s = L.s
    prep = _prepared("global", L, th, d, lambda: _prep_global(L, th, d))
    border = max(1.0, 1.3 * s * th.stroke)
    empty_edge = _mix(th.q("grid"), th.q("background"), 0.7)
    bg = th.q("background")
    order = st.line_order
    # Links first, so the sectors they point into stay readable on top.
    if st.links:
        now, todo, done = [], [], []
        request = st.kind == "request"
        for line, seg in prep.links:
            state = "todo" if request else st.step_state(order[line])
            (now if state == "now" else done if state == "done" else todo).append(seg)
        _draw_links(p, th, s, done, todo, now, st.kind)
    # Collect, then draw by kind: a 32-line ruler is 160 boxes, and one drawRects call per
    # style costs what a handful of single calls would.
    sector_boxes: dict[str, list] = {"compute": [], "todo": [], "done": [], "now": []}
    early = st.kind in ("compute", "request")
    text_c, muted = th.q("text"), th.q("muted")
    font = color = None
    for ln, _box, labels, secs in prep.lines:
        state = "todo" if early else st.step_state(order.get(ln, 0))
        if labels is not None:
            bold = state == "now"
            f = prep.label_font[bold]
            if f is not font:
                p.setFont(f)
                font = f
            c = text_c if bold else muted
            if c is not color:
                p.setPen(c)
                color = c
            stt, pt = labels[bold]
            p.drawStaticText(pt, stt)
        sector_boxes["compute" if st.kind == "compute" else state].extend(secs)
    # Lines as empty boxes with sector dividers, then the touched sectors over them.
    p.setPen(_pen(empty_edge, border))
    p.setBrush(bg)
    p.drawRects([box for _, box, _, _ in prep.lines])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(empty_edge)
    p.drawRects(prep.dividers)
    styles = {"compute": (_mix(th.q("sector"), bg, 0.3), th.q("grid"), 1),
              "todo": (_mix(th.q("sector"), bg, 0.5), th.q("grid"), 1),
              "done": (th.q("sector"), th.q("grid"), 1),
              "now": (_mix(th.q("now"), bg, 0.6), th.q("text"), 2)}
    for state, secs in sector_boxes.items():
        if secs:
            fill, edge, wmul = styles[state]
            p.setPen(_pen(edge, border * wmul))
            p.setBrush(fill)
            p.drawRects([r for _, r in secs])
    if prep.marks and st.kind != "compute":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(th.q("byte_used"))
        p.drawRects(prep.marks)
    if prep.dots:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(muted)
        p.drawRects(prep.dots)
    p.setBrush(Qt.BrushStyle.NoBrush)
    # Sector labels go on top of the fills.
    if prep.sector_font is not None:
        p.setFont(prep.sector_font)
        color = None
        for state in ("done", "now", "todo", "compute"):
            c = th.q("now_text") if state == "now" else muted
            for q, r in sector_boxes[state]:
                stt = prep.sector_texts[q]
                if c is not color:
                    p.setPen(c)
                    color = c
                sz = stt.size()
                box = QRectF(r.left(), r.bottom() - 22 * s, r.width(), 20 * s)
                p.drawStaticText(QPointF(box.left() + (box.width() - sz.width()) / 2,
                                         box.top() + (box.height() - sz.height()) / 2), stt)


def _used_bytes(sr: QRectF, spans: list[tuple[int, int]], byte_w: float, row_h: float, s: float) -> list[QRect]:
    """The bytes the warp asked for inside one sector (the rest moved for nothing), as
    rectangles: one per distinct lane access where it is wide enough to tell them apart
    (this shows the access width), else merged runs."""
    top = sr.top() + row_h * 0.2
    h = row_h * 0.45 if row_h > 40 * s else row_h * 0.6
    inner_l, inner_r = sr.left() + 2, sr.right() - 2      # keep marks clear of the border
    size = spans[0][1] if spans else 1
    if size * byte_w < 6:                                 # merge touching spans into runs
        runs: list[list[int]] = []
        for off, n in spans:
            if runs and off <= runs[-1][1]:
                runs[-1][1] = max(runs[-1][1], off + n)
            else:
                runs.append([off, off + n])
        spans = [(a, b - a) for a, b in runs]
        gap = 0
    else:
        gap = 1 if size * byte_w < 14 else 2
    out = []
    for off, n in spans:
        a = max(inner_l, sr.left() + off * byte_w)
        b = min(inner_r, sr.left() + (off + n) * byte_w - gap)
        if b - a < 3:                                     # a 1-byte access stays visible
            a, b = (a, a + 3) if a + 3 <= inner_r else (b - 3, b)
        out.append(QRectF(a, top, b - a, h).toRect())
    return out


# ---------------------------------------------------------------------------- figures, caption


@dataclass(frozen=True)
class TextBox:
    """One piece of text of the figures row where it is drawn: ``rect`` is exactly the
    text's advance wide, so boxes that do not intersect are texts that do not touch."""

    key: str                # "counter", "label:<name>", "value:<name>", "bar"
    text: str
    rect: QRectF
    px: int
    bold: bool = False
    color: str = "text"     # a theme colour name


def figures_row(L: Layout, th: Theme, d: WarpDetail, f: Frame) -> list[TextBox]:
    """The figures row laid out: the counter ("Wavefront 3 of 32") at the left, then the
    figures as "label: value" side by side at one type size, then (global) the efficiency
    bar at the right. Widths are measured at the size drawn; when the row is short of room
    the size comes down to 16 px (at scale 1), and below that the least important figure
    gives way, then the next, so nothing ever overlaps or leaves the row."""
    s = L.s
    r = L.figures
    pad = 14 * s
    inner = r.adjusted(pad, 0, -pad, 0)
    if f.kind == "idle":
        text = tr("no active lane: nothing issued")
        px = _fit_px(th.sans, (text,), inner.width(), 26 * s, 6, bold=True)
        return [TextBox("counter", text, QRectF(inner.left(), inner.top(), _advance(th.sans, px, True, text),
                                                inner.height()), px, True, "muted")] if px else []
    # (name, label, value, colour, priority): the lower the number, the longer it stays.
    if d.space == "shared":
        if f.kind == "wavefront":
            counter = tr("Wavefront {k} of {n}", k=f.step + 1, n=d.wavefronts)
        else:
            counter = tr("{n} wavefronts", n=d.wavefronts) if d.wavefronts != 1 else tr("1 wavefront")
        conf = d.conflicts
        ways = conflict_ways(d)
        figs = [("conflicts", tr("bank conflicts"), str(conf) + (tr(" ({ways}-way)", ways=ways) if conf else ""),
                 "bad" if conf else "good", 0),
                ("phases", tr("phases"), str(d.active_phases), "text", 1),
                ("lanes", tr("active lanes"), str(d.active_lanes), "text", 2)]
        bar = None
    else:
        if f.kind == "line":
            counter = tr("Line {k} of {n}", k=f.step + 1, n=len(d.lines))
        else:
            counter = tr("1 request")
        moved = len(d.sectors) * SECTOR
        figs = [("sectors", tr("sectors"), str(len(d.sectors)), "text", 0),
                ("lines", tr("lines"), str(len(d.lines)), "text", 3),
                ("asked", tr("bytes asked"), str(d.bytes_requested), "text", 2),
                ("moved", tr("bytes moved"), str(moved), "text", 1)]
        bar = d.sector_efficiency
    out: list[TextBox] = []
    counter_px = _fit_px(th.sans, [counter], inner.width() * 0.36, 34 * s, 8, bold=True)
    counter_w = _advance(th.sans, counter_px, True, counter) if counter_px else 0.0
    if counter_px:
        out.append(TextBox("counter", counter, QRectF(inner.left(), inner.top(), counter_w, inner.height()),
                           counter_px, True))
    gap = 26 * s
    x0 = inner.left() + counter_w + gap * 1.4
    bar_w = min(inner.width() * 0.26, 380 * s) if bar is not None else 0.0
    right = inner.right() - bar_w - (gap if bar is not None else 0.0)

    def width_at(items, px: int) -> float:
        return (sum(_advance(th.sans, px, False, lab + sep(": ")) + _advance(th.sans, px, True, val)
                    for _, lab, val, _, _ in items) + gap * (len(items) - 1))

    def size_for(items) -> int:
        """The largest whole pixel size up to 24 (at scale 1) at which ``items`` fit, measured."""
        room = right - x0
        w100 = width_at(items, 100) - gap * (len(items) - 1)
        if room <= 0 or w100 <= 0:
            return 0
        px = int(min(24 * s, (room - gap * (len(items) - 1)) * 100 / w100))
        while px >= 1 and width_at(items, px) > room:     # hinting: small sizes run a little wide
            px -= 1
        return max(px, 0)

    shown = list(figs)
    px = size_for(shown)
    while len(shown) > 1 and px < 16 * s:
        shown.remove(max(shown, key=lambda t: t[4]))
        px = size_for(shown)
    if px >= 4:
        x = x0
        for name, label, value, color, _ in shown:
            lw = _advance(th.sans, px, False, label + sep(": "))
            vw = _advance(th.sans, px, True, value)
            out.append(TextBox(f"label:{name}", label + sep(": "), QRectF(x, inner.top(), lw, inner.height()), px,
                               False, "muted"))
            out.append(TextBox(f"value:{name}", value, QRectF(x + lw, inner.top(), vw, inner.height()), px, True,
                               color))
            x += lw + vw + gap
    if bar is not None:
        out.append(TextBox("bar", "", QRectF(inner.right() - bar_w, inner.top() + inner.height() * 0.18, bar_w,
                                             inner.height() * 0.64), 0))
    return out


def _paint_figures(p: QPainter, L: Layout, th: Theme, d: WarpDetail, f: Frame, st: _State) -> None:
    p.fillRect(L.figures, th.q("panel"))
    L.figure_texts = figures_row(L, th, d, f)
    for box in L.figure_texts:
        if box.key == "bar":
            _efficiency_bar(p, box.rect, d.sector_efficiency, th, L.s)
        else:
            _text(p, box.rect, box.text, th, box.px, th.q(box.color), bold=box.bold, align="l")


def _efficiency_bar(p: QPainter, r: QRectF, eff: float, th: Theme, s: float) -> None:
    label = tr("efficiency {pct}%", pct=f"{100 * eff:.1f}".rstrip("0").rstrip("."))
    p.setPen(_pen(th.q("grid"), max(1.0, 1.3 * s)))
    p.setBrush(th.q("background"))
    p.drawRect(r)
    fill = QRectF(r.left(), r.top(), r.width() * max(0.0, min(1.0, eff)), r.height())
    color = th.q("good") if eff >= 0.999 else (th.q("now") if eff >= 0.5 else th.q("bad"))
    p.fillRect(fill, color)
    # The label sits on a plate so it reads on any fill.
    px = _fit_px(th.sans, [label], r.width() - 12 * s, r.height() * 0.62, 6, bold=True)
    tw = _advance(th.sans, px, True, label) + 12 * s
    plate = QRectF(r.center().x() - tw / 2, r.top() + r.height() * 0.12, tw, r.height() * 0.76)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(_alpha(th.q("background"), 0.85))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.drawRoundedRect(plate, 3 * s, 3 * s)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    _text(p, plate, label, th, px, th.q("text"), bold=True)
    p.setBrush(Qt.BrushStyle.NoBrush)


def _paint_caption(p: QPainter, L: Layout, th: Theme, caption: str) -> None:
    s = L.s
    r = L.caption
    p.fillRect(r, th.q("caption_bg"))
    inner = r.adjusted(24 * s, 8 * s, -24 * s, -8 * s)
    fam = th.sans
    px = int(32 * s)
    flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextWordWrap)
    # The largest size at which the sentence fits the bar in at most two lines.
    while px > 8:
        br = _metrics(fam, px).boundingRect(inner, flags, caption)
        if br.height() <= inner.height() + 0.5 and br.width() <= inner.width() + 0.5:
            break
        px -= 1
    p.setFont(_font(fam, px))
    p.setPen(th.q("caption_text"))
    p.drawText(inner, flags, caption)


# ---------------------------------------------------------------------------- compositions


def paint_compare(p: QPainter, rect: QRectF, left: tuple[WarpDetail, Frame], right: tuple[WarpDetail, Frame],
                  theme: Theme | None = None, options: PaintOptions | None = None,
                  labels: tuple[str, str] | None = None) -> tuple[Layout, Layout]:
    """Two layouts side by side, each a whole frame (its own caption and figures); ``labels``
    become the two title bars (default: the scenarios' titles)."""
    th = theme or _theme()
    o = options or PaintOptions()
    gap = max(2.0, round(6 * min(rect.width() / BASE_W, rect.height() / BASE_H)))
    half = (rect.width() - gap) / 2
    out = []
    for k, (d, f) in enumerate((left, right)):
        r = QRectF(rect.left() + k * (half + gap), rect.top(), half, rect.height())
        title = labels[k] if labels else (o.title or d.scenario.shown_title)
        out.append(paint_frame(p, r, d, f, th, PaintOptions(o.captions, title, o.header, o.figures, o.label_column)))
    p.fillRect(QRectF(rect.left() + half, rect.top(), gap, rect.height()).toRect(), th.q("grid"))
    return out[0], out[1]


def paint_title_card(p: QPainter, rect: QRectF, title: str, lines: list[str], theme: Theme | None = None) -> None:
    """A still that opens a video: the title, then a few plain lines (layout, access, launch)."""
    th = theme or _theme()
    s = min(rect.width() / BASE_W, rect.height() / BASE_H) * th.scale
    p.save()
    try:
        p.setClipRect(rect)
        p.fillRect(rect, th.q("background"))
        inner = rect.adjusted(120 * s, 0, -120 * s, 0)
        y = rect.top() + rect.height() * 0.28
        title_r = QRectF(inner.left(), y, inner.width(), 150 * s)
        flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom | Qt.TextFlag.TextWordWrap)
        px = int(64 * s)
        while px > 12 and _metrics(th.sans, px, True).boundingRect(title_r, flags, title).height() > title_r.height():
            px -= 2
        p.setFont(_font(th.sans, px, True))
        p.setPen(th.q("title_text"))
        p.drawText(title_r, flags, title)
        y += 150 * s + 18 * s
        p.fillRect(QRectF(inner.left(), y, 160 * s, max(2.0, 6 * s)).toRect(), th.q("now"))
        y += 40 * s
        for line in lines:
            r = QRectF(inner.left(), y, inner.width(), 46 * s)
            _fit_text(p, r, line, th, 34 * s, th.q("muted"), align="l")
            y += 52 * s
        _fit_text(p, QRectF(inner.left(), rect.bottom() - 90 * s, inner.width(), 40 * s), "warpviz", th,
                  26 * s, th.q("grid"), bold=True, align="l")
    finally:
        p.restore()


__all__ = ["paint_frame", "paint_compare", "paint_title_card", "layout", "Layout", "PaintOptions", "figures_row",
           "TextBox"]
