"""A layout's logical-to-physical map as a picture, in the manner of CuTe's ``print_layout``:
a grid of the logical rows and columns, each cell the element's physical offset, coloured
by the shared-memory bank of its first byte, with a legend of the 32 bank colours.

``natural_size`` is the size at which every number is written at 16 px (a figure for a
notebook or a document; like ``print_latex``'s PDF it grows with the grid). At a size the
caller chooses (a slide), no text is drawn smaller than 14 px per 1080 px of height; a grid
too dense for that is drawn in colour only and the picture says so, never silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from ..i18n import tr
from ..layout_text import LayoutMap
from .text import register_fonts
from .theme import Theme

MIN_PX = 14          # the smallest text at 1920x1080
CELL_PX = 16         # numbers at the natural size
MAX_CELL_PX = 22


def bank_color(bank: int, th: Theme) -> QColor:
    """32 colours: hues spread so that neighbouring banks differ; pale on light themes,
    deep on dark ones (the number in the cell stays readable either way)."""
    hue = (bank * 13) % 32 * (360 / 32)
    dark = QColor(th.colors["background"]).lightnessF() < 0.5
    c = QColor()
    c.setHslF(hue / 360, 0.55 if not dark else 0.5, 0.83 if not dark else 0.30)
    return c


def map_font(th: Theme, px: float, bold: bool = False, mono: bool = False) -> QFont:
    register_fonts()
    f = QFont()
    f.setFamilies(list(th.mono if mono else th.sans))
    f.setPixelSize(max(1, int(round(px))))
    f.setBold(bold)
    return f


def text_width(font: QFont, text: str) -> float:
    return QFontMetricsF(font).horizontalAdvance(text)


_font, _width = map_font, text_width      # their short names in this module


@dataclass
class MapGeometry:
    """Where everything went (tests read it): the text sizes used, the cells, the notes."""

    scale: float
    cell_px: int                     # 0: numbers not written (the grid is too dense)
    two_lines: bool                  # the bank under each offset
    cells: list[QRectF] = field(default_factory=list)
    texts: list[tuple[QRectF, str, int]] = field(default_factory=list)   # every text: box, text, px
    notes: list[str] = field(default_factory=list)


def _titles(m: LayoutMap) -> tuple[str, str, str]:
    title = m.text
    sub = tr("{type} ({size} B), {shape}").format(type=m.type_name, size=m.elem_size, shape=m.shape_text())
    legend = tr("Each cell: the element's offset. Colour: its bank, (offset × {size} B / 4) mod 32.").format(
        size=m.elem_size)
    return title, sub, legend


def _cell_need(m: LayoutMap, th: Theme, px: float) -> tuple[float, float, float]:
    """At ``px``: the width of the widest offset or column number, of the bank line, and
    the height of a line."""
    fm = QFontMetricsF(_font(th, px, mono=True))
    w1 = max(fm.horizontalAdvance(str(int(m.offsets.max()))), fm.horizontalAdvance(str(m.cols - 1)))
    return w1, max(w1, fm.horizontalAdvance("b31")), fm.height()


def natural_size(m: LayoutMap, th: Theme) -> tuple[int, int]:
    """The size at which every offset and its bank are written at 16 px (the model's
    estimate, ``LayoutMap.natural_size``, so that the exporter can size it without Qt)."""
    return m.natural_size(th.scale)


def begin_map(p: QPainter, rect: QRectF, th: Theme, scale: float | None) -> MapGeometry:
    """Start a map picture (layout or matrix map): its scale (1 = 1080p text sizes; default
    from the rect against 1920x1080), the painter saved with antialiasing on, the
    background filled. The caller restores the painter."""
    s = scale if scale is not None else min(rect.width() / 1920, rect.height() / 1080)
    g = MapGeometry(max(s, 0.05), 0, False)
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    p.fillRect(rect, th.q("background"))
    return g


def map_text(p: QPainter, th: Theme, g: MapGeometry, r: QRectF, t: str, px: float, color: str,
             bold: bool = False, mono: bool = False, align=Qt.AlignmentFlag.AlignLeft) -> None:
    """Draw ``t`` in ``r`` (vertically centred) and record its own box in ``g.texts``."""
    f = _font(th, px, bold, mono)
    flags = int(align | Qt.AlignmentFlag.AlignVCenter)
    p.setFont(f)
    p.setPen(th.q(color))
    p.drawText(r, flags, t)
    g.texts.append((QFontMetricsF(f).boundingRect(r, flags, t), t, int(round(px))))


def paint_layout_map(p: QPainter, rect: QRectF, m: LayoutMap, th: Theme, scale: float | None = None) -> MapGeometry:
    """Draw ``m`` into ``rect``. ``scale`` (1 = 1080p text sizes) defaults to the rect's
    size against 1920x1080; the natural size is drawn at scale 1."""
    g = begin_map(p, rect, th, scale)
    s = g.scale
    margin = 12 * s
    x0, y = rect.left() + margin, rect.top() + margin
    avail_w = rect.width() - 2 * margin
    title, sub, legend = _titles(m)

    def text(r: QRectF, t: str, px: float, color: str, bold=False, mono=False, align=Qt.AlignmentFlag.AlignLeft):
        map_text(p, th, g, r, t, px, color, bold, mono, align)

    # Title and subtitle on one line (the subtitle muted).
    tpx, spx, lpx = 24 * s, 18 * s, 16 * s
    tw = _width(_font(th, tpx, bold=True), title)
    text(QRectF(x0, y, tw + 2, tpx * 1.6), title, tpx, "text", bold=True)
    sw_ = _width(_font(th, spx), "   " + sub)
    if tw + sw_ <= avail_w:
        text(QRectF(x0 + tw, y, sw_ + 2, tpx * 1.6), "   " + sub, spx, "muted")
        y += tpx * 1.6
    else:
        y += tpx * 1.6
        text(QRectF(x0, y, avail_w, spx * 1.5), sub, spx, "muted")
        y += spx * 1.5
    # The legend sentence, then the 32 bank colours.
    text(QRectF(x0, y, avail_w, lpx * 1.5), legend, lpx, "text")
    y += lpx * 1.5
    sw = min(avail_w / 32, 40 * s)
    for b in range(32):
        r = QRectF(x0 + b * sw, y, sw - 2 * s, 30 * s)
        p.fillRect(r, bank_color(b, th))
        fits = _width(_font(th, MIN_PX * s, mono=True), str(b)) <= r.width()
        if fits:
            text(r, str(b), max(MIN_PX * s, min(16 * s, r.height() * 0.6)), "text", mono=True,
                 align=Qt.AlignmentFlag.AlignHCenter)
    if _width(_font(th, MIN_PX * s, mono=True), "31") > sw - 2 * s:
        g.notes.append(tr("bank numbers left out of the colour key (it is too narrow at this size)"))
    y += 30 * s + 8 * s

    # The grid: row labels on the left, column labels on top. The largest text size
    # (<= 22 px, >= 14 px at 1080p) at which the numbers fit their cells.
    bottom = rect.bottom() - margin
    notes_h = lpx * 1.5
    px, row_w, head_h = 0, 0.0, 0.0
    cell_w = cell_h = 0.0
    # Two lines (offset, then bank) where they fit, else the offset alone.
    for two in (True, False):
        for cand in range(int(MAX_CELL_PX * s), int(-(-MIN_PX * s // 1)) - 1, -1):
            w1, w2, h1 = _cell_need(m, th, cand)
            row_w = _width(_font(th, cand, mono=True), str(m.rows - 1)) + 10 * s
            head_h = h1 + 4 * s
            cell_w = min((avail_w - row_w) / m.cols, 110 * s)
            cell_h = min((bottom - y - head_h - notes_h) / m.rows, 70 * s)
            if two and w2 + 3 * s <= cell_w and 2 * h1 + 4 * s <= cell_h:
                px, g.two_lines = cand, True
                break
            if not two and w1 + 3 * s <= cell_w and h1 + 2 * s <= cell_h:
                px = cand
                break
        if px:
            break
    g.cell_px = px
    gx = x0 + row_w
    # Column labels.
    for c in range(m.cols):
        r = QRectF(gx + c * cell_w, y, cell_w, head_h)
        if px:
            text(r, str(c), px, "muted", mono=True, align=Qt.AlignmentFlag.AlignHCenter)
    gy = y + head_h
    pen = QPen(th.q("grid"))
    pen.setWidthF(max(1.0, s * th.stroke))
    banks = m.banks
    for r_ in range(m.rows):
        ry = gy + r_ * cell_h
        if px:
            text(QRectF(x0, ry, row_w - 8 * s, cell_h), str(r_), px, "muted", mono=True,
                 align=Qt.AlignmentFlag.AlignRight)
        for c in range(m.cols):
            cell = QRectF(gx + c * cell_w, ry, cell_w, cell_h)
            g.cells.append(cell)
            p.fillRect(cell, bank_color(int(banks[r_, c]), th))
            p.setPen(pen)
            p.drawRect(cell)
            if px:
                off = str(int(m.offsets[r_, c]))
                if g.two_lines:
                    half = cell_h / 2
                    text(QRectF(cell.left(), cell.top() + 1 * s, cell_w, half), off, px, "text", mono=True,
                         align=Qt.AlignmentFlag.AlignHCenter)
                    text(QRectF(cell.left(), cell.top() + half - 1 * s, cell_w, half), f"b{int(banks[r_, c])}", px,
                         "muted", mono=True, align=Qt.AlignmentFlag.AlignHCenter)
                else:
                    text(cell, off, px, "text", mono=True, align=Qt.AlignmentFlag.AlignHCenter)
    if not px:
        g.notes.append(tr("offsets not written: {rows} x {cols} cells are too small for 14 px text at this size; "
                          "leave the size out (the picture then grows to fit) or draw a smaller tile").format(
                              rows=m.rows, cols=m.cols))
    if not m.one_to_one:
        g.notes.append(tr("not one-to-one: some elements share an offset"))
    if g.notes:
        ny = gy + m.rows * cell_h + 4 * s
        note = "; ".join(g.notes)
        text(QRectF(x0, ny, avail_w, notes_h), note, lpx, "bad")
    p.restore()
    return g


__all__ = ["paint_layout_map", "natural_size", "bank_color", "MapGeometry"]
