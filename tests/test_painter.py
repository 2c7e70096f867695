"""The one painter: every frame paints on QImage and QSvgGenerator, frames differ where the
model says they differ, themes and sizes work, the QPainter is left as it was."""

import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QIODevice, QRectF, QSize  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgGenerator  # noqa: E402

from viz.frames import frames  # noqa: E402
from viz.render import (PaintOptions, layout, paint_compare, paint_frame, paint_title_card,  # noqa: E402
                         theme, theme_names)
from viz.scenario import builtin_names, load  # noqa: E402
from viz.warp import warp_detail  # noqa: E402

W, H = 480, 270


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def render(d, f, size=(W, H), th="light", options=None) -> np.ndarray:
    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    img.fill(QColor("magenta"))
    p = QPainter(img)
    paint_frame(p, QRectF(0, 0, *size), d, f, theme(th), options)
    p.end()
    buf = np.frombuffer(img.constBits(), np.uint8, count=img.sizeInBytes())
    return buf.reshape(size[1], img.bytesPerLine()).copy()


def column_read(pad=0):
    return warp_detail(load("transpose-tile", {"PAD": str(pad)}), 8)


def test_consecutive_frames_differ_where_the_model_changes():
    d = column_read()
    fs = frames(d)
    images = [render(d, f) for f in fs]
    for k in range(len(images) - 1):
        assert not np.array_equal(images[k], images[k + 1]), f"frames {k} and {k + 1} look the same"


def test_a_frame_fills_its_rect():
    d = column_read()
    img = render(d, frames(d)[3])
    magenta = np.array([255, 0, 255, 255], np.uint8)   # B, G, R, A of the fill colour
    assert not (img.reshape(-1, 4) == magenta).all(axis=1).any()


@pytest.mark.parametrize("name", theme_names())
def test_every_theme_paints(name):
    d = column_read(pad=1)
    img = render(d, frames(d)[2], th=name)
    corner = img[2, 8:11]                                 # B, G, R of the background
    bg = theme(name).q("background")
    assert tuple(corner[::-1]) == (bg.red(), bg.green(), bg.blue())


@pytest.mark.parametrize("size", [(320, 180), (1280, 720), (960, 1080), (3840, 2160)])
def test_sizes_and_layout(size):
    d = column_read()
    L = layout(QRectF(0, 0, *size), d, theme())
    assert len(L.lanes) == 32 and len(L.columns) == 32
    rect = QRectF(0, 0, *size)
    assert all(rect.contains(c) for c in L.lanes)
    assert L.lanes[0].right() <= L.lanes[1].left()
    assert L.caption.bottom() <= size[1] + 0.5
    if size[0] >= 1280:
        render(d, frames(d)[-1], size=size)


def test_scale_makes_type_larger():
    d = column_read()
    assert layout(QRectF(0, 0, 1920, 1080), d, theme(scale=1.5)).s == pytest.approx(1.5)


def test_options_leave_out_caption_and_title():
    d = column_read()
    f = frames(d)[2]
    full = layout(QRectF(0, 0, W, H), d, theme(), PaintOptions(title="T"))
    bare = layout(QRectF(0, 0, W, H), d, theme(), PaintOptions(captions=False, title=None))
    assert full.title is not None and full.caption is not None
    assert bare.title is None and bare.caption is None
    assert not np.array_equal(render(d, f, options=PaintOptions(captions=False)), render(d, f))


def test_painter_state_is_restored():
    d = column_read()
    img = QImage(W, H, QImage.Format.Format_RGB32)
    p = QPainter(img)
    p.translate(3, 4)
    pen = p.pen()
    p.setFont(p.font())
    paint_frame(p, QRectF(0, 0, W - 10, H - 10), d, frames(d)[5], theme())
    assert p.worldTransform().dx() == 3 and p.worldTransform().dy() == 4
    assert p.pen() == pen and not p.hasClipping()
    p.end()


def svg_texts(paint) -> list[str]:
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(1920, 1080))
    gen.setViewBox(QRectF(0, 0, 1920, 1080))
    p = QPainter(gen)
    paint(p)
    p.end()
    root = ET.fromstring(bytes(buf.data()))
    return [e.text for e in root.iter() if e.tag.endswith("text") and e.text]


def test_svg_keeps_text_as_text():
    d = column_read()
    f = frames(d)[4]
    texts = svg_texts(lambda p: paint_frame(p, QRectF(0, 0, 1920, 1080), d, f, theme()))
    # A 32-way conflict on one bank is laid out in time: a column per wavefront (1..32).
    assert "lane" in texts and "bank 0" in texts and "wavefront" in texts
    assert all(str(k) in texts for k in range(33))       # lane and wavefront numbers
    assert f.caption in texts
    assert "Wavefront 3 of 32" in texts


def test_global_frames_paint_the_ruler():
    d = warp_detail(load("offset-by-one"), 0)
    fs = frames(d)
    texts = svg_texts(lambda p: paint_frame(p, QRectF(0, 0, 1920, 1080), d, fs[2], theme()))
    assert "line at byte 0" in texts and "Line 1 of 2" in texts
    assert any(t.startswith("efficiency 80") for t in texts)


def test_compare_and_title_card_paint():
    a, b = column_read(0), column_read(1)
    texts = svg_texts(lambda p: paint_compare(p, QRectF(0, 0, 1920, 1080), (a, frames(a)[3]), (b, frames(b)[-1]),
                                              theme(), labels=("PAD = 0", "PAD = 1")))
    assert "PAD = 0" in texts and "PAD = 1" in texts
    texts = svg_texts(lambda p: paint_title_card(p, QRectF(0, 0, 1920, 1080), "My title", ["line one"], theme()))
    assert "My title" in texts and "line one" in texts


def test_every_builtin_paints_its_first_and_last_frame():
    for name in builtin_names():
        sc = load(name)
        if sc.expect_error:
            continue
        d = warp_detail(sc, 0)
        fs = frames(d)
        for f in (fs[0], fs[-1]):
            render(d, f, size=(320, 180))


def figure_boxes(d, f, size, scale=1.0, th="light"):
    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    p = QPainter(img)
    L = paint_frame(p, QRectF(0, 0, *size), d, f, theme(th, scale), PaintOptions(title="T"))
    p.end()
    return L, L.figure_texts


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_the_figures_row_never_overlaps(lang):
    """Counter, "label: value" pairs and the efficiency bar side by side: at every width,
    plain and presentation-sized type, the boxes (each exactly its text's advance wide)
    stay apart and inside the row; the bank conflicts are the last figure to give way."""
    from PySide6.QtGui import QFont, QFontMetricsF

    from viz import i18n
    from viz.render import painter

    shared = column_read()
    aos = warp_detail(load("aos-float3-r"), 0)
    cases = [(shared, frames(shared)[4]), (shared, frames(shared)[-1]), (aos, frames(aos)[3])]
    i18n.set_language(lang)
    try:
        for width in (640, 800, 960, 1100, 1280, 1440, 1600, 1760, 1900):
            for height in (width * 9 // 16, width // 2 + 40):
                for scale in (1.0, 1.35):
                    for d, f in cases:
                        L, boxes = figure_boxes(d, f, (width, height), scale)
                        where = f"{lang} {width}x{height} scale {scale} {f.kind}"
                        keys = [b.key for b in boxes]
                        assert "counter" in keys and ("value:conflicts" in keys or d.space != "shared"), where
                        for b in boxes:
                            assert L.figures.left() <= b.rect.left() and b.rect.right() <= L.figures.right(), where
                            if b.text:
                                font = QFont()
                                font.setFamilies(list(theme().sans))
                                font.setPixelSize(b.px)
                                font.setBold(b.bold)
                                assert b.rect.width() == pytest.approx(
                                    QFontMetricsF(font).horizontalAdvance(b.text), abs=0.01), where
                        for i, a in enumerate(boxes):
                            for b in boxes[i + 1:]:
                                assert not a.rect.intersects(b.rect), f"{where}: {a.text!r} runs into {b.text!r}"
                        if width >= 800 and d.space == "shared":
                            assert {"value:phases", "value:lanes"} <= set(keys), where
    finally:
        i18n.set_language("en")
    # The bookkeeping is what is drawn: every text of the row is in the painter's text record at its box.
    L, boxes = figure_boxes(shared, frames(shared)[4], (1280, 720))
    drawn = {(t.text, round(t.rect.left(), 3)) for t in L.texts}
    assert {(b.text, round(b.rect.left(), 3)) for b in boxes if b.text} <= drawn


def test_a_narrow_figures_row_goes_on_two_lines_then_gives_way_by_priority():
    """Short of room the figures go under the counter, every one kept; only where even two
    lines cannot hold them does the least important give way, and the painter says so."""
    d = column_read()
    rows = {scale: figure_boxes(d, frames(d)[4], (800, 450), scale) for scale in (1.0, 2.5, 4.0)}
    keys = {scale: [b.key for b in boxes] for scale, (_, boxes) in rows.items()}
    assert {"value:conflicts", "value:phases", "value:lanes"} <= set(keys[1.0])
    one_line = {b.rect.top() for b in rows[1.0][1]}
    assert len(one_line) == 1
    L, boxes = rows[2.5]
    assert {"value:conflicts", "value:phases", "value:lanes"} <= set(keys[2.5]) and not L.dropped
    counter = next(b for b in boxes if b.key == "counter")
    assert all(b.rect.top() >= counter.rect.bottom() - 0.01 for b in boxes if b.key.startswith("value:"))
    # (a narrow 800x450 picture now gives its figures row two lines' height: at 1280x720 and
    # scale 3.8 even two lines cannot hold them)
    L, boxes = figure_boxes(d, frames(d)[4], (1280, 720), 3.8)
    keys = [b.key for b in boxes]
    assert "value:conflicts" in keys and "value:lanes" not in keys      # least first
    assert "figure lanes" in L.dropped


def _record(d, f, size=(1920, 1080), scale=1.0):
    from viz.render import NullPainter

    return paint_frame(NullPainter(), QRectF(0, 0, *size), d, f, theme("light", scale), PaintOptions(title="T"))


def test_the_picture_counts_phases_and_wavefronts_from_1():
    d = warp_detail(load("float4-tile"), 4)
    f = next(f for f in frames(d) if f.kind == "wavefront")
    L = _record(d, f)
    phases = [t.text for t in L.texts if t.key == "phase"]
    assert phases == ["phase 1: lanes 0-7", "phase 2: lanes 8-15", "phase 3: lanes 16-23", "phase 4: lanes 24-31"]
    heads = [t.text for t in L.texts if t.key == "wf-head"]
    assert heads == [str(k) for k in range(1, d.wavefronts + 1)]


def test_the_element_diagram_shows_padding_between_fields_and_at_the_tail():
    """{char c; double d; float f}: c at 0, 7 bytes of padding, d at 8, f at 16, 4 bytes of
    tail padding: 24 bytes drawn, as the label says."""
    from viz.scenario import loads

    text = load("aos-float3-r").text.replace('fields = ["r:float", "g:float", "b:float"]',
                                              'fields = ["c:char", "d:double", "f:float"]').replace("].r", "].f")
    text = text[:text.index("[expected]")]
    sc = loads(text, "struct.toml")
    d = warp_detail(sc, 0)
    L = _record(d, frames(d)[0])
    plan = L.header_plan.elem
    segs = [(name, off, size, pad) for name, off, size, pad, _ in plan.segs]
    assert segs == [("c", 0, 1, False), ("pad", 1, 7, True), ("d", 8, 8, False), ("f", 16, 4, False),
                    ("pad", 20, 4, True)]
    assert sum(size for _, _, size, _ in segs) == d.array.type.size == 24
    assert "element: struct, 24 bytes (11 of padding)" in [t.text for t in L.texts]


def test_a_swizzled_column_shows_logical_and_physical():
    d = warp_detail(load("transpose-tile-xor"), 8)
    L = _record(d, frames(d)[0])
    label, texts = L.lane_rows[3]
    assert label == "col → physical"
    pitch = d.array.shape[1] + d.array.pad
    assert texts == [f"{ln.indices[1]}→{ln.elem % pitch}" for ln in d.lanes]
    assert len(set(t.split("→")[1] for t in texts)) == 32          # the xor spreads the column over 32 banks
    drawn = {t.text for t in L.texts if t.key == "lane:3"}
    assert set(texts) <= drawn
