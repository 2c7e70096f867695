"""The map pictures (the layout map, ldmatrix/stmatrix's matrix map, wgmma's core matrices on
the banks) keep the rule of every picture (tests/test_picture_text.py): no text under 12 px
on any canvas of at least 1100 x 650 (14 px per 1080 px of height where that is more), no
text under 18 px in presentation mode at 1080p (the theme scaled 1.35 and the app's
``min_px``), no two texts on top of each other; where the numbers do not fit at that size the
picture says so rather than shrink them."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from viz.layout_text import layout_map
from viz.render import theme
from viz.render.gmma_view import paint_gmma_map
from viz.render.layout_map import paint_layout_map
from viz.render.matrix_view import paint_matrix_map
from viz.render.text import presentation_floor
from viz.scenario import load
from viz.warp import warp_detail

ROOT = Path(__file__).resolve().parents[1]
PRESENTATION = 1.35            # viz.app.window.PRESENTATION_SCALE
# (canvas, theme scale, min_px the caller asks for): windows and exports, then presentation mode
CASES = [((1100, 650), 1.0, None), ((1280, 720), 1.0, None), ((1920, 1080), 1.0, None),
         ((1280, 720), PRESENTATION, presentation_floor(720)), ((1920, 1080), PRESENTATION, presentation_floor(1080))]
IDS = [f"{w}x{h}{'-presenting' if sc > 1 else ''}" for (w, h), sc, _ in CASES]


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def least_allowed(size, scale, min_px) -> float:
    floor = min_px or 12
    if scale > 1 and size[1] >= 1080:
        floor = max(floor, 18)
    return max(floor, 14 * size[1] / 1080 * scale) - 1e-6


def check(g, size, scale, min_px) -> None:
    low = least_allowed(size, scale, min_px)
    small = [(t, px) for _, t, px in g.texts if px < low]
    assert not small, f"text under {low:.1f} px: {small[:5]}"
    boxes = [(b, t) for b, t, _ in g.texts]
    for i, (a, ta) in enumerate(boxes):
        for b, tb in boxes[i + 1:]:
            inter = a.intersected(b)
            assert inter.width() < 0.5 or inter.height() < 0.5, f"{ta!r} overlaps {tb!r}"


def paint(fn, m, size, scale, min_px, **kw):
    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    p = QPainter(img)
    try:
        return fn(p, QRectF(0, 0, *size), m, theme("light", scale), min_px=min_px, **kw)
    finally:
        p.end()


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("text", ["Sw<3,3,3> o (8,64):(64,1)", "(32,32):(33,1)", "(64,64):(64,1)"])
def test_layout_maps_keep_the_floor(case, text):
    size, scale, min_px = case
    m = layout_map(text, None, "float")
    g = paint(paint_layout_map, m, size, scale, min_px)
    check(g, size, scale, min_px)
    assert g.floor >= least_allowed(size, scale, min_px)
    if g.cell_px == 0:          # numbers left out: the picture says so, naming the size
        assert any(f"too small for {round(g.floor)} px text" in t or f"too small for {int(-(-g.floor // 1))} px"
                   in t for _, t, _ in g.texts)
    else:
        assert g.cell_px >= g.floor - 1e-6


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("name, warp", [("ldmatrix-x4-tile-sw128", 1), ("stmatrix-accumulator-pad", 3),
                                        ("ldmatrix-x4-tile", 1)])
def test_matrix_maps_keep_the_floor(case, name, warp):
    from viz.kinds.ldmatrix import matrix_map

    size, scale, min_px = case
    m = matrix_map(warp_detail(load(name), 0, 0, warp))
    g = paint(paint_matrix_map, m, size, scale, min_px)
    check(g, size, scale, min_px)
    if g.cell_px == 0:
        assert any("numbers not written" in t for _, t, _ in g.texts)
    else:
        assert g.cell_px >= g.floor - 1e-6


WGMMA = sorted((ROOT / "tools" / "gpu" / "wgmma_cases").glob("*.toml"))[:2]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("path", WGMMA, ids=[p.stem for p in WGMMA])
def test_gmma_maps_keep_the_floor(case, path):
    from viz.kinds.wgmma import detail_gmma_map

    size, scale, min_px = case
    sc = load(path)
    m = next(m for m in (detail_gmma_map(warp_detail(sc, k)) for k in range(len(sc.instructions())))
             if m is not None)
    assert m is not None
    g = paint(paint_gmma_map, m, size, scale, min_px)
    check(g, size, scale, min_px)
    if g.cell_px == 0:
        assert any("numbers not written" in t for _, t, _ in g.texts)
