"""The shared-memory view: every distinct word each bank delivers, in the wavefront that
delivers it, laid out so that every word stays readable.

Two arrangements of the same table, chosen per instruction and picture size (the one
that gives the words the largest type; ties go to the first):

- **by bank** (shallow stacks): the 32 bank columns under the lanes, one row per
  wavefront, each word in its bank's column and its wavefront's row. Where a column is
  too narrow for the words, the banks fold into 2 or 4 bands (banks 0-15, 16-31).
- **in time** (deep stacks, e.g. a 32-way conflict): one column per wavefront 1..n and
  one row per bank that has work, so a 32-way conflict on one bank becomes a row of 32
  words read left to right in the order they are served. Too many wavefronts for the
  width fold into bands (wavefronts 1-16, 17-32, ...).

If even the smallest allowed type cannot hold every band, the bands that hold the frame's
wavefront are shown and a line says which wavefronts (and how many words) are off the
picture: nothing is left out silently. A word that several lanes share carries ``×N``;
lanes are linked to the column of the word they get, the current wavefront is lit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter

from ..i18n import tr
from ..gpus import BANKS
from ..warp import WarpDetail
from .base import Layout, State, alpha, draw_links, mix, pen, prepared, snap
from .text import Placed, TextItem, advance, draw_text, drop, font, line_h, place, record_many, wrap
from .theme import Theme

LINK_GAP, LINK_MIN, LINK_EXTRA = 84.0, 40.0, 150.0   # room for the lane-to-memory links (at scale 1)


def memory_labels(d: WarpDetail) -> list[str]:
    """Every label the shared view may put in the label column (to size that column)."""
    n = max(1, d.wavefronts)
    return [tr("bank"), tr("wavefront"), tr("wf {k}", k=n), tr("bank {b}", b=31)]


@dataclass
class _Band:
    top: float                   # header top (unshifted)
    head: QRectF                 # the header row (bank or wavefront numbers)
    cols: list                   # (key, x centre) per column: bank (by bank) or wavefront (in time)
    rows: list                   # (key, top) per row: wavefront (by bank) or bank (in time)


@dataclass
class _Word:
    rect: QRectF
    snapped: object
    plain: Placed
    bold: Placed
    badge: tuple | None          # (plate QRectF, Placed) for a word several lanes share
    band: int


@dataclass
class SharedPlan:
    mode: str                    # "bank" or "time"
    bands: list
    visible: int                 # how many bands the picture holds (< len(bands): a window moves)
    band_pitch: float
    col_w: float
    row_h: float
    head_h: float
    px: int
    label_px: int
    words: list                  # _Word per d.bank_words
    word_font: tuple             # (plain, bold)
    heads: list                  # per band: [(key, Placed plain, Placed bold)]
    row_labels: list             # per band: [(key, Placed plain, Placed bold, QRectF)]
    corner: list                 # per band: Placed ("bank" / "wavefront") or None
    zebra: list                  # per band: [QRect]
    rules: list                  # per band: [QLineF]
    links: list                  # per active lane: [(wavefront, band, [segments])]
    note_rect: QRectF | None     # where the "not shown" line goes when bands are windowed
    legend: Placed | None = None  # "numbers in the cells: word index (byte address ÷ 4)", under the table
    row_keys: tuple = ()         # every row's key: wavefront (by bank) or bank (in time)
    rows_shown: int = 0          # how many rows a band shows (< len(row_keys): a window of rows moves)
    row_first: int = 0           # the first row shown
    fits: bool = True            # False: not even one band fits the area


def _candidates(n: int, only: str | None = None):
    """The arrangements to try, best first; ``only``: those of one mode (a comparison keeps
    both halves in one orientation)."""
    for mode, fold in _all_candidates(n):
        if only is None or mode == only:
            yield mode, fold


def _all_candidates(n: int):
    yield "bank", 1
    yield "time", 1
    yield "bank", 2
    yield "time", 2
    yield "bank", 4
    for g in range(3, min(n, 16) + 1):
        yield "time", g
    yield "bank", 8    # narrow comparison halves in presentation type: 4 banks a band


def plan_shared(L: Layout, th: Theme, d: WarpDetail, row_first: int = 0) -> SharedPlan:
    """The table laid out, with room kept under it for the line that says what the numbers
    are (word indices) wherever keeping it costs the words neither size nor bands.
    ``row_first``: where rows are windowed, the first row shown."""
    legend_h = line_h(th.sans, int(max(L.min_px, 17 * L.s))) + 8 * L.s
    kept = _plan_shared(L, th, d, legend_h, row_first)
    if kept.legend is not None:
        plain = _plan_shared(L, th, d, 0.0, row_first)
        if (kept.px, kept.visible, kept.mode, len(kept.bands), kept.rows_shown) == (
                plain.px, plain.visible, plain.mode, len(plain.bands), plain.rows_shown):
            return kept
        return plain
    return _plan_shared(L, th, d, 0.0, row_first)


def shows_everything(plan: SharedPlan) -> bool:
    return plan.fits and plan.visible >= len(plan.bands) and plan.rows_shown >= len(plan.row_keys)


def _plan_shared(L: Layout, th: Theme, d: WarpDetail, reserve: float, row_first: int = 0) -> SharedPlan:
    s, mp = L.s, L.min_px
    mem = L.memory
    n = max(1, d.wavefronts)
    busy = sorted({bw.bank for bw in d.bank_words}) or [0]
    x0 = L.columns[0] - L.col_w / 2
    avail_w = L.col_w * BANKS
    avail_h = mem.height() - LINK_MIN * s - reserve
    mono, sans = th.mono, th.sans
    word_texts = sorted({str(bw.word) for bw in d.bank_words}, key=len)[-6:] or ["0"]
    badges = sorted({f"×{len(bw.lanes)}" for bw in d.bank_words if len(bw.lanes) > 1}, key=len)[-3:]
    gap = 10 * s
    cap = int(max(mp, 18 * s * L.boost))

    def need_w(px: int, heads: list[str]) -> float:
        w = max(advance(mono, px, True, t) for t in word_texts) + 10 * s
        if badges:
            w += max(advance(sans, px, True, b) for b in badges) + 10 * s
        return max(w, max(advance(sans, px, True, h) for h in heads) + 6 * s)

    def shape(mode: str, fold: int):
        if mode == "bank":
            cols, rows = BANKS // fold, n
            heads = [str(b) for b in range(BANKS - cols, BANKS)]
        else:
            cols, rows = math.ceil(n / fold), len(busy)
            heads = [str(k) for k in range(max(1, n - cols + 1), n + 1)]
        bands = math.ceil(BANKS / cols) if mode == "bank" else math.ceil(n / cols)
        return cols, rows, bands, heads

    best = None
    for mode, fold in _candidates(n, L.shared_mode):
        cols, rows, bands, heads = shape(mode, fold)
        cw = avail_w / cols
        for px in range(cap, mp - 1, -1):
            hh = line_h(sans, px, True) + 6 * s
            rh = line_h(mono, px, True) + 6 * s
            if bands * (hh + rows * rh) + (bands - 1) * gap > avail_h:
                continue
            if need_w(px, heads) > cw:
                continue
            if best is None or px > best[0]:
                best = (px, mode, fold, bands)
            break
        if best is not None and best[0] >= cap:
            break
    visible = None
    rows_shown = None
    fits = True
    if best is None:
        # Not even the smallest type holds everything: of the arrangements whose columns
        # hold the words, the one that shows the most words in the bands that fit; the
        # bands off the picture are named in a line under the table.
        px = mp
        hh, rh = line_h(sans, px, True) + 6 * s, line_h(mono, px, True) + 6 * s
        note_h = 2 * line_h(sans, px) + 6 * s
        per_band = {}
        for bw in d.bank_words:
            per_band.setdefault(bw.bank, []).append(bw.wavefront)
        options = []
        for mode, fold in _candidates(n, L.shared_mode):
            cols, rows, bands, heads = shape(mode, fold)
            if need_w(px, heads) > avail_w / cols:
                continue
            band_h = hh + rows * rh
            fit = int((avail_h - note_h + gap) // (band_h + gap))
            if fit < 1:
                # Not one band whole: every band, with a window of its rows (wavefronts by
                # bank, banks in time) that moves with the frame; a line names the rest.
                per = int((avail_h - note_h - bands * hh - (bands - 1) * gap) // (bands * rh))
                if per >= 1:
                    keys = list(range(n)) if mode == "bank" else busy
                    at = {k: i for i, k in enumerate(keys)}
                    counts = [0] * len(keys)
                    for bw in d.bank_words:
                        counts[at[bw.wavefront if mode == "bank" else bw.bank]] += 1
                    shown_words = max(sum(counts[k:k + per]) for k in range(max(1, len(keys) - per + 1)))
                    options.append((shown_words, mode, fold, bands, bands, per))
                else:
                    options.append((-band_h, mode, fold, bands, 1, None))
                continue
            counts = [0] * bands
            for bw in d.bank_words:
                counts[bw.bank // cols if mode == "bank" else bw.wavefront // cols] += 1
            shown_words = max(sum(counts[k:k + fit]) for k in range(max(1, bands - fit + 1)))
            options.append((shown_words, mode, fold, bands, min(fit, bands), None))
        if not options:
            options.append((0, "time", n, n, 1, None))
        score, mode, fold, bands, visible, rows_shown = max(options, key=lambda o: o[0])
        fits = score >= 0
        best = (px, mode, fold, bands)
    px, mode, fold, bands = best
    cols, rows, bands, _ = shape(mode, fold)
    all_keys = tuple(range(n)) if mode == "bank" else tuple(busy)
    rows = min(rows, rows_shown or rows)
    row_first = max(0, min(row_first, len(all_keys) - rows))
    window = all_keys[row_first:row_first + rows]
    visible = min(bands, visible or bands)
    hh = line_h(sans, px, True) + 6 * s
    rh_min = line_h(mono, px, True) + 6 * s
    note_h = 2 * line_h(sans, px) + 6 * s if visible < bands or rows < len(all_keys) else 0.0
    room = avail_h - note_h - visible * hh - (visible - 1) * gap
    row_h = max(rh_min, min(72 * s, room / (visible * rows)))
    band_h = hh + rows * row_h
    grid_h = visible * band_h + (visible - 1) * gap + note_h
    spare = max(0.0, avail_h - grid_h)
    top = mem.top() + LINK_MIN * s + min(spare, (LINK_GAP - LINK_MIN + LINK_EXTRA) * s)
    cw = avail_w / cols
    label_px = min(L.label_px, max(mp, int(min(17 * s, row_h * 0.8))))
    while label_px > mp and line_h(sans, label_px) > row_h:
        label_px -= 1

    band_list: list[_Band] = []
    heads, row_labels, corners, zebra, rules = [], [], [], [], []
    pitch = band_h + gap
    for g in range(bands):
        btop = top + g * pitch
        if mode == "bank":
            keys = list(range(g * cols, min(BANKS, (g + 1) * cols)))
        else:
            keys = list(range(g * cols, min(n, (g + 1) * cols)))
        row_keys = window
        col_x = [(k, x0 + cw * (j + 0.5)) for j, k in enumerate(keys)]
        row_y = [(k, btop + hh + i * row_h) for i, k in enumerate(row_keys)]
        band = _Band(btop, QRectF(x0, btop, cw * len(keys), hh), col_x, row_y)
        band_list.append(band)
        hs = []
        for k, x in col_x:
            text = str(k) if mode == "bank" else str(k + 1)
            r = QRectF(x - cw / 2, btop, cw, hh)
            hs.append((k, place(sans, px, False, text, r, "c", "bank-head" if mode == "bank" else "wf-head"),
                       place(sans, px, True, text, r, "c", "bank-head" if mode == "bank" else "wf-head")))
        heads.append(hs)
        rl = []
        corner = None
        if L.label_w:
            lw = L.label_w - 10 * s
            corner = place(sans, label_px, False, tr("bank") if mode == "bank" else tr("wavefront"),
                           QRectF(L.label_x, btop, lw, hh), "r", "mem-label")
            for k, y in row_y:
                text = tr("wf {k}", k=k + 1) if mode == "bank" else tr("bank {b}", b=k)
                r = QRectF(L.label_x, y, lw, row_h)
                rl.append((k, place(sans, label_px, False, text, r, "r", "mem-label"),
                           place(sans, label_px, True, text, r, "r", "mem-label"), r))
        row_labels.append(rl)
        corners.append(corner)
        zebra.append([snap(QRectF(x - cw / 2, btop + hh, cw, rows * row_h))
                      for j, (_, x) in enumerate(col_x) if j % 2 == 0])
        rl_ = []
        if mode == "bank":
            for i in range(1, len(window)):
                if d.wavefront_phase[window[i]] != d.wavefront_phase[window[i - 1]]:
                    y = btop + hh + i * row_h
                    rl_.append(QLineF(x0, y, x0 + cw * len(keys), y))
        else:
            for j, (k, x) in enumerate(col_x):
                if j and d.wavefront_phase[k] != d.wavefront_phase[k - 1]:
                    rl_.append(QLineF(x - cw / 2, btop + hh, x - cw / 2, btop + band_h))
        rules.append(rl_)

    row_at = {k: i for i, k in enumerate(window)}

    def cell_of(bank: int, wf: int) -> tuple[int, float, float] | None:
        """Band, column centre and row top of a word; None for a row outside the window."""
        i = row_at.get(wf if mode == "bank" else bank)
        if i is None:
            return None
        if mode == "bank":
            g = bank // cols
            return g, band_list[g].cols[bank - g * cols][1], band_list[g].top + hh + i * row_h
        g = wf // cols
        return g, band_list[g].cols[wf - g * cols][1], band_list[g].top + hh + i * row_h

    words = []
    for bw in d.bank_words:
        cell = cell_of(bw.bank, bw.wavefront)
        if cell is None:
            words.append(None)
            continue
        g, x, y = cell
        r = QRectF(x - cw / 2 + 3 * s, y + 1.5 * s, cw - 6 * s, row_h - 3 * s)
        badge = None
        text_r = r
        if len(bw.lanes) > 1:
            txt = f"×{len(bw.lanes)}"
            bw_ = advance(sans, px, True, txt) + 6 * s
            plate = QRectF(r.right() - bw_ - 2 * s, r.top() + 2 * s, bw_, r.height() - 4 * s)
            badge = (plate, place(sans, px, True, txt, plate, "c", "badge"))
            text_r = QRectF(r.left(), r.top(), r.width() - bw_ - 2 * s, r.height())
        words.append(_Word(r, r.toRect(), place(mono, px, False, str(bw.word), text_r, "c", "word"),
                           place(mono, px, True, str(bw.word), text_r, "c", "word"), badge, g))
    lane_foot = L.lanes[0].bottom() + (L.phase_area.height() + 8 * s if L.phase_area is not None else 0)
    links = []
    for ln in d.lanes:
        if not ln.active:
            continue
        ends: dict[tuple, list] = {}
        for b, wf in zip(ln.banks, ln.word_wavefronts):
            cell = cell_of(b, wf)
            if cell is None:
                continue
            g, x, _ = cell
            ends.setdefault((wf, g), []).append(x)
        out = []
        for (wf, g), xs in sorted(ends.items()):
            x = sum(xs) / len(xs)
            seg = QLineF(L.columns[ln.lane], lane_foot, x, band_list[g].top + 2 * s)
            out.append((wf, g, around_bands(seg, [(b.top, b.top + band_h) for b in band_list[:g]])))
        links.append(out)
    note_rect = None
    if visible < bands or len(window) < len(all_keys):
        note_rect = QRectF(x0, top + visible * pitch - gap + 2 * s, avail_w, note_h)
    # What the numbers in the cells are, under the table (or its note) where the area has room.
    legend = None
    text = tr("numbers in the cells: word index (byte address ÷ 4)")
    below = top + visible * pitch - gap + note_h + 6 * s
    left_x = L.label_x if L.label_w else x0
    room_w = x0 + avail_w - left_x
    for lpx in range(min(label_px, px), mp - 1, -1):
        lh = line_h(sans, lpx)
        if advance(sans, lpx, False, text) <= room_w and below + lh <= mem.bottom():
            legend = place(sans, lpx, False, text, QRectF(left_x, below, room_w, lh), "l", "word-legend")
            break
    return SharedPlan(mode, band_list, visible, pitch, cw, row_h, hh, px, label_px, words,
                      (font(mono, px), font(mono, px, True)), heads, row_labels, corners, zebra, rules, links,
                      note_rect, legend, all_keys, len(window), row_first, fits)


def around_bands(seg: QLineF, spans: list[tuple[float, float]]) -> list[QLineF]:
    """``seg`` (running down) in pieces that leave out the heights ``spans`` (the bands above
    the one it goes to): a link to a lower band passes behind the bands above it, never
    through their bank or wavefront numbers."""
    y0, y1 = seg.y1(), seg.y2()
    if y1 <= y0 or not spans:
        return [seg]
    pieces, top = [], y0
    for a, b in sorted(spans):
        a, b = max(a - 2.0, y0), min(b + 2.0, y1)
        if b <= a:
            continue
        if a > top:
            pieces.append((top, a))
        top = max(top, b)
    if y1 > top:
        pieces.append((top, y1))

    def at(y: float) -> QPointF:
        t = (y - y0) / (y1 - y0)
        return QPointF(seg.x1() + (seg.x2() - seg.x1()) * t, y)

    return [QLineF(at(a), at(b)) for a, b in pieces if b - a > 0.5]


def _row_window(plan: SharedPlan, d: WarpDetail, st: State) -> int:
    """The first row shown where a band's rows are windowed: the frame's wavefront's row (by
    bank) or its first bank's (in time), kept in view."""
    if st.kind != "wavefront" or st.wf is None:
        return 0
    if plan.mode == "bank":
        i = st.wf
    else:
        banks = sorted(bw.bank for bw in d.bank_words if bw.wavefront == st.wf)
        i = plan.row_keys.index(banks[0]) if banks and banks[0] in plan.row_keys else 0
    return max(0, min(i - plan.rows_shown // 2 if i >= plan.rows_shown else 0,
                      len(plan.row_keys) - plan.rows_shown))


def _window(plan: SharedPlan, d: WarpDetail, st: State) -> int:
    """The first band shown (bands are windowed only when they cannot all be drawn): the
    one that holds the frame's wavefront (in time) or its first word (by bank)."""
    nb = len(plan.bands)
    if plan.visible >= nb or st.kind != "wavefront" or st.wf is None:
        return 0
    cols = len(plan.bands[0].cols)
    if plan.mode == "time":
        cur = st.wf // cols
    else:
        cur = next((bw.bank // cols for bw in d.bank_words if bw.wavefront == st.wf), 0)
    return max(0, min(cur, nb - plan.visible))


def paint_shared(p: QPainter, L: Layout, th: Theme, d: WarpDetail, st: State) -> None:
    s = L.s
    plan = prepared("shared", L, th, d, lambda: plan_shared(L, th, d))
    if plan.rows_shown < len(plan.row_keys):
        r0 = _row_window(plan, d, st)
        if r0:
            plan = prepared(f"shared{r0}", L, th, d, lambda: plan_shared(L, th, d, r0))
    null = st.null
    first = _window(plan, d, st)
    shown = range(first, first + plan.visible)
    dy = -first * plan.band_pitch
    muted = th.q("muted")
    cw, row_h, hh = plan.col_w, plan.row_h, plan.head_h
    cur = st.wf if st.kind in ("wavefront",) else None
    if not null:
        p.save()
        p.translate(0, dy)
        panel = th.q("panel")
        for g in shown:
            for r in plan.zebra[g]:
                p.fillRect(r, panel)
    # Links: lane cell foot -> head of the word's column, one per lane, wavefront and band.
    if st.links and not null:
        now, todo, done = [], [], []
        request = st.kind == "request"
        for lane_links in plan.links:
            seen = set()
            for wf, g, segs in lane_links:
                if g not in shown or not segs:
                    continue
                state = "todo" if request else st.step_state(wf)
                key = (round(segs[-1].x2()), g, state)
                if key in seen:
                    continue
                seen.add(key)
                if first:      # bands scrolled off the top: the link is drawn straight to its band
                    segs = [QLineF(segs[0].p1(), segs[-1].p2())]
                (now if state == "now" else done if state == "done" else todo).extend(segs)
        draw_links(p, th, s, done, todo, now, st.kind)
    # The wavefront being served right now: its row (by bank) or its column (in time).
    now_c = th.q("now")
    if cur is not None and not null:
        for g in shown:
            band = plan.bands[g]
            if plan.mode == "bank":
                y = band.top + hh + cur * row_h
                p.fillRect(QRectF(band.head.left(), y, band.head.width(), row_h), alpha(now_c, 0.18))
            else:
                for k, x in band.cols:
                    if k == cur:
                        p.fillRect(QRectF(x - cw / 2, band.top, cw, hh), now_c)
                        p.fillRect(QRectF(x - cw / 2, band.top + hh, cw, len(band.rows) * row_h),
                                   alpha(now_c, 0.18))
    # Headers and labels.
    items: list[TextItem] = []
    for g in shown:
        if not null:
            p.setFont(font(th.sans, plan.px))
            p.setPen(muted)
        for k, plain, bold in plan.heads[g]:
            lit = plan.mode == "time" and k == cur
            pl = bold if lit else plain
            if not null:
                if lit:
                    p.setFont(font(th.sans, plan.px, True))
                    p.setPen(th.q("now_text"))
                p.drawStaticText(pl.pt + QPointF(0, dy), pl.stt)
                if lit:
                    p.setFont(font(th.sans, plan.px))
                    p.setPen(muted)
            items.append(pl.item)
        if plan.corner[g] is not None:
            pl = plan.corner[g]
            if not null:
                p.setFont(font(th.sans, plan.label_px))
                p.drawStaticText(pl.pt + QPointF(0, dy), pl.stt)
            items.append(pl.item)
        for k, plain, bold, r in plan.row_labels[g]:
            lit = plan.mode == "bank" and k == cur
            pl = bold if lit else plain
            if not null:
                if lit:
                    p.fillRect(r.adjusted(0, 1, 0, -1), now_c)
                p.setFont(font(th.sans, plan.label_px, lit))
                p.setPen(th.q("now_text") if lit else muted)
                p.drawStaticText(pl.pt + QPointF(0, dy), pl.stt)
            items.append(pl.item)
    if not null and any(plan.rules[g] for g in shown):
        p.setPen(pen(th.q("grid"), max(1.0, 1.5 * s), style=Qt.PenStyle.DashLine))
        for g in shown:
            for rule in plan.rules[g]:
                p.drawLine(rule)
    # Words: boxes by state, each group in one drawRects call, then their numbers.
    border = max(1.0, 1.2 * s * th.stroke)
    early = st.kind in ("compute", "request")
    groups: dict[str, list] = {"todo": [], "now": [], "done": []}
    states = []
    for bw, w in zip(d.bank_words, plan.words):
        state = "todo" if early else st.step_state(bw.wavefront)
        states.append(state)
        if w is not None and w.band in shown:
            groups[state].append(w.snapped)
    if st.kind == "compute":
        styles = {"todo": (None, pen(th.q("grid"), border, 1.0, Qt.PenStyle.DashLine))}
        text_cs = {"todo": muted}
    else:
        styles = {"todo": (th.q("word"), pen(th.q("link"), border)),
                  "done": (mix(th.q("served"), th.q("background"), 0.25), pen(th.q("served"), border)),
                  "now": (now_c, pen(th.q("text"), border * 2))}
        text_cs = {"todo": th.q("word_text"), "done": th.q("text"), "now": th.q("now_text")}
    if not null:
        for state, (fill, pn) in styles.items():
            if groups[state]:
                p.setPen(pn)
                p.setBrush(fill if fill is not None else Qt.BrushStyle.NoBrush)
                p.drawRects(groups[state])
    fnt = color = None
    badges = st.kind != "compute"
    for w, state in zip(plan.words, states):
        if w is None or w.band not in shown:
            continue
        bold = state == "now"
        pl = w.bold if bold else w.plain
        items.append(pl.item)
        if not null:
            f = plan.word_font[bold]
            if f is not fnt:
                p.setFont(f)
                fnt = f
            c = text_cs[state]
            if c is not color:
                p.setPen(c)
                color = c
            p.drawStaticText(pl.pt, pl.stt)
        if w.badge is not None and badges:
            plate, bpl = w.badge
            items.append(bpl.item)
            if not null:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(th.q("bad") if state != "done" else th.q("served"))
                p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
                p.drawRoundedRect(plate, 3 * s, 3 * s)
                p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
                p.setFont(font(th.sans, plan.px, True))
                p.setPen(QColor("#ffffff"))
                p.drawStaticText(bpl.pt, bpl.stt)
                fnt = color = None
    if not null:
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.restore()
    if dy:
        items = [t.moved(0, dy) for t in items]
    if plan.legend is not None:
        items.append(plan.legend.item)
        if not null:
            p.setFont(font(th.sans, plan.legend.px))
            p.setPen(muted)
            p.drawStaticText(plan.legend.pt, plan.legend.stt)
    record_many(items)
    if plan.note_rect is not None:
        _not_shown_note(p, plan, d, th, first, shown)


def _not_shown_note(p: QPainter, plan: SharedPlan, d: WarpDetail, th: Theme, first: int, shown) -> None:
    """The visible summary of bands that do not fit: which wavefronts or banks, how many words."""
    cols = len(plan.bands[0].cols)
    limit = d.wavefronts if plan.mode == "time" else BANKS
    parts = []
    keys = plan.row_keys
    for lo, hi in ((0, plan.row_first), (plan.row_first + plan.rows_shown, len(keys))):
        if hi > lo:
            off = set(keys[lo:hi])
            if plan.mode == "bank":
                words = sum(1 for bw in d.bank_words if bw.wavefront in off)
                parts.append(tr("wavefronts {a}-{b} ({w} words) are off the picture", a=keys[lo] + 1,
                                b=keys[hi - 1] + 1, w=words))
            else:
                words = sum(1 for bw in d.bank_words if bw.bank in off)
                parts.append(tr("banks {a}-{b} ({w} words) are off the picture", a=keys[lo], b=keys[hi - 1],
                                w=words))
    for lo, hi in ((0, first), (first + plan.visible, len(plan.bands))):
        if hi > lo:
            a, b = lo * cols, min(limit, hi * cols) - 1
            if plan.mode == "time":
                words = sum(1 for bw in d.bank_words if a <= bw.wavefront <= b)
                parts.append(tr("wavefronts {a}-{b} ({w} words) are off the picture", a=a + 1, b=b + 1, w=words))
            else:
                words = sum(1 for bw in d.bank_words if a <= bw.bank <= b)
                parts.append(tr("banks {a}-{b} ({w} words) are off the picture", a=a, b=b, w=words))
    text = "; ".join(parts)
    r = plan.note_rect
    lines = wrap(th.sans, plan.px, False, text, r.width())
    if len(lines) > 2:
        drop(text)
    lh = line_h(th.sans, plan.px)
    for k, line in enumerate(lines[:2]):
        draw_text(p, QRectF(r.left(), r.top() + k * lh, r.width(), lh), line, th, plan.px, th.q("muted"),
                  align="l", key="mem-note")
