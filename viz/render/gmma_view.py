"""A wgmma's shared-memory reads as a picture (``viz.kinds.wgmma.GmmaMap``): its core matrices
stepped onto the 32 banks.

One line per core matrix (one phase of the hardware's reads: A's, then B's). Its eight
16-byte rows fall on the eight groups of four banks (columns: banks 0-3, 4-7, ... 28-31);
each cell names the rows on its banks (``r3``) and is coloured like the layout map's bank
key; a row that waits for another row of its phase on the same banks (a bank conflict) is
marked in the warning colour with its wavefront (``r4 wf2``). On the right: the phase's
wavefronts. ``natural_size`` writes every number at 16 px; at a size the caller chooses no
text is drawn smaller than 14 px per 1080 px of height, and what does not fit is said in
the picture, never dropped silently.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPen

from ..i18n import tr
from ..kinds.wgmma import GmmaMap
from .layout_map import MIN_PX, MapGeometry, bank_color, begin_map, map_text
from .layout_map import map_font as _font, text_width as _width   # their short names here
from .matrix_view import end_matrix_map, wrap_words
from .theme import Theme


def natural_size(m: GmmaMap, th: Theme) -> tuple[int, int]:
    return m.natural_size(th.scale)


def paint_gmma_map(p: QPainter, rect: QRectF, m: GmmaMap, th: Theme, scale: float | None = None) -> MapGeometry:
    """Draw ``m`` into ``rect`` (``scale`` 1 = 1080p text sizes; default from the rect)."""
    g = begin_map(p, rect, th, scale)
    s = g.scale
    margin = 14 * s
    x0, y = rect.left() + margin, rect.top() + margin
    avail_w = rect.width() - 2 * margin
    low = MIN_PX * s

    def text(r: QRectF, t: str, px: float, color: str, bold=False, mono=False, align=Qt.AlignmentFlag.AlignLeft):
        map_text(p, th, g, r, t, px, color, bold, mono, align)

    title = f"{m.op.text}"
    sub = m.where + " · " + tr("{bytes} bytes in {wf} wavefronts (ideal {ideal}), {conf} bank conflicts",
                               bytes=f"{m.bytes:,}", wf=m.wavefronts, ideal=m.ideal, conf=m.conflicts)
    legend = tr("A line: one 8 x 16-byte core matrix, read as one phase. A cell: the rows that fall on those four "
                "banks; a row marked wf2 or later waits for another row of its phase (a bank conflict).")
    for t, want, color, bold in ((title, 24 * s, "text", True), (m.title, 16 * s, "muted", False),
                                 (sub, 18 * s, "muted", False), (legend, 16 * s, "text", False)):
        px = want
        lines = wrap_words(t, _font(th, px, bold, bold), avail_w)
        for ln in lines:
            h = px * 1.6
            text(QRectF(x0, y, avail_w, h), ln, px, color, bold=bold, mono=bold)
            y += h
    y += 6 * s
    phases = max(1, m.phases)
    bottom = rect.bottom() - margin - 16 * s * 1.6
    mono = _font(th, 16 * s, mono=True)
    head_h = 16 * s * 1.6
    # Side by side panels of core matrices when one column would need text under 14 px.
    panels, per_panel, px = 1, phases, 0.0
    for k in range(1, 5):
        rows_k = -(-phases // k)
        cell_h_k = (bottom - y - head_h) / rows_k
        px_k = min(16 * s, cell_h_k / 1.35)
        pw = (avail_w - (k - 1) * 16 * s) / k
        lw = _width(_font(th, px_k, mono=True), "B 31 (mn 15, k 1)") + 8 * s
        ww = _width(_font(th, px_k, mono=True), "8") + 10 * s
        cw = (pw - lw - ww) / 8
        if px_k >= low and _width(_font(th, px_k, mono=True), "r0 r4") <= cw - 4 * s:
            panels, per_panel, px = k, rows_k, px_k
            break
    del mono
    pw = (avail_w - (panels - 1) * 16 * s) / panels
    cell_h = (bottom - y - head_h) / max(1, per_panel)
    if not px:
        px_try = min(16 * s, cell_h / 1.35)
        px = 0.0 if px_try < low else px_try
        panels, per_panel, pw = 1, phases, avail_w
        cell_h = (bottom - y - head_h) / phases
    g.cell_px = int(px)
    lw_px = px or 16 * s
    label_w = _width(_font(th, lw_px, mono=True), "B 31 (mn 15, k 1)") + 8 * s
    wf_w = _width(_font(th, lw_px, mono=True), "8") + 10 * s
    cell_w = (pw - label_w - wf_w) / 8
    pen = QPen(th.q("grid"))
    pen.setWidthF(max(1.0, s * th.stroke))
    bad = QPen(th.q("bad"))
    bad.setWidthF(max(2.0, 2.5 * s * th.stroke))
    for k in range(panels):
        px0 = x0 + k * (pw + 16 * s)
        if px:
            for q in range(8):
                t = tr("banks {lo}-{hi}", lo=4 * q, hi=4 * q + 3)
                hp = px if _width(_font(th, px, mono=True), t) <= cell_w else 0
                text(QRectF(px0 + label_w + q * cell_w, y, cell_w, head_h), t if hp else f"{4 * q}", px, "muted",
                     mono=True, align=Qt.AlignmentFlag.AlignHCenter)
            text(QRectF(px0 + label_w + 8 * cell_w, y, wf_w, head_h), tr("wf"), px, "muted", mono=True,
                 align=Qt.AlignmentFlag.AlignHCenter)
    y += head_h
    for ph in range(phases):
        rows = m.phase_rows(ph)
        if not rows:
            continue
        k, i = divmod(ph, per_panel)
        px0 = x0 + k * (pw + 16 * s)
        ry = y + i * cell_h
        first = rows[0]
        if px:
            text(QRectF(px0, ry, label_w - 6 * s, cell_h), f"{first.operand} {first.matrix} (mn {first.mn}, k {first.k})",
                 px, "text", mono=True)
        by_group: dict[int, list] = {}
        for r in rows:
            by_group.setdefault((r.byte_addr >> 4) & 7, []).append(r)
        for q in range(8):
            cell = QRectF(px0 + label_w + q * cell_w, ry, cell_w, cell_h)
            g.cells.append(cell)
            here = by_group.get(q, [])
            if here:
                p.fillRect(cell, bank_color(4 * q, th))
            p.setPen(bad if any(r.conflict for r in here) else pen)
            p.drawRect(cell)
            if px and here:
                t = " ".join(f"r{r.row}" + (f" wf{r.wavefront}" if r.conflict else "") for r in here)
                if _width(_font(th, px, mono=True), t) > cell.width() - 4 * s:
                    t = " ".join(f"r{r.row}" for r in here)
                color = "bad" if any(r.conflict for r in here) else "text"
                text(cell, t, px, color, mono=True, align=Qt.AlignmentFlag.AlignHCenter)
        if px:
            wf = max(r.wavefront for r in rows)
            text(QRectF(px0 + label_w + 8 * cell_w, ry, wf_w, cell_h), str(wf), px, "bad" if wf > 1 else "text",
                 mono=True, align=Qt.AlignmentFlag.AlignHCenter)
    return end_matrix_map(p, th, g, rect, written=bool(px))


paint_map = paint_gmma_map        # the name viz.render.painter.paint_kind_map calls (GmmaMap.view = "gmma_view")

__all__ = ["paint_gmma_map", "paint_map", "natural_size"]
