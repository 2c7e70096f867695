"""Text for the painter: fonts, measuring, fitting, drawing, and the record of what was drawn.

Every string the painter draws goes through ``draw_text`` (or is laid out by
``place``/``Placed`` and recorded the same way), so a paint leaves behind, on its
``Layout``, the list of ``TextItem``: each string, its pixel size and the rectangle it
covers (exactly its advance wide and its line high), plus what could not be drawn
(``dropped``: empty when the painter kept everything; it draws a visible summary rather
than leave a label out). Tests check the rules of the picture on that record: no text
under ``min_px``, no two texts on top of each other, nothing dropped.

``NullPainter`` is a painter that draws nothing: painting onto it only makes the record,
which is how a test can go over every frame of every built-in quickly.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QStaticText

from ..i18n import language
from .theme import Theme

BASE_W, BASE_H = 1920.0, 1080.0
MIN_TEXT_PX = 14.0        # the smallest text at 1920x1080 (scaled with the height and the theme's scale)
FLOOR_PX = 12             # no text under 12 px in any picture, whatever its size (a window's canvas, a half)
PRESENTATION_PX = 18      # presentation mode on a 1080-px screen; in proportion to the screen's height
THUMBNAIL_H = 360         # below this height the floor shrinks in proportion (a thumbnail, not a slide)


def min_text_px(height: float, scale: float = 1.0, floor: int = FLOOR_PX) -> int:
    """The smallest whole pixel size allowed in a picture ``height`` pixels high: 14 px per
    1080 px of height times the theme's scale, and never under ``floor`` (12 px; the app's
    presentation mode asks for ``presentation_floor``). Where a picture is too small for
    that, it folds lanes into more sub-rows or leaves detail rows out (and says so) rather
    than shrink its type. A thumbnail under 360 px high (below any slide or window) scales the
    floor down with its height."""
    if height < THUMBNAIL_H:
        floor = floor * height / THUMBNAIL_H
    return max(math.ceil(floor - 1e-6), 1, math.ceil(MIN_TEXT_PX * height / BASE_H * scale - 1e-6))


def presentation_floor(screen_height: float) -> int:
    """The smallest text in presentation mode on a screen ``screen_height`` px high: 18 px at
    1080p, in proportion below and above (12 px at 720p: the same share of the screen), and
    never under ``FLOOR_PX``."""
    return max(FLOOR_PX, math.ceil(PRESENTATION_PX * screen_height / BASE_H - 1e-6))


# ---------------------------------------------------------------------------- record


def _box(r: QRectF | None) -> tuple | None:
    return None if r is None else (r.left(), r.top(), r.right(), r.bottom())


class TextItem(tuple):
    """One string drawn: ``rect`` is exactly its advance wide and its line high; ``box`` is
    the same as (left, top, right, bottom). ``key`` names the part of the picture. ``cell``
    is the box (left, top, right, bottom) the text belongs in (a lane's cell, a bank's
    word, the title bar...) where the painter knows one, else None: the picture's rule is
    that ``box`` stays inside ``cell``."""

    __slots__ = ()

    def __new__(cls, text: str, px: int, rect: QRectF, key: str = "", cell: QRectF | None = None):
        return tuple.__new__(cls, (text, px, (rect.left(), rect.top(), rect.right(), rect.bottom()), key,
                                   _box(cell)))

    text = property(lambda self: self[0])
    px = property(lambda self: self[1])
    box = property(lambda self: self[2])
    key = property(lambda self: self[3])
    cell = property(lambda self: self[4] if len(self) > 4 else None)

    @property
    def rect(self) -> QRectF:
        x0, y0, x1, y1 = self[2]
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def moved(self, dx: float, dy: float) -> "TextItem":
        x0, y0, x1, y1 = self[2]
        c = self.cell
        cell = None if c is None else (c[0] + dx, c[1] + dy, c[2] + dx, c[3] + dy)
        return tuple.__new__(TextItem, (self[0], self[1], (x0 + dx, y0 + dy, x1 + dx, y1 + dy), self[3], cell))

    def overflow(self) -> float:
        """How far (px) the text reaches out of its cell; 0 inside it or without one."""
        c = self.cell
        if c is None:
            return 0.0
        x0, y0, x1, y1 = self[2]
        return max(0.0, c[0] - x0, c[1] - y0, x1 - c[2], y1 - c[3])

    def __repr__(self) -> str:
        return f"TextItem({self[0]!r}, {self[1]}px, {self[2]}, {self[3]!r})"


class NullPainter:
    """Draws nothing (every QPainter call is a no-op): paint onto it to get the record only."""

    def __getattr__(self, name):
        return _noop


def _noop(*args, **kwargs):
    return None


def is_null(p) -> bool:
    return isinstance(p, NullPainter)


class _Record(threading.local):
    texts: list | None = None
    dropped: list | None = None


RECORD = _Record()


def record(item: TextItem) -> None:
    texts = RECORD.texts
    if texts is not None:
        texts.append(item)


def record_many(items) -> None:
    texts = RECORD.texts
    if texts is not None:
        texts.extend(items)


def drop(what: str) -> None:
    """Something that could not be drawn (the painter draws a summary in its place)."""
    dropped = RECORD.dropped
    if dropped is not None:
        dropped.append(what)


# ---------------------------------------------------------------------------- fonts


def per_thread(maxsize: int):
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


PICTURE_FAMILIES = ("Warpviz Sans", "Warpviz Sans Condensed", "Warpviz Mono", "Warpviz CJK SC")
_FONTS_LOCK = threading.Lock()
_FONTS: list[str] | None = None


def register_fonts() -> list[str]:
    """Register the fonts the pictures are drawn with (``assets/fonts``: subsets of DejaVu
    and Noto Sans CJK SC named ``Warpviz ...``) with Qt, once; returns the families added.
    The themes name them first, so a picture is drawn, measured and laid out with the same
    fonts on every machine, whatever fonts it has (the machine's own are only a fallback for
    a character the subsets lack, e.g. in a user's own scenario title)."""
    global _FONTS
    if _FONTS is not None:
        return _FONTS
    with _FONTS_LOCK:
        if _FONTS is None:
            from PySide6.QtGui import QFontDatabase

            from .. import assets

            got: list[str] = []
            folder = assets.root() / "fonts"
            for path in sorted(folder.glob("Warpviz*.[ot]tf")):
                fid = QFontDatabase.addApplicationFont(str(path))
                if fid >= 0:
                    got += [f for f in QFontDatabase.applicationFontFamilies(fid) if f not in got]
            _FONTS = got
    return _FONTS


@per_thread(512)
def font(families: tuple[str, ...], px: int, bold: bool = False) -> QFont:
    register_fonts()
    f = QFont()
    f.setFamilies(list(families))
    f.setPixelSize(max(1, px))
    f.setBold(bold)
    f.setStyleHint(QFont.StyleHint.Monospace if "Mono" in families[0] else QFont.StyleHint.SansSerif)
    return f


def condensed(th: Theme) -> tuple[str, ...]:
    """Narrow figures for the lane cells (32 across): the shipped condensed sans (DejaVu Sans
    Condensed's subset)."""
    return ("Warpviz Sans Condensed", "DejaVu Sans Condensed", "Arial Narrow") + th.sans


@per_thread(512)
def metrics(families: tuple[str, ...], px: int, bold: bool = False) -> QFontMetricsF:
    return QFontMetricsF(font(families, px, bold))


@lru_cache(maxsize=16384)
def advance(families: tuple[str, ...], px: int, bold: bool, text: str) -> float:
    return metrics(families, px, bold).horizontalAdvance(text)


def line_h(families: tuple[str, ...], px: int, bold: bool = False) -> float:
    """The height of one line of text at ``px`` (what ``QStaticText.size()`` reports); in
    Chinese, the CJK fallback font's (taller) line."""
    return line_height(families, px, bold, language() != "en")


@lru_cache(maxsize=1024)
def line_height(families: tuple[str, ...], px: int, bold: bool, cjk: bool) -> float:
    return static(families, px, bold, "0波" if cjk else "0").size().height()


def fit_px(families: tuple[str, ...], texts, width: float, max_px: float, min_px: float = 6,
           bold: bool = False) -> int:
    """The largest whole pixel size <= max_px at which every text fits ``width``, measured
    at that size (0 if none >= min_px does)."""
    px = int(max_px)
    texts = [t for t in texts if t]
    if not texts:
        return px if px >= min_px else 0
    widest = max(texts, key=len)
    # Advance is close to linear in size: one measurement, then a check at the size found.
    w = max(advance(families, 100, bold, t) for t in texts if len(t) >= len(widest) - 2)
    if w > 0:
        px = min(px, int(width * 100 / w))
    while px >= min_px and px >= 1 and max(advance(families, px, bold, t) for t in texts) > width:
        px -= 1
    return px if px >= min_px and px >= 1 else 0


@per_thread(16384)
def static(families: tuple[str, ...], px: int, bold: bool, text: str) -> QStaticText:
    st = QStaticText(text)
    st.setTextFormat(Qt.TextFormat.PlainText)
    st.prepare(font=font(families, px, bold))
    return st


def family(th: Theme, mono: bool = False, cond: bool = False) -> tuple[str, ...]:
    return th.mono if mono else (condensed(th) if cond else th.sans)


class Placed:
    """A string laid out at a size and a top-left point, ready to draw, with its record.
    The ``QStaticText`` is made when first drawn (a record-only paint never needs it)."""

    __slots__ = ("fam", "px", "bold", "text", "x", "y", "item")

    def __init__(self, fam, px, bold, text, x, y, item):
        self.fam, self.px, self.bold, self.text, self.x, self.y, self.item = fam, px, bold, text, x, y, item

    @property
    def stt(self) -> QStaticText:
        return static(self.fam, self.px, self.bold, self.text)

    @property
    def pt(self) -> QPointF:
        return QPointF(self.x, self.y)


def place(fam: tuple[str, ...], px: int, bold: bool, text: str, r: QRectF, align: str = "c",
          key: str = "", cell: QRectF | None = None) -> Placed:
    """``text`` laid out and aligned in ``r`` (``l``, ``c`` or ``r``, centred vertically);
    ``cell`` is the box it belongs in (default ``r``), recorded for the picture's rules."""
    w = advance(fam, px, bold, text)
    h = line_h(fam, px, bold)
    left, top, rw, rh = r.left(), r.top(), r.width(), r.height()
    if align == "l":
        x = left
    elif align == "r":
        x = left + rw - w
    else:
        x = left + (rw - w) / 2
    y = top + (rh - h) / 2
    return Placed(fam, px, bold, text, x, y, tuple.__new__(TextItem, (text, px, (x, y, x + w, y + h), key,
                                                                       _box(r if cell is None else cell))))


def draw_text(p: QPainter, r: QRectF, text: str, th: Theme, px: float, color: QColor, bold: bool = False,
              align="c", mono: bool = False, cond: bool = False, key: str = "",
              cell: QRectF | None = None) -> TextItem | None:
    """One line of text aligned in ``r``, recorded with ``cell`` (default ``r``) as the box
    it belongs in. QStaticText: laid out once, drawn ~3x faster than ``drawText(rect,
    flags)``; QSvgGenerator still writes it as an SVG <text>."""
    if px < 1 or not text:
        return None
    fam = family(th, mono, cond)
    px = int(px)
    pl = place(fam, px, bold, text, r, align, key, cell)
    record(pl.item)
    if not is_null(p):
        p.setFont(font(fam, px, bold))
        p.setPen(color)
        p.drawStaticText(pl.pt, pl.stt)
    return pl.item


def wrap(fam: tuple[str, ...], px: int, bold: bool, text: str, width: float) -> list[str]:
    """``text`` broken into lines no wider than ``width`` at ``px``: at spaces, and inside a
    word (or CJK text, which has no spaces) only where a word alone is too wide."""
    lines: list[str] = []
    cur = ""
    for word in text.split(" "):
        cand = f"{cur} {word}" if cur else word
        if advance(fam, px, bold, cand) <= width:
            cur = cand
            continue
        if cur:
            lines.append(cur)
        cur = ""
        for ch in word:          # a word wider than the line: break it where it must
            if advance(fam, px, bold, cur + ch) <= width or not cur:
                cur += ch
            else:
                lines.append(cur)
                cur = ch
    if cur:
        lines.append(cur)
    return lines


def elide(fam: tuple[str, ...], px: int, bold: bool, text: str, width: float) -> str:
    """``text`` cut with an ellipsis to fit ``width`` (the caller records what it lost)."""
    if advance(fam, px, bold, text) <= width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if advance(fam, px, bold, text[:mid] + "…") <= width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"
