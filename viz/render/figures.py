"""The figures row (counter, "label: value" figures, efficiency bar), the caption bar and
the title bar."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QPainter

from ..frames import Frame, conflict_ways
from ..i18n import sep, tr
from ..warp import SECTOR, WarpDetail
from .base import Layout, alpha, pen
from .text import advance, draw_text, drop, elide, fit_px, line_h, wrap
from .theme import Theme

_text = draw_text      # the painter module re-exports this name (tests spy on it there)


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
        px = fit_px(th.sans, (text,), inner.width(), max(L.min_px, 26 * s), L.min_px, bold=True)
        return [TextBox("counter", text, QRectF(inner.left(), inner.top(), advance(th.sans, px, True, text),
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
    counter_px = fit_px(th.sans, [counter], inner.width() * 0.36, max(L.min_px, 34 * s), L.min_px,
                        bold=True)
    if not counter_px:
        counter_px = fit_px(th.sans, [counter], inner.width(), max(L.min_px, 34 * s), L.min_px, bold=True)
    counter_w = advance(th.sans, counter_px, True, counter) if counter_px else 0.0
    if counter_px:
        out.append(TextBox("counter", counter, QRectF(inner.left(), inner.top(), counter_w, inner.height()),
                           counter_px, True))
    gap = 26 * s
    x0 = inner.left() + counter_w + gap * 1.4
    bar_w = min(inner.width() * 0.26, 380 * s) if bar is not None else 0.0
    right = inner.right() - bar_w - (gap if bar is not None else 0.0)

    def width_at(items, px: int) -> float:
        return (sum(advance(th.sans, px, False, lab + sep(": ")) + advance(th.sans, px, True, val)
                    for _, lab, val, _, _ in items) + gap * (len(items) - 1))

    def size_for(items) -> int:
        """The largest whole pixel size up to 24 (at scale 1) at which ``items`` fit, measured."""
        room = right - x0
        w100 = width_at(items, 100) - gap * (len(items) - 1)
        if room <= 0 or w100 <= 0:
            return 0
        px = int(min(max(L.min_px, 24 * s), (room - gap * (len(items) - 1)) * 100 / w100))
        while px >= 1 and width_at(items, px) > room:     # hinting: small sizes run a little wide
            px -= 1
        return max(px, 0)

    shown = list(figs)
    px = size_for(shown)
    floor = max(16 * s, L.min_px)
    if px < floor and inner.height() >= 2 * line_h(th.sans, L.min_px, True):
        # Two lines: the counter (and the bar) above, every figure below at a readable size.
        half = inner.height() / 2
        cap_px = int(half / (line_h(th.sans, 100, True) / 100))
        while cap_px > 1 and line_h(th.sans, cap_px, True) > half:
            cap_px -= 1
        room = inner.width()
        px2 = min(int(max(L.min_px, 24 * s)), cap_px)
        while px2 >= L.min_px and width_at(shown, px2) > room:
            px2 -= 1
        if px2 >= L.min_px:
            top = QRectF(inner.left(), inner.top(), inner.width(), half)
            if out:
                cpx = min(out[0].px, cap_px)
                out[0] = TextBox("counter", counter, QRectF(top.left(), top.top(), advance(th.sans, cpx, True, counter),
                                                            half), cpx, True)
            x = inner.left()
            for name, label, value, color, _ in shown:
                lw = advance(th.sans, px2, False, label + sep(": "))
                vw = advance(th.sans, px2, True, value)
                out.append(TextBox(f"label:{name}", label + sep(": "), QRectF(x, inner.top() + half, lw, half), px2,
                                   False, "muted"))
                out.append(TextBox(f"value:{name}", value, QRectF(x + lw, inner.top() + half, vw, half), px2, True,
                                   color))
                x += lw + vw + gap
            if bar is not None:
                out.append(TextBox("bar", "", QRectF(inner.right() - bar_w, inner.top() + half * 0.1, bar_w,
                                                     half * 0.8), 0))
            return out
    while len(shown) > 1 and px < floor:
        shown.remove(max(shown, key=lambda t: t[4]))
        px = size_for(shown)
    if px >= L.min_px:
        x = x0
        for name, label, value, color, _ in shown:
            lw = advance(th.sans, px, False, label + sep(": "))
            vw = advance(th.sans, px, True, value)
            out.append(TextBox(f"label:{name}", label + sep(": "), QRectF(x, inner.top(), lw, inner.height()), px,
                               False, "muted"))
            out.append(TextBox(f"value:{name}", value, QRectF(x + lw, inner.top(), vw, inner.height()), px, True,
                               color))
            x += lw + vw + gap
    if bar is not None:
        out.append(TextBox("bar", "", QRectF(inner.right() - bar_w, inner.top() + inner.height() * 0.18, bar_w,
                                             inner.height() * 0.64), 0))
    return out


def paint_figures(p: QPainter, L: Layout, th: Theme, d: WarpDetail, f: Frame) -> None:
    p.fillRect(L.figures, th.q("panel"))
    L.figure_texts = figures_row(L, th, d, f)
    keys = {b.key for b in L.figure_texts}
    if f.kind != "idle":
        if "counter" not in keys:
            drop("counter")
        for name in (("conflicts", "phases", "lanes") if d.space == "shared" else ("sectors", "lines", "asked", "moved")):
            if f"value:{name}" not in keys:
                drop(f"figure {name}")
    elif "counter" not in keys:
        drop("counter")
    for box in L.figure_texts:
        if box.key == "bar":
            _efficiency_bar(p, box.rect, d.sector_efficiency, th, L)
        else:
            _text(p, box.rect, box.text, th, box.px, th.q(box.color), bold=box.bold, align="l", key=box.key,
                  cell=L.figures)


def _efficiency_bar(p: QPainter, r: QRectF, eff: float, th: Theme, L: Layout) -> None:
    s = L.s
    pct = f"{100 * eff:.1f}".rstrip("0").rstrip(".")
    label = tr("efficiency {pct}%", pct=pct)
    px = fit_px(th.sans, [label], r.width() - 12 * s, max(L.min_px, r.height() * 0.62), L.min_px, bold=True)
    if not px:
        label = f"{pct}%"
        px = fit_px(th.sans, [label], r.width() - 12 * s, max(L.min_px, r.height() * 0.62), L.min_px, bold=True)
    if not px:
        drop(label)
    p.setPen(pen(th.q("grid"), max(1.0, 1.3 * s)))
    p.setBrush(th.q("background"))
    p.drawRect(r)
    fill = QRectF(r.left(), r.top(), r.width() * max(0.0, min(1.0, eff)), r.height())
    color = th.q("good") if eff >= 0.999 else (th.q("now") if eff >= 0.5 else th.q("bad"))
    p.fillRect(fill, color)
    # The label sits on a plate so it reads on any fill.
    tw = advance(th.sans, px, True, label) + 12 * s
    ph = max(r.height() * 0.76, line_h(th.sans, px, True) + 2)      # the smallest type may be taller than the bar
    plate = QRectF(r.center().x() - tw / 2, r.center().y() - ph / 2, tw, ph)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(alpha(th.q("background"), 0.85))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.drawRoundedRect(plate, 3 * s, 3 * s)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    _text(p, plate, label, th, px, th.q("text"), bold=True, key="bar")
    p.setBrush(Qt.BrushStyle.NoBrush)


def caption_plan(L: Layout, th: Theme, caption: str) -> tuple[int, list[str]]:
    """The largest size (32 px at scale 1, at least ``min_px``) at which the sentence fits
    the caption bar, wrapped; at the smallest size the last line is cut with an ellipsis
    only if it still does not fit (recorded as dropped)."""
    s = L.s
    inner = L.caption.adjusted(24 * s, 8 * s, -24 * s, -8 * s)
    fam = th.sans
    px = int(max(L.min_px, 32 * s))
    while True:
        lines = wrap(fam, px, False, caption, inner.width())
        if len(lines) * line_h(fam, px) <= inner.height() + 0.5 or px <= L.min_px:
            break
        px -= 1
    fit = max(1, int((inner.height() + 0.5) // line_h(fam, px)))
    if len(lines) > fit:
        drop(caption)
        lines = lines[:fit - 1] + [elide(fam, px, False, " ".join(lines[fit - 1:]), inner.width())]
    return px, lines


def paint_caption(p: QPainter, L: Layout, th: Theme, caption: str) -> None:
    s = L.s
    r = L.caption
    p.fillRect(r, th.q("caption_bg"))
    inner = r.adjusted(24 * s, 8 * s, -24 * s, -8 * s)
    px, lines = caption_plan(L, th, caption)
    lh = line_h(th.sans, px)
    y = inner.top() + (inner.height() - lh * len(lines)) / 2
    for line in lines:
        _text(p, QRectF(inner.left(), y, inner.width(), lh), line, th, px, th.q("caption_text"), align="l",
              key="caption")
        y += lh


def paint_title(p: QPainter, L: Layout, th: Theme, title: str) -> None:
    r = L.title
    p.fillRect(r, th.q("title_bg"))
    inner = r.adjusted(22 * L.s, 0, -22 * L.s, 0)
    px = fit_px(th.sans, [title], inner.width(), max(L.min_px, 38 * L.s), L.min_px, bold=True)
    if not px:
        # too long for one line at the smallest type: as many lines as the bar holds
        px = L.min_px
        lh = line_h(th.sans, px, True)
        lines = wrap(th.sans, px, True, title, inner.width())
        fit = max(1, int((inner.height() - 4 * L.s) // lh))
        if len(lines) > fit:
            drop(title)
            lines = lines[:fit - 1] + [elide(th.sans, px, True, " ".join(lines[fit - 1:]), inner.width())]
        y = inner.top() + (inner.height() - lh * len(lines)) / 2
        for line in lines:
            _text(p, QRectF(inner.left(), y, inner.width(), lh), line, th, px, th.q("title_text"), bold=True,
                  align="l", key="title", cell=inner)
            y += lh
    else:
        _text(p, inner, title, th, px, th.q("title_text"), bold=True, align="l", key="title")
    p.setPen(pen(th.q("grid"), max(1.0, 1.5 * L.s)))
    p.drawLine(QLineF(r.left(), r.bottom(), r.right(), r.bottom()))
