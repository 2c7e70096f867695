"""The global-memory view: the address ruler of 128-byte lines in 32-byte sectors.

Each touched line is drawn as 4 sectors, the sectors the warp touches filled, the bytes it
asked for marked inside them; lines not next to each other in memory are separated by a
gap with an ellipsis. Lines whose labels would not fit one row at the smallest allowed
type fold into 2, 4 or 8 rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QFont, QPainter

from ..i18n import tr
from ..warp import LINE, SECTOR, WarpDetail
from .base import Layout, State, draw_links, mix, pen, prepared
from .shared_view import around_bands
from .text import TextItem, line_height, condensed, fit_px, font, line_h, record_many, static
from .theme import Theme

LINK_GAP, LINK_MIN, LINK_EXTRA = 84.0, 40.0, 150.0



def _addr(a: int) -> str:
    """A byte address as the reader knows it: decimal for an array's offsets, hexadecimal for a
    traced kernel's device addresses (as a debugger or ``printf("%p")`` shows them)."""
    return f"0x{a:x}" if a >= 10 ** 7 else str(a)

def _line_rows(lines: list[int], n_rows: int = 1) -> list[list[int]]:
    """The lines touched, in address order, in ``n_rows`` rows (one where the labels fit: a
    warp touches at most 32 lines, and one row keeps lane k's link short and uncrossed
    where lane k has a line of its own)."""
    per = -(-len(lines) // n_rows)
    return [lines[k:k + per] for k in range(0, len(lines), per)]


@dataclass
class _GlobalPrep:
    lines: list                  # per line, row order: (line, box QRect, label plain, label bold, sectors)
    label_font: tuple            # (plain, bold) QFont of the line labels, or None
    dividers: list
    dots: list
    marks: list                  # the bytes asked for, inside their sectors
    links: list                  # (line, [segments]) per active lane
    sector_font: QFont | None
    sector_texts: dict           # sector number in its line -> QStaticText
    sector_px: int = 0


def global_rows(L: Layout, th: Theme, d: WarpDetail) -> tuple[int, int, float]:
    """How the ruler fits the memory area of ``L``: rows of lines, label size, box height."""
    plan = plan_line_rows(L, th, d)
    return len(plan[0]), plan[5] or plan[6], plan[8]


def plan_line_rows(L: Layout, th: Theme, d: WarpDetail):
    s = L.s
    mem = L.memory
    mp = L.min_px
    lines = list(d.lines) or [0]
    x0 = L.columns[0] - L.col_w / 2
    x1 = L.columns[31] + L.col_w / 2
    avail = mem.height() - LINK_MIN * s
    cond = condensed(th)
    for n_rows in (1, 2, 4, 8, 16, 32):
        rows = _line_rows(lines, n_rows)
        per_row = max(len(r) for r in rows)
        near = min(8 * s, (x1 - x0) / per_row * 0.12)
        far = min(22 * s, (x1 - x0) / per_row * 0.3)    # a gap in the addresses: room for an ellipsis
        gaps = [[0.0] + [near if r[k] == r[k - 1] + 1 else far for k in range(1, len(r))] for r in rows]
        line_w = (x1 - x0 - max(sum(g) for g in gaps)) / per_row
        cap = max(mp, 19 * s * L.boost)           # a tall picture's spare height: larger labels
        long_px = fit_px(th.sans, [tr("line at byte {a}", a=_addr(ln * LINE)) for ln in lines], line_w - 4 * s,
                         cap, max(mp, 16 * s), bold=True)
        short_px = fit_px(cond, [_addr(ln * LINE) for ln in lines], line_w - 2 * s, cap, mp, bold=True)
        px = long_px or short_px

        def label_h_at(p: int) -> float:
            # a short label is digits only: its line is a Latin one, also in Chinese (not the taller CJK line)
            return max(28 * s, (line_h(th.sans, max(p, mp), True) if long_px else
                                line_height(cond, max(p, mp), True, False)) + 6 * s)

        label_h = label_h_at(px)
        if px and len(rows) * (label_h + max(12 * s, line_h(th.sans, mp))) <= avail or len(rows) == len(lines):
            break
        if px and len(rows) * (label_h + 8 * s) <= avail:
            break     # the labels fit and the boxes can be thin
        # labels boosted into a tall picture: smaller ones (never under the smallest size) before more rows
        smaller = next((p for p in range(int(px) - 1, max(mp, 16 * s if long_px else mp) - 1, -1)
                        if len(rows) * (label_h_at(p) + 8 * s) <= avail), 0) if px else 0
        if smaller:
            px, label_h = smaller, label_h_at(smaller)
            long_px, short_px = (smaller, short_px) if long_px else (0, smaller)
            break
        if long_px and short_px:
            # the long labels (a CJK line is taller) cannot get small enough: the short ones
            long_px = 0
            shorter = next((p for p in range(int(short_px), mp - 1, -1)
                            if len(rows) * (label_h_at(p) + 8 * s) <= avail), 0)
            if shorter:
                px = short_px = shorter
                label_h = label_h_at(shorter)
                break
    row_h = max(8 * s, min(150 * s * L.boost, avail / len(rows) - label_h))
    return rows, near, far, gaps, line_w, long_px, short_px, label_h, row_h, avail


def _prep_global(L: Layout, th: Theme, d: WarpDetail) -> _GlobalPrep:
    s = L.s
    mem = L.memory
    mp = L.min_px
    x0 = L.columns[0] - L.col_w / 2
    cond = condensed(th)
    rows, near, far, gaps, line_w, long_px, short_px, label_h, row_h, avail = plan_line_rows(L, th, d)
    px = long_px or short_px
    grid_h = len(rows) * (row_h + label_h)
    top = mem.top() + LINK_MIN * s + max(0.0, min(avail - grid_h, (LINK_GAP - LINK_MIN + LINK_EXTRA) * s))
    sec_w = line_w / 4
    byte_w = sec_w / SECTOR
    sectors = {su.sector: su for su in d.sectors}
    spans: dict[int, list[tuple[int, int]]] = {}
    for ln in d.lanes:
        if ln.active:
            spans.setdefault(ln.sector, []).append((ln.byte_addr % SECTOR, ln.size))
    spans = {k: sorted(set(v)) for k, v in spans.items()}
    sec_px = (fit_px(th.sans, [tr("sector {k}", k=q) for q in range(4)], sec_w - 6 * s, max(mp, 15 * s),
                     max(mp, 10 * s)) if row_h > max(50 * s, 2.6 * line_h(th.sans, mp)) else 0)
    border = max(1.0, 1.3 * s * th.stroke)
    bw_ = max(1, round(border))
    fam, px = (th.sans, long_px) if long_px else (cond, short_px)

    def label(text: str, r: QRectF, bold: bool):
        stt = static(fam, px, bold, text)
        sz = stt.size()
        pt = QPointF(r.left(), r.top() + (r.height() - sz.height()) / 2)
        return stt, pt, TextItem(text, px, QRectF(pt.x(), pt.y(), sz.width(), sz.height()), "line-label", r)

    out_lines, dividers, dots, marks, boxes = [], [], [], [], {}
    row_top = [top + r_ * (row_h + label_h) for r_ in range(len(rows))]
    row_of = {ln: r_ for r_, row in enumerate(rows) for ln in row}
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
            text = tr("line at byte {a}", a=_addr(ln * LINE)) if long_px else _addr(ln * LINE)
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
            seg = QLineF(L.columns[ln.lane], lane_foot, x, box.top() - label_h * 0.15)
            # a link to a lower row of lines passes behind the rows above (never through their labels)
            above = [(row_top[r], row_top[r] + label_h + row_h) for r in range(row_of[ln.line])]
            links.append((ln.line, around_bands(seg, above)))
    sector_texts = {q: static(th.sans, sec_px, False, tr("sector {k}", k=q)) for q in range(4)} if sec_px else {}
    return _GlobalPrep(out_lines, (font(fam, px), font(fam, px, True)) if px >= 1 else None, dividers, dots,
                       marks, links, font(th.sans, sec_px) if sec_px else None, sector_texts, sec_px)


def paint_global(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: State) -> None:
    """The address ruler: each touched 128-byte line as 4 sectors of 32 bytes, the sectors
    the warp touches filled, the bytes it asked for marked inside them; lines that are
    not next to each other in memory are separated by a gap with an ellipsis."""
    s = L.s
    prep = prepared("global", L, th, d, lambda: _prep_global(L, th, d))
    _record_global(prep, d, st, L.s)
    if st.null:
        return
    border = max(1.0, 1.3 * s * th.stroke)
    empty_edge = mix(th.q("grid"), th.q("background"), 0.7)
    bg = th.q("background")
    order = st.line_order
    # Links first, so the sectors they point into stay readable on top.
    if st.links:
        now, todo, done = [], [], []
        request = st.kind == "request"
        for line, seg in prep.links:
            state = "todo" if request else st.step_state(order[line])
            (now if state == "now" else done if state == "done" else todo).extend(seg)
        draw_links(p, th, s, done, todo, now, st.kind)
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
            stt, pt, item = labels[bold]
            p.drawStaticText(pt, stt)
        sector_boxes["compute" if st.kind == "compute" else state].extend(secs)
    # Lines as empty boxes with sector dividers, then the touched sectors over them.
    p.setPen(pen(empty_edge, border))
    p.setBrush(bg)
    p.drawRects([box for _, box, _, _ in prep.lines])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(empty_edge)
    p.drawRects(prep.dividers)
    styles = {"compute": (mix(th.q("sector"), bg, 0.3), th.q("grid"), 1),
              "todo": (mix(th.q("sector"), bg, 0.5), th.q("grid"), 1),
              "done": (th.q("sector"), th.q("grid"), 1),
              "now": (mix(th.q("now"), bg, 0.6), th.q("text"), 2)}
    for state, secs in sector_boxes.items():
        if secs:
            fill, edge, wmul = styles[state]
            p.setPen(pen(edge, border * wmul))
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
                p.drawStaticText(_sector_label_at(stt, r, s), stt)


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




def _line_states(prep: "_GlobalPrep", st: State) -> list[str]:
    early = st.kind in ("compute", "request")
    return ["todo" if early else st.step_state(st.line_order.get(ln, 0)) for ln, _, _, _ in prep.lines]


def _record_global(prep: "_GlobalPrep", d: WarpDetail, st: State, s: float) -> None:
    """The texts ``paint_global`` draws in this frame, recorded without drawing."""
    items = []
    for (ln, _box, labels, secs), state in zip(prep.lines, _line_states(prep, st)):
        if labels is not None:
            items.append(labels[state == "now"][2])
        if prep.sector_font is not None:
            for q, r in secs:
                items.append(_sector_item(prep, q, r, s))
    record_many(items)


def _sector_item(prep: "_GlobalPrep", q: int, r: QRect, s: float) -> TextItem:
    stt = prep.sector_texts[q]
    sz = stt.size()
    pt = _sector_label_at(stt, r, s)
    return TextItem(stt.text(), prep.sector_px, QRectF(pt.x(), pt.y(), sz.width(), sz.height()), "sector", QRectF(r))


def _sector_label_at(stt, r: QRect, s: float) -> QPointF:
    """Where a sector's label goes: centred, its line (measured: a CJK line is taller than a
    Latin one) ending 2 px (at scale 1) above the sector's foot, inside the sector."""
    sz = stt.size()
    return QPointF(r.left() + (r.width() - sz.width()) / 2, r.bottom() - 2 * s - sz.height())
