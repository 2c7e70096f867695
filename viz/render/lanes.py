"""The 32 lane cells (lane, thread, index, byte address; a row each) and the phase strip.

A row whose texts do not fit one cell at the smallest allowed size is staggered: lane k's
text goes to sub-row k mod n of the row, in a box of its own n columns wide centred on its
lane (n = 2..4), filled and outlined as the lane is. The boxes of one sub-row tile it like
bricks, so every value stays on the picture at a readable size and inside its own lane's
box: never across a border onto a neighbour's fill (where it would be unreadable).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter

from ..i18n import tr
from ..warp import WarpDetail
from .base import Layout, State, alpha, pen, prepared, snap
from .text import advance, condensed, draw_text, drop, fit_px, font, line_h, place, record_many
from .theme import Theme

MAX_STAGGER = 4


def lane_rows(d: WarpDetail) -> list[tuple[str, list[str]]]:
    """Row label and per-lane text for the lane cells: lane, thread, index (a row per
    subscript: "[10][31]" would not fit a cell 32 across), byte address. A swizzled array's
    column row shows where the swizzle put it: ``0→5``, logical column → physical column."""
    block = d.scenario.launch.block
    dims = 3 if block[2] > 1 else (2 if block[1] > 1 else 1)
    n_idx = max(1, len(d.access.indices)) if d.access.indices else 0   # a trace records no subscripts
    arr = d.array
    swizzled = not arr.swizzle.is_identity and len(arr.shape) == 2
    pitch = arr.shape[1] + arr.pad if len(arr.shape) == 2 else 0
    off = tr("off")
    lane_txt, thr, addr = [], [], []
    idx: list[list[str]] = [[] for _ in range(n_idx)]
    # A trace records device addresses (15 digits, unreadable 32 across): show them from the
    # 128-byte line of the lowest one, which keeps bank and sector positions, and name it.
    active = [ln.byte_addr for ln in d.lanes if ln.exists and ln.active]
    base = min(active) // 128 * 128 if not d.access.indices and active and max(active) >= 10 ** 7 else 0
    for ln in d.lanes:
        lane_txt.append(str(ln.lane))
        if not ln.exists:
            thr.append("")
            addr.append("")
            for col in idx:
                col.append("")
            continue
        thr.append(str(ln.thread[0]) if dims == 1 else ",".join(str(v) for v in ln.thread[:dims]))
        addr.append(str(ln.byte_addr - base) if ln.active else "")
        for k, col in enumerate(idx):
            if not ln.active:
                col.append(off if k == 0 else "")
            elif k >= len(ln.indices):
                col.append("")
            elif swizzled and k == 1:
                col.append(f"{ln.indices[k]}→{ln.elem % pitch}")
            else:
                col.append(f"[{ln.indices[k]}]")
    thread_label = {1: tr("threadIdx.x"), 2: tr("thread x,y"), 3: tr("thread x,y,z")}[dims]
    if n_idx == 2:
        labels = [tr("row"), tr("col → physical") if swizzled else tr("column")]
    else:
        labels = [tr("index")]
    return ([(tr("lane"), lane_txt), (thread_label, thr)] + list(zip(labels, idx))
            + [(tr("byte addr") if not base else tr("byte − 0x{base:x}", base=base), addr)])


def row_names(rows) -> list[str]:
    """The name of each row of ``lane_rows``: lane, thread, index (one or two), addr."""
    return ["lane", "thread"] + ["index"] * (len(rows) - 3) + ["addr"]



def row_families(th: Theme, n: int) -> list[tuple[str, ...]]:
    return [th.sans] + [condensed(th)] * (n - 1)


def lane_pad(cw: float) -> float:
    """The gap between a lane's box and its column's edge (each side)."""
    return max(1.5, cw * 0.06)


def text_margin(s: float) -> float:
    """Room kept between a lane text and its box's border (each side)."""
    return max(1.0, 1.5 * s)


def lane_box(x: float, cw: float, stagger: int) -> tuple[float, float]:
    """Left edge and width of the box of a lane whose column is centred on ``x``, in a row
    staggered over ``stagger`` sub-rows (1: its own column)."""
    pad = lane_pad(cw)
    w = stagger * cw
    return x - w / 2 + pad, w - 2 * pad


def plan_rows(rows, th: Theme, cw: float, s: float, mp: int, boost: float = 1.0, addr: bool = True,
              force: tuple | None = None) -> list[tuple[int, int, float]]:
    """Per lane row: (px, stagger, height). The largest size up to 24/20 px (at scale 1,
    times ``boost`` in a tall picture) at which every text of the row fits its lane's box,
    staggered over 2..4 sub-rows (a box 2..4 columns wide) if need be. Every row takes the
    same number of sub-rows (the deepest any row needs), so lane k is in sub-row k mod n all
    the way down and a lane reads downwards. ``force`` = (stagger, px per row): a comparison
    lays both halves' rows out alike (``addr``: the last row is the byte address, drawn bold
    on the compute frame)."""
    fams = row_families(th, len(rows))
    last = len(rows) - 1

    def bold_(k: int) -> bool:
        return k == 0 or (addr and k == last)

    def fit(k: int, stagger: int) -> int:
        cap = max(mp, (24 if k == 0 else 20) * s * boost)
        return fit_px(fams[k], rows[k][1], lane_box(0.0, cw, stagger)[1] - 2 * text_margin(s), cap, mp,
                      bold=bold_(k))

    if force is not None:
        n, pxs = force
        if pxs is None:
            pxs = [fit(k, n) or mp for k in range(len(rows))]
            if len(pxs) > 1:
                pxs = pxs[:1] + [min(pxs[1:])] * (len(pxs) - 1)
    else:
        n = 1
        for k in range(len(rows)):
            while n < MAX_STAGGER and not fit(k, n):
                n += 1
        pxs = [fit(k, n) or mp for k in range(len(rows))]    # mp: cannot happen at the sizes the app allows
        if len(pxs) > 1:       # the rows under the lane numbers at one size: a row of short texts is no louder
            pxs = pxs[:1] + [min(pxs[1:])] * (len(pxs) - 1)
    out = []
    for k in range(len(rows)):
        px = pxs[k]
        h = max((28 if k == 0 else 24) * s, line_h(fams[k], px, bold_(k)) * 1.08)
        out.append((px, n, h * n))
    return out


def rows_fit(rows, th: Theme, cw: float, s: float, specs, addr: bool = True) -> bool:
    """Does every text of every lane row fit its lane's box at the row's size and folding?"""
    fams = row_families(th, len(rows))
    last = len(rows) - 1
    for k, ((_, texts), (px, n, _)) in enumerate(zip(rows, specs)):
        room = lane_box(0.0, cw, n)[1] - 2 * text_margin(s) + 0.5
        bold = k == 0 or (addr and k == last)
        if any(advance(fams[k], px, bold, t) > room for t in texts if t):
            return False
    return True


def overhang(specs, cw: float) -> float:
    """How far the boxes of lanes 0 and 31 reach past the lane grid, on each side: a box
    ``n`` columns wide is centred on its lane."""
    n = max((stagger for _, stagger, _ in specs), default=1)
    return (n - 1) * cw / 2


def _addr_shown(L: Layout) -> bool:
    """Is the last lane row the byte address (drawn bold on the compute frame)?"""
    return not L.row_names or L.row_names[-1] == "addr"


def lane_segments(L: Layout, lane: int) -> list[QRectF]:
    """The boxes of one lane from top to bottom: its column over consecutive plain rows (and
    the margins above and below the rows), a box of its own in each staggered row's sub-row
    (``lane_box``)."""
    x = L.columns[lane]
    col_left, col_w = lane_box(x, L.col_w, 1)
    run_top = L.lanes[lane].top()
    out: list[QRectF] = []
    for k, (px, stagger, top, h) in enumerate(L.lane_specs):
        if stagger == 1:
            continue
        if top > run_top + 0.5 and not (k == 0 and top - run_top < 10 * L.s):   # no stub for the top margin
            out.append(QRectF(col_left, run_top, col_w, top - run_top))
        sub = h / stagger
        left, w = lane_box(x, L.col_w, stagger)
        out.append(QRectF(left, top + (lane % stagger) * sub, w, sub))
        run_top = top + h
    bottom = L.lanes[lane].bottom()
    # No stub for the bottom margin either: a strip of empty outlines under the last row
    # would read as a row cut off.
    if bottom > run_top + 0.5 and not (out and bottom - run_top < 10 * L.s):
        out.append(QRectF(col_left, run_top, col_w, bottom - run_top))
    return out


@dataclass
class _LanePrep:
    labels: list                 # Placed row labels
    rects: list                  # each lane's boxes (``lane_segments``) snapped to whole pixels
    rows: list                   # per row: (font, [(lane, Placed)])
    addr_bold: tuple             # the address row in bold (the compute frame stresses it)
    items: list                  # TextItems of a frame (rows + labels), plain address row
    items_bold: list             # the same with the address row bold


def _prep_lanes(L: Layout, th: Theme, d: WarpDetail) -> _LanePrep:
    s = L.s
    rows = L.lane_rows
    fams = row_families(th, len(rows))
    labels = []
    if L.label_w:
        for k, (label, _) in enumerate(rows):
            _, _, top, h = L.lane_specs[k]
            labels.append(place(th.sans, L.label_px, False, label,
                                QRectF(L.label_x, top, L.label_w - 10 * s, h), "r", "lane-label"))

    def row(k: int, bold: bool):
        px, stagger, top, h = L.lane_specs[k]
        sub = h / stagger
        texts = rows[k][1]
        items = []
        for ln in d.lanes:
            text = texts[ln.lane]
            if not text or (not ln.exists and k):
                continue
            left, w = lane_box(L.columns[ln.lane], L.col_w, stagger)
            r = QRectF(left, top + (ln.lane % stagger) * sub, w, sub)
            items.append((ln.lane, place(fams[k], px, bold, text, r, "c", f"lane:{k}")))
        return font(fams[k], px, bold), items

    out = [row(k, k == 0) for k in range(len(rows))]
    last = len(rows) - 1
    bold_addr = row(last, True) if _addr_shown(L) else out[last]
    items = [pl.item for pl in labels] + [pl.item for _, its in out for _, pl in its]
    items_bold = [pl.item for pl in labels] + [pl.item for _, its in out[:-1] + [bold_addr] for _, pl in its]
    rects = [[snap(r) for r in lane_segments(L, k)] for k in range(32)]
    return _LanePrep(labels, rects, out, bold_addr, items, items_bold)


def paint_lanes(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: State) -> None:
    s = L.s
    prep = prepared("lanes", L, th, d, lambda: _prep_lanes(L, th, d))
    record_many(prep.items_bold if st.kind == "compute" else prep.items)
    if st.null:
        return
    muted = th.q("muted")
    if prep.labels:
        p.setFont(font(th.sans, L.label_px))
        p.setPen(muted)
        for pl in prep.labels:
            p.drawStaticText(pl.pt, pl.stt)
    border = max(1.0, 1.3 * s * th.stroke)
    now_c, text_strong = th.q("now"), th.q("text")
    # Cells first (state colours), then the text row by row: one font switch per row.
    colors: list[QColor | None] = []
    served_cells = []
    boxes: dict[tuple, tuple[QColor, QColor, list[QRect]]] = {}
    hatched: list[QRect] = []
    for ln, rects in zip(d.lanes, prep.rects):
        if not ln.exists:
            p.setPen(pen(th.q("grid"), border, style=Qt.PenStyle.DotLine))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRects(rects)
            colors.append(None)
            continue
        cell = QRectF(rects[-1])                # the served mark runs along the lane's foot
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
        boxes.setdefault(key, (fill, edge, []))[2].extend(rects)
        if not ln.active:
            hatched.extend(rects)
        colors.append(text_c)
    for fill, edge, rects in boxes.values():   # one call per look
        p.setPen(pen(edge, border * (2 if edge is text_strong else 1)))
        p.setBrush(fill)
        p.drawRects(rects)
    if hatched:
        # Hatched: visibly switched off, also in greyscale print.
        p.setBrush(QBrush(alpha(th.q("grid"), 0.55), Qt.BrushStyle.BDiagPattern))
        p.setPen(Qt.PenStyle.NoPen)
        p.drawRects(hatched)
    for cell in served_cells:
        _served_mark(p, cell, th, s)
    addr_row = len(prep.rows) - 1 if _addr_shown(L) else -1
    grid, byte_used = th.q("grid"), th.q("byte_used")
    lanes = d.lanes
    for k, (fnt, items) in enumerate(prep.rows):
        emph_row = k == addr_row and st.kind == "compute"
        if emph_row:
            fnt, items = prep.addr_bold
        p.setFont(fnt)
        current = None
        for lane, pl in items:
            color = colors[lane]
            if color is None:       # past the end of a partial warp: the lane number only
                color = grid
            if emph_row and lanes[lane].active:
                color = byte_used
            if color is not current:
                p.setPen(color)
                current = color
            p.drawStaticText(pl.pt, pl.stt)


def _served_mark(p: QPainter, cell: QRectF, th: Theme, s: float) -> None:
    """A bar along the cell's foot: this lane has everything it asked for."""
    h = min(max(3.0, 7 * s), cell.height() - 2)
    p.fillRect(snap(QRectF(cell.left() + 2, cell.bottom() - h - 1, cell.width() - 4, h)), th.q("served"))


def phase_texts(L: Layout, th: Theme, d: WarpDetail) -> tuple[list[str], int]:
    """The phase labels (counted from 1) and their size: ``phase 1: lanes 0-7``, or
    ``phase 1`` where that does not fit, or just the number."""
    width = L.col_w * len(d.phases[0]) - 8 * L.s
    cap = max(L.min_px, 17 * L.s)
    m = getattr(d.access, "matrix", None)
    if m is not None:           # ldmatrix / stmatrix: a phase is a matrix; lanes past them give no row
        rest = [tr("lanes {a}-{b}: no row", a=ls[0], b=ls[-1]) for ls in d.phases[m.num:]]
        for texts in ([tr("phase {k}: matrix {m}, lanes {a}-{b}", k=k + 1, m=k, a=ls[0], b=ls[-1])
                       for k, ls in enumerate(d.phases[:m.num])] + rest,
                      [tr("phase {k}: matrix {m}", k=k + 1, m=k) for k in range(m.num)] + rest,
                      [tr("matrix {m}", m=k) for k in range(m.num)] + [tr("no row")] * len(rest),
                      [str(k) for k in range(m.num)] + ["-"] * len(rest)):
            px = fit_px(th.sans, texts, width, cap, L.min_px, bold=True)
            if px:
                return texts, px
        drop("phase labels")
        return [], 0
    for texts in ([tr("phase {k}: lanes {a}-{b}", k=k + 1, a=ls[0], b=ls[-1]) for k, ls in enumerate(d.phases)],
                  [tr("phase {k}", k=k + 1) for k in range(len(d.phases))],
                  [str(k + 1) for k in range(len(d.phases))]):
        px = fit_px(th.sans, texts, width, cap, L.min_px, bold=True)
        if px:
            return texts, px
    drop("phase labels")
    return [], 0


def paint_phases(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: State) -> None:
    s = L.s
    r = L.phase_area
    texts, px = prepared("phases", L, th, d, lambda: phase_texts(L, th, d))
    for k, ls in enumerate(d.phases):
        x0 = L.columns[ls[0]] - L.col_w / 2 + 2 * s
        x1 = L.columns[ls[-1]] + L.col_w / 2 - 2 * s
        lit = st.kind == "wavefront" and st.phase == k
        box = QRectF(x0, r.top(), x1 - x0, r.height())
        if not st.null:
            p.setPen(pen(th.q("now") if lit else th.q("grid"), max(1.0, (2.4 if lit else 1.4) * s * th.stroke)))
            p.setBrush(th.q("now") if lit else th.q("phase_a" if k % 2 == 0 else "phase_b"))
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.drawRoundedRect(box, 5 * s, 5 * s)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        if texts:
            draw_text(p, box, texts[k], th, px, th.q("now_text") if lit else th.q("text"), bold=lit, key="phase")
    if not st.null:
        p.setBrush(Qt.BrushStyle.NoBrush)
