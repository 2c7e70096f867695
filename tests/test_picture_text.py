"""The rules of the picture's text, over every frame of every built-in: no text smaller than
14 px at 1920x1080 (in proportion to the height, times the theme's scale), no two texts on
top of each other, no text out of its cell (a lane's box, a bank's word, the figures row:
``TextItem.cell``), no label dropped - at 1280x720 and 1920x1080, normal and presentation
scale, single pictures and comparison halves.

The painter records what it draws (``Layout.texts``, ``Layout.dropped``); painting onto a
``NullPainter`` makes that record without rasterising, so the whole set runs in CI time.
Frames of one instruction share most of their text; a frame's check covers every pair of
its texts of which at least one is new since the previous frame (pairs of texts that were
both there before were checked in that frame), so every frame is checked in full.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402

from viz.frames import frames  # noqa: E402
from viz.render import NullPainter, PaintOptions, TextItem, paint_compare, paint_frame, theme  # noqa: E402
from viz.scenario import load, runnable_builtins  # noqa: E402
from viz.warp import warp_detail  # noqa: E402

PRESENTATION = 1.35          # the app's presentation mode (viz.app.window.PRESENTATION_SCALE)
SIZES = [(1280, 720), (1920, 1080)]
TOLERANCE = 0.5              # px: texts may touch, not overlap


@pytest.fixture(autouse=True)
def _app(qapp):
    return qapp


class Checker:
    """Checks the record of successive frames of one picture (one instruction, one size)."""

    def __init__(self, height: int, scale: float, where: str):
        self.min_px = 14 * height / 1080 * scale - 1e-6
        self.where = where
        self.prev: set = set()
        self.problems: list[str] = []

    def check(self, L, frame) -> None:
        where = f"{self.where} frame {frame.index + 1} ({frame.kind})"
        if L.dropped:
            self.problems.append(f"{where}: dropped {L.dropped}")
        items = L.texts
        new = [k for k, t in enumerate(items) if t not in self.prev]
        self.prev = set(items)
        if not new:
            return
        for k in new:
            t = items[k]
            if t.px < self.min_px:
                self.problems.append(f"{where}: {t.text!r} ({t.key}) at {t.px} px < {self.min_px:.2f}")
            if t.overflow() > TOLERANCE:
                self.problems.append(f"{where}: {t.text!r} ({t.key}) reaches {t.overflow():.1f} px out of its cell "
                                     f"{tuple(round(v) for v in t.cell)}")
        boxes = np.array([t.box for t in items])
        nb = boxes[new]
        e = TOLERANCE
        hit = ((nb[:, None, 0] < boxes[None, :, 2] - e) & (boxes[None, :, 0] < nb[:, None, 2] - e)
               & (nb[:, None, 1] < boxes[None, :, 3] - e) & (boxes[None, :, 1] < nb[:, None, 3] - e))
        hit[np.arange(len(new)), new] = False
        for i, j in np.argwhere(hit)[:3]:
            a, b = items[new[i]], items[j]
            self.problems.append(f"{where}: {a.text!r} ({a.key}) overlaps {b.text!r} ({b.key})")


# One test per built-in, size and scale (not one per size and scale looping over every
# built-in): the same pictures and checks, in pieces that parallel workers share out.
NAMES = [name for name, _ in runnable_builtins()]
_DETAILS: dict[str, tuple] = {}


def _builtin(name: str):
    """(name, scenario, [(detail, frames) of each instruction]), made once per process."""
    if name not in _DETAILS:
        sc = load(name)
        details = []
        for k in range(len(sc.instructions())):
            d = warp_detail(sc, k)
            details.append((d, frames(d)))
        _DETAILS[name] = (name, sc, details)
    return _DETAILS[name]


def _single(builtins, size, scale):
    p = NullPainter()
    th = theme("light", scale)
    W, H = size
    rect = QRectF(0, 0, W, H)
    problems, count = [], 0
    for name, sc, details in builtins:
        opts = PaintOptions(title=sc.title)
        for d, fs in details:
            c = Checker(H, scale, f"{name} #{d.instruction.number + 1} {W}x{H} scale {scale}")
            for f in fs:
                c.check(paint_frame(p, rect, d, f, th, opts), f)
                count += 1
            problems += c.problems
    return problems, count


def _compare(builtins, size, scale):
    """Instruction 2j on the left beside 2j+1 on the right (the last one beside the first),
    frame by frame: each frame of each instruction is in one comparison half."""
    p = NullPainter()
    th = theme("light", scale)
    W, H = size
    rect = QRectF(0, 0, W, H)
    problems, count = [], 0
    for name, sc, details in builtins:
        pairs = [(details[k], details[k + 1] if k + 1 < len(details) else details[0])
                 for k in range(0, len(details), 2)]
        for (a, fa), (b, fb) in pairs:
            ca = Checker(H, scale, f"{name} #{a.instruction.number + 1} left half {W}x{H} scale {scale}")
            cb = Checker(H, scale, f"{name} #{b.instruction.number + 1} right half {W}x{H} scale {scale}")
            for k in range(max(len(fa), len(fb))):
                f, g = fa[min(k, len(fa) - 1)], fb[min(k, len(fb) - 1)]
                left, right = paint_compare(p, rect, (a, f), (b, g), th, labels=(sc.title, sc.title + " (B)"))
                ca.check(left, f)
                cb.check(right, g)
                count += 1
            problems += ca.problems + cb.problems
    return problems, count


@pytest.mark.parametrize("scale", [1.0, PRESENTATION])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", NAMES)
def test_every_frame_of_every_builtin_keeps_its_text_readable(name, size, scale):
    builtins = [_builtin(name)]
    problems, count = _single(builtins, size, scale)
    assert count == sum(len(fs) for _, _, details in builtins for _, fs in details)
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


@pytest.mark.parametrize("scale", [1.0, PRESENTATION])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", NAMES)
def test_every_frame_of_every_builtin_keeps_its_text_readable_in_a_comparison(name, size, scale):
    builtins = [_builtin(name)]
    problems, count = _compare(builtins, size, scale)
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


def test_the_record_is_what_a_real_paint_draws():
    """The NullPainter's record equals the record of a real paint into an image."""
    sc = load("transpose-tile")
    d = warp_detail(sc, 8)
    fs = frames(d)
    img = QImage(1280, 720, QImage.Format.Format_RGB32)
    for f in (fs[0], fs[3], fs[-1]):
        qp = QPainter(img)
        real = paint_frame(qp, QRectF(0, 0, 1280, 720), d, f, theme(), PaintOptions(title=sc.title))
        qp.end()
        null = paint_frame(NullPainter(), QRectF(0, 0, 1280, 720), d, f, theme(), PaintOptions(title=sc.title))
        assert real.texts == null.texts and len(real.texts) > 100


def test_the_checker_catches_what_it_should():
    """A picture squeezed below any sensible size must fail the rules (the check can fail)."""
    sc = load("transpose-tile")
    d = warp_detail(sc, 8)
    f = frames(d)[3]
    L = paint_frame(NullPainter(), QRectF(0, 0, 1920, 1080), d, f, theme(), PaintOptions(title=sc.title))
    c = Checker(1080, 1.0, "ok")
    c.check(L, f)
    assert not c.problems
    c = Checker(1080, 2.0, "a rule twice as strict as the picture was painted for")
    c.check(L, f)
    assert any("px <" in p for p in c.problems)
    narrow = paint_frame(NullPainter(), QRectF(0, 0, 240, 1080), d, f, theme(), PaintOptions(title=sc.title))
    c = Checker(1080, 1.0, "a strip 240 px wide")
    c.check(narrow, f)
    assert any("overlaps" in p for p in c.problems)     # 32 lanes at 14 px cannot share 200 px
    assert any("out of its cell" in p for p in c.problems)
    # A lane text pushed 2 px past its box's right edge is caught (and only that one).
    k = next(i for i, t in enumerate(L.texts) if t.key == "lane:4")
    t = L.texts[k]
    x0, y0, x1, y1 = t.cell
    L.texts[k] = TextItem(t.text, t.px, t.rect.translated(x1 + 2 - t.box[2], 0), t.key, QRectF(x0, y0, x1 - x0, y1 - y0))
    c = Checker(1080, 1.0, "one text moved")
    c.check(L, f)
    assert len(c.problems) == 1 and "2.0 px out of its cell" in c.problems[0], c.problems


def test_the_column_read_is_laid_out_in_time_with_every_word():
    """The 32-way column read: one row for bank 0, a column per wavefront 1..32, each of
    the 32 words drawn at >= 14 px at 1080p; the current wavefront's number is bold."""
    sc = load("transpose-tile")
    d = warp_detail(sc, 8)
    f = frames(d)[4]                        # wavefront 3
    L = paint_frame(NullPainter(), QRectF(0, 0, 1920, 1080), d, f, theme(), PaintOptions(title=sc.title))
    words = [t for t in L.texts if t.key == "word"]
    assert sorted(int(t.text) for t in words) == sorted(bw.word for bw in d.bank_words)
    assert all(t.px >= 14 for t in words)
    heads = [t.text for t in L.texts if t.key == "wf-head"]
    assert heads == [str(k) for k in range(1, 33)]
    assert [t.text for t in L.texts if t.key == "mem-label"] == ["wavefront", "bank 0"]


HARDEST = {"transpose-tile", "float4-tile", "double-tile", "char-stride-128", "shared-stride-32", "stride-32",
           "aos-float3-r", "transpose-tile-xor", "random-gather", "vector-int4"}


def test_the_hardest_builtins_are_runnable_builtins():
    assert HARDEST <= set(NAMES)


@pytest.mark.parametrize("scale", [1.0, PRESENTATION])
@pytest.mark.parametrize("name", sorted(HARDEST))
def test_in_chinese_the_hardest_builtins_keep_the_rules(name, scale):
    """The Chinese interface (wider labels, taller CJK lines) on the built-ins that crowd the
    picture most, at both sizes, single and compared."""
    from viz import i18n

    i18n.set_language("zh_CN")
    try:
        # the frames again, for their captions in Chinese
        _, sc, details = _builtin(name)
        some = [(name, sc, [(d, frames(d)) for d, _ in details])]
        problems = []
        for size in SIZES:
            problems += _single(some, size, scale)[0] + _compare(some, size, scale)[0]
    finally:
        i18n.set_language("en")
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


def test_a_comparison_half_at_720p_keeps_its_row_labels_and_every_address():
    """Each half of a 1280x720 comparison labels every lane row (a bare "[0]" would read as
    "every lane reads element 0") and draws all 32 byte addresses at >= 14*720/1080 px."""
    a = warp_detail(load("transpose-tile"), 8)
    b = warp_detail(load("transpose-tile-pad"), 8)
    halves = paint_compare(NullPainter(), QRectF(0, 0, 1280, 720), (a, frames(a)[3]), (b, frames(b)[-1]), theme())
    for L, d in zip(halves, (a, b)):
        labels = [t.text for t in L.texts if t.key == "lane-label"]
        assert labels == [label for label, _ in L.lane_rows] == ["lane", "thread x,y", "row", "column", "byte addr"]
        last = len(L.lane_rows) - 1
        addrs = [t for t in L.texts if t.key == f"lane:{last}"]
        assert [int(t.text) for t in addrs] == [ln.byte_addr for ln in d.lanes]
        assert min(t.px for t in addrs) >= 14 * 720 / 1080
