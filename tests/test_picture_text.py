"""The rules of the picture's text, over every frame of every built-in: no text smaller than
12 px at any canvas (14 px per 1080 px of height, times the theme's scale, where that is
more: 18.9 px in presentation mode at 1080p), no two texts on top of each other, no text out
of its cell (a lane's box, a bank's word, the figures row: ``TextItem.cell``), no label
dropped - single pictures and comparison halves, at 1100x650 (a window's canvas, the
smallest the rule covers) and in presentation mode at 1280x720 and 1920x1080 for every
built-in, at 1280x720 and 1920x1080 too for the hardest ones; the two halves of a
comparison laid out alike (lane rows level, the same sub-rows, one orientation).

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
SIZES = [(1100, 650), (1280, 720), (1920, 1080)]   # the Chinese interface
TOLERANCE = 0.5              # px: texts may touch, not overlap
FLOOR = 12                   # no text under 12 px at any canvas of at least 1100 x 650
# every built-in: the smallest window canvas, and presentation mode at 720p and 1080p
CASES = [((1100, 650), 1.0), ((1280, 720), PRESENTATION), ((1920, 1080), PRESENTATION)]
HARDEST = {"transpose-tile", "float4-tile", "double-tile", "char-stride-128", "shared-stride-32", "stride-32",
           "aos-float3-r", "transpose-tile-xor", "random-gather", "vector-int4", "transpose-tile-pad"}
# the hardest also at the two common window sizes
EXTRA = [((1280, 720), 1.0), ((1920, 1080), 1.0)]


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


class Checker:
    """Checks the record of successive frames of one picture (one instruction, one size)."""

    def __init__(self, height: int, scale: float, where: str, floor: float = FLOOR):
        self.min_px = max(floor, 14 * height / 1080 * scale) - 1e-6
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


def aligned(left, right) -> list[str]:
    """What differs between the two halves of a comparison that should not: the lane rows
    kept, their tops and heights (lane k of the left level with lane k of the right), the
    number of sub-rows (the same in every row of both), the shared-memory orientation."""
    out = []
    if left.row_names != right.row_names:
        out.append(f"rows {left.row_names} vs {right.row_names}")
    else:
        for (pa, na, ta, ha), (pb, nb, tb, hb) in zip(left.lane_specs, right.lane_specs):
            if abs(ta - tb) > 0.5 or abs(ha - hb) > 0.5 or pa != pb:
                out.append(f"lane rows not level: {(pa, round(ta), round(ha))} vs {(pb, round(tb), round(hb))}")
                break
    subs = {n for L in (left, right) for _, n, _, _ in L.lane_specs}
    if len(subs) > 1:
        out.append(f"sub-rows {sorted(subs)}")
    if left.shared_mode != right.shared_mode:
        out.append(f"orientation {left.shared_mode} vs {right.shared_mode}")
    return out


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
                if k == 0:
                    ca.problems += [f"{ca.where}: {w}" for w in aligned(left, right)]
                count += 1
            problems += ca.problems + cb.problems
    return problems, count


ALL_CASES = [pytest.param(name, size, scale, id=f"{name}-{size[0]}x{size[1]}-{scale}")
             for name in NAMES for size, scale in CASES + (EXTRA if name in HARDEST else [])]


@pytest.mark.parametrize("name,size,scale", ALL_CASES)
def test_every_frame_of_every_builtin_keeps_its_text_readable(name, size, scale):
    builtins = [_builtin(name)]
    problems, count = _single(builtins, size, scale)
    assert count == sum(len(fs) for _, _, details in builtins for _, fs in details)
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


@pytest.mark.parametrize("name,size,scale", ALL_CASES)
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
        for size in SIZES if scale == 1.0 else SIZES[1:]:     # presentation mode is full screen: 720p, 1080p
            problems += _single(some, size, scale)[0] + _compare(some, size, scale)[0]
    finally:
        i18n.set_language("en")
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


def test_a_comparison_half_at_720p_keeps_its_row_labels_and_every_address():
    """Each half of a 1280x720 comparison labels every lane row it draws (a bare "[0]" would
    read as "every lane reads element 0") and names the rows it left out; asked for every
    row (View > Every lane row, --rows all) it draws all 32 byte addresses at >= 12 px."""
    a = warp_detail(load("transpose-tile"), 8)
    b = warp_detail(load("transpose-tile-pad"), 8)
    for rows in ("auto", "all"):
        halves = paint_compare(NullPainter(), QRectF(0, 0, 1280, 720), (a, frames(a)[3]), (b, frames(b)[-1]), theme(),
                               PaintOptions(rows=rows))
        for L, d in zip(halves, (a, b)):
            labels = [t.text for t in L.texts if t.key == "lane-label"]
            assert labels == [label for label, _ in L.lane_rows]
            assert labels + L.hidden_rows == ["lane", "thread x,y", "row", "column", "byte addr"] or \
                sorted(labels + L.hidden_rows) == sorted(["lane", "thread x,y", "row", "column", "byte addr"])
            note = " ".join(t.text for t in L.texts if t.key == "rows-note")
            assert all(h in note for h in L.hidden_rows)
            if rows == "all":
                assert not L.hidden_rows
                last = len(L.lane_rows) - 1
                addrs = [t for t in L.texts if t.key == f"lane:{last}"]
                assert [int(t.text) for t in addrs] == [ln.byte_addr for ln in d.lanes]
                assert min(t.px for t in addrs) >= FLOOR


PAIRS = [("transpose-tile-pad", "transpose-tile-xor"), ("transpose-tile", "transpose-tile-pad")]


@pytest.mark.parametrize("size,scale,floor", [((1100, 650), 1.0, FLOOR), ((1280, 720), 1.0, FLOOR),
                                              ((1920, 1080), PRESENTATION, 18),
                                              # the app's two compare views in presentation mode at 1080p:
                                              # the figures table keeps 180 px, its smallest type is 18 px
                                              ((1920, 900), PRESENTATION, 18)],
                         ids=["1100x650", "1280x720", "presentation-1080p", "app-presentation-1080p"])
@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-vs-{b}" for a, b in PAIRS])
def test_the_comparison_slides_keep_the_rules_and_line_up(a, b, size, scale, floor):
    """The lecture's comparisons (padding vs XOR; plain vs padded), every instruction and
    frame: no text under the rule, nothing dropped, both halves laid out alike."""
    _, _, da = _builtin(a)
    _, _, db = _builtin(b)
    p = NullPainter()
    th = theme("light", scale)
    W, H = size
    opts = PaintOptions(min_px=floor if floor > FLOOR else 0)
    problems = []
    for (x, fx), (y, fy) in zip(da, db):
        cx = Checker(H, scale, f"{a} #{x.instruction.number + 1} {W}x{H}", floor)
        cy = Checker(H, scale, f"{b} #{y.instruction.number + 1} {W}x{H}", floor)
        for k in range(max(len(fx), len(fy))):
            f, g = fx[min(k, len(fx) - 1)], fy[min(k, len(fy) - 1)]
            left, right = paint_compare(p, QRectF(0, 0, W, H), (x, f), (y, g), th, opts)
            cx.check(left, f)
            cy.check(right, g)
            cx.problems += [f"{cx.where}: {w}" for w in aligned(left, right)]
        problems += cx.problems + cy.problems
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])


@pytest.mark.parametrize("size", [(1920, 900), (1920, 826)], ids=["app-presentation-1080p", "halves-958x826"])
def test_presentation_compare_at_1080p_shows_all_32_banks_at_18px(size):
    """Padding beside XOR in presentation mode at 1080p (the app's two views, 958 x 826 each):
    the column read's 32 words on all 32 banks (two bands of 16, the table beside labels of its
    own where the lane rows' "col → physical" label column would leave it too narrow), no text
    under 18 px, no bank named off the picture."""
    a = warp_detail(load("transpose-tile-pad"), 8)
    b = warp_detail(load("transpose-tile-xor"), 8)
    th = theme("light", PRESENTATION)
    left, right = paint_compare(NullPainter(), QRectF(0, 0, *size), (a, frames(a)[2]), (b, frames(b)[2]), th,
                                PaintOptions(min_px=18))
    for L in (left, right):
        heads = [int(t.text) for t in L.texts if t.key == "bank-head"]
        assert sorted(heads) == list(range(32)), heads
        words = [t for t in L.texts if t.key == "word"]
        assert len(words) == 32
        assert min(t.px for t in L.texts) >= 18
        assert not any(t.key == "mem-note" for t in L.texts)
        assert all(t.overflow() <= TOLERANCE for t in L.texts)
    assert [t.text for t in left.texts if t.key == "bank-head"] == [t.text for t in right.texts if t.key == "bank-head"]


def test_one_orientation_for_a_32_way_conflict_beside_a_conflict_free_tile():
    """transpose-tile (32 wavefronts on bank 0) beside transpose-tile-pad (1 wavefront): both
    halves by bank, the deep stack's rows windowed and named, never a row of 32 wavefronts
    against a bank grid."""
    a = warp_detail(load("transpose-tile"), 8)
    b = warp_detail(load("transpose-tile-pad"), 8)
    left, right = paint_compare(NullPainter(), QRectF(0, 0, 1280, 720), (a, frames(a)[4]), (b, frames(b)[-1]), theme())
    assert left.shared_mode == right.shared_mode == "bank"
    heads = [t.text for t in left.texts if t.key == "bank-head"]
    assert sorted(int(h) for h in heads) == list(range(32))
    assert not any(t.key == "wf-head" for t in left.texts + right.texts)
    note = " ".join(t.text for t in left.texts if t.key == "mem-note")
    assert "are off the picture" in note


def test_links_never_cross_the_numbers_of_a_band_above():
    """A lane's link to a word in a lower band of banks passes behind the bands above it: no
    piece of a link crosses a bank or wavefront number."""
    from viz.render.painter import layout
    from viz.render.shared_view import plan_shared

    d = warp_detail(load("transpose-tile-pad"), 8)
    L = layout(QRectF(0, 0, 637, 720), d, theme(), PaintOptions())
    plan = plan_shared(L, theme(), d)
    assert len(plan.bands) > 1                          # folded: the case that crossed
    heads = [pl.item.box for band in plan.heads for _, pl, _ in band]
    crossings = 0
    lower = 0
    for lane_links in plan.links:
        for _, g, segs in lane_links:
            lower += g > 0
            for seg in segs:
                for x0, y0, x1, y1 in heads:
                    lo, hi = sorted((seg.y1(), seg.y2()))
                    if lo < y1 - 0.5 and hi > y0 + 0.5:      # the piece spans the number's height
                        crossings += 1
    assert lower > 0 and crossings == 0


def test_lane_rows_fold_alike_so_a_lane_reads_downwards():
    """Every lane row of a picture takes the same number of sub-rows: lane k is in sub-row
    k mod n of each (at 720p the lane numbers in 2 and the addresses in 3 did not line up)."""
    from viz.render.lanes import lane_segments

    d = warp_detail(load("transpose-tile-xor"), 8)
    for size in ((1100, 650), (637, 720), (1920, 1080)):
        L = paint_frame(NullPainter(), QRectF(0, 0, *size), d, frames(d)[0], theme(), PaintOptions())
        subs = {n for _, n, _, _ in L.lane_specs}
        assert len(subs) == 1, (size, L.lane_specs)
        n = subs.pop()
        for lane in (0, 5, 31):
            segs = lane_segments(L, lane)
            offsets = {round((r.top() - top) / (h / n)) for r, (_, _, top, h) in zip(segs, L.lane_specs)}
            assert offsets == {lane % n}, (size, lane, offsets)
            # no strip of empty outlines under the last folded row (it read as a clipped row)
            assert n == 1 or segs[-1].bottom() <= L.lane_specs[-1][2] + L.lane_specs[-1][3] + 0.5


def test_rows_left_out_are_named_on_the_picture_and_come_back():
    """--rows / View ▸ Every lane row: a picture asked for fewer rows names what it left out
    in a visible line; "all" keeps every row; a wrong word is refused with the list."""
    from viz.argcheck import parse_rows

    d = warp_detail(load("transpose-tile"), 8)
    f = frames(d)[0]
    some = paint_frame(NullPainter(), QRectF(0, 0, 1100, 650), d, f, theme(), PaintOptions(rows="lane,index"))
    assert [label for label, _ in some.lane_rows] == ["lane", "row", "column"]
    assert some.hidden_rows == ["thread x,y", "byte addr"]
    note = " ".join(t.text for t in some.texts if t.key == "rows-note")
    assert "thread x,y" in note and "byte addr" in note and "--rows all" in note
    assert min(t.px for t in some.texts) >= FLOOR
    every = paint_frame(NullPainter(), QRectF(0, 0, 1100, 650), d, f, theme(), PaintOptions(rows="all"))
    assert len(every.lane_rows) == 5 and not every.hidden_rows
    assert not any(t.key == "rows-note" for t in every.texts)
    with pytest.raises(ValueError, match="lane, thread, index, addr"):
        parse_rows("lane,bytes")


def test_presentation_type_follows_the_screen():
    """18 px on a 1080-px screen, in proportion (never under 12 px); 12 px everywhere else."""
    from viz.render.text import min_text_px, presentation_floor

    assert [presentation_floor(h) for h in (600, 720, 1080, 1440, 2160)] == [12, 12, 18, 24, 36]
    assert min_text_px(650) == min_text_px(360) == 12 and min_text_px(1080) == 14
    assert min_text_px(1080, PRESENTATION) == 19 and min_text_px(400, PRESENTATION, 18) == 18


@pytest.mark.parametrize("name,other", [("transpose-tile-pad", "transpose-tile-xor"), ("transpose-tile", None)])
def test_exported_gif_frames_at_720p_keep_the_rules(name, other):
    """A 1280x720 GIF's pictures (the plan the exporter paints, title card included), single
    and compared: no text under 12 px, nothing dropped, the halves alike."""
    from viz.export import Selection, Settings, make_plan, paint_step

    settings = Settings(size=(1280, 720), title_card=True)
    plan = make_plan(load(name), settings, Selection(), compare=load(other) if other else None)
    problems = []
    for step in plan.steps:
        got = paint_step(NullPainter(), QRectF(0, 0, 1280, 720), step, settings, plan)
        if step.title_card is not None:
            problems += [f"card {t.text!r} at {t.px}" for t in got[0] if t.px < FLOOR]
            continue
        for L in got:
            problems += [f"{t.text!r} at {t.px} px" for t in L.texts if t.px < FLOOR]
            problems += [f"dropped {x}" for x in L.dropped]
        if len(got) == 2:
            problems += aligned(*got)
    assert len(plan.steps) > 20
    assert not problems, problems[:12]


@pytest.mark.parametrize("size", [(1280, 589), (1920, 900)], ids=["720p-app", "1080p-app"])
def test_presentation_canvases_of_the_app_paint_every_builtin(size):
    """The app's picture in presentation mode (the screen less the figures row and the
    controls: 1280x589 at 720p) painted `stride-32` with a TypeError (a float size in a
    range: the picture stayed blank on the projector). Every instruction of every built-in
    paints there, within the rule."""
    W, H = size
    th = theme("light", PRESENTATION)
    floor = 12 if H < 800 else 18
    problems = []
    for name in NAMES:
        _, _, details = _builtin(name)
        for d, fs in details:
            c = Checker(H, 1.0, f"{name} #{d.instruction.number + 1} {W}x{H}", floor)
            L = paint_frame(NullPainter(), QRectF(0, 0, W, H), d, fs[0], th, PaintOptions(min_px=floor, figures=True))
            c.check(L, fs[0])
            problems += c.problems
    assert not problems, f"{len(problems)} problems, e.g.:\n" + "\n".join(problems[:12])
