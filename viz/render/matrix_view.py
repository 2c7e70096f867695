"""ldmatrix / stmatrix as a picture: which lane's row lands on which banks, and which lane's
register holds each element (``viz.kinds.ldmatrix.MatrixMap``).

One grid per 8x8 matrix (side by side for .x1 / .x2, 2 x 2 for .x4). Each grid row is one
16-byte row in shared memory: on its left the lane that gives its address, its byte
address, its banks (coloured like the layout map's bank key) and the wavefront that moves
it; its 8 cells are the row's 8 b16 elements, each showing the lane whose register holds
it (register i of every lane holds matrix i; with .trans a column of the grid goes to one
lane). ``natural_size`` writes every number at 16 px; at a size the caller chooses no text
is drawn smaller than 14 px per 1080 px of height, and what does not fit is said in the
picture, never dropped silently.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPen

from ..i18n import tr
from ..kinds.ldmatrix import MatrixMap
from .layout_map import MIN_PX, MapGeometry, bank_color, begin_map, map_text
from .layout_map import map_font as _font, text_width as _width   # their short names here
from .theme import Theme


def natural_size(m: MatrixMap, th: Theme) -> tuple[int, int]:
    return m.natural_size(th.scale)


def wrap_words(t: str, font, width: float) -> list[str]:
    """``t`` broken at spaces into lines no wider than ``width`` (a word wider stays whole)."""
    lines, cur = [], ""
    for word in t.split(" "):
        cand = f"{cur} {word}" if cur else word
        if not cur or _width(font, cand) <= width:
            cur = cand
        else:
            lines.append(cur)
            cur = word
    return lines + ([cur] if cur else [])


def _lane_color(lane: int, th: Theme):
    """Lanes in 8 quads (rows of the register view), one hue each; pale."""
    return bank_color((lane // 4) * 4, th)


def paint_matrix_map(p: QPainter, rect: QRectF, m: MatrixMap, th: Theme, scale: float | None = None,
                     across: int | None = None) -> MapGeometry:
    """Draw ``m`` into ``rect`` (``scale`` 1 = 1080p text sizes; default from the rect), with
    ``across`` matrices a row (default ``MatrixMap.default_across``). A heading too long for
    one line at its size goes on more lines."""
    g = begin_map(p, rect, th, scale)
    s = g.scale
    margin = 14 * s
    x0, y = rect.left() + margin, rect.top() + margin
    avail_w = rect.width() - 2 * margin
    low = MIN_PX * s

    def text(r: QRectF, t: str, px: float, color: str, bold=False, mono=False, align=Qt.AlignmentFlag.AlignLeft):
        map_text(p, th, g, r, t, px, color, bold, mono, align)

    def fitted(t: str, want: float, width: float, bold=False, mono=False) -> float:
        px = want
        while px > low and _width(_font(th, px, bold, mono), t) > width:
            px -= 1
        return px if _width(_font(th, px, bold, mono), t) <= width else 0

    op = m.op
    title = f"{op.text}  {m.title}"
    sub = m.where + " · " + tr("{wf} wavefronts, {conf} bank conflicts", wf=m.wavefronts, conf=m.conflicts)
    legend = (tr("Row: the lane that gives its address, its banks and wavefront. Cell: the lane whose register "
                 "{i} holds the element; .trans: lane l holds column l / 4.", i="i") if op.trans else
              tr("Row: the lane that gives its address, its banks and wavefront. Cell: the lane whose register "
                 "{i} holds the element; lane l holds row l / 4.", i="i"))
    for t, want, color, bold in ((title, 24 * s, "text", True), (sub, 18 * s, "muted", False),
                                 (legend, 16 * s, "text", False)):
        px = fitted(t, want, avail_w, bold, mono=bold)
        lines = [t]
        if not px:                          # on more lines, at a size between its own and the smallest
            px = max(low, want * 0.85)
            lines = wrap_words(t, _font(th, px, bold, bold), avail_w)
            if any(_width(_font(th, px, bold, bold), ln) > avail_w for ln in lines):
                g.notes.append(tr("a heading is cut short at this size"))
        for ln in lines:
            h = px * 1.6
            text(QRectF(x0, y, avail_w, h), ln, px, color, bold=bold, mono=bold)
            y += h
    y += 6 * s
    across = max(1, min(op.num, across or m.default_across()))
    down = -(-op.num // across)
    bottom = rect.bottom() - margin - (16 * s * 1.6)
    gap = 18 * s
    box_w = (avail_w - gap * (across - 1)) / across
    box_h = (bottom - y - gap * (down - 1)) / down
    pen = QPen(th.q("grid"))
    pen.setWidthF(max(1.0, s * th.stroke))
    # Text size: the largest (<= 20 px, >= 14 px at 1080p) at which the row labels and the
    # lane numbers fit their boxes.
    px = 0.0
    label_w = cell_w = cell_h = head_h = 0.0
    for cand in range(int(20 * s), int(-(-low // 1)) - 1, -1):
        fm = QFontMetricsF(_font(th, cand, mono=True))
        label_w = fm.horizontalAdvance("L31 99999 b28-31 wf88") + 12 * s
        head_h = fm.height() * 1.3
        cell_w = (box_w - label_w) / 8
        cell_h = (box_h - 2 * head_h) / 8
        if fm.horizontalAdvance("31") + 4 * s <= cell_w and fm.height() + 2 * s <= cell_h:
            px = cand
            break
    g.cell_px = int(px)
    for i in range(op.num):
        bx = x0 + (i % across) * (box_w + gap)
        by = y + (i // across) * (box_h + gap)
        name = tr("matrix {m} (register {m} of every lane)", m=i)
        hp = fitted(name, max(low, min(18 * s, px or 18 * s)), box_w, bold=True)
        if hp:
            text(QRectF(bx, by, box_w, head_h), name, hp, "text", bold=True)
        gx = bx + label_w
        cy = by + head_h
        if px:
            for c in range(8):
                text(QRectF(gx + c * cell_w, cy, cell_w, head_h), str(c), px, "muted", mono=True,
                     align=Qt.AlignmentFlag.AlignHCenter)
        cy += head_h
        for r in (row for row in m.rows if row.matrix == i):
            ry = cy + r.row * cell_h
            lab = QRectF(bx, ry + 1 * s, label_w - 8 * s, cell_h - 2 * s)
            p.fillRect(lab, bank_color(r.banks[0], th))
            if px:
                text(lab, f"L{r.lane} {r.byte_addr} b{r.banks[0]}-{r.banks[1]} wf{r.wavefront}", px, "text",
                     mono=True, align=Qt.AlignmentFlag.AlignHCenter)
            for c in range(8):
                cell = QRectF(gx + c * cell_w, ry, cell_w, cell_h)
                g.cells.append(cell)
                lane = m.holder[i][r.row][c]
                p.fillRect(cell, _lane_color(lane, th))
                p.setPen(pen)
                p.drawRect(cell)
                if px:
                    text(cell, str(lane), px, "text", mono=True, align=Qt.AlignmentFlag.AlignHCenter)
    return end_matrix_map(p, th, g, rect, written=bool(px))


def end_matrix_map(p: QPainter, th: Theme, g: MapGeometry, rect: QRectF, written: bool) -> MapGeometry:
    """Finish a matrix picture (ldmatrix / stmatrix here, wgmma's core matrices in
    ``gmma_view``): say when the cells' numbers were left out, write the notes along the
    bottom, restore the painter that ``begin_map`` saved."""
    s = g.scale
    margin = 14 * s
    if not written:
        g.notes.append(tr("numbers not written: the cells are too small for 14 px text at this size; leave the "
                          "size out (the picture then takes its natural size)"))
    if g.notes:
        map_text(p, th, g, QRectF(rect.left() + margin, rect.bottom() - margin - 16 * s * 1.6,
                                  rect.width() - 2 * margin, 16 * s * 1.6),
                 "; ".join(g.notes), max(MIN_PX * s, 16 * s), "bad")
    p.restore()
    return g


__all__ = ["paint_matrix_map", "natural_size"]
