"""The one painter: a whole frame of a warp instruction, drawn on any QPainter.

API (stable; the app's widget, the PNG/GIF/MP4 exporter and the SVG exporter all call it)::

    from viz.render import paint_frame, PaintOptions, theme
    paint_frame(p: QPainter, rect: QRectF, detail: WarpDetail, frame: Frame,
                theme: Theme = theme("light"), options: PaintOptions | None = None) -> Layout

- ``detail`` is ``viz.warp.warp_detail(...)``; ``frame`` one of ``viz.frames.frames(detail)``.
- ``rect`` is where to draw, in the painter's coordinates; the picture fills it (type and
  strokes follow its size, times ``theme.scale`` for presentation mode). Anything from
  640x360 up to 4K works.
- **Type never goes below** ``Layout.min_px``: 12 px on any canvas (14 px per 1080 px of
  height, times ``theme.scale``, where that is more; ``PaintOptions.min_px`` asks for more:
  the app's presentation mode asks for 18 px on a 1080p screen, in proportion to the
  screen's height). Where room is short the picture rearranges (lane rows fold into more
  sub-rows, all rows alike; bank columns fold; a deep conflict stack is laid out in time or
  windowed; lines of the global ruler fold into rows) and then leaves out detail rows (byte
  addresses, then thread ids: ``PaintOptions.rows``, ``--rows``) rather than shrink text,
  and it says on the picture what it left out. Only a canvas smaller than the rule covers
  (under 540 x 650, or a thumbnail under 360 px high) shrinks its type, and only as far as
  it must to keep the lanes off the figures. Nothing is dropped silently.
- **A comparison is laid out alike** (``compare_options``; ``paint_compare`` and the app's
  two compare views use it): the same rows, level, folded alike, one shared-memory
  orientation, title and header bars of one height.
- **The painter reports the text it draws**: the returned ``Layout`` holds ``texts`` (a
  ``TextItem`` per string: text, pixel size, the rectangle it covers) and ``dropped``
  (labels it could not draw; empty in every frame of every built-in). Paint onto a
  ``NullPainter`` (``viz.render.text``) to get that record without drawing.
- Text is drawn as text (``drawStaticText``), so a ``QSvgGenerator`` keeps it searchable.
- The painter saves and restores the QPainter's state; it never reads the screen and
  needs only a ``QGuiApplication`` (for fonts), so it runs with ``QT_QPA_PLATFORM=offscreen``.
- ``layout(rect, detail, theme, options)`` returns the rectangles used (lane cells, lane
  columns, ...) so a widget can hit-test the mouse against exactly what was drawn; the
  ``Layout`` that ``paint_frame`` returns also holds the figures row's text boxes
  (``figure_texts``, from ``figures_row``), each exactly as wide as its text.
- ``PaintOptions.stale_note``: a muted band along the top saying the picture is the last
  valid version (the app sets it while the edited text has an error).

The picture, top to bottom: optional title; the instruction (access as written, array,
access width, phases, the element's bytes by field, padding hatched, the accessed bytes
marked); the 32 lane cells (lane, thread coordinates, index value - a swizzled array's
column as ``logical→physical`` - byte address; inactive lanes greyed, phases of 8/16-byte
accesses bracketed, counted from 1); links from lanes to what they touch; then either the
shared-memory table (``shared_view``: words by bank and wavefront, or in time for deep
conflict stacks) or the global address ruler of 128-byte lines in 32-byte sectors with the
bytes asked for marked inside (``global_view``); the figures ("Wavefront k of n",
conflicts, sectors, efficiency bar); the caption bar (``figures``).

Modules: ``text`` (fonts, fitting, the text record), ``base`` (options, layout, state,
pens), ``lanes``, ``shared_view``, ``global_view``, ``figures``; this one lays the
picture out and puts it together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QPainter

from ..argcheck import DROP_ORDER, ROW_NAMES, parse_rows
from ..frames import Frame, access_op, access_text, frames as frames_of
from ..i18n import language, tr
from ..kinds.registry import kind_of
from ..warp import WarpDetail
from .base import Layout, PaintOptions, State, alpha, pen
from .figures import TextBox, figures_row, paint_caption, paint_figures, paint_title
from .global_view import paint_global
from .lanes import (MAX_STAGGER, lane_pad, lane_rows, overhang, paint_lanes, paint_phases, plan_rows, row_names,
                    rows_fit)
from .shared_view import memory_labels, paint_shared
from .text import (BASE_H, BASE_W, FLOOR_PX, RECORD, NullPainter, TextItem, advance, draw_text, drop, elide, fit_px,
                   is_null, line_h, min_text_px, wrap)
from .theme import Theme, theme as _theme

_text = draw_text
_lane_rows = lane_rows          # older name, kept for callers


# ---------------------------------------------------------------------------- layout


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
    k = kind_of(getattr(d.access, "op", None))
    if k is not None and k.phase_caption:                # a kind that says what its phases are (Kind.phase_caption)
        return tr(k.phase_caption)
    m = getattr(d.access, "matrix", None)
    if m is not None:
        return tr("{n} matrices of 8 rows x 16 bytes: 1 phase each", n=m.num) if m.num > 1 else \
            tr("1 matrix of 8 rows x 16 bytes: 1 phase")
    if d.size <= 4:
        return tr("{size}-byte access: 1 phase of 32 lanes", size=d.size)
    return tr("{size}-byte access: {n} phases of {per} lanes", size=d.size, n=len(d.phases),
              per=len(d.phases[0]))


@dataclass
class _HeaderPlan:
    line1: list                  # lines of the access (mono, bold)
    px1: int
    line2: list                  # lines of array · access width · where · instruction
    px2: int
    elem: "_ElemPlan"
    height: float


@dataclass
class _ElemPlan:
    label: str
    label_px: int
    segs: list                   # (name, offset, size, is_padding, show_name)
    name_px: int
    unit: float
    width: float
    height: float


def _elem_plan(d: WarpDetail, th: Theme, s: float, mp: int, width: float) -> _ElemPlan:
    t = d.array.type
    segs = []
    pos = 0
    for f in sorted(t.fields, key=lambda f: f.offset):
        if f.offset > pos:
            segs.append((tr("pad"), pos, f.offset - pos, True))
        segs.append((f.name, f.offset, f.type.size, False))
        pos = max(pos, f.offset + f.type.size)
    if not t.fields:
        segs = [(t.name, 0, t.size, False)]
    elif pos < t.size:
        segs.append((tr("pad"), pos, t.size - pos, True))
    padding = sum(sz for _, _, sz, is_pad in segs if is_pad)
    name = t.name if not t.is_struct else tr("struct")
    label = (tr("element: {t}, {n} bytes ({p} of padding)", t=name, n=t.size, p=padding) if padding
             else tr("element: {t}, {n} bytes", t=name, n=t.size))
    label_px = fit_px(th.sans, [label], width, max(mp, 17 * s), mp)
    if not label_px:
        label = elide(th.sans, mp, False, label, width)
        label_px = mp
        drop("element label")
    unit = min(width / max(1, t.size), 30 * s)
    name_px = int(max(mp, 18 * s))
    shown = []
    for nm, off, size, is_pad in segs:
        px = fit_px(th.mono, [nm], size * unit - 4 * s, max(mp, 18 * s), mp, bold=True)
        if px:
            name_px = min(name_px, px)
        shown.append(bool(px))
        if not px and not is_pad:
            drop(f"field {nm}")            # a padding cell without its word stays hatched, and the label counts it
    segs = [(nm, off, size, is_pad, ok) for (nm, off, size, is_pad), ok in zip(segs, shown)]
    h = line_h(th.sans, label_px) + line_h(th.mono, name_px, True) + 12 * s
    return _ElemPlan(label, label_px, segs, name_px, unit, width, h)


def _header_plan(d: WarpDetail, th: Theme, s: float, mp: int, width: float) -> _HeaderPlan:
    elem_w = min(width * 0.3, 440 * s)
    left_w = width - elem_w - 16 * s
    op = access_op(d.access)     # 读, 写, 原子加, TMA 复制; cp.async, ldmatrix.x4 as written
    line1 = f"{op}  {access_text(d)}"
    px1 = fit_px(th.mono, [line1], left_w, max(mp, 30 * s), mp, bold=True)
    l1 = [line1]
    if not px1:
        px1 = mp
        l1 = wrap(th.mono, mp, True, line1, left_w)
    n_instr = d.instruction_count or _instruction_count(d.scenario)   # a trace: this warp's stream
    where = tr("block ({x},{y},{z}) · warp {w}", x=d.block_xyz[0], y=d.block_xyz[1], z=d.block_xyz[2],
               w=d.warp)
    number = d.access.option("number") if d.instruction_count else None   # a trace: the instruction's number
    if number:
        instr = tr("step {k} of {n} · instruction {m}", k=d.instruction.number + 1, n=n_instr, m=number)
    else:
        instr = (tr("instruction {k} of {n}", k=d.instruction.number + 1, n=n_instr) if n_instr
                 else tr("instruction {k}", k=d.instruction.number + 1))
    parts = [d.array.describe(), _phase_text(d), where, instr]
    joined = " · ".join(parts)
    px2 = fit_px(th.sans, [joined], left_w, max(mp, 20 * s), max(mp, int(17 * s)))
    l2 = [joined]
    if not px2:
        # Short of room: the parts go on more lines (never left out).
        px2 = int(max(mp, 17 * s))
        l2, cur = [], ""
        for part in parts:
            cand = f"{cur} · {part}" if cur else part
            if advance(th.sans, px2, False, cand) <= left_w:
                cur = cand
                continue
            if cur:
                l2.append(cur)
            if advance(th.sans, px2, False, part) <= left_w:
                cur = part
            else:
                pieces = wrap(th.sans, px2, False, part, left_w)
                l2.extend(pieces[:-1])
                cur = pieces[-1]
        if cur:
            l2.append(cur)
    elem = _elem_plan(d, th, s, mp, elem_w)
    h = (len(l1) * line_h(th.mono, px1, True) + len(l2) * line_h(th.sans, px2) + 10 * s)
    return _HeaderPlan(l1, px1, l2, px2, elem, max(76 * s, h, elem.height))


_LAYOUTS: dict = {}


def layout(rect: QRectF, detail: WarpDetail, theme: Theme, options: PaintOptions | None = None) -> Layout:
    """Where everything goes in ``rect`` (the same for every frame of one instruction)."""
    o = options or PaintOptions()
    key = (id(detail), rect.x(), rect.y(), rect.width(), rect.height(), theme.scale, theme.sans, theme.mono, o,
           language())
    hit = _LAYOUTS.get(key)
    if hit is None or hit[0] is not detail:
        if len(_LAYOUTS) > 64:
            _LAYOUTS.clear()
        hit = _LAYOUTS[key] = (detail, _layout_fitting(rect, detail, theme, o))
    return replace(hit[1], figure_texts=[], texts=[], dropped=[])


SMALL_W, SMALL_H = 540, 650     # a canvas under either (a window's picture squeezed by its panels) may shrink
LEAST_PX = 7                    # its type, to this at the least, rather than draw the lanes over the figures


def _layout_fitting(rect: QRectF, detail: WarpDetail, theme: Theme, o: PaintOptions) -> Layout:
    """``_layout``; on a canvas smaller than the rule covers (narrower than 540 px or lower
    than 650 px: a window's picture squeezed by its panels) whose lanes leave the memory view
    no room, the type comes down a pixel at a time (to 7 px) until they do: smaller type
    rather than lanes drawn over the figures."""
    L = _layout(rect, detail, theme, o)
    if rect.width() >= SMALL_W and rect.height() >= SMALL_H:
        return L
    mp = L.min_px
    while _overflows(L) and mp > LEAST_PX:
        mp -= 1
        L = _layout(rect, detail, theme, o, mp)
    return L


def _overflows(L: Layout) -> bool:
    return L.memory is None or L.memory.height() < 40 * L.s + 2.6 * L.min_px


def _layout(rect: QRectF, detail: WarpDetail, theme: Theme, o: PaintOptions, least: int | None = None) -> Layout:
    th = theme
    W, H = rect.width(), rect.height()
    rw, rh = W / BASE_W, H / BASE_H
    s = min(math.sqrt(rw * rh), 1.5 * min(rw, rh)) * th.scale
    mp = least or min_text_px(H, th.scale, o.min_px or FLOOR_PX)
    al = Align(*o.align) if o.align else None
    L = Layout(rect=QRectF(rect), s=s, min_px=mp)
    m = 22 * s
    x0, x1 = rect.left() + m, rect.right() - m
    y = rect.top()
    if o.stale_note:
        y += max(40 * s, line_h(th.sans, max(mp, int(20 * s)), True) * 1.5)
    if o.title:
        h = max(64 * s, line_h(th.sans, mp, True) * 1.5)
        n = len(wrap(th.sans, mp, True, o.title, W - 44 * s))
        if n > 1:                      # a long title in a narrow half: two lines (three at most)
            h = max(h, min(n, 3) * line_h(th.sans, mp, True) + 12 * s)
        if al:
            h = max(h, al.title_h)
        L.title = QRectF(rect.left(), y, W, h)
        y += h
    y += m * 0.6
    if o.header:
        L.header_plan = hp = _header_plan(detail, th, s, mp, x1 - x0)
        hh = max(hp.height, al.header_h) if al else hp.height
        L.header = QRectF(x0, y, x1 - x0, hh)
        y += hh + 10 * s
    bottom = rect.bottom()
    if o.captions:
        h = max(92 * s, 2 * line_h(th.sans, mp) + 16 * s)
        # the longest caption of the instruction's frames, wrapped at the smallest type, fits
        # (a narrow comparison half: a long sentence takes 3 or 4 lines, never cut)
        width = W - 48 * s
        longest = max((f.caption for f in frames_of(detail)), key=len, default="")
        n = len(wrap(th.sans, mp, False, longest, width)) if longest else 0
        h = max(h, min(n, 5) * line_h(th.sans, mp) + 16 * s + 1)
        L.caption = QRectF(rect.left(), bottom - h, W, h)
        bottom -= h
    bottom -= m * 0.6
    if o.figures:
        h = max(64 * s, line_h(th.sans, mp, True) * 1.6)
        if x1 - x0 < 60 * mp:       # narrow (a comparison half): room for the figures on a second line
            h = max(h, 2 * line_h(th.sans, mp, True) + 6 * s)
        L.figures = QRectF(x0, bottom - h, x1 - x0, h)
        bottom -= h + 12 * s
    every = lane_rows(detail)
    names = row_names(every)
    if o.label_column is not False:
        labels = [r[0] for r in every] + (memory_labels(detail) if detail.space == "shared" else [])
        px = int(max(mp, 17 * s))
        lw = max(advance(th.sans, px, True, t) for t in labels)
        while lw > (x1 - x0) * 0.16 and px > mp:
            px -= 1
            lw = max(advance(th.sans, px, True, t) for t in labels)
        L.label_px, L.label_w = px, lw + 14 * s
        if al:
            L.label_px, L.label_w = min(px, al.label_px), max(L.label_w, al.label_w)
    L.label_x = x0
    try:
        how, named = parse_rows(o.rows)
    except ValueError:
        how, named = "auto", None
    if al and al.names is not None:
        choices = [set(al.names)]
    elif how == "some":
        choices = [set(named)]
    elif how == "all":
        choices = [set(ROW_NAMES)]
    else:
        # Short of room: the detail rows go (byte addresses, then thread ids), never the type size.
        choices = [set(ROW_NAMES), set(ROW_NAMES) - {"addr"}, set(ROW_NAMES) - {"addr", "thread"}]
    best = None
    for keep in choices:
        cand = _with_rows(replace(L), detail, th, every, names, keep, x0, x1, m, y, bottom, al)
        if _fits(cand, th, detail):
            return cand
        # nothing fits whole: the rows that let the memory view show the most words
        score = (cand.lanes_fit, _shown(cand, th, detail))
        if best is None or score > best[0]:
            best = (score, cand)
    return best[1]


def _memory_shape(L: Layout, th: Theme, detail: WarpDetail):
    """The shared-memory view's arrangement under the lanes of ``L`` (mode and bands)."""
    if detail.space != "shared":
        return None
    from .shared_view import plan_shared

    plan = plan_shared(L, th, detail)
    return plan.mode, len(plan.bands), plan.visible


def _shown(L: Layout, th: Theme, detail: WarpDetail) -> int:
    """How many of the memory view's words (shared) it shows under the lanes of ``L``; for
    global memory, the height the ruler has to spare (negative: it runs over)."""
    if L.memory is None:
        return -10 ** 6
    if detail.space != "shared":
        from .global_view import plan_line_rows

        rows, *_, label_h, row_h, avail = plan_line_rows(L, th, detail)
        return round(avail - len(rows) * (label_h + 8 * L.s))
    from .shared_view import plan_shared

    plan = plan_shared(L, th, detail)
    return sum(1 for w in plan.words if w is not None and w.band < plan.visible) if plan.fits else -1


class Align(tuple):
    """How ``paint_compare`` makes its two halves alike (``PaintOptions.align``): the header's
    height, the label column, the lane rows kept, their sub-rows and sizes, the lane type's
    boost and the shared-memory arrangement."""

    __slots__ = ()
    _fields = ("header_h", "label_w", "label_px", "names", "stagger", "pxs", "boost", "shared_mode", "title_h")

    def __new__(cls, header_h, label_w, label_px, names, stagger, pxs, boost, shared_mode, title_h=0.0):
        return tuple.__new__(cls, (header_h, label_w, label_px, None if names is None else tuple(names), stagger,
                                   None if pxs is None else tuple(pxs), boost, shared_mode, title_h))

    header_h = property(lambda self: self[0])
    label_w = property(lambda self: self[1])
    label_px = property(lambda self: self[2])
    names = property(lambda self: self[3])
    stagger = property(lambda self: self[4])
    pxs = property(lambda self: self[5])
    boost = property(lambda self: self[6])
    shared_mode = property(lambda self: self[7])
    title_h = property(lambda self: self[8] if len(self) > 8 else 0.0)


def _with_rows(L: Layout, detail: WarpDetail, th: Theme, every, names, keep, x0, x1, m, y, bottom,
               al: Align | None) -> Layout:
    """``L`` with the lane rows named in ``keep`` (the lane row always), a line naming the
    rows left out, the lanes placed and the type boosted into spare height."""
    s, mp = L.s, L.min_px
    L.lane_rows = [r for r, n in zip(every, names) if n in keep or n == "lane"]
    L.row_names = [n for n in names if n in keep or n == "lane"]
    L.hidden_rows = [r[0] for r, n in zip(every, names) if n not in keep and n != "lane"]
    L.shared_mode = al.shared_mode if al else None
    if L.hidden_rows:
        text = rows_note_text(L.hidden_rows)
        lines = wrap(th.sans, mp, False, text, x1 - x0)
        h = len(lines) * line_h(th.sans, mp) + 4 * s
        L.rows_note = QRectF(x0, y, x1 - x0, h)
        y += h
    if al and al.names is not None:     # (names None: each half picks its rows for the orientation)
        force = (al.stagger, al.pxs if al.pxs and len(al.pxs) == len(L.lane_rows) else None)
        return _place_lanes(L, detail, th, x0, x1, m, y, bottom, al.boost, force)
    base = _place_lanes(replace(L), detail, th, x0, x1, m, y, bottom, 1.0)
    best = base
    top_boost = _boost_limit(L.rect.width(), L.rect.height())
    if (top_boost > 1.0 or base.memory.height() > 0.45 * (bottom - y)) and _fits(base, th, detail):
        # A picture narrower than 16:9 (a comparison half, a narrow window) has height to
        # spare, and so has a wide one whose memory view is shallow (else an empty band
        # under it): the lane and word type grows into it, as long as the memory view
        # keeps its type and shows everything.
        want = _memory_fit(base, th, detail)
        wide = top_boost <= 1.0
        deepest = max(1 if wide else 2, max(st for _, st, _, _ in base.lane_specs))
        shape = _memory_shape(base, th, detail)
        top_boost = max(top_boost, 1.6)
        for boost in (b for b in BOOSTS if b <= top_boost):
            cand = _place_lanes(replace(L), detail, th, x0, x1, m, y, bottom, boost)
            if max(st for _, st, _, _ in cand.lane_specs) > deepest:
                continue                # larger type, but lanes harder to tell apart: not worth it
            if wide and _memory_shape(cand, th, detail) != shape:
                continue                # a wide picture keeps its memory view's arrangement (one row of 32)
            if not _fits(cand, th, detail):
                continue                # larger lanes, but the memory view would run short
            got = _memory_fit(cand, th, detail)
            if got is not None and want is not None and got >= want:
                best = cand
                break
    return best


def rows_note_text(hidden: list[str]) -> str:
    """The visible line that names the lane rows a picture left out, and how to get them back."""
    return tr("Rows left out for room: {rows} (show them: View ▸ Every lane row, or export --rows all)",
              rows=", ".join(hidden))


def _fits(L: Layout, th: Theme, detail: WarpDetail) -> bool:
    """Do the lane rows fit their boxes, and does the memory view show everything under them
    at a readable size?"""
    if not L.lanes_fit or L.memory is None or L.memory.height() < 60 * L.s:
        return False
    if detail.space == "shared":
        return _memory_fit(L, th, detail) is not None
    from .global_view import global_rows

    n_rows, px, row_h = global_rows(L, th, detail)
    return bool(px) and row_h >= max(16 * L.s, line_h(th.sans, L.min_px) * 0.8)


BOOSTS = (2.0, 1.8, 1.6, 1.45, 1.3, 1.2, 1.1)


def _boost_limit(W: float, H: float) -> float:
    """How much the lane and word type may grow in a ``W`` x ``H`` picture: 1 at 16:9 or
    wider, up to 2 where it is twice as tall for its width (a comparison half)."""
    return min(2.0, max(1.0, (H / max(W, 1.0)) / (BASE_H / BASE_W)))


def _memory_fit(L: Layout, th: Theme, detail: WarpDetail):
    """How well the memory view fits under the lanes of ``L``: comparable (larger is
    better) or None where it must leave something off the picture."""
    if detail.space == "shared":
        from .shared_view import plan_shared, shows_everything

        plan = plan_shared(L, th, detail)
        return (plan.px, min(round(plan.row_h / L.s), 40)) if shows_everything(plan) else None
    from .global_view import global_rows

    n_rows, px, row_h = global_rows(L, th, detail)
    return (-n_rows, px, min(round(row_h / L.s), 60))


def _place_lanes(L: Layout, detail: WarpDetail, th: Theme, x0: float, x1: float, m: float, y: float,
                 bottom: float, boost: float, force: tuple | None = None) -> Layout:
    """The lane rows, the phase strip and the memory area under them, with the lane type
    ``boost`` times its usual cap (``L.boost``); ``force``: (sub-rows, sizes) of a comparison."""
    s, mp = L.s, L.min_px
    L.boost = boost
    rows = L.lane_rows
    addr = L.row_names[-1:] == ["addr"]
    gx0, gx1 = x0 + L.label_w, x1
    cw = (gx1 - gx0) / 32
    specs = plan_rows(rows, th, cw, s, mp, boost, addr, force)
    for _ in range(MAX_STAGGER + 2):
        # Staggered rows give lanes 0 and 31 boxes wider than their column: keep them off
        # the row labels and inside the picture (half the right margin may go to them).
        oh = overhang(specs, cw)
        if oh <= 0:
            break
        for _ in range(8):              # the overhang depends on cw: a few steps settle it
            oh = overhang(specs, cw)
            gx0, gx1 = x0 + L.label_w + oh, x1 - max(0.0, oh - m * 0.5)
            cw = (gx1 - gx0) / 32
        again = plan_rows(rows, th, cw, s, mp, boost, addr, force)
        if again == specs:
            break
        specs = again
    x1 = gx1
    L.lanes_fit = rows_fit(rows, th, cw, s, specs, addr)
    L.col_w = cw
    L.columns = [gx0 + cw * (k + 0.5) for k in range(32)]
    top = y + 4 * s
    L.lane_specs = []
    # a row is at least as high as its label's line, measured in the font in use (a CJK line
    # is taller than the Latin row it labels)
    lab_h = line_h(th.sans, L.label_px) + 2 * s if L.label_w and L.label_px else 0.0
    for px, stagger, h in specs:
        h = max(h, lab_h)
        L.lane_specs.append((px, stagger, top, h))
        top += h
    lane_h = top - y + 6 * s
    L.lane_area = QRectF(gx0, y, x1 - gx0, lane_h)
    pad = lane_pad(cw)
    L.lanes = [QRectF(gx0 + cw * k + pad, y, cw - 2 * pad, lane_h) for k in range(32)]
    y += lane_h
    if detail.space == "shared" and len(detail.phases) > 1:
        h = max(30 * s, line_h(th.sans, mp, True) + 6 * s)
        L.phase_area = QRectF(gx0, y + 4 * s, x1 - gx0, h)
        y += h + 6 * s
    L.memory = QRectF(x0, y, x1 - x0, max(10.0, bottom - y))
    return L


# ---------------------------------------------------------------------------- entry point


def paint_kind_map(p: QPainter, rect: QRectF, m, th: Theme, scale: float | None = None):
    """Draw a kind's own map (``Kind.picture_map``, ``Kind.matrix_map``, ``TraceForm.matrix_map``:
    a wgmma's core matrices on the banks) with the painter its ``view`` names: a module of
    ``viz.render`` (a kind module imports no Qt, so its painter lives here), or a module's whole
    dotted name, whose ``paint_map(p, rect, m, th, scale)`` draws it."""
    import importlib

    view = str(getattr(m, "view", ""))
    name = view if "." in view else f"{__package__}.{view}"
    if not all(part.isidentifier() for part in name.split(".")):
        raise ValueError(f"a kind's map names no painter module: {view!r}")
    return importlib.import_module(name).paint_map(p, rect, m, th, scale=scale)


def paint_frame(p: QPainter, rect: QRectF, detail: WarpDetail, frame: Frame,
                theme: Theme | None = None, options: PaintOptions | None = None) -> Layout:
    """Draw ``frame`` of ``detail`` filling ``rect`` (see the module docstring)."""
    th = theme or _theme()
    o = options or PaintOptions()
    L = layout(rect, detail, th, o)
    null = is_null(p)
    saved = RECORD.texts, RECORD.dropped
    RECORD.texts, RECORD.dropped = L.texts, L.dropped
    p.save()
    try:
        # Rectangles are snapped to whole pixels and drawn without antialiasing (crisp, and
        # several times faster in the raster engine); links and badges switch it on.
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setClipRect(rect)
        p.fillRect(rect, th.q("background"))
        st = State(detail, frame, p)
        if L.title is not None:
            paint_title(p, L, th, o.title or "")
        if L.header is not None:
            _paint_header(p, L, th, detail)
        if L.rows_note is not None:
            _paint_rows_note(p, L, th)
        k = kind_of(getattr(detail.access, "op", None))
        m = k.picture_map(detail) if k is not None and k.picture_map is not None else None
        if m is not None:       # a kind that draws its own map (Kind.picture_map: wgmma's core matrices on the banks)
            top = L.header.bottom() + 6 * th.scale if L.header is not None else rect.top()
            paint_kind_map(p, QRectF(rect.left(), top, rect.width(), rect.bottom() - top), m, th)
            return L
        if detail.space == "shared":
            paint_shared(p, L, th, detail, st)
        else:
            paint_global(p, L, th, detail, st)
        paint_lanes(p, L, th, detail, st)
        if L.phase_area is not None:
            paint_phases(p, L, th, detail, st)
        if L.figures is not None:
            paint_figures(p, L, th, detail, frame)
        if L.caption is not None:
            paint_caption(p, L, th, frame.caption)
        if o.stale_note:
            _paint_stale(p, L, th, o.stale_note, null)
    finally:
        p.restore()
        RECORD.texts, RECORD.dropped = saved
    return L


def _paint_rows_note(p: QPainter, L: Layout, th: Theme) -> None:
    """The line naming the lane rows left out for room (and how to bring them back)."""
    r = L.rows_note
    lh = line_h(th.sans, L.min_px)
    for k, line in enumerate(wrap(th.sans, L.min_px, False, rows_note_text(L.hidden_rows), r.width())):
        _text(p, QRectF(r.left(), r.top() + k * lh, r.width(), lh), line, th, L.min_px, th.q("muted"), align="l",
              key="rows-note")


def _paint_stale(p: QPainter, L: Layout, th: Theme, note: str, null: bool) -> None:
    """The picture is the last valid version: everything dimmed, a band along the top says so."""
    s = L.s
    r = L.rect
    h = max(40 * s, line_h(th.sans, max(L.min_px, int(20 * s)), True) * 1.5)
    band = QRectF(r.left(), r.top(), r.width(), h)
    if not null:
        p.fillRect(r, alpha(th.q("background"), 0.35))
        p.fillRect(band, th.q("muted"))
        p.fillRect(QRectF(r.left(), r.top() + h, r.width(), r.height() - h),
                   QBrush(alpha(th.q("muted"), 0.15), Qt.BrushStyle.BDiagPattern))
    inner = band.adjusted(22 * s, 0, -22 * s, 0)
    px = fit_px(th.sans, [note], inner.width(), max(L.min_px, 20 * s), L.min_px, bold=True)
    if not px:
        px = L.min_px
        drop(note)
        note = elide(th.sans, px, True, note, inner.width())
    _text(p, inner, note, th, px, th.q("background"), bold=True, align="l", key="stale")


# ---------------------------------------------------------------------------- header


def _paint_header(p: QPainter, L: Layout, th: Theme, d: WarpDetail) -> None:
    r = L.header
    s = L.s
    hp: _HeaderPlan = L.header_plan
    y = r.top()
    left_w = r.width() - hp.elem.width - 16 * s
    h1 = line_h(th.mono, hp.px1, True)
    for line in hp.line1:
        _text(p, QRectF(r.left(), y, left_w, h1), line, th, hp.px1, th.q("text"), bold=True, align="l", mono=True,
              key="access")
        y += h1
    h2 = line_h(th.sans, hp.px2)
    y += 4 * s
    for line in hp.line2:
        _text(p, QRectF(r.left(), y, left_w, h2), line, th, hp.px2, th.q("muted"), align="l", key="about")
        y += h2
    e = hp.elem
    _paint_element(p, QRectF(r.right() - e.width, r.top(), e.width, r.height()), th, d, s, e)


def _paint_element(p: QPainter, r: QRectF, th: Theme, d: WarpDetail, s: float, e: _ElemPlan) -> None:
    """The element's bytes, split into its fields / vector components and padding (hatched),
    the accessed ones lit."""
    t = d.array.type
    lo, hi = d.instruction.byte_offset, d.instruction.byte_offset + d.size
    lab_h = line_h(th.sans, e.label_px)
    _text(p, QRectF(r.left(), r.top(), r.width(), lab_h), e.label, th, e.label_px, th.q("muted"), align="r",
          key="element")
    w = e.unit * t.size
    top = r.top() + lab_h + 4 * s
    box = QRectF(r.right() - w, top, w, max(line_h(th.mono, e.name_px, True) + 4 * s, r.bottom() - top - 2 * s))
    for name, off, size, is_pad, show in e.segs:
        cell = QRectF(box.left() + off * e.unit, box.top(), size * e.unit, box.height())
        lit = not is_pad and off < hi and lo < off + size
        p.setPen(pen(th.q("grid"), max(1.0, 1.2 * s * th.stroke)))
        p.setBrush(th.q("now") if lit else th.q("panel"))
        p.drawRect(cell)
        if is_pad:
            p.setBrush(QBrush(alpha(th.q("grid"), 0.7), Qt.BrushStyle.BDiagPattern))
            p.setPen(Qt.PenStyle.NoPen)
            p.drawRect(cell)
        if show:
            _text(p, cell, name, th, e.name_px, th.q("now_text") if lit else th.q("muted"), bold=lit, mono=True,
                  key="field")
    p.setBrush(Qt.BrushStyle.NoBrush)


# ---------------------------------------------------------------------------- compositions


def paint_compare(p: QPainter, rect: QRectF, left: tuple[WarpDetail, Frame], right: tuple[WarpDetail, Frame],
                  theme: Theme | None = None, options: PaintOptions | None = None,
                  labels: tuple[str, str] | None = None) -> tuple[Layout, Layout]:
    """Two layouts side by side, each a whole frame (its own caption and figures); ``labels``
    become the two title bars (default: the scenarios' titles). The halves are laid out
    alike (``compare_layouts``): lane rows at the same heights, folded into the same number
    of sub-rows at the same sizes (lane k of the left half is level with lane k of the
    right), the same rows kept, and shared memory in one orientation."""
    th = theme or _theme()
    o = options or PaintOptions()
    gap = max(2.0, round(6 * min(rect.width() / BASE_W, rect.height() / BASE_H)))
    half = (rect.width() - gap) / 2
    rects, opts = [], []
    for k, (d, f) in enumerate((left, right)):
        rects.append(QRectF(rect.left() + k * (half + gap), rect.top(), half, rect.height()))
        title = labels[k] if labels else (o.title or d.scenario.shown_title)
        opts.append(replace(o, title=title))
    opts = compare_options(rects, (left[0], right[0]), th, opts)
    out = [paint_frame(p, r, d, f, th, oo) for r, (d, f), oo in zip(rects, (left, right), opts)]
    p.fillRect(QRectF(rect.left() + half, rect.top(), gap, rect.height()).toRect(), th.q("grid"))
    return out[0], out[1]


def compare_options(rects, details, th: Theme, opts) -> list[PaintOptions]:
    """The options of two pictures shown side by side (a comparison), each with ``align`` set
    so that they are laid out alike: the taller header, the wider label column, the lane rows
    both can keep, the deeper folding, per row the smaller size, the smaller boost and one
    shared-memory orientation (the one that shows every word of both at the larger type).
    The app's two compare views use it as the exporter's ``paint_compare`` does."""
    key = (tuple(id(d) for d in details), tuple((r.x(), r.y(), r.width(), r.height()) for r in rects), th.scale,
           th.sans, th.mono, tuple(opts), language())
    hit = _ALIGNED.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], details)):
        return hit[1]
    if len(_ALIGNED) > 32:
        _ALIGNED.clear()
    got = _compare_options(rects, details, th, opts)
    _ALIGNED[key] = (tuple(details), got)
    return got


_ALIGNED: dict = {}


def _compare_options(rects, details, th: Theme, opts) -> list[PaintOptions]:
    opts = [replace(o, align=None) for o in opts]
    lays = [layout(r, d, th, o) for r, d, o in zip(rects, details, opts)]
    keep = set(lays[0].row_names) & set(lays[1].row_names)

    def align_of(lays, pxs=None, mode=None) -> Align:
        hh = max((L.header.height() for L in lays if L.header is not None), default=0.0)
        n = max(max((st for _, st, _, _ in L.lane_specs), default=1) for L in lays)
        return Align(hh, max(L.label_w for L in lays), min(L.label_px or 99 for L in lays), sorted(keep), n, pxs,
                     min(L.boost for L in lays), mode,
                     max((L.title.height() for L in lays if L.title is not None), default=0.0))

    mode = None
    if all(d.space == "shared" for d in details):
        mode = _shared_mode(rects, details, th, opts, align_of(lays))
        # the rows each half keeps with its memory view in that orientation
        auto = Align(*(tuple(align_of(lays))[:3] + (None,) + tuple(align_of(lays))[4:7] + (mode,)))
        lays = [layout(r, d, th, replace(o, align=tuple(auto))) for r, d, o in zip(rects, details, opts)]
        keep = set(lays[0].row_names) & set(lays[1].row_names)
    al = align_of(lays, None, mode)
    base_opts = opts
    opts = [replace(o, align=tuple(al)) for o in base_opts]
    lays = [layout(r, d, th, o) for r, d, o in zip(rects, details, opts)]
    auto = all(parse_rows(o.rows)[0] == "auto" for o in base_opts if _valid_rows(o.rows))
    for name in DROP_ORDER:
        # laid out alike (the deeper folding of the two), a half may no longer fit: the next
        # detail row goes from both, as it would from one picture short of room
        if not auto or name not in keep or all(_fits(L, th, d) for L, d in zip(lays, details)):
            break
        keep.discard(name)
        al = align_of(lays, None, mode)
        opts = [replace(o, align=tuple(al)) for o in base_opts]
        lays = [layout(r, d, th, o) for r, d, o in zip(rects, details, opts)]
    if lays[0].row_names == lays[1].row_names:
        # the same rows: each row at the smaller of the two sizes, so the rows line up
        pxs = [min(a[0], b[0]) for a, b in zip(lays[0].lane_specs, lays[1].lane_specs)]
        al = align_of(lays, pxs, mode)
        opts = [replace(o, align=tuple(al)) for o in opts]
    return opts


def _valid_rows(spec: str) -> bool:
    try:
        parse_rows(spec)
    except ValueError:
        return False
    return True


def _shared_mode(rects, details, th: Theme, opts, al: Align) -> str:
    """The shared-memory orientation for both halves: by bank unless only "in time" shows
    every word of both halves (or shows them larger)."""
    from .shared_view import plan_shared, shows_everything

    best = None
    for mode in ("bank", "time"):
        a = Align(*(tuple(al)[:7] + (mode,)))
        plans = [plan_shared(layout(r, d, th, replace(o, align=tuple(a))), th, d)
                 for r, d, o in zip(rects, details, opts)]
        whole = [shows_everything(pl) for pl in plans]
        score = (all(whole), sum(whole), all(pl.fits for pl in plans), min(pl.px for pl in plans))
        if best is None or score > best[0]:
            best = (score, mode)
    return best[1]


def paint_title_card(p: QPainter, rect: QRectF, title: str, lines: list[str], theme: Theme | None = None) -> list:
    """A still that opens a video: the title, then plain lines (layout, accesses, launch);
    lines that do not fit become "…and N more". Returns the ``TextItem`` record."""
    th = theme or _theme()
    s = min(rect.width() / BASE_W, rect.height() / BASE_H) * th.scale
    mp = min_text_px(rect.height(), th.scale)
    texts: list[TextItem] = []
    saved = RECORD.texts, RECORD.dropped
    RECORD.texts, RECORD.dropped = texts, []
    p.save()
    try:
        p.setClipRect(rect)
        p.fillRect(rect, th.q("background"))
        inner = rect.adjusted(120 * s, 0, -120 * s, 0)
        y = rect.top() + rect.height() * 0.2
        px = int(max(mp, 64 * s))
        while px > mp and len(wrap(th.sans, px, True, title, inner.width())) * line_h(th.sans, px, True) > 150 * s:
            px -= 2
        px = max(px, mp)
        title_lines = wrap(th.sans, px, True, title, inner.width())
        for line in title_lines:
            _text(p, QRectF(inner.left(), y, inner.width(), line_h(th.sans, px, True)), line, th, px,
                  th.q("title_text"), bold=True, align="l", key="card-title")
            y += line_h(th.sans, px, True)
        y += 18 * s
        p.fillRect(QRectF(inner.left(), y, 160 * s, max(2.0, 6 * s)).toRect(), th.q("now"))
        y += 40 * s
        lpx = int(max(mp, 34 * s))
        lh = line_h(th.sans, lpx) * 1.15
        foot = rect.bottom() - 90 * s
        wrapped = [wrap(th.sans, lpx, False, line, inner.width()) for line in lines]
        room = max(1, int((foot - y) // lh))
        need = sum(len(w) for w in wrapped)
        out: list[str] = []
        for k, w in enumerate(wrapped):
            left = len(wrapped) - k
            if need > room and len(out) + len(w) > room - 1:
                out.append(tr("…and {n} more", n=left))
                break
            out.extend(w)
        for line in out:
            _text(p, QRectF(inner.left(), y, inner.width(), lh), line, th, lpx, th.q("muted"), align="l",
                  key="card-line")
            y += lh
        _text(p, QRectF(inner.left(), rect.bottom() - 90 * s, inner.width(), 40 * s), "warpviz", th,
              max(mp, int(26 * s)), th.q("grid"), bold=True, align="l", key="card-brand")
    finally:
        p.restore()
        RECORD.texts, RECORD.dropped = saved
    return texts


__all__ = ["paint_frame", "paint_kind_map", "paint_compare", "paint_title_card", "layout", "Layout", "PaintOptions", "figures_row",
           "TextBox", "TextItem", "NullPainter"]
