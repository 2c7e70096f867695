"""The whole-launch heat map's axes: whole-number ticks at the middle of blocks and rows,
labels that say what a row and a column are, and ranges that end at the picture's edges,
for 1-, 2- and 3-D grids."""

from __future__ import annotations

import math
import re

import pytest

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture
from viz import assets
from viz.app.launch import grid_shape


@pytest.fixture
def heat(qtbot, user_dirs):  # noqa: F811
    w = make_window(qtbot, "coalesced")
    lp = w.launch
    w.docks["launch"].show()
    w.docks["launch"].raise_()
    qtbot.waitUntil(lambda: lp.glw.isVisible())

    def show(path):
        w.open_path(path)
        qtbot.waitUntil(lambda: lp.values is not None and lp.session.analysis is not None, timeout=20000)
        qtbot.waitUntil(lambda: lp.x_axis.count == lp.cols, timeout=5000)
        return lp

    yield show
    w.close()


def with_grid(tmp_path, name: str, old: str, new: str):
    text = (assets.scenario_dir() / f"{name}.toml").read_text()
    assert old in text
    text = text.split("[expected]")[0]          # other totals; and N covers the larger grid below
    text = text.replace("N = 16384", "N = 4194304")
    p = tmp_path / f"{name}-grid.toml"
    p.write_text(text.replace(old, new))
    return p


def ticks(axis, lo, hi, size=600):
    levels = axis.tickValues(lo, hi, size)
    assert len(levels) == 1
    spacing, values = levels[0]
    return spacing, values, axis.tickStrings(values, 1, spacing)


def check_common(lp, cols: int, rows: int, wpb: int):
    (x0, x1), (y0, y1) = lp.plot.viewRange()
    assert (x0, x1, y0, y1) == (0, cols * wpb, 0, rows)        # no margin, no negative rows
    spacing, xs, _ = ticks(lp.x_axis, x0, x1)
    assert spacing % wpb == 0
    assert all(((v / wpb) - 0.5).is_integer() and 0 <= v < cols * wpb for v in xs)   # block middles
    spacing, ys, _ = ticks(lp.y_axis, y0, y1, 400)
    assert spacing >= 1 and all((v - 0.5).is_integer() and 0 <= v < rows for v in ys)
    # Zoomed in to a fractional range: still whole blocks; a short axis takes a larger 1-2-5 step.
    if cols >= 4:
        _, xs, _ = ticks(lp.x_axis, 1.3 * wpb, 3.7 * wpb)
        assert xs == [1.5 * wpb, 2.5 * wpb, 3.5 * wpb]
    if cols >= 10:
        step = ticks(lp.x_axis, x0, x1, 120)[0] // wpb
        steps = [m * 10 ** e for e in range(4) for m in (1, 2, 5)]
        px = 120 / cols                                       # pixels per block on a 120-pixel axis
        assert step > 1 and step * px >= 56 and all(s * px < 56 for s in steps[:steps.index(step)])
    # The colour bar counts: whole numbers only.
    lo, hi = lp.bar.levels()
    for _spacing, values in lp.bar.axis.tickValues(lo, hi, 200):
        assert all(float(v).is_integer() for v in values)


def test_a_1d_grid(heat):
    lp = heat(assets.scenario_dir() / "coalesced.toml")           # grid 64, 8 warps per block
    sc = lp.session.scenario
    wpb = sc.launch.warps_per_block
    cols, rows = grid_shape(sc.launch.grid, wpb)
    assert (cols, rows, wpb) == (3, 22, 8)
    check_common(lp, cols, rows, wpb)
    bottom, left = lp.plot.getAxis("bottom").labelText, lp.plot.getAxis("left").labelText
    assert bottom == "blockIdx.x = the row's first + this (8 warps per block, warp 0 on the left)"
    assert left == "row's first blockIdx.x (3 per row)"
    assert "row of" not in left
    _, _, xs = ticks(lp.x_axis, 0, cols * wpb)
    assert xs == ["+0", "+1", "+2"]
    _, ys, labels = ticks(lp.y_axis, 0, rows, 1000)                 # room for every row
    assert labels == [f"{int(v - 0.5) * cols:,}" for v in ys] and labels[:3] == ["0", "3", "6"]
    # A cell's place agrees with the labels: block 4 is row 1 (starts at 3), column +1.
    x, y = lp.cell_of(4, 2)
    assert (x // wpb, y) == (1, 1)


def test_a_2d_grid(heat):
    lp = heat(assets.scenario_dir() / "transpose-tile.toml")      # grid 8x8, 8 warps per block
    check_common(lp, 8, 8, 8)
    assert lp.plot.getAxis("bottom").labelText == "blockIdx.x (8 warps per block, warp 0 on the left)"
    assert lp.plot.getAxis("left").labelText == "blockIdx.y"
    assert ticks(lp.x_axis, 0, 64)[2] == [str(k) for k in range(8)]
    assert ticks(lp.y_axis, 0, 8, 400)[2] == [str(k) for k in range(8)]


def test_a_3d_grid(heat, tmp_path):
    lp = heat(with_grid(tmp_path, "transpose-tile", "grid  = [8, 8]", "grid  = [8, 4, 3]"))
    check_common(lp, 8, 12, 8)
    assert lp.plot.getAxis("left").labelText == "blockIdx.y, blockIdx.z (4 rows per z)"
    _, ys, labels = ticks(lp.y_axis, 0, 12, 600)
    assert labels == [f"{int(v) % 4}, {int(v) // 4}" for v in ys]
    assert labels[:5] == ["0, 0", "1, 0", "2, 0", "3, 0", "0, 1"]
    # blockIdx (2, 1, 2) is linear block 2 + 8 * (1 + 4 * 2) = 74: the row labelled "1, 2".
    x, y = lp.cell_of(74, 0)
    assert (x // 8, labels[ys.index(y + 0.5)]) == (2, "1, 2")


def test_a_wide_1d_grid_and_a_single_block(heat, tmp_path):
    lp = heat(with_grid(tmp_path, "coalesced", "grid  = [64]", "grid  = [16384]"))   # 16384 blocks of 256
    sc = lp.session.scenario
    cols, rows = grid_shape(sc.launch.grid, 8)
    check_common(lp, cols, rows, 8)
    _, _, labels = ticks(lp.y_axis, 0, rows, 300)
    assert all(re.fullmatch(r"[\d,]+", t) for t in labels)
    assert len(labels) <= math.ceil(300 / 26) + 1                  # never crowded
    lp = heat(with_grid(tmp_path, "coalesced", "grid  = [64]", "grid  = [1]"))       # one block
    check_common(lp, 1, 1, 8)
    assert lp.plot.getAxis("left").labelText == "one block"
    assert lp.plot.getAxis("bottom").labelText == "blockIdx.x (8 warps per block, warp 0 on the left)"
    assert ticks(lp.x_axis, 0, 8)[2] == ["0"]


def test_axis_titles_stay_inside_the_dock_in_the_default_window(qtbot, user_dirs):  # noqa: F811
    """At 1280x720 with the default panel sizes the heat map is ~300 px wide: the titles of a
    wrapped 1-D grid ("blockIdx.x = the row's first + this (8 warps per block, warp 0 on
    the left)", "row's first blockIdx.x (8 per row)") go onto more lines instead of being
    cut at the dock's edges."""
    w = make_window(qtbot, "coalesced")
    try:
        w.resize(1280, 720)
        w.default_layout(1280)
        lp = w.launch
        w.docks["launch"].show()
        w.docks["launch"].raise_()
        qtbot.waitUntil(lambda: lp.glw.isVisible() and lp.values is not None, timeout=20000)
        qtbot.waitUntil(lambda: lp.glw.width() < 420, timeout=5000)

        def cut():
            out = []
            view = lp.glw.rect()
            for axis in (lp.x_axis, lp.y_axis):
                lab = axis.label
                r = lp.glw.mapFromScene(lab.mapRectToScene(lab.boundingRect())).boundingRect()
                if not (r.left() >= view.left() - 1 and r.right() <= view.right() + 1
                        and r.top() >= view.top() - 1 and r.bottom() <= view.bottom() + 1):
                    out.append((axis.orientation, lab.toPlainText(), r, view))
            return out

        qtbot.waitUntil(lambda: not cut(), timeout=5000)
        assert lp.x_axis.label.toPlainText().startswith("blockIdx.x = the row's first + this")
        assert lp.x_axis.label.textWidth() > 0                       # wrapped: it is wider than the axis
        assert lp.x_axis.label.boundingRect().height() > 1.5 * lp.x_axis.label.font().pixelSize() \
            or lp.x_axis.label.document().lineCount() >= 2
    finally:
        w.close()
