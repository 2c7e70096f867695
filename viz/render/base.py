"""What every part of the picture shares: the options, the layout, the frame's state, pens,
colours, the lane-to-memory links and the per-instruction memo of laid-out parts."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from functools import lru_cache

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from ..frames import Frame
from ..i18n import language
from ..warp import WarpDetail
from .text import is_null
from .theme import Theme


@dataclass(frozen=True)
class PaintOptions:
    """What to draw besides the frame itself."""

    captions: bool = True          # the caption bar at the bottom
    title: str | None = None       # a title bar at the top
    header: bool = True            # the instruction line and element diagram
    figures: bool = True           # the counter and figures row
    label_column: bool | None = None  # row labels at the left; None or True: always (False: none)
    stale_note: str | None = None  # a muted band over the picture, e.g. "showing the last valid version"
    min_px: int = 0                # the smallest type the caller asks for (0: FLOOR_PX, 12 px); the app's
    #                                presentation mode asks for text.presentation_floor(screen height)
    rows: str = "auto"             # lane rows: "auto" (all that fit), "all", or those named, e.g. "lane,index"
    #                                (names: lane, thread, index, addr; ROW_NAMES)
    align: tuple | None = None     # set by paint_compare: both halves' lane rows and memory view alike


@dataclass
class Layout:
    """Rectangles of one painted frame (for hit-testing in the app), and the record of the
    text drawn (``texts``: ``TextItem`` each; ``dropped``: what could not be drawn)."""

    rect: QRectF
    s: float                                # type scale: 1.0 at 1920x1080
    min_px: int = 1                         # the smallest type allowed in this picture
    boost: float = 1.0                      # lane and word type cap, times s (> 1: a tall picture's spare height)
    title: QRectF | None = None
    header: QRectF | None = None
    lanes: list[QRectF] = field(default_factory=list)
    lane_area: QRectF | None = None
    phase_area: QRectF | None = None
    label_x: float = 0.0                    # left edge of the row labels (0 width when none)
    label_w: float = 0.0
    label_px: int = 0                       # type size of the row labels
    memory: QRectF | None = None
    figures: QRectF | None = None
    caption: QRectF | None = None
    columns: list[float] = field(default_factory=list)  # x centre of each lane column
    col_w: float = 0.0
    lane_rows: list = field(default_factory=list, repr=False)   # (label, 32 texts) per lane-cell row
    row_names: list = field(default_factory=list, repr=False)   # per lane row: lane, thread, index, addr
    hidden_rows: list = field(default_factory=list, repr=False)  # labels of the lane rows left out
    rows_note: QRectF | None = None         # the line that names them
    shared_mode: str | None = None          # "bank" or "time" where a comparison sets it for both halves
    lanes_fit: bool = True                  # False: a lane row's texts are wider than its boxes even folded 4 deep
    lane_specs: list = field(default_factory=list, repr=False)  # per row: (px, stagger, top, height)
    header_plan: object = field(default=None, repr=False)
    figure_texts: list = field(default_factory=list, repr=False)  # TextBox per text of the figures row
    texts: list = field(default_factory=list, repr=False)         # TextItem per string drawn, once painted
    dropped: list = field(default_factory=list, repr=False)       # labels that could not be drawn


class State:
    """What each lane, word and line looks like in this frame."""

    def __init__(self, d: WarpDetail, f: Frame, p=None):
        self.kind = f.kind
        self.wf = f.wavefront
        self.line_k = f.step if f.kind == "line" else None
        self.links = f.kind in ("request", "wavefront", "line", "summary")
        self.phase = f.phase
        self.null = is_null(p)
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
        self.n_lines = len(d.lines)

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


def pen(c: QColor, w: float, alpha: float = 1.0, style=Qt.PenStyle.SolidLine, crisp: bool = True) -> QPen:
    """A pen; ``crisp`` (outlines of snapped rectangles) rounds the width to whole pixels,
    which keeps Qt on its fast path for unantialiased strokes."""
    return _pen_cached(c.rgba(), max(1, round(w)) if crisp else round(w, 2), round(alpha, 3), style)


@lru_cache(maxsize=1024)
def _pen_cached(rgba: int, w: float, alpha: float, style) -> QPen:
    c = QColor.fromRgba(rgba)
    if alpha < 1.0:
        c.setAlphaF(alpha)
    p = QPen(c, w, style)
    # Flat caps: Qt's raster engine strokes round caps of wide lines about 10x slower.
    p.setCapStyle(Qt.PenCapStyle.FlatCap)
    p.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    return p


def snap(r: QRectF) -> QRect:
    """``r`` with whole-pixel edges (drawn without antialiasing it stays sharp)."""
    return r.toRect()


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` blended over ``b`` at opacity ``t``, as an opaque colour (opaque strokes are fast)."""
    return QColor.fromRgbF(a.redF() * t + b.redF() * (1 - t), a.greenF() * t + b.greenF() * (1 - t),
                           a.blueF() * t + b.blueF() * (1 - t))


def alpha(c: QColor, a: float) -> QColor:
    c = QColor(c)
    c.setAlphaF(a)
    return c


def draw_links(p: QPainter, th: Theme, s: float, done, todo, now, kind: str) -> None:
    """Lane-to-memory links: pending ones plain, the current ones bold; delivered ones are
    gone while the story runs (the word and the lane show it) and faint in the summary."""
    lw = max(1.0, 1.6 * s * th.stroke)
    bg = th.q("background")
    if kind != "summary":
        done = ()
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for segs, color, width in ((done, mix(th.q("link"), bg, 0.45), lw), (todo, mix(th.q("link"), bg, 0.8), lw),
                               (now, th.q("now"), lw * 2.2)):
        if segs:
            p.setPen(pen(color, width, crisp=False))
            for seg in segs:
                p.drawLine(seg)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)


_PREP = threading.local()


def prepared(kind: str, L: Layout, th: Theme, d: WarpDetail, build):
    """What part ``kind`` of the picture needs that stays the same from frame to frame of
    one warp instruction (text laid out, sizes fitted, positions, rectangles): built once
    per detail, geometry, fonts and language, and kept per thread (it holds laid-out text).
    The frames of an animation differ only in state, so they share it."""
    memo = getattr(_PREP, "memo", None)
    if memo is None:
        memo = _PREP.memo = {}
    r = L.rect
    key = (kind, id(d), r.x(), r.y(), r.width(), r.height(), L.s, L.boost, L.min_px, L.label_w, L.lane_area.top(),
           L.lane_area.height(), L.memory.top(), L.memory.height(), th.sans, th.mono, th.stroke, language(),
           tuple(L.row_names), tuple((px, n) for px, n, _, _ in L.lane_specs), L.shared_mode)
    hit = memo.get(key)
    if hit is not None and hit[0] is d:
        return hit[1]
    if len(memo) >= 64:
        memo.clear()
    value = build()
    memo[key] = (d, value)
    return value
